# Node ids leased from etcd (idgen.node_registry = 'etcd://...'), with
# Debian's etcd-server as a three-member cluster on loopback: three servers
# lease distinct node ids and keep them across restarts; killing the etcd
# leader or another member, or freezing one (a minority cut off), changes
# nothing; the whole etcd cluster down past the lease stops generation
# before the lease ends (control: a server without its fence and ceiling,
# idgen.lease_test_unsafe, generates on), and it resumes by itself with
# the same node ids once etcd is back; a holder frozen past its lease
# makes nothing after waking while another server holds its node id
# (control: with the fence and the ceiling disabled, it repeats that
# server's IDs).  Every ID the three servers made is distinct.  etcd
# restored from a snapshot: a holder that saw later revisions fences it,
# and the next holder of its node id starts above its IDs (control: with
# idgen.lease_test_unsafe = 'history', it repeats them).  A password in
# the setting is refused; etcd's users (a password file) and TLS with a
# client certificate work.
#
# Runs alone: its times (generation throughout 10 s, a stop within the
# lease) failed beside other tests on a loaded machine (scripts/lib.sh).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest qw(:DEFAULT :lease);
use HTTP::Tiny;
use MIME::Base64;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

require_test_extra('integration');
my $etcd = find_tool('etcd');
plan skip_all => 'etcd is not installed (Debian package etcd-server)' unless $etcd;

my $lease_s = 5;
my $dir = PostgreSQL::Test::Utils::tempdir();
my @members = qw(e1 e2 e3);
my (%client, %peer, %pid);
# each member's data directory: a restore from a snapshot makes new ones
my %data = map { $_ => "$dir/$_" } @members;
$client{$_} = PostgreSQL::Test::Cluster::get_free_port() for @members;
$peer{$_} = PostgreSQL::Test::Cluster::get_free_port() for @members;
my $cluster = join(',', map { "$_=http://127.0.0.1:$peer{$_}" } @members);
my $endpoints = join(',', map { "127.0.0.1:$client{$_}" } @members);

sub start_member
{
	my ($m) = @_;
	$pid{$m} = start_daemon(
		[
			$etcd, "--name=$m", "--data-dir=$data{$m}",
			"--listen-client-urls=http://127.0.0.1:$client{$m}",
			"--advertise-client-urls=http://127.0.0.1:$client{$m}",
			"--listen-peer-urls=http://127.0.0.1:$peer{$m}",
			"--initial-advertise-peer-urls=http://127.0.0.1:$peer{$m}",
			"--initial-cluster=$cluster", '--initial-cluster-state=new',
			'--initial-cluster-token=idgen-test'
		],
		"$dir/$m.log");
	return;
}

# The member's status (etcd's maintenance API): its own id and its leader's.
sub status
{
	my ($m) = @_;
	my $r = HTTP::Tiny->new(timeout => 2)->post("http://127.0.0.1:$client{$m}/v3/maintenance/status",
		{ content => '{}', headers => { 'Content-Type' => 'application/json' } });
	return () unless $r->{success};
	my ($me) = $r->{content} =~ /"member_id":"(\d+)"/;
	my ($leader) = $r->{content} =~ /"leader":"(\d+)"/;
	return ($me, $leader);
}

sub leader
{
	for my $m (@members)
	{
		my ($me, $leader) = status($m);
		return $m if defined $me && defined $leader && $me eq $leader;
	}
	return undef;
}

sub wait_leader
{
	my $until = time + 60;
	while (time < $until)
	{
		my $l = leader();
		return $l if $l;
		sleep 0.2;
	}
	give_up('etcd elected no leader within 60 s', map { "$dir/$_.log" } @members);
}

start_member($_) for @members;
my $first_leader = wait_leader();
ok($first_leader, "a three-member etcd cluster runs, leader $first_leader");

sub registry_conf
{
	my ($prefix, $bits) = @_;
	return "idgen.node_registry = 'etcd://$endpoints/$prefix'\nidgen.node_lease_s = $lease_s\n"
	  . "idgen.node_bits = $bits\n";
}

sub leasing_node
{
	my ($name, $conf) = @_;
	my $node = idgen_node($name, $conf);
	$node->safe_psql('postgres', 'CREATE TABLE ids (id bigint); CREATE TABLE ctl (id bigint)');
	return $node;
}

