# What reads a layout defined in SQL while pg_restore loads table data:
# CHECK constraints of tables and domains, directly or through SQL and
# PL/pgSQL functions, generated columns, partition keys; indexes on them in
# a parallel restore.  The control, on 1.2: a valid constraint is restored
# with its table, and the table's rows load before the rows of idgen_layout,
# so they fail.  1.3 and 1.4 refused such constraints unless NOT VALID, but
# could not see through functions (1.4: 0 of 1,000 rows restored), and
# refused LIKE and INHERITS of a table with the NOT VALID constraint.  From
# 1.5 the layouts are kept in a function, idgen_layouts_saved(), that
# pg_dump restores before any table's data, and creating it defines them:
# every path restores, in custom and plain format, serial and parallel.
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

# Restores the custom-format dump into a new database; returns pg_restore's
# exit code and its stderr.
sub restore
{
	my ($db, @options) = @_;
	my ($stdout, $stderr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	IPC::Run::run([ 'pg_restore', '--host=' . $node->host, '--port=' . $node->port,
		"--dbname=$db", @options, $dump ], '>', \$stdout, '2>', \$stderr);
	return ($? >> 8, $stderr);
}

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

# Updating names the constraint made before (1.3), and saves the layouts
# (1.5): a dump made now restores the table valid constraint and all.
($ret, $out, $err) = $node->psql('old', 'ALTER EXTENSION idgen UPDATE');
like($err, qr/WARNING:  check constraint "audit_id_check" of "audit" may read an idgen layout defined in SQL/,
	'the update names an existing constraint');
$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=old' ],
	'updated: pg_dump');
($ret, $err) = restore('old_restored_again', '--exit-on-error');
is($ret, 0, 'updated: pg_restore succeeds') or diag($err);
is($node->safe_psql('old_restored_again', q(
	SELECT count(*), bool_and(c.convalidated) FROM audit, pg_constraint c
	WHERE c.conname = 'audit_id_check')), '100|t',
	'updated: the rows are restored, and the constraint valid');

# 1.4, whose SQL the library still serves, refuses a valid constraint that
# calls idgen directly, on a table or a domain, and warns in a restore.
$node->safe_psql('postgres', 'CREATE DATABASE v14');
$node->safe_psql('v14', qq(CREATE EXTENSION idgen VERSION '1.4'; $schema));
($ret, $out, $err) = $node->psql('v14',
	"CREATE TABLE audit (id bigint PRIMARY KEY DEFAULT idgen_next('orders') $check, n int)");
like($err, qr/check constraint "audit_id_check" of relation "audit" reads an idgen layout defined in SQL.*HINT:  Add the constraint with NOT VALID/s,
	'1.4: a valid constraint is refused, with NOT VALID in the hint');
($ret, $out, $err) = $node->psql('v14', q(
	CREATE DOMAIN order_id AS bigint CHECK ((idgen_decode(VALUE, layout => 'orders')).node_id = 2)));
like($err, qr/check constraint "order_id_check" of domain "order_id" reads an idgen layout/,
	'1.4: so is a domain\'s, with a named argument');
($ret, $out, $err) = $node->psql('v14', qq(
	SET check_function_bodies = off;
	CREATE TABLE old_style (id bigint $check);
	SELECT count(*) FROM old_style;));
like($err, qr/WARNING:  check constraint "old_style_id_check" of relation "old_style" reads/,
	'1.4: with check_function_bodies off, as pg_dump sets it, the constraint is only warned about');
$node->safe_psql('v14', qq(
	CREATE TABLE legacy (id bigint, n int);
	ALTER TABLE legacy ADD CONSTRAINT legacy_id_check $check NOT VALID;));
($ret, $out, $err) = $node->psql('v14', 'CREATE TABLE legacy_copy (LIKE legacy INCLUDING ALL)');
like($err, qr/check constraint "legacy_id_check" of relation "legacy_copy" reads/,
	'1.4: LIKE of a table with the NOT VALID constraint is refused');
