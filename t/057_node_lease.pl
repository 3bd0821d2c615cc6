# Node ids leased from a registry (idgen.node_registry): two servers lease
# distinct ids, a restart and a backend crash keep the id, a clone of a
# holder refuses while both ids of idgen.node_bits = 1 are held, a holder
# frozen past its lease loses its id to another server and, woken, makes
# nothing under it, a holder whose lease worker alone is frozen stops
# before its id changes hands, a registry outage stops holders only once
# their leases run out, and a standby promoted while its primary lives
# waits for a free id, and one that takes another id starts it above the
# IDs it replicated.  Every ID all servers made is distinct.  The
# controls: the clone with its source's node id set by hand, and the
# frozen holder with the fence and the ceiling disabled
# (idgen.lease_test_unsafe), repeat the other server's IDs; with
# only one of the two disabled, the other still refuses; without the fence,
# a holder whose worker is frozen generates after its id changed hands;
# without the floor of its own marks, the promoted standby's IDs start
# below those it replicated.  And the registry failing: stopped past the
# lease (state 'expired', three log lines), its lease table locked past
# the lease while a server waits (no call commits after its worker gave up;
# the holders renew their own ids); losing commits is t/063's.  A crashed
# holder's fast clock (the next holder says when it starts); both node id
# settings (no lease); and a registry password (refused in the setting; a
# passfile; a pg_monitor member reads no password).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest qw(:DEFAULT :lease);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $lease_s = 5;

# The registry: any database with idgen; it generates nothing itself.
# The registry's sessions default to REPEATABLE READ: the lease worker reads
# committed rows all the same.
my $registry = idgen_node('registry', "idgen.node_id = 0\ndefault_transaction_isolation = 'repeatable read'\n");
my $reg = conninfo($registry);
my $lease_conf = "idgen.node_registry = '$reg'\nidgen.node_lease_s = $lease_s\nidgen.node_bits = 1\n";

sub leasing_node
{
	my ($name, $extra, %init) = @_;
	my $node = idgen_node($name, $lease_conf . ($extra // ''), %init);
	$node->safe_psql('postgres', 'CREATE TABLE ids (id bigint); CREATE TABLE ctl (id bigint)');
	return $node;
}

sub node_of
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT (idgen_decode(id)).node_id::text, ',') FROM $table");
}

my ($ret, $out, $err);

# --- two servers lease distinct ids
my $a = leasing_node('a', "restart_after_crash = on\n", allows_streaming => 1);
my $b = leasing_node('b', '', allows_streaming => 1);
my $na = leased($a);
my $nb = leased($b);
isnt($na, $nb, "a and b lease distinct node ids ($na, $nb)");
is($registry->safe_psql('postgres', 'SELECT count(*) FROM idgen_leases WHERE held'), 2,
	'the registry shows both leases held');
like($registry->safe_psql('postgres', "SELECT holder FROM idgen_leases WHERE node_id = $na"),
	qr/\Q${\ $a->data_dir }\E$/, "the registry names a's data directory as the holder");
is($a->safe_psql('postgres', 'SELECT source, registry ~ \'dbname=postgres\', seconds_left > 0 FROM idgen_node_lease'),
	'lease|t|t', 'a says its node id comes from a lease, from which registry, and for how long');
($ret, $out, $err) = burst_into($a, 'ids', 20000);
is($ret, 0, 'a generates') or diag($err);
burst_into($b, 'ids', 20000);
is(node_of($a, 'ids'), $na, "a's IDs carry its node id");
is(node_of($b, 'ids'), $nb, "b's IDs carry its node id");
is($a->safe_psql('postgres',
		"SELECT node_id, source, registry ~ 'dbname=postgres', valid_until > now() FROM idgen_node_info()"),
	"$na|lease|t|t", 'idgen_node_info() reports the leased node id, its registry and until when');