sub states
{
	return join(',', map { $_->safe_psql('postgres', 'SELECT state FROM idgen_node_lease') } @_);
}

# --- three servers lease distinct node ids, and keep them across restarts
my @servers = map { leasing_node($_, registry_conf('main', 2) . "restart_after_crash = on\n") } qw(a b c);
my @ids = map { leased($_) } @servers;
my %distinct = map { $_ => 1 } @ids;
is(scalar keys %distinct, 3, "three servers lease distinct node ids (@ids)");
is($servers[0]->safe_psql('postgres', 'SELECT source, registry, seconds_left > 0 FROM idgen_node_lease'),
	"etcd|etcd://$endpoints/main|t", 'idgen_node_lease says the node id comes from etcd, which, and for how long');
my ($ret, $out, $err);
burst_into($_, 'ids', 20000) for @servers;
is(join(',', map { $_->safe_psql('postgres', "SELECT string_agg(DISTINCT (idgen_decode(id)).node_id::text, ',') FROM ids") } @servers),
	join(',', @ids), "each server's IDs carry its node id");
$_->restart for @servers;
is(join(' ', map { leased($_) } @servers), "@ids", 'each server leases its node id again after a restart');
burst_into($_, 'ids', 20000) for @servers;

# A backend's crash reinitialises shared memory: the worker renews the
# etcd lease the token file names.
my $crash_offset = -s $servers[0]->logfile;
ok(crash_backend($servers[0]), 'a reinitialised after a backend crashed');
is(leased($servers[0]), $ids[0], 'a keeps its node id across the reinitialisation');
ok(!$servers[0]->log_contains('leased node id', $crash_offset), 'renewing its etcd lease, not acquiring one');
burst_into($servers[0], 'ids', 20000);

# --- killing the etcd leader, or freezing one member, changes nothing
sub generates_throughout
{
	my ($what, $seconds) = @_;
	my $until = time + $seconds;
	my $failed = 0;
	while (time < $until)
	{
		for my $s (@servers)
		{
			my ($r) = burst_into($s, 'ids', 2000);
			$failed++ if $r != 0;
		}
		sleep 0.2;
	}
	is($failed, 0, "$what: every server generated throughout " . ($seconds) . ' s');
	is(states(@servers), 'held,held,held', "$what: every lease is held");
	return;
}

my $killed = leader();
stop_daemons($pid{$killed});
generates_throughout("etcd leader $killed killed", 2 * $lease_s);
start_member($killed);
wait_leader();

my ($minority) = grep { $_ ne leader() } @members;
stop_daemons($pid{$minority});
generates_throughout("etcd member $minority (not the leader) killed", 2 * $lease_s);
start_member($minority);
wait_leader();
($minority) = grep { $_ ne leader() } @members;
kill 'STOP', -$pid{$minority};
generates_throughout("etcd member $minority frozen (a minority cut off)", 2 * $lease_s);
kill 'CONT', -$pid{$minority};
is(join(' ', map { $_->safe_psql('postgres', 'SELECT node_id FROM idgen_node_lease') } @servers), "@ids",
	'the node ids did not change');

