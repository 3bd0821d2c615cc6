# The mark file keeps every entry of the table of marks, those above the
# holes a startup leaves where it folded the marks the clock had passed too:
# a layout that borrowed ahead keeps its mark across two clean restarts, the
# file written again between them.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('holes', qq(
idgen.node_id = 3
idgen.max_clock_regression_ms = 60000
));
$node->safe_psql('postgres', q(
	CREATE TABLE ids (era int, id bigint);
	SELECT count(idgen_define_layout(name, '2020-01-01+00', '{time,node,sequence}', '{41,10,12}'))
	FROM (SELECT 'passed' || i AS name FROM generate_series(1, 9) i UNION ALL SELECT 'ahead') l;
));
# Nine layouts whose marks the clock passes, then one 20 s ahead of it,
# whose entry comes after theirs.
$node->safe_psql('postgres', q(SELECT count(idgen_next('passed' || i)) FROM generate_series(1, 9) i));
$node->safe_psql('postgres', q(
	SET idgen.clock_offset_ms = 20000;
	INSERT INTO ids SELECT 1, idgen_next('ahead') FROM generate_series(1, 1000);
));
# Past the nine marks (a second's step above their ticks).
sleep 2;
$node->restart;
is($node->safe_psql('postgres', q(SELECT count(*) FROM idgen_capacity WHERE name = 'marks' AND in_use < 11)),
	'1', 'the startup folded the nine passed marks');
# A mark raised: the file is written again, with the entry above the holes.
$node->safe_psql('postgres', q(SELECT idgen_next()));
$node->restart;
$node->safe_psql('postgres',
	q(INSERT INTO ids SELECT 2, idgen_next('ahead') FROM generate_series(1, 1000)));
is($node->safe_psql('postgres', q(
	SELECT min(id) FILTER (WHERE era = 2) > max(id) FILTER (WHERE era = 1) FROM ids)),
	't', 'after two clean restarts, the layout that borrowed ahead resumes above its IDs');
ids_unique($node, 'ids', 'no ID repeated');

done_testing();
