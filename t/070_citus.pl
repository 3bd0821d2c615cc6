# A real Citus cluster: a coordinator and two workers, each with its own
# idgen.node_id.  idgen is created on the coordinator only, as a user would,
# and Citus creates it on the workers.  Citus evaluates DEFAULT idgen_next()
# on the coordinator for plain INSERTs, on a worker for INSERTs through it,
# and on the workers that hold the source shards for a repartitioned INSERT
# ... SELECT: every ID must be unique and decode to the node that made it.
# Layouts defined, redefined and dropped on the coordinator reach every
# worker, each node keeping its own copy for a restore of its own dump, and
# idgen_check_nodes() without a list checks every node through Citus's
# connections.  Last, every node leases its node id from the coordinator
# instead, through restarts of a worker and of the coordinator and a worker
# added later.  Runs where Citus is installed in the PostgreSQL under test
# and skips elsewhere.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus is not installed in $libdir"
  unless -f "$libdir/citus.so";

# Nodes talk over the test's Unix socket directory.  Only Citus is created
# here: idgen comes from the coordinator.
sub citus_node
{
	my ($name, $node_id) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'citus,idgen'\n"
		  . "citus.local_hostname = '" . $node->host . "'\n"
		  . "max_connections = 60\n");
	$node->start;
	set_auto_conf($node, "idgen.node_id = $node_id");
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}
my $coord = citus_node('coordinator', 1);
my $w1 = citus_node('worker1', 2);
my $w2 = citus_node('worker2', 3);
my $host = $coord->host;
my %node_of_port = ($w1->port => 2, $w2->port => 3);

sub sql { my ($node, $sql) = @_; return $node->safe_psql('postgres', $sql); }
sub check { return sql($coord, "SELECT conninfo, node_id, coalesce(problem, 'ok') FROM idgen_check_nodes() ORDER BY node_id NULLS LAST"); }
my ($cn, $n1, $n2) = map { "$host:" . $_->port } $coord, $w1, $w2;

sql($coord, "SELECT citus_set_coordinator_host('$host', " . $coord->port . ")");
sql($coord, "SELECT citus_add_node('$host', " . $w1->port . ")");
sql($coord, 'CREATE EXTENSION idgen');

# Each node records its own cluster, though Citus ran the script there: a
# worker is no "new cluster" holding another's IDs, and generates.
for my $n ($coord, $w1)
{
	is(sql($n, q{SELECT count(*), bool_and(s.system_identifier = c.system_identifier)
				 FROM idgen_system s, pg_control_system() c}),
		'1|t', $n->name . ' records its own system identifier in idgen_system');
	like(sql($n, 'SELECT idgen_next()'), qr/^\d+$/, $n->name . ' generates');
}

# A layout defined on the coordinator reaches the worker; a dropped one is
# dropped there too.
sql($coord, "SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}')");
sql($coord, "SELECT idgen_define_layout('scratch', '2020-01-01+00', '{time,sequence}', '{41,12}')");
sql($coord, "SELECT idgen_drop_layout('scratch')");
is(sql($w1, 'SELECT string_agg(name, \',\') FROM idgen_layout'), 'orders',
	'layouts defined and dropped on the coordinator are defined and dropped on the worker');

# A layout dropped and defined again otherwise is redefined on the worker.
sql($coord, "SELECT idgen_define_layout('redefined', '2020-01-01+00', '{time,sequence}', '{41,12}')");
sql($coord, "SELECT idgen_drop_layout('redefined')");
sql($coord, "SELECT idgen_define_layout('redefined', '2021-01-01+00', '{time,node,sequence}', '{41,10,12}')");
is(sql($w1, q{SELECT epoch = '2021-01-01+00', widths FROM idgen_layout WHERE name = 'redefined'}),
	't|{41,10,12}', 'a layout redefined on the coordinator is redefined on the worker');

