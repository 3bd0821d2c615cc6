-- Named layouts: other systems' IDs through idgen_decode(id, layout) and
-- idgen_from_timestamp(ts, layout); and idgen_next_batch()
SET TimeZone = 'UTC';

-- Twitter: the example tweet ID of the Snowflake ID article on Wikipedia,
-- 2022-06-28 16:07:40.105 UTC.  By hand: 1541815603606036480 >> 22 =
-- 367597485448 ms after 1288834974657; datacenter (>> 17) & 31 = 11,
-- worker (>> 12) & 31 = 26, sequence & 4095 = 0.
SELECT * FROM idgen_decode(1541815603606036480, 'twitter');
-- fields packed by hand: 1000 ms, datacenter 3, worker 5, sequence 7:
-- (1000 << 22) | (3 << 17) | (5 << 12) | 7
SELECT * FROM idgen_decode(4194717703, 'twitter');

-- Discord: the example of its API reference, 2016-04-30 11:18:25.796 UTC,
-- worker 1, process 0, increment 7
SELECT * FROM idgen_decode(175928847299117063, 'discord');

-- Sonyflake: 2024-05-01 12:00:00.12 UTC is (1714564800120 - 1409529600000)
-- / 10 = 30503520012 ticks of 10 ms; sequence 5, machine id 4660 (0x1234):
-- (30503520012 << 24) | (5 << 16) | 4660.  No node field: node_id is NULL.
SELECT * FROM idgen_decode(511764144001978932, 'sonyflake');
-- a ms inside a tick decodes to the tick's start
SELECT * FROM idgen_decode((1::bigint << 24) | (255 << 16) | 65535, 'sonyflake');

-- Instagram: 2012-01-01 00:00:00 UTC is 1325376000000 - 1314220021721 =
-- 11155978279 ms; shard 1341 and sequence 904 (5000 % 1024), as in
-- Instagram's description: (11155978279 << 23) | (1341 << 10) | 904.
-- No worker field: worker_id is NULL.
SELECT * FROM idgen_decode(93583128640419720, 'instagram');

-- redis-borrow: the first GETID and MGETID examples of the Redis ID server's
-- article (2017-03-06): >> 21 = ms since 2015-01-01 UTC, server (>> 19) & 3,
-- shard range (>> 10) & 511, random & 1023.  The random bits are not decoded.
SELECT * FROM idgen_decode(144182182078841378, 'redis-borrow');
SELECT * FROM idgen_decode(144182328657183537, 'redis-borrow');
-- by hand: 2024-02-29 23:59:59.999 UTC is 289180799999 ms after the epoch;
-- server 3, shard range 511, random 1023:
-- (289180799999 << 21) | (3 << 19) | (511 << 10) | 1023
SELECT * FROM idgen_decode(606456093081599999, 'redis-borrow');

-- decimal19: the example of its article, 1613024787541 | 9 | 81 | 316:
-- 1613024787541 - 136040000000 = 1476984787541 ms, 2016-10-20 17:33:07.541
-- UTC, sequence 9, machine 81 (node_id), table 316 (worker_id)
SELECT * FROM idgen_decode(1613024787541981316, 'decimal19');
-- by hand: 2030-01-02 03:04:05.678 UTC = 1893553445678 ms, sequence 7,
-- machine 42, table 999: ((1893553445678 + 136040000000) * 10 + 7) * 100000
-- + 42 * 1000 + 999
SELECT * FROM idgen_decode(2029593445678742999, 'decimal19');
SELECT 2029593445678742999 % 1000 AS table_suffix;

-- js53: 2025-06-01 12:00:00.123 UTC is 44712000123 ms after 2024-01-01;
-- node 5, worker 6, sequence 33: (44712000123 << 13) | (5 << 9) | (6 << 6) | 33
SELECT * FROM idgen_decode(366280705010593, 'js53');
-- its largest ID is 2^53 - 1, the largest integer a JavaScript Number holds
SELECT * FROM idgen_decode(9007199254740991, 'js53');
SELECT * FROM idgen_decode(9007199254740992, 'js53');

-- 'idgen' is the default layout, as configured (node_id = 3 in test/idgen.conf)
SELECT * FROM idgen_decode(4195110919, 'idgen');
SELECT (idgen_decode(id, 'idgen')) IS NOT DISTINCT FROM (idgen_decode(id)) AS same_as_default
FROM (SELECT idgen_next() AS id) s;

-- the largest value of each layout: its last tick, every field full
SELECT l, (idgen_decode(9223372036854775807, l)).*
FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake', 'instagram',
                  'redis-borrow', 'decimal19']) l;

-- errors, and NULLs
SELECT * FROM idgen_decode(1, 'snowflake');
SELECT * FROM idgen_decode(1, 'Twitter');
SELECT * FROM idgen_decode(-1, 'twitter');
SELECT * FROM idgen_decode(-9223372036854775808, 'instagram');
SELECT * FROM idgen_decode(NULL, 'twitter');
SELECT * FROM idgen_decode(1, NULL);

-- from_timestamp: the smallest ID of the tick containing the timestamp
SELECT idgen_from_timestamp('2022-06-28 16:07:40.105+00', 'twitter')
     = 1541815603606036480 & ~((1::bigint << 22) - 1) AS twitter_example;
SELECT idgen_from_timestamp('2016-04-30 11:18:25.796+00', 'discord')
     = 175928847299117063 & ~((1::bigint << 22) - 1) AS discord_example;
