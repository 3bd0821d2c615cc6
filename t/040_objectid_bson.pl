# objectid against MongoDB's own reading of ObjectIds (Python's bson), in
# text and in binary, and the process field of concurrent backends.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

require_test_extra('integration');

# Debian's python3-bson; the python3 first on PATH may be another one.
my $python = '/usr/bin/python3';
# scripts/test installs it; elsewhere a missing module skips this file alone.
plan skip_all => "$python with the bson module (Debian package python3-bson) is not installed"
  unless -x $python && system($python, '-c', 'import bson') == 0;

my $tmp = PostgreSQL::Test::Utils::tempdir;

# Runs a Python snippet that has bson, struct and sys imported; returns its
# output lines.
sub python
{
	my ($name, $script, @args) = @_;
	my ($out, $err) = ('', '');

	my $ok = IPC::Run::run(
		[ $python, '-c', "import bson, datetime, struct, sys\n$script", @args ],
		'>', \$out, '2>', \$err);
	ok($ok, "python: $name") or diag($err);
	return split /\n/, $out;
}

my $node = PostgreSQL::Test::Cluster->new('objectid');
$node->init;
$node->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'idgen'
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

# Two live backends.  The library is loaded in the postmaster and each
# backend is its fork, so equal random bytes would mean the field was
# chosen before the fork; the backend numbers differ whatever the random.
my $s1 = $node->background_psql('postgres');
my $s2 = $node->background_psql('postgres');
my $a1 = $s1->query_safe('SELECT objectid()');
my $b1 = $s2->query_safe('SELECT objectid()');
my $a2 = $s1->query_safe('SELECT objectid()');
$s1->quit;
$s2->quit;
like($_, qr/^[0-9a-f]{24}$/, "objectid() gives 24 hex digits: $_") for ($a1, $b1, $a2);
is(substr($a2, 8, 10), substr($a1, 8, 10), 'one backend keeps its process field');
isnt(substr($b1, 8, 4), substr($a1, 8, 4), 'concurrent backends have different backend numbers');
isnt(substr($b1, 12, 6), substr($a1, 12, 6),
	'and different random bytes, drawn in each backend');
cmp_ok(hex(substr($a1, 8, 4)), '>=', 1, 'the backend number is a backend id');

# Values idgen made, and the edges of the time field, read by bson from
# their text and from their binary (send) form.
$node->safe_psql('postgres', q(
	CREATE TABLE made (n int, o objectid);
	INSERT INTO made SELECT n, objectid() FROM generate_series(1, 5) n;
	INSERT INTO made VALUES
		(6, '000000000000000000000000'), (7, '7fffffff0000000000000000'),
		(8, '800000000000000000000000'), (9, 'ffffffffffffffffffffffff'),
		(10, '507f1f77bcf86cd799439011');
));
my $made = $node->safe_psql('postgres', q(
	SELECT o, extract(epoch FROM objectid_timestamp(o))::bigint,
	       encode(objectid_send(o), 'hex')
	FROM made ORDER BY n));
my @made = map { [ split /\|/ ] } split /\n/, $made;
is(scalar @made, 10, 'ten values made');

