# A refusal reaches every backend of the server, also one that generated
# before it.  One database's dump restored into a running cluster with the
# same node id, where a session of another database had already generated:
# in 1.5 new sessions refused, but the old session never looked again and
# went on generating, also after idgen_resume_after(), repeating the
# restored IDs (163,416-177,584 of 200,000 in a review).  Now the restored
# rows of idgen_system make the server refuse as they arrive, and the old
# session refuses at its next tick, also before anyone generated in the
# restored database, until the restart that idgen_resume_after() asks for.
# The control: the same restore without idgen_system's rows, as if nothing
# said where the IDs came from, repeats them.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "idgen.node_id = 1\nidgen.max_clock_regression_ms = 120000\n";

my $old = idgen_node('old', $conf);
$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', q(
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY);
	INSERT INTO ids SELECT idgen_next() FROM generate_series(1, 200000);
));
my $first_ms = $old->safe_psql('app',
	q(SELECT (extract(epoch FROM (idgen_decode(min(id))).ts) * 1000)::bigint FROM ids));
my $newest = $old->safe_psql('app', q(SELECT (idgen_decode(max(id))).ts FROM ids));
my $dump = $old->basedir . '/app.dump';
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('app') ], 'pg_dump');
$old->stop;

# The clock of this session set to $ms's time.
sub clock_at
{
	my ($ms) = @_;
	return qq(SELECT set_config('idgen.clock_offset_ms',
		($ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text, false));
}

# A running server whose database postgres has a session that generated a
# minute before the old IDs' time; then app's dump restored into it, with
# pg_restore's extra options.
sub running_with_early_session
{
	my ($name, @options) = @_;
	my $node = idgen_node($name, $conf);
	my $early = $node->background_psql('postgres', on_error_stop => 0);
	$early->query_safe(clock_at($first_ms - 60000));
	$early->query_safe('SELECT idgen_next()');
	$node->safe_psql('postgres', 'CREATE DATABASE app');
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('app'), @options, $dump ], "$name: pg_restore");
	return ($node, $early);
}

# The early session makes 200,000 IDs at the old IDs' time into a file;
# returns how many of them the restored table holds, and its errors.
sub early_repeats
{
	my ($node, $early) = @_;
	my $file = $node->basedir . '/early.ids';
	unlink $file;
	$early->query(clock_at($first_ms));
	$early->query(qq(COPY (SELECT idgen_next() FROM generate_series(1, 200000)) TO '$file'));
	my $err = $early->{stderr};
	return ('0', $err) unless -e $file;
	my $repeats = $node->safe_psql('app', qq(
		CREATE TEMP TABLE early (id bigint);
		COPY early FROM '$file';
		SELECT count(*) FROM early JOIN ids USING (id)));
	return ($repeats, $err);
}

my ($node, $early) = running_with_early_session('running');
# before anyone generates in app: the restored rows made the server refuse
my ($repeats, $early_err) = early_repeats($node, $early);
is($repeats, '0', 'the session that generated before the restore repeats no restored ID');
like($early_err, qr/database "app" holds idgen IDs of another cluster.*\n.*\nHINT:  .*idgen_resume_after\(t\) in database "app"/,
	'it refuses at its next tick, with the way out, though nobody generated in app');
my ($ret, $out, $err) = $node->psql('app', 'SELECT idgen_next()');
like($err, qr/database "app" holds idgen IDs of another cluster/,
	'a new session of the restored database refuses');
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/database "app" holds idgen IDs of another cluster/,
	'a new session of another database refuses');
$node->safe_psql('app', "SELECT idgen_resume_after('$newest')");
($repeats, $early_err) = early_repeats($node, $early);
is($repeats, '0', 'after idgen_resume_after() it still repeats none');
like($early_err, qr/idgen generation resumes after a restart/, 'it refuses until the restart');
$early->quit;
$node->restart;
$early = $node->background_psql('postgres', on_error_stop => 0);
($repeats, $early_err) = early_repeats($node, $early);
is($early_err, '', 'after the restart a session generates');
is($repeats, '0', 'above the restored IDs');
$early->quit;
$node->stop;

# The control: nothing says where the restored IDs came from (the rows of
# idgen_system left out of the restore).
my $list = $old->basedir . '/no_system.list';
my $toc = `pg_restore -l $dump`;
open(my $fh, '>', $list) or die $!;
print $fh join("\n", grep { !/TABLE DATA \S+ idgen_system / } split /\n/, $toc), "\n";
close($fh);
my ($control, $control_early) = running_with_early_session('control', '-L', $list);
($repeats, $early_err) = early_repeats($control, $control_early);
cmp_ok($repeats, '>', 0,
	"control: without idgen_system's rows, $repeats of 200,000 IDs of the early session repeat restored ones");
$control_early->quit;
$control->stop;

done_testing();
