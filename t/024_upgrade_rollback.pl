# Every cluster that ran idgen is known.  pg_upgrade O -> N, with O's
# idgen_hwm copied in as the README says; N generates; N's dump goes back
# into O (a rollback), or into a fresh cluster.  pg_upgrade runs no
# extension script, so in 1.5 N was recorded nowhere: O took N's IDs for
# its own and repeated them (162,044-180,014 of 200,000 in a review), and
# the fresh cluster's refusal named O, whose idgen_hwm, copied as the hint
# said, repeated them too (173,037).  Now N adds its row to idgen_system
# at its first generation: O refuses, naming N, until idgen_resume_after()
# and a restart; the fresh cluster names N, and N's idgen_hwm copied in
# covers every ID; a cluster with a later idgen.epoch resumes above them.
# The control: a copy of O given the dump without N's
# row, as 1.5 made it, repeats N's IDs.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 120000\n";

sub system_identifier
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
}

my $old = idgen_node('old', $conf);
$old->safe_psql('postgres', q(
	CREATE TABLE ids (id bigint PRIMARY KEY);
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 1000);
));
my $old_sys = system_identifier($old);
$old->stop;
# a copy of O, for the control
$old->backup_fs_cold('cold');

my $new = PostgreSQL::Test::Cluster->new('upgraded');
$new->init;
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n$conf");
pg_upgrade_into($old, $new, 'pg_upgrade');
system('cp', $old->data_dir . '/idgen_hwm', $new->data_dir . '/idgen_hwm') == 0 or die 'cp';
$new->start;
my $new_sys = system_identifier($new);
# The first transactions that generate roll back (one whole, one to a
# savepoint, one whole after its savepoint was released): the row goes with
# them, and the session adds it again.
$new->safe_psql('postgres', q(
	BEGIN;
	SELECT idgen_next();
	ROLLBACK;
	BEGIN;
	SAVEPOINT s;
	SELECT idgen_next();
	RELEASE s;
	ROLLBACK;
	BEGIN;
	SAVEPOINT s;
	SELECT idgen_next();
	ROLLBACK TO s;
	DELETE FROM ids;
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
	COMMIT;
));
is($new->safe_psql('postgres', "SELECT count(*) FROM idgen_system WHERE system_identifier = $new_sys"),
	'1', 'the upgraded cluster recorded itself at its first generation that committed');
my $first_ms = $new->safe_psql('postgres',
	q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
my $newest = $new->safe_psql('postgres', q(SELECT (idgen_decode(max(id))).ts FROM ids));
my $dump = $new->basedir . '/new.dump';
$new->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $new->connstr('postgres') ], 'pg_dump of N');
$new->stop;

# 200,000 IDs of $node's database $db with the clock at N's first ID:
# how many N issued; psql's errors.
sub repeats
{
	my ($node, $db) = @_;
	my (undef, $repeated, $err) = repeats_at($node, $db, $first_ms);
	return ($repeated, $err);
}

sub restore_into
{
	my ($node, $db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->command_ok([ 'pg_restore', '-d', $node->connstr($db), $dump ], $node->name . ": pg_restore into $db");
}

my $names_new = qr/database "back" holds idgen IDs of another cluster \(system identifier $new_sys\).*\n.*\nHINT:  Stop this server and copy "idgen_hwm" from the data directory of the cluster with system identifier $new_sys/;

# 1. The rollback: N's dump back into O.
$old->start;
restore_into($old, 'back');
my ($repeated, $err) = repeats($old, 'back');
like($err, $names_new, 'the rollback into O refuses, naming N and its idgen_hwm');
$old->safe_psql('back', "SELECT idgen_resume_after('$newest')");
$old->restart;
($repeated, $err) = repeats($old, 'back');
is("$repeated $err", '0 ', 'after idgen_resume_after() and a restart, O repeats none of 200,000');
$old->stop;

# 2. N's dump into a fresh cluster: the hint names N; its idgen_hwm covers every ID.
my $fresh = idgen_node('fresh', $conf);
restore_into($fresh, 'back');
($repeated, $err) = repeats($fresh, 'back');
like($err, $names_new, 'a fresh cluster refuses, naming N and its idgen_hwm');
$fresh->stop;
system('cp', $new->data_dir . '/idgen_hwm', $fresh->data_dir . '/idgen_hwm') == 0 or die 'cp';
$fresh->start;
($repeated, $err) = repeats($fresh, 'back');
is("$repeated $err", '0 ', 'with N\'s idgen_hwm copied in as the hint says, none of 200,000 repeats');
$fresh->stop;

# 3. Into a cluster whose idgen.epoch is a day later: the same times give
# smaller IDs there.  idgen_system says the epoch N's IDs were made under,
# so idgen_resume_after() of their newest time resumes above them (1.5
# resumed a day below, repeating them with the clock a day on).
my $later = idgen_node('later', "$conf
idgen.epoch = '2024-01-02'
");
restore_into($later, 'back');
$later->safe_psql('back', "SELECT idgen_resume_after('$newest')");
$later->restart;
my ($ret, $out);
($ret, $out, $err) = $later->psql('back', 'SELECT idgen_next() > (SELECT max(id) FROM ids)');
ok($out eq 't' || $err =~ /behind the time of the newest idgen ID/,
	'after idgen_resume_after() under a later epoch: above the old IDs, or refused until the clock passes them');
$first_ms += 86400000;
($repeated, $err) = repeats($later, 'back');
is("$repeated $err", '0 ', 'with the clock at the old IDs\' time counted from the later epoch, none of 200,000 repeats');
$later->stop;
$first_ms -= 86400000;

# The control: O's copy, the dump without N's row.
my $control = PostgreSQL::Test::Cluster->new('control');
$control->init_from_backup($old, 'cold');
$control->start;
restore_into($control, 'back');
$control->safe_psql('back', "DELETE FROM idgen_system WHERE system_identifier = $new_sys");
# the row's arrival made the server refuse, and idgen_hwm noted it: the
# control forgets both
cmp_ok(without_notes($control), '>', 0, "control: idgen_hwm had noted N");
($repeated, $err) = repeats($control, 'back');
cmp_ok($repeated, '>', 0, "control, without N's row: the rollback repeats $repeated of 200,000");
$control->stop;

done_testing();
