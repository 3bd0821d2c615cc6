-- idgen_next(layout [, shard]) and idgen_next_batch(n, layout [, shard]):
-- IDs of every built-in layout, decoded back; uniqueness, order, shards and
-- errors.  test/idgen.conf sets idgen.node_id = 3.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

SELECT clock_timestamp() AS t0 \gset
-- each layout's ID carries this server's node id where the layout has a node
-- field (Sonyflake: the top 4 bits of its machine id; Instagram: a shard of
-- node 3's sixteenth, 1536-2047) and a time close to now
SELECT l, CASE l WHEN 'sonyflake' THEN (d).worker_id >> 12 WHEN 'instagram' THEN NULL ELSE (d).node_id END AS node,
       (d).node_id BETWEEN 1536 AND 2047 AS node_3_shard,
       (d).ts BETWEEN date_trunc('second', :'t0'::timestamptz) AND clock_timestamp() + interval '1 s' AS ts_now,
       (d).worker_id IS NOT NULL AS has_worker
FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake', 'instagram',
                  'redis-borrow', 'decimal19', 'js53']) l,
     LATERAL (SELECT idgen_decode(idgen_next(l), l) AS d) s
ORDER BY l;

-- 5000 IDs of each layout: distinct, increasing in the order made, every
-- field decoding within its range.  Instagram's random shard sits above the
-- sequence, so with one shard given its IDs increase too.
SELECT l, count(*) AS n, count(DISTINCT id) AS distinct_ids, bool_and(id > prev) AS increasing,
       bool_and((d).ts >= date_trunc('second', :'t0'::timestamptz)) AS ts_ok
FROM (SELECT l, id, lag(id, 1, -1::bigint) OVER (PARTITION BY l ORDER BY ord) AS prev,
             idgen_decode(id, l) AS d
      FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake', 'instagram',
                        'redis-borrow', 'decimal19', 'js53']) l,
           LATERAL idgen_next_batch(5000, l, CASE l WHEN 'instagram' THEN 1600 END)
                   WITH ORDINALITY AS b(id, ord)) s
GROUP BY l ORDER BY l;

-- Instagram with random shards: distinct, and every shard is node 3's
SELECT count(DISTINCT id) AS distinct_ids, min((idgen_decode(id, 'instagram')).node_id) >= 1536 AS lo,
       max((idgen_decode(id, 'instagram')).node_id) <= 2047 AS hi
FROM idgen_next_batch(3000, 'instagram') id;

-- decimal19: the table suffix is the last three digits, given or random; its
-- one-digit sequence counts 0-9 in each millisecond, then borrows the next
SELECT idgen_next('decimal19', 316) % 1000 AS given_suffix;
SELECT count(DISTINCT id % 1000) > 100 AS random_suffixes, max((idgen_decode(id, 'decimal19')).sequence) AS max_seq,
       bool_and(id BETWEEN 1000000000000000000 AND 9223372036854775807) AS nineteen_digits
FROM idgen_next_batch(500, 'decimal19') id;
SELECT count(*) AS n, count(DISTINCT id / 1000) AS distinct_without_suffix
FROM idgen_next_batch(500, 'decimal19', 7) id;

-- js53: below 2^53 and made from this server's node
SELECT max(id) < 2::numeric ^ 53 AS below_2_53, min((idgen_decode(id, 'js53')).node_id) AS node
FROM idgen_next_batch(1000, 'js53') id;

-- redis-borrow: its 10 random bits change while the shard range counts
SELECT count(DISTINCT id & 1023) > 1 AS random_low_bits,
       count(DISTINCT (idgen_decode(id, 'redis-borrow')).ts::text || (idgen_decode(id, 'redis-borrow')).sequence)
         = count(*) AS time_and_sequence_unique
FROM idgen_next_batch(2000, 'redis-borrow') id;

-- 'idgen' is the default layout: one sequence with idgen_next()
SELECT idgen_next() AS a \gset
SELECT idgen_next('idgen') > :a AS after_default;

-- errors
SELECT idgen_next('instagram', 5);
SELECT idgen_next('instagram', 2048);
SELECT idgen_next('decimal19', 1000);
SELECT idgen_next('decimal19', -1);
SELECT idgen_next('twitter', 1);
SELECT idgen_next('idgen', 1);
SELECT idgen_next('snowflake');
SELECT idgen_next(NULL);
SELECT idgen_next(NULL, 1);
SELECT * FROM idgen_next_batch(0, 'js53');
SELECT * FROM idgen_next_batch(NULL, 'js53');
SELECT * FROM idgen_next_batch(1, NULL);
SELECT * FROM idgen_next_batch(2, 'twitter', 4);

-- a layout this server cannot generate in (its node field holds node ids 0
-- and 1, this server's is 3) is refused every time, in every function: a
-- refused plan is never taken for a made one
SELECT idgen_define_layout('narrow_node', '2020-01-01+00', '{time,node,sequence}', '{41,1,12}');
SELECT idgen_next('narrow_node');
SELECT idgen_next('narrow_node');
SELECT count(*) FROM idgen_next_batch(3000, 'narrow_node');
SELECT idgen_next_block(10, 'narrow_node');
SELECT idgen_drop_layout('narrow_node');

-- one call site passed a layout's name, then a name that begins it, or one
-- of no layout that begins with it: each call is of the layout it names
SELECT idgen_define_layout('pref', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
SELECT idgen_define_layout('prefix', '2024-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
SELECT l, abs(extract(epoch FROM (idgen_decode(idgen_next(l), l)).ts - now())) < 600 AS of_its_layout
FROM unnest(ARRAY['prefix', 'pref', 'prefix', 'pref']) WITH ORDINALITY AS u(l, k) ORDER BY k;
SELECT count(*) FROM (SELECT idgen_next(l) FROM unnest(ARRAY['prefix', 'prefi']) l) n;
SELECT count(*) FROM (SELECT idgen_next(l) FROM unnest(ARRAY['pref', 'prefixes']) l) n;
SELECT idgen_drop_layout('pref');
SELECT idgen_drop_layout('prefix');
