# The table of high-water marks is full (idgen.max_marks = 64): no
# protection is lost and neither is the way out of a clock jump.
# - Built-in layouts used on eight node ids (they filled the fixed table of
#   64 of idgen 1.4, which kept their marks forever); then node_bits 4 -> 5
#   with node 1 -> 2 (the same machine field) and the clock set back, and
#   the epoch moved one day later with the clock a day on: no ID repeats.
# - 70 layouts and the default generate with the clock 120 s ahead, more
#   than the table holds: the marks that find no room of their own bind
#   the node id that wrote them, not every node id, so after the clock
#   comes back a node id that never generated does so at once.  Filling
#   the table is logged once and counted in idgen_capacity.
# - A layout generating on the overflow mark of its node id is bound by
#   the overflow mark of another node id under other node_bits.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;

my ($ret, $out, $err);

my @builtin = qw(idgen twitter discord sonyflake instagram redis-borrow decimal19 js53 pgedge);

# Restarts with these settings and a small table.
sub restart_with
{
	my ($node, $conf) = @_;
	set_auto_conf($node, "idgen.max_marks = 64\n$conf");
}

# n IDs of the default layout in one statement, as era $era, with the
# session's clock at the Unix ms $at if given (set in the session, so that
# the first ID falls in that very millisecond); returns the Unix ms of the
# first ID.
sub generate
{
	my ($node, $era, $n, $at) = @_;
	my $set = defined $at
	  ? "SELECT set_config('idgen.clock_offset_ms', ($at - floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint::text, false);"
	  : '';
	my @out = split /\n/, $node->safe_psql('postgres', qq(
		$set
		INSERT INTO ids SELECT $era, id FROM idgen_next_batch($n) id;
		SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint
		FROM ids WHERE era = $era));
	return $out[-1];
}

sub repeats
{
	my ($node, $a, $b) = @_;
	return $node->safe_psql('postgres', qq(
		SELECT count(*) FROM ids x JOIN ids y USING (id) WHERE x.era = $a AND y.era = $b));
}

# 1. Fill the table with marks of built-in layouts, as idgen 1.4 never
# removed them: node ids 1, 0, 2 .. 7, one ID in each layout (redis-borrow
# holds node ids 0 to 3 only).
my $node = idgen_node('full', "idgen.node_id = 1\nidgen.max_marks = 64\n");
$node->safe_psql('postgres', 'CREATE TABLE ids (era int, id bigint)');
for my $id (1, 0, 2 .. 7)
{
	restart_with($node, "idgen.node_id = $id\nidgen.node_bits = 4");
	$node->psql('postgres', "SELECT idgen_next('$_')") for @builtin;
}

# Node 1 makes 100,000 IDs; then node_bits 5 and node 2, whose worker 0
# packs the machine field 64 as node 1's did, with the clock back at the
# first of them (about 3 s back, inside idgen.max_clock_regression_ms).
restart_with($node, "idgen.node_id = 1\nidgen.node_bits = 4");
my $first = generate($node, 1, 100000);
restart_with($node, "idgen.node_id = 2\nidgen.node_bits = 5");
generate($node, 2, 100000, $first);
is(repeats($node, 1, 2), '0', 'node_bits 4 -> 5, node 1 -> 2, clock back: no ID of node 1 repeated');

# Node 9 makes 100,000 IDs; then idgen.epoch one day later, and the clock a
# day on, where the new epoch's time fields are the old ones.
restart_with($node, "idgen.node_id = 9\nidgen.node_bits = 5");
$first = generate($node, 3, 100000);
restart_with($node, "idgen.node_id = 9\nidgen.node_bits = 5\nidgen.epoch = '2024-01-02'");
generate($node, 4, 100000, $first + 86400000);
is(repeats($node, 3, 4), '0', 'idgen.epoch a day later, clock a day on: no ID of before repeated');
$node->stop;

# 2. 70 layouts and the default generate on node 1 with the clock 120 s
# ahead: more marks than the table holds.
my $jump = idgen_node('jump_full', "idgen.node_id = 1\nidgen.max_marks = 64\n");
$jump->safe_psql('postgres', q(
	SELECT count(idgen_define_layout('many-' || i, '2020-01-01+00', '{time,node,sequence}', '{41,10,12}'))
	FROM generate_series(1, 70) i));
