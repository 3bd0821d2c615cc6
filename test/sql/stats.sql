-- idgen_stats: its columns, counts published at transaction end, reset and
-- privileges.  pg_regress runs one test at a time, so after a reset only
-- this session generates.
SET TimeZone = 'UTC';

SELECT attname, atttypid::regtype
FROM pg_attribute WHERE attrelid = 'idgen_stats'::regclass AND attnum > 0
ORDER BY attnum;

SELECT idgen_stats_reset();
SELECT now() AS t_reset \gset
SELECT count(*) AS nonzero FROM idgen_stats WHERE ids <> 0 OR clock_waits <> 0;

-- the default layout through this backend's worker id, twitter through its
-- own worker id in the layout, instagram (no worker field) through the
-- layout's shared state
SELECT count(idgen_next()) FROM generate_series(1, 1000);
SELECT count(idgen_next('twitter')) FROM generate_series(1, 300);
SELECT count(idgen_next('instagram')) FROM generate_series(1, 70);
SELECT count(*) FROM idgen_next_batch(20, 'instagram');

SELECT layout, ids, shared_ids, clock_regressions, confirm_waits,
       clock_waits >= 0 AND clock_wait_ms >= 0 AS waits_ok,
       max_lead_ms BETWEEN 0 AND (SELECT setting::bigint FROM pg_settings WHERE name = 'idgen.max_lead_ms') AS lead_ok,
       mark > now() - interval '1 minute' AND mark_lead_ms > -60000 AS mark_ok,
       time_left > interval '10 years' AS time_left_ok,
       stats_reset >= :'t_reset'::timestamptz - interval '1 s' AS reset_ok
FROM idgen_stats WHERE ids <> 0 ORDER BY layout;

-- a layout of two IDs per millisecond: 3000 IDs take 1.5 s of ticks, so
-- generating them borrows the most idgen.max_lead_ms allows (1 s) and then
-- waits for the clock
SELECT idgen_define_layout('stats_tiny', '2020-01-01+00', '{time,node,sequence}', '{41,4,1}');
SELECT count(DISTINCT id) FROM (SELECT idgen_next('stats_tiny') AS id FROM generate_series(1, 3000)) s;
SELECT ids, shared_ids, clock_waits > 0 AS waited, clock_wait_ms > 100 AS wait_time_counted,
       max_lead_ms BETWEEN 900 AND 1000 AS lead_borrowed, mark_lead_ms > 0 AS mark_ahead
FROM idgen_stats WHERE layout = 'stats_tiny';
SELECT idgen_drop_layout('stats_tiny');

-- counts of an open transaction are published when it ends
BEGIN;
SELECT count(idgen_next()) FROM generate_series(1, 5);
SELECT ids FROM idgen_stats WHERE layout = 'idgen';
COMMIT;
SELECT ids FROM idgen_stats WHERE layout = 'idgen';

-- and so are those of one that failed
BEGIN;
SELECT count(idgen_next()) FROM generate_series(1, 7);
SELECT 1 / 0;
ROLLBACK;
SELECT ids FROM idgen_stats WHERE layout = 'idgen';

-- time_left counts down to the end of the layout's time field: 41 bits of
-- milliseconds from the epoch (idgen.epoch) for the default layout
SELECT abs(extract(epoch FROM time_left) -
           extract(epoch FROM current_setting('idgen.epoch')::timestamptz +
                   interval '1 ms' * ((2::numeric ^ 41) - 1) - clock_timestamp())) < 5 AS time_left_ok
FROM idgen_stats WHERE layout = 'idgen';

-- in days and whole seconds, as a person reads it (not 585395:06:55.539)
SELECT extract(day FROM time_left) > 365 AND extract(hour FROM time_left) < 24
       AND extract(second FROM time_left) = trunc(extract(second FROM time_left)) AS time_left_readable
FROM idgen_stats WHERE layout = 'idgen';

SELECT idgen_stats_reset();
SELECT layout, ids, shared_ids, clock_waits, clock_regressions
FROM idgen_stats WHERE layout IN ('idgen', 'twitter', 'instagram') ORDER BY layout;

-- the default layout called by name is the same definition, counted with
-- the default's calls: every ID of every generating function, once
SELECT idgen_stats_reset();
SELECT count(idgen_next()) FROM generate_series(1, 1000);
SELECT idgen_next('idgen') > 0 AS named;
SELECT count(idgen_next()) FROM generate_series(1, 100);
SELECT count(*) FROM idgen_next_batch(50);
SELECT count(*) FROM idgen_next_batch(20, 'idgen');
SELECT idgen_next_block(10) > 0 AS block, idgen_next_block(5, 'idgen') > 0 AS named_block;
SELECT ids FROM idgen_stats WHERE layout = 'idgen';

-- PUBLIC reads the counts but cannot reset them
CREATE ROLE idgen_stats_reader;
SET ROLE idgen_stats_reader;
SELECT count(*) > 0 AS readable FROM idgen_stats;
SELECT idgen_stats_reset();
-- and so are the tables' capacities
SELECT count(*) AS capacity_rows FROM idgen_capacity;
RESET ROLE;
DROP ROLE idgen_stats_reader;

-- idgen_capacity: a row per shared table of fixed size, with what sizes it
SELECT attname, atttypid::regtype
FROM pg_attribute WHERE attrelid = 'idgen_capacity'::regclass AND attnum > 0
ORDER BY attnum;
SELECT name, setting,
       capacity = CASE name
           WHEN 'marks' THEN current_setting('idgen.max_marks')::bigint
           WHEN 'worker_ids' THEN 2 ^ (10 - current_setting('idgen.node_bits')::int) - 1
           WHEN 'prepared_xacts' THEN current_setting('max_prepared_transactions')::bigint + 8
           ELSE 1024 END AS capacity_ok,
       in_use BETWEEN 0 AND capacity AS in_use_ok,
       overflows >= 0 AND (overflows = 0) = (last_overflow IS NULL) AS overflows_ok
FROM idgen_capacity ORDER BY name;

-- the clock 3 s back: IDs ride it out on logical time, and that is one
-- regression, counted once however many IDs are made while behind
SELECT idgen_stats_reset();
SELECT idgen_next() > 0 AS before_the_step;
SET idgen.clock_offset_ms = -3000;
SELECT count(idgen_next()) FROM generate_series(1, 1000);
SELECT clock_regressions, clock_behind FROM idgen_workers WHERE pid = pg_backend_pid();
SELECT clock_regressions FROM idgen_stats WHERE layout = 'idgen';
RESET idgen.clock_offset_ms;
