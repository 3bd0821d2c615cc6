# A CHECK constraint that reads a layout defined in SQL, restored with
# pg_dump and pg_restore into a new database.  The control, on 1.2: a valid
# constraint is restored with its table, before the rows of idgen_layout,
# so the table's rows fail to load.  From 1.3 such a constraint must be
# NOT VALID, which pg_dump adds after the data: the restore keeps every row
# and the constraint still checks new ones, in partitions too.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('constraint', "idgen.node_id = 2\n");
my $dump = $node->basedir . '/app.dump';
my ($ret, $out, $err);

# "audit" sorts before "idgen_layout", so pg_dump loads its rows first.
my $schema = q(
	SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
);
my $check = q(CHECK ((idgen_decode(id, 'orders')).ts > '2021-01-01+00'));

# The control: 1.2 accepts the constraint, and the restore loses the rows.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', qq(
	CREATE EXTENSION idgen VERSION '1.2';
	$schema
	CREATE TABLE audit (id bigint PRIMARY KEY DEFAULT idgen_next('orders') $check, n int);
	INSERT INTO audit (n) SELECT generate_series(1, 100);
));
$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=old' ], '1.2: pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE old_restored');
$node->safe_psql('old_restored', q(CREATE EXTENSION idgen VERSION '1.2'));
IPC::Run::run([ 'pg_restore', '--host=' . $node->host, '--port=' . $node->port,
	'--dbname=old_restored', $dump ], '>', \$out, '2>', \$err);
like($err, qr/idgen layout "orders" does not exist/, '1.2: the rows are loaded before the layout');
is($node->safe_psql('old_restored', 'SELECT count(*) FROM audit'), '0',
	'1.2: the restored table is empty');

# Updating names the constraint made before.
($ret, $out, $err) = $node->psql('old', 'ALTER EXTENSION idgen UPDATE');
like($err, qr/WARNING:  check constraint "audit_id_check" of "audit" may read an idgen layout defined in SQL/,
	'the update names an existing constraint');

# 1.3 refuses the valid constraint, on a table or a domain, and its validation.
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', qq(CREATE EXTENSION idgen; $schema));
($ret, $out, $err) = $node->psql('app',
	"CREATE TABLE audit (id bigint PRIMARY KEY DEFAULT idgen_next('orders') $check, n int)");
like($err, qr/check constraint "audit_id_check" of relation "audit" reads an idgen layout defined in SQL.*HINT:  Add the constraint with NOT VALID/s,
	'a valid constraint is refused, with NOT VALID in the hint');
($ret, $out, $err) = $node->psql('app', q(
	CREATE DOMAIN order_id AS bigint CHECK ((idgen_decode(VALUE, layout => 'orders')).node_id = 2)));
like($err, qr/check constraint "order_id_check" of domain "order_id" reads an idgen layout/,
	'so is a domain\'s, with a named argument');
$node->safe_psql('app', qq(
	CREATE TABLE audit (id bigint PRIMARY KEY DEFAULT idgen_next('orders'), n int);
	ALTER TABLE audit ADD CONSTRAINT audit_id_check $check NOT VALID;
	CREATE DOMAIN order_id AS bigint;
	ALTER DOMAIN order_id ADD CONSTRAINT order_id_check
		CHECK ((idgen_decode(VALUE, layout => 'orders')).node_id = 2) NOT VALID;
	CREATE TABLE lines (id order_id PRIMARY KEY DEFAULT idgen_next('orders'), n int);
	-- a partition: created on its own with the constraint NOT VALID, then attached
	CREATE TABLE shipments (id bigint, n int) PARTITION BY RANGE (id);
	ALTER TABLE shipments ADD CONSTRAINT shipments_id_check $check NOT VALID;
	CREATE TABLE shipments_1 (id bigint, n int);
	ALTER TABLE shipments_1 ADD CONSTRAINT shipments_id_check $check NOT VALID;
	ALTER TABLE shipments ATTACH PARTITION shipments_1 FOR VALUES FROM (0) TO (MAXVALUE);
	INSERT INTO shipments SELECT idgen_next('orders'), g FROM generate_series(1, 100) g;
	-- a built-in layout is read from no table
	CREATE TABLE tweets (id bigint CHECK ((idgen_decode(id, 'twitter')).ts > '2011-01-01+00'));
	INSERT INTO audit (n) SELECT generate_series(1, 100);
	INSERT INTO lines (n) SELECT generate_series(1, 100);
));
($ret, $out, $err) = $node->psql('app',
	'CREATE TABLE shipments_2 PARTITION OF shipments FOR VALUES FROM (MINVALUE) TO (0)');
like($err, qr/check constraint "shipments_id_check" of relation "shipments_2" reads.*HINT:  The constraint is inherited/s,
	'a new partition, where the inherited constraint is valid, is refused with the way out');
# A dump's restore (check_function_bodies off) is warned, not refused, so
# that a dump made before 1.3 still restores its tables.
($ret, $out, $err) = $node->psql('app', qq(
	SET check_function_bodies = off;
	CREATE TABLE old_style (id bigint $check);
	SELECT count(*) FROM old_style;));
like($err, qr/WARNING:  check constraint "old_style_id_check" of relation "old_style" reads/,
	'with check_function_bodies off, as pg_dump sets it, the constraint is only warned about');
is($out, '0', 'and the table is created');
$node->safe_psql('app', 'DROP TABLE old_style');
($ret, $out, $err) = $node->psql('app', 'ALTER TABLE audit VALIDATE CONSTRAINT audit_id_check');
like($err, qr/check constraint "audit_id_check" of relation "audit" reads/, 'validating it is refused');
($ret, $out, $err) = $node->psql('app', 'INSERT INTO audit VALUES (1, 0)');
like($err, qr/violates check constraint "audit_id_check"/, 'the NOT VALID constraint checks new rows');

$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=app' ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE app_restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--dbname=app_restored', $dump ], 'pg_restore');
is($node->safe_psql('app_restored', q(
	SELECT (SELECT count(*) FROM audit), (SELECT count(*) FROM lines),
	       (SELECT count(*) FROM shipments),
	       (SELECT count(*) FROM pg_constraint
	        WHERE conname IN ('audit_id_check', 'order_id_check') AND NOT convalidated))),
	'100|100|100|2', 'every row is restored, and both constraints, NOT VALID');
($ret, $out, $err) = $node->psql('app_restored', 'INSERT INTO lines VALUES (1, 0)');
like($err, qr/violates check constraint "order_id_check"/, 'the restored constraint checks new rows');

$node->stop;
done_testing();
