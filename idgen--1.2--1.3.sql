/* idgen--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.3'" to load this file. \quit

-- ---------------------------------------------------------------------------
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
