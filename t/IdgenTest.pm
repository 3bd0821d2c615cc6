# Shared by the TAP tests: nodes with idgen preloaded, copies and standbys
# from base backups, pgbench clients generating at once, the checks they
# share (no ID repeated, each backend increasing), tools and daemons, and
# which tests IDGEN_TEST_EXTRA asks for.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More ();
use Cwd ();
use IPC::Run;
use PostgreSQL::Test::Utils ();

our @EXPORT = qw(idgen_node set_auto_conf crash_backend conninfo out_of_order
	find_tool start_daemon stop_daemons give_up test_extra require_test_extra node_from_backup
	start_clients finish_clients clients_ok ids_unique burst pg_upgrade_into repeats_at
	without_notes);
# The node id lease tests' own (t/057, t/063): use IdgenTest qw(:DEFAULT :lease).
our @EXPORT_OK = qw(leased burst_into ids_of first_ms common worker_pid signal_server);
our %EXPORT_TAGS = (lease => \@EXPORT_OK);

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

# ids_unique(node, from, name, count => N or at_least => N, column => 'id',
# dbname => 'postgres'): passes when no value of the column repeats in
# $from (a table, or a table and a WHERE clause) and there are count rows,
# or at least at_least; returns the number of rows.
sub ids_unique
{
	my ($node, $from, $name, %opt) = @_;
	my $column = $opt{column} // 'id';
	my ($rows, $repeats) = split /\|/, $node->safe_psql($opt{dbname} // 'postgres',
		"SELECT count(*), count(*) - count(DISTINCT $column) FROM $from");
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	if (defined $opt{count})
	{
		Test::More::is("$rows rows, $repeats repeated", "$opt{count} rows, 0 repeated", $name);
	}
	else
	{
		Test::More::ok($repeats == 0 && $rows >= ($opt{at_least} // 1), $name)
		  or Test::More::diag("$rows rows, $repeats repeated");
	}
	return $rows;
}

# burst(node, n, row => "1", layout => name, before => SQL): one statement
# generates n IDs, in the layout given or the default, after the SQL given
# (a SET); table ids keeps the first and the last, each after the columns
# in row (an era): all that later eras are compared with, for storing
# millions of rows is slow.  Returns how many of the n IDs repeated.
sub burst
{
	my ($node, $n, %opt) = @_;
	my $layout = defined $opt{layout} ? "'$opt{layout}'" : '';
	return $node->safe_psql('postgres', ($opt{before} // '') . qq(;
		WITH b AS MATERIALIZED (SELECT idgen_next($layout) AS id FROM generate_series(1, $n)),
		     s AS (SELECT min(id) AS lo, max(id) AS hi, count(*) - count(DISTINCT id) AS repeats FROM b),
		     i AS (INSERT INTO ids SELECT $opt{row}, unnest(ARRAY[lo, hi]) FROM s)
		SELECT repeats FROM s));
}

# node_from_backup(primary, name, conf => lines, backup => name,
# streaming => 0, start => 0): a new node from a base backup of $primary,
# a streaming standby unless streaming => 0 (then a copy that starts as a
# primary), started unless start => 0.  The backup is taken now, named
# after the node, unless backup names one taken earlier.
sub node_from_backup
{
	my ($primary, $name, %opt) = @_;
	my $backup = $opt{backup};
	unless (defined $backup)
	{
		$backup = "${name}_base";
		$primary->backup($backup);
	}
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($primary, $backup, has_streaming => $opt{streaming} // 1);
	$node->append_conf('postgresql.conf', $opt{conf}) if defined $opt{conf};
	$node->start unless defined $opt{start} && !$opt{start};
	return $node;
}

# start_clients(node, sql, clients => 4, jobs => clients,
# transactions => 1 or time => seconds, connect => 1, define => {name =>
# value}, connstr => conninfo): pgbench runs the script $sql on $node (or
# through connstr) in the background, each client in a connection of its
# own (all connected before any runs, so they overlap); :client_id numbers
# them.  Returns a handle for finish_clients.
sub start_clients
{
	my ($node, $sql, %opt) = @_;
	my $clients = $opt{clients} // 4;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	PostgreSQL::Test::Utils::append_to_file("$dir/script.sql", $sql);
	my @cmd = ('pgbench', '--no-vacuum', "--client=$clients",
		'--jobs=' . ($opt{jobs} // $clients), "--file=$dir/script.sql");
	push @cmd, defined $opt{time} ? "--time=$opt{time}" : '--transactions=' . ($opt{transactions} // 1);
	push @cmd, '--connect' if $opt{connect};
	push @cmd, "--define=$_=$opt{define}{$_}" for sort keys %{ $opt{define} // {} };
	push @cmd, $opt{connstr} // ('--host=' . $node->host, '--port=' . $node->port, 'postgres');
	my $run = { clients => $clients, transactions => $opt{time} ? undef : $opt{transactions} // 1,
		out => '', err => '' };
	$run->{h} = IPC::Run::start(\@cmd, '>', \$run->{out}, '2>', \$run->{err});
	return $run;
}

# Waits for a start_clients run; returns (whether pgbench succeeded, its
# output, its errors).
sub finish_clients
{
	my ($run) = @_;
	my $ok = $run->{h}->finish;
	return ($ok, $run->{out}, $run->{err});
}

# clients_ok(node, name, sql, options as start_clients): runs the clients
# to the end and passes when pgbench succeeded, processed every transaction
# (none failed, when timed) and printed no error; returns its output.
sub clients_ok
{
	my ($node, $name, $sql, %opt) = @_;
	my $run = start_clients($node, $sql, %opt);
	my ($ok, $out, $err) = finish_clients($run);
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	Test::More::ok($ok, "$name: pgbench succeeded");
	if (defined $run->{transactions})
	{
		my $n = $run->{clients} * $run->{transactions};
		Test::More::like($out, qr{processed: $n/$n}, "$name: all $n transactions processed");
	}
	else
	{
		Test::More::like($out, qr{number of failed transactions: 0 }, "$name: no transaction failed");
	}
	Test::More::is($err, '', "$name: no error");
	return $out;
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

# Ends this test file, failed, when a system it drives did not start:
# says what did not start and shows the last lines of each log named, then
# stops here, so that the file fails with a diagnosis and prove goes on with
# the other files (BAIL_OUT would stop them all and hide their results).
sub give_up
{
	my ($what, @logs) = @_;
	Test::More::fail($what);
	for my $log (@logs)
	{
		my @lines = -f $log ? split(/\n/, PostgreSQL::Test::Utils::slurp_file($log)) : ();
		splice(@lines, 0, @lines - 30) if @lines > 30;
		Test::More::diag(-f $log ? "last lines of $log:" : "$log: no such file");
		Test::More::diag("  $_") for @lines;
	}
	Test::More::done_testing();
	exit 1;
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


# pg_upgrade of the stopped cluster $old into the new, stopped cluster $new,
# as PostgreSQL's documentation says, from $new's directory; $what names the
# check.
sub pg_upgrade_into
{
	my ($old, $new, $what) = @_;
	my $cwd = Cwd::getcwd();
	chdir($new->basedir) or die $!;
	$new->command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
			'-s', $new->host, '-p', $old->port, '-P', $new->port
		],
		$what);
	chdir($cwd) or die $!;
	return;
}

# Stops $node, takes the notes of clusters found uncovered ("!system:db")
# out of its idgen_hwm, as if nothing had ever found them, and starts it
# again: a control's way to a server that forgot a refusal.  Returns how
# many notes it took out.
sub without_notes
{
	my ($node) = @_;
	my $hwm = $node->data_dir . '/idgen_hwm';
	$node->stop;
	my $text = PostgreSQL::Test::Utils::slurp_file($hwm);
	my $notes = ($text =~ s/ ![0-9]+:[0-9]+//g) || 0;
	open(my $fh, '>', $hwm) or die "cannot write $hwm: $!";
	print $fh $text;
	close $fh;
	$node->start;
	return $notes;
}

# 200,000 IDs from $node's database $db with its clock at $first_ms, the old
# IDs' first millisecond: returns psql's status, how many of them the table
# ids holds (IDs issued again; empty if generation failed), and its
# standard error.  The clock is set where the IDs are made, and
# generate_series() runs in the target list, so that they start at once: a
# plan that first hashed ids, or materialized the series, started them past
# the old IDs' few milliseconds, and a control found no repeat (PostgreSQL
# 18, under load).
sub repeats_at
{
	my ($node, $db, $first_ms) = @_;
	my ($ret, $out, $err) = $node->psql($db, qq(
		\\set ON_ERROR_STOP 1
		CREATE TEMP TABLE again (id bigint);
		DO \$\$BEGIN
			PERFORM set_config('idgen.clock_offset_ms',
				($first_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text, false);
			INSERT INTO again SELECT idgen_next() FROM (SELECT generate_series(1, 200000)) g;
		END\$\$;
		SELECT count(*) FROM again JOIN ids USING (id)));
	my @lines = split /\n/, $out;
	return ($ret, $lines[-1] // '', $err);
}

# Waits until the node holds a lease; returns its node id.
sub leased
{
	my ($node) = @_;
	$node->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
	  or die $node->name . ' did not lease a node id: '
	  . $node->safe_psql('postgres', 'SELECT last_error FROM idgen_node_lease');
	return $node->safe_psql('postgres', 'SELECT node_id FROM idgen_node_lease');
}

# n IDs into the table, at the clock shifted to at_ms (Unix ms) if given;
# returns the psql result triple.  Table ctl gets IDs of layout pgedge,
# which has no worker field: two servers with one node id then make the
# same IDs in the same milliseconds, whichever worker ids their backends
# hold.
sub burst_into
{
	my ($node, $table, $n, $at_ms, $session) = @_;
	my $layout = $table eq 'ctl' ? "'pgedge'" : '';
	my $sql = '';
	$sql .= "SELECT set_config('idgen.clock_offset_ms', ($at_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text, false);\n"
	  if defined $at_ms;
	$sql .= "INSERT INTO $table SELECT idgen_next($layout) FROM generate_series(1, $n);";
	return $session->query($sql) if $session;
	return $node->psql('postgres', $sql);
}

# The IDs in a table.
sub ids_of
{
	my ($node, $table) = @_;
	return split /\n/, $node->safe_psql('postgres', "SELECT id FROM $table");
}

# The first millisecond of the IDs of layout pgedge in a table (Unix ms).
sub first_ms
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (idgen_decode(min(id), 'pgedge')).ts) * 1000)::bigint FROM $table");
}

# How many of the IDs in list $y list $x holds too.
sub common
{
	my ($x, $y) = @_;
	my %seen = map { $_ => 1 } @$x;
	return scalar grep { $seen{$_} } @$y;
}

# Stops (SIGSTOP) or wakes (SIGCONT) the postmaster and all its children.
sub signal_server
{
	my ($node, $sig) = @_;
	my $pm = $node->{_pid};
	my @pids = ($pm, split(/\s+/, `pgrep -P $pm` // ''));
	kill $sig, grep { /^\d+$/ } @pids;
	return;
}

# The pid of the node's lease worker.
sub worker_pid
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	my $pid = `pgrep -P $pm -f 'idgen node lease'`;
	chomp $pid;
	return $pid;
}

1;
