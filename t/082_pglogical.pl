# Multi-master logical replication with Debian's pglogical: two nodes with
# node ids 1 and 2 replicate the same tables both ways while each inserts
# into them at once.  Keys by DEFAULT idgen_next() in a layout defined alike
# on both never conflict, and every row ends up on both nodes.  The control:
# bigserial keys, inserted the same way in the same transactions, conflict
# (pglogical logs each conflict and keeps one of the two rows).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all => "pglogical is not installed in the PostgreSQL under test ($pkglibdir; "
  . 'Debian package postgresql-15-pglogical)'
  unless -f "$pkglibdir/pglogical.so";

my @nodes;
for my $n (1, 2)
{
	my $node = idgen_node("mm$n", qq(
shared_preload_libraries = 'idgen,pglogical'
idgen.node_id = $n
track_commit_timestamp = on
max_worker_processes = 16
max_replication_slots = 10
max_wal_senders = 10
), allows_streaming => 'logical');
	# Servers with output_plugin_libraries (this setting appeared in a minor
	# release) let only the listed libraries decode for REPLICATION users.
	$node->safe_psql('postgres', q(
		ALTER SYSTEM SET output_plugin_libraries = pgoutput, test_decoding, pglogical_output, pglogical;
		SELECT pg_reload_conf();))
	  if $node->safe_psql('postgres',
		q(SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries')) eq '1';
	$node->safe_psql('postgres', qq(
		CREATE EXTENSION pglogical;
		SELECT pglogical.create_node(node_name := 'node$n', dsn := '@{[ conninfo($node) ]}');
		SELECT idgen_define_layout('mm', '2025-01-01+00', '{time,node,worker,sequence}', '{41,4,6,12}');
		CREATE TABLE items (id bigint PRIMARY KEY DEFAULT idgen_next('mm'),
			origin int NOT NULL, payload int NOT NULL);
		CREATE TABLE items_serial (id bigserial PRIMARY KEY,
			origin int NOT NULL, payload int NOT NULL);
		SELECT pglogical.replication_set_add_table('default', 'items');
		SELECT pglogical.replication_set_add_table('default', 'items_serial');
	));
	push @nodes, $node;
}

# Each node subscribes to the other, taking only changes made there, not
# those it forwards (no loops).
for my $i (0, 1)
{
	my ($node, $other) = ($nodes[$i], $nodes[ 1 - $i ]);
	my $name = 'from_' . $other->name;
	$node->safe_psql('postgres', qq(
		SELECT pglogical.create_subscription(subscription_name := '$name',
			provider_dsn := '@{[ conninfo($other) ]}', replication_sets := ARRAY['default'],
			synchronize_data := false, forward_origins := '{}');
	));
}
for my $i (0, 1)
{
	my $name = 'from_' . $nodes[ 1 - $i ]->name;
	$nodes[$i]->poll_query_until('postgres', qq(
		SELECT status = 'replicating' FROM pglogical.show_subscription_status('$name')))
	  or give_up("pglogical subscription $name did not reach 'replicating'",
		map { $_->logfile } @nodes);
}

# 4 clients on each node, 8 at once, 2,000 rows per node: 50 transactions
# per client of 10 rows each.  Returns, per node, whether all 200
# transactions were processed and the errors pgbench reported.
sub insert_on_both
{
	my ($table) = @_;
	my @runs = map {
		start_clients($nodes[ $_ - 1 ],
			"INSERT INTO $table (origin, payload) SELECT :origin, g FROM generate_series(1, 10) g;\n",
			clients => 4, jobs => 2, transactions => 50, define => { origin => $_ })
	} 1, 2;
	my @result;
	for my $run (@runs)
	{
		my ($ok, $out, $err) = finish_clients($run);
		push @result, [ $out =~ m{processed: 200/200} ? 1 : 0, $err ];
	}

	# Caught up: each node's pglogical slot has confirmed everything written.
	for my $node (@nodes)
	{
		my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
		$node->poll_query_until('postgres', qq(
			SELECT bool_and(confirmed_flush_lsn >= '$lsn') FROM pg_replication_slots
			WHERE plugin = 'pglogical_output'))
		  or die $node->name . ' not caught up';
	}
	return @result;
}

my @items_runs = insert_on_both('items');
for my $n (1, 2)
{
	ok($items_runs[ $n - 1 ][0], "node $n: 4 clients inserted 200 batches with idgen_next keys")
	  or diag($items_runs[ $n - 1 ][1]);
}

my $rows = 'SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE origin = 1), '
  . 'count(*) FILTER (WHERE origin = 2), md5(string_agg(id::text || origin, \',\' ORDER BY id)) FROM ';
my @items = map { $_->safe_psql('postgres', "$rows items") } @nodes;
like($items[0], qr/^4000\|4000\|2000\|2000\|/, 'node 1 has all 4,000 rows keyed by idgen_next');
is($items[1], $items[0], 'node 2 has the same 4,000 rows');
is($nodes[0]->safe_psql('postgres', q(
	SELECT string_agg(DISTINCT origin || ':' || (idgen_decode(id, 'mm')).node_id, ' ' ORDER BY origin || ':' || (idgen_decode(id, 'mm')).node_id)
	FROM items)), '1:1 2:2', 'each row decodes, in layout mm, to the node id of the node that made it');
for my $node (@nodes)
{
	ok(!$node->log_contains(qr/CONFLICT: .* on relation public\.items /),
		$node->name . ': no conflict on the table keyed by idgen_next');
}

# The control: bigserial keys from both nodes collide, locally (an insert
# meets a row replicated from the other node) or in pglogical's apply.
my @serial_runs = insert_on_both('items_serial');
my @serial = map { $_->safe_psql('postgres', "$rows items_serial") } @nodes;
my $local_errors = 0;
$local_errors += () = $_->[1] =~ /duplicate key value violates unique constraint "items_serial_pkey"/g
  for @serial_runs;
my $apply_conflicts = 0;
$apply_conflicts += () = slurp_file($_->logfile) =~ /CONFLICT: .* on relation public\.items_serial /g
  for @nodes;
note("bigserial: node 1 has (rows|distinct|from 1|from 2|md5) $serial[0], node 2 $serial[1]; "
	  . "$local_errors inserts failed on a duplicate key, $apply_conflicts conflicts logged by pglogical");
cmp_ok($local_errors + $apply_conflicts, '>', 0,
	"control: bigserial keys conflict ($local_errors failed inserts, $apply_conflicts apply conflicts)");
ok($serial[0] !~ /^4000\|/ || $serial[1] !~ /^4000\|/ || $serial[0] ne $serial[1],
	'control: with bigserial keys the nodes do not both hold all 4,000 rows');

$_->stop for @nodes;
done_testing();
