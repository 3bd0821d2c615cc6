# A restore by the database's owner into a database that a superuser
# created with the extension, as hosting services do.  In 1.5 the owner
# could not insert into idgen_system or idgen_layout: pg_restore reported
# "permission denied" and went on, so the restored database held IDs that
# nothing said came from another cluster (15,176-40,621 of 200,000 repeated
# in a review), and a table whose CHECK reads an SQL layout through a
# wrapper function lost every row (0 of 1,000).  The extension now grants
# the database's owner INSERT on both: the evidence and the layouts load,
# every row is restored, and generation refuses until told where to resume;
# also where the database was made from a template with the extension.
# A registry's leases and its own row load likewise (before, the owner's
# restore of a registry brought neither, and it would not have fenced).
# The control: the same restore with those grants revoked, as in 1.5.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 120000\n";

my $old = idgen_node('old', $conf);
$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', q(
	CREATE EXTENSION idgen;
	SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
	CREATE FUNCTION order_ts(bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE
		SET search_path = public AS $$ SELECT (idgen_decode($1, 'orders')).ts $$;
	CREATE TABLE orders (id bigint PRIMARY KEY CHECK (order_ts(id) > '2021-01-01+00'));
	INSERT INTO orders SELECT idgen_next('orders') FROM generate_series(1, 1000);
	CREATE TABLE ids (id bigint PRIMARY KEY);
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
	-- app is a node id registry too: a lease, and the registry's own row
	SELECT idgen_lease_acquire(1, 'one', 1, '00000000-0000-0000-0000-000000000000', 30, 1704067200000);
));
my $first_ms = $old->safe_psql('app',
	q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
my $dump = $old->basedir . '/app.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('app') ], 'pg_dump');
$old->stop;

# A new cluster where a superuser made database app for role owner, with
# the extension; $prepare runs there as the superuser; then owner restores.
sub owner_restore
{
	my ($name, $prepare, $role) = @_;
	my $node = idgen_node($name, $conf);
	$node->safe_psql('postgres', 'CREATE ROLE owner LOGIN; CREATE DATABASE app OWNER owner');
	$node->safe_psql('app', 'CREATE EXTENSION idgen');
	$node->safe_psql('app', $prepare) if $prepare;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_restore', '--no-owner', '--no-acl', '--host=' . $node->host,
		'--port=' . $node->port, '--username=' . ($role // 'owner'), '--dbname=app', $dump ],
		'>', \$stdout, '2>', \$stderr);
	return ($node, $stderr);
}

# 200,000 IDs at the old IDs' time: how many the old cluster issued;
# psql's errors.
sub repeats
{
	my ($node) = @_;
	my (undef, $repeated, $err) = repeats_at($node, 'app', $first_ms);
	return ($repeated, $err);
}

my ($node, $stderr) = owner_restore('owned');
unlike($stderr, qr/permission denied for table idgen_(system|layout)/,
	'the owner\'s pg_restore loads idgen_system and idgen_layout');
unlike($stderr, qr/permission denied/, 'and nothing else of idgen\'s is denied to the owner');
is($node->safe_psql('app', 'SELECT (SELECT count(*) FROM idgen_lease) || \' \' || (SELECT count(*) FROM idgen_lease_registry)'),
	'1 1', 'a registry\'s lease and its own row load too, so that the restored registry fences itself');
is($node->safe_psql('app', 'SELECT count(*) FROM orders'), '1000',
	'every row of the table whose CHECK reads the layout through a wrapper is restored');
my ($repeated, $err) = repeats($node);
like($err, qr/database "app" holds idgen IDs of another cluster/,
	'generation refuses, naming the database and the cluster');
$node->stop;

# The same, the database made by its owner from a template with the
# extension, as a hosting service's template1 may have it.
my $templated = idgen_node('templated', $conf);
$templated->safe_psql('template1', 'CREATE EXTENSION idgen');
$templated->safe_psql('postgres', 'CREATE ROLE owner LOGIN CREATEDB');
$templated->command_ok([ 'createdb', '-h', $templated->host, '-p', $templated->port, '-U', 'owner', 'app' ],
	'the owner creates app from template1');
my ($stdout, $templated_err);
IPC::Run::run([ 'pg_restore', '--no-owner', '--no-acl', '--host=' . $templated->host,
	'--port=' . $templated->port, '--username=owner', '--dbname=app', $dump ],
	'>', \$stdout, '2>', \$templated_err);
unlike($templated_err, qr/permission denied for table idgen_(system|layout)/,
	'from a template too, the owner\'s pg_restore loads idgen_system and idgen_layout');
is($templated->safe_psql('app', 'SELECT count(*) FROM orders'), '1000',
	'from a template too, every row of the wrapper CHECK\'s table is restored');
$templated->stop;

my ($control, $control_err) = owner_restore('control',
	'REVOKE INSERT ON idgen_system, idgen_layout, idgen_lease, idgen_lease_registry FROM pg_database_owner');
like($control_err, qr/permission denied for table idgen_system/,
	'control, without the grants: pg_restore cannot load idgen_system');
like($control_err, qr/permission denied for table idgen_lease_registry/,
	'control: nor the registry\'s own row');
is($control->safe_psql('app', 'SELECT count(*) FROM orders'), '0',
	'control: no row of the table with the wrapper CHECK is restored');
($repeated, $err) = repeats($control);
cmp_ok($repeated, '>', 0, "control: nothing refuses, and $repeated of 200,000 IDs repeat");
$control->stop;

# Another role, allowed to create tables but not to write idgen's: the
# restore says why the layouts are not defined, and how to restore.
my ($other, $other_err) = owner_restore('other',
	'CREATE ROLE other LOGIN; GRANT CREATE ON SCHEMA public TO other', 'other');
like($other_err, qr/permission denied to define the idgen layouts that idgen_layouts_saved\(\) holds\n.*\nHINT:  Restore as a superuser or as the database's owner/,
	'a role that may not define layouts: the restore says why, and the way');
$other->stop;

done_testing();
