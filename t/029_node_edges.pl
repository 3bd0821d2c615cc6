# Node ids at the edges of what a layout holds: the largest node id a node
# field holds generates and decodes to itself; the node id equal to the
# field's size (the first it cannot hold) is refused by every generating
# function of that layout, as is one above it, while idgen's own layout,
# sized by idgen.node_bits, still generates.  The control is the node id
# one below, which the same layout holds.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('edges', "idgen.node_bits = 7\nidgen.node_id = 15\n");
$node->safe_psql('postgres', q{
	SELECT idgen_define_layout('n4', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
	SELECT idgen_define_layout('n5', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
	SELECT idgen_define_layout('d1', '2020-01-01+00', '{time,sequence,node}', '{14,3,1}', '1 millisecond', 10);
});

my @calls = ("idgen_next('%s')", "(SELECT min(i) FROM idgen_next_batch(3, '%s') i)", "idgen_next_block(2, '%s')");

# Returns "ok" with the node ids the IDs decode to, or the error's SQLSTATE.
sub try_layout
{
	my ($layout) = @_;
	my @out;
	for my $call (@calls)
	{
		my $sql = sprintf($call, $layout);
		my ($ret, $stdout, $stderr) = $node->psql('postgres',
			"\\set VERBOSITY sqlstate\nSELECT (idgen_decode($sql, '$layout')).node_id");
		push @out, $ret == 0 ? "node $stdout" : ($stderr =~ /ERROR:\s+(\w{5})/)[0] // $stderr;
	}
	return join(',', @out);
}

is(try_layout('n4'), 'node 15,node 15,node 15', 'node id 15, the largest a 4-bit node field holds, generates (control)');
is(try_layout('d1'), '55000,55000,55000', 'node id 15 above a 1-digit node field (size 10) is refused by every function');

set_auto_conf($node, "idgen.node_bits = 7\nidgen.node_id = 16");
is(try_layout('n4'), '55000,55000,55000', 'node id 16, the size of a 4-bit node field, is refused by every function');
is(try_layout('n5'), 'node 16,node 16,node 16', 'a 5-bit node field holds it');

set_auto_conf($node, "idgen.node_bits = 7\nidgen.node_id = 32");
is(try_layout('n5'), '55000,55000,55000', 'node id 32, the size of a 5-bit node field, is refused');

set_auto_conf($node, "idgen.node_bits = 7\nidgen.node_id = 127");
like($node->safe_psql('postgres', 'SELECT (idgen_decode(idgen_next())).node_id'), qr/^127$/,
	'node id 127, the largest node_bits 7 allows, generates in idgen\'s own layout');
is(try_layout('n5'), '55000,55000,55000', 'and a 5-bit node field refuses it');

# idgen_check_nodes() flags a node id that idgen.node_bits cannot hold,
# from the first: 128 under 7 bits; 127, the control, it passes.
$node->safe_psql('postgres', 'CREATE EXTENSION dblink');
my $check = "SELECT string_agg(problem, '; ') FROM idgen_check_nodes(ARRAY[\$\$" . $node->connstr('postgres') . "\$\$])";
is($node->safe_psql('postgres', $check), '', 'idgen_check_nodes() finds no problem with node id 127 (control)');
set_auto_conf($node, "idgen.node_bits = 7\nidgen.node_id = 128");
like($node->safe_psql('postgres', $check), qr/idgen.node_bits = 7 allows node ids up to 127/,
	'idgen_check_nodes() flags node id 128, one past what node_bits 7 holds');

$node->stop;
done_testing();
