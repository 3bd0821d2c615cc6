# Shared by the TAP tests: a started node with idgen preloaded and the
# extension created in database postgres.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More ();

our @EXPORT = qw(idgen_node set_auto_conf crash_backend conninfo out_of_order
	find_tool start_daemon stop_daemons test_extra require_test_extra);

# Whether IDGEN_TEST_EXTRA, a space-separated list of words as core's
# PG_TEST_EXTRA, includes the word: "integration" for tests that drive
# another system (clients, ORMs, Patroni, pgbouncer...), "long" for tests of
# idgen alone that take long.  scripts/test sets both; "make installcheck"
# alone runs the core tests.
sub test_extra
{
	my ($word) = @_;
	return scalar grep { $_ eq $word } split(/\s+/, $ENV{IDGEN_TEST_EXTRA} // '');
}

# Skips the whole file unless IDGEN_TEST_EXTRA includes the word.
sub require_test_extra
{
	my ($word) = @_;
	Test::More::plan(skip_all => "set IDGEN_TEST_EXTRA to include \"$word\" to run this test")
	  unless test_extra($word);
	return;
}

# idgen_node(name, extra postgresql.conf lines, init options...)
sub idgen_node
{
	my ($name, $conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'idgen'\n" . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
	return $node;
}

# How many IDs in a table (client, n, id) are not above the same client's
# previous one, in the order it made them.
sub out_of_order
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres', qq(
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM $table) s
		WHERE id <= prev));
}

# A node's conninfo without quotes, to embed in SQL literals.
sub conninfo
{
	my ($node) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
}

# Replaces postgresql.auto.conf with the given lines and restarts the node,
# so that settings from an earlier call do not linger.
sub set_auto_conf
{
	my ($node, $conf) = @_;

	$node->stop;
	open my $fh, '>', $node->data_dir . '/postgresql.auto.conf' or die $!;
	print $fh "$conf\n";
	close $fh;
	$node->start;
}

# SIGKILLs a backend and waits until the server, having reinitialised
# shared memory, says it is ready again: a query sent while it restarts can
# die of a broken pipe.  Returns whether the log shows the reinitialisation.
sub crash_backend
{
	my ($node) = @_;
	my $victim = $node->background_psql('postgres');
	my $pid = $victim->query_safe('SELECT pg_backend_pid()');
	my $log_offset = -s $node->logfile;

	kill 'KILL', $pid;
	eval { $victim->quit };
	$node->wait_for_log(qr/database system is ready to accept connections/, $log_offset);
	return $node->log_contains('all server processes terminated; reinitializing', $log_offset);
}

# The path of an installed program, looked up in PATH and in Debian's sbin
# directories, or undef: tests that need it skip when it is missing.
sub find_tool
{
	my ($name) = @_;
	for my $dir (split(/:/, $ENV{PATH} // ''), '/usr/sbin', '/sbin', '/usr/bin')
	{
		return "$dir/$name" if $dir ne '' && -x "$dir/$name";
	}
	return undef;
}

# Daemons started by start_daemon, killed by stop_daemons and, whatever
# happens to the test, at exit.
my @daemons;

# Starts a program in the background in its own process group, its output
# appended to $log; returns its pid.  stop_daemons (or the end of the test)
# SIGKILLs the whole group, so children it spawned go with it.
sub start_daemon
{
	my ($cmd, $log, %env) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		setpgrp(0, 0);
		$ENV{$_} = $env{$_} for keys %env;
		open STDIN, '<', '/dev/null' or die $!;
		open STDOUT, '>>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT or die $!;
		exec(@$cmd) or die "exec $cmd->[0]: $!";
	}
	push @daemons, $pid;
	return $pid;
}

# SIGKILLs the process groups of the given daemons (all when none given)
# and reaps them.
sub stop_daemons
{
	my @pids = @_ ? @_ : @daemons;
	for my $pid (@pids)
	{
		kill 'KILL', -$pid;
		waitpid($pid, 0);
	}
	my %gone = map { $_ => 1 } @pids;
	@daemons = grep { !$gone{$_} } @daemons;
	return;
}

END
{
	local $?;
	stop_daemons() if @daemons;
}

1;
