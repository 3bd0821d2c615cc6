# A backend exits and the next one reuses its worker slot at once, while the
# clock is behind the newest millisecond the first one used (it borrowed
# ahead in a burst and ran with a clock 300 ms fast).  The registry remembers
# the slot's newest millisecond, so the second backend starts after it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('reuse', qq(
idgen.node_id = 1
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (backend text, id bigint PRIMARY KEY);
));

my $first = $node->safe_psql('postgres', q(
	SET idgen.clock_offset_ms = 300;
	INSERT INTO ids SELECT 'first', idgen_next() FROM generate_series(1, 100000);
	SELECT (idgen_decode(max(id))).worker_id FROM ids;
));
my $second = $node->safe_psql('postgres', q(
	INSERT INTO ids SELECT 'second', idgen_next() FROM generate_series(1, 100000);
	SELECT (idgen_decode(max(id))).worker_id FROM ids WHERE backend = 'second';
));
is($second, $first, 'the second backend reused the first one\'s worker id');
ids_unique($node, 'ids', 'no ID repeated across the reuse', count => 200000);
is($node->safe_psql('postgres', q(
	SELECT min(id) FILTER (WHERE backend = 'second') > max(id) FILTER (WHERE backend = 'first')
	FROM ids)), 't', 'the new holder starts after the previous holder\'s newest ID');

# Many short-lived backends in a row, each reusing a slot within the same
# few milliseconds: one client connecting anew for each of 50 transactions.
# A backend gives its slot back as it exits, after its client has gone, so
# on a loaded machine the next one may connect first and take another slot;
# either way most of the 50 reuse a slot just given back.
clients_ok($node, '50 backends in a row', q(
	INSERT INTO ids SELECT 'churn', idgen_next() FROM generate_series(1, 100);
), clients => 1, transactions => 50, connect => 1);
is($node->safe_psql('postgres', q(
	SELECT count(*), count(DISTINCT id) FROM ids WHERE backend = 'churn')),
	'5000|5000', '50 backends in a row, no repeat');
cmp_ok($node->safe_psql('postgres', q(
	SELECT count(DISTINCT (idgen_decode(id)).worker_id) FROM ids WHERE backend = 'churn')),
	'<=', 3, '50 backends in a row reused a few slots');

$node->stop;
done_testing();
