-- Time partitions on an idgen key: IDs are time-ordered, so a range of IDs is
-- a range of time.  idgen_span(), native partition bounds from
-- idgen_from_timestamp(), and BRIN against btree on an ID key.
-- pg_partman's daily partitions and retention: t/071_partman.pl.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- A relation's plan as JSON, so that the checks below read fields, not the
-- version-dependent text of EXPLAIN.
CREATE FUNCTION plan_of(query text, run boolean DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE format('EXPLAIN (FORMAT JSON, COSTS OFF, ANALYZE %s, TIMING OFF, SUMMARY OFF) %s',
				   CASE WHEN run THEN 'on' ELSE 'off' END, query) INTO plan;
	RETURN plan::jsonb -> 0 -> 'Plan';
END
$$;

-- idgen_span(): IDs per interval.  The default layout (idgen.epoch
-- 2024-01-01) has 2^22 IDs per millisecond, a day 86400000 << 22.
SELECT idgen_span('1 day') AS day, 86400000::bigint << 22 AS by_hand,
       idgen_span('1 millisecond') AS ms, idgen_span('1 hour') * 24 = idgen_span('1 day') AS hours;
-- other layouts: pgedge as idgen; sonyflake's 10 ms tick holds 2^24;
-- decimal19's millisecond 10^6; part of a tick does not count
SELECT idgen_span('1 day', 'pgedge') AS pgedge, idgen_span('10 ms', 'sonyflake') AS sonyflake_tick,
       idgen_span('15 ms', 'sonyflake') AS sonyflake_15ms, idgen_span('1 ms', 'decimal19') AS decimal19_ms;
-- a day is 86400 s whatever TimeZone: no daylight saving in IDs
SET TimeZone = 'America/New_York';
SELECT idgen_span('1 day') = 86400000::bigint << 22 AS day_in_new_york;
SET TimeZone = 'UTC';
-- the span between UTC midnights is the span of their days
SELECT idgen_from_timestamp('2026-11-08+00') - idgen_from_timestamp('2026-11-01+00') = idgen_span('7 days')
       AS week;
SELECT idgen_span('1 month');
SELECT idgen_span('1 year 2 days');
SELECT idgen_span('0');
SELECT idgen_span('-1 day');
SELECT idgen_span('1 ms', 'sonyflake');
SELECT idgen_span('1 day', 'ulid');
SELECT idgen_span(NULL);
SELECT provolatile, proisstrict, proparallel FROM pg_proc
WHERE oid = 'idgen_span(interval, text)'::regprocedure;

-- Native partitions.  A bound may be any expression without columns:
-- PostgreSQL evaluates it once, at CREATE, and stores the value, so
-- idgen_from_timestamp() (stable: it depends on idgen.epoch, fixed until a
-- restart) is accepted, and the bound stays put if idgen.epoch changes.
SELECT provolatile FROM pg_proc WHERE oid = 'idgen_from_timestamp(timestamptz)'::regprocedure;
CREATE TABLE events (id bigint NOT NULL DEFAULT idgen_next(), v text) PARTITION BY RANGE (id);
CREATE TABLE events_20261101 PARTITION OF events
	FOR VALUES FROM (idgen_from_timestamp('2026-11-01+00')) TO (idgen_from_timestamp('2026-11-02+00'));
CREATE TABLE events_20261102 PARTITION OF events
	FOR VALUES FROM (idgen_from_timestamp('2026-11-02+00'))
	TO (idgen_from_timestamp('2026-11-02+00') + idgen_span('1 day'));
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY 1;
-- today's partition, from now(): rows the default makes land in it
SELECT idgen_from_timestamp(date_trunc('day', now())) AS today_lo,
       idgen_from_timestamp(date_trunc('day', now())) + idgen_span('1 day') AS today_hi \gset
CREATE TABLE events_today PARTITION OF events FOR VALUES FROM (:today_lo) TO (:today_hi);
INSERT INTO events (v) SELECT 'now' FROM generate_series(1, 10);
INSERT INTO events VALUES (idgen_from_timestamp('2026-11-01 12:00+00'), 'nov 1'),
                          (idgen_from_timestamp('2026-11-02 23:59:59.999+00') + 4194303, 'nov 2');
SELECT tableoid::regclass AS partition, v, count(*) FROM events GROUP BY 1, 2 ORDER BY 2;
-- an ID of another day has no partition
INSERT INTO events VALUES (idgen_from_timestamp('2026-11-03+00'), 'nov 3');
-- a time range reads only its partitions, pruned at executor start
SELECT jsonb_path_query_array(plan_of($$SELECT * FROM events
       WHERE id >= idgen_from_timestamp('2026-11-02 06:00+00') AND id < idgen_from_timestamp('2026-11-02 18:00+00')$$),
       'strict $.**."Relation Name"') AS scanned;
DROP TABLE events;

-- BRIN on an ID key: the table's order is time order, so one summary per
-- 128 pages answers a time range.  200000 rows over 10 days, inserted in
-- ID order; the same rows with a btree.
CREATE TABLE readings_brin (id bigint NOT NULL, v int);
INSERT INTO readings_brin
SELECT idgen_from_timestamp('2026-11-01+00'::timestamptz + g * interval '4.32 s') + g % 4096, g
FROM generate_series(0, 199999) g;
CREATE TABLE readings_btree AS SELECT * FROM readings_brin;
CREATE INDEX readings_brin_id ON readings_brin USING brin (id);
CREATE INDEX readings_btree_id ON readings_btree (id);
ANALYZE readings_brin, readings_btree;
-- a few pages against hundreds
SELECT pg_relation_size('readings_brin_id') / current_setting('block_size')::int AS brin_pages,
       pg_relation_size('readings_btree_id') / current_setting('block_size')::int > 400 AS btree_over_400_pages,
       pg_relation_size('readings_brin_id') * 100 < pg_relation_size('readings_btree_id') AS brin_under_1_percent;
-- one day of the ten: a bitmap scan of the BRIN index, reading about a tenth
-- of the table's pages (whole 128-page ranges, so a little more)
SELECT plan_of($$SELECT count(*) FROM readings_brin
       WHERE id >= idgen_from_timestamp('2026-11-04+00') AND id < idgen_from_timestamp('2026-11-05+00')$$, true) AS p \gset
SELECT jsonb_path_query_first(:'p', 'strict $.**."Index Name"') AS index_used,
       jsonb_path_query_first(:'p', 'strict $.**."Plans"[*] ? (@."Node Type" == "Bitmap Heap Scan")."Actual Rows"')::numeric::bigint AS rows_found,
       (jsonb_path_query_first(:'p', 'strict $.**."Lossy Heap Blocks"'))::int
           BETWEEN 1 AND (SELECT relpages / 10 + 2 * 128 FROM pg_class WHERE relname = 'readings_brin') AS tenth_of_table;
SELECT plan_of($$SELECT count(*) FROM readings_btree
       WHERE id >= idgen_from_timestamp('2026-11-04+00') AND id < idgen_from_timestamp('2026-11-05+00')$$, true) AS p \gset
SELECT jsonb_path_query_first(:'p', 'strict $.**."Index Name"') AS index_used,
       jsonb_path_query_first(:'p', 'strict $.**."Plans"[*] ? (@."Actual Rows" > 1)."Actual Rows"')::numeric::bigint AS rows_found;
DROP TABLE readings_brin, readings_btree;
DROP FUNCTION plan_of(text, boolean);
-- wider than the layout's time range: the interval is named, with the range
SELECT idgen_span('2147483647 days');
SELECT idgen_span('100000 days', 'twitter');
SELECT idgen_span('25000 days') > 0 AS within_range;