# --- the whole etcd cluster down past the lease, and back; c without its
# fence, the control, generates on after the others stopped (without its
# ceiling too, which a slow machine's clock passes before c is asked)
$servers[2]->append_conf('postgresql.conf', "idgen.lease_test_unsafe = 'fence,ceiling'\n");
$servers[2]->restart;
leased($servers[2]);
my $offset = -s $servers[0]->logfile;
stop_daemons(map { $pid{$_} } @members);
my $down_at = time;
my (%refused_at, %why);
while (time < $down_at + 3 * $lease_s && keys %refused_at < 2)
{
	for my $s (@servers[0, 1])
	{
		next if $refused_at{ $s->name };
		my ($r, $o, $e) = burst_into($s, 'ids', 1000);
		($refused_at{ $s->name }, $why{ $s->name }) = (time, $e) if $r != 0;
	}
	sleep 0.1;
}
my $last = (sort { $b <=> $a } map { $_ // 99 } @refused_at{qw(a b)})[0];
ok(keys %refused_at == 2 && $last - $down_at <= $lease_s,
	sprintf('etcd down: generation stops within the lease (a and b after %s s)',
		join(' and ', map { sprintf '%.1f', ($refused_at{$_} // 0) - $down_at } qw(a b))));
like($why{b} // '', qr/ran out before it could be renewed/, 'saying that the lease ran out');
$servers[2]->poll_query_until('postgres', "SELECT state = 'expired' FROM idgen_node_lease");
($ret) = burst_into($servers[2], 'ids', 1000);
is($ret, 0, 'control: a server without the fence and the ceiling generates on once its lease ran out');
sleep($lease_s);
$servers[0]->poll_query_until('postgres', "SELECT state = 'expired' FROM idgen_node_lease");
is(states(@servers), 'expired,expired,expired', 'every lease shows expired');
start_member($_) for @members;
wait_leader();
is(join(' ', map { leased($_) } @servers), "@ids", 'etcd back: every server holds its node id again, by itself');
ok($servers[0]->wait_for_log(qr/renewed the lease of node id $ids[0] again/, $offset),
	'the log says the lease was renewed again');
burst_into($_, 'ids', 20000) for @servers;

my @all = map { ids_of($_, 'ids') } @servers;
my %count;
$count{$_}++ for @all;
is(scalar(grep { $count{$_} > 1 } keys %count), 0, sprintf('0 repeats among the %d IDs of the three servers', scalar @all));

# --- a holder frozen past its lease makes nothing after waking while another holds its id
$_->stop for @servers;
my $holder = leasing_node('holder', registry_conf('frozen', 0));
my $taker = leasing_node('taker', registry_conf('frozen', 0));

sub frozen_holder
{
	my ($expect) = @_;
	my $session = $holder->background_psql('postgres', on_error_stop => 0);
	$session->query_safe("SELECT idgen_next(), idgen_next('pgedge')");
	my $held = leased($holder);
	signal_server($holder, 'STOP');
	my $frozen_at = time;
	my $nt = leased($taker);
	ok(time - $frozen_at >= $lease_s * 2 / 3 - 0.5,
		"$expect: the id went to another server only after the lease expired");
	is($nt, $held, "$expect: the other server leases the frozen holder's id");
	$taker->safe_psql('postgres', 'TRUNCATE ctl');
	burst_into($taker, 'ctl', 300000);
	my $at = first_ms($taker, 'ctl');
	signal_server($holder, 'CONT');
	$holder->safe_psql('postgres', 'TRUNCATE ctl');
	burst_into($holder, 'ctl', 50000, $at, $session);
	my $woken_err = $session->{stderr};
	$session->quit;
	my @h = ids_of($holder, 'ctl');
	my @t = ids_of($taker, 'ctl');
	return (scalar @h, common(\@h, \@t), $woken_err);
}

is($taker->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'acquiring',
	'the taker waits while the holder holds the only node id');
my ($made, $repeats, $woken_err) = frozen_holder('fenced');
is($made, 0, 'the frozen holder, woken, makes no ID under the node id it lost');
like($woken_err, qr/idgen holds no node id lease/, 'its session is refused');
$holder->poll_query_until('postgres', "SELECT state = 'lost' FROM idgen_node_lease");
is($holder->safe_psql('postgres', 'SELECT state FROM idgen_node_lease'), 'lost',
	'idgen_node_lease shows the lease lost');

# Control: without the fence and the ceiling, the woken holder repeats.
$holder->stop;
$taker->stop;
$holder->append_conf('postgresql.conf', "idgen.lease_test_unsafe = 'fence,ceiling'\n");
$holder->start;
leased($holder);
$taker->start;
($made, $repeats) = frozen_holder('without fence and ceiling');
cmp_ok($repeats, '>', 0,
	"control: without fence and ceiling, the woken holder repeats the new holder's IDs ($repeats of $made)");

$holder->stop;
$taker->stop;

# --- etcd restored from a snapshot: a holder that saw later revisions fences it
my $etcdctl = find_tool('etcdctl');
SKIP:
{
	skip 'etcdctl is not installed (Debian package etcd-client)', 7 unless $etcdctl;

	# The mark of node id 0 etcd holds under the prefix (Unix ms), 0 when none.
	sub etcd_mark
	{
		my ($prefix) = @_;
		my $key = MIME::Base64::encode_base64("/$prefix/mark/0", '');
		my $r = HTTP::Tiny->new(timeout => 5)->post("http://127.0.0.1:$client{e1}/v3/kv/range",
			{ content => qq({"key":"$key"}), headers => { 'Content-Type' => 'application/json' } });
		my ($v) = $r->{content} =~ /"value":"([^"]+)"/;
		return 0 unless $v;
		return (split / /, MIME::Base64::decode_base64($v))[0] + 0;
	}

	# The snapshot is taken before the holder leases node id 0 under the
	# prefix; after the holder made IDs, etcd is restored from it.  The
	# holder's next call sees a revision below those it saw.  Then a taker
	# leases node id 0 and makes IDs at the holder's first millisecond.
	sub restored
	{
		my ($run, $unsafe) = @_;
		my $prefix = "restore_$run";
		for my $n ($holder, $taker)
		{
			$n->adjust_conf('postgresql.conf', 'idgen.node_registry', "'etcd://$endpoints/$prefix'");
			$n->adjust_conf('postgresql.conf', 'idgen.lease_test_unsafe', "'$unsafe'");
		}
		my $snap = "$dir/snap_$run.db";
		system($etcdctl, "--endpoints=127.0.0.1:$client{e1}", 'snapshot', 'save', $snap) == 0
		  or die 'etcdctl snapshot save failed';
		$holder->start;
		is(leased($holder), 0, "$run: the holder leases node id 0 after the snapshot");
		$holder->safe_psql('postgres', 'TRUNCATE ctl');
		burst_into($holder, 'ctl', 300000);
		my $at = first_ms($holder, 'ctl');
		my $offset = -s $holder->logfile;
		stop_daemons(map { $pid{$_} } @members);
		for my $m (@members)
		{
			$data{$m} = "$dir/${m}_$run";
			system($etcdctl, 'snapshot', 'restore', $snap, "--name=$m", "--data-dir=$data{$m}",
				"--initial-cluster=$cluster", '--initial-cluster-token=idgen-test',
				"--initial-advertise-peer-urls=http://127.0.0.1:$peer{$m}") == 0
			  or die 'etcdctl snapshot restore failed';
			start_member($m);
		}
		wait_leader();
		$holder->poll_query_until('postgres', "SELECT state = 'lost' FROM idgen_node_lease")
		  or diag('the holder did not lose its node id: '
			  . $holder->safe_psql('postgres', 'SELECT state, last_error FROM idgen_node_lease'));
		my $fenced = $holder->log_contains('lost history', $offset);
		$taker->start;
		$taker->safe_psql('postgres', 'TRUNCATE ctl');
		my $took = $taker->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease");
		my ($ret, $out, $err) = burst_into($taker, 'ctl', 50000, $at);
		my @h = ids_of($holder, 'ctl');
		my @t = ids_of($taker, 'ctl');
		$holder->stop;
		$taker->stop;
		return ($fenced, scalar @t, common(\@h, \@t), $err);
	}

	# the control first: the fenced run raises the taker's marks a minute ahead
	my ($fenced, $made, $repeats, $why) = restored('blind', 'history');
	ok(!$fenced, 'control: a holder that keeps no history cannot tell');
	cmp_ok($repeats, '>', 0, "control: the taker repeats the holder's IDs ($repeats of $made)");
	($fenced, $made, $repeats, $why) = restored('fenced', '');
	ok($fenced, 'the holder says etcd lost history');
	is($made, 0, "the taker makes no ID at the holder's time ($repeats repeated)");
	like($why, qr/start at/, 'it says when its IDs start');
}

# --- a password in the setting is refused: members of pg_read_all_settings read it
for my $bad ("etcd://idgen:secret\@$endpoints/x", "etcd://$endpoints/x?user=idgen&password=secret")
{
	my $offset = -s $holder->logfile;
	$holder->adjust_conf('postgresql.conf', 'idgen.node_registry', "'$bad'");
	$holder->start;
	($ret, $out, $err) = $holder->psql('postgres', 'SELECT idgen_next()');
	like($err, qr/idgen.node_registry is invalid/, 'an etcd address with a password is an invalid setting');
	like(substr(slurp_file($holder->logfile), $offset), qr/must not hold a (user or )?password/,
		'the log says why');
	$holder->stop;
}

# --- etcd's authentication: a user whose password is in a file
SKIP:
{
	skip 'etcdctl is not installed (Debian package etcd-client)', 3 unless $etcdctl;
	my @ctl = ($etcdctl, "--endpoints=127.0.0.1:$client{e1}");
	for my $args ([qw(role add root)], [qw(user add root --new-user-password=rootpw)],
		[qw(user grant-role root root)], [qw(role add idgen)],
		[qw(role grant-permission idgen readwrite --prefix=true /auth/)],
		[qw(user add idgen --new-user-password=idgenpw)], [qw(user grant-role idgen idgen)],
		[qw(auth enable)])
	{
		system(@ctl, @$args) == 0 or die "etcdctl @$args failed";
	}
	my $passfile = "$dir/etcd_password";
	PostgreSQL::Test::Utils::append_to_file($passfile, "idgenpw\n");
	chmod 0644, $passfile;
	$holder->adjust_conf('postgresql.conf', 'idgen.node_registry',
		"'etcd://$endpoints/auth?user=idgen&passfile=$passfile'");
	$holder->start;
	is(leased($holder), 0, 'a server authenticated as an etcd user leases a node id');
	is($holder->safe_psql('postgres', 'SELECT registry FROM idgen_node_lease'),
		"etcd://$endpoints/auth?user=idgen", 'idgen_node_lease names the user, not the password file');
	$holder->stop;
	$holder->adjust_conf('postgresql.conf', 'idgen.node_registry',
		"'etcd://$endpoints/other?user=idgen&passfile=$passfile'");
	$holder->start;
	$holder->poll_query_until('postgres', "SELECT last_error ~ 'permission denied' FROM idgen_node_lease")
	  or diag($holder->safe_psql('postgres', 'SELECT last_error FROM idgen_node_lease'));
	like($holder->safe_psql('postgres', 'SELECT last_error FROM idgen_node_lease'), qr/permission denied/,
		'outside its permissions, it leases nothing, and says why');
	$holder->stop;
}

# --- TLS with a client certificate: one etcd member of its own
SKIP:
{
	my $openssl = find_tool('openssl');
	skip 'openssl is not installed', 1 unless $openssl;
	my $ssl = sub { system($openssl, @_) == 0 or die "openssl @_ failed" };
	$ssl->(qw(req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=idgen-test-ca),
		'-keyout', "$dir/ca.key", '-out', "$dir/ca.pem");
	for my $who (qw(server client))
	{
		$ssl->(qw(req -newkey rsa:2048 -nodes), '-subj', "/CN=$who", '-keyout', "$dir/$who.key",
			'-out', "$dir/$who.csr");
		PostgreSQL::Test::Utils::append_to_file("$dir/$who.ext",
			"subjectAltName = IP:127.0.0.1\nextendedKeyUsage = " . ($who eq 'server' ? 'serverAuth, clientAuth' : 'clientAuth') . "\n");
		$ssl->(qw(x509 -req -days 1), '-in', "$dir/$who.csr", '-CA', "$dir/ca.pem", '-CAkey', "$dir/ca.key",
			'-CAcreateserial', '-extfile', "$dir/$who.ext", '-out', "$dir/$who.pem");
	}
	# etcd's gateway calls etcd's gRPC with the server's certificate, as a client
	chmod 0644, map { "$dir/$_" } qw(ca.pem client.pem client.key);
	my ($tls_client, $tls_peer) = map { PostgreSQL::Test::Cluster::get_free_port() } 1 .. 2;
	start_daemon(
		[
			$etcd, '--name=tls', "--data-dir=$dir/tls",
			"--listen-client-urls=https://127.0.0.1:$tls_client",
			"--advertise-client-urls=https://127.0.0.1:$tls_client",
			"--listen-peer-urls=http://127.0.0.1:$tls_peer",
			"--initial-advertise-peer-urls=http://127.0.0.1:$tls_peer",
			"--initial-cluster=tls=http://127.0.0.1:$tls_peer",
			"--cert-file=$dir/server.pem", "--key-file=$dir/server.key",
			'--client-cert-auth', "--trusted-ca-file=$dir/ca.pem"
		],
		"$dir/tls.log");
	$holder->adjust_conf('postgresql.conf', 'idgen.node_registry',
		"'etcds://127.0.0.1:$tls_client/tls?cacert=$dir/ca.pem&cert=$dir/client.pem&key=$dir/client.key'");
	$holder->start;
	is(leased($holder), 0, 'a server with a client certificate leases a node id from etcd over TLS');
	$holder->stop;
}
done_testing();
