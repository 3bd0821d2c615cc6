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

# A burst borrows several hundred milliseconds ahead of the clock; table
# ids keeps its first and last ID.
sub borrow_ahead
{
	my ($era, $offset) = @_;
	is(burst($node, 1500000, row => $era, before => "SET idgen.clock_offset_ms = $offset"), '0',
		"era $era: a burst of 1.5M distinct IDs");
}

sub check_era
{
	my ($era, $what) = @_;
	is($node->safe_psql('postgres', qq(
		SELECT min(id) FILTER (WHERE era = $era) > max(id) FILTER (WHERE era < $era)
		FROM ids)), 't', "$what: new IDs are above every earlier one");
}

borrow_ahead(1, 0);
ok(-f $node->data_dir . '/idgen_hwm', 'the high-water mark file exists');

# 1. SIGKILL a backend: the postmaster reinitialises shared memory.
ok(crash_backend($node), 'the crash reinitialised shared memory');
borrow_ahead(2, -500);
check_era(2, 'after SIGKILL, clock 500 ms behind');

# 2. Immediate shutdown and start.
$node->stop('immediate');
$node->start;
borrow_ahead(3, -500);
check_era(3, 'after immediate shutdown');

# 3. Restart with the clock set back 5 s.
$node->stop;
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -5000');
$node->start;
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 4, idgen_next() FROM generate_series(1, 100000)');
check_era(4, 'after a restart with the clock 5 s behind');
ids_unique($node, 'ids', 'no ID repeated in any era');

# 4. An unreadable mark file is refused rather than guessed at, and so is a
# mark beyond any time a layout can hold (it would overflow).
sub write_marks
{
	my ($text) = @_;
	open my $fh, '>', $node->data_dir . '/idgen_hwm' or die $!;
	print $fh $text;
	close $fh;
}

$node->stop;
write_marks("garbage\n");
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/, 'corrupt mark file refused');
like($err, qr/DETAIL:  Line 1 is not of the form/, 'the detail says which line');
like($err, qr/HINT:  Restore the file, or replace it with the line "\* 0 N"/, 'with a hint');

$node->stop;
write_marks("* 0 9223372036854775000\n");
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/,
	'a mark near the largest bigint is refused, not overflowed');

# Following the hint: a mark 3 s ahead of every ID issued resumes generation
# above it.
my $max_ms = $node->safe_psql('postgres', q(
	SELECT (extract(epoch FROM (idgen_decode(max(id))).ts) * 1000)::bigint + 3000 FROM ids));
$node->stop;
write_marks("* 0 $max_ms\n");
$node->start;
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 5, idgen_next() FROM generate_series(1, 1000)');
is($node->safe_psql('postgres', qq(
	SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint >= $max_ms
	FROM ids WHERE era = 5)), 't', 'a mark written as the hint says is obeyed');
check_era(5, 'after following the hint');

# 5. A file deleted once a checkpoint removed the WAL copy of its marks: the
# directory kept one (idgen_node says so), so it is lost, not new.  With
# the clock 3 s behind the newest ID, 1.4 started from the clock and
# repeated IDs; generation now refuses until idgen_resume_after() names a
# time past the newest ID and the server restarts.
my $newest = $node->safe_psql('postgres', q(SELECT (idgen_decode(max(id))).ts FROM ids));
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
unlink($node->data_dir . '/idgen_hwm') or die $!;
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -3000');
my $log_offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen high-water mark file "idgen_hwm" is missing from a data directory that kept it/,
	'a lost mark file is a warning at startup');
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/ERROR:  idgen high-water marks were lost: "idgen_hwm" is missing from a data directory that kept it/,
	'generation refuses without the marks');
like($err, qr/HINT:  Stop the server and put "idgen_hwm" back from a backup of this data directory; or, as a superuser, run SELECT idgen_resume_after\(t\)/,
	'the hint gives both ways out');
($ret, $out, $err) = $node->psql('postgres', "SELECT idgen_next('js53')");
like($err, qr/high-water marks were lost/, 'in every layout');
$node->safe_psql('postgres', "SELECT idgen_resume_after('$newest')");
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/ERROR:  idgen generation resumes after a restart/, 'until the server restarts');
$node->restart;
borrow_ahead(6, -3000);
check_era(6, 'after the file was lost, the clock 3 s behind, and idgen_resume_after()');
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 0');
$node->restart;

# 6. An older copy put back after a crash: recovery replays the marks the
# copy lacks, says so, and IDs stay above the earlier ones.
$node->safe_psql('postgres', 'CHECKPOINT');
my $old_copy = slurp_file($node->data_dir . '/idgen_hwm');
borrow_ahead(7, 0);
$node->stop('immediate');
write_marks($old_copy);
$log_offset = -s $node->logfile;
$node->start;
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 8, idgen_next() FROM generate_series(1, 1000)');
like(slurp_file($node->logfile, $log_offset),
	qr/WARNING:  idgen high-water mark file "idgen_hwm" was behind the WAL/,
	'an older copy of the file is reported during recovery');
check_era(8, 'after an older copy of the file was put back');
ids_unique($node, 'ids', 'no ID repeated in any era');

# 7. An unreadable file is named first, even where the clock is behind the
# newest ID too (a horizon taken while the clock ran 30 s ahead keeps the
# default layout's floor there): idgen refused for the clock before, so the DBA
# waited, only to be refused for the file then.
$node->safe_psql('postgres',
	'SET idgen.clock_offset_ms = 30000; SELECT idgen_next(); SELECT idgen_horizon()');
$node->stop;
my $kept = slurp_file($node->data_dir . '/idgen_hwm');
write_marks("garbage\n$kept");
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/,
	'an unreadable file is named though the clock is behind the newest ID');
($ret, $out, $err) = $node->psql('postgres', "SELECT idgen_next_block(2, 'js53')");
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/, 'in every layout and function');

# 8. A start with the file unreadable and idgen.epoch a day later leaves
# idgen_horizon as it was, so that once the file is back the horizon does
# not go back.  Before, a horizon asked for in that start wrote the new
# epoch without the old one's floor into idgen_horizon: after the repair
# the horizon went back by the day.
$node->stop;
write_marks($kept);
$node->start;
my $h1 = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
$node->stop;
write_marks("garbage\n$kept");
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-02'");
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_horizon()');
like($err, qr/idgen high-water mark file "idgen_hwm" is unreadable/, 'the horizon refuses for the file');
$node->stop;
write_marks($kept);
$node->start;
cmp_ok($node->safe_psql('postgres', 'SELECT idgen_horizon()'), '>=', $h1,
	'once the file is back, the horizon has not gone back');

$node->stop;
done_testing();
