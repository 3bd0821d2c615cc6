/* idgen.sql: the current definition of the extension, each object once.
 *
 * The Makefile copies it to idgen--VERSION.sql (VERSION: idgen.control's
 * default_version), which CREATE EXTENSION runs.  Installations of earlier
 * versions reach the same objects through the update scripts beside it;
 * t/006_upgrade_path.pl checks that both give the same definitions.  Change
 * an object here and in a new idgen--OLD--NEW.sql, never in a released script.
 *
 * The extension is not relocatable: functions that run SQL name their
 * siblings as @extschema@.name, fixed when the script runs.
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Generating IDs in the default layout (idgen.node_id, idgen.epoch, idgen.node_bits)
-- ---------------------------------------------------------------------------

-- Generation changes backend state: volatile, and run by the leader only of a
-- parallel query (parallel workers would each claim a worker id).
CREATE FUNCTION idgen_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next() IS
'next unique, time-ordered 64-bit ID of this server''s node';

-- As idgen_next(), n times in one call.
CREATE FUNCTION idgen_next_batch(n int)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_batch'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_batch(int) IS
'the next n IDs of this server''s node, as n calls of idgen_next() would make them';

-- Blocks of consecutive IDs for clients that take one value and use the
-- next n themselves (Hibernate's pooled-lo optimizer, batch loaders).
CREATE FUNCTION idgen_next_block(n int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_block'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_block(int) IS
'first of n consecutive IDs (n from 1 to 4096), all in one millisecond of one worker id';

CREATE FUNCTION idgen_workers(
	OUT worker_id int, OUT is_shared bool, OUT pid int, OUT claimed_at timestamptz,
	OUT last_ts timestamptz, OUT lead_ms bigint, OUT ids_issued bigint,
	OUT clock_regressions bigint, OUT clock_waits bigint, OUT clock_behind bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_workers'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_workers() IS
'worker ids held by backends, and the shared worker id used when none is free: the rows of the view idgen_workers';

CREATE VIEW idgen_workers AS SELECT * FROM idgen_workers();

-- Everyone may look; the function hides other users' details from those
-- without pg_read_all_stats.
GRANT SELECT ON idgen_workers TO PUBLIC;

COMMENT ON VIEW idgen_workers IS
'worker ids held by backends, and the shared worker id used when none is free';

-- idgen_horizon(): a gap-free cursor for outbox pollers.  Every transaction that got, or will get, an ID below the returned value
-- from this server has ended when the call returns.  It reveals only time
-- (the clock, held back to the first ID of the oldest open transaction that
-- took one), so PUBLIC may call it, as pollers run as application roles.

CREATE FUNCTION idgen_horizon()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_horizon'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_horizon() IS
'an ID below which every transaction that took or will take an ID from this server has ended';

-- What holds the horizon back: sessions in a transaction that took an ID,
-- and prepared transactions that did, with the time their IDs start at.
-- Such a session shows in pg_stat_activity with no backend_xid (taking an
-- ID writes nothing), so checks built on xids miss it.  It shows every pid,
-- and the times of other roles' sessions only to pg_read_all_stats, as
-- pg_stat_activity does.
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
-- Decoding IDs, and IDs as times
-- ---------------------------------------------------------------------------

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

-- Other systems' IDs, and idgen's own under the name 'idgen': stable for the
-- same reason as above.
CREATE FUNCTION idgen_decode(id bigint, layout text,
	OUT ts timestamptz, OUT node_id int, OUT worker_id int, OUT sequence int)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode_layout'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'time, machine fields and sequence carried by an ID of the named layout; the view idgen_layouts lists the layouts';

CREATE FUNCTION idgen_from_timestamp(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_timestamp_layout'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_timestamp(timestamptz, text) IS
'smallest ID of the named layout whose time is the tick of the timestamp';

-- Time partitions: IDs are time-ordered, so a range of IDs is a range
-- of time.  idgen_span() gives the width of a partition (pg_partman's
-- integer interval, or retention) without bit arithmetic.  Stable, as
-- idgen_from_timestamp(): layouts defined in SQL can change.
CREATE FUNCTION idgen_span(width interval, layout text DEFAULT 'idgen')
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
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
	-- From the layout's epoch, the ID 0; a day is 86400 s whatever TimeZone.
	epoch := (@extschema@.idgen_decode(0, layout)).ts;
	BEGIN
		span := @extschema@.idgen_from_timestamp(epoch + make_interval(secs => extract(epoch FROM width)), layout)
			- @extschema@.idgen_from_timestamp(epoch, layout);
	EXCEPTION WHEN datetime_field_overflow OR interval_field_overflow THEN
		-- The layout's range, as idgen_from_timestamp() states it for a
		-- time after every layout's end.
		BEGIN
			PERFORM @extschema@.idgen_from_timestamp('9999-12-31 00:00:00+00', layout);
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

COMMENT ON FUNCTION idgen_span(interval, text) IS
'how many IDs of the layout an interval holds, whole time units: the width of a time partition on an ID key';

-- ---------------------------------------------------------------------------
-- Layouts defined in SQL, and generating in any layout
-- ---------------------------------------------------------------------------

-- Layouts defined in SQL.  A configuration table, so that pg_dump keeps its
-- rows; a trigger checks every row however it is written and tells other
-- backends to forget the layouts they cached.
CREATE TABLE idgen_layout (
	name text PRIMARY KEY,
	epoch timestamptz NOT NULL,
	fields text[] NOT NULL,
	widths int[] NOT NULL,
	time_unit interval NOT NULL DEFAULT '1 millisecond',
	radix int NOT NULL DEFAULT 2
);

COMMENT ON TABLE idgen_layout IS
'ID layouts defined with idgen_define_layout(), in addition to the built-in ones';

SELECT pg_catalog.pg_extension_config_dump('idgen_layout', '');

GRANT SELECT ON idgen_layout TO PUBLIC;

CREATE FUNCTION idgen_layout_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_layout_check'
LANGUAGE C;

CREATE TRIGGER idgen_layout_check
BEFORE INSERT OR UPDATE OR DELETE ON idgen_layout
FOR EACH ROW EXECUTE FUNCTION idgen_layout_check();

CREATE TRIGGER idgen_layout_truncate
BEFORE TRUNCATE ON idgen_layout
FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_check();

-- Only the triggers call it, without checking EXECUTE, so nobody needs
-- that; it refuses any other use.
REVOKE EXECUTE ON FUNCTION idgen_layout_check() FROM PUBLIC;

COMMENT ON FUNCTION idgen_layout_check() IS
'trigger of idgen_layout: checks each layout written and tells backends to forget cached ones';

-- Changing layouts needs the rights to change the table: its owner's, or
-- those granted on it.
CREATE FUNCTION idgen_define_layout(name text, epoch timestamptz, fields text[],
	widths int[], time_unit interval DEFAULT '1 millisecond', radix int DEFAULT 2)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_define_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_define_layout(text, timestamptz, text[], int[], interval, int) IS
'defines an ID layout: fields from the most significant down, time first, widths in bits (radix 2) or decimal digits (radix 10)';

CREATE FUNCTION idgen_drop_layout(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_drop_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_drop_layout(text) IS
'drops a layout defined with idgen_define_layout()';

-- Every layout by name, so that no comment has to list them: the built-in
-- ones (idgen follows idgen.epoch and idgen.node_bits, fixed until the
-- server restarts: stable) and those of idgen_layout, in its columns.
CREATE FUNCTION idgen_builtin_layouts(
	OUT name text, OUT epoch timestamptz, OUT fields text[], OUT widths int[],
	OUT time_unit interval, OUT radix int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_builtin_layouts'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_builtin_layouts() IS
'the built-in ID layouts, in the columns of idgen_layout: rows of the view idgen_layouts';

CREATE VIEW idgen_layouts AS
SELECT b.name, true AS built_in, b.epoch, b.fields, b.widths, b.time_unit, b.radix
FROM idgen_builtin_layouts() b
UNION ALL
SELECT l.name, false, l.epoch, l.fields, l.widths, l.time_unit, l.radix
FROM idgen_layout l;

GRANT SELECT ON idgen_layouts TO PUBLIC;

COMMENT ON VIEW idgen_layouts IS
'every ID layout by name, built in or defined with idgen_define_layout(): fields from the most significant down, widths in bits (radix 2) or decimal digits (radix 10)';

-- Generation in any layout; a NULL shard means a random one, so these are not
-- strict.  As idgen_next(), run by the leader of a parallel query only.
CREATE FUNCTION idgen_next(layout text, shard bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next(text, bigint) IS
'next unique, time-ordered ID of the named layout, with the given or a random shard where the layout has one';

CREATE FUNCTION idgen_next_batch(n int, layout text, shard bigint DEFAULT NULL)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_batch_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_batch(int, text, bigint) IS
'the next n IDs of the named layout, as n calls of idgen_next(layout, shard) would make them';

CREATE FUNCTION idgen_next_block(n int, layout text, shard bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_block_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_block(int, text, bigint) IS
'first of n consecutive IDs of a layout whose sequence is its lowest field';

CREATE FUNCTION idgen_horizon(layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_horizon_layout'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_horizon(text) IS
'idgen_horizon() in a named layout';

-- Layouts on every node of a Citus cluster.  Citus runs idgen_next() on the
-- workers too (INSERT through a worker, INSERT ... SELECT between distributed
-- tables, ADD COLUMN ... DEFAULT), so they need the coordinator's layouts;
-- idgen_layout cannot be a reference table (it has triggers).  After a change
-- on the coordinator, this trigger repeats it on every worker, as the same
-- user, through Citus's own connections: whoever may not change idgen_layout
-- on a worker cannot change it there either.  A definition a worker already
-- has is left alone; a different one there is an error.  Without Citus, or on
-- a worker, it does nothing.
CREATE FUNCTION idgen_layout_propagate()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s constant text := '@extschema@';
	cmd text;
	failed text;
BEGIN
	IF TG_WHEN <> 'AFTER' OR TG_RELID <> '@extschema@.idgen_layout'::regclass THEN
		RAISE EXCEPTION 'idgen_layout_propagate() can only be fired by the triggers of table idgen_layout'
			USING ERRCODE = 'trigger_protocol_violated',
				  HINT = 'Do not use idgen_layout_propagate() in triggers of other tables.';
	END IF;
	-- Two statements: the second is parsed only where Citus is installed.
	IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
		RETURN NULL;
	END IF;
	IF NOT pg_catalog.citus_is_coordinator() THEN
		RETURN NULL;
	END IF;

	IF TG_OP = 'TRUNCATE' THEN
		cmd := format('TRUNCATE %s.idgen_layout', s);
	ELSE
		IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD IS DISTINCT FROM NEW) THEN
			cmd := format('SELECT %1$s.idgen_drop_layout(name) FROM %1$s.idgen_layout '
						  'WHERE name OPERATOR(pg_catalog.=) %2$L;', s, OLD.name);
		END IF;
		-- The row goes as JSON, which no DateStyle or TimeZone changes.
		IF TG_OP <> 'DELETE' THEN
			cmd := concat(cmd, format(
				'SELECT %1$s.idgen_define_layout(r.name, r.epoch, r.fields, r.widths, r.time_unit, r.radix) '
				'FROM pg_catalog.jsonb_populate_record(NULL::%1$s.idgen_layout, %2$L) r '
				'WHERE NOT EXISTS (SELECT FROM %1$s.idgen_layout l WHERE l OPERATOR(pg_catalog.=) r)',
				s, to_jsonb(NEW)));
		END IF;
	END IF;

	SELECT string_agg(format('%s:%s: %s', w.nodename, w.nodeport, w.result), '; ')
	INTO failed
	FROM pg_catalog.run_command_on_workers(cmd) w
	WHERE NOT w.success;
	IF failed IS NOT NULL THEN
		RAISE EXCEPTION 'could not change idgen layouts on every Citus worker'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = failed,
				  HINT = 'Fix the workers named, then run idgen_sync_layouts() on the coordinator.';
	END IF;
	RETURN NULL;
END
$$;

REVOKE EXECUTE ON FUNCTION idgen_layout_propagate() FROM PUBLIC;

COMMENT ON FUNCTION idgen_layout_propagate() IS
'trigger of idgen_layout: on a Citus coordinator, repeats each change of layouts on every worker';

CREATE TRIGGER idgen_layout_propagate
AFTER INSERT OR UPDATE OR DELETE ON idgen_layout
FOR EACH ROW EXECUTE FUNCTION idgen_layout_propagate();

CREATE TRIGGER idgen_layout_propagate_truncate
AFTER TRUNCATE ON idgen_layout
FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_propagate();

-- Brings every worker in line with the coordinator's layouts, for a node
-- added after they were defined: each layout is sent again through the
-- trigger above, so it needs the same rights as defining one.
CREATE FUNCTION idgen_sync_layouts()
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	n bigint;
BEGIN
	IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
		RAISE EXCEPTION 'idgen_sync_layouts() needs the extension "citus"'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Without Citus, copy layouts with pg_dump, or define them on each server.';
	END IF;
	IF NOT pg_catalog.citus_is_coordinator() THEN
		RAISE EXCEPTION 'idgen_sync_layouts() must be run on the Citus coordinator'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Connect to the coordinator and call it there.';
	END IF;
	UPDATE @extschema@.idgen_layout SET name = name;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;

COMMENT ON FUNCTION idgen_sync_layouts() IS
'on a Citus coordinator: defines its idgen layouts on every worker that lacks them; returns how many it sent';

-- ---------------------------------------------------------------------------
-- Text forms of IDs, and UUIDv7
-- ---------------------------------------------------------------------------

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

-- ---------------------------------------------------------------------------
-- objectid: MongoDB's ObjectId
-- ---------------------------------------------------------------------------

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

-- Operator classes call it without checking EXECUTE, so nobody needs that.
REVOKE EXECUTE ON FUNCTION objectid_sortsupport(internal) FROM PUBLIC;
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

-- Equal objectids are equal byte for byte, so btree indexes can deduplicate
-- them, as for uuid.  Indexes built before take it up with REINDEX.
ALTER OPERATOR FAMILY objectid_ops USING btree
	ADD FUNCTION 4 (objectid, objectid) pg_catalog.btequalimage(oid);

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

-- ---------------------------------------------------------------------------
-- Statistics
-- ---------------------------------------------------------------------------

-- idgen_stats: what the generator does, per layout definition.  Backends publish their counts at transaction end and at exit, so the
-- counts are exact for finished transactions.  The view reveals counts and
-- times only, so PUBLIC may read it; resetting is for the owner and those
-- granted it.

CREATE FUNCTION idgen_stats(
	OUT layout text, OUT ids bigint, OUT shared_ids bigint,
	OUT clock_waits bigint, OUT clock_wait_ms double precision,
	OUT clock_regressions bigint, OUT max_lead_ms bigint,
	OUT confirm_waits bigint, OUT mark timestamptz, OUT mark_lead_ms bigint,
	OUT time_left interval, OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_stats'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_stats() IS
'IDs made, clock and standby waits, lead borrowed and the high-water mark, per layout definition: the rows of the view idgen_stats';

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
-- Where this database's IDs were made
-- ---------------------------------------------------------------------------

-- The clusters (system identifiers) where the extension was created or
-- updated in this database, or first generated after pg_upgrade brought it
-- (the library adds that row, as no script runs there), with the epoch of
-- their default layout, which idgen_resume_after() counts from.  A
-- configuration table, so that pg_dump and
-- pg_upgrade carry its rows into a new cluster, whose high-water marks do
-- not cover the old cluster's IDs: generation there refuses until the old
-- idgen_hwm is copied in or idgen_resume_after() says where to resume.
CREATE TABLE idgen_system (
	system_identifier bigint NOT NULL,
	recorded_at timestamptz NOT NULL DEFAULT now(),
	epoch timestamptz
);

SELECT pg_catalog.pg_extension_config_dump('idgen_system', '');

-- A row that arrives, as a restore brings another cluster's, is checked at
-- once: a cluster the marks do not cover makes the server refuse, in every
-- database, also in sessions that generated before.  The row is kept.
CREATE FUNCTION idgen_system_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_system_check'
LANGUAGE C;

REVOKE EXECUTE ON FUNCTION idgen_system_check() FROM PUBLIC;

COMMENT ON FUNCTION idgen_system_check() IS
'trigger of idgen_system: a row of a cluster the high-water marks do not cover makes generation refuse at once';

CREATE TRIGGER idgen_system_check
AFTER INSERT ON idgen_system
FOR EACH ROW EXECUTE FUNCTION idgen_system_check();

INSERT INTO idgen_system (system_identifier, epoch)
SELECT c.system_identifier, b.epoch
FROM pg_catalog.pg_control_system() c, idgen_builtin_layouts() b
WHERE b.name = 'idgen';

COMMENT ON TABLE idgen_system IS
'clusters (system identifiers) where idgen was created, updated or, after pg_upgrade, first generated in this database, with the epoch of their default layout; kept by pg_dump and pg_upgrade, so that a new cluster knows it holds their IDs';

-- A database's owner restores its dumps, also into a database that a
-- superuser created with the extension, or from a template that has it (as
-- hosting services do); pg_database_owner is whoever owns the database the
-- session is in.  The rows of idgen_system and idgen_layout that a dump
-- carries must load: without them the database would hold IDs that nothing
-- says came from elsewhere, and rows whose CHECK reads a layout through a
-- function would fail.  Only INSERT: a row of idgen_system can only make
-- generation refuse, and layouts are checked however they are written.
GRANT INSERT ON idgen_system, idgen_layout TO pg_database_owner;

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
-- Several servers: node ids, layouts, adopting sequences
-- ---------------------------------------------------------------------------

-- What a server says about itself, as one JSON text: the one reading of
-- idgen's settings, which idgen_node_info() runs on this server and
-- idgen_check_nodes() sends to others, which need not have the extension
-- created.  layouts: an SQL expression for its layouts, or 'NULL'.  The start
-- time goes as a number, so that no DateStyle can change it; idgen_schema
-- names the schema of an idgen with node id leases (1.5 and later), whose
-- view idgen_node_lease says where a leased node id came from.
CREATE FUNCTION idgen_node_probe(layouts text DEFAULT 'NULL')
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $f$
SELECT format($q$
		SELECT pg_catalog.json_build_object(
			'preloaded', EXISTS (SELECT FROM pg_catalog.pg_settings s
					WHERE s.name = 'idgen.node_bits' AND s.context = 'postmaster'),
			'node_id', (SELECT s.setting FROM pg_catalog.pg_settings s
					WHERE s.name = 'idgen.node_id' AND s.context = 'postmaster'
					AND s.source OPERATOR(pg_catalog.<>) 'default'),
			'node_bits', (SELECT s.setting FROM pg_catalog.pg_settings s
					WHERE s.name = 'idgen.node_bits' AND s.context = 'postmaster'),
			'epoch', (SELECT s.setting FROM pg_catalog.pg_settings s
					WHERE s.name = 'idgen.epoch' AND s.context = 'postmaster'),
			'idgen_schema', (SELECT n.nspname FROM pg_catalog.pg_extension e
					JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
					WHERE e.extname OPERATOR(pg_catalog.=) 'idgen'
					AND e.extversion OPERATOR(pg_catalog.<>) ALL ('{1.0,1.1,1.2,1.3,1.4}'::pg_catalog.text[])),
			'system_identifier', c.system_identifier,
			'in_recovery', pg_catalog.pg_is_in_recovery(),
			'started', EXTRACT(epoch FROM pg_catalog.pg_postmaster_start_time())::text,
			'layouts', %s)::text
		FROM pg_catalog.pg_control_system() c$q$, layouts)
$f$;

COMMENT ON FUNCTION idgen_node_probe(text) IS
'the query that idgen_node_info() and idgen_check_nodes() run on each server: its idgen settings and identity as JSON text, from servers that need not have the extension created';

-- What tells this server's IDs apart from other servers', to compare
-- servers: node_id is NULL when the server cannot generate, because idgen is
-- not preloaded or idgen.node_id is unset or was rejected (it keeps the
-- default 0, source "default" in pg_settings), or, leased, no lease is held:
-- so it is neither taken for node 0 nor seen to clash with it.  source,
-- registry and valid_until are idgen_node_lease's.  node_bits and epoch
-- must be equal on every server; a primary and its physical standbys share
-- system_identifier, and started_at tells two running instances of one
-- cluster apart.
CREATE FUNCTION idgen_node_info(
	OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT started_at timestamptz,
	OUT source text, OUT registry text, OUT valid_until timestamptz)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	j jsonb;
	l record;
BEGIN
	EXECUTE @extschema@.idgen_node_probe() INTO j;
	node_id := (j->>'node_id')::int;
	node_bits := (j->>'node_bits')::int;
	epoch := (j->>'epoch')::date;
	system_identifier := (j->>'system_identifier')::bigint;
	in_recovery := pg_is_in_recovery();
	started_at := pg_postmaster_start_time();
	source := 'setting';
	IF (j->>'preloaded')::bool THEN
		SELECT * INTO l FROM @extschema@.idgen_node_lease;
		IF l.source IN ('lease', 'etcd') THEN
			-- a lost lease's node id is no longer this server's
			source := l.source;
			node_id := CASE WHEN l.state <> 'lost' THEN l.node_id END;
			registry := l.registry;
			valid_until := l.valid_until;
		END IF;
	END IF;
	RETURN;
END
$$;

COMMENT ON FUNCTION idgen_node_info() IS
'this server''s idgen node id (NULL when unset, rejected, or not leased), where it comes from (the setting idgen.node_id, or a lease of idgen.node_registry, and until when), its layout, and what identifies the server';

-- Connects to every listed server through dblink and flags what can make
-- two of them issue the same ID: a node id used twice, a different layout,
-- a server that cannot generate or cannot be reached.  dblink is not a
-- dependency of idgen: only this function needs it, so it looks for it when
-- called.  Without a list, on a Citus coordinator, it asks every node of
-- pg_dist_node through Citus's connections (no dblink), and there also
-- compares the layouts of idgen_layout with the coordinator's.  Servers with
-- no node id are flagged, and never counted as node 0.  A server that
-- leases its node id (idgen 1.5 and later in the database reached) reports
-- the lease's, as idgen_node_info() does.
CREATE FUNCTION idgen_check_nodes(conninfos text[] DEFAULT NULL,
	OUT conninfo text, OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT problem text,
	OUT source text, OUT registry text, OUT valid_until timestamptz)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	-- Layouts by name, with times as numbers so that no TimeZone changes them.
	layouts_query constant text := $q$
		(SELECT COALESCE(pg_catalog.jsonb_object_agg(l.name, pg_catalog.jsonb_build_object(
				'epoch', EXTRACT(epoch FROM l.epoch), 'fields', l.fields, 'widths', l.widths,
				'time_unit', EXTRACT(epoch FROM l.time_unit), 'radix', l.radix)), '{}')
		 FROM %s.idgen_layout l)$q$;
	-- Where a server's node id comes from, as JSON text.  %s: @extschema@
	-- comes quoted already, as in layouts_query.
	lease_query constant text := 'SELECT pg_catalog.row_to_json(l)::text FROM %s.idgen_node_lease l';
	citus bool := conninfos IS NULL;
	dblink_schema name;
	names text[];
	reports jsonb[];
	leases jsonb[];
	n int;
	pos int;
	nodes int[];
	bits int[];
	epochs date[];
	sysids bigint[];
	standby bool[];
	started numeric[];
	problems text[];
	usable bool[];			-- reached, can generate, not listed before
	ref int;				-- the first usable server: the reference layout
	j jsonb;
	r record;
	msg text;
	detail text;
	clash text;
	reason text;
	diff text;
BEGIN
	IF citus THEN
		IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
			RAISE EXCEPTION 'idgen_check_nodes() needs a list of servers unless Citus is installed'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  HINT = 'Pass the connection strings of the servers to check, as idgen_check_nodes(ARRAY[...]).';
		END IF;
		IF NOT pg_catalog.citus_is_coordinator() THEN
			RAISE EXCEPTION 'idgen_check_nodes() without a list of servers must be run on the Citus coordinator'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  HINT = 'Connect to the coordinator, or pass the connection strings of the servers to check.';
		END IF;
		-- This server first: its layouts are the ones the workers need.
		names[1] := coalesce((SELECT format('%s:%s', d.nodename, d.nodeport) FROM pg_dist_node d
							  WHERE d.groupid = 0 AND d.noderole = 'primary' LIMIT 1),
							 'coordinator');
		EXECUTE @extschema@.idgen_node_probe(format(layouts_query, '@extschema@')) INTO j;
		reports[1] := j;
		EXECUTE format(lease_query, '@extschema@') INTO j;
		leases[1] := j;
		FOR r IN SELECT w.nodename, w.nodeport, w.success, w.result
				 FROM pg_catalog.run_command_on_workers(
					@extschema@.idgen_node_probe(format(layouts_query, '@extschema@'))) w
				 ORDER BY w.nodename, w.nodeport LOOP
			n := array_length(names, 1) + 1;
			names[n] := format('%s:%s', r.nodename, r.nodeport);
			IF r.success THEN
				reports[n] := r.result::jsonb;
			ELSE
				problems[n] := 'could not check this server: ' || r.result;
			END IF;
		END LOOP;
		-- Citus creates idgen in the same schema on every node; a worker
		-- whose idgen predates leases sets its node id by hand.
		FOR r IN SELECT w.nodename, w.nodeport, w.result
				 FROM pg_catalog.run_command_on_workers(format(lease_query, '@extschema@')) w
				 WHERE w.success LOOP
			pos := array_position(names, format('%s:%s', r.nodename, r.nodeport));
			IF pos IS NOT NULL THEN
				leases[pos] := r.result::jsonb;
			END IF;
		END LOOP;
	ELSE
		SELECT ns.nspname INTO dblink_schema
		FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
		WHERE e.extname = 'dblink';
		IF NOT FOUND THEN
			RAISE EXCEPTION 'idgen_check_nodes requires the extension "dblink"'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The function connects to each listed server through dblink.',
					  HINT = 'Run CREATE EXTENSION dblink in this database, then call the function again.';
		END IF;
		names := conninfos;
		FOR i IN 1 .. coalesce(array_length(conninfos, 1), 0) LOOP
			BEGIN
				EXECUTE format('SELECT t.j FROM %I.dblink($1, $2) AS t(j jsonb)', dblink_schema)
					INTO STRICT j USING conninfos[i], @extschema@.idgen_node_probe();
				reports[i] := j;
				IF j->>'idgen_schema' IS NOT NULL THEN
					EXECUTE format('SELECT t.j FROM %I.dblink($1, $2) AS t(j jsonb)', dblink_schema)
						INTO STRICT j USING conninfos[i], format(lease_query, j->>'idgen_schema');
					leases[i] := j;
				END IF;
			EXCEPTION WHEN OTHERS THEN
				GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
				problems[i] := 'could not check this server: ' || msg ||
					coalesce(': ' || nullif(split_part(detail, E'\n', 1), ''), '');
			END;
		END LOOP;
	END IF;
	n := coalesce(array_length(names, 1), 0);

	FOR i IN 1 .. n LOOP
		usable[i] := false;
		j := reports[i];
		CONTINUE WHEN j IS NULL;
		nodes[i] := (j->>'node_id')::int;
		bits[i] := (j->>'node_bits')::int;
		epochs[i] := (j->>'epoch')::date;
		sysids[i] := (j->>'system_identifier')::bigint;
		standby[i] := (j->>'in_recovery')::bool;
		started[i] := (j->>'started')::numeric;
		IF leases[i]->>'source' IN ('lease', 'etcd') THEN
			-- a lost lease's node id is no longer the server's
			nodes[i] := CASE WHEN leases[i]->>'state' <> 'lost' THEN (leases[i]->>'node_id')::int END;
		END IF;
		IF NOT (j->>'preloaded')::bool THEN
			problems[i] := 'idgen is not loaded via shared_preload_libraries, so this server cannot generate IDs';
		ELSIF nodes[i] IS NULL AND leases[i]->>'source' IN ('lease', 'etcd') THEN
			-- a standby leases its node id once promoted
			IF NOT standby[i] THEN
				problems[i] := format('idgen holds no node id lease from registry "%s" (%s)%s, so this server cannot generate IDs',
									  leases[i]->>'registry', leases[i]->>'state',
									  coalesce(': ' || (leases[i]->>'last_error'), ''));
			END IF;
		ELSIF nodes[i] IS NULL THEN
			problems[i] := 'idgen.node_id is not set, or its configured value was rejected (see the server log), so this server cannot generate IDs';
		ELSIF nodes[i] >= (1 << bits[i]) THEN
			problems[i] := format('idgen.node_id is %s, but idgen.node_bits = %s allows node ids up to %s, so this server cannot generate IDs',
								  nodes[i], bits[i], (1 << bits[i]) - 1);
		ELSE
			usable[i] := true;
		END IF;
	END LOOP;

	-- A server listed more than once is checked only the first time.
	FOR i IN 1 .. n LOOP
		CONTINUE WHEN sysids[i] IS NULL;
		FOR k IN 1 .. i - 1 LOOP
			IF sysids[k] = sysids[i] AND started[k] = started[i] THEN
				problems[i] := format('same server as %s', names[k]);
				usable[i] := false;
				EXIT;
			END IF;
		END LOOP;
	END LOOP;

	FOR i IN 1 .. n LOOP
		CONTINUE WHEN NOT usable[i];
		ref := coalesce(ref, i);
		IF bits[i] <> bits[ref] THEN
			problems[i] := concat_ws('; ', problems[i],
				format('idgen.node_bits is %s, but %s on %s', bits[i], bits[ref], names[ref]));
		END IF;
		IF epochs[i] <> epochs[ref] THEN
			problems[i] := concat_ws('; ', problems[i],
				format('idgen.epoch is %s, but %s on %s',
					   to_char(epochs[i], 'YYYY-MM-DD'), to_char(epochs[ref], 'YYYY-MM-DD'),
					   names[ref]));
		END IF;
		-- A standby may share the node id of its own cluster's primary: it
		-- cannot generate, and when promoted it resumes above the mark its
		-- primary logged in WAL.  Anything else sharing a node id clashes.
		clash := NULL;
		FOR k IN 1 .. n LOOP
			CONTINUE WHEN k = i OR NOT usable[k] OR nodes[k] <> nodes[i];
			CONTINUE WHEN sysids[k] = sysids[i] AND (standby[i] OR standby[k]);
			IF sysids[k] = sysids[i] THEN
				reason := ' (a copy of the same cluster: a clone that kept its node id, or a second primary after failover)';
			ELSIF standby[i] OR standby[k] THEN
				reason := ' (the clash begins when the standby is promoted)';
			ELSE
				reason := '';
			END IF;
			clash := concat_ws(', ', clash, names[k] || reason);
		END LOOP;
		IF clash IS NOT NULL THEN
			problems[i] := concat_ws('; ', problems[i],
				format('node id %s is also used by %s', nodes[i], clash));
		END IF;
	END LOOP;

	-- In a Citus cluster every node generates, so every node needs the
	-- coordinator's layouts, defined the same way.
	IF citus THEN
		FOR i IN 2 .. n LOOP
			CONTINUE WHEN reports[i] IS NULL;
			SELECT string_agg(c.name, ', ' ORDER BY c.name) INTO diff
			FROM jsonb_object_keys((reports[1]->'layouts')) c(name)
			WHERE NOT (reports[i]->'layouts') ? c.name;
			IF diff IS NOT NULL THEN
				problems[i] := concat_ws('; ', problems[i],
					format('layouts of %s missing here: %s (run idgen_sync_layouts() on the coordinator)',
						   names[1], diff));
			END IF;
			SELECT string_agg(c.name, ', ' ORDER BY c.name) INTO diff
			FROM jsonb_each((reports[i]->'layouts')) c(name, def)
			WHERE reports[1]->'layouts'->c.name <> c.def;
			IF diff IS NOT NULL THEN
				problems[i] := concat_ws('; ', problems[i],
					format('layouts defined differently on %s: %s', names[1], diff));
			END IF;
			SELECT string_agg(c.name, ', ' ORDER BY c.name) INTO diff
			FROM jsonb_object_keys((reports[i]->'layouts')) c(name)
			WHERE NOT (reports[1]->'layouts') ? c.name;
			IF diff IS NOT NULL THEN
				problems[i] := concat_ws('; ', problems[i],
					format('layouts not defined on %s: %s', names[1], diff));
			END IF;
		END LOOP;
	END IF;

	FOR i IN 1 .. n LOOP
		conninfo := names[i];
		node_id := nodes[i];
		node_bits := bits[i];
		epoch := epochs[i];
		system_identifier := sysids[i];
		in_recovery := standby[i];
		problem := problems[i];
		source := CASE WHEN reports[i] IS NOT NULL
				  THEN coalesce(leases[i]->>'source', 'setting') END;
		registry := leases[i]->>'registry';
		valid_until := (leases[i]->>'valid_until')::timestamptz;
		RETURN NEXT;
	END LOOP;
END
$$;

COMMENT ON FUNCTION idgen_check_nodes(text[]) IS
'idgen node id (set by hand or leased) and layout of each listed server (through dblink), or of every node of the Citus cluster when called without a list, with what could make two of them issue the same ID';

-- Switches an integer key column from a sequence (serial, IDENTITY, a
-- nextval() default, or pgEdge's snowflake.nextval()) to idgen_next(), in
-- one transaction: the column and, with widen, every column that references
-- it by foreign key become bigint; the sequence owned by the column is
-- dropped.  Existing values must be below the IDs idgen makes from now on,
-- so no new ID can equal one.  Only the resulting table definitions matter
-- to pg_dump.
CREATE FUNCTION idgen_adopt(tbl regclass, col name, widen boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	generator constant text := '@extschema@.idgen_next()';
	att pg_attribute;
	relkind "char";
	def_oid oid;
	def text;
	seq regclass;
	seq_name text;
	seq_owned bool := false;
	pgedge bool := false;
	pgedge_floor bigint;
	ready timestamptz;
	already bool := false;
	largest bigint;
	margin_ms int;
	floor_id bigint;
	narrow text;
	ref_rels oid[];
	ref_atts int2[];
	ref_cons name[];
	rel regclass;
	clauses text;
	cols text;
BEGIN

	SELECT c.relkind INTO relkind FROM pg_class c WHERE c.oid = tbl;
	IF relkind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION '"%" is not a table', tbl
			USING ERRCODE = 'wrong_object_type';
	END IF;
	-- Nothing may insert between the check of existing values and the switch.
	EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);

	SELECT * INTO att FROM pg_attribute a
	WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	IF att.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
		RAISE EXCEPTION 'column "%" of table "%" is of type %, not an integer type', col, tbl,
				format_type(att.atttypid, att.atttypmod)
			USING ERRCODE = 'datatype_mismatch',
				  DETAIL = 'idgen IDs are bigint values.';
	END IF;
	IF att.attgenerated <> '' THEN
		RAISE EXCEPTION 'column "%" of table "%" is a generated column', col, tbl
			USING ERRCODE = 'wrong_object_type';
	END IF;

	-- What fills the column now.
	SELECT d.oid, pg_get_expr(d.adbin, d.adrelid) INTO def_oid, def
	FROM pg_attrdef d WHERE d.adrelid = tbl AND d.adnum = att.attnum;
	IF att.attidentity <> '' THEN
		SELECT dep.objid::regclass INTO seq FROM pg_depend dep
		WHERE dep.classid = 'pg_class'::regclass AND dep.refclassid = 'pg_class'::regclass
		  AND dep.refobjid = tbl AND dep.refobjsubid = att.attnum AND dep.deptype = 'i';
	ELSIF def = generator THEN
		already := true;
	ELSIF def IS NOT NULL THEN
		SELECT dep.refobjid::regclass INTO seq FROM pg_depend dep
		JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
		WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = def_oid
		  AND dep.refclassid = 'pg_class'::regclass;
		-- pgEdge's convert_sequence_to_snowflake() leaves the sequence in
		-- a snowflake.nextval() default.
		pgedge := seq IS NOT NULL AND def = format('snowflake.nextval(%L::regclass)', seq::text);
		IF seq IS NULL OR (def <> format('nextval(%L::regclass)', seq::text) AND NOT pgedge) THEN
			RAISE EXCEPTION 'column "%" of table "%" has a default that is not a sequence', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The default is %s.', def),
					  HINT = 'idgen_adopt replaces only nextval(''sequence'') and pgEdge''s snowflake.nextval(''sequence'') defaults. Drop the default first if idgen_next() should replace it.';
		END IF;
		seq_owned := EXISTS (
			SELECT FROM pg_depend dep
			WHERE dep.classid = 'pg_class'::regclass AND dep.objid = seq
			  AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = tbl
			  AND dep.refobjsubid = att.attnum AND dep.deptype = 'a');
	END IF;

	seq_name := seq::text;

	-- Columns that will hold the new IDs: this one and, transitively, those
	-- that reference it by foreign key (partitions follow their parent).
	WITH RECURSIVE refs(relid, attnum, conname) AS (
		SELECT tbl::oid, att.attnum, NULL::name
		UNION
		SELECT c.conrelid, c.conkey[k], c.conname
		FROM refs
		JOIN pg_constraint c ON c.confrelid = refs.relid AND c.contype = 'f' AND c.conparentid = 0
		CROSS JOIN LATERAL generate_subscripts(c.confkey, 1) k
		WHERE c.confkey[k] = refs.attnum)
	SELECT array_agg(relid), array_agg(attnum), array_agg(conname)
	INTO ref_rels, ref_atts, ref_cons
	FROM refs;

	SELECT string_agg(format('%s.%I (%s)', a.attrelid::regclass, a.attname,
							 format_type(a.atttypid, a.atttypmod)), ', '
					  ORDER BY a.attrelid <> tbl, a.attrelid::regclass::text, a.attnum)
	INTO narrow
	FROM (SELECT DISTINCT relid, attnum FROM unnest(ref_rels, ref_atts) u(relid, attnum)) rc
	JOIN pg_attribute a ON a.attrelid = rc.relid AND a.attnum = rc.attnum
	WHERE a.atttypid <> 'int8'::regtype;
	IF narrow IS NOT NULL AND NOT widen THEN
		RAISE EXCEPTION 'columns too narrow for idgen IDs: %', narrow
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'idgen IDs need bigint, in the column and in every column that references it.',
				  HINT = 'Call idgen_adopt with widen => true to change these columns to bigint.';
	END IF;

	-- Refuse before changing anything if this server cannot generate: the
	-- new default would fail every insert.
	PERFORM @extschema@.idgen_next();

	IF NOT already THEN
		-- Every ID made from now on is at least the smallest ID of the
		-- current millisecond, less the time idgen lets the clock step back.
		SELECT coalesce(max(s.setting::int), 10000) INTO margin_ms
		FROM pg_settings s WHERE s.name = 'idgen.max_clock_regression_ms';
		floor_id := @extschema@.idgen_from_timestamp(clock_timestamp() - make_interval(secs => margin_ms / 1000.0));
		EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO largest;
		IF largest >= floor_id AND pgedge THEN
			-- pgEdge counts milliseconds from 2023-01-01, idgen from
			-- idgen.epoch: IDs pgEdge made within that gap of now are above
			-- idgen's.  The pgedge layout continues pgEdge's numbering.
			pgedge_floor := @extschema@.idgen_from_timestamp(
				clock_timestamp() - make_interval(secs => margin_ms / 1000.0), 'pgedge');
			ready := (@extschema@.idgen_decode(largest, 'pgedge')).ts;
			ready := ready + make_interval(secs => margin_ms / 1000.0 + 0.001);
			RAISE EXCEPTION 'values of column "%" of table "%" reach the range of idgen IDs', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The largest value is %s, a pgEdge snowflake ID counting milliseconds from 2023-01-01; idgen IDs count them from idgen.epoch, %s, and made from now on can be as small as %s.',
									  largest, current_setting('idgen.epoch', true), floor_id),
					  HINT = format('Continue pgEdge''s numbering in idgen''s layout pgedge instead%s: ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.idgen_next(''pgedge'').',
									CASE WHEN largest >= pgedge_floor
										THEN format(' once the clock is idgen.max_clock_regression_ms past the largest value''s time, at %s', ready)
										ELSE '' END,
									tbl, col);
		ELSIF largest >= floor_id THEN
			RAISE EXCEPTION 'values of column "%" of table "%" reach the range of idgen IDs', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The largest value is %s; idgen IDs made from now on can be as small as %s, so a new ID could equal an existing value.',
									  largest, floor_id),
					  HINT = 'Renumber the existing values below that, or keep the column''s current default.';
		END IF;
		RETURN NEXT CASE WHEN largest IS NULL
			THEN format('%s.%I holds no values yet', tbl, col)
			ELSE format('largest existing value of %s.%I, %s, is below every ID idgen makes from now on', tbl, col, largest)
		END;
	END IF;

	IF att.attidentity <> '' THEN
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
		RETURN NEXT format('dropped identity of %s.%I, with its sequence %s', tbl, col, seq_name);
	ELSIF def IS NOT NULL AND NOT already THEN
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
		RETURN NEXT format('dropped default %s of %s.%I', def, tbl, col);
	END IF;

	-- One ALTER TABLE per table, so that each is rewritten once.
	FOR rel, clauses, cols IN
		SELECT rc.relid::regclass,
			   string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname), ', ' ORDER BY a.attnum),
			   string_agg(format('%I', a.attname) || coalesce(' (foreign key ' || quote_ident(rc.conname) || ')', ''),
						  ', ' ORDER BY a.attnum)
		FROM (SELECT relid, attnum, min(conname) AS conname
			  FROM unnest(ref_rels, ref_atts, ref_cons) u(relid, attnum, conname)
			  GROUP BY relid, attnum) rc
		JOIN pg_attribute a ON a.attrelid = rc.relid AND a.attnum = rc.attnum
		WHERE a.atttypid <> 'int8'::regtype
		GROUP BY rc.relid
		ORDER BY rc.relid <> tbl, rc.relid::regclass::text
	LOOP
		EXECUTE format('ALTER TABLE %s %s', rel, clauses);
		RETURN NEXT format('changed %s to bigint in %s', cols, rel);
	END LOOP;

	IF seq IS NOT NULL AND att.attidentity = '' THEN
		IF NOT seq_owned THEN
			RETURN NEXT format('kept sequence %s: it does not belong to %s.%I', seq_name, tbl, col);
		ELSE
			BEGIN
				EXECUTE format('DROP SEQUENCE %s', seq);
				RETURN NEXT format('dropped sequence %s', seq_name);
			EXCEPTION WHEN dependent_objects_still_exist THEN
				RETURN NEXT format('kept sequence %s: other objects use it', seq_name);
			END;
		END IF;
	END IF;

	IF already THEN
		RETURN NEXT format('%s.%I already defaults to %s', tbl, col, generator);
	ELSE
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, generator);
		RETURN NEXT format('set default of %s.%I to %s', tbl, col, generator);
	END IF;
END
$$;

COMMENT ON FUNCTION idgen_adopt(regclass, name, boolean) IS
'switch an integer key column from its sequence (or pgEdge snowflake sequence) to DEFAULT idgen_next(), widening it and its referencing columns to bigint on request';

-- ---------------------------------------------------------------------------
-- Layouts restored before any table's data
-- ---------------------------------------------------------------------------

-- pg_dump restores the rows of idgen_layout among other tables' data, so
-- what reads a layout while a table's rows load (a CHECK constraint of the
-- table or of a domain, a generated column, through any function) found
-- none.  The function idgen_layouts_saved(), no member of the extension,
-- holds a copy of the rows: pg_dump restores it with the schema, before any
-- data, and creating it defines the layouts it holds (src/restore.c).

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

-- ---------------------------------------------------------------------------
-- Node-id leases
-- ---------------------------------------------------------------------------

-- A server with idgen.node_registry leases its node id from the registry,
-- any database with idgen: these are the registry's table, functions and
-- view (docs/design.md, "Node-id leases").  One row per node id ever
-- leased; its token is the holder's secret, rotated at every acquire, and
-- mark_ms (Unix ms) is above every tick its holders may have used, so that
-- the next holder starts above it.  pg_dump keeps the rows.

CREATE TABLE idgen_lease (
	node_id integer PRIMARY KEY CHECK (node_id BETWEEN 0 AND 1023),
	node_bits integer NOT NULL CHECK (node_bits BETWEEN 0 AND 10),
	epoch_ms bigint NOT NULL,
	holder text NOT NULL,
	system_identifier bigint NOT NULL,
	token uuid NOT NULL,
	acquired_at timestamptz NOT NULL,
	renewed_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	released boolean NOT NULL DEFAULT false,
	mark_ms bigint NOT NULL,
	-- the renewal it was last extended after, when the registry answered
	-- nothing for a while (idgen_lease_resume())
	extended_after timestamptz
);

SELECT pg_catalog.pg_extension_config_dump('idgen_lease', '');

-- The registry's own: when it last answered a call, and the cluster and
-- timeline it answered it on, which tell it when it lost commits.  No row
-- until the first call, so that a restored dump brings its own.
CREATE TABLE idgen_lease_registry (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	answered_at timestamptz NOT NULL,
	system_identifier bigint NOT NULL,
	timeline integer NOT NULL,
	-- after lost commits: no node id changes hands before hold_until, and
	-- every next holder starts above mark_floor_ms
	hold_until timestamptz,
	mark_floor_ms bigint NOT NULL DEFAULT 0
);

SELECT pg_catalog.pg_extension_config_dump('idgen_lease_registry', '');

COMMENT ON TABLE idgen_lease_registry IS
'on a registry: when it last answered a node id lease call, on which cluster and timeline, and how it fenced itself after it lost commits';

-- A registry's dump restored by its database's owner, as idgen_system's
-- above, must bring the leases and the registry's own row: without them
-- the restored registry would hand node ids out from nothing, below their
-- holders' marks, and fence nothing.  Only INSERT: a row can only keep a
-- node id from changing hands for a while, or make its next holder start
-- higher.
GRANT INSERT ON idgen_lease, idgen_lease_registry TO pg_database_owner;

-- The registry may have lost commits: a renewal, a release or an acquire
-- it answered, and its holder counts on, is gone.  So every node id may be
-- held, for as long as the longest lease (or lease, the caller's): none
-- changes hands before then; and every holder's IDs may reach the clock
-- plus that lease plus clock_skew (a holder's clock ahead of the
-- registry's): every next holder starts above that.  A holder whose token
-- the registry lost is refused at its next renewal and stops.  Returns
-- hold_until.
CREATE FUNCTION idgen_lease_fence_history(t timestamptz, lease interval, clock_skew interval)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	longest interval;
	until timestamptz;
BEGIN
	SELECT greatest(max(l.expires_at - l.renewed_at), lease) INTO longest FROM @extschema@.idgen_lease l;
	until := t + longest;
	UPDATE @extschema@.idgen_lease_registry r
	SET hold_until = greatest(r.hold_until, until),
		mark_floor_ms = greatest(r.mark_floor_ms,
			(extract(epoch FROM until + clock_skew) * 1000)::bigint + 1000);
	RAISE LOG 'idgen: the node id lease registry lost commits: no node id is leased before %', until;
	RETURN until;
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_fence_history(timestamptz, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_fence_history(timestamptz, interval, interval) IS
'on a registry: fences the registry after it lost commits (no node id changes hands for a lease; next holders start above every ID a holder could have made); called by idgen_lease_resume() and idgen_lease_restored()';

-- Runs first in every lease call, under the table lock, at t; lease_s is
-- the caller's.  A registry on another cluster or timeline than its last
-- answer's (restored from a dump into a new cluster, a promoted standby, a
-- point-in-time recovery) may have lost commits: it fences itself
-- (idgen_lease_fence_history()).  A registry that answered no call for
-- longer than half a lease, and a second (down, its table locked, its
-- calls cancelled), gave no holder a chance to renew: a lease that ran out
-- meanwhile is extended once, by its length from t, so that its holder, if
-- alive, renews it rather than lose it to a server that was waiting.
-- Neither ever shortens a lease: a live holder's fence still passes first.
-- True when it fenced or extended.
CREATE FUNCTION idgen_lease_resume(t timestamptz, lease_s integer)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r @extschema@.idgen_lease_registry;
	sysid constant bigint := (pg_control_system()).system_identifier;
	tl constant integer := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
	lost boolean;
	extended integer;
BEGIN
	SELECT * INTO r FROM @extschema@.idgen_lease_registry x;
	lost := FOUND AND (r.system_identifier <> sysid OR r.timeline <> tl);
	INSERT INTO @extschema@.idgen_lease_registry AS x (answered_at, system_identifier, timeline)
	VALUES (t, sysid, tl)
	ON CONFLICT (one) DO UPDATE SET answered_at = greatest(x.answered_at, excluded.answered_at),
		system_identifier = excluded.system_identifier, timeline = excluded.timeline;
	IF lost THEN
		PERFORM @extschema@.idgen_lease_fence_history(t, make_interval(secs => lease_s), interval '1 minute');
		RETURN true;
	END IF;
	UPDATE @extschema@.idgen_lease l
	SET expires_at = t + (l.expires_at - l.renewed_at), extended_after = l.renewed_at
	WHERE NOT l.released
		AND l.expires_at > r.answered_at AND l.expires_at <= t
		AND t - r.answered_at > greatest((l.expires_at - l.renewed_at) / 2, interval '1 s')
		AND l.extended_after IS DISTINCT FROM l.renewed_at;
	GET DIAGNOSTICS extended = ROW_COUNT;
	RETURN extended > 0;
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_resume(timestamptz, integer) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_resume(timestamptz, integer) IS
'on a registry: fences the registry after it lost commits, and extends the node id leases that ran out while it answered nothing; called by the lease functions';

-- For what the registry cannot see itself: rows rolled back by hand, or
-- restored from a dump, within the same cluster and timeline.  Call it
-- right after; clock_skew is how far ahead of the registry's clock a
-- holder's may run.
CREATE FUNCTION idgen_lease_restored(clock_skew interval DEFAULT interval '1 minute')
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	t timestamptz;
BEGIN
	LOCK TABLE @extschema@.idgen_lease IN EXCLUSIVE MODE;
	t := clock_timestamp();
	PERFORM @extschema@.idgen_lease_resume(t, 0);
	RETURN @extschema@.idgen_lease_fence_history(t, interval '0', clock_skew);
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_restored(interval) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_restored(interval) IS
'on a registry: call it after restoring the lease rows from a backup within the same cluster; no node id changes hands for a lease, and next holders start above every ID a holder could have made since';

COMMENT ON TABLE idgen_lease IS
'on a registry: the node id leases of the servers that set idgen.node_registry to this database, with their holders'' secret tokens; read idgen_leases instead';

-- Hands out a node id no live lease holds: the one the token names, if
-- released or expired (a server without a token yet passes the nil UUID); else one never leased; else the one expired
-- longest.  Returns the new token and the mark of the node id's previous
-- holders (and of every lease under other node_bits, whose machine fields
-- overlap), which the new holder starts above.  epoch_ms is the holder's
-- idgen.epoch: a mark made under an earlier one is raised by the
-- difference, since the same time gives smaller IDs under a later epoch.
CREATE FUNCTION idgen_lease_acquire(node_bits integer, holder text, system_identifier bigint,
	token uuid, lease_s integer, epoch_ms bigint,
	OUT node_id integer, OUT new_token uuid, OUT previous_mark_ms bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	bits constant integer := idgen_lease_acquire.node_bits;
	old_token constant uuid := $4;
	epoch constant bigint := $6;
	who constant text := $2;
	sysid constant bigint := $3;
	t timestamptz;
	chosen integer;
	held text;
	resumed boolean;
	hold timestamptz;
	floor_ms bigint;
BEGIN
	IF bits NOT BETWEEN 0 AND 10 OR lease_s < 1 THEN
		RAISE EXCEPTION 'invalid node id lease request'
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'node_bits must be between 0 and 10 and lease_s at least 1.';
	END IF;
	-- The most idgen.node_lease_s allows: a holder that stops without
	-- releasing keeps its node id from every other server to the lease's end.
	IF lease_s > 3600 THEN
		RAISE EXCEPTION 'node id lease of % s is longer than a registry grants', lease_s
			USING ERRCODE = 'invalid_parameter_value',
				DETAIL = 'A registry leases a node id for at most 3600 s, the longest idgen.node_lease_s: a node id whose holder stopped without releasing it stays held until its lease ends.',
				HINT = 'Set idgen.node_lease_s to at most 3600 s.';
	END IF;
	-- One acquire, renewal or release at a time: the first acquire of a
	-- node id inserts its row, which no row lock can order.
	LOCK TABLE @extschema@.idgen_lease IN EXCLUSIVE MODE;
	t := clock_timestamp();
	resumed := @extschema@.idgen_lease_resume(t, lease_s);
	IF EXISTS (SELECT FROM @extschema@.idgen_lease l
			   WHERE l.node_bits <> bits AND NOT l.released AND l.expires_at > t) THEN
		RAISE EXCEPTION 'registry has node id leases under another idgen.node_bits'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				DETAIL = format('This server has idgen.node_bits = %s; live leases have %s.', bits,
					(SELECT string_agg(DISTINCT l.node_bits::text, ', ') FROM @extschema@.idgen_lease l
					 WHERE l.node_bits <> bits AND NOT l.released AND l.expires_at > t)),
				HINT = 'Every server that generates IDs needs the same idgen.node_bits.';
	END IF;
	IF EXISTS (SELECT FROM @extschema@.idgen_lease l
			   WHERE l.epoch_ms <> epoch AND NOT l.released AND l.expires_at > t) THEN
		RAISE EXCEPTION 'registry has node id leases under another idgen.epoch'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				DETAIL = format('This server has idgen.epoch = %s; live leases have %s.',
					to_timestamp(epoch / 1000.0) AT TIME ZONE 'UTC',
					(SELECT string_agg(DISTINCT (to_timestamp(l.epoch_ms / 1000.0) AT TIME ZONE 'UTC')::text, ', ')
					 FROM @extschema@.idgen_lease l
					 WHERE l.epoch_ms <> epoch AND NOT l.released AND l.expires_at > t)),
				HINT = 'Every server that generates IDs needs the same idgen.epoch.';
	END IF;
	SELECT l.node_id INTO chosen FROM @extschema@.idgen_lease l
	WHERE l.token = old_token AND l.node_bits = bits AND (l.released OR l.expires_at <= t);
	-- This caller's earlier acquire that it never renewed: it gave up on
	-- that call, so the node id has no server behind it.
	IF chosen IS NULL THEN
		SELECT l.node_id INTO chosen FROM @extschema@.idgen_lease l
		WHERE l.holder = who AND l.system_identifier = sysid AND l.node_bits = bits
			AND NOT l.released AND l.renewed_at = l.acquired_at
		ORDER BY l.node_id LIMIT 1;
	END IF;
	IF chosen IS NULL THEN
		SELECT n INTO chosen FROM generate_series(0, (1 << bits) - 1) n
		WHERE NOT EXISTS (SELECT FROM @extschema@.idgen_lease l WHERE l.node_id = n)
		ORDER BY n LIMIT 1;
	END IF;
	IF chosen IS NULL THEN
		SELECT l.node_id INTO chosen FROM @extschema@.idgen_lease l
		WHERE l.node_id < (1 << bits) AND (l.released OR l.expires_at <= t)
		ORDER BY l.expires_at, l.node_id LIMIT 1;
	END IF;
	-- The leases just extended are their holders' to renew: no error, so
	-- that the extension stays; the caller tries again.
	IF chosen IS NULL AND resumed THEN
		RETURN;
	END IF;
	SELECT r.hold_until, r.mark_floor_ms INTO hold, floor_ms FROM @extschema@.idgen_lease_registry r;
	IF hold > t THEN
		-- the fence was just set: an error would roll it back
		IF resumed THEN
			RETURN;
		END IF;
		RAISE EXCEPTION 'registry leases no node id before %', hold
			USING ERRCODE = 'object_not_in_prerequisite_state',
				DETAIL = 'The registry may have lost commits (it was restored, or failed over to a standby that missed some): a server may hold any node id until then.',
				HINT = 'Servers whose leases it still knows renew them meanwhile.';
	END IF;
	IF chosen IS NULL THEN
		SELECT string_agg(format('node id %s until %s', l.node_id, l.expires_at),
			'; ' ORDER BY l.node_id) INTO held
		FROM @extschema@.idgen_lease l WHERE l.node_id < (1 << bits);
		RAISE EXCEPTION 'all % node ids of idgen.node_bits = % are leased', 1 << bits, bits
			USING ERRCODE = 'configuration_limit_exceeded',
				DETAIL = format('Held: %s.', held),
				HINT = 'A node id is leased again once its lease expires: stop a server that holds one, or raise idgen.node_bits on every server.';
	END IF;
	SELECT greatest(coalesce(max(l.mark_ms + greatest(epoch - l.epoch_ms, 0)), 0), floor_ms)
	INTO previous_mark_ms
	FROM @extschema@.idgen_lease l
	WHERE l.node_id = chosen OR l.node_bits <> bits;
	node_id := chosen;
	new_token := gen_random_uuid();
	INSERT INTO @extschema@.idgen_lease AS l (node_id, node_bits, epoch_ms, holder, system_identifier,
		token, acquired_at, renewed_at, expires_at, released, mark_ms)
	VALUES (chosen, bits, epoch, holder, system_identifier, new_token, t, t,
		t + make_interval(secs => lease_s), false, previous_mark_ms)
	ON CONFLICT ON CONSTRAINT idgen_lease_pkey DO UPDATE
	SET node_bits = excluded.node_bits, epoch_ms = excluded.epoch_ms, holder = excluded.holder,
		system_identifier = excluded.system_identifier, token = excluded.token,
		acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at,
		expires_at = excluded.expires_at, released = false,
		mark_ms = greatest(l.mark_ms, excluded.mark_ms), extended_after = NULL;
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_acquire(integer, text, bigint, uuid, integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_acquire(integer, text, bigint, uuid, integer, bigint) IS
'on a registry: leases a node id to the server that calls it (idgen.node_registry); the role of the registry''s connection string needs EXECUTE on it';

-- Renews a lease the token still holds, keeping the greater mark; the
-- holder's ticks stay below the mark returned.  SQLSTATE 55000 when
-- another server holds the node id now.
CREATE FUNCTION idgen_lease_renew(node_id integer, token uuid, lease_s integer, mark_ms bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	t timestamptz;
	l @extschema@.idgen_lease;
	kept bigint;
BEGIN
	IF lease_s < 1 THEN
		RAISE EXCEPTION 'invalid node id lease renewal'
			USING ERRCODE = 'invalid_parameter_value',
				HINT = 'lease_s must be at least 1.';
	END IF;
	-- The most idgen.node_lease_s allows: a holder that stops without
	-- releasing keeps its node id from every other server to the lease's end.
	IF lease_s > 3600 THEN
		RAISE EXCEPTION 'node id lease of % s is longer than a registry grants', lease_s
			USING ERRCODE = 'invalid_parameter_value',
				DETAIL = 'A registry leases a node id for at most 3600 s, the longest idgen.node_lease_s: a node id whose holder stopped without releasing it stays held until its lease ends.',
				HINT = 'Set idgen.node_lease_s to at most 3600 s.';
	END IF;
	LOCK TABLE @extschema@.idgen_lease IN EXCLUSIVE MODE;
	t := clock_timestamp();
	PERFORM @extschema@.idgen_lease_resume(t, $3);
	SELECT * INTO l FROM @extschema@.idgen_lease x WHERE x.node_id = $1;
	IF NOT FOUND OR l.token IS DISTINCT FROM $2 THEN
		RAISE EXCEPTION 'node id % is no longer leased to this server', $1
			USING ERRCODE = 'object_not_in_prerequisite_state',
				DETAIL = CASE WHEN FOUND THEN format('It was leased to another server at %s.', l.acquired_at)
					ELSE 'The registry has no lease of it.' END;
	END IF;
	UPDATE @extschema@.idgen_lease x
	SET renewed_at = t, expires_at = t + make_interval(secs => $3), released = false,
		mark_ms = greatest(x.mark_ms, $4)
	WHERE x.node_id = $1
	RETURNING x.mark_ms INTO kept;
	RETURN kept;
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_renew(integer, uuid, integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_renew(integer, uuid, integer, bigint) IS
'on a registry: renews the node id lease that the token holds, and returns the mark its holder''s IDs stay below';

-- Releases a lease at its holder's shutdown, with the holder's highest
-- mark: the holder has stopped, so the node id may go at once, and its
-- next holder (often the same server restarted) starts just above it.
-- That mark replaces the ceiling the renewals reported, which the holder
-- may never have reached; it is never below the previous holders' mark,
-- which the holder's marks of this node id started above (lease_worker.c).
CREATE FUNCTION idgen_lease_release(node_id integer, token uuid, mark_ms bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
	LOCK TABLE @extschema@.idgen_lease IN EXCLUSIVE MODE;
	PERFORM @extschema@.idgen_lease_resume(clock_timestamp(), 0);
	UPDATE @extschema@.idgen_lease x
	SET released = true, expires_at = least(x.expires_at, clock_timestamp()), mark_ms = $3
	WHERE x.node_id = $1 AND x.token = $2;
	RETURN FOUND;
END
$$;

REVOKE ALL ON FUNCTION idgen_lease_release(integer, uuid, bigint) FROM PUBLIC;

COMMENT ON FUNCTION idgen_lease_release(integer, uuid, bigint) IS
'on a registry: releases the node id lease that the token holds, at its holder''s shutdown';

-- Everyone may look; who holds a node id (host, port, data directory,
-- system identifier) only members of pg_read_all_stats see, as with other
-- sessions in pg_stat_activity.
CREATE VIEW idgen_leases AS
SELECT l.node_id, l.node_bits,
	CASE WHEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') THEN l.holder END AS holder,
	CASE WHEN pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE') THEN l.system_identifier END AS system_identifier,
	NOT l.released AND l.expires_at > clock_timestamp() AS held,
	l.released, l.acquired_at, l.renewed_at, l.expires_at,
	greatest(extract(epoch FROM l.expires_at - clock_timestamp()), 0)::float8 AS seconds_left,
	to_timestamp(l.mark_ms / 1000.0) AS mark
FROM idgen_lease l;

GRANT SELECT ON idgen_leases TO PUBLIC;

COMMENT ON VIEW idgen_leases IS
'on a registry: the node id leases and their holders; a node id is held until it is released or expires';

CREATE FUNCTION idgen_node_lease(OUT source text, OUT node_id integer, OUT node_bits integer,
	OUT registry text, OUT state text, OUT valid_until timestamptz, OUT seconds_left float8,
	OUT acquired_at timestamptz, OUT renewed_at timestamptz, OUT previous_mark timestamptz,
	OUT last_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_node_lease'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_node_lease() IS
'where this server''s node id comes from (the setting idgen.node_id, or a lease of idgen.node_registry), and the lease: the row of the view idgen_node_lease';

CREATE VIEW idgen_node_lease AS SELECT * FROM idgen_node_lease();

GRANT SELECT ON idgen_node_lease TO PUBLIC;

COMMENT ON VIEW idgen_node_lease IS
'where this server''s node id comes from (the setting idgen.node_id, or a lease of idgen.node_registry), and the lease';
