# A pg_basebackup copy started as a primary with its source's node id makes
# the same IDs as its source: it warns in the server log at startup and to
# the first session that generates.  A copy given a node id of its own, a
# streaming standby, the standby once promoted, and a primary restarted or
# crashed and reinitialised do not warn.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $warning = qr/started from a base backup as a primary with idgen\.node_id/;
my ($ret, $out, $err);

my $primary = idgen_node('primary', "idgen.node_id = 5\nrestart_after_crash = on\n",
	allows_streaming => 1);
$primary->safe_psql('postgres', 'SELECT idgen_next() FROM generate_series(1, 1000)');

# The clone: the source's postgresql.conf, node id 5 included.
my $clone = node_from_backup($primary, 'clone', streaming => 0);
ok($clone->log_contains('WARNING:  idgen: this server was started from a base backup as a primary with idgen.node_id 5'),
	'the clone warns in the server log');
ok($clone->log_contains('HINT:  Give this server an idgen.node_id of its own'),
	'with what to do');
($ret, $out, $err) = $clone->psql('postgres', 'SELECT idgen_next()');
like($err, $warning, 'the first session that generates is warned');
($ret, $out, $err) = $clone->psql('postgres', 'SELECT idgen_next()');
unlike($err, $warning, 'once');
my $offset = -s $clone->logfile;
$clone->restart;
ok(!$clone->log_contains($warning, $offset), 'the clone restarted does not warn again');
$clone->stop;

# A clone with a node id of its own.
my $renumbered = node_from_backup($primary, 'renumbered', backup => 'clone_base',
	streaming => 0, conf => 'idgen.node_id = 6');
ok(!$renumbered->log_contains("WARNING:  idgen: this server"), 'a clone with a new node id does not warn');
($ret, $out, $err) = $renumbered->psql('postgres', 'SELECT idgen_next()');
unlike($err, $warning, 'nor does its first session');
$renumbered->stop;

# A standby, and the standby promoted.
my $standby = node_from_backup($primary, 'standby', backup => 'clone_base');
$primary->wait_for_catchup($standby);
ok(!$standby->log_contains($warning), 'a standby does not warn');
$primary->stop;
$standby->promote;
($ret, $out, $err) = $standby->psql('postgres', 'SELECT idgen_next()');
unlike($err, $warning, 'nor does the standby promoted');
ok(!$standby->log_contains($warning), 'in its log either');
$standby->stop;

# The primary restarted, and crashed.
$offset = -s $primary->logfile;
$primary->start;
ok(crash_backend($primary), 'the primary reinitialised after a crash');
($ret, $out, $err) = $primary->psql('postgres', 'SELECT idgen_next()');
unlike($err, $warning, 'the primary restarted and reinitialised does not warn');
ok(!$primary->log_contains($warning, $offset), 'in its log either');

$primary->stop;
done_testing();