$a->safe_psql('postgres', 'CREATE EXTENSION dblink');
my $check_ab = "ARRAY['" . conninfo($a) . "', '" . conninfo($b) . "']";
is($a->safe_psql('postgres',
		"SELECT string_agg(concat_ws('|', node_id, source, registry ~ 'dbname=postgres', valid_until > now(), problem), ',' ORDER BY node_id) FROM idgen_check_nodes($check_ab)"),
	'0|lease|t|t,1|lease|t|t', 'idgen_check_nodes() reports both leased node ids, without a problem');

# --- a restart keeps the id, and starts after the IDs it made
$a->restart;
is(leased($a), $na, 'a restarted leases its node id again');
burst_into($a, 'ids', 20000);

# A backend's crash reinitialises shared memory, not the postmaster: the
# worker renews the lease it finds in the token file.
my $offset = -s $a->logfile;
ok(crash_backend($a), 'a reinitialised after a backend crashed');
is(leased($a), $na, 'a keeps its node id across the reinitialisation');
ok(!$a->log_contains('leased node id', $offset), 'renewing its lease, not acquiring one');
burst_into($a, 'ids', 20000);

# --- a clone of a, started as a primary, refuses while both ids are held
my $clone = node_from_backup($a, 'clone', streaming => 0);
$clone->poll_query_until('postgres', "SELECT last_error ~ 'are leased' FROM idgen_node_lease")
  or die 'the clone did not try the registry';
($ret, $out, $err) = $clone->psql('postgres', 'SELECT idgen_next()');
isnt($ret, 0, 'the clone of a holder does not generate while both node ids are held');
like($err, qr/idgen holds no node id lease from registry "host=\S+ port=\d+ dbname=postgres"/,
	'the error names the registry');
like($err, qr/all 2 node ids of idgen.node_bits = 1 are leased/, 'and says every node id is held');
like($err, qr/Held: node id 0 until [^;]+; node id 1 until /, 'and lists the node ids held');
unlike($err, qr/\Q${\ $a->data_dir }\E|\Q${\ $b->data_dir }\E/,
	'not who holds them: every role of the clone reads this');
is($clone->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'acquiring',
	'idgen_node_lease shows the clone without a lease');
like($a->safe_psql('postgres', "SELECT problem FROM idgen_check_nodes(ARRAY['" . conninfo($clone) . "'])"),
	qr/idgen holds no node id lease from registry "host=\S+ port=\d+ dbname=postgres" \(acquiring\): .*are leased/,
	'idgen_check_nodes() says the clone holds no lease, and why');
$clone->stop;

# Control: the same clone with its source's node id set by hand makes the
# IDs a makes at the same time.
# The reference burst is long, so that the other, shifted to its first
# millisecond, falls within it however long its first mark takes.
burst_into($a, 'ctl', 300000);
my $manual = node_from_backup($a, 'manual', streaming => 0, backup => 'clone_base',
	conf => "idgen.node_registry = ''\nidgen.node_id = $na\n");
($ret, $out, $err) = burst_into($manual, 'ctl', 50000, first_ms($a, 'ctl'));
my @a_ids = ids_of($a, 'ctl');
my @manual_ids = ids_of($manual, 'ctl');
cmp_ok(common(\@a_ids, \@manual_ids), '>', 0,
	'control: the clone with a node id set by hand repeats IDs of a')
  or diag("$ret $err");
$a->safe_psql('postgres', 'CREATE TABLE pgedge_ids AS SELECT id FROM ctl');
$manual->stop;

# --- a holder frozen past its lease loses its id, and woken makes nothing under it
sub frozen_holder
{
	my ($holder, $taker, $expect) = @_;
	my $session = $holder->background_psql('postgres', on_error_stop => 0);
	$session->query_safe("SELECT idgen_next(), idgen_next('pgedge')");
	my $held = leased($holder);
	signal_server($holder, 'STOP');
	my $frozen_at = time;
	# $taker, once started or reconnected, waits for the lease to expire
	my $nt = leased($taker);
	# the last renewal was at most a third of the lease before the freeze
	ok(time - $frozen_at >= $lease_s * 2 / 3 - 0.5,
		"$expect: the id went to another server only after the lease expired");
	is($nt, $held, "$expect: the other server leases the frozen holder's id");
	$taker->safe_psql('postgres', 'TRUNCATE ctl');
	burst_into($taker, 'ctl', 300000);
	my $at = first_ms($taker, 'ctl');
	signal_server($holder, 'CONT');
	$holder->safe_psql('postgres', 'TRUNCATE ctl');
	my $r = burst_into($holder, 'ctl', 50000, $at, $session);
	my $woken_err = $session->{stderr};
	$session->quit;
	my @h = ids_of($holder, 'ctl');
	my @t = ids_of($taker, 'ctl');
	return (scalar @h, common(\@h, \@t), $woken_err);
}

