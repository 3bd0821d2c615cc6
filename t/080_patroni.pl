# Three Patroni members (Debian's patroni, etcd on loopback) and a client
# taking IDs and blocks from whichever member leads (libpq multi-host,
# target_session_attrs=read-write), recording every one as a range.  Both
# standbys stop receiving WAL for 3 s (their walreceivers SIGSTOPped; what
# they had not read is then lost, as in a network partition) while their
# clocks run 15 s behind, within idgen.max_clock_regression_ms; the leader is
# SIGKILLed (Patroni, the postmaster and its children) and Patroni promotes
# another member.  With synchronous_mode and one shared node id, no ID handed
# out is issued again; asynchronous with a node id per member, neither.  The
# control: asynchronous with one shared node id (availability first,
# maximum_lag_on_failover large) does issue IDs again.  The synchronous run
# goes on: the new leader is frozen (SIGSTOP: Patroni, the postmaster and its
# children) until the other member is elected, then woken, and Patroni
# rewinds it into a replica; a switchover makes it lead again, and a second
# switchover hands back.  Each member that rejoins has an idgen_hwm at or
# above the last ID it issued, and none of the IDs is issued twice.  Last,
# asynchronous with no node id set by hand: the members lease theirs from a
# registry database (idgen.node_registry, node_bits 0: one node id for three
# members, with the clocks in step); the leader is killed, the new one
# frozen past its lease until another is elected, then woken: the node id
# changes hands twice, the woken member hands out nothing, and nothing is
# issued twice.  The same with the node id leased from the etcd Patroni
# uses (idgen.node_registry = 'etcd://...'), and synchronous through the
# leader's kill.
#
# Runs alone: beside other tests, a loaded machine's slower failover left
# the control's window without a repeat (scripts/lib.sh).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use POSIX ':sys_wait_h';
use Time::HiRes qw(time sleep);

require_test_extra('integration');

my $patroni = find_tool('patroni');
my $etcd = find_tool('etcd');
plan skip_all => 'patroni and etcd are not installed (Debian packages patroni, etcd-server)'
  unless $patroni && $etcd;

my $bindir = `pg_config --bindir`;
chomp $bindir;
my $port = sub { PostgreSQL::Test::Cluster::get_free_port() };

# Postmasters Patroni started run in their own sessions: kill them at exit.
my @datadirs;
sub kill_postmasters
{
	for my $d (@datadirs)
	{
		next unless open my $fh, '<', "$d/postmaster.pid";
		my $pid = <$fh>;
		chomp $pid if $pid;
		kill 'KILL', $pid if $pid && $pid =~ /^\d+$/;
	}
	return;
}
END
{
	local $?;
	kill_postmasters();
}

my @members = qw(m1 m2 m3);
my ($dir, $etcd_client, %pg_port, %patroni_pid, %frozen, $registry);

# One run: etcd and three Patroni members (shared node id 5, or 1, 2, 3 each
# in the member's own postgresql.parameters); returns the IDs the client got
# before, while the standbys received nothing, and from the new leader, how
# many of them were repeated, and how long the failover took.
sub member_conf
{
	my ($m, $rest, $local, $sync, $own_node_ids) = @_;
	my $shared_id = $own_node_ids ? '' : "        idgen.node_id: 5\n";
	$shared_id = "        idgen.node_registry: '" . conninfo($registry) . "'\n"
	  . "        idgen.node_lease_s: 5\n        idgen.node_bits: 0\n"
	  if $own_node_ids eq 'lease';
	# the etcd Patroni uses for its DCS
	$shared_id = "        idgen.node_registry: 'etcd://127.0.0.1:$etcd_client/idgen'\n"
	  . "        idgen.node_lease_s: 5\n        idgen.node_bits: 0\n"
	  if $own_node_ids eq 'etcd';
	return qq(scope: idgen
name: $m
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1073741824
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      parameters:
        shared_preload_libraries: idgen
$shared_id        wal_level: replica
        idgen.max_clock_regression_ms: 20000
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: 'on'
  initdb:
    - auth: trust
    - encoding: UTF8
postgresql:
  listen: 127.0.0.1:$pg_port{$m}
  connect_address: 127.0.0.1:$pg_port{$m}
  data_dir: $dir/$m
  bin_dir: $bindir
  pgpass: $dir/pgpass_$m
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  # a standby's base backup starts at once, not after a spread checkpoint
  basebackup:
    - checkpoint: 'fast'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: '$dir'
$local
);
}

