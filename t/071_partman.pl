# Daily partitions on an idgen key with the real pg_partman (Debian's
# postgresql-15-partman, 4.7; scripts/test installs it): create_parent() with
# an integer interval of one day's IDs from idgen_span() and a start at a UTC
# midnight, run_maintenance() making the days ahead, rows landing in the
# partition of their day, and retention dropping the partitions of days
# older than 5; the query that shows their days.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
plan skip_all => "pg_partman is not installed (Debian: postgresql-15-partman)"
  unless -e "$sharedir/extension/pg_partman.control";

my $node = idgen_node('partman', "idgen.node_id = 5\ntimezone = 'UTC'\n");
$node->safe_psql('postgres', q(
	CREATE SCHEMA partman;
	CREATE EXTENSION pg_partman SCHEMA partman;
	CREATE TABLE public.events (id bigint NOT NULL DEFAULT idgen_next(), day date, v int)
		PARTITION BY RANGE (id);
));

# Day 0 is today (UTC); the set starts 10 days back, at midnight.
my $start = $node->safe_psql('postgres',
	q(SELECT partman.create_parent('public.events', 'id', 'native', idgen_span('1 day')::text,
		p_premake => 3,
		p_start_partition => idgen_from_timestamp(date_trunc('day', now()) - interval '10 days')::text)));
is($start, 't', 'create_parent with one day of IDs as its interval');

# A maintenance run a day, then that day's rows at every hour, made by
# idgen_from_timestamp as idgen_next() made them then; today's by the default.
for my $d (reverse 1 .. 10)
{
	$node->safe_psql('postgres', qq(
		SELECT partman.run_maintenance('public.events');
		INSERT INTO events
		SELECT idgen_from_timestamp(date_trunc('day', now()) - interval '$d days' + h * interval '1 hour') + h,
		       (date_trunc('day', now()) - interval '$d days')::date, h
		FROM generate_series(0, 23) h;
	));
}
$node->safe_psql('postgres', q(
	SELECT partman.run_maintenance('public.events');
	INSERT INTO events (day, v) SELECT current_date, g FROM generate_series(1, 100) g;
	SELECT partman.run_maintenance('public.events');
));

# Each child, as pg_partman sees it: its IDs from a UTC midnight, one day wide.
my $children = q(
	SELECT c.partition_tablename AS child, i.child_start_id AS lo, i.child_end_id AS hi,
	       (idgen_decode(i.child_start_id)).ts AS starts
	FROM partman.show_partitions('public.events') c,
	     LATERAL partman.show_partition_info(c.partition_schemaname || '.' || c.partition_tablename) i);
is( $node->safe_psql('postgres', qq(
		SELECT count(*), bool_and(starts = date_trunc('day', starts)),
		       bool_and(hi - lo + 1 = idgen_span('1 day')),
		       min(starts)::date = current_date - 10, max(starts)::date = current_date + 3
		FROM ($children) c)),
	'14|t|t|t|t',
	'children from 10 days back to 3 ahead, each a UTC day of IDs');

is( $node->safe_psql('postgres', qq(
		SELECT count(*), count(*) FILTER (WHERE (idgen_decode(e.id)).ts::date = e.day
		                                    AND c.starts::date = e.day)
		FROM events e JOIN ($children) c ON c.child = e.tableoid::regclass::text)),
	'340|340',
	'every row in the partition of its day, none in the default');
is($node->safe_psql('postgres', 'SELECT count(*) FROM events_default'), '0', 'default partition empty');

# Retention: IDs more than 5 days' worth below the largest.
$node->safe_psql('postgres', q(
	UPDATE partman.part_config SET retention = idgen_span('5 days')::text, retention_keep_table = false
	WHERE parent_table = 'public.events';
	SELECT partman.run_maintenance('public.events');
));
is( $node->safe_psql('postgres', qq(
		SELECT count(*), min(starts)::date = current_date - 5 FROM ($children) c)),
	'9|t',
	'retention keeps the children of the last 5 days, today and 3 ahead');
is( $node->safe_psql('postgres', q(
		SELECT min(day) = current_date - 5, count(*) FROM events)),
	't|220',
	'rows older than 5 days dropped with their partitions');
is( $node->safe_psql('postgres', q(
		SELECT count(*) FROM pg_class WHERE relname ~ '^events_p' AND relkind = 'r')),
	'9',
	'the dropped children are gone, not detached');

# docs/partitions.md's query names each partition's day: today's is today.
my $docs = slurp_file("$FindBin::RealBin/../docs/partitions.md");
my ($days) = $docs =~ /^```sql\n(SELECT p\.partition_tablename.*?;)\n```$/ms;
like($days, qr/show_partitions\('public\.logs'\)/, "docs/partitions.md has the query of the partitions' days");
$days =~ s/public\.logs/public.events/ or die;
$days =~ s/;\z//;
is( $node->safe_psql('postgres', qq(
		SELECT count(*), count(*) FILTER (WHERE d.day = (idgen_decode(c.lo)).ts::date)
		FROM ($days) d JOIN ($children) c ON c.child = d.partition)),
	'9|9',
	"docs/partitions.md's query gives each partition its day");
is( $node->safe_psql('postgres', qq(
		SELECT partition FROM ($days) d WHERE day = current_date)),
	$node->safe_psql('postgres', q(SELECT tableoid::regclass FROM events ORDER BY id DESC LIMIT 1)),
	"and today's partition holds today's rows");

$node->stop;
done_testing();
