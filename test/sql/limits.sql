-- What one session or role can make idgen hold: names of layouts that do
-- not exist are not remembered, and the server's shared per-layout states
-- are recycled rather than running out.

-- 20000 lookups of names that do not exist leave the backend's layout cache
-- as small as it was
SELECT idgen_define_layout('limits-known', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
SELECT (idgen_decode(1, 'limits-known')).ts IS NOT NULL AS cached;
CREATE FUNCTION pg_temp.layout_cache_bytes() RETURNS bigint LANGUAGE sql AS
$$SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts WHERE name = 'idgen layouts'$$;
SELECT pg_temp.layout_cache_bytes() AS before \gset
DO $$
BEGIN
	FOR i IN 1..20000 LOOP
		BEGIN
			PERFORM idgen_decode(1, 'no-such-layout-' || i);
		EXCEPTION WHEN undefined_object THEN NULL;
		END;
	END LOOP;
END$$;
SELECT pg_temp.layout_cache_bytes() - :before < 65536 AS cache_did_not_grow;

-- 1100 layouts without a worker field, each generated in by the server's
-- shared states, which keep 1024: the longest idle are recycled, built-in layouts
-- still generate, and a recycled layout's IDs go on above its earlier ones
SELECT count(idgen_define_layout('limits-' || i, '2020-01-01+00', '{time,node,sequence}', '{41,4,12}'))
FROM generate_series(1, 1100) i;
CREATE TABLE limits_ids (layout text, round int, id bigint);
INSERT INTO limits_ids SELECT 'limits-' || i, 1, idgen_next('limits-' || i) FROM generate_series(1, 1100) i;
SELECT idgen_next('instagram') > 0 AS instagram_generates;
SELECT overflows AS states_overflows FROM idgen_capacity WHERE name = 'layout_states' \gset
INSERT INTO limits_ids SELECT 'limits-' || i, 2, idgen_next('limits-' || i) FROM generate_series(1, 1100) i;
-- in the same order again: each state the next layout needs was given up,
-- the longest idle first (given up the busiest, 1023 would still be held)
SELECT overflows - :states_overflows >= 1000 AS each_idle_one_given_up
FROM idgen_capacity WHERE name = 'layout_states';
SELECT count(*) AS recycled_and_not_above
FROM limits_ids a JOIN limits_ids b ON a.layout = b.layout AND a.round = 1 AND b.round = 2
WHERE b.id <= a.id;
-- idgen_capacity says so; each layout still has a high-water mark of its
-- own, and the stats kept 1024 of the 1100 definitions
SELECT name, capacity, in_use >= 1024 AS holds_1024, overflows > 0 AS overflowed
FROM idgen_capacity WHERE name IN ('layout_states', 'marks', 'stats') ORDER BY name;
-- idgen_stats gives up the row published least recently: with each
-- layout's counts published by a commit of its own, the last 1000 keep
-- their rows, whatever the 100 before did
CREATE PROCEDURE pg_temp.each_committed() LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..1100 LOOP
		PERFORM idgen_next('limits-' || i);
		COMMIT;
	END LOOP;
END$$;
CALL pg_temp.each_committed();
SELECT count(*) AS latest_kept FROM idgen_stats
WHERE layout IN (SELECT 'limits-' || i FROM generate_series(101, 1100) i);
DROP TABLE limits_ids;
SELECT count(idgen_drop_layout(name)) FROM idgen_layout WHERE name LIKE 'limits-%';
