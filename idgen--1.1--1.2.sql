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
