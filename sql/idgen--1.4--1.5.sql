/* idgen--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.5'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Where this database's IDs were made
-- ---------------------------------------------------------------------------

-- The clusters (system identifiers) where the extension was created or
-- updated in this database.  A configuration table, so that pg_dump and
-- pg_upgrade carry its rows into a new cluster, whose high-water marks do
-- not cover the old cluster's IDs: generation there refuses until the old
-- idgen_hwm is copied in or idgen_resume_after() says where to resume.
CREATE TABLE idgen_system (
	system_identifier bigint NOT NULL,
	recorded_at timestamptz NOT NULL DEFAULT now()
);

SELECT pg_catalog.pg_extension_config_dump('idgen_system', '');

INSERT INTO idgen_system (system_identifier)
SELECT c.system_identifier FROM pg_catalog.pg_control_system() c;

COMMENT ON TABLE idgen_system IS
'clusters (system identifiers) where idgen was created or updated in this database; kept by pg_dump and pg_upgrade, so that a new cluster knows it holds their IDs';

-- The way out when generation refuses because the high-water marks do not
-- cover this database's IDs: raises every mark past after and records the
-- clusters of idgen_system as covered.  Only for whoever knows when the
-- last ID was issued: not for PUBLIC.
CREATE FUNCTION idgen_resume_after(after timestamptz)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_resume_after'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION idgen_resume_after(timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION idgen_resume_after(timestamptz) IS
'raises every idgen high-water mark past the given time and takes the clusters of idgen_system as covered; generation resumes after a restart';

-- ---------------------------------------------------------------------------
-- What holds the horizon back
-- ---------------------------------------------------------------------------

-- What holds the horizon back: sessions in a transaction that took an ID,
-- and prepared transactions that did, with the time their IDs start at.
-- Such a session shows in pg_stat_activity with no backend_xid (taking an
-- ID writes nothing), so checks built on xids miss it.  It reveals pids and
-- times only, as pg_stat_activity does to PUBLIC.
CREATE FUNCTION idgen_horizon_holders(
	OUT pid int, OUT transaction xid, OUT since timestamptz, OUT held_for interval)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_horizon_holders'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_horizon_holders() IS
'the transactions that hold the idgen horizon back: rows of the view idgen_horizon_holders';

CREATE VIEW idgen_horizon_holders AS
SELECT h.pid, p.gid AS prepared_gid, h.since, h.held_for
FROM idgen_horizon_holders() h
LEFT JOIN pg_catalog.pg_prepared_xacts p ON p.transaction = h.transaction;

GRANT SELECT ON idgen_horizon_holders TO PUBLIC;

COMMENT ON VIEW idgen_horizon_holders IS
'transactions holding the idgen horizon back: a session (pid) or a prepared transaction (prepared_gid) that took an ID, since when its IDs start, and for how long';

-- ---------------------------------------------------------------------------
-- How full the shared tables are
-- ---------------------------------------------------------------------------

-- idgen_capacity: the shared tables of fixed size, how full they are, and
-- how often an entry was wanted when none was free.  It reveals counts only,
-- so PUBLIC may read it.

CREATE FUNCTION idgen_capacity(
	OUT name text, OUT capacity bigint, OUT in_use bigint,
	OUT overflows bigint, OUT last_overflow timestamptz, OUT setting text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_capacity'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_capacity() IS
'entries of each shared table of idgen, those in use, and how often one was wanted when none was free: the rows of the view idgen_capacity';

CREATE VIEW idgen_capacity AS SELECT * FROM idgen_capacity();

GRANT SELECT ON idgen_capacity TO PUBLIC;

COMMENT ON VIEW idgen_capacity IS
'entries of each shared table of idgen, those in use, and how often one was wanted when none was free';

-- ---------------------------------------------------------------------------
-- Layouts restored before any table's data
-- ---------------------------------------------------------------------------

-- 1.3 and 1.4 refused valid CHECK constraints that call idgen with a layout
-- defined in SQL, but could not see through functions, and refused LIKE and
-- INHERITS of a table with the NOT VALID constraint.  The layouts now reach
-- a restore before any table's data, whatever reads them: the function
-- idgen_layouts_saved(), no member of the extension, holds a copy of the
-- rows of idgen_layout; pg_dump restores it with the schema, and creating
-- it defines the layouts it holds (src/restore.c).

DROP EVENT TRIGGER idgen_constraint_check;
DROP FUNCTION idgen_constraint_check();

CREATE FUNCTION idgen_layout_save()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_layout_save'
LANGUAGE C;

REVOKE EXECUTE ON FUNCTION idgen_layout_save() FROM PUBLIC;

COMMENT ON FUNCTION idgen_layout_save() IS
'trigger of idgen_layout: keeps the copy of its rows that idgen_layouts_saved() returns';

CREATE TRIGGER idgen_layout_save
AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen_layout
FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_save();

CREATE FUNCTION idgen_layout_restore()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'idgen_layout_restore'
LANGUAGE C;

REVOKE EXECUTE ON FUNCTION idgen_layout_restore() FROM PUBLIC;

COMMENT ON FUNCTION idgen_layout_restore() IS
'event trigger: when idgen_layouts_saved() is created, as a restore does before any table''s data, defines the layouts it holds';

CREATE EVENT TRIGGER idgen_layout_restore ON ddl_command_end
WHEN TAG IN ('CREATE FUNCTION')
EXECUTE FUNCTION idgen_layout_restore();

-- The layouts defined before: a statement that changes no row fires the
-- trigger, which saves them.
UPDATE idgen_layout SET name = name WHERE false;
