# idgen_next(layout) keeps the default layout's guarantees: many backends at
# once (with a worker id of their own, or sharing a layout's state), a worker
# id handed from one backend to the next within the same milliseconds, and a
# crash and restart with the clock behind.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('layouts', qq(
idgen.node_id = 2
restart_after_crash = on
));
$node->safe_psql('postgres', q(
	SELECT idgen_define_layout('tenths', '2020-01-01+00', '{time,node,worker,sequence}',
	                           '{36,4,6,8}', '100 ms');
	CREATE TABLE ids (layout text, era int, client int, n int, id bigint,
	                  PRIMARY KEY (layout, id));
));

# Shared-state layouts (instagram, redis-borrow, decimal19) and per-backend
# ones; with 10 clients, js53's 8 worker ids run out and 3 backends share
# its last.  A repeat fails the insert on the primary key.
my @layouts = qw(twitter sonyflake instagram redis-borrow decimal19 js53 tenths);
for my $layout (@layouts)
{
	clients_ok($node, "10 clients generate 2000 IDs each in $layout", qq(
		INSERT INTO ids SELECT '$layout', 1, :client_id, n, idgen_next('$layout')
		FROM generate_series(1, 2000) n;
	), clients => 10);
	# Instagram's random shard sits above its sequence: unique, not ordered.
	is($node->safe_psql('postgres', qq(
		SELECT count(*), count(*) FILTER (WHERE id > prev OR layout = 'instagram')
		FROM (SELECT layout, id,
		             lag(id, 1, -1::bigint) OVER (PARTITION BY client ORDER BY n) AS prev
		      FROM ids WHERE layout = '$layout') s)),
		'20000|20000', "$layout: 20000 distinct IDs, increasing in each backend");
}
is($node->safe_psql('postgres', q(
	SELECT count(DISTINCT (idgen_decode(id, 'js53')).worker_id) FROM ids WHERE layout = 'js53')),
	'8', 'js53: 7 backends with worker ids of their own and the rest on the last');

# Worker reuse: a backend borrows ahead of the clock in js53 and exits; the
# next holder of its worker id must start after it.
sub backend_gone
{
	my $pid = shift;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
	  or die "backend $pid did not exit";
}
for my $round (1 .. 3)
{
	my ($pid, $last) = split /\|/, $node->safe_psql('postgres', q(
		SELECT pg_backend_pid(), max(id) FROM idgen_next_batch(60000, 'js53') id));
	backend_gone($pid);
	my ($first, $same) = split /\|/, $node->safe_psql('postgres', qq(
		SELECT id, (idgen_decode(id, 'js53')).worker_id = (idgen_decode($last, 'js53')).worker_id
		FROM idgen_next('js53') id));
	is($same, 't', "reuse $round: the next backend has the same js53 worker id");
	cmp_ok($first, '>', $last, "reuse $round: its first ID is above the previous holder's last");
}

# Crash with every layout borrowed ahead, then come back with the clock 5 s
# behind: each layout's IDs resume above the old ones.
my $burst = join ";\n", map {
	"INSERT INTO ids SELECT '$_', 2, 0, n, idgen_next('$_') FROM generate_series(1, 3000) n"
} @layouts;
$node->safe_psql('postgres', $burst);
crash_backend($node) or die 'no crash';
$node->stop('immediate');
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -5000');
$node->start;
$node->safe_psql('postgres', $burst =~ s/, 2, 0,/, 3, 0,/gr);
for my $layout (@layouts)
{
	is($node->safe_psql('postgres', qq(
		SELECT min(id) FILTER (WHERE era = 3) > max(id) FILTER (WHERE era < 3)
		FROM ids WHERE layout = '$layout')),
		't', "$layout: after a crash and a restart 5 s behind, IDs resume above");
}

$node->stop;
done_testing();