SELECT idgen_from_timestamp('2024-05-01 12:00:00.129+00', 'sonyflake')
     = 30503520012 << 24 AS sonyflake_tick;
SELECT idgen_from_timestamp('2012-01-01 00:00:00+00', 'instagram')
     = 11155978279 << 23 AS instagram_example;
SELECT idgen_from_timestamp('2024-01-01 00:00:01+00', 'idgen')
     = idgen_from_timestamp('2024-01-01 00:00:01+00') AS same_as_default;

-- round trips in every layout: decoding from_timestamp(t) gives the start of
-- t's tick, the epoch plus whole ticks
SELECT l, bool_and((idgen_decode(idgen_from_timestamp(t, l), l)).ts =
                   e + floor(extract(epoch FROM t - e) * 1000 / tick) * tick
                       * interval '1 millisecond') AS round_trip
FROM (VALUES ('idgen', '2024-01-01+00'::timestamptz, 1),
             ('twitter', '2010-11-04 01:42:54.657+00', 1),
             ('discord', '2015-01-01+00', 1),
             ('sonyflake', '2014-09-01+00', 10),
             ('instagram', '2011-08-24 21:07:01.721+00', 1),
             ('redis-borrow', '2015-01-01+00', 1),
             ('decimal19', '1965-09-09 11:06:40+00', 1),
             ('js53', '2024-01-01+00', 1)) v(l, e, tick),
     LATERAL (VALUES (e), (e + interval '0.001 s'), (e + interval '1234.5678 s'),
                     ('2030-02-03 04:05:06.789999+00')) w(t)
GROUP BY l ORDER BY l;

-- edges: the epoch is the first tick, and each layout's range ends at the
-- end of its last tick; a millisecond either side is an error
SELECT idgen_from_timestamp('2010-11-04 01:42:54.657+00', 'twitter') AS first,
       idgen_from_timestamp('2080-07-10 17:30:30.208+00', 'twitter') AS last;
SELECT idgen_from_timestamp('2010-11-04 01:42:54.656+00', 'twitter');
SELECT idgen_from_timestamp('2080-07-10 17:30:30.209+00', 'twitter');
SELECT idgen_from_timestamp('2015-01-01 00:00:00+00', 'discord') AS first,
       idgen_from_timestamp('2084-09-06 15:47:35.551+00', 'discord') AS last;
SELECT idgen_from_timestamp('2014-12-31 23:59:59.999+00', 'discord');
SELECT idgen_from_timestamp('2084-09-06 15:47:35.552+00', 'discord');
SELECT idgen_from_timestamp('2014-09-01 00:00:00+00', 'sonyflake') AS first,
       idgen_from_timestamp('2188-11-16 03:28:58.879+00', 'sonyflake') AS last;
SELECT idgen_from_timestamp('2014-08-31 23:59:59.999+00', 'sonyflake');
SELECT idgen_from_timestamp('2188-11-16 03:28:58.880+00', 'sonyflake');
SELECT idgen_from_timestamp('2011-08-24 21:07:01.721+00', 'instagram') AS first,
       idgen_from_timestamp('2046-06-27 17:00:49.496+00', 'instagram') AS last;
SELECT idgen_from_timestamp('2011-08-24 21:07:01.720+00', 'instagram');
SELECT idgen_from_timestamp('2046-06-27 17:00:49.497+00', 'instagram');
SELECT idgen_from_timestamp('2015-01-01 00:00:00+00', 'redis-borrow') AS first,
       idgen_from_timestamp('2154-05-15 07:35:11.103+00', 'redis-borrow') AS last;
SELECT idgen_from_timestamp('2154-05-15 07:35:11.104+00', 'redis-borrow');
-- decimal19's time is 13 digits, up to what fits a bigint: 9223372036853
SELECT idgen_from_timestamp('2257-12-19 10:53:56.853+00', 'decimal19') AS last;
SELECT idgen_from_timestamp('2257-12-19 10:53:56.854+00', 'decimal19');
SELECT idgen_from_timestamp('2024-01-01 00:00:00+00', 'js53') AS first,
       idgen_from_timestamp('2058-11-03 19:53:47.775+00', 'js53') AS last;
SELECT idgen_from_timestamp('2058-11-03 19:53:47.776+00', 'js53');
SELECT idgen_from_timestamp('2023-12-31 23:59:59.999+00', 'idgen');
SELECT idgen_from_timestamp('infinity', 'sonyflake');
SELECT idgen_from_timestamp('2020-01-01+00', 'ulid');
SELECT idgen_from_timestamp(NULL, 'twitter');
SELECT idgen_from_timestamp('2020-01-01+00', NULL);

-- idgen_next_batch: n distinct IDs, strictly increasing in the order returned
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS increasing
FROM (SELECT id, lag(id, 1, 0::bigint) OVER (ORDER BY ord) AS prev
      FROM idgen_next_batch(10000) WITH ORDINALITY AS b(id, ord)) s;
-- in the select list too, and after IDs from idgen_next()
SELECT count(*) AS n FROM (SELECT idgen_next_batch(3)) s;
SELECT idgen_next() AS before_batch \gset
SELECT min(id) > :before_batch AS after_next FROM idgen_next_batch(5) id;
SELECT (idgen_decode(id)).node_id FROM idgen_next_batch(1) id;
SELECT * FROM idgen_next_batch(0);
SELECT * FROM idgen_next_batch(-1);
SELECT count(*) AS largest_batch FROM idgen_next_batch(1000000);
SELECT * FROM idgen_next_batch(1000001);
SELECT * FROM idgen_next_batch(NULL);
