/* idgen--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.5'" to load this file. \quit

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
-- What holds the horizon back
-- ---------------------------------------------------------------------------

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

-- idgen_node_info() and idgen_check_nodes() report a leased node id, and
-- read idgen's settings through one query, idgen_node_probe().
DROP FUNCTION idgen_node_info();
DROP FUNCTION idgen_check_nodes(text[]);

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
