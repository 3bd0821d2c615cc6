/* idgen--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.2'" to load this file. \quit

-- Functions only idgen itself calls: the trigger of idgen_layout, and the
-- btree sort support.  Triggers and operator classes call them without
-- checking EXECUTE, so nobody needs it; the trigger refuses any other use.
REVOKE EXECUTE ON FUNCTION idgen_layout_check() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION objectid_sortsupport(internal) FROM PUBLIC;

-- Equal objectids are equal byte for byte, so btree indexes can deduplicate
-- them, as for uuid.  Indexes built before take it up with REINDEX.
ALTER OPERATOR FAMILY objectid_ops USING btree
	ADD FUNCTION 4 (objectid, objectid) pg_catalog.btequalimage(oid);

-- Blocks of consecutive IDs for clients that take one value and use the
-- next n themselves (Hibernate's pooled-lo optimizer, batch loaders).
CREATE FUNCTION idgen_next_block(n int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_block'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_block(int) IS
'first of n consecutive IDs (n from 1 to 4096), all in one millisecond of one worker id';

CREATE FUNCTION idgen_next_block(n int, layout text, shard bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_block_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_block(int, text, bigint) IS
'first of n consecutive IDs of a layout whose sequence is its lowest field';
