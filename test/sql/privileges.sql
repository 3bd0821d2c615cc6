-- What a role without privileges can reach, and functions that only idgen
-- itself may call: not executable by PUBLIC, and refusing any other use.

-- every function of the extension that PUBLIC cannot execute
SELECT p.oid::regprocedure AS not_for_public
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
  AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
ORDER BY p.oid::regprocedure::text;

CREATE ROLE idgen_nobody LOGIN;
CREATE SCHEMA nobody AUTHORIZATION idgen_nobody;
SET ROLE idgen_nobody;
-- the trigger function cannot be attached to a table of one's own
CREATE TABLE nobody.l (name text, epoch timestamptz, fields text[], widths int[],
                       time_unit interval, radix int);
CREATE TRIGGER boom BEFORE INSERT ON nobody.l
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_check();
RESET ROLE;

-- nor does it run on any table but idgen_layout, or any other way, even
-- when a superuser attaches it
CREATE TRIGGER boom BEFORE INSERT ON nobody.l
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_check();
INSERT INTO nobody.l VALUES ('x', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}', '1 ms', 2);
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom BEFORE INSERT ON nobody.l
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_check();
INSERT INTO nobody.l VALUES ('x', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}', '1 ms', 2);
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom BEFORE TRUNCATE ON nobody.l
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_check();
TRUNCATE nobody.l;
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom_after AFTER INSERT ON idgen_layout
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_check();
SELECT idgen_define_layout('after', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
DROP TRIGGER boom_after ON idgen_layout;
CREATE TRIGGER boom_stmt BEFORE INSERT ON idgen_layout
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_check();
SELECT idgen_define_layout('stmt', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
DROP TRIGGER boom_stmt ON idgen_layout;
SELECT count(*) AS layouts_added FROM idgen_layout WHERE name IN ('after', 'stmt');
-- the trigger that repeats layout changes on Citus workers refuses other
-- tables and BEFORE triggers
CREATE TRIGGER boom AFTER INSERT ON nobody.l
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_propagate();
INSERT INTO nobody.l VALUES ('x', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}', '1 ms', 2);
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom_before BEFORE INSERT ON idgen_layout
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_propagate();
SELECT idgen_define_layout('before', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
DROP TRIGGER boom_before ON idgen_layout;
-- the trigger that keeps idgen_layouts_saved() refuses other tables, and
-- firing for each row or before; its event trigger refuses other calls
CREATE TRIGGER boom AFTER INSERT ON nobody.l
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_save();
INSERT INTO nobody.l VALUES ('x', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}', '1 ms', 2);
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom_row AFTER INSERT ON idgen_layout
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_save();
SELECT idgen_define_layout('row', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
DROP TRIGGER boom_row ON idgen_layout;
CREATE TRIGGER boom_before BEFORE INSERT ON idgen_layout
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_save();
SELECT idgen_define_layout('before', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
DROP TRIGGER boom_before ON idgen_layout;
SELECT idgen_layout_restore();
-- the trigger that checks the rows arriving in idgen_system refuses other
-- tables, and firing for each statement
CREATE TRIGGER boom AFTER INSERT ON nobody.l
	FOR EACH ROW EXECUTE FUNCTION idgen_system_check();
INSERT INTO nobody.l VALUES ('x', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}', '1 ms', 2);
DROP TRIGGER boom ON nobody.l;
CREATE TRIGGER boom_stmt AFTER INSERT ON idgen_system
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_system_check();
INSERT INTO idgen_system (system_identifier) SELECT system_identifier FROM pg_control_system();
DROP TRIGGER boom_stmt ON idgen_system;

-- A role that owns operators = on text and on idgen's own row types in a
-- schema ahead of pg_catalog in a superuser's search_path: idgen's own
-- lookups never call them, whatever they compare (a layout defined, one
-- defined again as it is, dropped).
GRANT CREATE ON SCHEMA public TO idgen_nobody;
SET ROLE idgen_nobody;
CREATE FUNCTION public.hijack(a text, b text) RETURNS boolean LANGUAGE plpgsql AS
$$BEGIN RAISE NOTICE 'operator = called as %', current_user; RETURN a OPERATOR(pg_catalog.=) b; END$$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.hijack);
CREATE FUNCTION public.hijack(a idgen_layout, b idgen_layout) RETURNS boolean LANGUAGE plpgsql AS
$$BEGIN RAISE NOTICE 'operator = on layouts called as %', current_user; RETURN a OPERATOR(pg_catalog.=) b; END$$;
CREATE OPERATOR public.= (LEFTARG = idgen_layout, RIGHTARG = idgen_layout, FUNCTION = public.hijack);
CREATE FUNCTION public.hijack(a idgen_system, b idgen_system) RETURNS boolean LANGUAGE plpgsql AS
$$BEGIN RAISE NOTICE 'operator = on systems called as %', current_user; RETURN a OPERATOR(pg_catalog.=) b; END$$;
CREATE OPERATOR public.= (LEFTARG = idgen_system, RIGHTARG = idgen_system, FUNCTION = public.hijack);
RESET ROLE;
SET search_path = public, pg_catalog;
SELECT idgen_define_layout('probe', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
SELECT idgen_define_layout('probe', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
SELECT node_id FROM idgen_decode(1 << 12, 'probe');
SELECT idgen_next('probe') > 0 AS generates;
SELECT idgen_drop_layout('probe');
RESET search_path;
DROP OPERATOR public.= (text, text);
DROP FUNCTION public.hijack(text, text);
DROP OPERATOR public.= (idgen_layout, idgen_layout);
DROP FUNCTION public.hijack(idgen_layout, idgen_layout);
DROP OPERATOR public.= (idgen_system, idgen_system);
DROP FUNCTION public.hijack(idgen_system, idgen_system);
REVOKE CREATE ON SCHEMA public FROM idgen_nobody;

-- where this database's IDs were made is not for a role without privileges
-- to rewrite, nor may it raise the high-water marks
SET ROLE idgen_nobody;
DELETE FROM idgen_system;
INSERT INTO idgen_system (system_identifier) VALUES (1);
SELECT idgen_resume_after(now());
-- nor to read the registry's tokens, or take, renew or release a lease
SELECT token FROM idgen_lease;
SELECT * FROM idgen_lease_acquire(1, 'nobody', 1, gen_random_uuid(), 30, 0);
SELECT idgen_lease_renew(0, gen_random_uuid(), 30, 0);
SELECT idgen_lease_release(0, gen_random_uuid(), 0);
RESET ROLE;

DROP SCHEMA nobody CASCADE;
DROP ROLE idgen_nobody;
