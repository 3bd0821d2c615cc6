-- idgen_uuidv7(): RFC 9562 version and variant, time, monotonicity
SET TimeZone = 'UTC';

SELECT substr(u::text, 15, 1) AS version,
       substr(u::text, 20, 1) IN ('8', '9', 'a', 'b') AS variant_10,
       idgen_uuid_timestamp(u) BETWEEN clock_timestamp() - interval '5 seconds'
                                   AND clock_timestamp() + interval '5 seconds' AS recent
FROM (SELECT idgen_uuidv7() AS u) s;

-- one million in one statement: all distinct, strictly increasing in call order
WITH u AS (SELECT n, idgen_uuidv7() AS u FROM generate_series(1, 1000000) n)
SELECT count(DISTINCT u) AS distinct_uuids,
       count(*) FILTER (WHERE u <= prev) AS not_increasing,
       bool_and(substr(u::text, 15, 1) = '7') AS all_v7
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM u) s;

-- still increasing when the clock steps back a second
CREATE TEMP TABLE before AS SELECT idgen_uuidv7() AS u FROM generate_series(1, 1000);
SET idgen.clock_offset_ms = -1000;
CREATE TEMP TABLE after AS SELECT idgen_uuidv7() AS u FROM generate_series(1, 1000);
RESET idgen.clock_offset_ms;
SELECT (SELECT u FROM after ORDER BY u LIMIT 1) > (SELECT u FROM before ORDER BY u DESC LIMIT 1)
       AS increasing;

-- timestamps of fixed values: RFC 9562 appendix A.6's example, and other versions
SELECT idgen_uuid_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f');
SELECT idgen_uuid_timestamp('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11') AS v4;
SELECT idgen_uuid_timestamp(NULL);
