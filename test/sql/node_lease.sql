-- Where this server's node id comes from: the setting (test/idgen.conf).
SELECT source, node_id, node_bits, registry, state, valid_until FROM idgen_node_lease;

\set nil '00000000-0000-0000-0000-000000000000'
-- idgen.epoch of the servers that lease, in Unix ms (2024-01-01)
\set epoch 1704067200000
-- Any database with idgen is a registry.  Two servers lease the two node
-- ids of idgen.node_bits = 1, the first never leased first.
SELECT node_id, previous_mark_ms, new_token AS one_token
FROM idgen_lease_acquire(1, 'one', 1, :'nil', 30, :epoch) \gset
SELECT :node_id, :previous_mark_ms;
SELECT node_id, new_token AS two_token FROM idgen_lease_acquire(1, 'two', 2, :'nil', 30, :epoch) \gset
SELECT :node_id;

-- A third refuses while both are held.  The detail lists the node ids, not
-- who holds them: every role of the refused server reads it (the lease's
-- last_error, the refusal of generation).
\set VERBOSITY terse
SELECT * FROM idgen_lease_acquire(1, 'three', 3, :'nil', 30, :epoch);
\set VERBOSITY default
DO $$
DECLARE
	detail text;
BEGIN
	PERFORM idgen_lease_acquire(1, 'three', 3, '00000000-0000-0000-0000-000000000000', 30, 1704067200000);
EXCEPTION WHEN configuration_limit_exceeded THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RAISE NOTICE 'detail: %, names a holder: %',
		regexp_replace(detail, ' until [^;]*', '', 'g'), detail ~ '(one|two)';
END $$;
SELECT substring(holder for 5) AS holder FROM idgen_leases WHERE held ORDER BY node_id;
-- So does a copy of the first (pg_basebackup brings the lease's token
-- along) that presents its live token: it is another holder, and the first
-- still renews its own (below).
\set VERBOSITY terse
SELECT * FROM idgen_lease_acquire(1, 'copy of one', 1, :'one_token', 30, :epoch);
\set VERBOSITY default

-- Renewing keeps the greater mark; a token that no longer holds the id is refused.
SELECT idgen_lease_renew(0, :'one_token', 30, 1000);
SELECT idgen_lease_renew(0, :'one_token', 30, 900);
\set VERBOSITY terse
SELECT idgen_lease_renew(0, gen_random_uuid(), 30, 2000);
\set VERBOSITY default
DO $$
DECLARE
	detail text;
BEGIN
	PERFORM idgen_lease_renew(0, gen_random_uuid(), 30, 2000);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RAISE NOTICE 'names a holder: %', detail ~ '(one|two)';
END $$;

-- A release hands the id over at once; its next holder starts above the
-- mark the release reported.
SELECT idgen_lease_release(0, :'one_token', 500);
SELECT node_id, previous_mark_ms, new_token AS three_token FROM idgen_lease_acquire(1, 'three', 3, :'nil', 30, :epoch) \gset
SELECT :node_id, :previous_mark_ms;
-- The first holder's token is stale now: renewing is refused.
\set VERBOSITY terse
SELECT idgen_lease_renew(0, :'one_token', 30, 2000);
\set VERBOSITY default
-- So is releasing: a holder that lost its id and stops unaware releases
-- nothing of the new holder's lease, nor lowers its mark.
SELECT idgen_lease_release(0, :'one_token', 100) AS stale_released;
SELECT released, mark_ms FROM idgen_lease WHERE node_id = 0;

-- Both released: a holder presenting its token gets its own id back, even
-- where another id has been free longer.
SELECT idgen_lease_release(0, :'three_token', 600);
SELECT idgen_lease_release(1, :'two_token', 700);
SELECT node_id, previous_mark_ms FROM idgen_lease_acquire(1, 'two again', 2, :'two_token', 30, :epoch);
\set VERBOSITY terse
SELECT node_id, previous_mark_ms FROM idgen_lease_acquire(1, 'someone', 4, :'nil', 30, :epoch);
\set VERBOSITY default

