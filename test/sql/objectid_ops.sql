-- objectid: comparison as unsigned bytes, hashing, and the three opclasses
SET client_min_messages = warning;
RESET client_min_messages;

-- values whose order differs between signed and unsigned bytes, and between
-- the first byte and the last
CREATE TEMP TABLE oid_vals (o objectid);
INSERT INTO oid_vals VALUES
	('ffffffffffffffffffffffff'),
	('800000000000000000000000'),
	('7fffffffffffffffffffffff'),
	('000000000000000000000000'),
	('000000000000000000000001'),
	('000000000000000000000080'),
	('0000000000000000000000ff'),
	('010000000000000000000000'),
	('507f1f77bcf86cd799439011'),
	('507f1f77bcf86cd799439012');
SELECT o FROM oid_vals ORDER BY o;
SELECT o FROM oid_vals ORDER BY o DESC LIMIT 3;

-- every operator agrees with memcmp order, which is bytea's
SELECT bool_and((a.o = b.o) = (a.o::bytea = b.o::bytea)) AS eq,
       bool_and((a.o <> b.o) = (a.o::bytea <> b.o::bytea)) AS ne,
       bool_and((a.o < b.o) = (a.o::bytea < b.o::bytea)) AS lt,
       bool_and((a.o <= b.o) = (a.o::bytea <= b.o::bytea)) AS le,
       bool_and((a.o > b.o) = (a.o::bytea > b.o::bytea)) AS gt,
       bool_and((a.o >= b.o) = (a.o::bytea >= b.o::bytea)) AS ge,
       bool_and(sign(objectid_cmp(a.o, b.o)) =
                CASE WHEN a.o::bytea < b.o::bytea THEN -1
                     WHEN a.o::bytea > b.o::bytea THEN 1 ELSE 0 END) AS cmp,
       count(*) AS pairs,
       count(*) FILTER (WHERE a.o < b.o) AS less
FROM oid_vals a, oid_vals b;
SELECT '800000000000000000000000'::objectid > '7fffffffffffffffffffffff' AS unsigned_first,
       '000000000000000000000080'::objectid > '000000000000000000000001' AS unsigned_last,
       '010000000000000000000000'::objectid > '0000000000000000000000ff' AS first_byte_wins;
SELECT objectid_cmp('507f1f77bcf86cd799439011', '507f1f77bcf86cd799439011') AS same;

-- the operators' declared properties
SELECT oprname, oprcom::regoperator AS commutator, oprnegate::regoperator AS negator,
       oprrest, oprjoin, oprcanmerge, oprcanhash
FROM pg_operator
WHERE oprleft = 'objectid'::regtype
ORDER BY oprname;
-- the planner uses the negator: NOT (a < b) becomes a >= b
EXPLAIN (COSTS OFF)
SELECT * FROM oid_vals WHERE NOT (o < '507f1f77bcf86cd799439011');
-- the opclasses, one per access method, each in its own family
SELECT am.amname, opc.opcname, opf.opfname, opc.opcdefault
FROM pg_opclass opc
JOIN pg_am am ON am.oid = opc.opcmethod
JOIN pg_opfamily opf ON opf.oid = opc.opcfamily
WHERE opc.opcintype = 'objectid'::regtype
ORDER BY am.amname;
SELECT am.amname, p.amprocnum, p.amproc::regprocedure
FROM pg_amproc p
JOIN pg_opfamily opf ON opf.oid = p.amprocfamily
JOIN pg_am am ON am.oid = opf.opfmethod
WHERE p.amproclefttype = 'objectid'::regtype
ORDER BY am.amname, p.amprocnum;

-- hashing: equal values hash alike; the extended hash with seed 0 agrees
-- with the 32-bit one in its low bits, and a seed changes it
SELECT count(DISTINCT objectid_hash(o)) AS distinct_hashes FROM oid_vals;
SELECT objectid_hash('507f1f77bcf86cd799439011') =
       objectid_hash('507F1F77BCF86CD799439011') AS equal_values_equal_hashes;
SELECT bool_and((objectid_hash_extended(o, 0) & 4294967295) =
                (objectid_hash(o)::int8 & 4294967295)) AS seed0_matches,
       bool_and(objectid_hash_extended(o, 0) <> objectid_hash_extended(o, 1)) AS seed_changes
FROM oid_vals;

-- a table of 10000 values, inserted in increasing order as objectid() would;
-- md5 gives the other 8 bytes an order unrelated to insertion
CREATE TABLE oid_idx (n int, o objectid);
INSERT INTO oid_idx
SELECT n, (lpad(to_hex(1700000000 + n), 8, '0') || substr(md5(n::text), 1, 16))::objectid
FROM generate_series(1, 10000) n;
ANALYZE oid_idx;
SET enable_seqscan = off;

