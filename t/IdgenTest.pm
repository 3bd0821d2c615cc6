# Shared by the TAP tests: a started node with idgen preloaded and the
# extension created in database postgres.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Time::HiRes qw(usleep);

our @EXPORT = qw(idgen_node wait_for_restart);

# idgen_node(name, extra postgresql.conf lines, init options...)
sub idgen_node
{
	my ($name, $conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'idgen'\n" . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
	return $node;
}

# Waits until a node answers again after a backend crash.  While the server
# restarts, psql can exit before reading its query, and IPC::Run then dies of
# the broken pipe inside poll_query_until: such a death is retried, a
# timeout is not.
sub wait_for_restart
{
	my ($node) = @_;

	for (1 .. 100)
	{
		my $up = eval { $node->poll_query_until('postgres', 'SELECT 1', '1') };
		return if $up;
		die 'no restart after crash' if defined $up;
		usleep(100_000);
	}
	die 'no restart after crash';
}

1;
