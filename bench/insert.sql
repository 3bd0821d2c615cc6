-- Workload 4 of scripts/bench: one pgbench transaction, one single-row insert;
-- the table's primary key default is the generator under test.
INSERT INTO ins (v) VALUES (1);
