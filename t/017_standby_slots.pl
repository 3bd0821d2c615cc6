# Logical replication and failover on PostgreSQL 17 and later: with the
# standby's slot in synchronized_standby_slots and the subscription's slot a
# failover slot, the publisher sends the subscriber no change the standby
# lacks, so no subscriber holds an ID that the promoted standby (same node
# id, clock behind) could issue again.
# README, Standbys and failover.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'synchronized_standby_slots needs PostgreSQL 17 or later'
	if PostgreSQL::Test::Cluster->new('slots_version')->pg_version < 17;

my $primary = idgen_node('slots_primary', "idgen.node_id = 4\n", allows_streaming => 'logical');

$primary->safe_psql('postgres', q(
	CREATE TABLE events (id bigint PRIMARY KEY DEFAULT idgen_next(), era int NOT NULL);
	CREATE PUBLICATION events_pub FOR TABLE events;
	SELECT pg_create_physical_replication_slot('standby1');
));
my $standby = node_from_backup($primary, 'slots_standby', conf => "primary_slot_name = 'standby1'");

my $sub = idgen_node('slots_sub', "idgen.node_id = 9\n");
$sub->safe_psql('postgres', 'CREATE TABLE events (id bigint PRIMARY KEY, era int NOT NULL)');
my $conn = conninfo($primary);
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION s CONNECTION '$conn' PUBLICATION events_pub WITH (failover = true)");
$sub->wait_for_subscription_sync;

$primary->safe_psql('postgres', q(
	ALTER SYSTEM SET synchronized_standby_slots = 'standby1';
	SELECT pg_reload_conf();
	INSERT INTO events (era) SELECT 1 FROM generate_series(1, 1000);
));
$primary->wait_for_catchup($standby);
$primary->wait_for_catchup('s');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM events'), '1000',
	'with the standby attached, the subscriber gets the rows');

# The standby goes away: the primary keeps writing, the subscriber gets none
# of it; the primary dies.
$standby->stop;
# Until the IDs are a second past the marks the standby has: a count of
# ticks, not a time, which a loaded machine fills with fewer rows (at most
# 120 s).
my $past = $primary->safe_psql('postgres', q(
	SELECT idgen_from_timestamp(mark + interval '1 s') FROM idgen_stats WHERE layout = 'idgen'));
die 'no mark in idgen_stats' unless $past =~ /^\d+$/;
my $end = time() + 120;
while (time() < $end)
{
	last if $primary->safe_psql('postgres', qq(
		INSERT INTO events (era) SELECT 2 FROM generate_series(1, 2000);
		SELECT max(id) >= $past FROM events)) eq 't';
}
my $last = $primary->safe_psql('postgres', 'SELECT max(id) FROM events');
sleep(1);
is($sub->safe_psql('postgres', 'SELECT count(*) FROM events WHERE era = 2'), '0',
	'while the standby is away, the subscriber gets no change it lacks');
$primary->stop('immediate');

# The standby takes over, its clock 3 s behind, and the subscriber follows it.
$standby->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -3000');
$standby->start;
$standby->promote;
# New IDs until they pass the primary's last one (at most 120 s).
$end = time() + 120;
while (time() < $end)
{
	last if $standby->safe_psql('postgres', qq(
		INSERT INTO events (era) SELECT 3 FROM generate_series(1, 2000);
		SELECT max(id) > $last FROM events)) eq 't';
}
my @sub_ids = split /\n/, $sub->safe_psql('postgres', 'SELECT id FROM events');
$standby->safe_psql('postgres', 'CREATE TABLE sub_ids (id bigint)');
$standby->safe_psql('postgres',
	'INSERT INTO sub_ids VALUES ' . join(',', map { "($_)" } @sub_ids));
is($standby->safe_psql('postgres', q(
	SELECT count(*) FROM sub_ids JOIN events USING (id) WHERE events.era = 3)), '0',
	'the promoted standby issues no ID the subscriber holds');

$sub->stop;
$standby->stop;
done_testing();
