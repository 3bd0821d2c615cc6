# The node id lease registry (t/057) losing commits: restored from a dump
# into a new cluster, or failed over to an asynchronous standby that missed
# renewals.  The next holder starts above the old one's IDs, and only after
# a frozen holder stopped; the controls, a registry that cannot tell,
# repeat them, and hand the node id over first.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest qw(:DEFAULT :lease);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $lease_s = 5;

# --- the registry loses commits while a holder runs.  The old holder's
# clock is 8 s ahead of the new holder's, and it makes IDs past the mark
# the lost registry's copy holds; every server is stopped for a lease and
# a second before the new holder starts.  The registry, on another cluster
# or timeline than its rows were written on, must make the new holder
# start above every ID the old one could have made.  The control: the same
# registry made to believe it is the cluster and timeline it was, and that
# it answered a call just now, as one that cannot tell (1.5's), lets the
# new holder repeat the old one's IDs.
#
# $how->{start}: the registry (its conninfo, and state for the rest);
# $how->{copy}: takes what the registry will lose from (a dump, a standby
# cut off from the primary); $how->{replace}: the registry that answers
# after the loss, the lost one stopped.
#
# Each run is [name, blind, how]: the runs, each with servers and a
# registry of its own, go in step, so that they wait for their clocks and
# leases together.  Returns, for each run, how far above the old holder's
# last ID the new one starts (ms), how many IDs it repeated of the old
# one's, how many it made, and the log of the registry that answered.
sub registry_lost
{
	my @runs = map { { name => $_->[0], blind => $_->[1], how => $_->[2] } } @_;
	for my $r (@runs)
	{
		my $conninfo;
		($conninfo, $r->{st}) = $r->{how}{start}->($r->{name});
		$r->{conf} = "idgen.node_registry = '$conninfo'\nidgen.node_lease_s = $lease_s\nidgen.node_bits = 0\n";
		$r->{old} = idgen_node("$r->{name}_old", $r->{conf} . "idgen.clock_offset_ms = 8000\n");
		$r->{old}->safe_psql('postgres', 'CREATE TABLE ctl (id bigint)');
		leased($r->{old});
		$r->{how}{copy}->($r->{st});
		$r->{copied_at} = $r->{old}->safe_psql('postgres', 'SELECT clock_timestamp()');
	}
	for my $r (@runs)
	{
		# past the mark the copy holds: the old holder's clock plus a lease and 2 s
		$r->{old}->poll_query_until('postgres',
			"SELECT clock_timestamp() > '$r->{copied_at}'::timestamptz + interval '${\ ($lease_s + 6) } s'")
		  or die 'no time passed';
		burst_into($r->{old}, 'ctl', 300000);
		$r->{o} = [ ids_of($r->{old}, 'ctl') ];
		$r->{at} = first_ms($r->{old}, 'ctl');
		$r->{old_last_ms} = $r->{old}->safe_psql('postgres',
			"SELECT (extract(epoch FROM (idgen_decode(max(id), 'pgedge')).ts) * 1000)::bigint FROM ctl");
		$r->{st}{primary}->stop('immediate');
		$r->{old}->stop;
	}
	sleep($lease_s + 1);
	my @results;
	for my $r (@runs)
	{
		my $r2 = $r->{how}{replace}->($r->{st});
		$r2->safe_psql('postgres', q{UPDATE idgen_lease_registry
			SET system_identifier = (pg_control_system()).system_identifier, answered_at = clock_timestamp(),
				timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer})
		  if $r->{blind};
		my $new = idgen_node("$r->{name}_new", $r->{conf});
		$new->safe_psql('postgres', 'CREATE TABLE ctl (id bigint)');
		leased($new);
		my $previous_mark_ms = $new->safe_psql('postgres',
			'SELECT (extract(epoch FROM previous_mark) * 1000)::bigint FROM idgen_node_lease');
		burst_into($new, 'ctl', 50000, $r->{at});
		my @n = ids_of($new, 'ctl');
		my $log = slurp_file($r2->logfile);
		$_->stop for $new, $r2;
		push @results, [ $previous_mark_ms - $r->{old_last_ms}, common($r->{o}, \@n), scalar @n, $log ];
	}
	return @results;
}

# Its last pg_dump restored into a new cluster at the same address.
my $restored = {
	start => sub {
		my ($name) = @_;
		my $r1 = idgen_node("${name}_reg", "idgen.node_id = 0\n");
		return (conninfo($r1), { primary => $r1, name => $name });
	},
	copy => sub {
		my ($st) = @_;
		$st->{dump} = PostgreSQL::Test::Utils::tempdir() . '/registry.dump';
		PostgreSQL::Test::Utils::system_or_bail('pg_dump', '-Fc', '-f', $st->{dump}, '-d',
			$st->{primary}->connstr('postgres'));
	},
	replace => sub {
		my ($st) = @_;
		my $r2 = PostgreSQL::Test::Cluster->new("$st->{name}_reg2", port => $st->{primary}->port);
		$r2->init;
		$r2->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\nidgen.node_id = 0\n");
		$r2->start;
		PostgreSQL::Test::Utils::system_or_bail('pg_restore', '-d', $r2->connstr('postgres'), $st->{dump});
		return $r2;
	},
};

