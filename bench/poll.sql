-- Workload 6 of scripts/bench: a poller that never sleeps, taking the
-- horizon as fast as one connection can (docs/outbox.md, step 1).
SELECT idgen_horizon();
