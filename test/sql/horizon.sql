-- idgen_horizon(): every transaction that took or will take an ID below it
-- has ended; it follows the clock and never goes back.
SET TimeZone = 'UTC';

-- an idle server's horizon is the clock's millisecond, with every field
-- below time zero
SELECT d.ts BETWEEN clock_timestamp() - interval '2 seconds' AND clock_timestamp() AS follows_clock,
       d.worker_id = 0 AND d.sequence = 0 AS tick_start
FROM idgen_decode(idgen_horizon()) d;

-- it moves forward with nothing written, and never backwards
SELECT idgen_horizon() AS h1 \gset
SELECT pg_sleep(0.02);
SELECT idgen_horizon() > :h1 AS moved_on;
SELECT bool_and(h >= lag) AS never_back
FROM (SELECT h, lag(h, 1, 0::bigint) OVER (ORDER BY n) AS lag
      FROM (SELECT n, idgen_horizon() AS h FROM generate_series(1, 1000) n) s) t;

-- an open transaction that took an ID holds it at or below that ID ...
BEGIN;
SELECT idgen_next() AS id \gset
SELECT pg_sleep(0.02);
SELECT idgen_horizon() <= :id AS held_by_own_transaction;
-- ... also after a savepoint that took the ID was rolled back
SAVEPOINT s;
SELECT idgen_next() AS id2 \gset
ROLLBACK TO SAVEPOINT s;
SELECT idgen_horizon() <= :id AS held_after_rollback_to_savepoint;
COMMIT;
-- ... and passes it once the transaction ended and the clock passed the ID
-- (an earlier test may have left this worker id borrowing ahead of the clock)
SELECT pg_sleep(0.02 + greatest(0, extract(epoch FROM (idgen_decode(:id)).ts - clock_timestamp())));
SELECT idgen_horizon() > :id AS passed_after_commit;

-- a rolled back transaction lets it go too
BEGIN;
SELECT idgen_next_block(10) AS id \gset
SELECT idgen_horizon() <= :id AS held_by_block;
ROLLBACK;
SELECT pg_sleep(0.02 + greatest(0, extract(epoch FROM (idgen_decode(:id)).ts - clock_timestamp())));
SELECT idgen_horizon() > :id + 9 AS passed_after_rollback;

-- in other layouts: the smallest ID of the tick holding the same time
SELECT (idgen_decode(idgen_horizon('twitter'), 'twitter')).ts
       BETWEEN clock_timestamp() - interval '2 seconds' AND clock_timestamp() AS twitter_follows_clock;
SELECT idgen_horizon('idgen') % (1 << 22) = 0 AS default_layout_by_name;
SELECT idgen_horizon(NULL) IS NULL AS strict;
SELECT idgen_horizon('no_such_layout');

-- a REPEATABLE READ transaction reads with a snapshot older than the
-- horizon, so its own reads below it may miss rows: a warning says so
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 1 AS first_statement;
SELECT idgen_horizon() > 0 AS warned;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT idgen_horizon('twitter') > 0 AS warned;
COMMIT;

-- what holds it back: this session while its transaction holds an ID, a
-- prepared transaction by its gid, and nothing once they end
SELECT count(*) AS holders_before FROM idgen_horizon_holders;
BEGIN;
SELECT idgen_next() > 0 AS took_id;
SELECT pid = pg_backend_pid() AS this_session, prepared_gid IS NULL AS not_prepared,
       since BETWEEN clock_timestamp() - interval '1 minute' AND clock_timestamp() + interval '2 seconds' AS since_now,
       held_for >= interval '0' AS held_for_ok
FROM idgen_horizon_holders;
COMMIT;
SELECT count(*) AS holders_after_commit FROM idgen_horizon_holders;
BEGIN;
SELECT idgen_next() > 0 AS took_id;
PREPARE TRANSACTION 'idgen_holder';
SELECT pid IS NULL AS no_pid, prepared_gid FROM idgen_horizon_holders;
COMMIT PREPARED 'idgen_holder';
SELECT count(*) AS holders_after_commit_prepared FROM idgen_horizon_holders;

-- PUBLIC may call it: it reveals only time; the view shows other roles'
-- sessions, but not since when, as pg_stat_activity hides their xact_start
CREATE ROLE idgen_poller LOGIN;
SET ROLE idgen_poller;
SELECT idgen_horizon() > 0 AS public_may_call;
SELECT count(*) >= 0 AS public_may_watch FROM idgen_horizon_holders;
RESET ROLE;
BEGIN;
SELECT idgen_next() > 0 AS took_id;
SET LOCAL ROLE idgen_poller;
SELECT pid = pg_backend_pid() AS this_session, since IS NULL AS since_hidden,
       held_for IS NULL AS held_for_hidden
FROM idgen_horizon_holders;
RESET ROLE;
GRANT pg_read_all_stats TO idgen_poller;
SET LOCAL ROLE idgen_poller;
SELECT since IS NOT NULL AS since_shown FROM idgen_horizon_holders;
COMMIT;
DROP ROLE idgen_poller;
