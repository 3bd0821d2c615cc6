# Layouts generated in a state the server's backends share (no worker
# field): a state belongs to one layout definition.  Same-named layouts that
# differ between databases never pack IDs with each other's fields; the same
# definition in two databases shares one state, so their IDs never repeat
# each other; a layout dropped and defined again starts a state of its own.
# And the shared states hold many layouts at once without slowing down.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('states', "idgen.node_id = 5\n");
my %epoch = (e1 => '2020-01-01 00:00:00+00', e2 => '2020-01-01 00:00:01+00',
	e3 => '2020-01-01 00:00:00+00');
my %far = (e1 => '2020-01-01+00', e2 => '2024-01-01+00', e3 => '2020-01-01+00');
for my $db (sort keys %epoch)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq(
		CREATE EXTENSION idgen;
		SELECT idgen_define_layout('dup', '$epoch{$db}', '{time,node,sequence}', '{41,10,12}');
		SELECT idgen_define_layout('far', '$far{$db}', '{time,node,sequence}', '{41,10,12}');
		CREATE TABLE ids (layout text, id bigint);
	));
}

# Two sessions in each database generate at once for about two seconds.
# e1 and e3 define dup alike; e2's is one second later, so that a tick packed
# with e2's fields in e1 is the same integer as one of e1's own a second on.
my $t0 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my @sessions;
for my $db (qw(e1 e2 e3 e1 e2 e3))
{
	my $s = $node->background_psql($db);
	$s->query_until(qr/started/, qq(\\echo started
		INSERT INTO ids SELECT l, idgen_next(l)
		FROM generate_series(1, 150000) g, LATERAL (SELECT CASE WHEN g % 2 = 0 THEN 'dup' ELSE 'far' END) c(l);
	));
	push @sessions, $s;
}
$_->quit for @sessions;

for my $db (qw(e1 e2 e3))
{
	ids_unique($node, "ids WHERE layout = 'dup'", "$db: dup's IDs are all distinct",
		count => 150000, dbname => $db);
	is($node->safe_psql($db, qq(
		SELECT count(*) FROM ids
		WHERE (idgen_decode(id, layout)).ts NOT BETWEEN '$t0'::timestamptz - interval '2 s'
		                                          AND clock_timestamp() + interval '2 s')),
		'0', "$db: every ID decodes, in its database's definitions, to when it was made");
}

# e1 and e3 define dup alike: their IDs come from one state and never repeat
# each other's.
my $copy = $node->basedir . '/e3_ids.copy';
$node->safe_psql('e3', "COPY (SELECT id FROM ids WHERE layout = 'dup') TO '$copy'");
is($node->safe_psql('e1', qq(
	CREATE TEMP TABLE e3_ids (id bigint);
	COPY e3_ids FROM '$copy';
	SELECT count(*) FROM ids JOIN e3_ids USING (id) WHERE layout = 'dup')),
	'0', 'the same definition in two databases never repeats an ID across them');

# One session: a layout with one-second ticks, dropped and defined again with
# another epoch, generates at once: the new IDs are the new definition's, not
# the rest of the old one's tick.
$node->safe_psql('e1', q(
	CREATE TABLE redef (round int, id bigint, ts timestamptz);
	SELECT idgen_define_layout('slow', '2020-01-01+00', '{time,node,sequence}', '{33,10,20}', '1 s');
	DO $$
	BEGIN
		FOR round IN 1 .. 3 LOOP
			PERFORM idgen_next('slow') FROM generate_series(1, 400);
			PERFORM idgen_drop_layout('slow');
			PERFORM idgen_define_layout('slow', CASE WHEN round % 2 = 1 THEN '2024-01-01+00'
			                                        ELSE '2020-01-01+00' END::timestamptz,
			                            '{time,node,sequence}', '{33,10,20}', '1 s');
			INSERT INTO redef SELECT round, id, (idgen_decode(id, 'slow')).ts
			FROM (SELECT idgen_next('slow') FROM generate_series(1, 400)) s(id);
		END LOOP;
	END $$;
));
my $redefined = $node->safe_psql('e1', q(
	SELECT count(*) FROM redef
	WHERE ts NOT BETWEEN clock_timestamp() - interval '1 min' AND clock_timestamp() + interval '1 min'));
is($redefined, '0', 'after dropping and redefining a layout, no new ID is packed with the old definition');

# A definition dropped and defined back resumes above what it issued, in
# the server run and after a restart with the clock 3 s behind.
$node->safe_psql('e1', q(
	CREATE TABLE back (era int, id bigint);
	SELECT idgen_define_layout('back', '2020-01-01+00', '{time,node,sequence}', '{41,10,12}');
	INSERT INTO back SELECT 1, idgen_next('back') FROM generate_series(1, 20000);
	SELECT idgen_drop_layout('back');
	SELECT idgen_define_layout('back', '2024-01-01+00', '{time,node,sequence}', '{41,10,12}');
	SELECT count(idgen_next('back')) FROM generate_series(1, 20000);
	SELECT idgen_drop_layout('back');
	SELECT idgen_define_layout('back', '2020-01-01+00', '{time,node,sequence}', '{41,10,12}');
	INSERT INTO back SELECT 2, idgen_next('back') FROM generate_series(1, 20000);
));
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = -3000');
$node->restart;
$node->safe_psql('e1', q(INSERT INTO back SELECT 3, idgen_next('back') FROM generate_series(1, 20000)));
is($node->safe_psql('e1', q(
	SELECT min(id) FILTER (WHERE era = 2) > max(id) FILTER (WHERE era = 1),
	       min(id) FILTER (WHERE era = 3) > max(id) FILTER (WHERE era < 3)
	FROM back)), 't|t', 'a definition defined back resumes above its IDs, also after a restart 3 s behind');
$node->append_conf('postgresql.conf', 'idgen.clock_offset_ms = 0');
$node->restart;

# Round robin over 200 layouts without a worker field, in 100 ms ticks (a
# round of 200 calls fits in one on a loaded machine too): each keeps its
# state, so a layout's calls share ticks.  The control, 1100
# layouts, is more than the shared states hold: each call finds its state
# given up, and starts a new tick (README: Generating in other layouts).
$node->safe_psql('e1', q(
	SELECT count(idgen_define_layout('rr' || i, '2024-01-01+00', '{time,node,sequence}',
	                                 '{41,10,12}', '100 ms'))
	FROM generate_series(0, 1099) i;
	CREATE TABLE rr (layouts int, l text, id bigint);
));
for my $n (200, 1100)
{
	$node->safe_psql('e1', qq(
		SELECT count(idgen_next('rr' || (g % $n))) FROM generate_series(0, $n - 1) g;
		INSERT INTO rr SELECT $n, 'rr' || (g % $n), idgen_next('rr' || (g % $n))
		FROM generate_series(0, 10 * $n - 1) g;
	));
}
my ($ticks200, $ticks1100) = split /\n/, $node->safe_psql('e1', q(
	SELECT count(DISTINCT (l, (idgen_decode(id, l)).ts)) * 100 / count(*)
	FROM rr GROUP BY layouts ORDER BY layouts));
cmp_ok($ticks200, '<', 35, "200 layouts in turn: their calls share ticks ($ticks200 ticks per 100 IDs)");
cmp_ok($ticks1100, '>', 35, "control, 1100 layouts in turn: most calls start a tick ($ticks1100 per 100 IDs)");

$node->stop;
done_testing();
