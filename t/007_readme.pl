# README runs top to bottom: its ```sql blocks, in order, in one fresh
# database, on a server configured as its Installation section says (its
# first ```ini block), without an ERROR or a WARNING; docs/outbox.md's in a
# database of their own where, as README's Getting started says, the
# extension was created.  A block that needs another server follows the
# line "<!-- not run: why -->" and is skipped.  Errors name the README line.
use strict;
use warnings;
use File::Basename qw(dirname);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = dirname($FindBin::RealBin);

# The SQL of a Markdown text, as a psql script whose line numbers are the
# text's: every line outside a block that runs is left empty.  Returns it
# and how many blocks run.
sub runnable
{
	my ($text) = @_;
	my (@out, $in, $skip, $blocks);
	my $previous = '';
	for my $line (split /\n/, $text, -1)
	{
		if (!$in && $line =~ /^```sql\s*$/)
		{
			($in, $skip) = (1, $previous =~ /^<!-- not run: .+ -->$/);
			$blocks++ unless $skip;
			push @out, '';
		}
		elsif ($in && $line =~ /^```\s*$/)
		{
			$in = 0;
			push @out, '';
		}
		else
		{
			push @out, ($in && !$skip) ? $line : '';
		}
		$previous = $line if $line =~ /\S/;
	}
	return (join("\n", @out) . "\n", $blocks // 0);
}

# Runs a text's blocks in a new database; returns psql's exit code and the
# lines of its stderr with an ERROR or a WARNING.
sub run_text
{
	my ($node, $db, $text, $setup) = @_;
	my ($script) = runnable($text);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, $setup) if $setup;
	my ($ret, $out, $err) = $node->psql($db, $script, on_error_stop => 1);
	return ($ret, join("\n", grep { /\b(?:ERROR|WARNING|FATAL):/ } split /\n/, $err));
}

my $readme = slurp_file("$root/README.md");
my ($conf) = $readme =~ /^```ini\n(.*?)^```$/ms;
like($conf, qr/^shared_preload_libraries = 'idgen'$/m, "README's first ini block is the configuration");

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', $conf);
$node->start;

my ($script, $blocks) = runnable($readme);
cmp_ok($blocks, '>=', 15, "README has $blocks SQL blocks to run");
my ($ret, $bad) = run_text($node, 'readme', $readme);
is($bad, '', 'README: every SQL block runs in order without an ERROR or a WARNING (psql:<stdin>:N is README line N)');
is($ret, 0, 'README: psql ran to the end');

my $outbox = slurp_file("$root/docs/outbox.md");
($ret, $bad) = run_text($node, 'outbox_doc', $outbox, 'CREATE EXTENSION idgen');
is($bad, '', 'docs/outbox.md: every SQL block runs in order without an ERROR or a WARNING');
is($ret, 0, 'docs/outbox.md: psql ran to the end');
my ($table) = $readme =~ /^(CREATE TABLE outbox \(.*?^\);)$/ms;
like($table, qr/^CREATE TABLE outbox/, 'README creates the table outbox');
is(($outbox =~ /^(CREATE TABLE outbox \(.*?^\);)$/ms)[0], $table, "docs/outbox.md's outbox table is README's");

# The controls: a failing block is found, on its line; the same block after
# "<!-- not run: ... -->" is not run.
($ret, $bad) = run_text($node, 'control1', "text\n\n```sql\nSELECT 1;\nSELECT nosuch;\n```\n");
like($bad, qr/^psql:<stdin>:5: ERROR:  column "nosuch" does not exist/, 'control: an error is found, on its line');
($ret, $bad) = run_text($node, 'control2',
	"text\n\n<!-- not run: needs another server -->\n```sql\nSELECT nosuch;\n```\n```ini\nx\n```\n");
is($bad, '', 'control: a block after "not run" is skipped');

$node->stop;
done_testing();
