# A standby whose settings differ from its primary's is a server restarted
# with changed settings, and its promotion a startup.  idgen.node_bits 5 on
# the standby is bound by the primary's replayed marks.  And idgen.epoch, one
# day later on the standby (rolled out there first), the primary's marks
# reaching it only through WAL, after the base backup.  In 1.5 a replayed
# mark new to the standby's table kept the primary's epoch, which startup's
# move never saw: promoted, the standby made IDs a day below the old ones
# (128,677-153,244 of 200,000 repeated in a review, with its clock at the
# old IDs' time), and an outbox poller across the promotion never read the
# new rows (803 of 803).  Now replay moves such a mark with the epoch, as
# startup does: the promoted standby refuses, saying the epoch moved, or,
# with its clock at the old IDs' time, resumes above them.  The control:
# the same with the primary's epoch (the issue's control: 0 of each).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $day_ms = 86400000;
my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 120000\n";

# A primary and its synchronous standby (with $standby_conf, its clock 3 s
# behind); after the base backup, the primary makes 200,000 IDs and an
# outbox poller reads the outbox up to the horizon.  Returns the promoted
# standby, the old IDs' first millisecond and the poller's cursor.
sub promoted
{
	my ($name, $standby_conf) = @_;
	my $primary = idgen_node("${name}_primary", $conf, allows_streaming => 1);
	$primary->safe_psql('postgres', q(
		CREATE TABLE ids (id bigint PRIMARY KEY);
		CREATE TABLE outbox (era int, id bigint PRIMARY KEY DEFAULT idgen_next());
	));
	my $standby = node_from_backup($primary, "${name}_standby",
		conf => "idgen.clock_offset_ms = -3000\n$standby_conf");
	$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
	$primary->reload;
	$primary->safe_psql('postgres', q(
		INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
		INSERT INTO outbox (era) SELECT 1 FROM generate_series(1, 800);
	));
	my $cursor = $primary->safe_psql('postgres', q(
		SELECT max(id) FROM outbox WHERE id < idgen_horizon()));
	my $first_ms = $primary->safe_psql('postgres',
		q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
	$primary->wait_for_catchup($standby);
	$primary->stop('immediate');
	$standby->promote;
	return ($standby, $first_ms, $cursor);
}

# Rows the new primary commits to the outbox, and how many of them the
# poller, past $cursor, never reads; with psql's errors.
sub outbox_after
{
	my ($node, $cursor) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		q(INSERT INTO outbox (era) SELECT 2 FROM generate_series(1, 800)));
	my $lost = $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE id <= $cursor), count(*) FROM outbox WHERE era = 2");
	return (split(/\|/, $lost), $err);
}

my ($node, $first_ms, $cursor) = promoted('later', "idgen.epoch = '2024-01-02'\n");
my ($lost, $committed, $err) = outbox_after($node, $cursor);
is($lost, '0', "the epoch a day later on the standby: no outbox row below the poller's cursor");
like($err, qr/cannot generate idgen IDs because idgen.epoch was moved later.*\n.*\nHINT:  Set idgen.epoch back/,
	'the promoted standby refuses, saying the epoch moved and the way out');
# its clock a few seconds behind the old IDs, counted from its epoch
my (undef, $repeats) = repeats_at($node, 'postgres', $first_ms + $day_ms);
is($repeats, '0', 'with its clock at the old IDs\' time in its epoch, it repeats none of 200,000');
# the way out: the primary's epoch back
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01'\n");
$node->restart;
($lost, $committed, $err) = outbox_after($node, $cursor);
is("$lost $committed $err", '0 800 ', 'with the epoch set back, the poller reads all 800 new rows');
$node->stop;

# idgen.node_bits 5 on the standby: the machine fields may overlap, so the
# replayed marks of the primary's node_bits bind it, as after a restart.
($node, $first_ms, $cursor) = promoted('bits', "idgen.node_bits = 5\n");
($lost, $committed, $err) = outbox_after($node, $cursor);
is("$lost $committed $err", '0 800 ', 'node_bits 5 on the standby: the poller reads all 800 new rows');
(undef, $repeats) = repeats_at($node, 'postgres', $first_ms);
is($repeats, '0', 'node_bits 5 on the standby: with the clock at the old IDs\' time, none of 200,000 repeats');
$node->stop;

# The control: the standby runs its primary's epoch.
($node, $first_ms, $cursor) = promoted('same', '');
($lost, $committed, $err) = outbox_after($node, $cursor);
is("$lost $committed $err", '0 800 ', 'control, the same epoch: the poller reads all 800 new rows');
(undef, $repeats) = repeats_at($node, 'postgres', $first_ms);
is($repeats, '0', 'control: with the clock at the old IDs\' time, none of 200,000 repeats');
$node->stop;

done_testing();
