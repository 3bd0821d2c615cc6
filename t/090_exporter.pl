# The Prometheus queries file (contrib/prometheus/idgen.yaml) with the real
# prometheus-postgres-exporter: its idgen_stats metrics, scraped over
# loopback, carry the counts of sessions that generated and ended (one
# terminated in a transaction), follow a reset, and give each layout's time
# left; its idgen_horizon metrics count the transactions holding the outbox
# horizon back and how long they have; its idgen_node_lease and idgen_leases
# metrics show, on a server that leases its node id and on the registry, the
# lease and the seconds left on it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "$exporter is missing (Debian package prometheus-postgres-exporter)"
  unless -x $exporter;

my $node = idgen_node('exporter', "idgen.node_id = 2\n");
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $queries = "$FindBin::RealBin/../contrib/prometheus/idgen.yaml";
my ($out, $err) = ('', '');
my $dsn = 'host=' . $node->host . ' port=' . $node->port
  . ' user=' . getpwuid($<) . ' dbname=postgres sslmode=disable';
local $ENV{DATA_SOURCE_NAME} = $dsn;
my $h = IPC::Run::start(
	[ $exporter, "--extend.query-path=$queries",
	  "--web.listen-address=127.0.0.1:$port",
	  '--disable-default-metrics', '--disable-settings-metrics' ],
	'>', \$out, '2>', \$err);

# The exporter goes, whatever happens to the test.
END { $h->kill_kill if $h && $h->pumpable; }

my $http = HTTP::Tiny->new(timeout => 10);

# The value of metric idgen_stats_NAME for a layout, scraping until it
# appears (the exporter needs a moment to start).
sub metric
{
	my ($name, $layout) = @_;
	for (1 .. 100)
	{
		my $r = $http->get("http://127.0.0.1:$port/metrics");
		if ($r->{success}
			&& $r->{content} =~ /^idgen_stats_$name\{[^}]*layout="$layout"[^}]*\}\s+(\S+)$/m)
		{
			return $1 + 0;
		}
		select(undef, undef, undef, 0.2);
	}
	diag("exporter stderr: $err");
	return undef;
}

$node->safe_psql('postgres', 'SELECT idgen_stats_reset()');
# sessions that generated and ended
$node->safe_psql('postgres', 'SELECT count(idgen_next()) FROM generate_series(1, 1234)');
$node->safe_psql('postgres', q(SELECT count(idgen_next('instagram')) FROM generate_series(1, 50)));
$node->safe_psql('postgres', 'SELECT count(idgen_next()) FROM generate_series(1, 66)');

is(metric('ids', 'idgen'), 1300, 'ids of the default layout: every ID made');
is(metric('shared_ids', 'idgen'), 0, 'none through a shared state');
is(metric('ids', 'instagram'), 50, 'ids of a layout without a worker field');
is(metric('shared_ids', 'instagram'), 50, '... all through its shared state');
is(metric('clock_regressions', 'idgen'), 0, 'no clock regression');
my $left = metric('time_left_seconds', 'idgen');
ok(defined $left && $left > 10 * 365 * 86400 && $left < 100 * 365 * 86400,
	'time left of the default layout: decades');
my $lead = metric('mark_lead_seconds', 'idgen');
ok(defined $lead && $lead > -60 && $lead < 60, 'mark lead: within a minute of the clock');

# a reset, then one more session
$node->safe_psql('postgres', 'SELECT idgen_stats_reset()');
is(metric('ids', 'idgen'), 0, 'reset: no IDs');
$node->safe_psql('postgres', 'SELECT idgen_next()');
is(metric('ids', 'idgen'), 1, 'one ID after the reset');

# concurrent sessions publishing at once, in their worker ids and in a
# layout's shared state
$node->safe_psql('postgres', 'SELECT idgen_stats_reset()');
clients_ok($node, '6 clients generating', q(
	SELECT count(idgen_next()) FROM generate_series(1, 3);
	SELECT idgen_next('instagram');
), clients => 6, transactions => 300);
is(metric('ids', 'idgen'), 5400, 'concurrent sessions: every ID of the default layout counted');
is(metric('ids', 'instagram'), 1800, '... and of a shared state');

# a session terminated in the middle of a transaction
$node->safe_psql('postgres', 'SELECT idgen_stats_reset()');
$node->psql('postgres', 'BEGIN; SELECT count(idgen_next()) FROM generate_series(1, 41); '
	  . 'SELECT pg_terminate_backend(pg_backend_pid())');
is(metric('ids', 'idgen'), 41, 'a terminated session counts too');