my $d = leasing_node('d');
is($d->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'acquiring',
	'd waits while a and b hold both ids');
my ($made, $repeats, $woken_err) = frozen_holder($a, $d, 'fenced');
is($made, 0, 'the frozen holder, woken, makes no ID under the id it lost');
like($woken_err, qr/idgen holds no node id lease/, 'its session is refused');
($ret, $out, $err) = $a->psql('postgres', 'SELECT idgen_next()');
like($err, qr/was leased to another server/, 'and so is a new session, saying why');
$a->poll_query_until('postgres', "SELECT state = 'lost' FROM idgen_node_lease");
is($a->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'lost',
	'idgen_node_lease shows the lease lost');
$d->safe_psql('postgres', 'CREATE TABLE pgedge_ids AS SELECT id FROM ctl');

# Each protection alone refuses the woken holder; the control, with both
# disabled, repeats.  The holder leases again once the taker releases.
sub rerun_frozen
{
	my ($unsafe) = @_;
	$a->stop;
	$d->stop;
	$a->adjust_conf('postgresql.conf', 'idgen.lease_test_unsafe', "'$unsafe'");
	$a->start;
	leased($a);
	$d->start;
	return frozen_holder($a, $d, "without the $unsafe");
}
$a->append_conf('postgresql.conf', "idgen.lease_test_unsafe = ''\n");
($made, $repeats, $woken_err) = rerun_frozen('fence');
is($made, 0, 'without the fence, the ceiling alone refuses the woken holder');
# the ceiling's check failed; the message gives the worker's reason if it has one
like($woken_err, qr/is beyond the mark the registry holds|was leased to another server/, 'saying so');
$d->safe_psql('postgres', 'INSERT INTO pgedge_ids SELECT id FROM ctl');
($made, $repeats, $woken_err) = rerun_frozen('ceiling');
is($made, 0, 'without the ceiling, the fence alone refuses the woken holder');
like($woken_err, qr/ran out before it could be renewed|was leased to another server/, 'saying so');
$d->safe_psql('postgres', 'INSERT INTO pgedge_ids SELECT id FROM ctl');
($made, $repeats) = rerun_frozen('fence,ceiling');
cmp_ok($repeats, '>', 0,
	"control: without fence and ceiling, the woken holder repeats the new holder's IDs ($repeats of $made)");
$a->stop;

# --- the registry stopped: holders generate for the rest of their lease,
# then refuse naming the registry, and resume once it is back
my $nd = leased($d);
$nb = leased($b);
my $b_log = -s $b->logfile;
$registry->stop;
my $stopped_at = time;
($ret, $out, $err) = burst_into($b, 'ids', 1000);
is($ret, 0, 'with the registry down, b still generates within its lease');
$b->poll_query_until('postgres', "SELECT seconds_left = 0 FROM idgen_node_lease")
  or die 'the lease did not run out';
# Its end as b set it at its last renewal, before the registry stopped: not
# when this test saw it end, which a loaded machine makes late.
cmp_ok($b->safe_psql('postgres', 'SELECT extract(epoch FROM valid_until) FROM idgen_node_lease'),
	'<=', $stopped_at + $lease_s, 'the lease runs out within its length');
($ret, $out, $err) = $b->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen holds no node id lease from registry "host=\S+ port=\d+ dbname=postgres".*ran out/s,
	'then b refuses, naming the registry');
