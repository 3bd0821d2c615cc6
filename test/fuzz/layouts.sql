-- The layouts that the tables of test/fuzz/setup.sql use, put back as they
-- were: scripts/fuzz runs this after fuzzing that may have changed, dropped
-- or truncated them.  As the superuser.
BEGIN;
CREATE TEMP TABLE fuzz_layouts ON COMMIT DROP AS SELECT * FROM idgen_layout WHERE false;
INSERT INTO fuzz_layouts VALUES
	('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}', '1 ms', 2),
	('ledger', '2016-01-01+00', '{time,node,sequence,shard}', '{13,2,1,3}', '1 ms', 10),
	('shardy', '2022-03-04 05:06:07.008+00', '{time,shard,sequence}', '{41,13,9}', '1 ms', 2),
	('rnd', '2023-06-01+00', '{time,random,node,worker,sequence}', '{40,6,4,3,8}', '10 ms', 2),
	('slow', '1999-12-31 23:59:59+00', '{time,worker,sequence}', '{33,12,14}', '1 s', 2),
	('dec-small', '2001-01-01+00', '{time,sequence}', '{12,3}', '100 ms', 10);
DELETE FROM idgen_layout l USING fuzz_layouts w
WHERE l.name = w.name
  AND (l.epoch, l.fields, l.widths, l.time_unit, l.radix)
	  IS DISTINCT FROM (w.epoch, w.fields, w.widths, w.time_unit, w.radix);
INSERT INTO idgen_layout SELECT * FROM fuzz_layouts ON CONFLICT (name) DO NOTHING;
COMMIT;
