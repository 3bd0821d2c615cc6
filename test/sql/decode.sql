-- idgen_decode() and idgen_from_timestamp() at and beyond their edges
SET TimeZone = 'UTC';

-- 0 is the first ID of the epoch (idgen.epoch defaults to 2024-01-01)
SELECT * FROM idgen_decode(0);
-- fields computed by hand: 1000 ms, node 3, worker 5, sequence 7 with
-- node_bits = 4: (1000 << 22) | (3 << 18) | (5 << 12) | 7
SELECT * FROM idgen_decode(4195110919);
-- the largest value: the layout's last millisecond, every field full
SELECT * FROM idgen_decode(9223372036854775807);
SELECT (idgen_decode(9223372036854775807)).ts
     = '2024-01-01 00:00:00+00'::timestamptz + (2199023255551 / 1000.0) * interval '1 second'
       AS last_ms_matches;
SELECT * FROM idgen_decode(NULL);
SELECT * FROM idgen_decode(-1);
SELECT * FROM idgen_decode(-9223372036854775808);

-- from_timestamp: the smallest ID of the timestamp's millisecond
SELECT idgen_from_timestamp('2024-01-01 00:00:00+00');
SELECT idgen_from_timestamp('2024-01-01 00:00:01.0009+00') AS one_second;
SELECT idgen_from_timestamp('2093-09-06 15:47:35.551+00') AS last_ms;
SELECT idgen_from_timestamp('2093-09-06 15:47:35.552+00');
SELECT idgen_from_timestamp('2023-12-31 23:59:59.999+00');
SELECT idgen_from_timestamp('infinity');
SELECT idgen_from_timestamp('-infinity');
SELECT idgen_from_timestamp(NULL);

-- round trips
SELECT (idgen_decode(idgen_from_timestamp(t))).ts = date_trunc('milliseconds', t) AS round_trip
FROM (VALUES ('2024-01-01 00:00:00.001+00'::timestamptz),
             ('2026-11-21 12:34:56.789123+00'),
             ('2050-06-15 08:00:00+00')) v(t);
SELECT idgen_from_timestamp((idgen_decode(id)).ts) <= id AS lower_bound,
       idgen_from_timestamp((idgen_decode(id)).ts + interval '1 millisecond') > id AS upper_bound
FROM (SELECT idgen_next() AS id) s;
