# idgen_horizon() with real clients, restarts, crashes and a standby:
# - concurrent psycopg2 writers commit and roll back transactions of random
#   length while a poller follows the outbox with the horizon protocol: it
#   reads every committed row exactly once and nothing uncommitted; the same
#   run's controls, a cursor moved to the largest ID read and the clock in
#   place of the horizon, miss rows (with IDGEN_TEST_EXTRA=long);
# - a prepared transaction holds the horizon across a restart, a crash
#   (SIGKILL) and an immediate shutdown; without the idgen_horizon file (the
#   control) it does not;
# - the horizon never goes back across a restart with the clock set back,
#   nor across crashes, while a transaction holds an ID taken at once;
# - a transaction in the shared worker id holds it;
# - a standby refuses, and once promoted holds a prepared transaction it
#   learnt of from WAL.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('horizon', qq(
idgen.node_id = 6
max_prepared_transactions = 5
restart_after_crash = on
), allows_streaming => 1);
$node->safe_psql('postgres',
	'CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT idgen_next(), body text)');

# 1. Writers and pollers, until 300 transactions committed (a count, not a
# time): with IDGEN_TEST_EXTRA=long.
my $python = '/usr/bin/python3';
my ($out, $err) = ('', '');
SKIP:
{
	skip 'set IDGEN_TEST_EXTRA to include "long" to run the outbox workload', 8
	  unless test_extra('long');
	skip 'psycopg2 is not installed (Debian package python3-psycopg2)', 8
	  unless eval { IPC::Run::run([ $python, '-c', 'import psycopg2' ], '>', \$out, '2>', \$err) };
	my $dsn = conninfo($node);
	IPC::Run::run([ $python, "$FindBin::RealBin/../test/outbox/workload.py", $dsn, '300', '4' ],
		'>', \$out, '2>', \$err) or die "workload failed: $err";
	note "workload: $out";
	my %r = $out =~ /(\w+)=(\d+)/g;
	is($r{errors}, 0, 'the writers ran without errors') or diag $err;
	cmp_ok($r{committed}, '>=', 300, 'the writers committed their 300 transactions, a row or more each');
	cmp_ok($r{early}, '>', 0, 'some took their ID before writing');
	is($r{horizon_missed}, 0, 'horizon protocol: every committed row was read');
	is($r{horizon_read}, $r{horizon_distinct}, 'horizon protocol: no row was read twice');
	is($r{horizon_uncommitted}, 0, 'horizon protocol: nothing uncommitted was read');
	cmp_ok($r{max_missed}, '>', 0, 'control: a cursor at the largest ID read misses rows');
	cmp_ok($r{clock_missed}, '>', 0, 'control: the clock in place of the horizon misses rows');
}

# 2. A prepared transaction holds the horizon across restarts and crashes.
sub prepare_one
{
	my ($gid) = @_;
	return $node->safe_psql('postgres', qq(
		BEGIN;
		INSERT INTO outbox (body) VALUES ('$gid') RETURNING id;
		PREPARE TRANSACTION '$gid';));
}

# The horizon follows the clock, so it passes an ID once its transaction
# ended and the clock passed the ID (which may borrow ahead after a restart).
sub horizon_passes
{
	my ($n, $id, $what) = @_;
	is($n->safe_psql('postgres', qq(
		SELECT pg_sleep(0.01 + greatest(0, extract(epoch FROM (idgen_decode($id)).ts - clock_timestamp())));
		SELECT idgen_horizon() > $id)), "\nt", $what);
}

sub horizon_held
{
	my ($id, $what) = @_;
	is($node->safe_psql('postgres', "SELECT pg_sleep(0.01); SELECT idgen_horizon() <= $id"),
		"\nt", $what);
}

my $id = prepare_one('p1');
horizon_held($id, 'a prepared transaction holds the horizon');
$node->restart;
horizon_held($id, '... after a restart');
ok(crash_backend($node), 'a SIGKILLed backend reinitialised shared memory');
horizon_held($id, '... after a crash');
$node->stop('immediate');
$node->start;
horizon_held($id, '... after an immediate shutdown');
$node->safe_psql('postgres', "COMMIT PREPARED 'p1'");
horizon_passes($node, $id, 'COMMIT PREPARED lets it pass');

# The control: the file is what holds it.
$id = prepare_one('p2');
$node->stop;
unlink($node->data_dir . '/idgen_horizon') or die $!;
$node->start;
horizon_passes($node, $id, 'control: without the idgen_horizon file the horizon passes the prepared transaction');
$node->safe_psql('postgres', "ROLLBACK PREPARED 'p2'");

