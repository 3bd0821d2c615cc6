# A dump restored into a running cluster that has another database with
# idgen: the restored rows of idgen_system make the whole server refuse at
# once, so a session of the other database, which never reads the restored
# one, refuses too; before, only a backend of the restored database noticed,
# and the other database repeated the old IDs.  The refusal outlives a
# restart of the server and the promotion of its standby (restarted first),
# after which, in 1.5 before the fix, the other database generated again at
# the old IDs' time: idgen_hwm and WAL now note the cluster found.  The
# controls: the same session before the restore generates; and after the
# restart, and on the promoted standby, with the note taken out of
# idgen_hwm, the other database generates at the old time again.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 120000\n";
my $old = idgen_node('ro_old', $conf);
$old->safe_psql('postgres', q(
	SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,sequence}', '{41,10,12}');
	CREATE TABLE ids (id bigint PRIMARY KEY);
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 50000);));
my $first_ms = $old->safe_psql('postgres',
	q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
my $dump = $old->basedir . '/old.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('postgres') ], 'pg_dump');
$old->stop;

my $new = idgen_node('ro_new', $conf, allows_streaming => 1);
$new->safe_psql('postgres', 'CREATE DATABASE other; CREATE DATABASE app');
$new->safe_psql('other', 'CREATE EXTENSION idgen');
my $standby = node_from_backup($new, 'ro_standby');

# IDs of database $db with the clock at the old IDs' first millisecond.
sub at_old_time
{
	my ($db, $node) = @_;
	return ($node // $new)->psql($db, qq(
		SELECT set_config('idgen.clock_offset_ms',
			($first_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text, false);
		SELECT count(*) FROM (SELECT idgen_next() FROM generate_series(1, 1000)) n));
}

# A new session of the other database of $node refuses, naming the
# restored one ($what: when); the control: the note taken out of
# idgen_hwm, it generates at the old time.
sub refuses_until_note_gone
{
	my ($node, $what) = @_;
	my ($ret, $out, $err) = at_old_time('other', $node);
	like($err, qr/ERROR:  database "app" holds idgen IDs of another cluster/,
		"$what, a new session of the other database refuses");
	cmp_ok(without_notes($node), '>', 0, "$what, idgen_hwm noted the restored cluster");
	($ret, $out, $err) = at_old_time('other', $node);
	is($ret, 0, "control: $what, without the note, the other database generates at the old time");
	return;
}

my ($ret, $out, $err) = at_old_time('other');
is($ret, 0, 'control: before the restore, the other database generates');

my $log_offset = -s $new->logfile;
$new->command_ok([ 'pg_restore', '-d', $new->connstr('app'), $dump ], 'pg_restore into a database of the running cluster');
ok($new->log_contains('WARNING:  database "app" now holds idgen IDs of another cluster', $log_offset),
	'the restore warns that the server now refuses');
($ret, $out, $err) = at_old_time('other');
like($err, qr/ERROR:  database "app" holds idgen IDs of another cluster/,
	'a new session of the other database refuses, naming the restored one');

# The refusal outlives a restart: no session of the restored database
# generates after it, so only what the server kept can say so.
$new->restart;
($ret, $out, $err) = at_old_time('other');
like($err, qr/ERROR:  database "app" holds idgen IDs of another cluster/,
	'after a restart, a session of the other database still refuses');

# The standby replayed the note: restarted after a restartpoint past it,
# then promoted, it refuses as its primary did.
$new->wait_for_catchup($standby, 'replay');
$new->safe_psql('postgres', 'CHECKPOINT');
$new->wait_for_catchup($standby, 'replay');
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->restart;
$standby->promote;
refuses_until_note_gone($standby, 'on the standby, restarted and promoted');
$standby->stop;

$new->restart;
refuses_until_note_gone($new, 'after a second restart');

my $newest = $new->safe_psql('app', 'SELECT (idgen_decode(max(id))).ts FROM ids');
$new->safe_psql('app', "SELECT idgen_resume_after('$newest')");
$new->restart;
$new->safe_psql('other', q(
	CREATE TABLE again AS SELECT idgen_next() AS id FROM generate_series(1, 50000)));
my $max_old = $new->safe_psql('app', 'SELECT max(id) FROM ids');
is($new->safe_psql('other', "SELECT count(*) FROM again WHERE id <= $max_old"), '0',
	'after idgen_resume_after() and a restart, the other database generates above the old IDs');

$new->stop;

# A data-only restore with the triggers disabled (pg_restore --data-only
# --disable-triggers, into the schema made first): idgen's triggers stay
# enabled, so the rows of idgen_system pass theirs, and those of
# idgen_layout equal to the layouts the schema defined are skipped, not
# duplicates that failed the table's rows and the restore.  The control:
# the note taken out, as if nothing had checked, the other database
# generates at the old time.
my $dt = idgen_node('ro_disabled', $conf);
$dt->safe_psql('postgres', 'CREATE DATABASE other; CREATE DATABASE app');
$dt->safe_psql('other', 'CREATE EXTENSION idgen');
$dt->command_ok([ 'pg_restore', '--schema-only', '-d', $dt->connstr('app'), $dump ],
	'pg_restore --schema-only');
$log_offset = -s $dt->logfile;
$dt->command_ok(
	[ 'pg_restore', '--data-only', '--disable-triggers', '--single-transaction', '--exit-on-error',
		'-d', $dt->connstr('app'), $dump ],
	'pg_restore --data-only --disable-triggers, in one transaction that stops at an error');
ok($dt->log_contains('WARNING:  database "app" now holds idgen IDs of another cluster', $log_offset),
	'the restore warns as the rows of idgen_system arrive');
is($dt->safe_psql('app', q(SELECT count(*) FROM pg_trigger
		WHERE tgrelid IN ('idgen_layout'::regclass, 'idgen_system'::regclass) AND tgenabled <> 'O')),
	'0', "idgen's triggers are enabled after the restore");
is($dt->safe_psql('app', q(SELECT count(*) FROM ids)), '50000', 'the rows of the data-only restore are in');
refuses_until_note_gone($dt, 'after a restore with the triggers disabled');
$dt->stop;
done_testing();
