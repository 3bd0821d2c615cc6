# The outbox horizon while a commit is held between its commit record and
# its visibility: a synchronous standby's receiver stopped, a transaction
# that took an ID waits in COMMIT, invisible to readers.  Meanwhile another
# session commits a later row without waiting (synchronous_commit = local).
# idgen_horizon() must stay at or below the held row's ID until the row is
# visible, or a poller following docs/outbox.md moves past it and never
# reads it.  The control, a poller whose cursor is the largest ID it has
# seen, does move past it: the held row is what the horizon protects.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = idgen_node('held_primary', "idgen.node_id = 5\n", allows_streaming => 1);
$primary->safe_psql('postgres',
	'CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT idgen_next(), body text)');
my $standby = node_from_backup($primary, 'held_standby');
$primary->safe_psql('postgres', q(
	ALTER SYSTEM SET synchronous_standby_names = '*';
	SELECT pg_reload_conf();));
$primary->poll_query_until('postgres', q(SELECT sync_state = 'sync' FROM pg_stat_replication))
  or die 'standby not synchronous';
$primary->safe_psql('postgres', "INSERT INTO outbox (body) SELECT 'before' FROM generate_series(1, 10)");

my $receiver = $standby->safe_psql('postgres', 'SELECT pid FROM pg_stat_wal_receiver');
kill 'STOP', $receiver;

my $held = $primary->background_psql('postgres');
my $held_id = $held->query_safe(q(BEGIN; INSERT INTO outbox (body) VALUES ('held') RETURNING id));
$held->query_until(qr/^$/, "COMMIT;\n");
$primary->poll_query_until('postgres',
	q(SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep'))
  or die 'the commit did not wait for the standby';

my $later = $primary->safe_psql('postgres', q(
	SET synchronous_commit = local;
	INSERT INTO outbox (body) VALUES ('later') RETURNING id));
cmp_ok($later, '>', $held_id, 'the later row has the larger ID');
is($primary->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE body = 'held'"), '0',
	'the held row is not visible while its commit waits');

my $horizon = $primary->safe_psql('postgres', 'SELECT idgen_horizon()');
cmp_ok($horizon, '<=', $held_id, 'idgen_horizon() stays at or below the held row\'s ID');
my $naive = $primary->safe_psql('postgres', 'SELECT max(id) + 1 FROM outbox');
cmp_ok($naive, '>', $held_id, 'control: a cursor at the largest ID seen passes the held row');

kill 'CONT', $receiver;
$held->quit;
$primary->poll_query_until('postgres', q(SELECT count(*) = 1 FROM outbox WHERE body = 'held'))
  or die 'the held row never became visible';
is($primary->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE id >= $horizon AND body = 'held'"),
	'1', 'a poller resuming at the horizon reads the held row');
is($primary->safe_psql('postgres', "SELECT count(*) FROM outbox WHERE id >= $naive AND body = 'held'"),
	'0', 'control: the naive poller never reads it');

$standby->stop;
$primary->stop;
done_testing();
