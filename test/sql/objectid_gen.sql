-- objectid(), objectid_timestamp() and objectid_from_timestamp()
SET client_min_messages = warning;
RESET client_min_messages;
SET TimeZone = 'UTC';

-- MongoDB's test plan: the time field is unsigned, from 1970 to 2106
SELECT o, objectid_timestamp(o)
FROM (VALUES ('000000000000000000000000'::objectid),
             ('7fffffff0000000000000000'),
             ('800000000000000000000000'),
             ('ffffffff0000000000000000')) v(o);
-- the other eight bytes do not matter
SELECT objectid_timestamp('00000000ffffffffffffffff') AS zero,
       objectid_timestamp('ffffffffffffffffffffffff') AS last;
SELECT objectid_timestamp('507f1f77bcf86cd799439011');
SELECT objectid_timestamp(NULL);

-- objectid_from_timestamp: the smallest objectid of the timestamp's second
SELECT t, objectid_from_timestamp(t)
FROM (VALUES ('1970-01-01 00:00:00+00'::timestamptz),
             ('1970-01-01 00:00:00.999999+00'),
             ('2038-01-19 03:14:07.999999+00'),
             ('2038-01-19 04:14:08+01'),
             ('2106-02-07 06:28:15+00'),
             ('2106-02-07 06:28:15.999999+00')) v(t);
SELECT objectid_from_timestamp('1969-12-31 23:59:59.999999+00');
SELECT objectid_from_timestamp('2106-02-07 06:28:16+00');
SELECT objectid_from_timestamp('4000-01-01 00:00:00+00');
SELECT objectid_from_timestamp('infinity');
SELECT objectid_from_timestamp('-infinity');
SELECT objectid_from_timestamp(NULL);
SELECT objectid_timestamp(objectid_from_timestamp(t)) = date_trunc('second', t) AS round_trip
FROM (VALUES ('1970-01-01 00:00:00+00'::timestamptz),
             ('2024-02-29 12:34:56.789+00'),
             ('2106-02-07 06:28:15.5+00')) v(t);
-- bounds: from_timestamp(timestamp(o)) <= o < from_timestamp(timestamp(o) + 1 s)
SELECT objectid_from_timestamp(objectid_timestamp(o)) <= o AS lower_bound,
       objectid_from_timestamp(objectid_timestamp(o) + interval '1 second') > o AS upper_bound
FROM (VALUES ('507f1f77bcf86cd799439011'::objectid), ('7fffffffffffffffffffffff')) v(o);

-- how each function is declared
SELECT p.oid::regprocedure, provolatile, proparallel, proisstrict
FROM pg_proc p
WHERE proname LIKE 'objectid%'
ORDER BY p.oid::regprocedure::text;

-- objectid(): 24 hex digits; the time is this second's
SELECT o::text ~ '^[0-9a-f]{24}$' AS hex24,
       objectid_timestamp(o) >= date_trunc('second', now()) AS not_before_now,
       objectid_timestamp(o) <= clock_timestamp() AS not_after_now
FROM (SELECT objectid() AS o OFFSET 0) s;

-- 20 values from one statement: one process field; consecutive counters,
-- wrapping from ffffff to 000000; increasing, but for that wrap
CREATE TEMP TABLE oid_gen AS
SELECT n, o, substr(o::text, 9, 10) AS process,
       ('x' || substr(o::text, 19, 6))::bit(24)::int AS counter,
       objectid_timestamp(o) >= date_trunc('second', now()) AND
       objectid_timestamp(o) <= clock_timestamp() AS time_now
FROM (SELECT n, objectid() AS o FROM generate_series(1, 20) n OFFSET 0) s;
SELECT count(*) AS n, count(DISTINCT o) AS distinct_values,
       count(DISTINCT process) AS process_fields,
       bool_and(time_now) AS times_now
FROM oid_gen;
SELECT count(*) FILTER (WHERE counter <> (prev_counter + 1) % 16777216) AS not_consecutive,
       count(*) FILTER (WHERE o <= prev AND counter <> 0) AS not_increasing
FROM (SELECT o, counter, lag(o) OVER w AS prev, lag(counter) OVER w AS prev_counter
      FROM oid_gen WINDOW w AS (ORDER BY n)) s
WHERE prev IS NOT NULL;
-- the next statement continues the same counter in the same process field
SELECT ('x' || substr(o::text, 19, 6))::bit(24)::int =
       (SELECT (counter + 1) % 16777216 FROM oid_gen ORDER BY n DESC LIMIT 1) AS counter_continues,
       substr(o::text, 9, 10) = (SELECT process FROM oid_gen LIMIT 1) AS same_process
FROM (SELECT objectid() AS o OFFSET 0) s;
SELECT count(*) AS n, count(DISTINCT o) AS distinct_values
FROM (SELECT objectid() AS o FROM generate_series(1, 100000)) s;

-- the counter wraps from ffffff to 000000: run it up to fffffe (up to 2^24
-- values, a few seconds), then take three more
SELECT (16777214 - ('x' || substr(objectid()::text, 19, 6))::bit(24)::int
        + 16777216) % 16777216 AS to_go \gset
SELECT count(objectid()) = :to_go AS generated FROM generate_series(1, :to_go);
SELECT n, substr(o::text, 19, 6) AS counter,
       substr(o::text, 9, 10) = (SELECT process FROM oid_gen LIMIT 1) AS same_process
FROM (SELECT n, objectid() AS o FROM generate_series(1, 3) n) s
ORDER BY n;

-- the process field stays after all those values
SELECT substr(o::text, 9, 10) = (SELECT process FROM oid_gen LIMIT 1) AS same_process
FROM (SELECT objectid() AS o OFFSET 0) s;

-- idgen.clock_offset_ms shifts the clock objectid() reads.  A new session,
-- as this one's values will not go back in time.
\c
SET idgen.clock_offset_ms = -86400000;
SELECT objectid_timestamp(o) >= date_trunc('second', now() - interval '1 day') AS not_before,
       objectid_timestamp(o) <= clock_timestamp() - interval '1 day' AS not_after
FROM (SELECT objectid() AS o OFFSET 0) s;
SET idgen.clock_offset_ms = 86400000;
SELECT o AS ahead,
       objectid_timestamp(o) >= date_trunc('second', now() + interval '1 day') AS not_before,
       objectid_timestamp(o) <= clock_timestamp() + interval '1 day' AS not_after
FROM (SELECT objectid() AS o OFFSET 0) s \gset
\echo :not_before :not_after
-- the clock now reads a day earlier than the newest value: objectid() stays
-- in that value's second, counting on
RESET idgen.clock_offset_ms;
SELECT objectid_timestamp(o) = objectid_timestamp(:'ahead') AS same_second,
       ('x' || substr(o::text, 19, 6))::bit(24)::int =
       (('x' || substr(:'ahead', 19, 6))::bit(24)::int + 1) % 16777216 AS next_counter
FROM (SELECT objectid() AS o OFFSET 0) s;