like($err, qr/connect|connection/i, 'and why');
is($b->safe_psql('postgres', 'SELECT state, valid_until < now() FROM idgen_node_lease'), 'expired|t',
	'idgen_node_lease shows the lease expired, valid until its fence passed, not until now');
ok(eval { $b->wait_for_log(qr/the lease of node id $nb expired/, $b_log); 1 }, 'b logs that its lease expired');
$registry->start;
is(leased($b), $nb, 'b renews its lease once the registry is back');
ok(eval { $b->wait_for_log(qr/renewed the lease of node id $nb again/, $b_log); 1 }, 'and that it renewed it again');
my $outage_log = substr(slurp_file($b->logfile), $b_log);
is(scalar(() = $outage_log =~ /could not renew the lease of node id $nb/g), 1,
	'the log says once that renewals started failing, not once per attempt');
is(scalar(() = $outage_log =~ /the lease of node id $nb expired/g), 1, 'once that the lease expired');
is(scalar(() = $outage_log =~ /renewed the lease of node id $nb again/g), 1, 'and once that it was renewed again');
is(leased($d), $nd, 'so does d');
($ret, $out, $err) = burst_into($b, 'ids', 20000);
is($ret, 0, 'b generates again') or diag($err);
burst_into($d, 'ids', 20000);

# --- the registry's lease table locked past the lease while a waits for
# a node id: the calls the workers give up on are cancelled on the
# registry too, so none commits when the lock goes (an acquire of a's
# would take b's or d's expired node id for a lease nobody holds), and
# b and d, the registry having answered nobody meanwhile, renew their own.
$a->start;
$a->poll_query_until('postgres', "SELECT last_error ~ 'are leased' FROM idgen_node_lease")
  or die 'a did not try the registry';
my $locker = $registry->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE idgen_lease IN EXCLUSIVE MODE');
$registry->poll_query_until('postgres', 'SELECT count(*) = 0 FROM idgen_leases WHERE held')
  or die 'the leases did not run out';
$a->poll_query_until('postgres',
	"SELECT last_error ~ 'statement timeout|lock timeout|did not answer' FROM idgen_node_lease")
  or die 'a did not wait for the lock';
is($b->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'expired',
	'b, its renewals locked out past its lease, has expired');
$locker->query_safe('COMMIT');
$locker->quit;
foreach my $holder ([ $b, $nb ], [ $d, $nd ])
{
	my ($node, $id) = @$holder;
	$node->poll_query_until('postgres', "SELECT state IN ('held', 'lost') FROM idgen_node_lease")
	  or die $node->name . ' did not come back';
	is($node->safe_psql('postgres', 'SELECT state, node_id FROM idgen_node_lease'), "held|$id",
		$node->name . ' renews its own node id once the lock goes, by itself');
}
is($registry->safe_psql('postgres',
		"SELECT string_agg(node_id::text, ',' ORDER BY node_id) FROM idgen_leases WHERE held AND holder !~ '${\ $a->data_dir }\$'"),
	'0,1', 'and the registry holds no node id for a: its abandoned calls did not commit');
is($a->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'acquiring', 'a still waits');
$a->stop;
($ret, $out, $err) = burst_into($b, 'ids', 20000);
is($ret, 0, 'b generates again') or diag($err);

# --- only d's lease worker frozen: d's backends stop at the fence by
# themselves, before the registry gives the id to another server

# Generates an ID every few milliseconds until refused; returns when, by
# the server's clock (the registry's: one machine).
sub generate_until_refused
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', q{
		DO $$ BEGIN
			LOOP PERFORM idgen_next(); PERFORM pg_sleep(0.002); END LOOP;
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RAISE NOTICE 'refused at %', extract(epoch FROM clock_timestamp());
		END $$});
	return $err =~ /refused at ([\d.]+)/ ? $1 : undef;
}

