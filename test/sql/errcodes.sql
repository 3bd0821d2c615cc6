-- Errors keep the SQLSTATE docs/troubleshooting.md gives them: code that
-- retries or reports an error tells it by its code, not its words.
\set VERBOSITY sqlstate

-- idgen layout "…" does not exist: 42704
SELECT idgen_next('no-such-layout');
SELECT * FROM idgen_decode(1, 'no-such-layout');

-- cannot generate IDs in idgen layout "…": 55000 (node id 3 in a 1-bit node field)
SELECT idgen_define_layout('one-bit-node', '2020-01-01+00', '{time,node,sequence}', '{41,1,12}');
SELECT idgen_next('one-bit-node');
SELECT idgen_next_block(10, 'one-bit-node');

-- idgen_check_nodes requires the extension "dblink": 55000
SELECT * FROM idgen_check_nodes(ARRAY['dbname=postgres']);

-- values of column … reach the range of idgen IDs: 55000
CREATE TABLE errcodes_keys (id bigserial PRIMARY KEY);
INSERT INTO errcodes_keys VALUES (9000000000000000000);
SELECT * FROM idgen_adopt('errcodes_keys', 'id');

-- idgen layout "…" is defined differently in this database: 42710, when a
-- restore brings idgen_layouts_saved() holding a layout defined otherwise here
CREATE OR REPLACE FUNCTION idgen_layouts_saved() RETURNS jsonb LANGUAGE sql IMMUTABLE
AS $f$SELECT '[{"name": "one-bit-node", "epoch": "2021-01-01T00:00:00+00:00", "radix": 2,
"fields": ["time", "node", "sequence"], "widths": [41, 10, 12], "time_unit": "00:00:00.001"}]'::jsonb$f$;

\set VERBOSITY default
-- none of them defined or changed anything
SELECT name, widths FROM idgen_layout WHERE name = 'one-bit-node';
SELECT pg_get_serial_sequence('errcodes_keys', 'id') IS NOT NULL AS keeps_its_sequence;
DROP TABLE errcodes_keys;
SELECT idgen_drop_layout('one-bit-node');
