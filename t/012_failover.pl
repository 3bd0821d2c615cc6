# A streaming standby promoted to primary, with the same node id and a clock
# 1 s behind the old primary's, must not repeat the old primary's IDs.  The
# high-water mark travels in WAL, so the standby resumes above it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = idgen_node('primary', qq(
idgen.node_id = 5
), allows_streaming => 1);
$primary->safe_psql('postgres', q(
	CREATE TABLE ids (era int, id bigint PRIMARY KEY);
));
my $standby = node_from_backup($primary, 'standby', conf => 'idgen.clock_offset_ms = -1000');

# The primary borrows ahead of its clock, after the base backup was taken:
# 1.5M distinct IDs, of which the table keeps the first and the last.
is(burst($primary, 1500000, row => 1), '0', 'the primary made 1.5M distinct IDs');
$primary->wait_for_catchup($standby);

my ($ret, $out, $err) = $standby->psql('postgres', 'SELECT idgen_next()');
like($err, qr/cannot generate idgen IDs during recovery/, 'a standby refuses to generate');

# The old primary dies; the standby takes over.
$primary->stop('immediate');
$standby->promote;
$standby->safe_psql('postgres',
	'INSERT INTO ids SELECT 2, idgen_next() FROM generate_series(1, 100000)');

is($standby->safe_psql('postgres', q(
	SELECT min(id) FILTER (WHERE era = 2) > max(id) FILTER (WHERE era = 1),
	       min((idgen_decode(id)).node_id) = 5 AND max((idgen_decode(id)).node_id) = 5
	FROM ids)), 't|t', 'the promoted standby resumes above every ID of the old primary');
ids_unique($standby, 'ids', 'no ID of either primary repeats', count => 100002);

$standby->stop;
done_testing();