-- Every server must have the same idgen.node_bits.
\set VERBOSITY terse
SELECT * FROM idgen_lease_acquire(2, 'wider', 5, :'nil', 30, :epoch);
SELECT * FROM idgen_lease_acquire(11, 'bad', 5, :'nil', 30, :epoch);
\set VERBOSITY default

SELECT node_id, node_bits, holder, system_identifier, held, released, seconds_left > 25 AS left
FROM idgen_leases ORDER BY node_id;

-- And the same idgen.epoch while leases are live.  A node id whose holders
-- had an earlier epoch is handed out above their mark raised by the
-- difference: the same time gives smaller IDs under a later epoch.
\set VERBOSITY terse
SELECT * FROM idgen_lease_acquire(1, 'a day later', 7, :'nil', 30, :epoch + 86400000);
\set VERBOSITY default
UPDATE idgen_lease SET expires_at = clock_timestamp();
SELECT node_id, previous_mark_ms - 86400000 AS previous_mark_less_a_day
FROM idgen_lease_acquire(1, 'a day later', 7, :'nil', 30, :epoch + 86400000);
\set VERBOSITY terse
SELECT * FROM idgen_lease_acquire(1, 'back', 8, :'nil', 30, :epoch);
\set VERBOSITY default
UPDATE idgen_lease SET released = true;
SELECT node_id, previous_mark_ms FROM idgen_lease_acquire(1, 'back', 8, :'nil', 30, :epoch);

-- A role without pg_read_all_stats sees the leases, not who holds them.
CREATE ROLE idgen_lease_onlooker;
SET ROLE idgen_lease_onlooker;
SELECT node_id, holder, system_identifier, held FROM idgen_leases ORDER BY node_id;
RESET ROLE;
DROP ROLE idgen_lease_onlooker;

-- Only roles granted them may lease; anyone may look.
SELECT has_function_privilege('public', 'idgen_lease_acquire(integer, text, bigint, uuid, integer, bigint)', 'EXECUTE') AS acquire,
	has_function_privilege('public', 'idgen_lease_renew(integer, uuid, integer, bigint)', 'EXECUTE') AS renew,
	has_function_privilege('public', 'idgen_lease_release(integer, uuid, bigint)', 'EXECUTE') AS release,
	has_table_privilege('public', 'idgen_lease', 'SELECT') AS token_table,
	has_table_privilege('public', 'idgen_leases', 'SELECT') AS leases_view,
	has_table_privilege('public', 'idgen_node_lease', 'SELECT') AS node_view;

-- The fleet moved to idgen.node_bits = 2, every lease released: a node id
-- new under the new bits starts above every mark reported under the old,
-- whose node fields overlap its own.
UPDATE idgen_lease SET released = true;
SELECT node_id,
	previous_mark_ms >= (SELECT max(mark_ms) FROM idgen_lease WHERE node_bits = 1) AS above_old_marks,
	(SELECT max(mark_ms) FROM idgen_lease WHERE node_bits = 1) > 0 AS old_marks
FROM idgen_lease_acquire(2, 'wider fleet', 16, :'nil', 30, :epoch);

-- A caller that gave up on its acquire (the call timed out) and acquires
-- again gets the node id that acquire took: no server renews it.  Once
-- renewed, the lease is not taken back.
DELETE FROM idgen_lease;
SELECT node_id FROM idgen_lease_acquire(1, 'gave up', 10, :'nil', 30, :epoch);
SELECT node_id, new_token AS retry_token FROM idgen_lease_acquire(1, 'gave up', 10, :'nil', 30, :epoch) \gset
SELECT :node_id, (SELECT count(*) FROM idgen_leases WHERE held) AS held;
SELECT idgen_lease_renew(:node_id, :'retry_token', 30, 3000);
SELECT node_id, new_token AS other_token FROM idgen_lease_acquire(1, 'other', 11, :'nil', 30, :epoch) \gset
SELECT :node_id;

