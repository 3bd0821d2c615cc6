# IDs in a real JavaScript client, node-postgres (test/js/client.js): js53
# IDs read as Number are exact and keep their order; default IDs, above
# 2^53, arrive as strings that BigInt reads exactly and Number does not;
# both go back to the server unchanged as parameters.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

my $js_dir = dirname($FindBin::RealBin) . "/test/js";
my $script = "$js_dir/client.js";

# scripts/test installs node and runs npm ci in test/js; elsewhere a missing
# one skips this file alone.  (IPC::Run dies when node is not on PATH.)
my ($node_version, $err) = ('', '');
eval {
	IPC::Run::run([ 'node', '-e', 'process.stdout.write(process.versions.node)' ],
		'>', \$node_version, '2>', \$err);
} or plan skip_all => 'node (Debian package nodejs) is not on PATH';
plan skip_all => "node $node_version is too old for node-postgres (18 or later)"
  unless $node_version =~ /^(\d+)\./ && $1 >= 18;
IPC::Run::run(
	[ 'node', '-e', 'require.resolve("pg", { paths: [process.argv[1]] })', $js_dir ],
	'>', \my $out, '2>', \$err)
  or plan skip_all => "the npm package pg is not installed in $js_dir (npm ci there)";

my $node = idgen_node('js_client', "idgen.node_id = 5\n");

# Rows for the client to send back, and tables it writes into.
$node->safe_psql('postgres', q{
	CREATE TABLE stored (n int PRIMARY KEY, id bigint NOT NULL UNIQUE);
	INSERT INTO stored SELECT row_number() OVER (), id FROM idgen_next_batch(200) id;
	CREATE TABLE stored53 (n int PRIMARY KEY, id bigint NOT NULL UNIQUE);
	INSERT INTO stored53
		SELECT row_number() OVER (), id FROM idgen_next_batch(200, 'js53') id;
	CREATE TABLE echoed (n int PRIMARY KEY, id bigint NOT NULL);
	CREATE TABLE echoed53 (n int PRIMARY KEY, id bigint NOT NULL);
});
# The premise of part 2: default IDs are beyond Number's exact integers.
is($node->safe_psql('postgres', 'SELECT count(*) FROM stored WHERE id > 9007199254740991'),
	'200', 'default IDs are above 2^53 - 1');

my $user = $node->safe_psql('postgres', 'SELECT current_user');
my ($json, $js_err) = ('', '');
my $ran = IPC::Run::run([ 'node', $script, $node->host, $node->port, $user, 'postgres' ],
	'>', \$json, '2>', \$js_err);
ok($ran, "node client.js ran (node $node_version)") or diag($js_err);
my $r = eval { decode_json($json) };
# A failing client is a failing test, not a broken setup: die, no BAIL_OUT.
die "client.js printed no result: $@\n$json\n$js_err" unless ref $r eq 'HASH';

# Every row of the tally passed, and there were $rows of them.
sub all_pass
{
	my ($tally, $rows, $name) = @_;
	my $ok = is($tally->{of}, $rows, "$name: $rows rows looked at");
	$ok = is($tally->{pass}, $tally->{of}, $name) && $ok;
	diag('first failure: ' . encode_json([ $tally->{first_failure} ])) unless $ok;
}

# 1. js53 read as Number, with client.setTypeParser(20, Number)
for my $set ([ 'js53_batch', 10000, 'idgen_next_batch(10000, js53)' ],
	[ 'js53_single', 100, 'idgen_next(js53)' ])
{
	my ($key, $rows, $what) = @$set;
	all_pass($r->{$key}{number}, $rows, "$what arrives as a JS number");
	all_pass($r->{$key}{safe}, $rows, "$what: Number.isSafeInteger");
	all_pass($r->{$key}{exact}, $rows, "$what: String(n) is the server's id::text");
}
is($r->{js53_batch}{distinct}, 10000, 'js53: 10000 distinct Numbers');
all_pass($r->{js53_batch}{order}, 10000,
	'js53: sorted as Numbers, each ID is at its ORDER BY id rank');

# The checks can fail: the last safe integer passes, 2^53 + 1 does not.
all_pass($r->{control}{max_safe}{$_}, 1, "control: 2^53 - 1 as Number passes $_")
  for qw(number safe exact);
is($r->{control}{above}{safe}{pass}, 0, 'control: 2^53 + 1 as Number is not safe');
is($r->{control}{above}{exact}{pass}, 0, 'control: 2^53 + 1 as Number is not exact');

# The guarded parser README suggests passes js53 IDs and refuses the rest.
all_pass($r->{guard_js53}, 1000, 'guarded Number parser reads js53 IDs exactly');
like($r->{guard_error} // 'no error',
	qr/^RangeError: bigint 9007199254740993 is not a safe JavaScript integer/,
	'guarded Number parser refuses 2^53 + 1');
is($r->{guard_after}, 1, 'and the connection works after the refused row');

# 2. Default IDs with node-postgres's default parser
for my $set ([ 'default_batch', 1000, 'idgen_next_batch(1000)' ],
	[ 'default_single', 100, 'idgen_next()' ])
{
	my ($key, $rows, $what) = @$set;
	my $d = $r->{$key};
	all_pass($d->{string}, $rows, "$what arrives as a JS string");
	all_pass($d->{text}, $rows, "$what: the string is the server's id::text");
	all_pass($d->{bigint}, $rows, "$what: BigInt(s).toString() is id::text");
	all_pass($d->{above_safe}, $rows, "$what: above Number.MAX_SAFE_INTEGER");
	is($d->{number_exact}{of}, $rows, "$what: $rows read through Number");
	cmp_ok($d->{number_exact}{pass}, '<', $rows,
		"$what: Number(s) loses precision: String(Number(s)) !== s "
		  . ($rows - $d->{number_exact}{pass}) . " times");
	cmp_ok($d->{number_distinct}, '<', $rows,
		"$what: distinct IDs collapse into $d->{number_distinct} Numbers");
}
all_pass($r->{default_batch}{order_bigint}, 1000,
	'default: sorted as BigInt, each ID is at its ORDER BY id rank');

# 3. Sending IDs back
all_pass($r->{send}{string}, 200, 'string parameter: $1::bigint = id');
all_pass($r->{send}{bigint}, 200, 'BigInt parameter: $1::bigint = id');
all_pass($r->{send}{lookup}, 200, 'BigInt parameter: WHERE id = $1 finds its row');
is($r->{send}{number}{of}, 200, 'Number(s) parameter sent for 200 rows');
cmp_ok($r->{send}{number}{pass}, '<', 200,
	'Number(s) parameter: only ' . $r->{send}{number}{pass} . ' of 200 equal their ID');
is($node->safe_psql('postgres',
	'SELECT count(*) FROM stored s JOIN echoed e USING (n) WHERE s.id = e.id'),
	'200', 'BigInt parameters inserted store the same IDs');
all_pass($r->{send53}{number}, 200, 'js53 IDs read back as Numbers');
all_pass($r->{send53}{equal}, 200, 'Number parameter: $1::bigint = id for js53 IDs');
is($node->safe_psql('postgres',
	'SELECT count(*) FROM stored53 s JOIN echoed53 e USING (n) WHERE s.id = e.id'),
	'200', 'Number parameters inserted store the same js53 IDs');

$node->stop;
done_testing();
