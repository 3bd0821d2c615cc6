# Real ORMs from Debian's packages insert rows whose key is the column's
# DEFAULT idgen_next() and read the key back from the INSERT itself
# (RETURNING): SQLAlchemy 1.4, Django 3.2 and ActiveRecord 6.1, each
# through a small program in test/orm/.  The key each ORM holds is the one
# stored, decodes to this node and now, and the server's statement log shows
# no second query for it.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $dir = dirname($FindBin::RealBin) . "/test/orm";

# Debian's interpreters, where Debian's packages of the ORMs are installed
# (a python3 earlier on PATH, such as pyenv's, would not have them).
my %orm = (
	sqlalchemy => {
		run => [ '/usr/bin/python3', "$dir/sqlalchemy_orm.py" ],
		check => [ '/usr/bin/python3', '-c',
			'import sqlalchemy, psycopg2; print(sqlalchemy.__version__)' ],
		version => qr/^1\.4\./,
		packages => 'python3-sqlalchemy python3-psycopg2',
	},
	django => {
		run => [ '/usr/bin/python3', "$dir/django_orm.py" ],
		check => [ '/usr/bin/python3', '-c',
			'import django, psycopg2; print(django.get_version())' ],
		version => qr/^3\.2\./,
		packages => 'python3-django python3-psycopg2',
	},
	activerecord => {
		run => [ '/usr/bin/ruby', "$dir/activerecord_orm.rb" ],
		check => [ '/usr/bin/ruby', '-e',
			'require "active_record"; require "pg"; puts ActiveRecord::VERSION::STRING' ],
		version => qr/^6\.1\./,
		packages => 'ruby-activerecord ruby-pg',
	},
);

# scripts/test installs them; elsewhere a missing one skips this file alone.
for my $name (sort keys %orm)
{
	my ($out, $err) = ('', '');
	my $ok = eval { IPC::Run::run($orm{$name}{check}, '>', \$out, '2>', \$err) };
	plan skip_all => "$name is not installed (Debian packages $orm{$name}{packages})"
	  unless $ok;
	chomp $out;
	plan skip_all => "$name $out is not the version this test is for"
	  unless $out =~ $orm{$name}{version};
	$orm{$name}{found} = $out;
}

my $node = idgen_node('orm', "idgen.node_id = 7\n");
# Django and ActiveRecord create their tables; SQLAlchemy maps this one.
$node->safe_psql('postgres',
	'CREATE TABLE orm_sqlalchemy (id bigint PRIMARY KEY DEFAULT idgen_next(), name text NOT NULL)');
my $user = $node->safe_psql('postgres', 'SELECT current_user');

for my $name (sort keys %orm)
{
	my $table = "orm_$name";
	my $log_start = -s $node->logfile;
	my ($out, $err) = ('', '');
	my $ran = IPC::Run::run([ @{ $orm{$name}{run} }, $node->host, $node->port, $user, 'postgres' ],
		'>', \$out, '2>', \$err);
	ok($ran, "$name $orm{$name}{found} ran") or diag($err);

	# What the ORM holds after saving: 5 rows saved one by one, 20 at once.
	my %held = map { split / / } split /\n/, $out;
	is(scalar(keys %held), 25, "$name read back 25 keys");
	my %stored = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres', "SELECT name, id FROM $table");
	is_deeply(\%held, \%stored, "$name: every key it holds is the one stored");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM $table, idgen_decode(id) d
		WHERE d.node_id = 7 AND d.ts BETWEEN now() - interval '1 minute'
		                                 AND clock_timestamp() + interval '1 second'}),
		'25', "$name: the keys are idgen IDs of node 7 and of now");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM information_schema.columns WHERE table_name = '$table'"
		  . " AND column_name = 'id' AND column_default = 'idgen_next()'"),
		'1', "$name: the key's default is idgen_next()");

	# The statements it sent, from the server's log (log_statement = all).
	my $log = slurp_file($node->logfile, $log_start);
	# Entries start with log_line_prefix's timestamp; a statement may span lines.
	my @sql = map { /\] orm_$name LOG:\s+(?:statement|execute [^:]*):\s*(.*)/s ? $1 : () }
	  split /^(?=\d{4}-\d\d-\d\d \d)/m, $log;
	my @inserts = grep { /^INSERT INTO "?$table"?/i } @sql;
	is(scalar(@inserts), 6, "$name: 6 INSERTs (5 single, 1 for 20 rows)")
	  or diag(join("\n", @sql));
	is(scalar(grep { !/\bRETURNING\b.*\bid\b/i } @inserts), 0,
		"$name: every INSERT returns the key");
	my ($first) = grep { $sql[$_] =~ /^INSERT/i } 0 .. $#sql;
	my @after = @sql[ $first // 0 .. $#sql ];
	is(join("\n", grep { /\bFROM\s+"?$table"?|lastval|currval|idgen_next/i } @after),
		'', "$name: no second query for the key");
}

$node->stop;
done_testing();