-- A registry that answered no call for longer than half a lease (down,
-- its table locked): the leases that ran out meanwhile are extended by
-- their length, once per renewal, so that their holders renew them before
-- a waiting server takes them.  The waiting server's acquire says nothing
-- was free, without an error that would undo the extension.
UPDATE idgen_lease SET renewed_at = clock_timestamp() - interval '40 s',
	expires_at = clock_timestamp() - interval '10 s';
UPDATE idgen_lease_registry SET answered_at = clock_timestamp() - interval '40 s';
SELECT node_id, new_token IS NULL AS no_token FROM idgen_lease_acquire(1, 'waiting', 12, :'nil', 30, :epoch);
SELECT node_id, held, seconds_left > 25 AS extended FROM idgen_leases ORDER BY node_id;
SELECT idgen_lease_renew(1, :'other_token', 30, 4000);
UPDATE idgen_lease SET expires_at = clock_timestamp() - interval '1 s' WHERE node_id = 0;
UPDATE idgen_lease_registry SET answered_at = clock_timestamp() - interval '40 s';
SELECT node_id FROM idgen_lease_acquire(1, 'waiting', 12, :'nil', 30, :epoch);

-- A registry on another cluster or timeline than the one its rows were
-- written on (restored from a dump, a promoted standby) may have lost
-- commits: it hands out no node id for the longest lease, while holders it
-- knows renew, and the next holders start above the clock plus that lease
-- plus a minute.  The call that finds it out answers no node id (an
-- error would undo the fence).
DELETE FROM idgen_lease;
SELECT node_id, new_token AS kept_token FROM idgen_lease_acquire(1, 'kept', 13, :'nil', 30, :epoch) \gset
UPDATE idgen_lease_registry SET system_identifier = system_identifier + 1;
SELECT node_id IS NULL AS none FROM idgen_lease_acquire(1, 'new', 14, :'nil', 30, :epoch);
SELECT hold_until > clock_timestamp() + interval '25 s' AS held_for_a_lease,
	mark_floor_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 85000 AS floor_a_lease_and_a_minute_ahead
FROM idgen_lease_registry;
-- (SQLSTATE 55000: the message names the time)
\set VERBOSITY sqlstate
SELECT * FROM idgen_lease_acquire(1, 'new', 14, :'nil', 30, :epoch);
\set VERBOSITY default
SELECT idgen_lease_renew(:node_id, :'kept_token', 30, 5000) AS renewed;
UPDATE idgen_lease_registry SET hold_until = clock_timestamp();
SELECT node_id, previous_mark_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 85000 AS starts_above
FROM idgen_lease_acquire(1, 'new', 14, :'nil', 30, :epoch);

-- What it cannot see (rows restored within the same cluster) is told:
-- the same fence, from now.
SELECT idgen_lease_restored(interval '10 s') > clock_timestamp() + interval '25 s' AS restored;
\set VERBOSITY sqlstate
SELECT * FROM idgen_lease_acquire(1, 'later', 15, :'nil', 30, :epoch);
\set VERBOSITY default
SELECT has_function_privilege('public', 'idgen_lease_restored(interval)', 'EXECUTE') AS public_restores;

-- A lease lasts at most 3600 s, the longest idgen.node_lease_s: a role
-- that may lease cannot hold a node id for decades.
\set SHOW_CONTEXT never
SELECT * FROM idgen_lease_acquire(1, 'forever', 9, :'nil', 2147483647, :epoch);
SELECT idgen_lease_renew(0, gen_random_uuid(), 3601, 2000);
\set SHOW_CONTEXT errors
SELECT count(*) AS long_leases FROM idgen_lease WHERE expires_at > clock_timestamp() + interval '1 hour';

DELETE FROM idgen_lease;