-- btree
CREATE INDEX oid_idx_btree ON oid_idx (o);
EXPLAIN (COSTS OFF)
SELECT n FROM oid_idx WHERE o = objectid_from_timestamp('2023-11-14 22:13:20+00');
SELECT n FROM oid_idx WHERE o = (lpad(to_hex(1700000042), 8, '0') || substr(md5('42'), 1, 16))::objectid;
EXPLAIN (COSTS OFF)
SELECT n FROM oid_idx WHERE o >= '6553f1f40000000000000000' AND o < '6553f1f80000000000000000' ORDER BY o;
-- 0x6553f1f4 is 1700000000 + 244
SELECT n FROM oid_idx WHERE o >= '6553f1f40000000000000000' AND o < '6553f1f80000000000000000' ORDER BY o;
SELECT count(*) FROM oid_idx WHERE o < '6553f1f80000000000000000';
SELECT count(*) FROM oid_idx WHERE o <= ('6553f1f8' || substr(md5('248'), 1, 16))::objectid;
SELECT count(*) FROM oid_idx WHERE o > ('6553f1f8' || substr(md5('248'), 1, 16))::objectid;
-- an index-ordered scan and an explicit sort give the same, bytea, order
SELECT array_agg(n ORDER BY o) = array_agg(n ORDER BY o::bytea) AS sorted,
       array_agg(n ORDER BY o) = array_agg(n ORDER BY n) AS by_time
FROM oid_idx;
DROP INDEX oid_idx_btree;

-- hash
CREATE INDEX oid_idx_hash ON oid_idx USING hash (o);
EXPLAIN (COSTS OFF)
SELECT n FROM oid_idx WHERE o = '6553f22a1d7fc1b6fa1e41a3';
SELECT n FROM oid_idx WHERE o = (lpad(to_hex(1700000042), 8, '0') || substr(md5('42'), 1, 16))::objectid;
SELECT n FROM oid_idx WHERE o = '6553f22a0000000000000000';
DROP INDEX oid_idx_hash;

-- brin
CREATE INDEX oid_idx_brin ON oid_idx USING brin (o) WITH (pages_per_range = 4);
EXPLAIN (COSTS OFF)
SELECT n FROM oid_idx WHERE o >= '6553f1f40000000000000000' AND o < '6553f1f80000000000000000';
-- the block ranges holding other times are skipped: 4 pages are read.
-- Read from EXPLAIN's JSON, whose fields stay put across versions (18's text
-- form prints rows=4.00, buffers and index searches).
CREATE FUNCTION pg_temp.explain_analyze(query text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query
	INTO plan;
	RETURN plan->0->'Plan';
END
$$;
SELECT p->>'Node Type' AS node,
       (p->>'Actual Rows')::numeric::int AS rows,
       (p->>'Rows Removed by Index Recheck')::int AS removed_by_recheck,
       (p->>'Lossy Heap Blocks')::int AS lossy_blocks,
       p->'Plans'->0->>'Node Type' AS child,
       p->'Plans'->0->>'Index Name' AS index,
       (p->'Plans'->0->>'Actual Rows')::numeric::int AS index_rows
FROM pg_temp.explain_analyze($$
SELECT n FROM oid_idx WHERE o >= '6553f1f40000000000000000' AND o < '6553f1f80000000000000000'
$$) p;
SELECT n FROM oid_idx
WHERE o >= '6553f1f40000000000000000' AND o < '6553f1f80000000000000000' ORDER BY n;
SELECT n FROM oid_idx WHERE o = (lpad(to_hex(1700000042), 8, '0') || substr(md5('42'), 1, 16))::objectid;
DROP INDEX oid_idx_brin;
RESET enable_seqscan;

-- sorting without an index goes through sortsupport
SELECT array_agg(o ORDER BY o)::text[] = array_agg(o ORDER BY o::bytea)::text[] AS sorted
FROM (SELECT substr(md5(n::text), 1, 24)::objectid AS o FROM generate_series(1, 5000) n) s;

-- joins: = can hash and merge
CREATE TEMP TABLE oid_join AS SELECT * FROM oid_idx WHERE n % 7 = 0;
ANALYZE oid_join;
SET enable_nestloop = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM oid_idx JOIN oid_join USING (o);
SELECT count(*) FROM oid_idx JOIN oid_join USING (o);
SET enable_hashjoin = off;
SET enable_mergejoin = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM oid_idx JOIN oid_join USING (o);
SELECT count(*) FROM oid_idx JOIN oid_join USING (o);
RESET enable_nestloop;
RESET enable_mergejoin;
RESET enable_hashjoin;
-- hashed grouping
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT o, count(*) FROM (SELECT o FROM oid_vals UNION ALL SELECT o FROM oid_vals) s GROUP BY o;
SELECT count(*), min(c), max(c)
FROM (SELECT o, count(*) AS c FROM (SELECT o FROM oid_vals UNION ALL SELECT o FROM oid_vals) s GROUP BY o) g;
RESET enable_sort;

DROP TABLE oid_idx;
