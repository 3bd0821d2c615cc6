# A clean start and stop logs no FATAL or ERROR: the mark writer leaves on
# SIGTERM without die()'s FATAL, as the logical replication launcher does,
# and is started again when terminated alone.  A shutdown while the writer
# waits for an absent synchronous standby still completes.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = idgen_node('clean', "idgen.node_id = 1\n", allows_streaming => 1);

# The mark writer's pid, or '' (it has no row in pg_stat_activity: it does
# not connect to a database).
sub writer_pid
{
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		my $line = eval { slurp_file($stat) } // next;
		my ($pid, $title, $ppid) = $line =~ /^(\d+) \((.*)\) \S+ (\d+)/ or next;
		next unless $ppid == $postmaster;
		my $cmd = eval { slurp_file("/proc/$pid/cmdline") } // '';
		return $pid if $cmd =~ /idgen mark writer/;
	}
	return '';
}

# The log's lines at levels a DBA is paged for, from byte $from on.  A
# client backend still closing when a fast stop arrives logs its own FATAL
# (a race with the test's last psql, seen in CI); that line is the
# connection's, never the writer's, whose would name the background worker.
sub alarming
{
	my ($from) = @_;
	return join '',
	  grep { /\b(?:FATAL|ERROR|PANIC):/ }
	  grep { !/FATAL:  terminating connection due to administrator command$/ }
	  split /^/, slurp_file($node->logfile, $from);
}

$node->safe_psql('postgres', 'SELECT count(idgen_next()) FROM generate_series(1, 10000)');
like(writer_pid(), qr/^\d+$/, 'the mark writer runs');
$node->restart;
$node->safe_psql('postgres', 'SELECT idgen_next()');
$node->stop;
is(alarming(0), '', 'no FATAL or ERROR in the log of a start, a restart and a stop');
like(slurp_file($node->logfile),
	qr/background worker "idgen mark writer" \(PID \d+\) exited with exit code 1/,
	'the writer exited as the logical replication launcher does');

# The control: an error does reach this log, and the check sees it.
$node->start;
my $offset = -s $node->logfile;
$node->psql('postgres', 'SELECT 1 / 0');
like(alarming($offset), qr/ERROR:  division by zero/, 'control: an ERROR in the log is found');

# Terminated alone, the writer is started again: without it, sessions that
# wait for synchronous standbys would wait for good.
my $pid = writer_pid();
$offset = -s $node->logfile;
kill 'TERM', $pid;
my $again = '';
for (1 .. 300)
{
	$again = writer_pid();
	last if $again ne '' && $again != $pid;
	usleep(100_000);
}
isnt($again, $pid, "a terminated writer is started again ($pid, then $again)");
like($again, qr/^\d+$/, 'and runs');
is(alarming($offset), '', 'no FATAL for a terminated writer');

# A shutdown while the writer waits for a synchronous standby that is not
# there: the wait ends, with the WARNING a committing session would get.
$node->safe_psql('postgres', q(
	ALTER SYSTEM SET synchronous_standby_names = 'absent';
	SELECT pg_reload_conf();));
# Minutes ahead, past every mark made so far: the tick needs a new mark,
# which waits once the checkpointer has taken up the setting.
my $err = '';
for my $minutes (1 .. 100)
{
	my $ms = $minutes * 60000;
	(undef, undef, $err) = $node->psql('postgres',
		"SET idgen.clock_offset_ms = $ms; SET statement_timeout = '500ms'; SELECT idgen_next()");
	last if $err ne '';
	usleep(100_000);
}
like($err, qr/canceling statement due to statement timeout/,
	'without the standby, generation waits for it');
$offset = -s $node->logfile;
$node->stop('fast');
pass('the server stops while the writer waits');
like(slurp_file($node->logfile, $offset),
	qr/WARNING:  canceling the wait for synchronous replication/,
	'the writer ends its wait at shutdown');

done_testing();
