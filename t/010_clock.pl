# The clock steps back while running, and bursts outrun the clock: IDs stay
# unique and increasing, a step back beyond the bound is refused with a
# clear error, and bursts borrow at most idgen.max_lead_ms ahead.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('clock', qq(
idgen.node_id = 2
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (step int, n int, id bigint PRIMARY KEY);
));

my $session = $node->background_psql('postgres', on_error_stop => 0);
$session->query_safe(q(
	INSERT INTO ids SELECT 1, n, idgen_next() FROM generate_series(1, 20000) n));

# Step back 3 s, within idgen.max_clock_regression_ms (10 s).  Enough IDs to
# fill the newest millisecond many times over, so the sequence must move on
# to later milliseconds rather than restart in an old one.
$session->query_safe(q(
	SET idgen.clock_offset_ms = -3000;
	INSERT INTO ids SELECT 2, n, idgen_next() FROM generate_series(1, 50000) n));
ids_unique($node, 'ids', 'no repeat after the clock stepped back 3 s', count => 70000);
is($node->safe_psql('postgres', q(
	SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY step, n) AS prev FROM ids) s
	WHERE id <= prev)), '0', 'IDs kept increasing across the step back');
is($session->query_safe(q(
	SELECT clock_behind, clock_regressions FROM idgen_workers WHERE pid = pg_backend_pid())),
	't|1', 'the view shows the regression, counted once');
my $log = slurp_file($node->logfile);
my @incidents = ($log =~ /idgen: system clock is \d+ ms behind the time of the newest ID/g);
is(scalar(@incidents), 1, 'the incident is logged once, not per ID');

# Beyond the bound: refused, and nothing is issued.
$session->query_safe('SET idgen.clock_offset_ms = -20000');
$session->query('SELECT idgen_next()');
my $err = $session->{stderr};
$session->{stderr} = '';
like($err, qr/system clock is \d+ ms behind the time of the newest idgen ID/,
	'a 20 s step back is refused');
like($err, qr/idgen.max_clock_regression_ms allows the clock to fall behind by at most 10000 ms/,
	'the detail names the bound');
like($err, qr/HINT:  Check the server's time synchronization/, 'the hint says what to check');
is($session->query_safe(q(
	SELECT ids_issued FROM idgen_workers WHERE pid = pg_backend_pid())),
	'70000', 'the refused call issued nothing');

# The clock comes back: generation resumes where it left off.
$session->query_safe(q(
	RESET idgen.clock_offset_ms;
	INSERT INTO ids SELECT 3, n, idgen_next() FROM generate_series(1, 10000) n));
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id), max(step) FROM ids'),
	'80000|3', 'generation resumes once the clock is back');
$session->quit;

# Bursts: with a 50 ms lead, a burst must wait for the clock rather than
# run further ahead.  js53 makes 64 IDs a millisecond in a backend, so 100k
# outrun a 50 ms lead however slow or loaded the machine.
$node->append_conf('postgresql.conf', 'idgen.max_lead_ms = 50');
$node->reload;
my $lead = $node->safe_psql('postgres', q(
	SELECT idgen_stats_reset();
	SELECT (idgen_decode(max(idgen_next('js53')), 'js53')).ts <= clock_timestamp() + interval '51 ms'
	FROM generate_series(1, 100000);
	SELECT clock_waits > 0, max_lead_ms <= 50 FROM idgen_stats WHERE layout = 'js53';
));
is($lead, "\nt\nt|t", 'a burst past the lead waits, never more than 50 ms ahead');

# With the default 1 s lead the same burst runs unthrottled.
$node->append_conf('postgresql.conf', 'idgen.max_lead_ms = 1000');
$node->reload;
is($node->safe_psql('postgres', q(
	SELECT count(DISTINCT idgen_next()) FROM generate_series(1, 2000000);
	SELECT clock_waits, lead_ms > 0 FROM idgen_workers WHERE pid = pg_backend_pid();
)), "2000000\n0|t", '2M IDs in one statement borrow ahead without waiting');

# With no clock regression allowed at all, a burst that uses up the lead
# still only waits for the clock: a clock error only when it stepped back.
# js53 makes 64 IDs a millisecond in a backend, so 100k outrun a 50 ms lead
# however slow the machine.
$node->append_conf('postgresql.conf',
	"idgen.max_lead_ms = 50\nidgen.max_clock_regression_ms = 0");
$node->reload;
is($node->safe_psql('postgres', q(
	SELECT idgen_stats_reset();
	SELECT count(DISTINCT idgen_next('js53')) FROM generate_series(1, 100000);
	SELECT clock_waits > 0 FROM idgen_stats WHERE layout = 'js53';
)), "\n100000\nt", 'max_clock_regression_ms = 0: a burst waits for the clock, no error');

# A restart with the clock behind the newest ID by less than
# idgen.max_clock_regression_ms: the first ID waits for the clock rather
# than refuse.  IDs made 8 s ahead, then a restart; the control is a bound
# of 1 s, refused (its IDs 30 s ahead, so that however slow the restart,
# the clock is still far behind them).
sub restart_behind
{
	my ($bound, $ahead_ms) = @_;
	$node->append_conf('postgresql.conf',
		"idgen.max_lead_ms = 1000\nidgen.max_clock_regression_ms = $bound");
	my $ahead = $node->safe_psql('postgres', "SET idgen.clock_offset_ms = $ahead_ms; SELECT idgen_next()");
	$node->restart;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT idgen_next() > $ahead");
	return $ret == 0 ? $out : $err;
}
is(restart_behind(10000, 8000), 't', 'a restart 8 s behind the newest ID waits for the clock, within 10 s');
like(restart_behind(1000, 30000), qr/system clock is \d+ ms behind the time of the newest idgen ID/,
	'control: with a bound of 1 s the same restart is refused');

$node->stop;
done_testing();
