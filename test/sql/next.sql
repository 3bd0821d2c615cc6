-- idgen_next(): positive, unique, strictly increasing, carrying this node's id
SET TimeZone = 'UTC';

SELECT idgen_next() > 0 AS positive;

-- 100k IDs in one statement: all distinct and strictly increasing in call order
WITH ids AS (SELECT n, idgen_next() AS id FROM generate_series(1, 100000) n)
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       bool_and(id > 0) AS all_positive
FROM ids;

WITH ids AS (SELECT n, idgen_next() AS id FROM generate_series(1, 100000) n)
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
WHERE id <= prev;

-- the fields: node 3 from test/idgen.conf, a dedicated worker, a recent time
SELECT d.node_id, d.worker_id < 63 AS dedicated_worker,
       d.sequence BETWEEN 0 AND 4095 AS sequence_in_range,
       d.ts BETWEEN clock_timestamp() - interval '5 seconds'
                AND clock_timestamp() + interval '5 seconds' AS recent
FROM idgen_decode(idgen_next()) d;

-- a burst larger than a millisecond's capacity moves on to later milliseconds
-- without repeating, and at most idgen.max_lead_ms ahead of the clock
WITH ids AS (SELECT idgen_next() AS id FROM generate_series(1, 50000))
SELECT count(DISTINCT (idgen_decode(id)).ts) > 1 AS spans_milliseconds,
       max((idgen_decode(id)).ts) <= clock_timestamp() + interval '1 second' AS within_lead
FROM ids;

-- every new millisecond starts its sequence at random in the lower half
WITH ids AS (SELECT idgen_next() AS id FROM generate_series(1, 50000))
SELECT min(first_seq) >= 0 AS low_ok, max(first_seq) < 2048 AS in_lower_half,
       count(DISTINCT first_seq) > 1 AS varies
FROM (SELECT min((idgen_decode(id)).sequence) AS first_seq
      FROM ids GROUP BY (idgen_decode(id)).ts) s;

-- as a column default
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen_next(), item text);
INSERT INTO orders (item) SELECT 'item ' || n FROM generate_series(1, 1000) n;
SELECT count(*) FROM orders;
SELECT count(*) AS recent FROM orders
WHERE id >= idgen_from_timestamp(now() - interval '1 hour');

-- the view shows this backend's slot and the shared slot
SELECT count(*) FILTER (WHERE pid = pg_backend_pid()) AS mine,
       count(*) FILTER (WHERE is_shared) AS shared
FROM idgen_workers;
SELECT ids_issued > 200000 AS counted, lead_ms >= 0 AS lead_ok,
       last_ts <= clock_timestamp() + interval '1 second' AS last_ok
FROM idgen_workers WHERE pid = pg_backend_pid();

-- low bits spread evenly even at one ID per millisecond: each row moves the
-- clock on by a millisecond, as a slow trickle of inserts would
CREATE TABLE trickle AS
SELECT idgen_next() AS id
FROM generate_series(1, 2000) n
WHERE set_config('idgen.clock_offset_ms', n::text, false) IS NOT NULL;
RESET idgen.clock_offset_ms;
-- the slot's time is now up to 2 s ahead: let the clock catch up, so that
-- the next test to hold this worker id starts near the clock
SELECT pg_sleep(2.1);
SELECT count(DISTINCT (idgen_decode(id)).ts) AS milliseconds FROM trickle;
SELECT count(*) AS mod7_buckets, max(c) < 2 * min(c) AS mod7_even
FROM (SELECT id % 7 AS b, count(*) AS c FROM trickle GROUP BY 1) s;
SELECT count(DISTINCT id % 1000) > 700 AS mod1000_spread,
       count(DISTINCT id % 1024) > 700 AS mod1024_spread
FROM trickle;

-- the server's first test: its statistics' table still has room, so it has
-- dropped no definition's counts, and idgen_capacity counts none
SELECT in_use BETWEEN 1 AND capacity - 1 AS room, overflows AS dropped
FROM idgen_capacity WHERE name = 'stats';
