# Crashes and restarts lose the registry's memory of used milliseconds; the
# high-water mark file keeps IDs from repeating, even when backends had
# borrowed ahead and the clock is behind when the server comes back.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('crash', qq(
idgen.node_id = 4
restart_after_crash = on
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (era int, id bigint PRIMARY KEY);
));

# A burst borrows several hundred milliseconds ahead of the clock.
sub burst
{
	my ($era, $offset) = @_;
	$node->safe_psql('postgres', qq(
		SET idgen.clock_offset_ms = $offset;
		INSERT INTO ids SELECT $era, idgen_next() FROM generate_series(1, 1500000)));
}

sub check_era
{
	my ($era, $what) = @_;
	is($node->safe_psql('postgres', qq(
		SELECT min(id) FILTER (WHERE era = $era) > max(id) FILTER (WHERE era < $era)
		FROM ids)), 't', "$what: new IDs are above every earlier one");
}

burst(1, 0);
ok(-f $node->data_dir . '/idgen_hwm', 'the high-water mark file exists');

# 1. SIGKILL a backend: the postmaster reinitialises shared memory.
my $victim = $node->background_psql('postgres');
my $pid = $victim->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $pid;
eval { $victim->quit };
wait_for_restart($node);
ok($node->log_contains('all server processes terminated; reinitializing'),
	'the crash reinitialised shared memory');
burst(2, -500);
check_era(2, 'after SIGKILL, clock 500 ms behind');

# 2. Immediate shutdown and start.
$node->stop('immediate');
$node->start;
burst(3, -500);
check_era(3, 'after immediate shutdown');

# 3. Restart with the clock set back 5 s.
$node->stop;
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -5000');
$node->start;
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 4, idgen_next() FROM generate_series(1, 100000)');
check_era(4, 'after a restart with the clock 5 s behind');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'), 't',
	'no ID repeated in any era');

# 4. An unreadable mark file is refused rather than guessed at.
$node->stop;
open my $fh, '>', $node->data_dir . '/idgen_hwm' or die $!;
print $fh "garbage\n";
close $fh;
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/, 'corrupt mark file refused');
like($err, qr/HINT:  Restore the file/, 'with a hint');

$node->stop;
done_testing();
