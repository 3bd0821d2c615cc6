# The version lives in idgen.control's default_version; every other place
# that states it (META.json for PGXN, debian/changelog, CHANGELOG.md, the
# module itself on PostgreSQL 18) must agree, and the install scripts must
# reach it.  Likewise the oldest PostgreSQL: compat.h's #error, META.json's
# prerequisite, debian/pgversions.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use Test::More;

my $root = dirname($FindBin::RealBin);

sub slurp
{
	my ($file) = @_;
	open my $fh, '<', "$root/$file" or die "$file: $!";
	local $/;
	return <$fh>;
}

my ($version) = slurp('idgen.control') =~ /^default_version = '([^']+)'$/m;
ok(defined $version, "idgen.control has a default_version") or die 'no version';
# PGXN wants semantic versions: 1.2 is 1.2.0 there.
my $semver = join '.', (split(/\./, $version), 0, 0)[ 0 .. 2 ];

# META.json: PGXN's meta-spec 1.0.0, the version, and what it provides.
my $meta = decode_json(slurp('META.json'));
is($meta->{'meta-spec'}{version}, '1.0.0', 'META.json: meta-spec 1.0.0');
for my $key (qw(name abstract maintainer license provides version))
{
	ok(defined $meta->{$key}, "META.json has $key");
}
is($meta->{name}, 'idgen', 'META.json: name');
is($meta->{version}, $semver, "META.json: version is $semver");
is($meta->{provides}{idgen}{version}, $semver, "META.json: provides idgen $semver");
ok(-f "$root/$meta->{provides}{idgen}{file}", 'META.json: provides.idgen.file exists');
ok(-f "$root/$meta->{provides}{idgen}{docfile}", 'META.json: provides.idgen.docfile exists');
like($meta->{version}, qr/^\d+\.\d+\.\d+$/, 'META.json: version is semantic');

# Debian: the upstream part of the newest changelog entry.
my ($deb) = slurp('debian/changelog') =~ /^idgen \(([^)]+)\)/;
is($deb =~ s/^\d+://r =~ s/-[^-]+$//r, $version, "debian/changelog: $version");

# CHANGELOG.md has an entry for it.
like(slurp('CHANGELOG.md'), qr/^## \Q$version\E\b/m, "CHANGELOG.md: an entry for $version");

# The scripts in the Makefile's DATA and DATA_built reach the version from a
# full install script: idgen--A.sql, then idgen--A--B.sql and so on.  The
# current version's is built from sql/idgen.sql.
my ($data) = slurp('Makefile') =~ /^DATA\s*=\s*(.*?)(?<!\\)$/ms;
my ($built) = slurp('Makefile') =~ /^DATA_built\s*=\s*(.*?)(?<!\\)$/ms;
my @scripts = split /[\s\\]+/, $data;
my @built = map { s/\$\(IDGEN_VERSION\)/$version/r } split /[\s\\]+/, $built // '';
is_deeply(\@built, ["sql/idgen--$version.sql"], "DATA_built: the install script of $version");
like(slurp('Makefile'), qr{^sql/idgen--\$\(IDGEN_VERSION\)\.sql: sql/idgen\.sql$}m,
	'the Makefile makes it from sql/idgen.sql');
ok(!grep(m{/idgen--\Q$version\E\.sql$}, @scripts), "no released script installs $version");
my %reached = map { m{(?:^|/)idgen--([^-/]+)\.sql$} ? ($1 => 1) : () } @scripts;
my %installs = %reached;
my @updates = map { m{(?:^|/)idgen--([^-/]+)--([^-/]+)\.sql$} ? [ $1, $2 ] : () } @scripts;
for my $pass (1 .. @updates)
{
	$reached{ $_->[1] } = 1 for grep { $reached{ $_->[0] } } @updates;
}
ok($reached{$version}, "the scripts in DATA reach $version") or diag("DATA: @scripts");
ok($installs{'1.0'}, 'DATA installs 1.0, which every update starts from');
ok(-f "$root/$_", "$_ exists") for @scripts;

# The oldest PostgreSQL, stated three times.
my ($min) = slurp('src/base/compat.h') =~ /PG_VERSION_NUM < (\d+)0000\b/;
ok(defined $min, 'compat.h refuses versions below a minimum');
is($meta->{prereqs}{runtime}{requires}{PostgreSQL}, "$min.0.0",
	"META.json: requires PostgreSQL $min.0.0");
like(slurp('debian/pgversions'), qr/^\Q$min\E\+$/m, "debian/pgversions: $min+");

# The server: CREATE EXTENSION installs the version, and from 18 on the
# loaded module reports it too (PG_MODULE_MAGIC_EXT).
my $node = idgen_node('versions');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	$version, "CREATE EXTENSION idgen installs $version");
SKIP:
{
	skip 'modules report their version from PostgreSQL 18 on', 1
	  if $node->safe_psql('postgres', 'SHOW server_version_num') < 180000;
	is( $node->safe_psql(
			'postgres',
			"SELECT module_name || ' ' || version FROM pg_get_loaded_modules() "
			  . "WHERE file_name = 'idgen.so'"),
		"idgen $version",
		"the loaded module says idgen $version");
}
$node->stop;

done_testing();
