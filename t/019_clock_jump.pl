# A clock that jumped far ahead and back: the marks it left refuse this node
# id until the clock gets there, and the refusal names both ways out; a node
# id that never generated starts from the clock at once, as marks are kept
# per layout and node id.  Marks that bind every node id (as idgen 1.2 wrote
# them) are not escaped that way, and the hint says so.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('jump', "idgen.node_id = 1\n");
$node->safe_psql('postgres', 'CREATE TABLE ids (era int, kind text, id bigint)');

my %gen = (
	default => 'idgen_next()',
	block => 'idgen_next_block(10)',
	js53 => q(idgen_next('js53')));

sub generate
{
	my ($era) = @_;
	my %err;
	for my $kind (sort keys %gen)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"INSERT INTO ids SELECT $era, '$kind', $gen{$kind}");
		$err{$kind} = $ret == 0 ? '' : $err;
	}
	return %err;
}

# 24.8 days ahead, then back.
set_auto_conf($node, 'idgen.clock_offset_ms = 2147483647');
my %err = generate(1);
is(join('', values %err), '', 'IDs made with the clock 24.8 days ahead');

set_auto_conf($node, 'idgen.clock_offset_ms = 0');
%err = generate(2);
for my $kind (sort keys %gen)
{
	like($err{$kind}, qr/system clock is \d+ ms behind the time of the newest idgen ID/,
		"clock back, same node id: $kind refused");
	like($err{$kind}, qr/HINT:  .*IDs resume at \d{4}-.*restart the server with an idgen.node_id that has never generated IDs in layout/,
		"$kind: the hint names the time to wait for and a new node id");
}

# A node id that never generated: at once, near the clock.
set_auto_conf($node, "idgen.clock_offset_ms = 0\nidgen.node_id = 2");
%err = generate(3);
is(join('', map { $err{$_} ? "$_: $err{$_}" : '' } sort keys %err), '',
	'on a node id that never generated, every kind generates at once');
is($node->safe_psql('postgres', q(
	SELECT count(*) FILTER (WHERE d.ts BETWEEN now() - interval '1 min' AND now() + interval '1 min'
	                           AND d.node_id = 2), count(*)
	FROM ids, LATERAL idgen_decode(id, CASE kind WHEN 'js53' THEN 'js53' ELSE 'idgen' END) d
	WHERE era = 3)), '3|3', 'its IDs are of node 2 and of now');

# Back on node 1 its marks still hold: nothing it issued can repeat.
set_auto_conf($node, "idgen.clock_offset_ms = 0\nidgen.node_id = 1");
%err = generate(4);
is(scalar(grep { $err{$_} =~ /system clock is \d+ ms behind/ } keys %gen), 3,
	'back on node 1, every kind is still refused');

# A mark without a node id binds every node id: the hint says a new one
# would not help.
$node->stop;
my $far = (time() + 30 * 86400) * 1000;
open my $fh, '>>', $node->data_dir . '/idgen_hwm' or die $!;
print $fh "js53 1704067200000 $far\n";
close $fh;
set_auto_conf($node, "idgen.clock_offset_ms = 0\nidgen.node_id = 3");
my ($ret, $out, $err) = $node->psql('postgres', q(SELECT idgen_next('js53')));
like($err, qr/HINT:  .*IDs resume at .*Another idgen.node_id would not help: marks that bind every node id/,
	'a mark of every node id: refused on a new node id, and the hint says why');
is($node->safe_psql('postgres', 'SELECT idgen_next() > 0'), 't',
	'the default layout, without such a mark, generates on the new node id');

$node->stop;
done_testing();
