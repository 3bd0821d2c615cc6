/* idgen--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- Generation changes backend state, like nextval(): volatile and parallel unsafe.
CREATE FUNCTION idgen_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_next() IS
'next unique, time-ordered 64-bit ID of this server''s node';

-- Decoding depends on idgen.epoch and idgen.node_bits, fixed only until the
-- server restarts: stable, not immutable.
CREATE FUNCTION idgen_decode(id bigint,
	OUT ts timestamptz, OUT node_id int, OUT worker_id int, OUT sequence int)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint) IS
'time, node id, worker id and sequence carried by an idgen ID';

CREATE FUNCTION idgen_from_timestamp(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_timestamp'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_timestamp(timestamptz) IS
'smallest idgen ID whose time is the millisecond of the timestamp';

CREATE FUNCTION idgen_workers(
	OUT worker_id int, OUT is_shared bool, OUT pid int, OUT claimed_at timestamptz,
	OUT last_ts timestamptz, OUT lead_ms bigint, OUT ids_issued bigint,
	OUT clock_regressions bigint, OUT clock_waits bigint, OUT clock_behind bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_workers'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW idgen_workers AS SELECT * FROM idgen_workers();

-- Everyone may look; the function hides other users' details from those
-- without pg_read_all_stats.
GRANT SELECT ON idgen_workers TO PUBLIC;

COMMENT ON VIEW idgen_workers IS
'worker ids held by backends, and the shared worker id used when none is free';

-- objectid: begin

-- objectid: end
