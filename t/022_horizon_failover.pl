# The outbox horizon across a promotion: a primary and a synchronous
# standby with its node id, the standby's clock 3 s behind.  Writers stop,
# the server stays idle for 2.5 s while a poller moves its cursor to the
# horizon, the primary dies and the standby is promoted.  Every row written
# on the promoted standby lies at or above the cursor: idgen_horizon() first
# raises the high-water mark that the standby confirms, so the promoted
# server starts above every horizon returned.  Before 1.5 the horizon passed
# the standby's marks while the server was idle, and the promoted server
# wrote rows below the cursor, which the poller never read.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = idgen_node('hf_primary', "idgen.node_id = 5\n", allows_streaming => 1);
$primary->safe_psql('postgres',
	'CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT idgen_next(), body text)');
my $standby = node_from_backup($primary, 'hf_standby',
	conf => "idgen.clock_offset_ms = -3000\n");
$primary->safe_psql('postgres', q(
	ALTER SYSTEM SET synchronous_standby_names = '*';
	SELECT pg_reload_conf();));
$primary->poll_query_until('postgres', q(
	SELECT sync_state = 'sync' FROM pg_stat_replication)) or die 'standby not synchronous';

$primary->safe_psql('postgres', "INSERT INTO outbox (body) SELECT 'before' FROM generate_series(1, 100)");
# Idle longer than a mark's step, then the poll: the horizon has moved past
# every mark written while the writers ran.
sleep(2.5);
my $cursor = $primary->safe_psql('postgres', 'SELECT idgen_horizon()');
is($primary->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE id < $cursor"), '100',
	'the poll reads the 100 rows written before');
$primary->stop('immediate');
$standby->promote;
$standby->safe_psql('postgres', "INSERT INTO outbox (body) SELECT 'after' FROM generate_series(1, 100)");
is($standby->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE body = 'after' AND id < $cursor"), '0',
	'no row written after the promotion lies below the cursor');
$standby->stop;

done_testing();
