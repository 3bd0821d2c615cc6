# Settings changed between restarts never repeat an ID, in any layout: the
# high-water marks are per layout and move with the epoch.  And one layout
# that borrowed far ahead does not hold back the others after a restart.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;

my $node = idgen_node('settings', "idgen.node_id = 3\n");
$node->safe_psql('postgres', q(
	SELECT idgen_define_layout('custom', '2020-01-01+00', '{time,node,worker,sequence}',
	                           '{41,5,5,12}');
	CREATE TABLE ids (round int, layout text, id bigint);
));

# js53 and sonyflake make few IDs per millisecond per worker: fewer of them.
my %ids = (idgen => 300000, twitter => 300000, custom => 300000,
	js53 => 50000, sonyflake => 50000);

# In ten passes over the layouts, so that each one's IDs spread over the
# whole round.
sub generate
{
	my ($round) = @_;
	my $sql = '';
	for my $pass (1 .. 10)
	{
		for my $layout (sort keys %ids)
		{
			my $n = $ids{$layout} / 10;
			$sql .= qq(INSERT INTO ids SELECT $round, '$layout', idgen_next('$layout')
				FROM generate_series(1, $n);\n);
		}
	}
	$node->safe_psql('postgres', $sql);
}

sub no_repeats
{
	my ($what) = @_;
	is($node->safe_psql('postgres', q(
		SELECT string_agg(layout || ':' || n, ', ' ORDER BY layout)
		FROM (SELECT layout, count(*) - count(DISTINCT id) AS n FROM ids GROUP BY layout) s
		WHERE n > 0)), '', "$what: no ID repeated in any layout");
}

# Restarts with the given settings and the clock set back to when the
# previous round started, so that every layout's new IDs fall in the same
# milliseconds as its earlier ones unless the marks keep them apart.
sub restart_back_to
{
	my ($round_start_ms, $conf) = @_;
	my $now_ms = int(Time::HiRes::time() * 1000);
	my $offset = $round_start_ms - $now_ms - 2000;
	set_auto_conf($node,
		"$conf\nidgen.max_clock_regression_ms = 60000\nidgen.clock_offset_ms = $offset");
}

my $round_start = int(Time::HiRes::time() * 1000);
generate(1);

my $log_offset = -s $node->logfile;
restart_back_to($round_start, "idgen.epoch = '2023-12-31'");
$round_start = int(Time::HiRes::time() * 1000);
generate(2);
no_repeats('idgen.epoch one day earlier, clock back to the first round');
like(slurp_file($node->logfile, $log_offset),
	qr/LOG:  idgen: the epoch of layout "idgen" changed from 2024-01-01 00:00:00\+00 to 2023-12-31 00:00:00\+00/,
	'the log says the epoch changed');

restart_back_to($round_start, "idgen.epoch = '2023-01-01'\nidgen.node_bits = 5");
generate(3);
no_repeats('idgen.epoch a year earlier and idgen.node_bits 5, clock back to the second round');

# js53 borrows about 47 s ahead of the clock with a 60 s lead; after a clean
# restart with the clock right, every other layout generates at once, and
# js53 resumes above what it used without an error.
set_auto_conf($node, "idgen.epoch = '2023-01-01'\nidgen.node_bits = 5\nidgen.max_lead_ms = 60000");
is(burst($node, 3000000, row => "4, 'js53'", layout => 'js53'), '0', 'js53: 3M distinct IDs');
ok($node->safe_psql('postgres', q(
	SELECT (idgen_decode(max(id), 'js53')).ts > clock_timestamp() + interval '30 s'
	FROM ids WHERE layout = 'js53')), 'js53 borrowed more than 30 s ahead');

$node->restart;
is($node->safe_psql('postgres', q(
	SELECT (idgen_decode(idgen_next())).ts < clock_timestamp() + interval '3 s';
	SELECT clock_waits FROM idgen_workers WHERE pid = pg_backend_pid();
	SELECT (idgen_decode(idgen_next('twitter'), 'twitter')).ts < clock_timestamp() + interval '3 s';
)), "t\n0\nt", 'after the restart, the default layout and twitter generate at once, near the clock');
$node->safe_psql('postgres', q(
	INSERT INTO ids SELECT 5, 'js53', idgen_next('js53') FROM generate_series(1, 1000)));
is($node->safe_psql('postgres', q(
	SELECT min(id) FILTER (WHERE round = 5) > max(id) FILTER (WHERE round < 5)
	FROM ids WHERE layout = 'js53')), 't', 'js53 resumes above every ID it made');
no_repeats('after js53 borrowed 47 s ahead and the server restarted');

$node->stop;
done_testing();