# Each node keeps the copy of its own layouts that its own dump restores
# before any data; Citus neither sends nor tracks it.
for my $n ($coord, $w1)
{
	is(sql($n, q{SELECT idgen_layouts_saved() = (SELECT jsonb_agg(l ORDER BY l.name COLLATE "C") FROM idgen_layout l)}),
		't', $n->name . ' keeps the copy of its layouts for its dump');
	is(sql($n, q{SELECT count(*) FROM pg_dist_object WHERE objid = 'idgen_layouts_saved()'::regprocedure}),
		'0', $n->name . "'s copy is its own, not a Citus object");
	my ($dump) = run_command([ 'pg_dump', '--schema-only', '-d', $n->connstr('postgres') ]);
	like($dump, qr/CREATE FUNCTION public\.idgen_layouts_saved\(\).*"name": ""?redefined/s,
		$n->name . "'s dump holds its layouts ahead of the data");
}

# A worker added later lacks it, and the check says so; one call fixes it.
sql($coord, "SELECT citus_add_node('$host', " . $w2->port . ")");
is(check(), "$cn|1|ok\n$n1|2|ok\n$n2|3|layouts of $cn missing here: orders, redefined (run idgen_sync_layouts() on the coordinator)",
	'the check finds a layout missing on a node added later');
is(sql($coord, 'SELECT idgen_sync_layouts()'), '2', 'idgen_sync_layouts() sends both layouts');
is(check(), "$cn|1|ok\n$n1|2|ok\n$n2|3|ok", 'after the sync every node has the layout');

# Every insert path.  events is distributed by tenant; src says which path
# made each row, so which node should have made its id.
sql($coord, q{
	CREATE TABLE events (tenant int, id bigint DEFAULT idgen_next(), src text);
	SELECT create_distributed_table('events', 'tenant');
	INSERT INTO events (tenant, src) SELECT g % 50, 'coordinator' FROM generate_series(1, 3000) g;
});
sql($w1, q{INSERT INTO events (tenant, src) SELECT g % 50, 'worker1' FROM generate_series(1, 3000) g});
sql($w2, q{INSERT INTO events (tenant, src) SELECT g % 50, 'worker2' FROM generate_series(1, 3000) g});
# The volatile default keeps this INSERT ... SELECT from being pushed down:
# Citus repartitions, and the workers holding the source rows make the ids.
like(sql($coord, q{EXPLAIN INSERT INTO events (tenant, src) SELECT tenant, 'repartitioned' FROM events WHERE src = 'coordinator'}),
	qr/INSERT\/SELECT method: repartition/, 'the INSERT ... SELECT is repartitioned');
sql($coord, q{INSERT INTO events (tenant, src) SELECT tenant, 'repartitioned' FROM events WHERE src = 'coordinator'});

my $placement_node = join(' ', map { "WHEN $_ THEN $node_of_port{$_}" } sort keys %node_of_port);
is(sql($coord, qq{
	SELECT e.src, count(*),
		   count(*) FILTER (WHERE (idgen_decode(e.id)).node_id = CASE e.src
				WHEN 'coordinator' THEN 1 WHEN 'worker1' THEN 2 WHEN 'worker2' THEN 3
				ELSE (SELECT CASE p.nodeport $placement_node END
					  FROM pg_dist_shard_placement p
					  WHERE p.shardid = get_shard_id_for_distribution_column('events', e.tenant))
				END)
	FROM events e GROUP BY e.src ORDER BY e.src}),
	"coordinator|3000|3000\nrepartitioned|3000|3000\nworker1|3000|3000\nworker2|3000|3000",
	'each id decodes to the node that made it: coordinator, worker, or the worker of the source shard');
is(sql($coord, 'SELECT count(DISTINCT id) FROM events'), '12000', 'all 12000 ids are unique');