sub frozen_worker
{
	my ($holder, $taker, $expect) = @_;
	my $held = leased($holder);
	my $worker = worker_pid($holder);
	kill 'STOP', $worker;
	my $frozen_at = time;
	my $refused_at = generate_until_refused($holder);
	is(leased($taker), $held, "$expect: the other server then leases the id");
	my $acquired_at = $registry->safe_psql('postgres',
		"SELECT extract(epoch FROM acquired_at) FROM idgen_leases WHERE node_id = $held");
	kill 'CONT', $worker;
	return ($refused_at - $frozen_at, $refused_at - $acquired_at);
}

$a->adjust_conf('postgresql.conf', 'idgen.lease_test_unsafe', "''");
$a->start;
my ($stopped_after, $before_taken) = frozen_worker($d, $a, 'worker frozen');
cmp_ok($stopped_after, '<=', $lease_s,
	sprintf("d's backends stop %.2f s after its worker froze, within the lease", $stopped_after));
cmp_ok($before_taken, '<', 0,
	sprintf('%.2f s before the registry gave its id to a', -$before_taken));

# Control: without the fence, the backends go on until the ceiling, after
# the id went to another server: two servers generate under it at once
# (without repeating each other, as the ceiling still holds).
$a->stop;    # releases the id
$d->stop;
$d->append_conf('postgresql.conf', "idgen.lease_test_unsafe = 'fence'\n");
$d->start;
leased($d);
$a->start;
($stopped_after, $before_taken) = frozen_worker($d, $a, 'worker frozen, no fence');
cmp_ok($before_taken, '>', 0,
	sprintf('control: without the fence, d generated for %.2f s after its id went to a', $before_taken));
$d->stop;
$d->adjust_conf('postgresql.conf', 'idgen.lease_test_unsafe', "''");

# --- a standby of b promoted while b lives is another holder: it waits
# while every node id is held, and takes b's once b released it
my $standby = node_from_backup($b, 'standby');
$b->wait_for_catchup($standby);
$standby->promote;
$standby->safe_psql('postgres', 'CREATE TABLE ids2 (id bigint)');
$standby->poll_query_until('postgres', "SELECT last_error ~ 'are leased' FROM idgen_node_lease")
  or die 'the promoted standby did not try the registry';
($ret, $out, $err) = $standby->psql('postgres', 'SELECT idgen_next()');
like($err, qr/all 2 node ids of idgen.node_bits = 1 are leased/,
	'a standby promoted while its primary lives does not share its node id');
burst_into($b, 'ids', 20000);
$b->stop;
is(leased($standby), $nb, 'once the primary stopped, the promoted standby leases its node id');
($ret, $out, $err) = burst_into($standby, 'ids2', 20000);
is($ret, 0, 'and generates') or diag($err);

# --- every ID from all servers
$b->start;
$d->start;
my @all = (ids_of($a, 'ids'), ids_of($b, 'ids'), ids_of($d, 'ids'), ids_of($standby, 'ids2'));
my %count;
$count{$_}++ for @all;
is(scalar(grep { $count{$_} > 1 } keys %count), 0,
	'no ID repeats across the servers (' . scalar(@all) . ' IDs)');
my @pgedge = (ids_of($a, 'pgedge_ids'), ids_of($d, 'pgedge_ids'));
%count = ();
$count{$_}++ for @pgedge;
is(scalar(grep { $count{$_} > 1 } keys %count), 0,
	'nor in layout pgedge, the fenced run included (' . scalar(@pgedge) . ' IDs)');

$_->stop for $a, $b, $d, $standby;

# --- a server whose node id changes continues above every ID it made: a
# standby promoted while its primary lives takes another node id, and
# starts it above the IDs it replicated, so that an outbox cursor over its
# rows (idgen_horizon()) never has to go back, even with its clock behind
# (9 s here, within idgen.max_clock_regression_ms: it waits for its clock).
my $f = leasing_node('f', '', allows_streaming => 1);
my $nf = leased($f);

