# (IDGEN_TEST_EXTRA=long: five servers.)  Three servers with node ids 1, 2
# and 3 insert at once into tables keyed by
# DEFAULT idgen_next(); PostgreSQL's logical replication carries every row
# into one table with a primary key on a fourth server.  No row conflicts or
# goes missing, and each row's node id names the server that made it.  A
# streaming standby of node 1 shares its node id; promoted, it resumes above
# every ID node 1 made, and its rows replicate without conflict.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('long');

my @pubs;
for my $n (1 .. 3)
{
	my $pub = idgen_node("pub$n", "idgen.node_id = $n\n", allows_streaming => 'logical');
	$pub->safe_psql('postgres', qq(
		CREATE TABLE events (id bigint PRIMARY KEY DEFAULT idgen_next(),
			origin text NOT NULL DEFAULT 'pub$n', era int NOT NULL DEFAULT 1, payload int);
		CREATE PUBLICATION events_pub FOR TABLE events;
	));
	push @pubs, $pub;
}

# The standby's clock is 5 s behind node 1's, more than a failover takes
# here: only the high-water mark that WAL carries keeps its IDs above node
# 1's after promotion.  Its
# postgresql.conf comes from the base backup, so it has node id 1 too.
my $standby = node_from_backup($pubs[0], 'pub1_standby', conf => 'idgen.clock_offset_ms = -5000');

my $sub = idgen_node('sub', q(
max_worker_processes = 16
max_logical_replication_workers = 8
));
$sub->safe_psql('postgres', q(
	CREATE TABLE events (id bigint PRIMARY KEY, origin text NOT NULL, era int NOT NULL, payload int);
	CREATE EXTENSION dblink;
));
for my $n (1 .. 3)
{
	my $conn = conninfo($pubs[ $n - 1 ]);
	$sub->safe_psql('postgres',
		"CREATE SUBSCRIPTION sub$n CONNECTION '$conn' PUBLICATION events_pub");
}
$sub->wait_for_subscription_sync;

# 4 clients on each server, 12 at once, 10,000 rows per server; the
# subscriber applies while they insert.
my @runs = map {
	start_clients($_, "INSERT INTO events (payload) SELECT g FROM generate_series(1, 100) g;\n",
		clients => 4, transactions => 25)
} @pubs;
for my $i (0 .. 2)
{
	my ($ok, $out, $err) = finish_clients($runs[$i]);
	like($out, qr{processed: 100/100}, $pubs[$i]->name . ': 4 clients inserted 100 batches');
}

$pubs[$_ - 1]->wait_for_catchup("sub$_") for 1 .. 3;
$pubs[0]->wait_for_catchup($standby);

ids_unique($sub, 'events', 'all 30,000 rows arrived, all IDs distinct', count => 30000);
is($sub->safe_psql('postgres', q(
	SELECT origin, count(*), min(node), max(node)
	FROM (SELECT origin, (idgen_decode(id)).node_id AS node FROM events) s
	GROUP BY origin ORDER BY origin)),
	"pub1|10000|1|1\npub2|10000|2|2\npub3|10000|3|3",
	'each row decodes to the node id of the server it came from');
ok(!$sub->log_contains('duplicate key|conflict'), 'the subscriber saw no conflict');

# The standby shares node 1's node id, and the check knows it may.
my @conns = map { conninfo($_) } @pubs, $standby;
my $check = sub {
	my @list = @_;
	my $array = join(', ', map { "'$_'" } @list);
	return $sub->safe_psql('postgres', qq(
		SELECT node_id, in_recovery, coalesce(problem, 'ok')
		FROM idgen_check_nodes(ARRAY[$array])));
};
is($check->(@conns), "1|f|ok\n2|f|ok\n3|f|ok\n1|t|ok",
	'node ids checked: a standby sharing its primary\'s node id is no clash');

my ($ret, $out, $err) = $standby->psql('postgres', 'SELECT idgen_next()');
like($err, qr/cannot generate idgen IDs during recovery/, 'the standby refuses to generate');

# Failover.  Until the old primary is fenced, two primaries share node id 1.
$sub->safe_psql('postgres', 'ALTER SUBSCRIPTION sub1 DISABLE');
$standby->promote;
like($check->($conns[0], $conns[3]),
	qr/^1\|f\|node id 1 is also used by .*a copy of the same cluster.*\n1\|f\|node id 1 is also used by/,
	'after promotion, the check flags the old and the new primary until one is fenced');
$pubs[0]->stop('immediate');

# Replication slots do not follow a promotion in PostgreSQL 15: the
# subscriber starts a new subscription on the new primary before it writes.
my $standby_conn = conninfo($standby);
$sub->safe_psql('postgres', qq(
	ALTER SUBSCRIPTION sub1 SET (slot_name = NONE);
	DROP SUBSCRIPTION sub1;
	CREATE SUBSCRIPTION sub1b CONNECTION '$standby_conn' PUBLICATION events_pub
		WITH (copy_data = false);
));
$standby->safe_psql('postgres',
	'INSERT INTO events (era, payload) SELECT 2, g FROM generate_series(1, 1000) g');
$standby->wait_for_catchup('sub1b');

is($sub->safe_psql('postgres', q(
	SELECT count(*), count(DISTINCT id),
	       count(*) FILTER (WHERE era = 2 AND origin = 'pub1' AND (idgen_decode(id)).node_id = 1),
	       min(id) FILTER (WHERE era = 2) > max(id) FILTER (WHERE era = 1 AND origin = 'pub1')
	FROM events)),
	'31000|31000|1000|t',
	'the promoted standby, with node id 1 and a clock 5 s behind, made IDs above all of node 1\'s');
note('node 1 before and after promotion: ' . $sub->safe_psql('postgres', q(
	SELECT max((idgen_decode(id)).ts) FILTER (WHERE era = 1), min((idgen_decode(id)).ts) FILTER (WHERE era = 2)
	FROM events WHERE origin = 'pub1')));
is($check->(@conns[ 1 .. 3 ]), "2|f|ok\n3|f|ok\n1|f|ok", 'with the old primary gone, no node id is shared');
ok(!$sub->log_contains('duplicate key|conflict'), 'still no conflict on the subscriber');

$_->stop for $sub, $standby, @pubs[ 1 .. 2 ];
done_testing();