$node->safe_psql('v14', 'ALTER EXTENSION idgen UPDATE');
($ret, $out, $err) = $node->psql('v14', q(
	CREATE TABLE legacy_copy (LIKE legacy INCLUDING ALL);
	CREATE TABLE legacy_child () INHERITS (legacy);
	ALTER TABLE legacy VALIDATE CONSTRAINT legacy_id_check;));
is($ret, 0, 'updated: LIKE, INHERITS and VALIDATE CONSTRAINT are accepted') or diag($err);

# 1.5: every path from table data to a layout.  Schema app sorts before
# public, and each of its tables before idgen_layout.
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', qq(
	CREATE EXTENSION idgen;
	$schema
	CREATE SCHEMA app;
	CREATE FUNCTION app.orders_node(bigint) RETURNS int
		LANGUAGE sql IMMUTABLE AS \$\$ SELECT (public.idgen_decode(\$1, 'orders')).node_id \$\$;
	CREATE FUNCTION app.orders_ts(id bigint) RETURNS timestamptz
		LANGUAGE plpgsql STABLE AS \$\$ BEGIN RETURN (public.idgen_decode(id, 'orders')).ts; END \$\$;
	-- through a SQL function, on a table and on a domain
	CREATE TABLE app.audit (id bigint PRIMARY KEY DEFAULT public.idgen_next('orders')
		CHECK (app.orders_node(id) = 2), n int);
	CREATE DOMAIN app.order_id AS bigint CHECK (app.orders_node(VALUE) = 2);
	CREATE TABLE app.lines (id app.order_id PRIMARY KEY DEFAULT public.idgen_next('orders'), n int);
	-- through PL/pgSQL, with an index on the layout's field
	CREATE TABLE app.events (id bigint CHECK (app.orders_ts(id) > '2021-01-01+00'), n int);
	CREATE INDEX events_node ON app.events (app.orders_node(id));
	-- a generated column, a partition key
	CREATE TABLE app.shipments (id bigint,
		node int GENERATED ALWAYS AS (app.orders_node(id)) STORED);
	CREATE TABLE app.by_node (id bigint, n int) PARTITION BY LIST (app.orders_node(id));
	CREATE TABLE app.by_node_2 PARTITION OF app.by_node FOR VALUES IN (2);
	-- NOT VALID, as 1.3 and 1.4 asked
	CREATE TABLE app.legacy (id bigint, n int);
	ALTER TABLE app.legacy ADD CONSTRAINT legacy_id_check
		CHECK ((public.idgen_decode(id, 'orders')).node_id = 2) NOT VALID;
));
($ret, $out, $err) = $node->psql('app', q(
	CREATE TABLE app.direct (id bigint CHECK ((public.idgen_decode(id, 'orders')).ts > '2021-01-01+00'))));
is($ret, 0, 'a valid constraint calling idgen_decode() directly is accepted') or diag($err);
($ret, $out, $err) = $node->psql('app', 'CREATE TABLE app.legacy_copy (LIKE app.legacy INCLUDING ALL)');
is($ret, 0, 'LIKE ... INCLUDING ALL of a table with the NOT VALID constraint is accepted') or diag($err);
($ret, $out, $err) = $node->psql('app', 'CREATE TABLE app.legacy_child (extra int) INHERITS (app.legacy)');
is($ret, 0, 'INHERITS of it is accepted') or diag($err);

my $fill = q(
	INSERT INTO app.audit (n) SELECT generate_series(1, 1000);
	INSERT INTO app.lines (n) SELECT generate_series(1, 500);
	INSERT INTO app.events SELECT public.idgen_next('orders'), g FROM generate_series(1, 100) g;
	INSERT INTO app.shipments SELECT public.idgen_next('orders') FROM generate_series(1, 100);
	INSERT INTO app.by_node SELECT public.idgen_next('orders'), g FROM generate_series(1, 100) g;
	INSERT INTO app.legacy SELECT public.idgen_next('orders'), g FROM generate_series(1, 100) g;
);
# The tables 1.4 refused are filled where they exist: on the old code the
# test runs to its end, and fails where it should.
$fill .= q(INSERT INTO app.direct SELECT public.idgen_next('orders') FROM generate_series(1, 100);)
  if $node->safe_psql('app', q(SELECT to_regclass('app.direct') IS NOT NULL)) eq 't';
