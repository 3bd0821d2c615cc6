-- Workload 6 of scripts/bench: the control poller, as busy as the poller in
-- poll.sql but touching nothing of idgen, so what any busy connection costs
-- the writers shows apart from what idgen_horizon() costs them.
SELECT 1;
