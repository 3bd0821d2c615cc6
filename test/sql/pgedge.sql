-- The pgedge layout: pgEdge's snowflake extension, from its snowflake.c:
-- milliseconds since 2023-01-01 UTC (SNOWFLAKE_EPOCH_OFFSET 1672531200 s)
-- << 22 | node (1-1023) << 12 | counter.  pgEdge cannot be built here, so the
-- values are packed by hand from those definitions.  Then idgen_adopt() on a
-- column pgEdge converted to snowflake.nextval('sequence').
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- 2024-06-15 12:34:56.789 UTC is 45923696789 ms after 2023-01-01; node 7,
-- counter 42: (45923696789 << 22) | (7 << 12) | 42.  The node is node_id,
-- the counter sequence; there is no worker field.
SELECT * FROM idgen_decode(192617945136918570, 'pgedge');
-- the first millisecond, node 1, counter 0: 1 << 12
SELECT * FROM idgen_decode(4096, 'pgedge');
-- 2023-03-04 05:06:07.008 UTC, node 1023, counter 4095, every bit of both set:
-- (5375167008 << 22) | (1023 << 12) | 4095
SELECT * FROM idgen_decode(22545084486516735, 'pgedge');
-- the largest: 2^41 - 1 ms, to 2092-09-06 15:47:35.551 UTC
SELECT * FROM idgen_decode(9223372036854775807, 'pgedge');
SELECT * FROM idgen_decode(-1, 'pgedge');

-- from_timestamp: the smallest ID of the millisecond, the others' fields 0
SELECT idgen_from_timestamp('2024-06-15 12:34:56.789+00', 'pgedge')
     = 192617945136918570 & ~((1::bigint << 22) - 1) AS by_hand;
SELECT idgen_from_timestamp('2023-01-01 00:00:00+00', 'pgedge') AS first,
       idgen_from_timestamp('2092-09-06 15:47:35.551+00', 'pgedge') AS last;
SELECT idgen_from_timestamp('2022-12-31 23:59:59.999+00', 'pgedge');
SELECT idgen_from_timestamp('2092-09-06 15:47:35.552+00', 'pgedge');

-- generating: one state per server, as for instagram; the node field
-- carries idgen.node_id (3 in test/idgen.conf)
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids, bool_and(id > prev) AS increasing,
       bool_and((d).node_id = 3) AS node_3, bool_and((d).worker_id IS NULL) AS no_worker,
       bool_and((d).ts BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 s') AS ts_now
FROM (SELECT id, lag(id, 1, -1::bigint) OVER (ORDER BY ord) AS prev, idgen_decode(id, 'pgedge') AS d
      FROM idgen_next_batch(5000, 'pgedge') WITH ORDINALITY AS b(id, ord)) s;
SELECT idgen_next('pgedge') > idgen_from_timestamp(now(), 'pgedge') AS after_now;

-- idgen_adopt() on a pgEdge-converted column.  pgEdge's extension is not
-- available here: a schema snowflake with a stand-in nextval(regclass), which
-- packs pgEdge's IDs for node 7 from the sequence, gives the column the
-- default pgEdge's convert_sequence_to_snowflake() leaves.
CREATE SCHEMA snowflake;
CREATE FUNCTION snowflake.nextval(seq regclass) RETURNS bigint
LANGUAGE sql VOLATILE
AS $$ SELECT idgen_from_timestamp(clock_timestamp(), 'pgedge') + (7 << 12) + pg_catalog.nextval(seq) % 4096 $$;

-- IDs pgEdge made recently are above idgen's: its epoch is a year earlier
-- than idgen.epoch's 2024-01-01.  idgen_adopt() refuses, and points to the
-- pgedge layout, which continues the same numbering.
CREATE TABLE pg_orders (id bigserial PRIMARY KEY, v int);
ALTER TABLE pg_orders ALTER COLUMN id SET DEFAULT snowflake.nextval('pg_orders_id_seq');
SELECT pg_get_expr(adbin, adrelid) AS pgedge_default FROM pg_attrdef WHERE adrelid = 'pg_orders'::regclass;
-- IDs pgEdge's node 7 made an hour ago, and one made just now
INSERT INTO pg_orders SELECT idgen_from_timestamp(now() - interval '1 hour', 'pgedge') + (7 << 12) + g, g
FROM generate_series(1, 100) g;
INSERT INTO pg_orders (v) VALUES (0);
SELECT count(*) FILTER (WHERE (idgen_decode(id, 'pgedge')).node_id = 7) AS node_7 FROM pg_orders;
CREATE FUNCTION try_adopt() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	msg text;
	detail text;
	hint text;
BEGIN
	PERFORM idgen_adopt('pg_orders', 'id');
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RAISE NOTICE 'error: %', msg;
	RAISE NOTICE 'detail names pgEdge and idgen.epoch: %', detail ~ 'pgEdge snowflake ID.*idgen\.epoch, 2024-01-01';
	RAISE NOTICE 'hint: %', regexp_replace(hint, ', at [-0-9]+ [:.0-9]+\+00:', ', at <time>:');
END
$$;
-- the one just made is within idgen.max_clock_regression_ms of now: the
-- pgedge layout continues after that
SELECT try_adopt();
DELETE FROM pg_orders WHERE v = 0;
SELECT try_adopt();
-- nothing changed
SELECT pg_get_expr(adbin, adrelid) AS unchanged FROM pg_attrdef WHERE adrelid = 'pg_orders'::regclass;
-- the hint's way: new IDs in the pgedge layout are above every existing one
SELECT max(id) AS pgedge_max FROM pg_orders \gset
ALTER TABLE pg_orders ALTER COLUMN id SET DEFAULT idgen_next('pgedge');
INSERT INTO pg_orders (v) VALUES (101) RETURNING id > :pgedge_max AS above_existing;

-- IDs pgEdge made in 2023, before idgen.epoch, are below every idgen ID:
-- idgen_adopt() switches the column, and drops the sequence the column owns
CREATE TABLE old_orders (id bigserial PRIMARY KEY, v int);
ALTER TABLE old_orders ALTER COLUMN id SET DEFAULT snowflake.nextval('old_orders_id_seq');
INSERT INTO old_orders VALUES (22545084486516735, 1), (4096, 2);
SELECT * FROM idgen_adopt('old_orders', 'id');
INSERT INTO old_orders (v) VALUES (3) RETURNING id > 22545084486516735 AS above_existing;

-- any other function of a sequence is still refused
CREATE TABLE other_orders (id bigserial PRIMARY KEY);
CREATE SCHEMA other;
CREATE FUNCTION other.nextval(seq regclass) RETURNS bigint LANGUAGE sql AS $$ SELECT pg_catalog.nextval(seq) $$;
ALTER TABLE other_orders ALTER COLUMN id SET DEFAULT other.nextval('other_orders_id_seq');
SELECT * FROM idgen_adopt('other_orders', 'id');

DROP TABLE pg_orders, old_orders, other_orders;
DROP FUNCTION try_adopt();
DROP SCHEMA snowflake, other CASCADE;
