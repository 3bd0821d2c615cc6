# Promotion is a startup for the table of high-water marks too.  A standby
# replays every mark its primary writes, so it holds them all when
# promoted, those the clock has long passed included.  A startup folds
# such marks into marks it shares (they hold nothing back the shared ones
# cannot), leaving the table's room for the marks that matter; the first
# ID after the promotion folds them the same way.  Without the fold, the
# promoted server's table is as full as its primary's: the control, the
# primary itself, which has not restarted, finds it full.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $full = qr/WARNING:  table of idgen high-water marks is full/;

# One ID in each of 50 layouts named $prefix-1 .. $prefix-50.
sub generate_in
{
	my ($node, $prefix) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(idgen_next('$prefix-' || i)) FROM generate_series(1, 50) i");
}

sub marks_row
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q(SELECT in_use, overflows FROM idgen_capacity WHERE name = 'marks'));
}

my $primary = idgen_node('fold_primary', "idgen.node_id = 1\nidgen.max_marks = 64\n",
	allows_streaming => 1);
$primary->safe_psql('postgres', q(
	SELECT count(idgen_define_layout(p || '-' || i, '2020-01-01+00', '{time,node,sequence}', '{41,10,12}'))
	FROM generate_series(1, 50) i, unnest('{old,new}'::text[]) p));
my $standby = node_from_backup($primary, 'fold_standby');

# 50 marks the standby learns only by replay.
is(generate_in($primary, 'old'), '50', 'the primary generates in 50 layouts');
my $old_id = $primary->safe_psql('postgres', q(SELECT idgen_next('old-1')));
$primary->wait_for_catchup($standby);
# every mark runs at most a second ahead: let the clock pass them all
usleep(2_500_000);
$standby->promote;
my $log_offset = -s $standby->logfile;

my ($in_use) = split /\|/, marks_row($standby);
cmp_ok($in_use, '>=', 51, "promoted, before its first ID, the standby holds the replayed marks ($in_use)");
is(generate_in($standby, 'new'), '50', 'promoted, it generates in 50 other layouts');
my ($in_use_after, $overflows) = split /\|/, marks_row($standby);
is($overflows, '0', "no mark found the table full ($in_use_after of 64 in use)");
unlike(slurp_file($standby->logfile, $log_offset), $full, 'and nothing says it is full');

# The folded marks still bind: with its clock 2 s back, a folded layout's
# new ID lies above the primary's last.
my $new_id = $standby->safe_psql('postgres', q(
	SELECT set_config('idgen.clock_offset_ms', '-2000', false);
	SELECT idgen_next('old-1')));
$new_id = (split /\n/, $new_id)[-1];
cmp_ok($new_id, '>', $old_id, 'a folded layout resumes above the IDs it made before, its clock 2 s back');
$standby->stop;

# The control: the primary, whose passed marks nothing folded, fills its
# table with the same 50 layouts.
$log_offset = -s $primary->logfile;
is(generate_in($primary, 'new'), '50', 'control: the primary generates in the 50 other layouts');
(undef, $overflows) = split /\|/, marks_row($primary);
cmp_ok($overflows, '>', 0, "control: without a fold, marks find the table full ($overflows)");
like(slurp_file($primary->logfile, $log_offset), $full, 'control: the log says so');
$primary->stop;

done_testing();