my $log_offset = -s $jump->logfile;
restart_with($jump, "idgen.node_id = 1\nidgen.clock_offset_ms = 120000");
is($jump->safe_psql('postgres', q(
	SELECT count(idgen_next('many-' || i)) FROM generate_series(1, 70) i;
	SELECT idgen_next() > 0)), "70\nt", 'node 1, clock 120 s ahead: 70 layouts and the default generate');
my @warned = slurp_file($jump->logfile, $log_offset) =~ /WARNING:  table of idgen high-water marks is full/g;
is(scalar @warned, 1, 'filling the table is logged, once');
($ret, $out, $err) = $jump->psql('postgres', q(
	SELECT capacity, in_use >= 60, overflows >= 70 - capacity FROM idgen_capacity WHERE name = 'marks'));
is("$out$err", '64|t|t', 'and counted in idgen_capacity: each of the layouts that found no entry');

# The clock back, and node 2, which never generated: every layout at once.
restart_with($jump, 'idgen.node_id = 2');
($ret, $out, $err) = $jump->psql('postgres', q(
	SELECT count(idgen_next('many-' || i)) FROM generate_series(1, 70) i;
	SELECT idgen_next() > 0));
is($out, "70\nt", 'clock back, node 2: the 70 layouts and the default generate at once');
unlike($err, qr/ERROR/, 'no error');

# Node 1 is still held back in every one of them.
restart_with($jump, 'idgen.node_id = 1');
my $refused = 0;
for my $layout ('idgen', map { "many-$_" } 1 .. 70)
{
	($ret, $out, $err) = $jump->psql('postgres', "SELECT idgen_next('$layout')");
	$refused++ if $err =~ /system clock is \d+ ms behind/;
}
is($refused, 71, 'back on node 1, each of the 71 layouts is refused');

$jump->stop;

# 3. A layout whose worker field node ids split (no node field) generates on
# the overflow mark of node 1 under node_bits 4, with the clock 20 s ahead;
# then on that of node 2 under node_bits 5 (worker 0 packs 64 under both),
# the table full again and the clock at the same millisecond: the overflow
# marks bind every layout under other node_bits.  On node 2 the table is
# filled by layouts whose node field is too narrow for node id 2: they get
# marks but make no ID, so nothing else moves the worker id past node 1's
# IDs.
my $bits = idgen_node('bits_full', "idgen.node_id = 1\nidgen.max_marks = 64\n");
$bits->safe_psql('postgres', q(
	CREATE TABLE ids (era int, id bigint);
	SELECT count(idgen_define_layout('w-' || i, '2020-01-01+00', '{time,worker,sequence}', '{41,10,12}'))
	FROM generate_series(1, 70) i;
	SELECT count(idgen_define_layout('narrow-' || i, '2020-01-01+00', '{time,node,sequence}', '{41,1,12}'))
	FROM generate_series(1, 5) i));

# n IDs of w-70 as era $era, after $fill, the session's clock at $at;
# returns the Unix ms of the first of the n.
sub generate_w70
{
	my ($era, $n, $at, $fill) = @_;
	my @out = split /\n/, $bits->safe_psql('postgres', qq(
		SELECT set_config('idgen.clock_offset_ms', ($at - floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint::text, false);
		$fill;
		INSERT INTO ids SELECT $era, id FROM idgen_next_batch($n, 'w-70') id;
		SELECT (extract(epoch FROM (idgen_decode(min(id), 'w-70')).ts) * 1000)::bigint
		FROM ids WHERE era = $era));
	return $out[-1];
}

$first = generate_w70(1, 100000, int(Time::HiRes::time() * 1000) + 20000,
	q(SELECT count(idgen_next('w-' || i)) FROM generate_series(1, 69) i));
restart_with($bits, "idgen.node_id = 2\nidgen.node_bits = 5");
generate_w70(2, 100000, $first, q(DO $$
	BEGIN
		FOR i IN 1 .. 5 LOOP
			BEGIN
				PERFORM idgen_next('narrow-' || i);
			EXCEPTION WHEN object_not_in_prerequisite_state THEN NULL;
			END;
		END LOOP;
	END$$));
is($bits->safe_psql('postgres', q(
	SELECT count(*) FROM ids x JOIN ids y USING (id) WHERE x.era = 1 AND y.era = 2)), '0',
	'overflow marks of node 1 (node_bits 4) and node 2 (node_bits 5): no ID repeated');
($ret, $out, $err) = $bits->psql('postgres', q(
	SELECT overflows > 0 FROM idgen_capacity WHERE name = 'marks'));
is("$out$err", 't', 'w-70 was on an overflow mark');

$bits->stop;
done_testing();