# An asynchronous standby, cut off from its primary (no more WAL), promoted;
# the servers' connection string names both, read-write.
my $failed_over = {
	start => sub {
		my ($name) = @_;
		my $rp = idgen_node("${name}_rp", "idgen.node_id = 0\n", allows_streaming => 1);
		$rp->backup("${name}_b");
		my $rs = PostgreSQL::Test::Cluster->new("${name}_rs");
		$rs->init_from_backup($rp, "${name}_b", has_streaming => 1);
		$rs->start;
		my $both = 'host=' . $rp->host . ',' . $rs->host . ' port=' . $rp->port . ',' . $rs->port
		  . ' dbname=postgres target_session_attrs=read-write';
		return ($both, { primary => $rp, standby => $rs });
	},
	copy => sub {
		my ($st) = @_;
		$st->{primary}->wait_for_catchup($st->{standby});
		$st->{standby}->safe_psql('postgres', "ALTER SYSTEM SET primary_conninfo = ''");
		$st->{standby}->reload;
		$st->{standby}->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
		  or die 'the standby still receives WAL';
	},
	replace => sub {
		my ($st) = @_;
		$st->{standby}->promote;
		return $st->{standby};
	},
};

# The registry fails over to an asynchronous standby that missed the last
# renewals while the holder's lease worker is frozen: the holder's backends
# generate until its fence passes, and the promoted standby, on a new
# timeline, gives the node id to another server only after that.  The
# control, a standby that cannot tell, gives it at once, while the old
# holder still generates.  Returns how long before the new holder leased
# the node id the old one stopped generating, by the registry's clock
# (one machine).
sub failover_while_frozen
{
	my ($name, $blind) = @_;
	# Longer than the rest: the control's registry fails over and its next
	# holder starts while the frozen holder's lease lasts, which took more
	# than 5 s on a loaded machine.
	my $frozen_lease_s = 15;
	my ($conninfo, $st) = $failed_over->{start}->($name);
	my $conf = "idgen.node_registry = '$conninfo'\nidgen.node_lease_s = $frozen_lease_s\nidgen.node_bits = 0\n";
	my $old = idgen_node("${name}_old", $conf);
	leased($old);
	my $new = PostgreSQL::Test::Cluster->new("${name}_new");
	$new->init;
	$new->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n$conf");
	$failed_over->{copy}->($st);
	my $copied_at = $old->safe_psql('postgres', 'SELECT clock_timestamp()');
	# the standby's copy of the lease runs out; the primary's is renewed,
	# just now: the worker freezes with most of a lease left
	$old->poll_query_until('postgres',
		"SELECT clock_timestamp() > '$copied_at'::timestamptz + interval '${\ ($frozen_lease_s + 1) } s'"
		  . " AND state = 'held' AND renewed_at > clock_timestamp() - interval '300 ms' FROM idgen_node_lease")
	  or die 'the old holder did not renew';
	my $loop = $old->background_psql('postgres', on_error_stop => 0);
	$loop->query_until(qr/looping/, q{\echo looping
		DO $$ BEGIN
			LOOP PERFORM idgen_next(); PERFORM pg_sleep(0.002); END LOOP;
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RAISE NOTICE 'refused at %', extract(epoch FROM clock_timestamp());
		END $$;
	});
	my $worker = worker_pid($old);
	kill 'STOP', $worker;
	$st->{primary}->stop('immediate');
	my $r2 = $failed_over->{replace}->($st);
	$r2->safe_psql('postgres', q{UPDATE idgen_lease_registry
		SET timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer,
			answered_at = clock_timestamp()})
	  if $blind;
	$new->start;
	$new->safe_psql('postgres', 'CREATE EXTENSION idgen');
	leased($new);
	my $acquired_at = $r2->safe_psql('postgres',
		'SELECT extract(epoch FROM acquired_at) FROM idgen_leases WHERE node_id = 0');
	$loop->quit;
	kill 'CONT', $worker;
	my $refused_at = $loop->{stderr} =~ /refused at ([\d.]+)/ ? $1 : 'inf';
	$_->stop for $old, $new, $r2;
	return $acquired_at - $refused_at;
}

my $stopped_before = failover_while_frozen('frozen_async', 0);
cmp_ok($stopped_before, '>', 0, sprintf(
	'registry failed over to a standby that missed renewals: the frozen holder stopped %.2f s before its node id changed hands',
	$stopped_before));
$stopped_before = failover_while_frozen('frozen_async_blind', 1);
cmp_ok($stopped_before, '<', 0, sprintf(
	'control: a standby that cannot tell gives the node id away %.2f s before the frozen holder stops',
	-$stopped_before));

# The four runs at once: each way to lose commits, and its control.
my @losses = ([ 'restored into a new cluster', 'lost', $restored ],
	[ 'an asynchronous standby promoted', 'async', $failed_over ]);
my @lost = registry_lost(map { ([ $_->[1], 0, $_->[2] ], [ "$_->[1]_blind", 1, $_->[2] ]) } @losses);
foreach my $loss (@losses)
{
	my $what = $loss->[0];
	my ($ahead, $repeated, $new_made, $reg_log) = @{ shift @lost };
	cmp_ok($ahead, '>', 0, "$what: the registry makes the new holder start above the old holder's IDs");
	is($repeated, 0, "$what: the new holder repeats none of them (it made $new_made where the old one did)");
	like($reg_log, qr/the node id lease registry lost commits: no node id is leased before/,
		"$what: the registry logs that it lost commits");
	($ahead, $repeated, $new_made) = @{ shift @lost };
	cmp_ok($ahead, '<', 0, "$what, control: a registry that cannot tell starts the new holder below them");
	cmp_ok($repeated, '>', 0, "$what, control: and the new holder repeats them ($repeated of $new_made)");
}

done_testing();