# An unreadable file is refused, not guessed at.
$node->stop;
open my $fh, '>', $node->data_dir . '/idgen_horizon' or die $!;
print $fh "garbage\n";
close $fh;
$node->start;
my ($gret, $gout, $gerr) = $node->psql('postgres', 'SELECT idgen_horizon()');
like($gerr, qr/idgen horizon file "idgen_horizon" is unreadable/, 'an unreadable file is refused');
is(slurp_file($node->data_dir . '/idgen_horizon'), "garbage\n", 'and left as it was');
$node->stop;
unlink($node->data_dir . '/idgen_horizon') or die $!;
$node->start;

# 3. Never backwards, even with the clock set back across a restart, and
# while a transaction holds an ID it took with the clock behind: its IDs
# start at the floor the restart kept, and the horizon is taken from that,
# not from the clock it read.  Before 1.5 the horizon came back 3 s lower
# and a poller read 20 rows twice.
sub holding_horizon
{
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('BEGIN');
	my $held = $holder->query_safe("INSERT INTO outbox (body) VALUES ('held') RETURNING id");
	my $h = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
	$holder->query_safe('COMMIT');
	$holder->quit;
	return ($h, $held);
}
$node->safe_psql('postgres', "INSERT INTO outbox (body) SELECT 'polled' FROM generate_series(1, 20)");
# After the restarts above IDs start at the high-water mark, up to a second
# ahead of the clock, which the horizon follows: poll until it passes them.
my $before;
ok($node->poll_query_until('postgres', q(
	SELECT count(*) = 20 FROM outbox WHERE body = 'polled' AND id < idgen_horizon())),
	'a poll reads the 20 rows');
$before = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
$node->stop;
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -3000');
$node->start;
my ($after, $held) = holding_horizon();
cmp_ok($after, '>=', $before,
	'the horizon does not go back across a restart with the clock 3 s behind, a transaction holding an ID');
cmp_ok($held, '>=', $before, 'that transaction\'s ID lies at or above the horizon returned before');
is($node->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE body = 'polled' AND id >= $before AND id < $after"),
	'0', 'the next poll reads none of the 20 again');
for my $crash (1, 2)
{
	$before = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
	$node->stop('immediate');
	$node->start;
	($after, $held) = holding_horizon();
	cmp_ok($after, '>=', $before, "nor across crash $crash, a transaction holding an ID at once");
}
$node->safe_psql('postgres', "INSERT INTO outbox (body) VALUES ('after')");
is($node->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE body = 'after' AND id >= $before"),
	'1', 'new IDs start at or above it');
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 0');
$node->restart;

# 3b. Nor when idgen.epoch moved later between restarts: the same times
# then give smaller IDs, so horizons returned before are above what the
# clock gives.  The horizon stays at or above them while a transaction of
# another layout holds the clock below, and IDs of the default layout, on
# any node id, wait until they can start above them.  The control: without
# the idgen_horizon file, which holds the horizons' mark, a new node id
# generates below the cursor at once and the horizon goes back, so a poller
# would skip those rows.  Before 1.5 that happened with the file too.
sub epoch_later
{
	my ($days, $node_id, $control) = @_;

	my $h = $node->safe_psql('postgres', 'SELECT pg_sleep(0.01); SELECT idgen_horizon()');
	$node->stop;
	unlink($node->data_dir . '/idgen_horizon') or die $! if $control;
	$node->append_conf('postgresql.conf', qq(
idgen.epoch = '2024-01-0$days'
idgen.node_id = $node_id
));
	$node->start;
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('BEGIN');
	$holder->query_safe("SELECT idgen_next('sonyflake')");
	my $after = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
	my ($ret, $id, $err) = $node->psql('postgres', 'SELECT idgen_next()');
	$holder->query_safe('COMMIT');
	$holder->quit;
	return ($h, $after, $id, $err);
}
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01'");
$node->restart;
my ($h, $after_epoch, $new_id, $refusal) = epoch_later(2, 7, 'control');
cmp_ok($after_epoch, '<', $h, 'the control: without the horizon\'s file the horizon goes back');
cmp_ok($new_id, '<', $h, '... and a new node id generates below the cursor');
($h, $after_epoch, $new_id, $refusal) = epoch_later(3, 8);
cmp_ok($after_epoch, '>=', $h,
	'the horizon does not go back across a restart with idgen.epoch a day later, another layout holding the clock');
like($refusal, qr/cannot generate idgen IDs because idgen.epoch was moved later/,
	'and IDs of the default layout wait for the clock, on a new node id too');
($h, $after_epoch, $new_id, $refusal) = epoch_later(4, 6);
cmp_ok($after_epoch, '>=', $h, 'nor on the node id that made IDs under the earlier epochs');
like($refusal, qr/idgen.epoch was moved later/, '... where IDs wait as well');
$node->append_conf('postgresql.conf', qq(
idgen.epoch = '2024-01-01'
idgen.node_id = 6
));
# IDs of node 6 were made under the later epochs: with the earliest one back,
# it resumes above them.
$node->restart;