my $made_file = "$tmp/made.txt";
append_to_file($made_file, join("\n", map { "$_->[0],$_->[2]" } @made) . "\n");
my @bson = python('read idgen values', q(
for line in open(sys.argv[1]).read().split():
    text, binary = line.split(',')
    a = bson.ObjectId(text)
    b = bson.ObjectId(bytes.fromhex(binary))
    print(str(a), int(a.generation_time.timestamp()), str(b),
          int(b.generation_time.timestamp()))
), $made_file);
is(scalar @bson, 10, 'bson read all ten');
for my $i (0 .. $#made)
{
	my ($text, $epoch) = @{ $made[$i] };
	is($bson[$i], "$text $epoch $text $epoch",
		"bson reads $text, text and binary, with objectid_timestamp's time");
}

# bson's order is idgen's
my @sorted = python('sort', q(
ids = [bson.ObjectId(line.split(',')[0]) for line in open(sys.argv[1]).read().split()]
print(' '.join(str(x) for x in sorted(ids)))
), $made_file);
is($sorted[0],
	join(' ', split /\n/, $node->safe_psql('postgres', 'SELECT o FROM made ORDER BY o')),
	'bson sorts the values as ORDER BY does');

# The binary form on the wire: COPY BINARY written by the server, read by bson.
$node->safe_psql('postgres',
	"COPY (SELECT o FROM made ORDER BY n) TO '$tmp/made.copy' (FORMAT binary)");
my @copied = python('read COPY BINARY', q(
data = open(sys.argv[1], 'rb').read()
assert data[:11] == b'PGCOPY\n\xff\r\n\x00'
pos = 19 + struct.unpack('>i', data[15:19])[0]
while True:
    (fields,) = struct.unpack('>h', data[pos:pos + 2]); pos += 2
    if fields == -1:
        break
    (length,) = struct.unpack('>i', data[pos:pos + 4]); pos += 4
    print(length, str(bson.ObjectId(data[pos:pos + length]))); pos += length
), "$tmp/made.copy");
is_deeply(\@copied, [ map { "12 $_->[0]" } @made ],
	'COPY BINARY carries the 12 bytes bson reads');

# Values bson made go into an objectid column and come back unchanged,
# through text and through COPY BINARY (objectid_recv).
my @theirs = python('make ObjectIds', q(
utc = datetime.timezone.utc
ids = [bson.ObjectId() for _ in range(5)]
ids += [bson.ObjectId.from_datetime(datetime.datetime(*t, tzinfo=utc)) for t in
        [(1970, 1, 1), (2038, 1, 19, 3, 14, 7), (2038, 1, 19, 3, 14, 8),
         (2106, 2, 7, 6, 28, 15), (2024, 2, 29, 12, 34, 56, 789000)]]
with open(sys.argv[1], 'wb') as f:
    f.write(b'PGCOPY\n\xff\r\n\x00' + struct.pack('>ii', 0, 0))
    for n, oid in enumerate(ids):
        f.write(struct.pack('>hii', 2, 4, n) + struct.pack('>i', 12) + oid.binary)
    f.write(struct.pack('>h', -1))
for oid in ids:
    print(str(oid), int(oid.generation_time.timestamp()))
), "$tmp/theirs.copy");
is(scalar @theirs, 10, 'bson made ten values');
$node->safe_psql('postgres', "CREATE TABLE theirs (n int, o objectid);
	COPY theirs FROM '$tmp/theirs.copy' (FORMAT binary);
	CREATE TABLE theirs_text (n int, o objectid);");
for my $i (0 .. $#theirs)
{
	my ($hex) = split / /, $theirs[$i];
	$node->safe_psql('postgres', "INSERT INTO theirs_text VALUES ($i, '$hex')");
}
my $query = q(SELECT o || ' ' || extract(epoch FROM objectid_timestamp(o))::bigint
	FROM %s ORDER BY n);
is_deeply([ split /\n/, $node->safe_psql('postgres', sprintf($query, 'theirs')) ],
	\@theirs, 'bson values come back unchanged through COPY BINARY, same time');
is_deeply([ split /\n/, $node->safe_psql('postgres', sprintf($query, 'theirs_text')) ],
	\@theirs, 'and through text');
# bson's from_datetime is objectid_from_timestamp
is($node->safe_psql('postgres', q(
	SELECT string_agg(objectid_from_timestamp(t)::text, ' ' ORDER BY t)
	FROM (VALUES ('1970-01-01 00:00:00+00'::timestamptz),
	             ('2038-01-19 03:14:07+00'), ('2038-01-19 03:14:08+00'),
	             ('2106-02-07 06:28:15+00'), ('2024-02-29 12:34:56.789+00')) v(t))),
	join(' ', sort map { (split / /)[0] } @theirs[5 .. 9]),
	'objectid_from_timestamp agrees with bson ObjectId.from_datetime');

# No shared memory needed: objectid() works without preloading.
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
like($node->safe_psql('postgres', 'SELECT objectid()'), qr/^[0-9a-f]{24}$/,
	'objectid() works without shared_preload_libraries');

$node->stop;
done_testing();
