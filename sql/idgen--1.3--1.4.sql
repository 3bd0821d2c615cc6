/* idgen--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.4'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Not relocatable (idgen.control): the functions that run SQL name the
-- extension's objects as @extschema@.name, the schema this installation is
-- in, instead of looking it up on every call and building the SQL as text.
-- ALTER EXTENSION idgen SET SCHEMA is no longer possible.
-- ---------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION idgen_span(width interval, layout text DEFAULT 'idgen')
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

CREATE OR REPLACE FUNCTION idgen_layout_propagate()
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

CREATE OR REPLACE FUNCTION idgen_sync_layouts()
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

CREATE OR REPLACE FUNCTION idgen_check_nodes(conninfos text[] DEFAULT NULL,
	OUT conninfo text, OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT problem text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	-- What a server says about itself, as one JSON text, from servers that
	-- need not have the extension created (%s: its layouts, or NULL); the
	-- start time goes as a number, so that no DateStyle can change it.
	probe constant text := $q$
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
			'system_identifier', c.system_identifier,
			'in_recovery', pg_catalog.pg_is_in_recovery(),
			'started', EXTRACT(epoch FROM pg_catalog.pg_postmaster_start_time())::text,
			'layouts', %s)::text
		FROM pg_catalog.pg_control_system() c$q$;
	-- Layouts by name, with times as numbers so that no TimeZone changes them.
	layouts_query constant text := $q$
		(SELECT COALESCE(pg_catalog.jsonb_object_agg(l.name, pg_catalog.jsonb_build_object(
				'epoch', EXTRACT(epoch FROM l.epoch), 'fields', l.fields, 'widths', l.widths,
				'time_unit', EXTRACT(epoch FROM l.time_unit), 'radix', l.radix)), '{}')
		 FROM %s.idgen_layout l)$q$;
	citus bool := conninfos IS NULL;
	dblink_schema name;
	names text[];
	reports jsonb[];
	n int;
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
		EXECUTE format(probe, format(layouts_query, '@extschema@')) INTO j;
		reports[1] := j;
		FOR r IN SELECT w.nodename, w.nodeport, w.success, w.result
				 FROM pg_catalog.run_command_on_workers(
					format(probe, format(layouts_query, '@extschema@'))) w
				 ORDER BY w.nodename, w.nodeport LOOP
			n := array_length(names, 1) + 1;
			names[n] := format('%s:%s', r.nodename, r.nodeport);
			IF r.success THEN
				reports[n] := r.result::jsonb;
			ELSE
				problems[n] := 'could not check this server: ' || r.result;
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
					INTO STRICT j USING conninfos[i], format(probe, 'NULL');
				reports[i] := j;
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
		IF NOT (j->>'preloaded')::bool THEN
			problems[i] := 'idgen is not loaded via shared_preload_libraries, so this server cannot generate IDs';
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
		RETURN NEXT;
	END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION idgen_adopt(tbl regclass, col name, widen boolean DEFAULT false)
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

-- ---------------------------------------------------------------------------
-- A comment on every function users call.
-- ---------------------------------------------------------------------------

COMMENT ON FUNCTION idgen_workers() IS
'worker ids held by backends, and the shared worker id used when none is free: the rows of the view idgen_workers';
COMMENT ON FUNCTION idgen_layout_check() IS
'trigger of idgen_layout: checks each layout written and tells backends to forget cached ones';
COMMENT ON FUNCTION idgen_layout_propagate() IS
'trigger of idgen_layout: on a Citus coordinator, repeats each change of layouts on every worker';
COMMENT ON FUNCTION idgen_stats() IS
'IDs made, clock and standby waits, lead borrowed and the high-water mark, per layout definition: the rows of the view idgen_stats';

-- ---------------------------------------------------------------------------
-- The view idgen_layouts lists every layout; the comment of
-- idgen_decode(bigint, text) points to it instead of naming them.
-- ---------------------------------------------------------------------------

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

COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'time, machine fields and sequence carried by an ID of the named layout; the view idgen_layouts lists the layouts';