# 3c. Nor when idgen_hwm is lost after a checkpoint, with the clock behind
# the horizons returned (8 s here): generation refuses until
# idgen_resume_after(), and the time the hint asks for, the newest ID's,
# may be below a horizon returned since.  The horizon's file remembers the
# horizons: they do not go back, and IDs resume above them.  The control:
# without that file as well, the first ID is below the cursor.  Last, the
# floor an epoch moved later left survives the loss too.
sub lose_marks
{
	my ($control) = @_;

	$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 8000');
	$node->reload;
	my $newest = $node->safe_psql('postgres', 'SELECT idgen_next()');
	my $h = $node->safe_psql('postgres', 'SELECT pg_sleep(1); SELECT idgen_horizon()');
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->stop;
	unlink($node->data_dir . '/idgen_hwm') or die $!;
	unlink($node->data_dir . '/idgen_horizon') or die $! if $control;
	$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 0');
	$node->start;
	my $after = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
	my ($ret, $out, $refusal) = $node->psql('postgres', 'SELECT idgen_next()');
	$node->safe_psql('postgres', "SELECT idgen_resume_after((idgen_decode($newest)).ts)");
	$node->restart;
	my $next = $node->safe_psql('postgres', 'SELECT idgen_next()');
	return ($h, $after, $refusal, $next);
}
my ($h_lost, $after_lost, $lost_refusal, $next_lost) = lose_marks('control');
cmp_ok($next_lost, '<', $h_lost, 'the control: without the horizon\'s file, IDs resume below the cursor');
($h_lost, $after_lost, $lost_refusal, $next_lost) = lose_marks();
like($lost_refusal, qr/idgen high-water marks were lost/, 'a lost idgen_hwm refuses');
cmp_ok($after_lost, '>=', $h_lost, 'the horizon does not go back when idgen_hwm is lost');
cmp_ok($next_lost, '>=', $h_lost,
	'and after idgen_resume_after() the newest ID\'s time, IDs resume above every horizon');
$h_lost = $node->safe_psql('postgres', 'SELECT pg_sleep(0.01); SELECT idgen_horizon()');
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-02'");
$node->restart;
# a horizon past the mark the file had rewrites it, in the new epoch
$node->safe_psql('postgres', 'SELECT pg_sleep(1.5); SELECT idgen_horizon(); CHECKPOINT');
$node->stop;
unlink($node->data_dir . '/idgen_hwm') or die $!;
$node->start;
cmp_ok($node->safe_psql('postgres', 'SELECT idgen_horizon()'), '>=', $h_lost,
	'nor when it is lost after idgen.epoch moved later');
$node->safe_psql('postgres', 'SELECT idgen_resume_after(now())');
$node->restart;
(undef, undef, $lost_refusal) = $node->psql('postgres', 'SELECT idgen_next()');
like($lost_refusal, qr/idgen\.epoch was moved later|behind the time of the newest idgen ID/,
	'... and IDs wait until they can start above it');
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01'");
$node->restart;

# 4. A backend in the shared worker id holds it too: with 9 node bits there
# is one dedicated worker id, taken by the first session.
$node->append_conf('postgresql.conf', 'idgen.node_bits = 9');
$node->restart;
my $first = $node->background_psql('postgres');
$first->query_safe('SELECT idgen_next()');
my $second = $node->background_psql('postgres');
$second->query_safe('BEGIN');
my $shared_id = $second->query_safe('SELECT idgen_next()');
is($node->safe_psql('postgres', "SELECT (idgen_decode($shared_id)).worker_id"), '1',
	'the second session generates in the shared worker id');
horizon_held($shared_id, 'an open transaction in the shared worker id holds the horizon');
$second->query_safe('COMMIT');
horizon_passes($node, $shared_id, '... until it commits');
$first->quit;
$second->quit;
$node->append_conf('postgresql.conf', 'idgen.node_bits = 4');
$node->restart;

# 4b. A prepared transaction of another layout, left across a restart while
# idgen.epoch is a day later (the horizon stands above the clock, at the
# floor of the default layout's IDs): after the restart it must not hold
# the horizon below what was returned.  Its entry in the file says where
# its IDs of the default layout would start; the control is its clock
# reading, the entry's second field, below the horizon returned: 1.5 held
# the horizon there, a day back.
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-06'");
$node->restart;
$node->safe_psql('postgres', qq(
	BEGIN;
	INSERT INTO outbox (id, body) VALUES (idgen_next('sonyflake'), 'p4');
	PREPARE TRANSACTION 'p4';));
my $before_restart = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
my ($q_ms, $default_ms) =
  slurp_file($node->data_dir . '/idgen_horizon') =~ /^prepared \d+ (\d+) \d+(?: (\d+))?$/m;
