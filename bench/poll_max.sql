-- Workload 6 of scripts/bench: what a poller of a bigserial outbox takes
-- instead of the horizon, as fast as bench/poll.sql takes it: the largest ID.
SELECT max(id) FROM outbox;
