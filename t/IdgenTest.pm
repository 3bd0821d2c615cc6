# Shared by the TAP tests: a started node with idgen preloaded and the
# extension created in database postgres.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(idgen_node set_auto_conf);

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

# Replaces postgresql.auto.conf with the given lines and restarts the node,
# so that settings from an earlier call do not linger.
sub set_auto_conf
{
	my ($node, $conf) = @_;

	$node->stop;
	open my $fh, '>', $node->data_dir . '/postgresql.auto.conf' or die $!;
	print $fh "$conf\n";
	close $fh;
	$node->start;
}

1;
