/* idgen--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.3'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- NULL arguments and intervals too wide (issue #20, part 5).
--
-- One rule for NULL, as in PostgreSQL's own functions: every function is
-- STRICT (NULL in, NULL out; a set-returning one returns no rows) unless an
-- argument gives NULL a meaning, declared DEFAULT NULL (a shard: a random
-- one; idgen_check_nodes' list: every Citus node).  NULL in any other
-- argument of those still gives NULL, or no rows (the C functions do that).
-- idgen_define_layout() raised an error instead; sql/nulls.sql checks every
-- function of the extension against the rule.
-- ---------------------------------------------------------------------------

ALTER FUNCTION idgen_define_layout(text, timestamptz, text[], int[], interval, int) STRICT;

-- A width beyond the layout's time range is named as the interval it is,
-- with the layout's range, not as a timestamp the caller never passed.
CREATE OR REPLACE FUNCTION idgen_span(width interval, layout text DEFAULT 'idgen')
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	idgen_schema name;
	epoch timestamptz;
	span bigint;
	range_detail text;
BEGIN
	IF extract(month FROM width) <> 0 OR extract(year FROM width) <> 0 THEN
		RAISE EXCEPTION 'interval must not have months or years: %', width
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Months and years differ in length, so they span no fixed number of IDs.',
				  HINT = 'Give the width in days or smaller units.';
	END IF;
	IF width <= interval '0' THEN
		RAISE EXCEPTION 'interval must be positive: %', width
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT ns.nspname INTO STRICT idgen_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	-- From the layout's epoch, the ID 0; a day is 86400 s whatever TimeZone.
	EXECUTE format('SELECT ts FROM %I.idgen_decode(0, $1)', idgen_schema) INTO epoch USING layout;
	BEGIN
		EXECUTE format('SELECT %1$I.idgen_from_timestamp($1 + $2, $3) - %1$I.idgen_from_timestamp($1, $3)', idgen_schema)
			INTO span USING epoch, make_interval(secs => extract(epoch FROM width)), layout;
	EXCEPTION WHEN datetime_field_overflow OR interval_field_overflow THEN
		-- The layout's range, as idgen_from_timestamp() states it for a
		-- time after every layout's end.
		BEGIN
			EXECUTE format('SELECT %I.idgen_from_timestamp(''9999-12-31 00:00:00+00'', $1)', idgen_schema)
				USING layout;
		EXCEPTION WHEN datetime_field_overflow THEN
			GET STACKED DIAGNOSTICS range_detail = PG_EXCEPTION_DETAIL;
		END;
		RAISE EXCEPTION 'interval % is wider than the time range of idgen layout "%"', width, layout
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = range_detail,
				  HINT = 'Give a width within the layout''s time range.';
	END;
	IF span = 0 THEN
		RAISE EXCEPTION 'interval % is shorter than a time unit of idgen layout "%"', width, layout
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN span;
END
$$;

-- ---------------------------------------------------------------------------
-- CHECK constraints that read layouts defined in SQL (issue #20, part 3).
--
-- A valid CHECK constraint is restored with its table, before the rows of
-- idgen_layout: a constraint calling idgen_decode(id, 'orders') made the
-- restore of the table's rows fail.  PostgreSQL does not support CHECK
-- constraints that read other tables; NOT VALID ones still check new rows
-- and pg_dump adds them after the data.  So such constraints must be NOT
-- VALID (src/constraint.c); built-in layouts, read from no table, are free.
-- ---------------------------------------------------------------------------

CREATE FUNCTION idgen_constraint_check()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'idgen_constraint_check'
LANGUAGE C;

REVOKE EXECUTE ON FUNCTION idgen_constraint_check() FROM PUBLIC;

COMMENT ON FUNCTION idgen_constraint_check() IS
'event trigger: refuses valid CHECK constraints that read idgen layouts defined in SQL';

CREATE EVENT TRIGGER idgen_constraint_check ON ddl_command_end
WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE DOMAIN', 'ALTER DOMAIN')
EXECUTE FUNCTION idgen_constraint_check();

-- Constraints made before 1.3 are left alone, but named.
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN
		SELECT DISTINCT c.conname, coalesce(c.conrelid::regclass::text, c.contypid::regtype::text) AS obj
		FROM pg_catalog.pg_constraint c
		JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_constraint'::regclass
			AND d.objid = c.oid AND d.refclassid = 'pg_catalog.pg_proc'::regclass
		JOIN pg_catalog.pg_depend e ON e.classid = 'pg_catalog.pg_proc'::regclass
			AND e.objid = d.refobjid AND e.deptype = 'e'
		JOIN pg_catalog.pg_extension x ON x.oid = e.refobjid AND x.extname = 'idgen'
		JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid
		WHERE c.contype = 'c' AND c.convalidated AND 'layout' = ANY (p.proargnames)
	LOOP
		RAISE WARNING 'check constraint "%" of "%" may read an idgen layout defined in SQL', r.conname, r.obj
			USING DETAIL = 'A database with such a valid constraint does not restore from pg_dump: the checked rows are loaded before the layouts.',
				  HINT = 'Drop the constraint and add it again with NOT VALID.';
	END LOOP;
END
$$;
-- idgen_horizon(): a gap-free cursor for outbox pollers (issue #21).
--
-- Every transaction that got, or will get, an ID below the returned value
-- from this server has ended when the call returns.  It reveals only time
-- (the clock, held back to the first ID of the oldest open transaction that
-- took one), so PUBLIC may call it, as pollers run as application roles.
-- ---------------------------------------------------------------------------

CREATE FUNCTION idgen_horizon()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_horizon'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_horizon() IS
'an ID below which every transaction that took or will take an ID from this server has ended';

CREATE FUNCTION idgen_horizon(layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_horizon_layout'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_horizon(text) IS
'idgen_horizon() in a named layout';

-- idgen_stats: what the generator does, per layout definition (issue #21).
--
-- Backends publish their counts at transaction end and at exit, so the
-- counts are exact for finished transactions.  The view reveals counts and
-- times only, so PUBLIC may read it; resetting is for the owner and those
-- granted it.
-- ---------------------------------------------------------------------------

CREATE FUNCTION idgen_stats(
	OUT layout text, OUT ids bigint, OUT shared_ids bigint,
	OUT clock_waits bigint, OUT clock_wait_ms double precision,
	OUT clock_regressions bigint, OUT max_lead_ms bigint,
	OUT confirm_waits bigint, OUT mark timestamptz, OUT mark_lead_ms bigint,
	OUT time_left interval, OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_stats'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW idgen_stats AS SELECT * FROM idgen_stats();

GRANT SELECT ON idgen_stats TO PUBLIC;

COMMENT ON VIEW idgen_stats IS
'IDs made, clock and standby waits, lead borrowed and the high-water mark, per layout definition';

CREATE FUNCTION idgen_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_stats_reset'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION idgen_stats_reset() FROM PUBLIC;

COMMENT ON FUNCTION idgen_stats_reset() IS
'zeroes the counts of idgen_stats for every layout';
