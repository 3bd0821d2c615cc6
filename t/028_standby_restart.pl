# A standby restarted before its promotion keeps the marks it replayed.
# A primary with its clock 6 s ahead makes IDs; its synchronous standby,
# with the primary's node id and a right clock, replays their marks, passes
# a restartpoint (so that the marks' WAL is behind it) and crashes; the primary dies and the standby is
# promoted.  Its clock is behind the primary's last IDs, so only the marks
# it replayed keep it above them: the promoted server's IDs must all be
# above the primary's.  The control: that the standby's clock at promotion
# is indeed behind the primary's newest ID, so the marks are what holds.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = idgen_node('sr_primary', "idgen.node_id = 7\nidgen.clock_offset_ms = 6000\n",
	allows_streaming => 1);
$primary->safe_psql('postgres', 'CREATE TABLE ids (id bigint PRIMARY KEY)');
my $standby = node_from_backup($primary, 'sr_standby', conf => "idgen.clock_offset_ms = 0\n");
$primary->safe_psql('postgres', q(
	ALTER SYSTEM SET synchronous_standby_names = '*';
	SELECT pg_reload_conf();));
$primary->poll_query_until('postgres', q(SELECT sync_state = 'sync' FROM pg_stat_replication))
  or die 'standby not synchronous';

$primary->safe_psql('postgres', 'INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 20000)');
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby, 'replay');
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->stop('immediate');
$standby->start;
$primary->poll_query_until('postgres', q(SELECT sync_state = 'sync' FROM pg_stat_replication))
  or die 'standby not synchronous again';
my $newest = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
$primary->stop('immediate');

$standby->promote;
my $behind = $standby->safe_psql('postgres',
	"SELECT (idgen_decode($newest)).ts - clock_timestamp() > interval '1 second'");
is($behind, 't', 'control: the promoted standby\'s clock is behind the primary\'s newest ID');
$standby->safe_psql('postgres', 'CREATE TABLE after (id bigint)');
$standby->safe_psql('postgres', 'INSERT INTO after SELECT idgen_next() FROM generate_series(1, 20000)');
is($standby->safe_psql('postgres', "SELECT count(*) FROM after WHERE id <= $newest"), '0',
	'after a restartpoint and a crash, the promoted standby issues only IDs above the primary\'s');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM after a JOIN ids USING (id)'), '0',
	'no ID repeats');

$standby->stop;
done_testing();
