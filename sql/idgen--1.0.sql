/* idgen--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- Generation changes backend state: volatile, and run by the leader only of a
-- parallel query (parallel workers would each claim a worker id).
CREATE FUNCTION idgen_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

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

-- Other systems' IDs, and idgen's own under the name 'idgen': stable for the
-- same reason as above.
CREATE FUNCTION idgen_decode(id bigint, layout text,
	OUT ts timestamptz, OUT node_id int, OUT worker_id int, OUT sequence int)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode_layout'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'time, machine fields and sequence carried by an ID of the named layout (idgen, twitter, discord, sonyflake, instagram)';

CREATE FUNCTION idgen_from_timestamp(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_timestamp_layout'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_timestamp(timestamptz, text) IS
'smallest ID of the named layout whose time is the tick of the timestamp';

-- As idgen_next(), n times in one call.
CREATE FUNCTION idgen_next_batch(n int)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_batch'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_batch(int) IS
'the next n IDs of this server''s node, as n calls of idgen_next() would make them';

CREATE FUNCTION idgen_workers(
	OUT worker_id int, OUT is_shared bool, OUT pid int, OUT claimed_at timestamptz,
	OUT last_ts timestamptz, OUT lead_ms bigint, OUT ids_issued bigint,
	OUT clock_regressions bigint, OUT clock_waits bigint, OUT clock_behind bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_workers'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

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

-- multinode: begin

-- What tells this server's IDs apart from other servers', to compare
-- servers: node_id is NULL when idgen is not preloaded (the server cannot
-- generate); node_bits and epoch must be equal on every server; a primary
-- and its physical standbys share system_identifier, and started_at tells
-- two running instances of one cluster apart.
CREATE FUNCTION idgen_node_info(
	OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT started_at timestamptz)
RETURNS record
LANGUAGE sql VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT (SELECT s.setting::int FROM pg_settings s
		WHERE s.name = 'idgen.node_id' AND s.context = 'postmaster'),
	   (SELECT s.setting::int FROM pg_settings s
		WHERE s.name = 'idgen.node_bits' AND s.context = 'postmaster'),
	   (SELECT s.setting::date FROM pg_settings s
		WHERE s.name = 'idgen.epoch' AND s.context = 'postmaster'),
	   c.system_identifier, pg_is_in_recovery(), pg_postmaster_start_time()
FROM pg_control_system() c
$$;

COMMENT ON FUNCTION idgen_node_info() IS
'this server''s idgen node id and layout, and what identifies the server';

-- Connects to every listed server through dblink and flags what can make
-- two of them issue the same ID: a node id used twice, a different layout,
-- a server that cannot generate or cannot be reached.  dblink is not a
-- dependency of idgen: only this function needs it, so it looks for it when
-- called.
CREATE FUNCTION idgen_check_nodes(conninfos text[],
	OUT conninfo text, OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT problem text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	-- The same values as idgen_node_info(), from servers that need not have
	-- the extension created; the start time goes as a number, so that no
	-- DateStyle can change it on the way.
	remote_query constant text := $q$
		SELECT (SELECT s.setting FROM pg_catalog.pg_settings s
				WHERE s.name = 'idgen.node_id' AND s.context = 'postmaster'),
			   (SELECT s.setting FROM pg_catalog.pg_settings s
				WHERE s.name = 'idgen.node_bits' AND s.context = 'postmaster'),
			   (SELECT s.setting FROM pg_catalog.pg_settings s
				WHERE s.name = 'idgen.epoch' AND s.context = 'postmaster'),
			   c.system_identifier, pg_catalog.pg_is_in_recovery(),
			   EXTRACT(epoch FROM pg_catalog.pg_postmaster_start_time())
		FROM pg_catalog.pg_control_system() c$q$;
	dblink_schema name;
	n int := coalesce(array_length(conninfos, 1), 0);
	nodes int[];
	bits int[];
	epochs date[];
	sysids bigint[];
	standby bool[];
	started numeric[];
	problems text[];
	usable bool[];			-- reached, preloaded, not listed before
	ref int;				-- the first usable server: the reference layout
	r record;
	msg text;
	detail text;
	clash text;
	reason text;
BEGIN
	SELECT ns.nspname INTO dblink_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'dblink';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'idgen_check_nodes requires the extension "dblink"'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The function connects to each listed server through dblink.',
				  HINT = 'Run CREATE EXTENSION dblink in this database, then call the function again.';
	END IF;

	FOR i IN 1 .. n LOOP
		usable[i] := false;
		BEGIN
			EXECUTE format('SELECT * FROM %I.dblink($1, $2) AS t(node_id int, node_bits int, '
						   'epoch date, system_identifier bigint, in_recovery bool, started numeric)',
						   dblink_schema)
				INTO STRICT r USING conninfos[i], remote_query;
			nodes[i] := r.node_id;
			bits[i] := r.node_bits;
			epochs[i] := r.epoch;
			sysids[i] := r.system_identifier;
			standby[i] := r.in_recovery;
			started[i] := r.started;
			IF r.node_id IS NULL THEN
				problems[i] := 'idgen is not loaded via shared_preload_libraries, so this server cannot generate IDs';
			ELSE
				usable[i] := true;
			END IF;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
			problems[i] := 'could not check this server: ' || msg ||
				coalesce(': ' || nullif(split_part(detail, E'\n', 1), ''), '');
		END;
	END LOOP;

	-- A server listed more than once is checked only the first time.
	FOR i IN 1 .. n LOOP
		CONTINUE WHEN sysids[i] IS NULL;
		FOR j IN 1 .. i - 1 LOOP
			IF sysids[j] = sysids[i] AND started[j] = started[i] THEN
				problems[i] := format('same server as %s', conninfos[j]);
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
				format('idgen.node_bits is %s, but %s on %s', bits[i], bits[ref], conninfos[ref]));
		END IF;
		IF epochs[i] <> epochs[ref] THEN
			problems[i] := concat_ws('; ', problems[i],
				format('idgen.epoch is %s, but %s on %s',
					   to_char(epochs[i], 'YYYY-MM-DD'), to_char(epochs[ref], 'YYYY-MM-DD'),
					   conninfos[ref]));
		END IF;
		-- A standby may share the node id of its own cluster's primary: it
		-- cannot generate, and when promoted it resumes above the mark its
		-- primary logged in WAL.  Anything else sharing a node id clashes.
		clash := NULL;
		FOR j IN 1 .. n LOOP
			CONTINUE WHEN j = i OR NOT usable[j] OR nodes[j] <> nodes[i];
			CONTINUE WHEN sysids[j] = sysids[i] AND (standby[i] OR standby[j]);
			IF sysids[j] = sysids[i] THEN
				reason := ' (a copy of the same cluster: a clone that kept its node id, or a second primary after failover)';
			ELSIF standby[i] OR standby[j] THEN
				reason := ' (the clash begins when the standby is promoted)';
			ELSE
				reason := '';
			END IF;
			clash := concat_ws(', ', clash, conninfos[j] || reason);
		END LOOP;
		IF clash IS NOT NULL THEN
			problems[i] := concat_ws('; ', problems[i],
				format('node id %s is also used by %s', nodes[i], clash));
		END IF;
	END LOOP;

	FOR i IN 1 .. n LOOP
		conninfo := conninfos[i];
		node_id := nodes[i];
		node_bits := bits[i];
		epoch := epochs[i];
		system_identifier := sysids[i];
		in_recovery := standby[i];
		problem := problems[i];
		RETURN NEXT;
	END LOOP;
END
$$;

COMMENT ON FUNCTION idgen_check_nodes(text[]) IS
'idgen node id and layout of each listed server (through dblink), with what could make two of them issue the same ID';

-- Switches an integer key column from a sequence (serial, IDENTITY or a
-- nextval() default) to idgen_next(), in one transaction: the column and,
-- with widen, every column that references it by foreign key become bigint;
-- the sequence owned by the column is dropped.  Existing values must be
-- below the IDs idgen makes from now on, so no new ID can equal one.  Only
-- the resulting table definitions matter to pg_dump.
CREATE FUNCTION idgen_adopt(tbl regclass, col name, widen boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	idgen_schema name;
	generator text;
	att pg_attribute;
	relkind "char";
	def_oid oid;
	def text;
	seq regclass;
	seq_name text;
	seq_owned bool := false;
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
	SELECT ns.nspname INTO STRICT idgen_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	generator := format('%I.idgen_next()', idgen_schema);

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
		IF seq IS NULL OR def <> format('nextval(%L::regclass)', seq::text) THEN
			RAISE EXCEPTION 'column "%" of table "%" has a default that is not a sequence', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The default is %s.', def),
					  HINT = 'idgen_adopt replaces only nextval(''sequence'') defaults. Drop the default first if idgen_next() should replace it.';
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
	EXECUTE format('SELECT %I.idgen_next()', idgen_schema);

	IF NOT already THEN
		-- Every ID made from now on is at least the smallest ID of the
		-- current millisecond, less the time idgen lets the clock step back.
		SELECT coalesce(max(s.setting::int), 10000) INTO margin_ms
		FROM pg_settings s WHERE s.name = 'idgen.max_clock_regression_ms';
		EXECUTE format('SELECT %I.idgen_from_timestamp($1)', idgen_schema)
			INTO floor_id USING clock_timestamp() - make_interval(secs => margin_ms / 1000.0);
		EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO largest;
		IF largest >= floor_id THEN
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
'switch an integer key column from its sequence to DEFAULT idgen_next(), widening it and its referencing columns to bigint on request';

-- multinode: end
