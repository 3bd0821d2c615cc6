-- Layouts defined in SQL: idgen_define_layout(), the idgen_layout table,
-- checks on every definition, generating and decoding in them.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- a Twitter-like layout with a 2020 epoch; a shard layout counting seconds;
-- a decimal one: 12-digit ms | 2-digit node | 3-digit sequence
SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
SELECT idgen_define_layout('tenants', '2020-01-01+00', '{time,shard,sequence}', '{35,12,16}', '1 second');
SELECT idgen_define_layout('dec17', '2020-01-01+00', '{time,node,sequence}', '{12,2,3}', radix => 10);
SELECT * FROM idgen_layout ORDER BY name;

-- idgen_layouts: the built-in layouts, the default first, then these; each
-- starts at the epoch listed and decodes the fields listed
SELECT * FROM idgen_layouts;
SELECT l.name FROM idgen_layouts l
WHERE (idgen_decode(0, l.name)).ts <> l.epoch
   OR idgen_from_timestamp(l.epoch + l.time_unit, l.name) <= 0;

-- decoding values packed by hand: 1000 ms after 2020-01-01, node 3, worker 5,
-- sequence 7; 10 s, shard 4000, sequence 9; 123456 ms, node 42, sequence 999
SELECT * FROM idgen_decode((1000::bigint << 22) | (3 << 17) | (5 << 12) | 7, 'orders');
SELECT * FROM idgen_decode((10::bigint << 28) | (4000 << 16) | 9, 'tenants');
SELECT * FROM idgen_decode(123456::bigint * 100000 + 42 * 1000 + 999, 'dec17');
SELECT idgen_from_timestamp('2020-01-01 00:00:10.999+00', 'tenants') = 10::bigint << 28 AS tick_start;

-- generated IDs decode to now and to this server's node (3); tenants' shards
-- are node 3's sixteenth (768-1023) unless given
SELECT l, (d).node_id, (d).ts BETWEEN now() - interval '5 s' AND clock_timestamp() + interval '2 s' AS ts_now
FROM unnest(ARRAY['orders', 'dec17']) l, LATERAL (SELECT idgen_decode(idgen_next(l), l) AS d) s
ORDER BY l;
SELECT (idgen_decode(idgen_next('tenants'), 'tenants')).node_id BETWEEN 768 AND 1023 AS node_3_shard,
       (idgen_decode(idgen_next('tenants', 800), 'tenants')).node_id AS given_shard;
SELECT l, count(*) AS n, count(DISTINCT id) AS distinct_ids
FROM unnest(ARRAY['orders', 'tenants', 'dec17']) l, LATERAL idgen_next_batch(3000, l) id
GROUP BY l ORDER BY l;

