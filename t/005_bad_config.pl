# A setting that postgresql.conf gets wrong does not silently fall back to
# its default: idgen refuses to generate and names the setting.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('bad_config');

my ($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/idgen cannot be used because idgen.node_id is invalid/, 'a server without a node id refuses');
like($err, qr/idgen.node_id is not set. Every server that generates IDs needs a node id of its own/,
	'the detail says it was never set');
like($err, qr/HINT:  Set idgen.node_id to a node id of this server's own, or idgen.node_registry to lease one/,
	'the hint names both ways to give the server a node id');

# Restarts with the given settings in postgresql.auto.conf, and returns
# idgen_next()'s stderr.
sub try_setting
{
	my ($conf) = @_;
	set_auto_conf($node, $conf);
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
	return $err;
}

$err = try_setting('idgen.node_id = 5000');
like($err, qr/ERROR:  idgen cannot be used because idgen.node_id is invalid/, 'out of range node id refused');
like($err, qr/sets idgen.node_id to "5000"/, 'detail shows the rejected value');
like($err, qr/HINT:  Correct idgen.node_id in postgresql.conf/, 'hint names the setting');
like(slurp_file($node->logfile), qr/idgen will not generate IDs because idgen.node_id is invalid/,
	'the server log says so at startup');

$err = try_setting('idgen.node_id = -1');
like($err, qr/idgen.node_id is invalid/, 'negative node id refused');

$err = try_setting('idgen.node_id = 16');
like($err, qr/idgen.node_id is 16, but idgen.node_bits = 4 allows node ids from 0 to 15/,
	'node id wider than idgen.node_bits refused');

$err = try_setting("idgen.node_id = 20\nidgen.node_bits = 5");
is($err, '', 'the same node id fits once idgen.node_bits is wider');

$err = try_setting('idgen.node_bits = 11');
like($err, qr/idgen.node_bits is invalid/, 'node_bits out of range refused');
my $derr;
($ret, $out, $derr) = $node->psql('postgres', 'SELECT * FROM idgen_decode(1)');
like($derr, qr/idgen.node_bits is invalid/, 'decoding refuses a layout it cannot trust');

$err = try_setting("idgen.epoch = '2024-02-30'");
like($err, qr/idgen.epoch is invalid/, 'impossible epoch date refused');
foreach my $sql ('SELECT * FROM idgen_decode(1)', 'SELECT idgen_from_timestamp(now())', 'SELECT idgen_horizon()')
{
	($ret, $out, $derr) = $node->psql('postgres', $sql);
	like($derr, qr/idgen.epoch is invalid/, "$sql refuses too, not counting from a default epoch");
}

$err = try_setting("idgen.epoch = 'yesterday'");
like($err, qr/idgen.epoch is invalid/, 'epoch in another format refused');

# Every date the setting's check accepts also starts the server: past the
# range of epochs is refused there, not in _PG_init, which would stop it.
$err = try_setting("idgen.node_id = 1\nidgen.epoch = '2200-06-01'");
like($err, qr/idgen cannot be used because idgen.epoch is invalid/,
	'an epoch past the range is refused, and the server runs');
$err = try_setting("idgen.node_id = 1\nidgen.epoch = '1899-12-31'");
like($err, qr/idgen.epoch is invalid/, 'an epoch before the range is refused');

# At the limits: all ten bits for the node leave only the shared worker id.
$err = try_setting("idgen.node_bits = 10\nidgen.node_id = 1023");
is($err, '', 'node_bits = 10 with node_id = 1023 is valid');
is($node->safe_psql('postgres', 'SELECT node_id, worker_id FROM idgen_decode(idgen_next())'),
	'1023|0', 'it generates in the single, shared worker id');
$err = try_setting("idgen.node_bits = 0\nidgen.node_id = 0");
is($node->safe_psql('postgres', 'SELECT node_id, worker_id < 1023 FROM idgen_decode(idgen_next())'),
	'0|t', 'node_bits = 0 numbers 1024 worker ids');
$err = try_setting("idgen.node_bits = 0\nidgen.node_id = 1");
like($err, qr/idgen.node_id is 1, but idgen.node_bits = 0 allows node ids from 0 to 0/,
	'node_bits = 0 leaves only node 0');

# Moving the epoch later would map new times onto time fields already used:
# the high-water mark moves with the epoch, so the server refuses until the
# clock passes every time field used before, and says why.
$err = try_setting("idgen.node_id = 1\nidgen.epoch = '2100-01-01'");
like($err, qr/ERROR:  cannot generate idgen IDs because idgen.epoch was moved later/,
	'an epoch moved later is refused, not repeated, naming the setting');
like($err, qr/HINT:  Set idgen.epoch back to the date it had/, 'the hint says what to do');
like(slurp_file($node->logfile), qr/the epoch of layout "idgen" changed from 2024-01-01 00:00:00\+00 to 2100-01-01 00:00:00\+00/,
	'the log says the epoch changed');

$err = try_setting("idgen.node_id = 1\nidgen.max_marks = 10");
like($err, qr/idgen cannot be used because idgen.max_marks is invalid/,
	'a table of marks smaller than the least allowed is refused, not taken as the default');

# The test-only switch of the lease protections takes whole words: one
# misspelt is refused as any invalid setting, disabling nothing (1.5 before:
# any value containing "fence" turned the fence off).
my $log_offset = -s $node->logfile;
$err = try_setting("idgen.node_id = 1\nidgen.lease_test_unsafe = 'fences'");
like($err, qr/idgen cannot be used because idgen.lease_test_unsafe is invalid/,
	'a misspelt idgen.lease_test_unsafe is refused');
like(substr(slurp_file($node->logfile), $log_offset),
	qr/invalid value for parameter "idgen.lease_test_unsafe": "fences"\n.*Unrecognized protection: "fences"/,
	'the log says why');
is($node->safe_psql('postgres', "SELECT setting FROM pg_settings WHERE name = 'idgen.lease_test_unsafe'"),
	'', 'pg_settings shows it, with no protection disabled');

$err = try_setting("idgen.node_id = '02'\nidgen.epoch = '2020-01-01'");
is($err, '', 'valid settings generate again');

$node->stop;
done_testing();
