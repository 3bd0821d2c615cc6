# Blocks of IDs in a real JDBC client (test/java/IdgenBlocks.java), as
# Hibernate's pooled-lo optimizer uses them: threads take
# idgen_next_block(50), number 50 rows themselves and insert them with
# executeBatch(), while other threads insert with DEFAULT idgen_next().
# No key repeats, each block is 50 consecutive IDs of one millisecond and
# worker id, and every ID decodes to the time its row was written.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $src = dirname($FindBin::RealBin) . "/test/java/IdgenBlocks.java";
my $jar = '/usr/share/java/postgresql.jar';

# scripts/test installs the JDK and the driver; elsewhere a missing one skips
# this file alone.
for my $tool ('javac', 'java')
{
	my $found = eval { IPC::Run::run([ $tool, '-version' ], '>', \my $o, '2>', \my $e) };
	plan skip_all => "$tool (Debian package default-jdk-headless) is not on PATH"
	  unless $found;
}
plan skip_all => "$jar (Debian package libpostgresql-jdbc-java) is not installed"
  unless -f $jar;

my $classes = PostgreSQL::Test::Utils::tempdir;
my ($out, $err) = ('', '');
IPC::Run::run([ 'javac', '-d', $classes, $src ], '>', \$out, '2>', \$err)
  or die "javac failed:\n$out$err";

# pgjdbc speaks TCP only.
my $node = idgen_node('jdbc', "idgen.node_id = 6\nlisten_addresses = '127.0.0.1'\n");
$node->safe_psql('postgres', q{
	CREATE TABLE orders (
		id bigint PRIMARY KEY DEFAULT idgen_next(),
		block_lo bigint,
		source text NOT NULL,
		written_at timestamptz NOT NULL DEFAULT clock_timestamp());
});

my ($block_threads, $blocks, $default_threads, $rows) = (4, 200, 2, 10000);
my $user = $node->safe_psql('postgres', 'SELECT current_user');
my $url = 'jdbc:postgresql://127.0.0.1:' . $node->port . '/postgres';
($out, $err) = ('', '');
my $ran = IPC::Run::run(
	[ 'java', '-cp', "$classes:$jar", 'IdgenBlocks', $url, $user,
		$block_threads, $blocks, $default_threads, $rows ],
	'>', \$out, '2>', \$err);
ok($ran, 'java IdgenBlocks ran') or diag($err);
my $block_rows = $block_threads * $blocks * 50;
my $default_rows = $default_threads * $rows;
is($out, "block_rows=$block_rows default_rows=$default_rows blocks="
	  . ($block_threads * $blocks) . "\n",
	'every batch inserted: no duplicate key');

is($node->safe_psql('postgres',
	"SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE source = 'block') FROM orders"),
	($block_rows + $default_rows) . ' ' . ($block_rows + $default_rows) . " $block_rows",
	'all rows stored, keys distinct');

# Each block: 50 rows, lo .. lo + 49, one millisecond, one worker id.
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT block_lo, count(*) AS n, min(id) AS lo, max(id) AS hi,
		       count(DISTINCT ((idgen_decode(id)).ts, (idgen_decode(id)).worker_id)) AS places
		FROM orders WHERE source = 'block' GROUP BY block_lo) b
	WHERE n = 50 AND lo = block_lo AND hi = block_lo + 49 AND places = 1}),
	$block_threads * $blocks,
	'each block is 50 consecutive IDs of one millisecond and one worker id');

# Blocks and default IDs interleave in key order, from several worker ids.
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT (idgen_decode(id)).worker_id) >= 6
	       AND count(*) FILTER (WHERE source IS DISTINCT FROM prev) > 2
	FROM (SELECT id, source, lag(source) OVER (ORDER BY id) AS prev FROM orders) s}),
	't', 'block and default IDs interleave, from six worker ids');

# Every ID decodes to node 6 and to the moment its row was written: the ID
# is made before the row, and borrowing runs at most idgen.max_lead_ms ahead.
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM orders, idgen_decode(id) d
	WHERE d.node_id <> 6
	   OR d.ts > written_at + interval '1 second'
	   OR d.ts < written_at - interval '30 seconds'}),
	'0', 'every ID decodes to node 6 and the time its row was written');

$node->stop;
done_testing();
