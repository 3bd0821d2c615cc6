# More generating backends than worker slots: the extra ones share the last
# slot under a lock instead of failing, and the views count them; the log
# says so once.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

# 8 node bits leave 2 worker bits: 3 dedicated slots and the shared one.
# A lead of 5 s lets a backend borrow seconds ahead (the last section).
my $node = idgen_node('exhausted', qq(
idgen.node_bits = 8
idgen.node_id = 200
idgen.max_lead_ms = 5000
));
$node->safe_psql('postgres', q(
	CREATE UNLOGGED TABLE ids (client int, n int, id bigint);
));

clients_ok($node, '8 clients, 4 slots', q(
	SELECT pg_sleep(0.5);
	INSERT INTO ids SELECT :client_id, n, idgen_next() FROM generate_series(1, 50000) n;
), clients => 8);

ids_unique($node, 'ids', 'every insert succeeded and no ID repeated', count => 400000);
is(out_of_order($node, 'ids'), '0', 'each backend still strictly increasing');
is($node->safe_psql('postgres', q(
	SELECT count(DISTINCT (idgen_decode(id)).worker_id), max((idgen_decode(id)).worker_id),
	       min((idgen_decode(id)).node_id)
	FROM ids)), '4|3|200', 'three dedicated worker ids and the shared one (3)');
ok($node->safe_psql('postgres',
	'SELECT ids_issued FROM idgen_workers WHERE is_shared') >= 100000,
	'the shared slot counts the IDs made through it');
is($node->safe_psql('postgres', q(
	SELECT capacity, overflows >= 5, last_overflow IS NOT NULL
	FROM idgen_capacity WHERE name = 'worker_ids')), '3|t|t',
	'idgen_capacity counts the backends that found every worker id taken');
my @logged = slurp_file($node->logfile) =~ /LOG:  idgen: every worker id is taken/g;
is(scalar @logged, 1, 'the log says so once');

# A backend in the shared slot generates in a layout's shared worker id (the
# last); once it claims a slot of its own, its plan of the layout is made
# again with that worker id, and its IDs go on increasing.  Slot numbers 0-2 fit the 2 worker bits below
# the last value, 3.
$node->safe_psql('postgres', q(
	SELECT idgen_define_layout('wide', '2020-01-01+00', '{time,node,worker,sequence}',
	                           '{41,8,2,12}');
	SELECT idgen_define_layout('narrow', '2020-01-01+00', '{time,node,worker,sequence}',
	                           '{41,8,2,1}')));
$node->poll_query_until('postgres',
	'SELECT count(*) = 0 FROM idgen_workers WHERE NOT is_shared')
  or die 'the clients kept their slots';
my @holders = map { $node->background_psql('postgres') } 1 .. 3;
$_->query_safe('SELECT idgen_next()') for @holders;
my $late = $node->background_psql('postgres');
my $worker_sql = q(SELECT (idgen_decode(idgen_next('wide'), 'wide')).worker_id);
is($late->query_safe($worker_sql), '3', 'in the shared slot: the layout\'s shared worker id');
# Two IDs a millisecond: 8000 borrow 4 s ahead of the clock, in the shared
# state, which its own state must start after, however soon it claims one.
my $borrowed = $late->query_safe(q(SELECT max(i) FROM idgen_next_batch(8000, 'narrow') i));
my $slot = $holders[0]->query_safe(
	'SELECT worker_id FROM idgen_workers WHERE pid = pg_backend_pid()');
$holders[0]->quit;
$node->poll_query_until('postgres',
	'SELECT count(*) = 2 FROM idgen_workers WHERE NOT is_shared')
  or die 'the slot was not given back';
# A backend in the shared slot tries for another once a second: wait for
# it to take the free one (at most 60 s).
my $now = '';
for (1 .. 300)
{
	$now = $late->query_safe($worker_sql);
	last if $now eq $slot;
	sleep 0.2;
}
is($now, $slot, 'after claiming a slot: the layout is planned again with its worker id');
cmp_ok($late->query_safe(q(SELECT idgen_next('narrow'))), '>', $borrowed,
	'after claiming a slot: its IDs still increase, above those it borrowed in the shared state');
$_->quit for $late, @holders[1 .. 2];

$node->stop;
done_testing();
