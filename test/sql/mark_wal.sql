-- The high-water mark's WAL record: typed, and described for pg_walinspect
-- and wal_debug by layout, mark and epoch.
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
