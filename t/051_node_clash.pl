# Two servers configured with the same node id are the usual way snowflake
# systems repeat IDs.  idgen_check_nodes() connects to each listed server and
# flags a node id used twice (by a clone of the same cluster or by an
# unrelated server), a layout that differs, a server that cannot generate,
# a server listed twice and one it cannot reach.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# a, and b cloned from a base backup of a: the clone keeps a's
# postgresql.conf, node id included, and its system identifier.
my $a = idgen_node('a', "idgen.node_id = 1\n", allows_streaming => 1);
$a->safe_psql('postgres', 'CREATE EXTENSION dblink');
my $b = node_from_backup($a, 'b', streaming => 0);
# c: an unrelated server with another node id and another epoch.
my $c = idgen_node('c', "idgen.node_id = 2\n");
set_auto_conf($c, "idgen.epoch = '2023-01-01'");

my ($ca, $cb, $cc) = map { conninfo($_) } $a, $b, $c;
my $unreachable = 'host=/nonexistent port=1 dbname=postgres';

sub check
{
	my $array = join(', ', map { "'$_'" } @_);
	return $a->safe_psql('postgres', qq(
		SELECT node_id, coalesce(problem, 'ok')
		FROM idgen_check_nodes(ARRAY[$array])));
}

my @rows = split /\n/, check($ca, $cb, $cc, $ca, $unreachable);
is(scalar @rows, 5, 'one row per listed server');
is($rows[0], "1|node id 1 is also used by $cb (a copy of the same cluster: a clone that kept its node id, or a second primary after failover)",
	'a: its clone shares its node id');
is($rows[1], "1|node id 1 is also used by $ca (a copy of the same cluster: a clone that kept its node id, or a second primary after failover)",
	'b: the clone is flagged too');
is($rows[2], "2|idgen.epoch is 2023-01-01, but 2024-01-01 on $ca", 'c: a different epoch is flagged');
is($rows[3], "1|same server as $ca", 'a server listed twice is checked once');
like($rows[4], qr/^\|could not check this server: could not establish connection/,
	'an unreachable server is reported');

# The clone gets its own node id; c takes node id 1 from another cluster,
# and a different node_bits.
set_auto_conf($b, 'idgen.node_id = 3');
set_auto_conf($c, "idgen.node_id = 1\nidgen.node_bits = 5");
is(check($ca, $cb, $cc), "1|node id 1 is also used by $cc\n3|ok\n"
	  . "1|idgen.node_bits is 5, but 4 on $ca; node id 1 is also used by $ca",
	'an unrelated server with the same node id and another node_bits is flagged on both sides');

# Proof that the clash is real: the two servers make IDs of the same form.
is($a->safe_psql('postgres', 'SELECT (idgen_decode(idgen_next())).node_id') . ' '
	  . $c->safe_psql('postgres', 'SELECT (idgen_decode(idgen_next())).node_id'),
	'1 1', 'a and c both generate as node 1');

set_auto_conf($c, "idgen.node_id = 2");
is(check($ca, $cb, $cc), "1|ok\n3|ok\n2|ok", 'distinct node ids, one layout: no problem');

# A server without idgen preloaded cannot generate, so cannot clash.
set_auto_conf($c, "shared_preload_libraries = ''");
is(check($ca, $cc), "1|ok\n|idgen is not loaded via shared_preload_libraries, so this server cannot generate IDs",
	'a server without idgen preloaded is reported');

# The same check also works from a database where dblink is missing, with a hint.
$b->safe_psql('postgres', 'CREATE DATABASE nodblink');
my ($ret, $out, $err) = $b->psql('nodblink',
	"CREATE EXTENSION idgen; SELECT * FROM idgen_check_nodes(ARRAY['$ca'])");
like($err, qr/idgen_check_nodes requires the extension "dblink".*HINT:  Run CREATE EXTENSION dblink/s,
	'without dblink the check says what to install');

$_->stop for $a, $b, $c;
done_testing();
