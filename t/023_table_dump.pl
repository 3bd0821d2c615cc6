# Rows copied in without idgen's objects: one table's dump (pg_dump -t)
# restored into a new cluster with the old node id.  Nothing of the old
# cluster comes along, so nothing can tell; in a review 1.5 repeated
# 10,208-39,709 of 200,000 IDs with the clock at the old IDs' time.  The
# documented step after such a load, as setval() after loading a table
# with a sequence: idgen_resume_after() given the newest ID's time, and a
# restart; then none repeats.  Servers that lease their node ids need no
# step: the registry never gives one node id to two servers at once, and
# the next holder starts above the marks of the one before, whatever
# cluster it is.  The control: the same restore without the step repeats.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $regression = "idgen.max_clock_regression_ms = 120000\n";

# 200,000 IDs into ids on $node; its dump of that table alone, and the
# first millisecond of the IDs.
sub table_dump
{
	my ($node) = @_;
	$node->safe_psql('postgres', q(
		CREATE TABLE ids (id bigint PRIMARY KEY);
		INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
	));
	my $dump = $node->basedir . '/ids.dump';
	$node->command_ok([ 'pg_dump', '-Fc', '-t', 'ids', '-f', $dump, '-d', $node->connstr('postgres') ],
		$node->name . ': pg_dump -t ids');
	my $first_ms = $node->safe_psql('postgres',
		q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
	return ($dump, $first_ms);
}

sub restore_into
{
	my ($node, $dump) = @_;
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('postgres'), $dump ],
		$node->name . ': pg_restore');
}

# 1. A manual node id: the step after the load.
my $conf = "idgen.node_id = 1\n$regression";
my $old = idgen_node('old', $conf);
my ($dump, $first_ms) = table_dump($old);
my $old_epoch = $old->safe_psql('postgres', 'SHOW idgen.epoch');
my $later = "idgen.epoch = '"
  . $old->safe_psql('postgres', "SELECT (date '$old_epoch' + 1)::text") . "'\n";
$old->stop;

my $new = idgen_node('new', $conf);
restore_into($new, $dump);
$new->safe_psql('postgres', q(SELECT idgen_resume_after((idgen_decode(max(id))).ts) FROM ids));
# until the restart, a new session refuses (README: then restart)
my (undef, undef, $before_restart) = $new->psql('postgres', 'SELECT idgen_next()');
like($before_restart, qr/idgen generation resumes after a restart/, 'after the step, generation waits for the restart');
$new->restart;
my (undef, $repeats, $err) = repeats_at($new, 'postgres', $first_ms);
is("$repeats $err", '0 ', 'after idgen_resume_after() of the newest ID and a restart, none of 200,000 repeats');
$new->stop;

my $control = idgen_node('control', $conf);
restore_into($control, $dump);
(undef, $repeats, $err) = repeats_at($control, 'postgres', $first_ms);
cmp_ok($repeats, '>', 0, "control, without the step: $repeats of 200,000 repeat");
$control->stop;

# 1b. A new cluster whose idgen.epoch is a day later than the one the IDs
# were made under: idgen_decode() reads their time a day ahead, so the
# step refuses, and its hint says the way out: the old epoch, a restart,
# the step again.  The control keeps the later epoch: a day on, its IDs
# reach the old ones and repeat them.
my $day_ms = 86_400_000;

my $epoch_new = idgen_node('epoch_new', $conf . $later);
restore_into($epoch_new, $dump);
my ($ret, $out);
($ret, $out, $err) = $epoch_new->psql('postgres',
	q(SELECT idgen_resume_after((idgen_decode(max(id))).ts) FROM ids), extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/22023: time .* is more than idgen\.max_clock_regression_ms ahead of the clock/,
	'a later epoch: the step refuses, the newest ID\'s time read a day ahead');
like($err, qr/HINT:  .*set idgen\.epoch to that epoch, restart the server, and run this again/,
	'the hint says the way out');
$epoch_new->append_conf('postgresql.conf', "idgen.epoch = '$old_epoch'\n");
$epoch_new->restart;
$epoch_new->safe_psql('postgres', q(SELECT idgen_resume_after((idgen_decode(max(id))).ts) FROM ids));
$epoch_new->restart;
(undef, $repeats, $err) = repeats_at($epoch_new, 'postgres', $first_ms);
is("$repeats $err", '0 ', 'after the old epoch, the step and a restart, none of 200,000 repeats');
$epoch_new->stop;

my $epoch_control = idgen_node('epoch_control', $conf . $later);
restore_into($epoch_control, $dump);
(undef, $repeats, $err) = repeats_at($epoch_control, 'postgres', $first_ms + $day_ms);
cmp_ok($repeats, '>', 0, "control, the later epoch kept: a day on, $repeats of 200,000 repeat");
$epoch_control->stop;

# 2. Node ids leased from a registry: no step at all.
my $registry = idgen_node('registry', "idgen.node_id = 0\ndefault_transaction_isolation = 'repeatable read'\n");
my $lease_conf = "idgen.node_registry = '" . conninfo($registry) . "'\nidgen.node_lease_s = 5\nidgen.node_bits = 1\n$regression";

sub leasing_node
{
	my ($name) = @_;
	my $node = idgen_node($name, $lease_conf);
	$node->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
	  or die "$name did not lease a node id";
	return $node;
}

my $leased_old = leasing_node('leased_old');
my $old_node_id = $leased_old->safe_psql('postgres', 'SELECT node_id FROM idgen_node_lease');
($dump, $first_ms) = table_dump($leased_old);
$leased_old->stop;

# the registry gives a node id never held first: another server takes it
my $other = leasing_node('other');
my $leased_new = leasing_node('leased_new');
is($leased_new->safe_psql('postgres', 'SELECT node_id FROM idgen_node_lease'), $old_node_id,
	'the new leasing server holds the old one\'s node id');
restore_into($leased_new, $dump);
(undef, $repeats, $err) = repeats_at($leased_new, 'postgres', $first_ms);
is("$repeats $err", '0 ', 'a leasing server, with no step: none of 200,000 repeats');
$leased_new->stop;
$other->stop;
$registry->stop;

done_testing();
