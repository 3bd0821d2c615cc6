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
