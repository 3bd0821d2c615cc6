-- settings: who may change what, and their limits
SHOW idgen.node_id;
SHOW idgen.node_bits;
SHOW idgen.epoch;
SHOW idgen.max_lead_ms;
SHOW idgen.max_clock_regression_ms;
SHOW idgen.clock_offset_ms;

-- fixed at server start, or set only in the server's configuration
SET idgen.node_id = 5;
SET idgen.node_bits = 2;
SET idgen.epoch = '2020-01-01';
SET idgen.max_lead_ms = 10;
SET idgen.max_clock_regression_ms = 10;

-- the epoch's range is taken to both ends, and refused one day past either
ALTER SYSTEM SET idgen.epoch = '2200-01-01';
ALTER SYSTEM SET idgen.epoch = '1900-01-01';
ALTER SYSTEM SET idgen.epoch = '2200-01-02';
ALTER SYSTEM SET idgen.epoch = '1899-12-31';
ALTER SYSTEM RESET idgen.epoch;

-- the fault-injection clock offset: superusers only, within int range
SET idgen.clock_offset_ms = 2147483648;
SET idgen.clock_offset_ms = '-1s';
SHOW idgen.clock_offset_ms;
RESET idgen.clock_offset_ms;

CREATE ROLE regress_idgen_user;
SET ROLE regress_idgen_user;
SET idgen.clock_offset_ms = 100;
SET idgen.node_id = 5;
-- an ordinary user can generate and decode, and sees its own slot only
SELECT idgen_next() > 0 AS generated;
SELECT count(*) > 0 AS sees_own_slot FROM idgen_workers
WHERE pid = pg_backend_pid() AND ids_issued = 1;
RESET ROLE;
DROP ROLE regress_idgen_user;

-- the prefix is reserved: typos are errors, not silent placeholders
SET idgen.nodeid = 5;
