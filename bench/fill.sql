-- Workload 5 of scripts/bench: fills the table "fill" in committed batches
-- and logs how long each batch took, so the insert rate can be followed as
-- the table grows.  Server-side, so no client round trip is in the timing.
CREATE TABLE fill_log (rows_done bigint, batch_s float8, elapsed_s float8);

-- Stops at total rows or after max_seconds, whichever comes first, to keep
-- the run within its budget when a generator slows down.
CREATE PROCEDURE bench_fill(total bigint, batch int, max_seconds float8)
LANGUAGE plpgsql AS $$
DECLARE
	started timestamptz := clock_timestamp();
	batch_start timestamptz;
	done bigint := 0;
BEGIN
	WHILE done < total AND clock_timestamp() < started + make_interval(secs => max_seconds) LOOP
		batch_start := clock_timestamp();
		INSERT INTO fill (v) SELECT 1 FROM generate_series(1, batch);
		COMMIT;
		done := done + batch;
		INSERT INTO fill_log VALUES (done,
			extract(epoch FROM clock_timestamp() - batch_start),
			extract(epoch FROM clock_timestamp() - started));
	END LOOP;
END
$$;
