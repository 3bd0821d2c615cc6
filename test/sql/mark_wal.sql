-- idgen's WAL records: typed, and described for pg_walinspect and wal_debug,
-- the high-water mark by layout, mark and epoch, a prepared transaction's
-- horizon entry by xid and time.
CREATE EXTENSION IF NOT EXISTS pg_walinspect;

SELECT idgen_define_layout('walrec', '2020-01-01+00', '{time,node,sequence}', '{41,4,12}');
SELECT pg_current_wal_flush_lsn() AS before \gset
-- an ID 5 s ahead is past the layout's mark (its own, or the overflow mark
-- "*" when the table of marks is full), so the mark is raised and flushed
-- before the ID is handed out
SET idgen.clock_offset_ms = 5000;
SELECT idgen_next('walrec') > 0 AS generated;
RESET idgen.clock_offset_ms;
SELECT record_type, count(*) >= 1 AS logged
FROM pg_get_wal_records_info(:'before', pg_current_wal_flush_lsn())
WHERE resource_manager = 'idgen'
  AND description ~ '^layout "(walrec|\*)" mark \d+ epoch -?\d+ \(Unix ms\)( node \d+ node_bits \d+)?$'
GROUP BY record_type;
SELECT idgen_drop_layout('walrec');

-- a prepared transaction's horizon entry, by its xid and time
SELECT pg_current_wal_flush_lsn() AS before \gset
BEGIN;
SELECT idgen_next() > 0 AS generated;
PREPARE TRANSACTION 'walrec';
SELECT record_type, description ~ '^xid \d+ horizon \d+ \(Unix ms\) default layout \d+ epoch \d+ \(Unix ms\)$' AS described
FROM pg_get_wal_records_info(:'before', pg_current_wal_insert_lsn())
WHERE resource_manager = 'idgen' AND record_type = 'HORIZON_PREPARED';
COMMIT PREPARED 'walrec';
