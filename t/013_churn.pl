# Slot reuse at high churn: 8 clients connect, generate and disconnect in a
# loop for 5 s (20 s with IDGEN_TEST_EXTRA=long), with fewer dedicated slots
# than clients so slots change hands constantly and some backends fall back
# to the shared slot.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('churn', qq(
idgen.node_bits = 7
idgen.node_id = 100
max_connections = 40
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (id bigint PRIMARY KEY);
));

# Any repeat violates the primary key, fails the transaction, and pgbench
# reports it (and exits non-zero).
my $seconds = test_extra('long') ? 20 : 5;
clients_ok($node, "8 clients reconnecting for every transaction for $seconds s", q(
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 20);
), clients => 8, jobs => 2, connect => 1, time => $seconds);

# At least 100 IDs a second (2000 in 20 s): a loaded machine with an
# assert build made fewer than 500.
my $counts = $node->safe_psql('postgres', qq(
	SELECT count(*) > 100 * $seconds, count(DISTINCT (idgen_decode(id)).worker_id) > 1 FROM ids));
is($counts, 't|t', 'many IDs over several worker ids, all unique (primary key)');

$node->stop;
done_testing();
