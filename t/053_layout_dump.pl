# Layouts defined in SQL are data of the extension's configuration table:
# an installation of 1.0 updated to the current version gets the table (1.1)
# and the privileges and operator class support of 1.2, and pg_dump and
# pg_restore carry the definitions, so restored IDs decode the same and new
# ones are still made in the layout.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('dump', "idgen.node_id = 6\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q(CREATE EXTENSION idgen VERSION '1.0'));
my ($ret, $out, $err) = $node->psql('app', q(SELECT idgen_next('js53')));
like($err, qr/function idgen_next\(unknown\) does not exist/, '1.0 has no idgen_next(layout)');
$node->safe_psql('app', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('app', q(
	SELECT e.extversion = a.default_version
	FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
	WHERE e.extname = 'idgen')), 't', 'updated to the default version');
is($node->safe_psql('app', q(
	SELECT has_function_privilege('public', 'idgen_layout_check()', 'EXECUTE'),
	       count(*) FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
	       WHERE f.opfname = 'objectid_ops' AND p.amprocnum = 4
	       AND p.amproc = 'btequalimage'::regproc)), 'f|1',
	'1.2: the trigger function is not for PUBLIC, and objectid indexes deduplicate');

$node->safe_psql('app', q(
	SELECT idgen_define_layout('tickets', '2022-02-02+00', '{time,node,worker,sequence}',
	                           '{42,4,5,12}');
	SELECT idgen_define_layout('ledger', '2020-01-01+00', '{time,node,sequence,shard}',
	                           '{12,2,1,3}', '10 ms', 10);
	CREATE TABLE tickets (id bigint PRIMARY KEY DEFAULT idgen_next('tickets'), n int);
	CREATE TABLE ledger (id bigint PRIMARY KEY DEFAULT idgen_next('ledger', 42), n int);
	INSERT INTO tickets (n) SELECT generate_series(1, 1000);
	INSERT INTO ledger (n) SELECT generate_series(1, 200);
));
my $layouts = 'SELECT * FROM idgen_layout ORDER BY name';
my $decoded = q(
	SELECT count(*), count(DISTINCT d), min((d).node_id), max((d).node_id)
	FROM (SELECT idgen_decode(id, 'tickets') AS d FROM tickets
	      UNION ALL SELECT idgen_decode(id, 'ledger') FROM ledger) s);
my $before = $node->safe_psql('app', $decoded);
is($before, '1200|1200|6|6', 'IDs of both layouts decode to node 6');

my $dump = $node->basedir . '/app.dump';
$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=app' ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE app2');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--dbname=app2', $dump ], 'pg_restore');

is($node->safe_psql('app2', $layouts), $node->safe_psql('app', $layouts),
	'the restored database has the same layouts');
is($node->safe_psql('app2', $decoded), $before, 'restored IDs decode the same');
is($node->safe_psql('app2', q(
	INSERT INTO tickets (n) SELECT generate_series(1, 1000);
	INSERT INTO ledger (n) SELECT generate_series(1, 200);
	SELECT (SELECT count(*) FROM tickets), (SELECT count(*) FROM ledger),
	       (SELECT bool_and(id % 1000 = 42) FROM ledger))),
	'2000|400|t', 'the restored defaults make new IDs in the restored layouts');

($ret, $out, $err) = $node->psql('app2', q(
	UPDATE idgen_layout SET widths = '{50,4,5,12}' WHERE name = 'tickets'));
like($err, qr/invalid idgen layout "tickets"/, 'the restored table still checks its rows');

$node->stop;
done_testing();
