# Transaction pooling with Debian's pgbouncer: 300 clients share 20 server
# connections, inserting rows keyed by DEFAULT idgen_next() and taking
# blocks (idgen_next_block) that they number rows from in a later
# transaction, which pgbouncer may run on another server connection.  No ID
# repeats, and only the 20 server connections hold worker ids: nothing is
# made on the shared one.  The control: 100 clients connected directly
# need more backends than there are worker ids, and the shared worker id
# makes IDs.  Throughput beside direct connections is reported,
# not asserted.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $pgbouncer = find_tool('pgbouncer');
plan skip_all => 'pgbouncer is not installed (Debian package pgbouncer)' unless $pgbouncer;

my $node = idgen_node('pool', q(
idgen.node_id = 4
max_connections = 130
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (id bigint NOT NULL DEFAULT idgen_next(), kind text NOT NULL,
		pid int NOT NULL DEFAULT pg_backend_pid(), run int NOT NULL);
));

my $dir = PostgreSQL::Test::Utils::tempdir();
my $port = PostgreSQL::Test::Cluster::get_free_port();
PostgreSQL::Test::Utils::append_to_file("$dir/users.txt", qq("postgres" ""\n));
PostgreSQL::Test::Utils::append_to_file("$dir/pgbouncer.ini", sprintf(q([databases]
postgres = host=%s port=%d dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s/users.txt
pool_mode = transaction
default_pool_size = 20
max_db_connections = 20
max_client_conn = 400
logfile = %s/pgbouncer.log
pidfile = %s/pgbouncer.pid
), $node->host, $node->port, $port, $dir, $dir, $dir));
start_daemon([ $pgbouncer, "$dir/pgbouncer.ini" ], "$dir/pgbouncer.out");
my $pooled = "host=127.0.0.1 port=$port dbname=postgres user=postgres";
my $up = 0;
for (1 .. 100)
{
	my ($ret) = $node->psql('postgres', 'SELECT 1', connstr => $pooled);
	if ($ret == 0) { $up = 1; last; }
	select(undef, undef, undef, 0.1);
}
ok($up, 'pgbouncer accepts connections')
  or give_up('pgbouncer did not accept connections within 10 s', "$dir/pgbouncer.out", "$dir/pgbouncer.log");

# Each transaction inserts one row; every fifth a client takes a block of 10
# and, in its next transaction, inserts the block's IDs as it would number
# rows itself.
my $script = q(
INSERT INTO ids (kind, run) VALUES ('row', :run);
\set r random(1, 5)
\if :r = 1
SELECT idgen_next_block(10) AS first \gset
INSERT INTO ids (id, kind, run) SELECT :first + g, 'block', :run FROM generate_series(0, 9) g;
\endif
);

# $clients clients, each for $limit (time => 5 or transactions => N);
# returns pgbench's transactions per second.
sub pgbench_run
{
	my ($run, $connstr, $clients, %limit) = @_;
	my $name = "$clients clients " . ($run == 1 ? 'via pgbouncer' : 'direct');
	my ($ok, $out, $err) = finish_clients(start_clients($node, $script, connstr => $connstr,
		clients => $clients, jobs => 2, define => { run => $run }, %limit));
	note($out);
	ok($ok, "$name: pgbench ran") or diag($err);
	like($out, qr/number of failed transactions: 0 /, "$name: no transaction failed");
	my ($tps) = $out =~ /tps = ([\d.]+)/;
	return $tps // 0;
}

my $pooled_tps = pgbench_run(1, $pooled, 300, time => 5);

is($node->safe_psql('postgres', q(
	SELECT count(*) > 1000, count(*) = count(DISTINCT id), count(DISTINCT pid) <= 20
	FROM ids WHERE run = 1)),
	't|t|t', 'through pgbouncer: all IDs distinct, made by at most 20 server connections');
my ($rows, $blocks, $pids, $workers) = split /\|/, $node->safe_psql('postgres', q(
	SELECT count(*) FILTER (WHERE kind = 'row'), count(*) FILTER (WHERE kind = 'block') / 10,
	       count(DISTINCT pid), count(DISTINCT (idgen_decode(id)).worker_id)
	FROM ids WHERE run = 1));
note("pooled: $rows rows and $blocks blocks of 10 from 300 clients, "
	  . "made by $pids server connections with $workers worker ids");
cmp_ok($blocks, '>', 0, 'clients took blocks');

# The server connections are still open: each holds its own worker id, and
# the shared one made nothing.
is($node->safe_psql('postgres', q(
	SELECT count(*) FILTER (WHERE NOT is_shared AND ids_issued > 0) <= 20,
	       coalesce(sum(ids_issued) FILTER (WHERE is_shared), 0)
	FROM idgen_workers)),
	't|0', 'only the server connections hold worker ids; none made IDs on the shared one');
is($node->safe_psql('postgres', q(
	SELECT count(*) FROM idgen_workers
	WHERE NOT is_shared AND ids_issued > 0 AND pid NOT IN (SELECT pid FROM ids WHERE run = 1))),
	'0', 'every backend holding a worker id that made IDs is one of the server connections');
is($node->safe_psql('postgres', q(
	SELECT count(*) FROM ids WHERE run = 1
	  AND (idgen_decode(id)).worker_id = (SELECT worker_id FROM idgen_workers WHERE is_shared))),
	'0', 'no pooled row decodes to the shared worker id');

# Direct connections for comparison: as many clients as pgbouncer has
# server connections, then 100 (the control: more backends than the 63
# worker ids, so the shared worker id makes IDs; 300 backends take longer to
# start than the pooled run lasts).
my $direct = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres user=postgres';
my $direct20_tps = pgbench_run(2, $direct, 20, time => 5);
$node->stop;    # idgen_workers counts from the start of the server
$node->start;
my $direct100_tps = pgbench_run(3, $direct, 100, transactions => 50);
my $shared = $node->safe_psql('postgres',
	'SELECT ids_issued FROM idgen_workers WHERE is_shared');
cmp_ok($shared, '>', 0,
	"control: 100 direct connections outnumber the worker ids, and the shared one made $shared IDs");
ids_unique($node, 'ids', 'every ID of every run is distinct');
note(sprintf('throughput (transactions/s): 300 clients via pgbouncer (20 server connections) %.0f, '
	  . '20 direct clients %.0f, 100 direct clients %.0f', $pooled_tps, $direct20_tps, $direct100_tps));

stop_daemons();
$node->stop;
done_testing();
