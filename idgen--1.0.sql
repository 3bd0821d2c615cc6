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

-- Sortable text forms of IDs
CREATE FUNCTION idgen_encode(id bigint, encoding text DEFAULT 'base32')
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_encode(bigint, text) IS
'fixed-width base32 (Crockford) or base62 text of an ID; sorts like the ID under COLLATE "C"';

CREATE FUNCTION idgen_parse(encoded text, encoding text DEFAULT 'base32')
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_parse'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_parse(text, text) IS
'the ID of a text made by idgen_encode';

-- UUIDv7 for servers without PostgreSQL 18's uuidv7(); backend state, like random().
CREATE FUNCTION idgen_uuidv7()
RETURNS uuid
AS 'MODULE_PATHNAME', 'idgen_uuidv7'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_uuidv7() IS
'RFC 9562 version 7 UUID, increasing within a backend';

CREATE FUNCTION idgen_uuid_timestamp(uuid)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_uuid_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_uuid_timestamp(uuid) IS
'millisecond carried by a version 7 UUID; NULL for other versions';

-- objectid: begin

-- MongoDB's 12-byte ObjectId: 4-byte seconds since 1970, 5-byte process
-- field, 3-byte counter, compared as unsigned bytes.
CREATE TYPE objectid;

CREATE FUNCTION objectid_in(cstring)
RETURNS objectid
AS 'MODULE_PATHNAME', 'objectid_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_out(objectid)
RETURNS cstring
AS 'MODULE_PATHNAME', 'objectid_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_recv(internal)
RETURNS objectid
AS 'MODULE_PATHNAME', 'objectid_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_send(objectid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'objectid_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE objectid (
	INPUT = objectid_in,
	OUTPUT = objectid_out,
	RECEIVE = objectid_recv,
	SEND = objectid_send,
	INTERNALLENGTH = 12,
	ALIGNMENT = char,
	STORAGE = plain
);

COMMENT ON TYPE objectid IS
'MongoDB ObjectId: 12 bytes, written as 24 hex digits';
COMMENT ON FUNCTION objectid_in(cstring) IS 'I/O';
COMMENT ON FUNCTION objectid_out(objectid) IS 'I/O';
COMMENT ON FUNCTION objectid_recv(internal) IS 'I/O';
COMMENT ON FUNCTION objectid_send(objectid) IS 'I/O';

CREATE FUNCTION objectid_eq(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_eq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_ne(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_ne'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_lt(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_lt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_le(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_le'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_gt(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_gt'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_ge(objectid, objectid)
RETURNS bool
AS 'MODULE_PATHNAME', 'objectid_ge'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_cmp(objectid, objectid)
RETURNS int4
AS 'MODULE_PATHNAME', 'objectid_cmp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_sortsupport(internal)
RETURNS void
AS 'MODULE_PATHNAME', 'objectid_sortsupport'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_hash(objectid)
RETURNS int4
AS 'MODULE_PATHNAME', 'objectid_hash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_hash_extended(objectid, int8)
RETURNS int8
AS 'MODULE_PATHNAME', 'objectid_hash_extended'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION objectid_eq(objectid, objectid) IS 'implementation of = operator';
COMMENT ON FUNCTION objectid_ne(objectid, objectid) IS 'implementation of <> operator';
COMMENT ON FUNCTION objectid_lt(objectid, objectid) IS 'implementation of < operator';
COMMENT ON FUNCTION objectid_le(objectid, objectid) IS 'implementation of <= operator';
COMMENT ON FUNCTION objectid_gt(objectid, objectid) IS 'implementation of > operator';
COMMENT ON FUNCTION objectid_ge(objectid, objectid) IS 'implementation of >= operator';
COMMENT ON FUNCTION objectid_cmp(objectid, objectid) IS 'less-equal-greater';
COMMENT ON FUNCTION objectid_sortsupport(internal) IS 'sort support';
COMMENT ON FUNCTION objectid_hash(objectid) IS 'hash';
COMMENT ON FUNCTION objectid_hash_extended(objectid, int8) IS 'hash';

CREATE OPERATOR = (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR < (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE OPERATOR <= (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE OPERATOR > (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE OPERATOR >= (
	LEFTARG = objectid, RIGHTARG = objectid, PROCEDURE = objectid_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR = (objectid, objectid) IS 'equal';
COMMENT ON OPERATOR <> (objectid, objectid) IS 'not equal';
COMMENT ON OPERATOR < (objectid, objectid) IS 'less than';
COMMENT ON OPERATOR <= (objectid, objectid) IS 'less than or equal';
COMMENT ON OPERATOR > (objectid, objectid) IS 'greater than';
COMMENT ON OPERATOR >= (objectid, objectid) IS 'greater than or equal';

CREATE OPERATOR CLASS objectid_ops
DEFAULT FOR TYPE objectid USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 objectid_cmp(objectid, objectid),
	FUNCTION 2 objectid_sortsupport(internal);

CREATE OPERATOR CLASS objectid_ops
DEFAULT FOR TYPE objectid USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 objectid_hash(objectid),
	FUNCTION 2 objectid_hash_extended(objectid, int8);

-- Core's minmax support functions, as for uuid: ObjectIds of an append-only
-- table grow with time, so block ranges hold narrow ranges of values.
CREATE OPERATOR CLASS objectid_minmax_ops
DEFAULT FOR TYPE objectid USING brin AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 brin_minmax_opcinfo(internal),
	FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
	FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
	FUNCTION 4 brin_minmax_union(internal, internal, internal);

-- Casts are explicit only: a bytea or text is an ObjectId only if one says so.
CREATE FUNCTION objectid_to_bytea(objectid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'objectid_to_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_from_bytea(bytea)
RETURNS objectid
AS 'MODULE_PATHNAME', 'objectid_from_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION objectid_to_bytea(objectid) IS
'the 12 bytes of an objectid';
COMMENT ON FUNCTION objectid_from_bytea(bytea) IS
'objectid of 12 bytes';

CREATE CAST (objectid AS bytea) WITH FUNCTION objectid_to_bytea(objectid);
CREATE CAST (bytea AS objectid) WITH FUNCTION objectid_from_bytea(bytea);
-- Declared so that the automatic I/O cast to text is not an assignment cast.
CREATE CAST (objectid AS text) WITH INOUT;
CREATE CAST (text AS objectid) WITH INOUT;

-- Generation changes this backend's counter, like random() its seed:
-- parallel restricted keeps it in the leader, so one statement's values
-- come from one process and one counter run, while the rest of the query
-- may still run in parallel.  No shared state, so no preloading needed.
CREATE FUNCTION objectid()
RETURNS objectid
AS 'MODULE_PATHNAME', 'objectid'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION objectid() IS
'new objectid: current second, this backend''s process field, next counter value';

CREATE FUNCTION objectid_timestamp(objectid)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'objectid_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION objectid_timestamp(objectid) IS
'time carried by an objectid, to the second';

CREATE FUNCTION objectid_from_timestamp(timestamptz)
RETURNS objectid
AS 'MODULE_PATHNAME', 'objectid_from_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION objectid_from_timestamp(timestamptz) IS
'smallest objectid of the second of the timestamp';

-- objectid: end
