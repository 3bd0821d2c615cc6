# idgen_horizon() sees a transaction in whichever backend slot it runs: with
# every slot of the server taken, all sessions but one hold an ID each in an
# open transaction, taken a millisecond or more after the one before, and as
# they end from the first, the horizon the last session asks for stays at
# most the least ID still held.  Twice, the asking session another each time,
# so that every slot holds an ID once (from PostgreSQL 17 the first client
# backend is slot 0).  Control: the clock in place of the horizon passes
# held IDs.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $slots = 8;
my $node = idgen_node('horizon_slots', qq(
idgen.node_id = 5
max_connections = $slots
));
my @sessions = map { $node->background_psql('postgres') } 1 .. $slots;

my ($passed, $clock_passed) = (0, 0);
for my $round (0, 1)
{
	my $asker = $sessions[ $round ? 0 : -1 ];
	my @holders = grep { $_ != $asker } @sessions;
	my @ids;
	for my $h (@holders)
	{
		push @ids, $h->query_safe('BEGIN; SELECT idgen_next();');
		usleep(2000);
	}
	for my $k (0 .. $#ids)
	{
		my $h = $asker->query_safe('SELECT idgen_horizon()');
		my $clock = $asker->query_safe('SELECT idgen_from_timestamp(clock_timestamp())');
		$passed++ if $h > $ids[$k];
		$clock_passed++ if $clock > $ids[$k];
		$holders[$k]->query_safe('ROLLBACK');
	}
}
is($passed, 0, "the horizon passed none of the IDs held in the $slots slots' open transactions");
cmp_ok($clock_passed, '>', 0, 'control: the clock in place of the horizon passes held IDs');

$_->quit for @sessions;
$node->stop;
done_testing();