sub start_member
{
	my ($m, $local, $sync, $own_node_ids) = @_;
	my $rest = $port->();
	$local .= "\n    idgen.node_id: " . substr($m, 1) if $own_node_ids eq '1';
	PostgreSQL::Test::Utils::append_to_file("$dir/$m.yml",
		member_conf($m, $rest, $local, $sync, $own_node_ids));
	$patroni_pid{$m} = start_daemon([ $patroni, "$dir/$m.yml" ], "$dir/$m.log");
}

sub psql_on
{
	my ($m, $sql) = @_;
	my ($out, $err) = ('', '');
	eval {
		IPC::Run::run([ 'psql', '-XAtq', '-h', '127.0.0.1', '-p', $pg_port{$m}, '-U', 'postgres',
			'-d', 'postgres', '-c', $sql ], '>', \$out, '2>', \$err, IPC::Run::timeout(10));
	};
	chomp $out;
	return $out;
}

sub wait_for
{
	my ($what, $seconds, $check) = @_;
	my $end = time() + $seconds;
	while (time() < $end)
	{
		my $r = eval { $check->() };
		return $r if $r;
		sleep 0.3;
	}
	return undef;
}

sub leader
{
	for my $m (@members)
	{
		next unless $patroni_pid{$m} && !$frozen{$m};
		return $m if eval { psql_on($m, 'SELECT pg_is_in_recovery()') } eq 'f';
	}
	return undef;
}

# The client: inserts and bare SELECTs through a multi-host connection string,
# each statement allowed 300 ms; every ID it got is recorded with the port of
# the member that issued it.
# Each ID handed out as a range [first, count, port]: 200 blocks of 4096 per call,
# each a whole millisecond of one worker id, cover most milliseconds, so two
# servers generating in the same milliseconds with the same node id repeat
# IDs, not merely could.
my (@handed, $connstr);

# The client tries the members in this order.
sub set_connstr
{
	my $hosts = join(',', map { '127.0.0.1' } @_);
	my $ports = join(',', map { $pg_port{$_} } @_);
	$connstr = "host=$hosts port=$ports dbname=postgres user=postgres "
	  . "target_session_attrs=read-write connect_timeout=2 options='-c statement_timeout=300'";
	return;
}

# The client, for $seconds.
sub client_for
{
	my ($seconds) = @_;
	my $end = time() + $seconds;
	while (time() < $end)
	{
		my ($out, $err) = ('', '');
		# A call that hangs past 10 s is killed and counts as a failure.
		eval {
			IPC::Run::run(
			[
				'psql', '-XAtq', '-d', $connstr,
				'-c', 'INSERT INTO ids DEFAULT VALUES RETURNING id, 1, inet_server_port()',
				'-c', 'SELECT idgen_next(), 1, inet_server_port() FROM generate_series(1, 50)',
				'-c', 'SELECT idgen_next_block(4096), 4096, inet_server_port() FROM generate_series(1, 200)'
			],
			'>', \$out, '2>', \$err, IPC::Run::timeout(10));
		};
		push @handed, map { [ split /\|/ ] } grep { /^\d+\|\d+\|\d+$/ } split /\n/, $out;
	}
	return;
}

# The client until it got $want more IDs or blocks (at most 180 s): a count,
# where a time would ask a loaded machine for a rate.
sub client_count
{
	my ($want) = @_;
	my $until = @handed + $want;
	my $end = time() + 180;
	client_for(1) while @handed < $until && time() < $end;
	return;
}

