/* idgen--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.1'" to load this file. \quit

-- Layouts defined in SQL.  A configuration table, so that pg_dump keeps its
-- rows; a trigger checks every row however it is written and tells other
-- backends to forget the layouts they cached.
CREATE TABLE idgen_layout (
	name text PRIMARY KEY,
	epoch timestamptz NOT NULL,
	fields text[] NOT NULL,
	widths int[] NOT NULL,
	time_unit interval NOT NULL DEFAULT '1 millisecond',
	radix int NOT NULL DEFAULT 2
);

COMMENT ON TABLE idgen_layout IS
'ID layouts defined with idgen_define_layout(), in addition to the built-in ones';

SELECT pg_catalog.pg_extension_config_dump('idgen_layout', '');

GRANT SELECT ON idgen_layout TO PUBLIC;

CREATE FUNCTION idgen_layout_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_layout_check'
LANGUAGE C;

CREATE TRIGGER idgen_layout_check
BEFORE INSERT OR UPDATE OR DELETE ON idgen_layout
FOR EACH ROW EXECUTE FUNCTION idgen_layout_check();

CREATE TRIGGER idgen_layout_truncate
BEFORE TRUNCATE ON idgen_layout
FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_check();

-- Changing layouts needs the rights to change the table: its owner's, or
-- those granted on it.
CREATE FUNCTION idgen_define_layout(name text, epoch timestamptz, fields text[],
	widths int[], time_unit interval DEFAULT '1 millisecond', radix int DEFAULT 2)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_define_layout'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_define_layout(text, timestamptz, text[], int[], interval, int) IS
'defines an ID layout: fields from the most significant down, time first, widths in bits (radix 2) or decimal digits (radix 10)';

CREATE FUNCTION idgen_drop_layout(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_drop_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_drop_layout(text) IS
'drops a layout defined with idgen_define_layout()';

-- Generation in any layout; a NULL shard means a random one, so these are not
-- strict.  As idgen_next(), run by the leader of a parallel query only.
CREATE FUNCTION idgen_next(layout text, shard bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next(text, bigint) IS
'next unique, time-ordered ID of the named layout, with the given or a random shard where the layout has one';

CREATE FUNCTION idgen_next_batch(n int, layout text, shard bigint DEFAULT NULL)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_batch_layout'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION idgen_next_batch(int, text, bigint) IS
'the next n IDs of the named layout, as n calls of idgen_next(layout, shard) would make them';

COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'time, machine fields and sequence carried by an ID of the named layout, built in (idgen, twitter, discord, sonyflake, instagram, redis-borrow, decimal19, js53) or defined in SQL';
