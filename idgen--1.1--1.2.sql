/* idgen--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.2'" to load this file. \quit

-- Functions only idgen itself calls: the trigger of idgen_layout, and the
-- btree sort support.  Triggers and operator classes call them without
-- checking EXECUTE, so nobody needs it; the trigger refuses any other use.
REVOKE EXECUTE ON FUNCTION idgen_layout_check() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION objectid_sortsupport(internal) FROM PUBLIC;

-- Equal objectids are equal byte for byte, so btree indexes can deduplicate
-- them, as for uuid.  Indexes built before take it up with REINDEX.
ALTER OPERATOR FAMILY objectid_ops USING btree
	ADD FUNCTION 4 (objectid, objectid) pg_catalog.btequalimage(oid);

-- ---------------------------------------------------------------------------
-- Unset node ids, and Citus clusters (issue #15).
--
-- A server whose idgen.node_id is unset, or whose configured value was
-- rejected, keeps the default 0 and refuses to generate; pg_settings shows it
-- with source "default".  It is reported as having no node id (NULL), not as
-- node 0, so that it is neither taken for node 0 nor seen to clash with it.
-- ---------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION idgen_node_info(
	OUT node_id int, OUT node_bits int, OUT epoch date,
	OUT system_identifier bigint, OUT in_recovery bool, OUT started_at timestamptz)
RETURNS record
LANGUAGE sql VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT (SELECT s.setting::int FROM pg_settings s
		WHERE s.name = 'idgen.node_id' AND s.context = 'postmaster' AND s.source <> 'default'),
	   (SELECT s.setting::int FROM pg_settings s
		WHERE s.name = 'idgen.node_bits' AND s.context = 'postmaster'),
	   (SELECT s.setting::date FROM pg_settings s
		WHERE s.name = 'idgen.epoch' AND s.context = 'postmaster'),
	   c.system_identifier, pg_is_in_recovery(), pg_postmaster_start_time()
FROM pg_control_system() c
$$;

COMMENT ON FUNCTION idgen_node_info() IS
'this server''s idgen node id (NULL when unset or rejected) and layout, and what identifies the server';

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
	ext_schema name;
	s text;
	cmd text;
	failed text;
BEGIN
	SELECT ns.nspname INTO ext_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	IF TG_WHEN <> 'AFTER' OR TG_TABLE_NAME <> 'idgen_layout' OR TG_TABLE_SCHEMA <> ext_schema THEN
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

	s := quote_ident(ext_schema);
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
	ext_schema name;
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
	SELECT ns.nspname INTO STRICT ext_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	EXECUTE format('UPDATE %I.idgen_layout SET name = name', ext_schema);
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;

COMMENT ON FUNCTION idgen_sync_layouts() IS
'on a Citus coordinator: defines its idgen layouts on every worker that lacks them; returns how many it sent';

-- idgen_check_nodes() also checks a Citus cluster: without a list it asks
-- every node of pg_dist_node through Citus's connections (no dblink), and
-- there also compares the layouts of idgen_layout with the coordinator's.
-- Servers with no node id are flagged, and never counted as node 0.
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
	ext_schema name;
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
		SELECT ns.nspname INTO STRICT ext_schema
		FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
		WHERE e.extname = 'idgen';
		-- This server first: its layouts are the ones the workers need.
		names[1] := coalesce((SELECT format('%s:%s', d.nodename, d.nodeport) FROM pg_dist_node d
							  WHERE d.groupid = 0 AND d.noderole = 'primary' LIMIT 1),
							 'coordinator');
		EXECUTE format(probe, format(layouts_query, quote_ident(ext_schema))) INTO j;
		reports[1] := j;
		FOR r IN SELECT w.nodename, w.nodeport, w.success, w.result
				 FROM pg_catalog.run_command_on_workers(
					format(probe, format(layouts_query, quote_ident(ext_schema)))) w
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

COMMENT ON FUNCTION idgen_check_nodes(text[]) IS
'idgen node id and layout of each listed server (through dblink), or of every node of the Citus cluster when called without a list, with what could make two of them issue the same ID';
