/* idgen--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.5'" to load this file. \quit

-- idgen_capacity: the shared tables of fixed size, how full they are, and
-- how often an entry was wanted when none was free.  It reveals counts only,
-- so PUBLIC may read it.

CREATE FUNCTION idgen_capacity(
	OUT name text, OUT capacity bigint, OUT in_use bigint,
	OUT overflows bigint, OUT last_overflow timestamptz, OUT setting text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_capacity'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_capacity() IS
'entries of each shared table of idgen, those in use, and how often one was wanted when none was free: the rows of the view idgen_capacity';

CREATE VIEW idgen_capacity AS SELECT * FROM idgen_capacity();

GRANT SELECT ON idgen_capacity TO PUBLIC;

COMMENT ON VIEW idgen_capacity IS
'entries of each shared table of idgen, those in use, and how often one was wanted when none was free';