# f generates; a standby of it, promoted while f lives, then generates
# under the other node id: whether its IDs start above all of f's.
sub promoted_continues
{
	my ($name, $conf) = @_;
	my ($ret, $out, $err) = burst_into($f, 'ids', 20000);
	die "f did not generate: $err" if $ret;
	my $f_max = $f->safe_psql('postgres', 'SELECT max(id) FROM ids');
	my $sb = node_from_backup($f, $name, conf => "idgen.clock_offset_ms = -9000\n$conf");
	$f->wait_for_catchup($sb);
	$sb->promote;
	my $ns = leased($sb);
	($ret, $out, $err) = burst_into($sb, 'ids', 1000);
	die "$name did not generate: $err" if $ret;
	my $above = $sb->safe_psql('postgres',
		"SELECT min(id) > $f_max FROM ids WHERE (idgen_decode(id)).node_id = $ns");
	my $log = slurp_file($sb->logfile);
	$sb->stop;
	return ($ns, $above, $log);
}

my ($ns, $above) = promoted_continues('f_ctl', "idgen.lease_test_unsafe = 'floor'\n");
isnt($ns, $nf, 'control: the standby promoted while f lives leases the other node id');
is($above, 'f', 'control: without the floor, its IDs start below those it replicated from f');
($ns, $above, my $log) = promoted_continues('f_sb', '');
isnt($ns, $nf, 'the standby promoted while f lives leases the other node id');
is($above, 't', 'its IDs start above every ID it replicated from f, under another node id');
like($log, qr/IDs start after .*, the highest mark of this server's IDs/, 'its log says why');
$f->stop;

# --- a holder whose clock ran 40 s fast crashes: the next holder of its
# node id, its clock right, waits for the IDs the old one may have made,
# and says so, with when it starts, rather than blame its own clock.
$registry->safe_psql('postgres', 'CREATE DATABASE fastreg');
$registry->safe_psql('fastreg', 'CREATE EXTENSION idgen');
my $fast_conf = "idgen.node_registry = '" . conninfo($registry) =~ s/dbname=postgres/dbname=fastreg/r
  . "'\nidgen.node_lease_s = $lease_s\nidgen.node_bits = 0\n";
my $fast = idgen_node('fast', $fast_conf . "idgen.clock_offset_ms = 40000\n");
leased($fast);
$fast->safe_psql('postgres', 'SELECT idgen_next()');
$fast->stop('immediate');
my $right = idgen_node('right', $fast_conf);
is(leased($right), 0, "the next holder leases the crashed holder's node id once its lease expired");
($ret, $out, $err) = $right->psql('postgres', 'SELECT idgen_next()');
like($err, qr/ERROR:  idgen IDs under node id 0 start at .+, after the IDs its previous holder may have made/,
	'it waits for the IDs its previous holder may have made, and says so');
like($err, qr/DETAIL:  The registry holds a mark of .+ for the node id, \d+ ms ahead of this server's clock/,
	'how far ahead of its clock they may be');
like($err, qr/HINT:  IDs are generated from .+ on/, 'and when it starts');
unlike($err, qr/time synchronization|system clock is/, 'not that its own clock is wrong');
$right->stop;

# --- settings: the node id from one source only, a registry libpq can
# read, a lease of at least 5 s; an unreachable registry is named.
my $bad = idgen_node('bad', "idgen.node_id = 1\n");
sub try_setting
{
	my ($conf) = @_;
	set_auto_conf($bad, $conf);
	my ($ret, $out, $err) = $bad->psql('postgres', 'SELECT idgen_next()');
	return $err;
}
$err = try_setting("idgen.node_registry = '$reg'");
like($err, qr/ERROR:  idgen cannot be used because idgen.node_registry is invalid/,
	'idgen.node_id and idgen.node_registry both set: refused');
like($err, qr/DETAIL:  Both idgen.node_id and idgen.node_registry are set/, 'the detail names both');
like($err, qr/HINT:  Remove idgen.node_id from postgresql.conf to lease node ids, or idgen.node_registry to set them by hand/,
	'the hint says what to remove');
is($bad->safe_psql('postgres', 'SELECT state, last_error FROM idgen_node_lease'),
	"acquiring|No node id is leased while idgen's settings are invalid.",
	'and leases no node id: it could not use one');
is($bad->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'idgen node lease'"),
	0, 'no lease worker runs');
is($registry->safe_psql('postgres', "SELECT count(*) FROM idgen_lease WHERE holder ~ '${\ $bad->data_dir }\$'"),
	0, 'the registry holds no lease for it');
$bad->adjust_conf('postgresql.conf', 'idgen.node_id', undef);
$err = try_setting("idgen.node_registry = 'host=/nonexistent password=secret bogus=1'");
like($err, qr/idgen.node_registry is invalid/, 'a registry libpq cannot read is refused');
unlike($err, qr/secret/, 'without showing its password');
foreach my $with_password ("$reg password=secret", 'postgresql://idgen:secret@/postgres?host=/nonexistent')
{
	$err = try_setting("idgen.node_registry = '$with_password'");
	like($err, qr/DETAIL:  The server configuration sets idgen.node_registry to a connection string with a password, which roles other than superusers could read/,
		"a registry connection string with a password is refused ($with_password)");
	like($err, qr/HINT:  Put the password in ~\/.pgpass .* or in a password file named by the connection string's passfile or by PGPASSFILE/,
		'saying where to put it');
	unlike($err, qr/secret/, 'without showing it');
}
$err = try_setting("idgen.node_registry = '$reg'\nidgen.node_lease_s = 2");
like($err, qr/idgen.node_lease_s is invalid/, 'a lease shorter than 5 s is refused');
set_auto_conf($bad, "idgen.node_registry = 'host=/nonexistent port=1 dbname=postgres'");
$bad->poll_query_until('postgres', "SELECT last_error ~ 'Could not connect' FROM idgen_node_lease");
($ret, $out, $err) = $bad->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen holds no node id lease from registry "host=\/nonexistent port=1 dbname=postgres"/,
	'an unreachable registry: refused, naming it');