# A table distributed by its idgen key, in the propagated layout: rows made on
# the coordinator and on a worker land in the shard their id hashes to.
sql($coord, q{
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen_next('orders'), note text);
	SELECT create_distributed_table('orders', 'id');
	INSERT INTO orders (note) SELECT 'coordinator' FROM generate_series(1, 1000);
});
sql($w1, q{INSERT INTO orders (note) SELECT 'worker1' FROM generate_series(1, 1000)});
is(sql($coord, q{
	SELECT count(*), count(DISTINCT id),
		   count(*) FILTER (WHERE (idgen_decode(id, 'orders')).node_id = CASE note WHEN 'coordinator' THEN 1 ELSE 2 END)
	FROM orders}), '2000|2000|2000', 'ids in the orders layout are unique and decode to their node');
is(sql($coord, q{
	SELECT sum(result::int) FROM run_command_on_shards('orders',
		$$SELECT count(*) FROM %1$s
		  WHERE get_shard_id_for_distribution_column('orders', id) <> substring('%1$s' from '(\d+)$')::bigint$$)}),
	'0', 'every row of orders is in the shard its id hashes to');

# A reference table: the coordinator evaluates the default once per row, so
# every replica holds the same ids.
sql($coord, q{
	CREATE TABLE ref (id bigint DEFAULT idgen_next(), v int);
	SELECT create_reference_table('ref');
	INSERT INTO ref (v) SELECT g FROM generate_series(1, 500) g;
});
is(sql($coord, q{
	SELECT count(*), count(DISTINCT result)
	FROM run_command_on_placements('ref', $$SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM %s$$)}),
	'3|1', 'the three replicas of the reference table hold the same ids');
is(sql($coord, q{SELECT count(*) FROM ref WHERE (idgen_decode(id)).node_id = 1}), '500',
	'reference table ids are made on the coordinator');

# Two workers sharing a node id are caught, as is a worker with none.
set_auto_conf($w2, 'idgen.node_id = 2');
is(check(), "$cn|1|ok\n$n1|2|node id 2 is also used by $n2\n$n2|2|node id 2 is also used by $n1",
	'two workers sharing a node id are flagged');
set_auto_conf($w2, '');
is(check(), "$cn|1|ok\n$n1|2|ok\n$n2||idgen.node_id is not set, or its configured value was rejected (see the server log), so this server cannot generate IDs",
	'a worker without a node id is flagged, not taken for node 0');
set_auto_conf($w2, 'idgen.node_id = 5000');
like(check(), qr/\Q$n2\E\|\|idgen.node_id is not set, or its configured value was rejected/,
	'a rejected node id is flagged the same way');
is(sql($w2, 'SELECT node_id IS NULL FROM idgen_node_info()'), 't', 'idgen_node_info() shows no node id either');

# The recipe of docs/citus.md: no node sets idgen.node_id; every node, the
# coordinator too, leases one from the coordinator's database.  Each insert
# path's IDs are unique and decode to the node id its node leased.
my $registry = "host=$host port=" . $coord->port . ' dbname=postgres';
set_auto_conf($_, "idgen.node_registry = '$registry'\nidgen.node_lease_s = 5") for $coord, $w1, $w2;
my %leased;
for my $n ($coord, $w1, $w2)
{
	$n->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
	  or die $n->name . ' leased no node id: ' . sql($n, 'SELECT last_error FROM idgen_node_lease');
	$leased{ $n->name } = sql($n, 'SELECT node_id FROM idgen_node_lease');
}
my %distinct = map { $_ => 1 } values %leased;
is(scalar(keys %distinct), 3, 'the coordinator and both workers lease distinct node ids from the coordinator');
is(sql($coord, 'SELECT count(*) FROM idgen_leases WHERE held'), '3', 'the coordinator lists the three leases');
sql($coord, q{TRUNCATE events});
sql($coord, q{INSERT INTO events (tenant, src) SELECT g % 50, 'coordinator' FROM generate_series(1, 2000) g});
sql($w1, q{INSERT INTO events (tenant, src) SELECT g % 50, 'worker1' FROM generate_series(1, 2000) g});
sql($w2, q{INSERT INTO events (tenant, src) SELECT g % 50, 'worker2' FROM generate_series(1, 2000) g});
is(sql($coord, qq{
	SELECT count(*), count(DISTINCT id),
		   count(*) FILTER (WHERE (idgen_decode(id)).node_id = CASE src
				WHEN 'coordinator' THEN $leased{coordinator}
				WHEN 'worker1' THEN $leased{worker1} ELSE $leased{worker2} END)
	FROM events}), '6000|6000|6000', 'with leased node ids, every ID is unique and decodes to its node\'s lease');

