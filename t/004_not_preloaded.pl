# Without shared_preload_libraries: the extension installs and decodes with
# the server's configured layout, and generating fails with a hint.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->append_conf('postgresql.conf', qq(
idgen.epoch = '2020-01-01'
idgen.node_id = 7
));
$node->start;

my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION idgen');
is($ret, 0, 'CREATE EXTENSION works without preloading');
is($err, '', 'and warns of nothing, though postmaster-level settings are set');

($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
isnt($ret, 0, 'idgen_next() fails');
like($err, qr/ERROR:  idgen must be loaded via shared_preload_libraries/, 'error says why');
like($err, qr/HINT:  Add idgen to shared_preload_libraries/, 'hint says what to do');

($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM idgen_workers');
like($err, qr/idgen must be loaded via shared_preload_libraries/, 'the view says the same');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM idgen_stats');
like($err, qr/idgen must be loaded via shared_preload_libraries/, 'and idgen_stats');
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_stats_reset()');
like($err, qr/idgen must be loaded via shared_preload_libraries/, 'and idgen_stats_reset()');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM idgen_capacity');
like($err, qr/idgen must be loaded via shared_preload_libraries/, 'and idgen_capacity');
is($node->safe_psql('postgres', 'SELECT source, node_id IS NULL FROM idgen_node_lease'),
	'setting|t', 'idgen_node_lease knows no node id without preloading');

is($node->safe_psql('postgres',
	"SET TimeZone = 'UTC'; SELECT ts FROM idgen_decode(4194304000)"),
	'2020-01-01 00:00:01+00', 'decoding uses the configured idgen.epoch');
is($node->safe_psql('postgres',
	"SELECT idgen_from_timestamp('2020-01-01 00:00:01+00')"),
	'4194304000', 'so does idgen_from_timestamp');

$node->stop;
done_testing();