like($err, qr/Could not connect to the registry/, 'and saying why');
my $noext = 'host=' . $registry->host . ' port=' . $registry->port . ' dbname=template1';
set_auto_conf($bad, "idgen.node_registry = '$noext'");
ok($bad->poll_query_until('postgres',
		"SELECT last_error = 'The registry database does not have the extension idgen.' FROM idgen_node_lease"),
	'a registry database without idgen: the lease says so');
$registry->safe_psql('postgres', 'CREATE DATABASE old_idgen');
$registry->safe_psql('old_idgen', "CREATE EXTENSION idgen VERSION '1.4'");
set_auto_conf($bad, "idgen.node_registry = '" . conninfo($registry) =~ s/dbname=postgres/dbname=old_idgen/r . "'");
ok($bad->poll_query_until('postgres',
		"SELECT last_error ~ 'ALTER EXTENSION idgen UPDATE' FROM idgen_node_lease"),
	'a registry whose idgen predates leases: the lease says to update it');
$bad->stop;

# --- a registry that asks for a password: the leasing server takes it
# from a password file, and no role but a superuser reads it there, by any
# setting or view (pg_monitor has pg_read_all_settings, which reads
# GUC_SUPERUSER_ONLY settings).
my $password = 'pw-' . int(rand(1e9));
$registry->safe_psql('postgres', qq{
	CREATE ROLE idgen_pw LOGIN PASSWORD '$password';
	GRANT EXECUTE ON FUNCTION idgen_lease_acquire(integer, text, bigint, uuid, integer, bigint),
		idgen_lease_renew(integer, uuid, integer, bigint), idgen_lease_release(integer, uuid, bigint)
		TO idgen_pw;
});
my $hba = slurp_file($registry->data_dir . '/pg_hba.conf');
open my $hf, '>', $registry->data_dir . '/pg_hba.conf' or die $!;
print $hf "local all idgen_pw scram-sha-256\nhost all idgen_pw 127.0.0.1/32 scram-sha-256\n$hba";
close $hf;
$registry->reload;
my $passfile = PostgreSQL::Test::Utils::tempdir() . '/pgpass';
open my $pf, '>', $passfile or die $!;
print $pf "*:*:*:idgen_pw:$password\n";
close $pf;
chmod 0600, $passfile;
my $pw = idgen_node('pw', "idgen.node_registry = '$reg user=idgen_pw passfile=$passfile'\n"
	  . "idgen.node_lease_s = $lease_s\nidgen.node_bits = 1\n");