# A worker restarted keeps its node id: the registry knows the directory.
$w1->restart;
$w1->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
  or die 'worker1 leased no node id after its restart';
is(sql($w1, 'SELECT node_id FROM idgen_node_lease'), $leased{worker1},
	'a worker restarted leases the node id it held');

# The coordinator, which is also the registry, restarted while the workers
# hold leases: they renew when it is back, with the same node ids.  The
# coordinator itself cannot release its lease while it shuts down, so it
# leases another node id unless its old lease has run out (docs/citus.md).
$coord->restart;
for my $n ($w1, $w2)
{
	$n->poll_query_until('postgres', "SELECT state = 'held' AND node_id = $leased{$n->name} FROM idgen_node_lease")
	  or die $n->name . ' lost its node id across the coordinator\'s restart: '
	  . sql($n, 'SELECT state, node_id, last_error FROM idgen_node_lease');
}
pass('after the coordinator\'s restart the workers hold the node ids they had');
$coord->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
  or die 'the coordinator leased no node id after its restart';
$leased{coordinator} = sql($coord, 'SELECT node_id FROM idgen_node_lease');

# A worker added after the leases were taken gets idgen from Citus and
# leases a node id of its own.
my $w3 = citus_node('worker3', 4);
set_auto_conf($w3, "idgen.node_registry = '$registry'\nidgen.node_lease_s = 5");
sql($coord, "SELECT citus_add_node('$host', " . $w3->port . ")");
$w3->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
  or die 'worker3 leased no node id: ' . sql($w3, 'SELECT last_error FROM idgen_node_lease');
$leased{worker3} = sql($w3, 'SELECT node_id FROM idgen_node_lease');
%distinct = map { $_ => 1 } values %leased;
is(scalar(keys %distinct), 4, 'a worker added later leases a node id no other node holds');
is(sql($w3, q{SELECT count(*), bool_and(s.system_identifier = c.system_identifier)
			  FROM idgen_system s, pg_control_system() c}),
	'1|t', 'the added worker records its own system identifier');

# Every node's insert path again, the added worker's shards included.
sql($coord, q{TRUNCATE events});
sql($coord, q{SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes'); SELECT citus_rebalance_wait()});
sql($coord, q{INSERT INTO events (tenant, src) SELECT g % 50, 'coordinator' FROM generate_series(1, 2000) g});
sql($_, q{INSERT INTO events (tenant, src) SELECT g % 50, 'worker' FROM generate_series(1, 2000) g}) for $w1, $w2, $w3;
sql($coord, q{INSERT INTO events (tenant, src) SELECT tenant, 'repartitioned' FROM events WHERE src = 'coordinator'});
is(sql($coord, q{SELECT count(*), count(DISTINCT id) FROM events}), '10000|10000',
	'after restarts and a node added, 10000 IDs through every node and a repartitioned INSERT ... SELECT are unique');

# The horizon and capacity views answer on every node.
for my $n ($coord, $w1, $w3)
{
	is(sql($n, q{SELECT idgen_horizon() > 0, count(*) > 0 FROM idgen_capacity}), 't|t',
		$n->name . ' answers idgen_horizon() and idgen_capacity');
}

$_->stop for $coord, $w1, $w2, $w3;
done_testing();
