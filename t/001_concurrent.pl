# 4 backends x 250k IDs at once: all unique, each backend strictly increasing.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('concurrent', qq(
idgen.node_id = 7
));
$node->safe_psql('postgres', q(
	CREATE UNLOGGED TABLE ids (client int, n int, id bigint);
));

clients_ok($node, '4 clients generate 250k IDs each', q(
	INSERT INTO ids SELECT :client_id, n, idgen_next() FROM generate_series(1, 250000) n;
), clients => 4);

ids_unique($node, 'ids', 'one million IDs, all distinct', count => 1000000);
is(out_of_order($node, 'ids'), '0', 'each backend strictly increasing');
is($node->safe_psql('postgres', q(
	SELECT count(DISTINCT (idgen_decode(id)).worker_id),
	       count(DISTINCT (client, (idgen_decode(id)).worker_id)),
	       min((idgen_decode(id)).node_id), max((idgen_decode(id)).node_id)
	FROM ids)), '4|4|7|7', 'one worker id per backend, all on node 7');

$node->stop;
done_testing();
