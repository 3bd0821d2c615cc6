-- idgen_node_info() and idgen_check_nodes(): comparing servers
-- runs alone too: create the extension unless an earlier test did
SET client_min_messages = warning;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- test/idgen.conf sets node id 3 and keeps the default layout.
SELECT node_id, node_bits, epoch, system_identifier > 0 AS has_sysid,
       system_identifier = (SELECT system_identifier FROM pg_control_system()) AS sysid_matches,
       in_recovery, started_at = pg_postmaster_start_time() AS started_matches,
       source, registry, valid_until
FROM idgen_node_info();

-- One query reads the settings, here and on the servers checked; it says
-- in which schema an idgen with node id leases is.  (Not echoed: the
-- query run is idgen_node_probe()'s.)
\set ECHO none
SELECT format($$SELECT p.j::jsonb->>'node_id' AS node_id, p.j::jsonb->>'preloaded' AS preloaded,
       p.j::jsonb->>'idgen_schema' = %L AS schema_found, p.j::jsonb->'layouts' AS layouts
FROM (%s) p(j)$$, (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'idgen'),
       idgen_node_probe()) \gexec
\set ECHO all

-- dblink is a prerequisite of the check, not of the extension.
SELECT * FROM idgen_check_nodes(ARRAY['dbname=contrib_regression']);

CREATE EXTENSION dblink;

-- pg_regress points libpq at the temporary instance, so a conninfo naming
-- only a database reaches this server.  Listed twice, it is checked once;
-- an unreachable server is reported, not fatal.
SELECT conninfo, node_id, node_bits, epoch, in_recovery, problem, source, registry, valid_until
FROM idgen_check_nodes(ARRAY['dbname=contrib_regression', 'dbname=postgres',
                             'host=/nonexistent port=1']);

-- The remote values are those of idgen_node_info().
SELECT (c.node_id, c.node_bits, c.epoch, c.system_identifier, c.in_recovery)
       = (i.node_id, i.node_bits, i.epoch, i.system_identifier, i.in_recovery) AS same
FROM idgen_check_nodes(ARRAY['dbname=contrib_regression']) c, idgen_node_info() i;

-- No servers, no rows.  Without a list (or with NULL) it checks the nodes
-- of a Citus cluster, so it needs Citus.
SELECT count(*) FROM idgen_check_nodes('{}');
SELECT count(*) FROM idgen_check_nodes();

-- dblink in another schema, not on the search path, is still found.
DROP EXTENSION dblink;
CREATE SCHEMA elsewhere;
CREATE EXTENSION dblink SCHEMA elsewhere;
SELECT conninfo, node_id, problem FROM idgen_check_nodes(ARRAY['dbname=contrib_regression']);
DROP EXTENSION dblink;
DROP SCHEMA elsewhere;