# How many of the ranges handed out overlap an earlier one.
sub repeats
{
	my @sorted = sort { $a->[0] <=> $b->[0] } @handed;
	my ($n, $reach) = (0, -1);
	for my $r (@sorted)
	{
		$n++ if $r->[0] <= $reach;
		my $last = $r->[0] + $r->[1] - 1;
		$reach = $last if $last > $reach;
	}
	return $n;
}


# Keeps the client taking IDs until $check holds; returns its result, or
# undef after $seconds.
sub client_until
{
	my ($seconds, $check) = @_;
	my $end = time() + $seconds;
	while (time() < $end)
	{
		my $r = eval { $check->() };
		return $r if $r;
		client_for(1);
	}
	return undef;
}

# Patroni's view (patronictl list): member => [role, state].
sub patroni_members
{
	my ($via) = @_;
	my ($out, $err) = ('', '');
	eval {
		IPC::Run::run([ 'patronictl', '-c', "$dir/$via.yml", 'list', '-f', 'json' ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(15));
	};
	my $list = eval { decode_json($out) } // [];
	return map { $_->{Member} => [ $_->{Role}, $_->{State} ] } @$list;
}

# $m is a synchronous standby that Patroni reports running or streaming and
# whose walreceiver streams.
sub sync_replica
{
	my ($m, $via) = @_;
	my %members = patroni_members($via);
	my $r = $members{$m} or return 0;
	return $r->[0] eq 'Sync Standby' && $r->[1] =~ /^(running|streaming)$/
	  && psql_on($m, 'SELECT status FROM pg_stat_wal_receiver') eq 'streaming';
}

# $m streams from $via, which PostgreSQL counts as its synchronous standby.
sub streams_as_sync
{
	my ($m, $via) = @_;
	return psql_on($via, "SELECT sync_state FROM pg_stat_replication WHERE application_name = '$m'") eq 'sync'
	  && psql_on($m, 'SELECT status FROM pg_stat_wal_receiver') eq 'streaming';
}

sub postmaster_of
{
	my ($m) = @_;
	open my $fh, '<', "$dir/$m/postmaster.pid" or die "$m: $!";
	my $pid = <$fh>;
	chomp $pid;
	return $pid;
}

# How many times Patroni rewound $m with pg_rewind.
sub rewinds
{
	my ($m) = @_;
	my @runs = (slurp_file("$dir/$m.log") =~ /pg_rewind exit code=0/g);
	return scalar @runs;
}

# The highest ID $m issued, and its time (Unix ms, from idgen_decode).
sub last_issued
{
	my ($m, $via) = @_;
	my $max = 0;
	for my $r (grep { $_->[2] == $pg_port{$m} } @handed)
	{
		my $last = $r->[0] + $r->[1] - 1;
		$max = $last if $last > $max;
	}
	return ($max, psql_on($via, "SELECT (extract(epoch FROM (idgen_decode($max)).ts) * 1000)::bigint"));
}

# The default layout's highest mark in $m's idgen_hwm (Unix ms).
sub hwm_mark
{
	my ($m) = @_;
	my $mark = 0;
	open my $fh, '<', "$dir/$m/idgen_hwm" or return 0;
	while (<$fh>)
	{
		# layout epoch mark [node_id node_bits]: the highest over node ids
		$mark = $1 if /^idgen -?\d+ (\d+)(?: \d+ \d+)?$/ && $1 > $mark;
	}
	return $mark;
}

# The rejoined member $m's idgen_hwm is at or above the last ID it issued.
sub rejoined_mark
{
	my ($name, $m, $via) = @_;
	my ($last, $last_ms) = last_issued($m, $via);
	my $mark = hwm_mark($m);
	note("$name: $m issued up to $last ($last_ms ms); rejoined, its idgen_hwm holds $mark");
	cmp_ok($mark, '>=', $last_ms, "$name: $m\'s idgen_hwm, rejoined, is at or above the time of the last ID it issued");
	return;
}

# patronictl switchover from $from to $to while the client takes IDs; true
# once $to leads and $from streams from it as its synchronous standby, and $to
# has issued IDs since.
sub switchover
{
	my ($from, $to) = @_;
	my $start = @handed;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open STDOUT, '>>', "$dir/switchover.log" or die $!;
		open STDERR, '>&', \*STDOUT or die $!;
		exec('patronictl', '-c', "$dir/$to.yml", 'switchover', '--leader', $from,
			'--candidate', $to, '--force', 'idgen') or die "patronictl: $!";
	}
	my $t0 = time();
	client_until(60, sub { waitpid($pid, WNOHANG) == $pid });
	my $done = client_until(180, sub { (leader() // '') eq $to && sync_replica($from, $to) });
	client_for(1);
	my $issued = grep { $_->[2] == $pg_port{$to} } @handed[ $start .. $#handed ];
	note(sprintf('switchover %s -> %s: %.1f s; %d IDs or blocks from %s since', $from, $to, time() - $t0, $issued, $to));
	return $done && $issued > 0;
}

# Freezes member $m (SIGSTOP: Patroni, the postmaster and its children);
# returns the processes stopped, for wake().
sub freeze
{
	my ($m) = @_;
	my $pm = postmaster_of($m);
	kill 'STOP', $pm;
	my @children = split ' ', `ps -o pid= --ppid $pm`;
	kill 'STOP', -$patroni_pid{$m}, @children;
	$frozen{$m} = 1;
	return ($pm, @children);
}

sub wake
{
	my ($m, @stopped) = @_;
	kill 'CONT', -$patroni_pid{$m}, @stopped;
	delete $frozen{$m};
	return;
}

# After the failover: the new leader $second is frozen (SIGSTOP: Patroni, the
# postmaster and its children) until the remaining member $third is elected,
# then woken; once one of the two leads and the other follows it as its
# synchronous standby, a switchover hands over to the follower and another
# hands back.  Each rejoined member's
# idgen_hwm is checked.  The client keeps taking IDs from whichever member
# leads.
sub freeze_and_switchovers
{
	my ($name, $second) = @_;
	my ($third) = grep { $_ ne $second && $patroni_pid{$_} } @members;
	ok(client_until(180, sub { sync_replica($third, $second) }),
		"$name: $third is $second\'s synchronous standby");

	# The client tries the frozen leader first, so that once woken it gets
	# whatever that member still hands out before Patroni demotes it.
	set_connstr($second, grep { $_ ne $second } @members);
	my @stopped = freeze($second);
	my $t0 = time();
	my $elected = client_until(60, sub { (leader() // '') eq $third });
	ok($elected, sprintf('%s: %s elected after %.1f s while %s was frozen', $name, $third, time() - $t0, $second));
	client_for(2);
	my $woken = @handed;
	my $rewound = rewinds($second);
	wake($second, @stopped);
	# Usually $second is demoted and rejoins $third.  Patroni may also let
	# the woken $second take the leader key back and demote $third; and
	# after the freeze its synchronous standby key may stay stale, which
	# only Patroni's switchovers depend on.  What idgen needs: one leads, the
	# other streams from it as PostgreSQL's synchronous standby.
	my ($lead, $follower);
	my $settled = client_until(180, sub {
		my $l = leader() // return 0;
		my ($f) = grep { $_ ne $l } ($second, $third);
		return 0 unless ($l eq $second || $l eq $third) && streams_as_sync($f, $l);
		($lead, $follower) = ($l, $f);
		return 1;
	});
	ok($settled, "$name: $second, woken, and $third settle as a leader and a synchronous standby");
	my $late = grep { $_->[2] == $pg_port{$second} } @handed[ $woken .. $#handed ];
	note("$name: " . ($settled ? "$lead leads, $follower follows" : 'unsettled')
	  . "; $second issued $late IDs or blocks after it woke, and "
	  . (rewinds($second) - $rewound) . ' pg_rewind run(s) followed');
	rejoined_mark($name, $follower, $lead) if $settled;

	SKIP:
	{
		skip "Patroni does not list $follower as its synchronous standby after the freeze", 3
		  unless $settled && client_until(60, sub { sync_replica($follower, $lead) });
		# The follower leads; the old leader, shut down cleanly, rejoins.
		ok(switchover($lead, $follower), "$name: switchover to $follower, which issues IDs again; $lead rejoins and streams");
		rejoined_mark($name, $lead, $follower);
		ok(switchover($follower, $lead), "$name: switchover back to $lead, which issues IDs again");
	}
	client_for(2);
	my %by_port = map { $pg_port{$_} => $_ } @members;
	my %issued;
	$issued{ $by_port{ $_->[2] } }++ for @handed;
	note("$name: IDs or blocks by member: " . join(', ', map { "$_ $issued{$_}" } sort keys %issued));
	return;
}

# Asynchronous: the leader $second is frozen (SIGSTOP: Patroni, the
# postmaster and its children) until another member is elected, which takes
# longer than its lease; then woken, while the client tries it first.
sub freeze_leader
{
	my ($name, $second) = @_;
	set_connstr($second, grep { $_ ne $second } @members);
	my @stopped = freeze($second);
	my $t0 = time();
	my $elected = client_until(60, sub { my $l = leader() // ''; $l ne '' && $l ne $second });
	ok($elected, sprintf('%s: another member elected after %.1f s while %s was frozen', $name, time() - $t0, $second));
	client_for(3);
	my $woken = @handed;
	wake($second, @stopped);
	client_for(5);
	my @after = @handed[ $woken .. $#handed ];
	my $late = grep { $_->[2] == $pg_port{$second} } @after;
	my $others = grep { $_->[2] != $pg_port{$second} } @after;
	# Its lease ran out, but a registry that heard from no holder for longer
	# than half a lease extends such a lease once, as after its own outage
	# (docs/node-ids.md): the woken leader may come back with its node id,
	# if no member took it meanwhile, and then no other member makes IDs.
	ok($late == 0 || $others == 0,
		"$name: $second, woken after its lease ran out, makes IDs only while no other member does ($late and $others)");
	note("$name: leases on the registry: "
	  . $registry->safe_psql('postgres', q(SELECT string_agg(format('%s %s held=%s', node_id, holder, held), '; ' ORDER BY node_id) FROM idgen_leases)))
	  if $registry;
	return;
}

sub scenario
{
	my ($name, $sync, $own_node_ids, $more) = @_;
	$dir = PostgreSQL::Test::Utils::tempdir();
	%pg_port = ();
	%patroni_pid = ();
	@datadirs = ();
	my $etcd_peer;
	($etcd_client, $etcd_peer) = ($port->(), $port->());
	start_daemon(
		[
			$etcd, '--name=e1', "--data-dir=$dir/etcd",
			"--listen-client-urls=http://127.0.0.1:$etcd_client",
			"--advertise-client-urls=http://127.0.0.1:$etcd_client",
			"--listen-peer-urls=http://127.0.0.1:$etcd_peer",
			"--initial-advertise-peer-urls=http://127.0.0.1:$etcd_peer",
			"--initial-cluster=e1=http://127.0.0.1:$etcd_peer"
		],
		"$dir/etcd.log");

	for my $m (@members)
	{
		$pg_port{$m} = $port->();
		push @datadirs, "$dir/$m";
	}
	$registry = idgen_node("registry_$name", "idgen.node_id = 0\n") if $own_node_ids eq 'lease';

	# The standbys' clocks run 15 s behind (more than a failover takes here),
	# within idgen.max_clock_regression_ms; not where node ids are leased,
	# whose new holder starts above its predecessor's last renewal.
	start_member('m1', '', $sync, $own_node_ids);
	my $first = wait_for('m1 leads', 60, sub { leader() });
	ok($first, "$name: Patroni bootstrapped a leader ($first)")
	  or give_up("$name: no Patroni member became leader within 60 s", "$dir/m1.log", "$dir/etcd.log");
	psql_on($first, 'CREATE EXTENSION idgen; CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT idgen_next())');
	my $leased = $own_node_ids eq 'lease' || $own_node_ids eq 'etcd';
	my $behind = $leased ? '' : "    idgen.clock_offset_ms: -15000";
	start_member($_, $behind, $sync, $own_node_ids) for qw(m2 m3);
	my $sync_standbys = $sync eq 'true' ? 1 : 0;
	ok(wait_for('standbys', 90, sub {
		psql_on($first, q(SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming')) eq '2'
		  && psql_on($first, q(SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync')) eq $sync_standbys
	}), "$name: two standbys stream, $sync_standbys synchronous");

	set_connstr(@members);
	@handed = ();
	client_count(21);
	my $before = @handed;
	cmp_ok($before, '>', 20, "$name: the client got $before IDs or blocks from the leader $first");

	# Both standbys stop receiving WAL for 3 s while the client keeps asking.
	my @walreceivers;
	wait_for('walreceivers', 30, sub {
		@walreceivers = grep { $_ } map { psql_on($_, q(SELECT pid FROM pg_stat_wal_receiver)) }
		  grep { $_ ne $first } @members;
		return @walreceivers == 2;
	});
	is(scalar(@walreceivers), 2, "$name: both standbys have a walreceiver");
	kill 'STOP', @walreceivers;
	client_for(3);
	my $while_stopped = @handed - $before;
	note("$while_stopped IDs handed out while the standbys received nothing");

	# The leader dies: Patroni, the postmaster and its children.
	open my $fh, '<', "$dir/$first/postmaster.pid" or die $!;
	my $postmaster = <$fh>;
	chomp $postmaster;
	my @children = split ' ', `ps -o pid= --ppid $postmaster`;
	kill 'KILL', -$patroni_pid{$first};
	kill 'KILL', $postmaster, @children;
	delete $patroni_pid{$first};
	# What the stopped walreceivers had not read is lost, as in a network
	# partition: they are killed (their servers restart) rather than woken.
	kill 'KILL', @walreceivers;
	my $t0 = time();
	my $second = wait_for('a new leader', 60, sub { leader() });
	ok($second, sprintf('%s: Patroni promoted %s after %.1f s', $name, $second // 'nobody', time() - $t0));
	client_count(21);
	my $after = @handed - $before - $while_stopped;
	cmp_ok($after, '>', 20, "$name: the client got $after IDs or blocks from the new leader");
	freeze_and_switchovers($name, $second) if $more && !$leased;
	freeze_leader($name, $second) if $more && $leased;

	my $repeated = repeats();
	note("$name: $before IDs before, $while_stopped while the standbys received nothing, $after after the failover, "
	  . scalar(@handed) . " in all; $repeated repeated");
	stop_daemons();
	kill_postmasters();
	$registry->stop if $own_node_ids eq 'lease';
	undef $registry;
	return ($repeated, scalar(@handed));
}

my ($repeated, $ids) = scenario('sync', 'true', 0, 1);
is($repeated, 0,
	"synchronous_mode, one shared node id, through a kill, a freeze and two switchovers: none of the $ids IDs and blocks handed out is issued again");
($repeated, $ids) = scenario('async', 'false', 0);
cmp_ok($repeated, '>', 0,
	"control: asynchronous, one shared node id: $repeated of the $ids IDs and blocks handed out are issued again");
($repeated, $ids) = scenario('async_own_ids', 'false', 1);
is($repeated, 0, "asynchronous, a node id per member: none of the $ids IDs and blocks handed out is issued again");
($repeated, $ids) = scenario('async_leased', 'false', 'lease', 1);
is($repeated, 0,
	"asynchronous, node ids leased from a registry, through a kill and a freeze: none of the $ids IDs and blocks handed out is issued again");
# synchronous: the leader killed (a frozen one's successor must be the one
# synchronous standby left, which Patroni may not elect within the drill's time)
($repeated, $ids) = scenario('sync_etcd', 'true', 'etcd', 0);
is($repeated, 0,
	"synchronous_mode, node ids leased from Patroni's etcd, through a kill: none of the $ids IDs and blocks handed out is issued again");
($repeated, $ids) = scenario('async_etcd', 'false', 'etcd', 1);
is($repeated, 0,
	"asynchronous, node ids leased from Patroni's etcd, through a kill and a freeze: none of the $ids IDs and blocks handed out is issued again");

done_testing();