cmp_ok($node->safe_psql('postgres', "SELECT idgen_from_timestamp(to_timestamp($q_ms / 1000.0))"),
	'<', $before_restart, 'control: the prepared transaction\'s clock reading is below the horizon returned');
cmp_ok($default_ms // 0, '>', $q_ms, 'its entry says its IDs of the default layout start above it');
$node->restart;
cmp_ok($node->safe_psql('postgres', 'SELECT idgen_horizon()'), '>=', $before_restart,
	'the horizon does not go back across the restart');
$node->safe_psql('postgres', "ROLLBACK PREPARED 'p4'");

# 4c. The same, reaching a standby through WAL only; the standby restarts
# before it is promoted, so its entry is read back from its file.  The WAL
# record says where the transaction's IDs of the default layout start: in
# 1.5 it said the clock reading alone, and the promoted standby held the
# horizon there, a day below what its primary had returned.
my $epoch_standby = node_from_backup($node, 'horizon_epoch_standby');
$node->safe_psql('postgres', qq(
	BEGIN;
	INSERT INTO outbox (id, body) VALUES (idgen_next('sonyflake'), 'p6');
	PREPARE TRANSACTION 'p6';));
my $on_primary = $node->safe_psql('postgres', 'SELECT idgen_horizon()');
$node->wait_for_catchup($epoch_standby);
$epoch_standby->restart;
($q_ms, $default_ms) = slurp_file($epoch_standby->data_dir . '/idgen_horizon') =~
  /^prepared \d+ (\d+) \d+ (\d+)$/m;
cmp_ok($node->safe_psql('postgres', "SELECT idgen_from_timestamp(to_timestamp($q_ms / 1000.0))"),
	'<', $on_primary, 'control: the replayed clock reading is below the horizon the primary returned');
cmp_ok($default_ms, '>', $q_ms, 'the replayed entry says where its IDs of the default layout start');
$epoch_standby->promote;
cmp_ok($epoch_standby->safe_psql('postgres', 'SELECT idgen_horizon()'), '>=', $on_primary,
	'the standby, restarted and promoted, does not go back below its primary\'s horizon');
$epoch_standby->stop;
$node->safe_psql('postgres', "ROLLBACK PREPARED 'p6'");
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01'");
$node->restart;

# 4d. A bad node id stops generation, not idgen_horizon(): a restart that
# also moves idgen.epoch a day later must keep the horizons returned below
# the next.  1.5 took the file's epoch for unknown while any setting was
# bad, and the horizon went back a day (found by scripts/chaos: a server
# left with a node id past its node_bits, then the epoch moved).  On a
# node of its own, whose floor no earlier epoch raised.
my $bad = idgen_node('horizon_bad_node', "idgen.node_id = 7\n");
$bad->safe_psql('postgres', 'SELECT idgen_next(), idgen_horizon()');
$bad->append_conf('postgresql.conf', "idgen.node_id = 1024");
$bad->restart;
my (undef, undef, $bad_err) = $bad->psql('postgres', 'SELECT idgen_next()');
like($bad_err, qr/idgen.node_id is invalid/, 'node id 1024: generation is refused');
my $bad_node = $bad->safe_psql('postgres', 'SELECT idgen_horizon()');
$bad->append_conf('postgresql.conf', "idgen.epoch = '2024-01-02'");
$bad->restart;
cmp_ok($bad->safe_psql('postgres', 'SELECT idgen_horizon()'), '>=', $bad_node,
	'the epoch a day later, the node id still bad: the horizon does not go back');
$bad->stop;

# 5. A standby refuses.
my $standby = node_from_backup($node, 'horizon_standby');
my ($ret, $sout, $serr) = $standby->psql('postgres', 'SELECT idgen_horizon()');
like($serr, qr/cannot compute the idgen horizon during recovery/, 'a standby refuses');
like($serr, qr/HINT:  Call idgen_horizon\(\) on the primary/, 'and says where to call it');

# A prepared transaction reaches the standby in WAL, and holds the horizon
# once the standby is promoted.
$id = prepare_one('p3');
$node->wait_for_catchup($standby);
like(slurp_file($standby->data_dir . '/idgen_horizon'), qr/^prepared \d+ \d+ \d+ \d+$/m,
	'the standby keeps the prepared transaction in its idgen_horizon file');
$node->stop('immediate');
$standby->promote;
is($standby->safe_psql('postgres', "SELECT pg_sleep(0.01); SELECT idgen_horizon() <= $id"), "\nt",
	'the promoted standby holds the horizon for the prepared transaction');
$standby->safe_psql('postgres', "COMMIT PREPARED 'p3'");
horizon_passes($standby, $id, '... until it is committed there');
$standby->stop;
done_testing();
