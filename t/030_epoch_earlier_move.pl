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

$new->stop;
done_testing();