-- definitions that are refused, and why
SELECT idgen_define_layout('orders', '2020-01-01+00', '{time,node,worker,sequence}', '{41,5,5,12}');
SELECT idgen_define_layout('twitter', '2020-01-01+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('Orders', '2020-01-01+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('1st', '2020-01-01+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('wide', '2020-01-01+00', '{time,node,sequence}', '{41,11,12}');
SELECT idgen_define_layout('wide', '2020-01-01+00', '{time,sequence}', '{13,7}', radix => 10);
SELECT idgen_define_layout('wide', '2020-01-01+00', '{time,sequence}', '{20,32}');
SELECT idgen_define_layout('order', '2020-01-01+00', '{node,time,sequence}', '{5,41,12}');
SELECT idgen_define_layout('twice', '2020-01-01+00', '{time,node,node}', '{41,5,5}');
SELECT idgen_define_layout('kind', '2020-01-01+00', '{time,machine,sequence}', '{41,5,12}');
SELECT idgen_define_layout('count', '2020-01-01+00', '{time,node,sequence}', '{41,5}');
SELECT idgen_define_layout('nulls', '2020-01-01+00', '{time,NULL}', '{41,5}');
SELECT idgen_define_layout('future', date_trunc('day', now()) + interval '2 days', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('old', '1899-12-31+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('micro', '2020-01-01 00:00:00.0001+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('inf', 'infinity', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('unit', '2020-01-01+00', '{time,sequence}', '{41,12}', '1 month');
SELECT idgen_define_layout('unit', '2020-01-01+00', '{time,sequence}', '{41,12}', '0.5 ms');
SELECT idgen_define_layout('unit', '2020-01-01+00', '{time,sequence}', '{41,12}', '2 seconds');
SELECT idgen_define_layout('forever', '2020-01-01+00', '{time,sequence}', '{51,12}');
SELECT idgen_define_layout('radix', '2020-01-01+00', '{time,sequence}', '{41,12}', radix => 16);
-- a time unit whose microseconds overflow, arrays of more than one
-- dimension, and a time field that ran out long ago
\set overflowing_unit '106751992 days 2562047768:01:49.552616'
SELECT idgen_define_layout('unit', '2020-01-01+00', '{time,sequence}', '{41,12}', :'overflowing_unit');
SELECT idgen_define_layout('dims', '2020-01-01+00', '{{time,sequence}}', '{{41,12}}');
SELECT idgen_define_layout('ended', '2020-01-01+00', '{time,sequence}', '{20,12}');
SELECT idgen_define_layout(NULL, '2020-01-01+00', '{time,sequence}', '{41,12}');
-- the table's trigger checks rows written directly too
INSERT INTO idgen_layout (name, epoch, fields, widths) VALUES ('direct', '2020-01-01+00', '{time,sequence}', '{41,40}');
UPDATE idgen_layout SET widths = '{41,5,5,13}' WHERE name = 'orders';
SELECT count(*) AS layouts FROM idgen_layout;

-- layouts that decode but cannot generate here, and why
SELECT idgen_define_layout('no-seq', '2020-01-01+00', '{time,node}', '{41,5}');
SELECT idgen_define_layout('tiny-node', '2020-01-01+00', '{time,node,sequence}', '{41,1,12}');
SELECT idgen_define_layout('anonymous', '2020-01-01+00', '{time,sequence}', '{41,12}');
SELECT idgen_define_layout('few-workers', '2020-01-01+00', '{time,worker,sequence}', '{41,3,12}');
SELECT * FROM idgen_decode(4097, 'anonymous');
SELECT idgen_next('no-seq');
SELECT idgen_next('tiny-node');
SELECT idgen_next('anonymous');
SELECT idgen_next('few-workers');

-- dropping; a dropped layout is unknown at once, and a new definition is
-- read at once: the same value now has a 3-digit node and 2-digit sequence
SELECT idgen_drop_layout('dec17');
SELECT * FROM idgen_decode(1, 'dec17');
SELECT idgen_drop_layout('dec17');
SELECT idgen_drop_layout('twitter');
SELECT idgen_define_layout('dec17', '2020-01-01+00', '{time,node,sequence}', '{12,3,2}', radix => 10);
SELECT * FROM idgen_decode(123456::bigint * 100000 + 42 * 1000 + 999, 'dec17');
SELECT idgen_next('dec17') > 0 AS generates;

-- only those who may write the table define layouts
CREATE ROLE idgen_layout_user;
SET ROLE idgen_layout_user;
SELECT count(*) > 0 AS can_read FROM idgen_layout;
SELECT idgen_define_layout('mine', '2020-01-01+00', '{time,node,sequence}', '{41,5,12}');
SELECT (idgen_decode(idgen_next('orders'), 'orders')).node_id AS can_generate;
RESET ROLE;
DROP ROLE idgen_layout_user;

SELECT idgen_drop_layout(name) FROM idgen_layout WHERE name IN ('no-seq', 'tiny-node', 'anonymous', 'few-workers');

-- idgen_layouts_saved(), the copy of the table's rows that a dump restores
-- before any table's data (t/054_constraint_restore.pl): no member of the
-- extension, so that pg_dump dumps it, and dropped with it
SELECT pg_describe_object(refclassid, refobjid, 0) AS depends_on, deptype
FROM pg_depend
WHERE classid = 'pg_proc'::regclass AND objid = 'idgen_layouts_saved()'::regprocedure
ORDER BY 1;
CREATE FUNCTION pg_temp.saved_differs() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM jsonb_populate_recordset(NULL::idgen_layout, idgen_layouts_saved()) s
	FULL JOIN idgen_layout l ON l.name = s.name WHERE s IS DISTINCT FROM l $$;
SELECT count(*) AS layouts, pg_temp.saved_differs() AS differs FROM idgen_layout;
-- every change rewrites it, as the table's owner: whoever may write the
-- table need not own the function
CREATE ROLE idgen_layout_writer;
GRANT INSERT, UPDATE, DELETE ON idgen_layout TO idgen_layout_writer;
SET ROLE idgen_layout_writer;
SELECT idgen_define_layout('writers', '2020-01-01+00', '{time,sequence}', '{41,12}');
UPDATE idgen_layout SET widths = '{41,13}' WHERE name = 'writers';
RESET ROLE;
SELECT pg_temp.saved_differs() AS differs,
       (SELECT p.proowner = c.relowner FROM pg_proc p, pg_class c
        WHERE p.oid = 'idgen_layouts_saved()'::regprocedure AND c.oid = 'idgen_layout'::regclass)
       AS owned_by_table_owner;
SET ROLE idgen_layout_writer;
SELECT idgen_drop_layout('writers');
RESET ROLE;
REVOKE ALL ON idgen_layout FROM idgen_layout_writer;
DROP ROLE idgen_layout_writer;
SELECT pg_temp.saved_differs() AS differs;
-- the session's time zone and interval style change nothing in it
SET TimeZone = 'America/New_York';
SET IntervalStyle = 'iso_8601';
SELECT prosrc AS saved FROM pg_proc WHERE oid = 'idgen_layouts_saved()'::regprocedure \gset
UPDATE idgen_layout SET name = name;
SELECT prosrc = :'saved' AS unchanged FROM pg_proc WHERE oid = 'idgen_layouts_saved()'::regprocedure;
RESET TimeZone;
RESET IntervalStyle;
SET TimeZone = 'UTC';
-- a table without layouts has none
BEGIN;
TRUNCATE idgen_layout;
SELECT to_regprocedure('idgen_layouts_saved()') AS saved_function;
-- creating it, as a restore does, defines the layouts it holds
CREATE FUNCTION idgen_layouts_saved() RETURNS jsonb LANGUAGE sql IMMUTABLE AS :'saved';
SELECT count(*) AS layouts, pg_temp.saved_differs() AS differs FROM idgen_layout;
-- and the table's rows, restored after, are skipped: they are there
INSERT INTO idgen_layout SELECT * FROM jsonb_populate_recordset(NULL::idgen_layout, idgen_layouts_saved());
-- a row of a name the table holds, otherwise defined, is still refused
INSERT INTO idgen_layout (name, epoch, fields, widths) VALUES ('orders', '2020-01-01+00', '{time,sequence}', '{41,12}');
ROLLBACK;
-- so is a layout it holds that this database defines otherwise
BEGIN;
DROP FUNCTION idgen_layouts_saved();
CREATE FUNCTION idgen_layouts_saved() RETURNS jsonb LANGUAGE sql AS $$
	SELECT '[{"name": "orders", "epoch": "2020-01-01T00:00:00+00:00", "radix": 2,
	          "fields": ["time", "sequence"], "widths": [41, 12], "time_unit": "00:00:00.001"}]'::jsonb $$;
ROLLBACK;
SELECT count(*) AS layouts, pg_temp.saved_differs() AS differs FROM idgen_layout;
-- the function is read, never run: one of another form, made as a restore
-- run by a superuser would make it, runs nothing and defines nothing
BEGIN;
TRUNCATE idgen_layout;
CREATE FUNCTION idgen_layouts_saved() RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'idgen_layouts_saved() ran as %', current_user; RETURN '[]'; END $$;
ROLLBACK;
CREATE FUNCTION pg_temp.noisy() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'noisy() ran as %', current_user; RETURN true; END $$;
BEGIN;
TRUNCATE idgen_layout;
CREATE FUNCTION idgen_layouts_saved() RETURNS jsonb LANGUAGE sql AS $$
	SELECT '[]'::jsonb WHERE pg_temp.noisy() $$;
ROLLBACK;
-- a role that may create functions in idgen's schema and slips one in by
-- renaming it (no CREATE FUNCTION, no event trigger) loses it to the next
-- change of layouts, which makes it the table owner's
CREATE ROLE idgen_squatter;
GRANT CREATE ON SCHEMA public TO idgen_squatter;
BEGIN;
TRUNCATE idgen_layout;
SET ROLE idgen_squatter;
CREATE FUNCTION public.squat() RETURNS jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
ALTER FUNCTION public.squat() RENAME TO idgen_layouts_saved;
RESET ROLE;
SELECT idgen_define_layout('after_squat', '2020-01-01+00', '{time,sequence}', '{41,12}');
SELECT p.proowner = c.relowner AS owned_by_table_owner, pg_temp.saved_differs() AS differs
FROM pg_proc p, pg_class c
WHERE p.oid = 'idgen_layouts_saved()'::regprocedure AND c.oid = 'idgen_layout'::regclass;
ROLLBACK;
-- a table owner without the squatter's privileges is told to drop it
CREATE ROLE idgen_layout_owner;
BEGIN;
TRUNCATE idgen_layout;
ALTER TABLE idgen_layout OWNER TO idgen_layout_owner;
SET ROLE idgen_squatter;
CREATE FUNCTION public.squat() RETURNS jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
ALTER FUNCTION public.squat() RENAME TO idgen_layouts_saved;
RESET ROLE;
SELECT idgen_define_layout('after_squat', '2020-01-01+00', '{time,sequence}', '{41,12}');
ROLLBACK;
REVOKE CREATE ON SCHEMA public FROM idgen_squatter;
DROP ROLE idgen_squatter, idgen_layout_owner;

-- idgen's triggers stay enabled, so that the rows a data-only restore loads
-- with the triggers disabled (pg_restore --data-only --disable-triggers)
-- pass them: a row equal to a layout the schema defined first is skipped,
-- not a duplicate that fails the table's rows
ALTER TABLE idgen_layout DISABLE TRIGGER ALL;
INSERT INTO idgen_layout SELECT * FROM idgen_layout WHERE name = 'orders';
ALTER TABLE idgen_system DISABLE TRIGGER USER;
ALTER TABLE idgen_system ENABLE REPLICA TRIGGER idgen_system_check;
ALTER TABLE idgen_system ENABLE TRIGGER ALL;
SELECT c.relname, t.tgname, t.tgenabled
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relname IN ('idgen_layout', 'idgen_system') ORDER BY 1, 2;
