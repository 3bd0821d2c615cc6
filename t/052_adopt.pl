# Adopting idgen on an existing schema: a serial and an IDENTITY key, both
# int, with foreign keys.  idgen_adopt() widens the keys and the columns
# that reference them, drops the sequences and sets DEFAULT idgen_next();
# new IDs land above the old ones, and pg_dump and pg_restore carry the
# result to a new database where inserts keep working.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = idgen_node('adopt', "idgen.node_id = 4\n");
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', q(
	CREATE EXTENSION idgen;
	CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL);
	CREATE TABLE orders (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		customer_id int NOT NULL REFERENCES customers, note text);
	CREATE TABLE order_lines (order_id int REFERENCES orders ON DELETE CASCADE,
		line int, PRIMARY KEY (order_id, line));
	INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 1000) g;
	INSERT INTO orders (customer_id) SELECT 1 + g % 1000 FROM generate_series(1, 5000) g;
	INSERT INTO order_lines SELECT o, l FROM generate_series(1, 5000) o, generate_series(1, 4) l;
));

# Columns, types and defaults of the schema, and its sequences.
my $shape = q(
	SELECT string_agg(format('%s.%s %s %s', c.relname, a.attname, format_type(a.atttypid, NULL),
	                         coalesce(pg_get_expr(d.adbin, d.adrelid), '-')), E'\n'
	                  ORDER BY c.relname, a.attnum)
	FROM pg_class c
	JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
	LEFT JOIN pg_attrdef d ON (d.adrelid, d.adnum) = (a.attrelid, a.attnum)
	WHERE c.relname IN ('customers', 'orders', 'order_lines') AND a.attname ~ 'id'
	UNION ALL
	SELECT coalesce(string_agg(relname, ' '), 'no sequences') FROM pg_class WHERE relkind = 'S');

my ($ret, $out, $err) = $node->psql('shop', "SELECT idgen_adopt('orders', 'id')");
like($err, qr/columns too narrow for idgen IDs: public\.orders\.id \(integer\), public\.order_lines\.order_id \(integer\)/,
	'int keys are refused unless widening is asked for');

is($node->safe_psql('shop', q(
	SELECT idgen_adopt('customers', 'id', widen => true);
	SELECT idgen_adopt('orders', 'id', widen => true);
)), q(largest existing value of public.customers.id, 1000, is below every ID idgen makes from now on
dropped default nextval('public.customers_id_seq'::regclass) of public.customers.id
changed id to bigint in public.customers
changed customer_id (foreign key orders_customer_id_fkey) to bigint in public.orders
dropped sequence public.customers_id_seq
set default of public.customers.id to public.idgen_next()
largest existing value of public.orders.id, 5000, is below every ID idgen makes from now on
dropped identity of public.orders.id, with its sequence public.orders_id_seq
changed id to bigint in public.orders
changed order_id (foreign key order_lines_order_id_fkey) to bigint in public.order_lines
set default of public.orders.id to public.idgen_next()), 'what idgen_adopt did');

my $adopted = q(customers.id bigint idgen_next()
order_lines.order_id bigint -
orders.id bigint idgen_next()
orders.customer_id bigint -
no sequences);
is($node->safe_psql('shop', $shape), $adopted, 'keys and foreign keys are bigint, defaults idgen_next()');

# New rows get idgen IDs above the old ones, and the foreign keys still hold.
my $insert = q(
	WITH c AS (INSERT INTO customers (name) VALUES ('new') RETURNING id),
	     o AS (INSERT INTO orders (customer_id) SELECT id FROM c RETURNING id)
	INSERT INTO order_lines SELECT id, l FROM o, generate_series(1, 3) l;
	SELECT count(*) FILTER (WHERE o.id > 5000 AND (idgen_decode(o.id)).node_id = 4
	                        AND o.customer_id > 1000 AND (idgen_decode(o.customer_id)).node_id = 4),
	       count(*)
	FROM orders o JOIN order_lines l ON l.order_id = o.id WHERE o.id > 5000;
);
is($node->safe_psql('shop', $insert), '3|3', 'new customer, order and lines get idgen IDs');
($ret, $out, $err) = $node->psql('shop', 'INSERT INTO order_lines VALUES (123456789012, 1)');
like($err, qr/violates foreign key constraint "order_lines_order_id_fkey"/, 'the foreign key still holds');

# Dump and restore into a new database.
my $dump = PostgreSQL::Test::Utils::tempdir() . '/shop.dump';
$node->command_ok([ 'pg_dump', '--format=custom', "--file=$dump", '--dbname=shop' ], 'pg_dump');
$node->command_ok([ 'pg_dump', '--schema-only', "--file=$dump.sql", '--dbname=shop' ], 'pg_dump as SQL');
like(slurp_file("$dump.sql"), qr/id bigint DEFAULT public\.idgen_next\(\) NOT NULL/,
	'the dump keeps the default as a call of the extension\'s function');
$node->safe_psql('postgres', 'CREATE DATABASE shop2');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--dbname=shop2', $dump ], 'pg_restore');

is($node->safe_psql('shop2', $shape), $adopted, 'the restored schema is the adopted one');
is($node->safe_psql('shop2', 'SELECT count(*) FROM orders'), '5001', 'the restored rows are there');
is($node->safe_psql('shop2', $insert), '6|6', 'inserts work in the restored database');
ids_unique($node, 'orders', 'orders keys are distinct', dbname => 'shop2');
($ret, $out, $err) = $node->psql('shop2', 'INSERT INTO orders (customer_id) VALUES (123456789012)');
like($err, qr/violates foreign key constraint "orders_customer_id_fkey"/, 'restored foreign keys hold');

$node->stop;
done_testing();
