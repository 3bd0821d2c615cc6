-- idgen_next_block(n): the first of n consecutive IDs, all in one millisecond
-- of one worker id, that no other call returns
SET client_min_messages = warning;
RESET client_min_messages;
SET TimeZone = 'UTC';

-- the range: 1 to the sequence's 4096 values; outside it, errors naming it
SELECT idgen_next_block(1) > 0 AS one, idgen_next_block(2048) > 0 AS half,
       idgen_next_block(4096) > 0 AS whole;
SELECT idgen_next_block(0);
SELECT idgen_next_block(4097);
SELECT idgen_next_block(-5);
SELECT idgen_next_block(NULL) IS NULL AS strict_null;

-- 10k blocks of 50 from one backend, interleaved with single IDs: the
-- blocks do not overlap each other or any single ID
CREATE TEMP TABLE blocks AS
SELECT i, idgen_next_block(50) AS first, idgen_next() AS single
FROM generate_series(1, 10000) i;
SELECT count(*) AS overlaps
FROM (SELECT first, lead(first) OVER (ORDER BY first) AS next FROM blocks) s
WHERE next <= first + 49;
SELECT count(*) AS single_inside_block
FROM blocks b JOIN blocks s ON s.single BETWEEN b.first AND b.first + 49;
-- in call order, each block starts above everything issued before it
SELECT count(*) AS out_of_order
FROM (SELECT first, single, lag(single) OVER (ORDER BY i) AS prev FROM blocks) s
WHERE first <= prev OR single <= first + 49;
-- all 510k values distinct
SELECT count(DISTINCT id) AS distinct_ids
FROM (SELECT first + k AS id FROM blocks, generate_series(0, 49) k
      UNION ALL SELECT single FROM blocks) s;

-- the first and last ID of a block decode to the same time, node and worker,
-- with consecutive sequence values, and to now
WITH b AS (SELECT idgen_next_block(50) AS first)
SELECT f.ts = l.ts AS same_ms, f.node_id = l.node_id AND f.worker_id = l.worker_id AS same_worker,
       f.node_id AS node, l.sequence - f.sequence AS seq_span,
       f.ts BETWEEN clock_timestamp() - interval '5 seconds'
                AND clock_timestamp() + interval '5 seconds' AS recent
FROM b, idgen_decode(b.first) f, idgen_decode(b.first + 49) l;
-- the largest block fills a whole millisecond from sequence 0
WITH b AS (SELECT idgen_next_block(4096) AS first)
SELECT f.sequence AS first_seq, l.sequence AS last_seq, f.ts = l.ts AS same_ms
FROM b, idgen_decode(b.first) f, idgen_decode(b.first + 4095) l;
-- random starts leave room: a block of 3000 starts at most at 1096
SELECT max((idgen_decode(idgen_next_block(3000))).sequence) <= 1096 AS fits
FROM generate_series(1, 200);

-- the issued counter counts every ID of a block
SELECT ids_issued AS before FROM idgen_workers WHERE pid = pg_backend_pid() \gset
SELECT idgen_next_block(100) > 0 AS ok;
SELECT ids_issued - :before AS counted FROM idgen_workers WHERE pid = pg_backend_pid();

-- layouts whose sequence is the lowest field: js53's is 6 bits, so 64 at most
SELECT idgen_next_block(64, 'js53') > 0 AS whole_js53;
SELECT idgen_next_block(65, 'js53');
CREATE TEMP TABLE blocks53 AS
SELECT idgen_next_block(20, 'js53') AS first FROM generate_series(1, 2000);
SELECT count(*) AS overlaps53
FROM (SELECT first, lead(first) OVER (ORDER BY first) AS next FROM blocks53) s
WHERE next <= first + 19;
SELECT max(first + 19) < 2^53 AS below_2_53,
       bool_and((idgen_decode(first, 'js53')).ts = (idgen_decode(first + 19, 'js53')).ts) AS same_ms
FROM blocks53;
-- the default layout by name, and instagram (locked, one shard per block)
SELECT (idgen_decode(idgen_next_block(10, 'idgen'))).node_id AS node;
WITH b AS (SELECT idgen_next_block(1024, 'instagram', 1600) AS first)
SELECT f.node_id AS shard, l.node_id AS last_shard, l.sequence - f.sequence AS seq_span
FROM b, idgen_decode(b.first, 'instagram') f, idgen_decode(b.first + 1023, 'instagram') l;
SELECT idgen_next_block(1025, 'instagram');
-- a layout whose sequence is not its lowest field is refused, saying why
SELECT idgen_next_block(2, 'sonyflake');
SELECT idgen_next_block(1, 'decimal19');
SELECT idgen_define_layout('seq_mid', '2024-01-01+00', '{time,sequence,worker}', '{45,10,8}');
SELECT idgen_next_block(1, 'seq_mid');
SELECT idgen_drop_layout('seq_mid');
SELECT idgen_next_block(NULL, 'js53');
SELECT idgen_next_block(5, NULL);
SELECT idgen_next_block(5, 'no_such_layout');
