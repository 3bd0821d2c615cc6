# A new cluster that holds an old one's IDs: moved by pg_upgrade, or by a
# dump restored into it.  Neither carries idgen_hwm, so with the old node id
# and a clock behind the old IDs the new server used to repeat them (1.4:
# 174,469 of 200,000 in a review).  idgen_system, a configuration table that both
# carry, names the cluster the IDs came from; the new server's marks do not
# cover it, so generation refuses until the old idgen_hwm is copied in (the
# README's way, for pg_upgrade) or idgen_resume_after() says where to resume
# (for a dump).  The control: the same restore with idgen_system's old row
# deleted, as if nothing said where the IDs came from, repeats them.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The new servers' clocks are set back to the old IDs' time, minutes ago on
# a loaded machine: within what they ride out once they resume above them.
my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 300000\n";

my $old = idgen_node('old', $conf);
$old->safe_psql('postgres', q(
	CREATE TABLE ids (id bigint PRIMARY KEY);
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
));
my $first_ms = $old->safe_psql('postgres',
	q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
my $newest = $old->safe_psql('postgres', q(SELECT (idgen_decode(max(id))).ts FROM ids));
my $old_sys = $old->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my $dump = $old->basedir . '/old.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('postgres') ], 'pg_dump');

# 200,000 IDs from $node's database $db with its clock at the old IDs' first
# millisecond: returns how many of them the old cluster issued (IDs in ids).
sub again_at_old_time
{
	my ($node, $db) = @_;
	return repeats_at($node, $db, $first_ms);
}

sub refuses
{
	my ($node, $db, $what) = @_;
	my ($ret, $out, $err) = again_at_old_time($node, $db);
	like($err, qr/ERROR:  database "$db" holds idgen IDs of another cluster \(system identifier \d+\), whose high-water marks this server does not have/,
		"$what: generation refuses");
	return $err;
}

# 1. pg_upgrade into a new cluster (same major), as PostgreSQL's
# documentation says: the new cluster empty, both stopped.  Every database
# refuses from the first start: also one made after the upgrade, which holds
# no row of idgen_system naming the old cluster and would otherwise generate
# first (1.5 did, below the old IDs).  Its table ids gets the old IDs, to
# count repeats.
my $ids_file = $old->basedir . '/ids.copy';
$old->safe_psql('postgres', "COPY ids TO '$ids_file'");
my $new = PostgreSQL::Test::Cluster->new('upgraded');
$new->init;
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n$conf");
$old->stop;
pg_upgrade_into($old, $new, 'pg_upgrade into a new cluster');
like(slurp_file($new->data_dir . '/idgen_hwm'), qr/^# systems @-?\d+ \^$/m,
	'pg_upgrade left idgen_hwm saying its marks cover no cluster');
$new->start;
$new->safe_psql('postgres', 'CREATE DATABASE fresh TEMPLATE template0');
$new->safe_psql('fresh', qq(
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY);
	COPY ids FROM '$ids_file';
));
my ($ret, $repeated, $err) = again_at_old_time($new, 'fresh');
like($err, qr/ERROR:  idgen high-water marks were left behind by pg_upgrade/,
	'a database made after pg_upgrade refuses');
like($err, qr/HINT:  Stop this server, copy "idgen_hwm" from the old cluster's data directory into this one/,
	'the hint says to copy the old idgen_hwm');
($ret, $repeated, $err) = again_at_old_time($new, 'postgres');
like($err, qr/ERROR:  idgen high-water marks were left behind by pg_upgrade/,
	'so does the database pg_upgrade brought');

# The control: the upgrade's mark taken out of idgen_hwm, the database made
# after it generates below the old IDs; the one pg_upgrade brought still
# refuses on its rows of idgen_system, naming the old cluster.
$new->stop;
my $hwm = $new->data_dir . '/idgen_hwm';
my $text = slurp_file($hwm);
$text =~ s/ \^(?= |$)//m or die 'no mark of the upgrade';
open(my $fh, '>', $hwm) or die $!;
print $fh $text;
close $fh;
$new->start;
($ret, $repeated) = again_at_old_time($new, 'fresh');
cmp_ok($repeated, '>', 0, "control: without the mark, $repeated of 200,000 IDs of the database made after pg_upgrade repeat old ones");
$err = refuses($new, 'postgres', 'control: the database pg_upgrade brought');
like($err, qr/HINT:  Stop this server and copy "idgen_hwm" from the data directory of the cluster with system identifier $old_sys /,
	'the hint says to copy the old idgen_hwm, naming the old cluster');

