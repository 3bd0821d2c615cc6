# Slot reuse at high churn: 8 clients connect, generate and disconnect in a
# loop for 20 s, with fewer dedicated slots than clients so slots change
# hands constantly and some backends fall back to the shared slot.
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
clients_ok($node, '8 clients reconnecting for every transaction for 20 s', q(
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 20);
), clients => 8, jobs => 2, connect => 1, time => 20);

my $counts = $node->safe_psql('postgres', q(
	SELECT count(*) > 2000, count(DISTINCT (idgen_decode(id)).worker_id) > 1 FROM ids));
is($counts, 't|t', 'many IDs over several worker ids, all unique (primary key)');

$node->stop;
done_testing();
