-- objectid btree indexes deduplicate equal keys, as uuid's do: the operator
-- class says equal values are equal byte for byte (btequalimage).
CREATE EXTENSION IF NOT EXISTS pageinspect;

CREATE TABLE oid_dups (o objectid);
INSERT INTO oid_dups SELECT '5f1d7c2a9b3e4f5a6b7c8d9e' FROM generate_series(1, 5000);
CREATE INDEX oid_dups_o ON oid_dups (o);
CREATE INDEX oid_dups_plain ON oid_dups (o) WITH (deduplicate_items = off);
SELECT allequalimage FROM bt_metap('oid_dups_o');
-- 5000 equal keys take a few posting lists instead of 5000 index tuples
SELECT pg_relation_size('oid_dups_o') * 2 < pg_relation_size('oid_dups_plain') AS deduplicated;
DROP TABLE oid_dups;