# Following the hint.
$new->stop;
system('cp', $old->data_dir . '/idgen_hwm', $hwm) == 0 or die 'cp';
$new->start;
($ret, $repeated) = again_at_old_time($new, 'postgres');
is($repeated, '0', 'with the old idgen_hwm copied in, 200,000 IDs from the old time repeat none');
($ret, $repeated) = again_at_old_time($new, 'fresh');
is($repeated, '0', 'nor in the database made after pg_upgrade');
$new->stop;

# 2. A dump restored into a new cluster, which runs the extension's script
# (its own row) and then the dumped rows (the old cluster's).
sub restored
{
	my ($name) = @_;
	my $node = idgen_node($name, $conf);
	$node->safe_psql('postgres', 'CREATE DATABASE app');
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('app'), $dump ], "$name: pg_restore");
	return $node;
}
my $restored = restored('restored');
$err = refuses($restored, 'app', 'after a restored dump');
like($err, qr/HINT:  .*or, as a superuser, run SELECT idgen_resume_after\(t\) in database "app"/,
	'the hint names idgen_resume_after() and the database');
($ret, my $out, $err) = $restored->psql('postgres', 'SELECT idgen_next()');
like($err, qr/holds idgen IDs of another cluster/, 'every database of the server refuses');
($ret, $out, $err) = $restored->psql('app', "SELECT idgen_next('js53')");
like($err, qr/holds idgen IDs of another cluster/, 'in every layout');
$restored->safe_psql('app', "SELECT idgen_resume_after('$newest')");
($ret, $out, $err) = $restored->psql('app', 'SELECT idgen_next()');
like($err, qr/idgen generation resumes after a restart/, 'idgen_resume_after() takes effect at a restart');
$restored->restart;
($ret, $repeated) = again_at_old_time($restored, 'app');
is($repeated, '0', 'after idgen_resume_after(), 200,000 IDs from the old time repeat none');
like(slurp_file($restored->data_dir . '/idgen_hwm'), qr/^# systems @-?\d+ \d+ \d+$/m,
	'idgen_hwm says its marks cover both clusters');
$restored->restart;
($ret, $out, $err) = $restored->psql('app', 'SELECT idgen_next()');
is($err, '', 'and generation goes on after another restart');
$restored->stop;

# The control: the old row deleted and its note forgotten, nothing says
# where the IDs came from.
my $control = restored('control');
$control->safe_psql('app', q(
	DELETE FROM idgen_system
	WHERE system_identifier <> (SELECT system_identifier FROM pg_control_system())));
# the row's arrival was noted in idgen_hwm, which a restart keeps: the
# control forgets it too
cmp_ok(without_notes($control), '>', 0, "control: idgen_hwm had noted the old cluster");
($ret, $repeated) = again_at_old_time($control, 'app');
cmp_ok($repeated, '>', 0, "control: without idgen_system's old row, $repeated of 200,000 IDs repeat old ones");
$control->stop;

# After pg_upgrade, idgen_resume_after() in a database it brought ends the
# refusal too, at a restart (last: the clock is not set back here, so no
# session waits for it).
my $again = PostgreSQL::Test::Cluster->new('upgraded_again');
$again->init;
$again->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n$conf");
pg_upgrade_into($old, $again, 'pg_upgrade into another new cluster');
$again->start;
($ret, $out, $err) = $again->psql('postgres', 'SELECT idgen_next()');
like($err, qr/ERROR:  idgen high-water marks were left behind by pg_upgrade/, 'it refuses');
$again->safe_psql('postgres', "SELECT idgen_resume_after('$newest')");
$again->restart;
($ret, $out, $err) = $again->psql('postgres', 'SELECT idgen_next()');
is($err, '', 'after idgen_resume_after() and a restart, it generates');
like(slurp_file($again->data_dir . '/idgen_hwm'), qr/^# systems @-?\d+ \d+ \d+$/m,
	'idgen_hwm says its marks cover both clusters, the upgrade left behind');
$again->stop;

done_testing();