$fill .= q(INSERT INTO app.legacy_copy SELECT public.idgen_next('orders'), g FROM generate_series(1, 100) g;)
  if $node->safe_psql('app', q(SELECT to_regclass('app.legacy_copy') IS NOT NULL)) eq 't';
$fill .= q(INSERT INTO app.legacy_child SELECT public.idgen_next('orders'), g, g FROM generate_series(1, 100) g;)
  if $node->safe_psql('app', q(SELECT to_regclass('app.legacy_child') IS NOT NULL)) eq 't';
$node->safe_psql('app', $fill);

# The rows of each table ("none" where the table is missing).
my @tables = ('app.audit', 'app.lines', 'app.events', 'app.shipments WHERE node = 2',
	'app.by_node', 'ONLY app.legacy', 'app.direct', 'app.legacy_copy', 'app.legacy_child');

sub counts
{
	my ($db) = @_;
	my @n;
	for my $t (@tables)
	{
		my ($rel) = $t =~ /(app\.\w+)/;
		push @n, $node->safe_psql($db, "SELECT to_regclass('$rel') IS NOT NULL") eq 't'
		  ? $node->safe_psql($db, "SELECT count(*) FROM $t") : 'none';
	}
	return join('|', @n);
}
my $expected = '1000|500|100|100|100|100|100|100|100';
is(counts('app'), $expected, 'the source database holds every row');
my $layouts = 'SELECT * FROM idgen_layout ORDER BY name';
my $foreign = (2 << 22) | (3 << 17);	# after the epoch, node id 3

sub restored_ok
{
	my ($db, $how) = @_;
	is(counts($db), $expected, "$how: every row is restored");
	($ret, $out, $err) = $node->psql($db, $layouts);
	is($out, $node->safe_psql('app', $layouts), "$how: the layouts are restored");
	is($node->safe_psql($db, q(
		SELECT coalesce(string_agg(conname, ',' ORDER BY conname), '') FROM pg_constraint
		WHERE conname IN ('audit_id_check', 'direct_id_check', 'events_id_check', 'order_id_check')
		  AND convalidated AND connamespace::regnamespace::text = 'app')),
		'audit_id_check,direct_id_check,events_id_check,order_id_check',
		"$how: the valid constraints are restored valid");
	($ret, $out, $err) = $node->psql($db, "INSERT INTO app.lines VALUES ($foreign, 0)");
	like($err, qr/violates check constraint "order_id_check"/,
		"$how: the restored domain constraint checks new rows");
	($ret, $out, $err) = $node->psql($db, "INSERT INTO app.audit VALUES ($foreign, 0)");
	like($err, qr/violates check constraint "audit_id_check"/,
		"$how: the restored table constraint checks new rows");
	return;
}

$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=app' ], 'pg_dump');
($ret, $err) = restore('serial', '--exit-on-error');
is($ret, 0, 'pg_restore succeeds') or diag($err);
restored_ok('serial', 'pg_restore');

($ret, $err) = restore('parallel', '--exit-on-error', '--jobs=2');
is($ret, 0, 'pg_restore --jobs=2 succeeds') or diag($err);
restored_ok('parallel', 'pg_restore --jobs=2');

($ret, $err) = restore('single', '--exit-on-error', '--single-transaction');
is($ret, 0, 'pg_restore --single-transaction succeeds') or diag($err);
restored_ok('single', 'pg_restore --single-transaction');

# The schema alone brings the layouts, so the data loads after it.
($ret, $err) = restore('sections', '--exit-on-error', '--section=pre-data');
is($node->safe_psql('sections', 'SELECT name FROM idgen_layout'), 'orders',
	'the pre-data section defines the layouts');