leased($pw);
$pw->safe_psql('postgres', 'CREATE ROLE monitor LOGIN IN ROLE pg_monitor');
my $seen = $pw->safe_psql('postgres', q{
	SET ROLE monitor;
	SELECT concat_ws(' ', setting, reset_val, boot_val) FROM pg_settings WHERE name = 'idgen.node_registry';
	SHOW idgen.node_registry;
	SELECT current_setting('idgen.node_registry');
	SELECT registry FROM idgen_node_lease;
	SELECT registry FROM idgen_node_info();
});
like($seen, qr/user=idgen_pw/, 'a pg_monitor member of the leasing server reads the registry setting');
unlike($seen, qr/\Q$password\E/, 'but not the password, in no setting or view');
$pw->stop;

# --- the registry's functions are idgen's, whatever the search_path of
# the registry's role: a function of the same name that another schema in
# it holds is never called.  The shadow renews nothing and answers the
# highest ceiling there is, so a holder that called it would keep
# generating after its real lease expired.
$registry->safe_psql('postgres', q{
	CREATE SCHEMA shadow;
	CREATE FUNCTION shadow.idgen_lease_renew(integer, uuid, integer, bigint) RETURNS bigint
		LANGUAGE sql AS 'SELECT 9223372036854775807';
	ALTER ROLE CURRENT_USER SET search_path = shadow, public;
});
my $e = leasing_node('e');
my $ne = leased($e);
# A renewal the registry recorded: the shadow's would leave the row as the
# acquisition wrote it, to expire a lease later.
ok($registry->poll_query_until('postgres',
		"SELECT held AND renewed_at > acquired_at FROM idgen_leases WHERE node_id = $ne"),
	"e renews its lease on the registry, not with a shadow function earlier in the role's search_path");
$registry->safe_psql('postgres', 'ALTER ROLE CURRENT_USER RESET search_path; DROP SCHEMA shadow CASCADE');

# --- a token file that is not a token is ignored: the server leases as a
# new holder rather than passing it to the registry, which refuses it.
$e->stop;
open my $tf, '>', $e->data_dir . '/idgen_lease_token' or die $!;
print $tf "not-a-token 0 1 2\n";
close $tf;
$e->start;
$ne = leased($e);
ok($e->log_contains('ignoring the unreadable node id lease token'), 'e says it ignored the token file');

# --- a holder whose marks are unreadable cannot say how high its IDs
# went: releasing its lease keeps the mark the registry holds, which is
# above the IDs e made before.
($ret, $out, $err) = burst_into($e, 'ids', 1000);
is($ret, 0, 'e generates') or diag($err);
my $e_last_ms = $e->safe_psql('postgres',
	"SELECT (extract(epoch FROM (idgen_decode(max(id))).ts) * 1000)::bigint FROM ids");
$e->stop;
my $released_mark = $registry->safe_psql('postgres', "SELECT mark_ms FROM idgen_lease WHERE node_id = $ne");
cmp_ok($released_mark, '>', $e_last_ms, "e's release reports a mark above its IDs");
open my $fh, '>', $e->data_dir . '/idgen_hwm' or die $!;
print $fh "garbage\n";
close $fh;
$e->start;
is(leased($e), $ne, 'e, its marks unreadable, leases its node id again');
($ret, $out, $err) = $e->psql('postgres', 'SELECT idgen_next()');
like($err, qr/is unreadable/, 'and refuses to generate');
$e->stop;
cmp_ok($registry->safe_psql('postgres', "SELECT mark_ms FROM idgen_lease WHERE node_id = $ne"),
	'>=', $released_mark, "e's release without its marks does not lower the registry's mark");

$registry->stop;
done_testing();
