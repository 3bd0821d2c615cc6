# sql/idgen.sql installs the current version; an installation of 1.0 reaches
# it through the update scripts.  Both must give the same objects: the same
# definitions, volatility, strictness and parallel markings, defaults,
# comments, privileges (granted and initial) and pg_extension row.  pg_dump
# --binary-upgrade --schema-only writes every member of the extension (a
# plain dump writes only CREATE EXTENSION); the lines that set OIDs differ
# between any two databases and are left out.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('upgrade_path', "idgen.node_id = 5\n");
my $version = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'idgen'");

# pg_dump 18 and later would add the statistics of idgen_layout.
my ($help, $ignore);
IPC::Run::run [ 'pg_dump', '--help' ], '>' => \$help, '2>' => \$ignore;
my @no_stats = $help =~ /--no-statistics/ ? ('--no-statistics') : ();

# The schema of a database's extension as pg_dump writes it, OIDs left out.
sub schema_of
{
	my ($db) = @_;
	my ($stdout, $stderr);
	IPC::Run::run [
		'pg_dump', '--binary-upgrade', '--schema-only', '--no-owner', @no_stats,
		'--dbname' => $node->connstr($db)
	  ],
	  '>' => \$stdout, '2>' => \$stderr
	  or die "pg_dump $db: $stderr";
	my @lines = grep {
		!/binary_upgrade_set_next_|binary_upgrade_set_missing_value|^-- (Name|Dependencies|TOC entry|Dumped)/
	} split /\n/, $stdout;
	# The configuration tables' OIDs in pg_extension.extconfig, the TOAST
	# table's OID, transaction ids, and pg_dump's random key.
	s/('\{)\d+(?:,\d+)*(\}')/$1OIDS$2/g for @lines;
	s/^(WHERE oid = ')\d+(';)$/$1OID$2/ for @lines;
	s/^(SET relfrozenxid = ')\d+(')/$1XID$2/ for @lines;
	s/^(\\(?:un)?restrict) \S+$/$1 KEY/ for @lines;
	return join("\n", @lines) . "\n";
}

# Fails with a diff of the two schemas.
sub same_schema
{
	my ($db_a, $db_b, $name) = @_;
	my ($a, $b) = (schema_of($db_a), schema_of($db_b));
	my $dir = PostgreSQL::Test::Utils::tempdir();
	PostgreSQL::Test::Utils::append_to_file("$dir/$db_a.sql", $a);
	PostgreSQL::Test::Utils::append_to_file("$dir/$db_b.sql", $b);
	my $diff = '';
	IPC::Run::run [ 'diff', '-u', "$dir/$db_a.sql", "$dir/$db_b.sql" ], '>' => \$diff;
	ok($diff eq '', $name) or diag($diff);
	return $a;
}

sub create_db
{
	my ($db, @sql) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, join(";\n", @sql));
	return;
}

create_db('fresh', 'CREATE EXTENSION idgen');

# 1.0, then straight to the current version.
create_db('updated', "CREATE EXTENSION idgen VERSION '1.0'", 'ALTER EXTENSION idgen UPDATE');

# 1.0, then one version at a time, each in its own transaction.
create_db('stepped', "CREATE EXTENSION idgen VERSION '1.0'");
my $path = $node->safe_psql('postgres',
	"SELECT path FROM pg_extension_update_paths('idgen') WHERE source = '1.0' AND target = '$version'");
my @steps = split /--/, $path;
shift @steps;
cmp_ok(scalar @steps, '>=', 4, "1.0 reaches $version in steps: $path");
$node->safe_psql('stepped', "ALTER EXTENSION idgen UPDATE TO '$_'") for @steps;

for my $db (qw(fresh updated stepped))
{
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
		$version, "$db: idgen $version");
}
my $schema = same_schema('fresh', 'updated', "1.0 updated to $version is the same as $version installed");
same_schema('fresh', 'stepped', "1.0 updated a step at a time is the same as $version installed");
like($schema, qr/CREATE FUNCTION public\.idgen_next\(\)/, 'the dump holds the members');
like($schema, qr/COMMENT ON FUNCTION public\.idgen_next\(\)/, 'and their comments');
like($schema, qr/binary_upgrade_set_record_init_privs\(true\);\n.*REVOKE ALL ON FUNCTION public\.idgen_stats_reset\(\) FROM PUBLIC;/s,
	'and their initial privileges');

# Every function, view, table and type of the extension has a comment; the
# row and array types that come with a table, view or type (members of their
# own from PostgreSQL 17 on) go by their owner's.
is( $node->safe_psql(
		'fresh', q{
		SELECT string_agg(pg_describe_object(d.classid, d.objid, 0), ', ' ORDER BY 1)
		FROM pg_depend d
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
		WHERE d.deptype = 'e'
		  AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_type'::regclass)
		  AND obj_description(d.objid, d.classid::regclass::name) IS NULL
		  AND NOT EXISTS (SELECT FROM pg_type t
		                  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
		                    AND (t.typrelid <> 0 OR t.typcategory = 'A'))}),
	'',
	'every function, view, table and type has a comment');

# An installation in another schema, from 1.0: the update names the
# extension's objects in that schema, and what runs SQL works there.
create_db('other_fresh', 'CREATE SCHEMA ext', 'CREATE EXTENSION idgen SCHEMA ext');
create_db('other', 'CREATE SCHEMA ext', "CREATE EXTENSION idgen SCHEMA ext VERSION '1.0'",
	'ALTER EXTENSION idgen UPDATE');
same_schema('other_fresh', 'other', "in schema ext: 1.0 updated is the same as $version installed");
unlike(schema_of('other'), qr/public\.idgen/, 'nothing in schema ext names public');

# The application's search_path does not hold ext.
my $out = $node->safe_psql(
	'other', q{
	CREATE TABLE orders (id serial PRIMARY KEY, v text);
	INSERT INTO orders (v) VALUES ('old');
	SELECT count(*) FROM ext.idgen_adopt('orders', 'id', widen => true);
	SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'orders'::regclass;
	INSERT INTO orders (v) VALUES ('new') RETURNING id > 1;
	SELECT ext.idgen_span('1 day') = 86400000::bigint << 22;
	SELECT ext.idgen_define_layout('slow', '2020-01-01', '{time,node,sequence}', '{41,5,8}');
	SELECT ext.idgen_next('slow') > 0;
	SELECT ext.idgen_drop_layout('slow');
	SELECT count(*) FROM ext.idgen_layout;
});
is( $out, join("\n", 5, 'ext.idgen_next()', 't', 't', '', 't', '', '0'),
	'in schema ext: idgen_adopt, idgen_span and the layout triggers work after the update');
my ($ret, $stdout, $stderr) = $node->psql('other', 'SELECT ext.idgen_sync_layouts()');
like($stderr, qr/idgen_sync_layouts\(\) needs the extension "citus"/,
	'idgen_sync_layouts() still says what it needs');
($ret, $stdout, $stderr) = $node->psql('other', 'CREATE SCHEMA ext2; ALTER EXTENSION idgen SET SCHEMA ext2');
like($stderr, qr/does not support SET SCHEMA/, 'the extension is no longer relocatable');
is($node->safe_psql('other', "SELECT extrelocatable FROM pg_extension WHERE extname = 'idgen'"),
	'f', 'pg_extension says so after the update');

$node->stop;
done_testing();