for my $section ('data', 'post-data')
{
	IPC::Run::run([ 'pg_restore', '--host=' . $node->host, '--port=' . $node->port,
		'--dbname=sections', '--exit-on-error', "--section=$section", $dump ],
		'>', \$out, '2>', \$err);
	is($? >> 8, 0, "pg_restore --section=$section succeeds") or diag($err);
}
restored_ok('sections', 'pg_restore a section at a time');

my $plain = $node->basedir . '/app.sql';
$node->command_ok([ 'pg_dump', "--file=$plain", '--dbname=app' ], 'plain pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE plain');
$node->command_ok([ 'psql', '--no-psqlrc', '--set=ON_ERROR_STOP=1', '--quiet',
	'--dbname=' . $node->connstr('plain'), "--file=$plain" ], 'psql restores the plain dump');
restored_ok('plain', 'pg_dump | psql');

# A layout whose time field has run out, and one whose epoch the restoring
# server's clock has not reached, are definitions made before, whose IDs the
# tables hold: a restore takes them as they are.  (Before, it refused them,
# and with them every other layout: the rows a CHECK reads a layout through
# were lost, as chaos found.)  Defining them now is refused, and so is
# generating in them.
$node->safe_psql('postgres', 'CREATE DATABASE aged');
$node->safe_psql('aged', qq(
	CREATE EXTENSION idgen;
	$schema
	SELECT idgen_define_layout('brief', date_trunc('milliseconds', clock_timestamp())
		- interval '8192 ms' + interval '2 s', '{time,node,sequence}', '{13,5,12}');
	SELECT idgen_define_layout('fresh', date_trunc('milliseconds', clock_timestamp())
		- interval '10 s', '{time,node,sequence}', '{41,5,12}');
	CREATE TABLE audit (id bigint PRIMARY KEY DEFAULT idgen_next('orders')
		CHECK ((idgen_decode(id, 'orders')).node_id = 2), brief bigint);
	INSERT INTO audit (brief) SELECT idgen_next('brief') FROM generate_series(1, 100);
	SELECT pg_sleep(2.5);
));
($ret, $out, $err) = $node->psql('aged', q(SELECT idgen_next('brief')));
like($err, qr/time field of idgen layout "brief" is exhausted/, 'the brief layout has ended');
$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=aged' ], 'aged: pg_dump');
# the restoring server's clock a minute behind: "fresh" starts after it
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -60000');
$node->reload;
($ret, $err) = restore('aged_restored', '--exit-on-error');
is($ret, 0, 'aged: pg_restore succeeds') or diag($err);
is($node->safe_psql('aged_restored', q(
	SELECT count(*) || '|' || (SELECT string_agg(name, ',' ORDER BY name) FROM idgen_layout) FROM audit)),
	'100|brief,fresh,orders', 'aged: every row and every layout are restored');
($ret, $out, $err) = $node->psql('aged_restored', q(SELECT idgen_next('fresh')));
like($err, qr/system clock is before the epoch of idgen layout "fresh"/,
	'aged: generating before the restored epoch is refused');
($ret, $out, $err) = $node->psql('aged_restored', q(
	SELECT idgen_define_layout('fresh2', date_trunc('milliseconds', clock_timestamp()) - interval '10 s',
		'{time,node,sequence}', '{41,5,12}')));
like($err, qr/The epoch is in the future/, 'aged: defining such a layout now is refused');
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 0');
$node->reload;

# The function goes with the extension.
$node->safe_psql('postgres', 'CREATE DATABASE dropped');
$node->safe_psql('dropped', qq(CREATE EXTENSION idgen; $schema DROP EXTENSION idgen;));
is($node->safe_psql('dropped', q(SELECT count(*) FROM pg_proc WHERE proname = 'idgen_layouts_saved')),
	'0', 'DROP EXTENSION drops idgen_layouts_saved()');

$node->stop;
done_testing();
