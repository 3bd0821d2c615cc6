-- Workload 6 of scripts/bench: one pgbench transaction, one event into an
-- outbox table whose primary key default is the generator under test.
INSERT INTO outbox (topic, payload) VALUES ('order', '{"order": 1, "status": "paid"}');
