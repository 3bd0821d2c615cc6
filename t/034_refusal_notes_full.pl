# The notes of clusters found uncovered (idgen_hwm's systems line, which
# keeps the refusal across restarts) hold 64.  A 65th cluster's row of
# idgen_system is refused with 53400 and the way out, rather than a refusal
# that a restart would forget; the 64 noted still refuse after a restart
# (before, a line of more than five system identifiers made idgen_hwm
# unreadable at the next start); once their database is told where to
# resume and the server restarts, the row loads, and the server refuses for
# its cluster.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('notes', "idgen.node_id = 1\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen');

# Rows of clusters $from..$to, each alone, as restores bring them.
sub insert_systems
{
	my ($from, $to) = @_;
	return $node->psql('app', qq(
		\\set ON_ERROR_STOP 1
		SELECT format('INSERT INTO idgen_system VALUES (%s, now() - interval ''1 day'')',
			7000000000000000000 + s)
		FROM generate_series($from, $to) s \\gexec));
}

sub notes_in_file
{
	my $text = slurp_file($node->data_dir . '/idgen_hwm');
	return scalar(() = $text =~ / ![0-9]+:[0-9]+/g);
}

my ($ret, $out, $err) = insert_systems(1001, 1064);
is($ret, 0, '64 clusters\' rows load');
is(notes_in_file(), 64, 'each is noted in idgen_hwm');

($ret, $out, $err) = insert_systems(1065, 1065);
like($err, qr/ERROR:  idgen keeps 64 notes of databases holding IDs of clusters it does not cover already/,
	'a 65th cluster\'s row is refused: its refusal could not be kept');
like($err, qr/HINT:  Run SELECT idgen_resume_after\(t\) in the databases the refusal names, restart the server, and try again\./,
	'and the error says the way out');
is($node->safe_psql('app', q(SELECT count(*) FROM idgen_system WHERE system_identifier = 7000000000000000000 + 1065)), '0',
	'the refused row is not there');
($ret, $out, $err) = $node->psql('app',
	q(\set VERBOSITY verbose
	INSERT INTO idgen_system VALUES (7000000000000001065, now() - interval '1 day')));
like($err, qr/ERROR:  53400:/, 'SQLSTATE 53400 (configuration_limit_exceeded)');

$node->restart;
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/holds idgen IDs of another cluster/, 'after a restart, the 64 noted still refuse');

# The way out the hint gives.
$node->safe_psql('app', q(SELECT idgen_resume_after(now() - interval '1 hour')));
$node->restart;
is(notes_in_file(), 0, 'told where to resume, and restarted: the notes go');
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
is($ret, 0, 'and generation resumes');

($ret, $out, $err) = insert_systems(1065, 1065);
is($ret, 0, 'trying again: the 65th cluster\'s row loads');
($ret, $out, $err) = $node->psql('postgres', 'SELECT idgen_next()');
like($err, qr/system identifier 7000000000000001065/, 'and the server refuses for its cluster');

done_testing();