# What holds the outbox horizon: nothing, then an open transaction that
# took an ID and waits, then nothing again once it ended.
sub horizon_metric
{
	my ($name, $want) = @_;
	my $value;
	for (1 .. 100)
	{
		my $r = $http->get("http://127.0.0.1:$port/metrics");
		$value = $1 + 0 if $r->{success} && $r->{content} =~ /^idgen_horizon_$name(?:\{[^}]*\})?\s+(\S+)$/m;
		return $value if defined $value && $want->($value);
		select(undef, undef, undef, 0.2);
	}
	return $value;
}
is(horizon_metric('holders', sub { $_[0] == 0 }), 0, 'horizon: no holder');
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe('SELECT idgen_next()');
is(horizon_metric('holders', sub { $_[0] == 1 }), 1, 'horizon: a transaction that took an ID holds it');
cmp_ok(horizon_metric('lag_seconds', sub { $_[0] >= 1 }), '>=', 1,
	'horizon: its lag grows with the transaction\'s age');
$holder->query_safe('COMMIT');
$holder->quit;
is(horizon_metric('holders', sub { $_[0] == 0 }), 0, 'horizon: released at commit');

# Node id leases: the exporter's server is a registry (any database with
# idgen), and a second server leases from it; a second exporter scrapes that.
sub scrape
{
	my ($at, $pattern, $want) = @_;
	my $value;
	for (1 .. 100)
	{
		my $r = $http->get("http://127.0.0.1:$at/metrics");
		$value = $1 + 0 if $r->{success} && $r->{content} =~ $pattern;
		return $value if defined $value && $want->($value);
		select(undef, undef, undef, 0.2);
	}
	return $value;
}
is(scrape($port, qr/^idgen_node_lease_node_id\{[^}]*source="setting"[^}]*\}\s+(\S+)$/m, sub { 1 }), 2,
	'node id lease: the registry\'s own node id comes from the setting');
my $leaser = idgen_node('leaser', "idgen.node_registry = '" . conninfo($node)
	  . "'\nidgen.node_lease_s = 30\n");
$leaser->poll_query_until('postgres', "SELECT state = 'held' FROM idgen_node_lease")
  or die 'no lease: ' . $leaser->safe_psql('postgres', 'SELECT last_error FROM idgen_node_lease');
my $leased_id = $leaser->safe_psql('postgres', 'SELECT node_id FROM idgen_node_lease');
my $port2 = PostgreSQL::Test::Cluster::get_free_port();
my ($out2, $err2) = ('', '');
my $h2 = do {
	local $ENV{DATA_SOURCE_NAME} = 'host=' . $leaser->host . ' port=' . $leaser->port
	  . ' user=' . getpwuid($<) . ' dbname=postgres sslmode=disable';
	IPC::Run::start(
		[ $exporter, "--extend.query-path=$queries",
		  "--web.listen-address=127.0.0.1:$port2",
		  '--disable-default-metrics', '--disable-settings-metrics' ],
		'>', \$out2, '2>', \$err2);
};
END { $h2->kill_kill if $h2 && $h2->pumpable; }
is(scrape($port2, qr/^idgen_node_lease_held\{[^}]*source="lease"[^}]*state="held"[^}]*\}\s+(\S+)$/m,
	sub { $_[0] == 1 }), 1, 'node id lease: the leasing server holds one');
is(scrape($port2, qr/^idgen_node_lease_node_id\{[^}]*source="lease"[^}]*\}\s+(\S+)$/m, sub { 1 }),
	$leased_id, '... the node id it leased');
my $left_lease = scrape($port2, qr/^idgen_node_lease_seconds_left\{[^}]*\}\s+(\S+)$/m, sub { $_[0] > 0 });
ok(defined $left_lease && $left_lease > 0 && $left_lease <= 30, "... seconds left on it ($left_lease)")
  or diag("exporter stderr: $err2");
my $left_registry = scrape($port, qr/^idgen_leases_seconds_left\{[^}]*node_id="$leased_id"[^}]*\}\s+(\S+)$/m,
	sub { $_[0] > 0 });
ok(defined $left_registry && $left_registry > 0 && $left_registry <= 30,
	"the registry: the lease of node id $leased_id and its seconds left ($left_registry)");
$leaser->stop;
is(scrape($port, qr/^idgen_leases_held\{[^}]*node_id="$leased_id"[^}]*\}\s+(\S+)$/m, sub { $_[0] == 0 }), 0,
	'... released when the server stops');

$h2->kill_kill;
$h->kill_kill;
$node->stop;
done_testing();
