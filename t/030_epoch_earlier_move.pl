# A database whose server moved idgen.epoch earlier after the extension was
# created, then moved by a dump into a new cluster with the first epoch.
# Its IDs under the earlier epoch are larger than the epoch idgen_system's
# first row says; the first generation under the earlier epoch records the
# cluster again with it, so that idgen_resume_after() in the new cluster
# resumes above them (refused until the clock passes them), not two days
# short.  The control: the IDs made under the first epoch only, moved the
# same way, resume at once.  (Chaos found it: the move drill under any
# epoch, seed 614715490.)
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "idgen.node_id = 1\nidgen.epoch = '2024-01-01'\n";

# Makes IDs in a new server (with the epoch $earlier after the extension was
# created, if given), moves its database into a new cluster with the first
# epoch, resumes after the newest ID, and returns (the new server, the
# newest old ID).
sub moved
{
	my ($name, $earlier) = @_;
	my $old = idgen_node("${name}_old", $conf);
	set_auto_conf($old, "idgen.epoch = '$earlier'") if $earlier;
	$old->safe_psql('postgres', q(
		CREATE TABLE ids (id bigint PRIMARY KEY);
		INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 10000);));
	my $dump = $old->basedir . '/old.dump';
	$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('postgres') ], "$name: pg_dump");
	my $max_old = $old->safe_psql('postgres', 'SELECT max(id) FROM ids');
	$old->stop;

	my $new = PostgreSQL::Test::Cluster->new("${name}_new");
	$new->init;
	$new->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n$conf");
	$new->start;
	$new->safe_psql('postgres', 'CREATE DATABASE app');
	$new->command_ok([ 'pg_restore', '-d', $new->connstr('app'), $dump ], "$name: pg_restore");
	$new->safe_psql('app', 'SELECT idgen_resume_after(clock_timestamp())');
	$new->restart;
	return ($new, $max_old);
}

my ($control, $control_max) = moved('control');
is($control->safe_psql('app', "SELECT count(*) FROM (SELECT idgen_next() AS id FROM generate_series(1, 10000)) n WHERE id <= $control_max"),
	'0', 'control: IDs made under the first epoch only, moved, resume at once above them');
$control->stop;

my ($new, $max_old) = moved('earlier', '2023-12-30');
my ($ret, $out, $err) = $new->psql('app', 'SELECT idgen_next()');
if ($ret == 0)
{
	cmp_ok($out, '>', $max_old, 'IDs made under an epoch two days earlier: the moved server resumes above them');
}
else
{
	like($err, qr/ERROR/, 'IDs made under an epoch two days earlier: the moved server refuses until its clock passes them');
}
is($new->safe_psql('app', q(SELECT count(*) FROM idgen_system WHERE epoch = '2023-12-30+00')), '1',
	'the old cluster recorded itself again under the earlier epoch');

# The chain: the old IDs (epoch 2024-01-01) moved into a cluster with the
# epoch 60 days later, which resumes above them; a database of that cluster
# that never held them, in which it then generated (in pgedge: its own
# layout refuses for 60 days), moved on into a third cluster with that epoch.
# The second cluster's row there says the old IDs' epoch, so the third resumes
# above them too.
my $mid_conf = "idgen.node_id = 1\nidgen.epoch = '2024-03-01'\n";
my $old = idgen_node('chain_old', $conf);
$old->safe_psql('postgres', 'CREATE TABLE ids AS SELECT idgen_next() AS id FROM generate_series(1, 10000)');
my $chain_max = $old->safe_psql('postgres', 'SELECT max(id) FROM ids');
my $old_dump = $old->basedir . '/old.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $old_dump, '-d', $old->connstr('postgres') ], 'chain: pg_dump');
$old->stop;
my $mid = idgen_node('chain_mid', $mid_conf);
$mid->safe_psql('postgres', 'CREATE DATABASE app; CREATE DATABASE fresh');
$mid->safe_psql('fresh', 'CREATE EXTENSION idgen');
$mid->command_ok([ 'pg_restore', '-d', $mid->connstr('app'), $old_dump ], 'chain: pg_restore');
$mid->safe_psql('app', 'SELECT idgen_resume_after(clock_timestamp())');
$mid->restart;
$mid->safe_psql('fresh', q(CREATE TABLE made AS SELECT idgen_next('pgedge') AS id));
my $fresh_dump = $mid->basedir . '/fresh.dump';
$mid->command_ok([ 'pg_dump', '-Fc', '-f', $fresh_dump, '-d', $mid->connstr('fresh') ], 'chain: pg_dump of the database that never held the old IDs');
$mid->stop;
my $third = idgen_node('chain_third', $mid_conf);
$third->safe_psql('postgres', 'CREATE DATABASE fresh');
$third->command_ok([ 'pg_restore', '-d', $third->connstr('fresh'), $fresh_dump ], 'chain: pg_restore');
$third->safe_psql('fresh', 'SELECT idgen_resume_after(clock_timestamp())');
$third->restart;
($ret, $out, $err) = $third->psql('fresh', 'SELECT idgen_next()');
ok($ret != 0 || $out > $chain_max,
	'the third cluster refuses, or resumes above the old IDs, 60 days of epoch apart');

$new->stop;
$third->stop;
done_testing();
