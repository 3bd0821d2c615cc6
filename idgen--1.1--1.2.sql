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

-- pgEdge snowflake (1.2): the built-in layout pgedge, and idgen_adopt() for
-- columns pgEdge's convert_sequence_to_snowflake() gave a
-- snowflake.nextval('sequence') default.
COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'time, machine fields and sequence carried by an ID of the named layout, built in (idgen, twitter, discord, sonyflake, instagram, redis-borrow, decimal19, js53, pgedge) or defined in SQL';

CREATE OR REPLACE FUNCTION idgen_adopt(tbl regclass, col name, widen boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	idgen_schema name;
	generator text;
	att pg_attribute;
	relkind "char";
	def_oid oid;
	def text;
	seq regclass;
	seq_name text;
	seq_owned bool := false;
	pgedge bool := false;
	pgedge_floor bigint;
	ready timestamptz;
	already bool := false;
	largest bigint;
	margin_ms int;
	floor_id bigint;
	narrow text;
	ref_rels oid[];
	ref_atts int2[];
	ref_cons name[];
	rel regclass;
	clauses text;
	cols text;
BEGIN
	SELECT ns.nspname INTO STRICT idgen_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	generator := format('%I.idgen_next()', idgen_schema);

	SELECT c.relkind INTO relkind FROM pg_class c WHERE c.oid = tbl;
	IF relkind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION '"%" is not a table', tbl
			USING ERRCODE = 'wrong_object_type';
	END IF;
	-- Nothing may insert between the check of existing values and the switch.
	EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);

	SELECT * INTO att FROM pg_attribute a
	WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	IF att.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
		RAISE EXCEPTION 'column "%" of table "%" is of type %, not an integer type', col, tbl,
				format_type(att.atttypid, att.atttypmod)
			USING ERRCODE = 'datatype_mismatch',
				  DETAIL = 'idgen IDs are bigint values.';
	END IF;
	IF att.attgenerated <> '' THEN
		RAISE EXCEPTION 'column "%" of table "%" is a generated column', col, tbl
			USING ERRCODE = 'wrong_object_type';
	END IF;

	-- What fills the column now.
	SELECT d.oid, pg_get_expr(d.adbin, d.adrelid) INTO def_oid, def
	FROM pg_attrdef d WHERE d.adrelid = tbl AND d.adnum = att.attnum;
	IF att.attidentity <> '' THEN
		SELECT dep.objid::regclass INTO seq FROM pg_depend dep
		WHERE dep.classid = 'pg_class'::regclass AND dep.refclassid = 'pg_class'::regclass
		  AND dep.refobjid = tbl AND dep.refobjsubid = att.attnum AND dep.deptype = 'i';
	ELSIF def = generator THEN
		already := true;
	ELSIF def IS NOT NULL THEN
		SELECT dep.refobjid::regclass INTO seq FROM pg_depend dep
		JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
		WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = def_oid
		  AND dep.refclassid = 'pg_class'::regclass;
		-- pgEdge's convert_sequence_to_snowflake() leaves the sequence in
		-- a snowflake.nextval() default.
		pgedge := seq IS NOT NULL AND def = format('snowflake.nextval(%L::regclass)', seq::text);
		IF seq IS NULL OR (def <> format('nextval(%L::regclass)', seq::text) AND NOT pgedge) THEN
			RAISE EXCEPTION 'column "%" of table "%" has a default that is not a sequence', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The default is %s.', def),
					  HINT = 'idgen_adopt replaces only nextval(''sequence'') and pgEdge''s snowflake.nextval(''sequence'') defaults. Drop the default first if idgen_next() should replace it.';
		END IF;
		seq_owned := EXISTS (
			SELECT FROM pg_depend dep
			WHERE dep.classid = 'pg_class'::regclass AND dep.objid = seq
			  AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = tbl
			  AND dep.refobjsubid = att.attnum AND dep.deptype = 'a');
	END IF;

	seq_name := seq::text;

	-- Columns that will hold the new IDs: this one and, transitively, those
	-- that reference it by foreign key (partitions follow their parent).
	WITH RECURSIVE refs(relid, attnum, conname) AS (
		SELECT tbl::oid, att.attnum, NULL::name
		UNION
		SELECT c.conrelid, c.conkey[k], c.conname
		FROM refs
		JOIN pg_constraint c ON c.confrelid = refs.relid AND c.contype = 'f' AND c.conparentid = 0
		CROSS JOIN LATERAL generate_subscripts(c.confkey, 1) k
		WHERE c.confkey[k] = refs.attnum)
	SELECT array_agg(relid), array_agg(attnum), array_agg(conname)
	INTO ref_rels, ref_atts, ref_cons
	FROM refs;

	SELECT string_agg(format('%s.%I (%s)', a.attrelid::regclass, a.attname,
							 format_type(a.atttypid, a.atttypmod)), ', '
					  ORDER BY a.attrelid <> tbl, a.attrelid::regclass::text, a.attnum)
	INTO narrow
	FROM (SELECT DISTINCT relid, attnum FROM unnest(ref_rels, ref_atts) u(relid, attnum)) rc
	JOIN pg_attribute a ON a.attrelid = rc.relid AND a.attnum = rc.attnum
	WHERE a.atttypid <> 'int8'::regtype;
	IF narrow IS NOT NULL AND NOT widen THEN
		RAISE EXCEPTION 'columns too narrow for idgen IDs: %', narrow
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'idgen IDs need bigint, in the column and in every column that references it.',
				  HINT = 'Call idgen_adopt with widen => true to change these columns to bigint.';
	END IF;

	-- Refuse before changing anything if this server cannot generate: the
	-- new default would fail every insert.
	EXECUTE format('SELECT %I.idgen_next()', idgen_schema);

	IF NOT already THEN
		-- Every ID made from now on is at least the smallest ID of the
		-- current millisecond, less the time idgen lets the clock step back.
		SELECT coalesce(max(s.setting::int), 10000) INTO margin_ms
		FROM pg_settings s WHERE s.name = 'idgen.max_clock_regression_ms';
		EXECUTE format('SELECT %I.idgen_from_timestamp($1)', idgen_schema)
			INTO floor_id USING clock_timestamp() - make_interval(secs => margin_ms / 1000.0);
		EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO largest;
		IF largest >= floor_id AND pgedge THEN
			-- pgEdge counts milliseconds from 2023-01-01, idgen from
			-- idgen.epoch: IDs pgEdge made within that gap of now are above
			-- idgen's.  The pgedge layout continues pgEdge's numbering.
			EXECUTE format('SELECT %I.idgen_from_timestamp($1, ''pgedge'')', idgen_schema)
				INTO pgedge_floor USING clock_timestamp() - make_interval(secs => margin_ms / 1000.0);
			EXECUTE format('SELECT (%I.idgen_decode($1, ''pgedge'')).ts', idgen_schema)
				INTO ready USING largest;
			ready := ready + make_interval(secs => margin_ms / 1000.0 + 0.001);
			RAISE EXCEPTION 'values of column "%" of table "%" reach the range of idgen IDs', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The largest value is %s, a pgEdge snowflake ID counting milliseconds from 2023-01-01; idgen IDs count them from idgen.epoch, %s, and made from now on can be as small as %s.',
									  largest, current_setting('idgen.epoch', true), floor_id),
					  HINT = format('Continue pgEdge''s numbering in idgen''s layout pgedge instead%s: ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %I.idgen_next(''pgedge'').',
									CASE WHEN largest >= pgedge_floor
										THEN format(' once the clock is idgen.max_clock_regression_ms past the largest value''s time, at %s', ready)
										ELSE '' END,
									tbl, col, idgen_schema);
		ELSIF largest >= floor_id THEN
			RAISE EXCEPTION 'values of column "%" of table "%" reach the range of idgen IDs', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The largest value is %s; idgen IDs made from now on can be as small as %s, so a new ID could equal an existing value.',
									  largest, floor_id),
					  HINT = 'Renumber the existing values below that, or keep the column''s current default.';
		END IF;
		RETURN NEXT CASE WHEN largest IS NULL
			THEN format('%s.%I holds no values yet', tbl, col)
			ELSE format('largest existing value of %s.%I, %s, is below every ID idgen makes from now on', tbl, col, largest)
		END;
	END IF;

	IF att.attidentity <> '' THEN
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
		RETURN NEXT format('dropped identity of %s.%I, with its sequence %s', tbl, col, seq_name);
	ELSIF def IS NOT NULL AND NOT already THEN
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
		RETURN NEXT format('dropped default %s of %s.%I', def, tbl, col);
	END IF;

	-- One ALTER TABLE per table, so that each is rewritten once.
	FOR rel, clauses, cols IN
		SELECT rc.relid::regclass,
			   string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname), ', ' ORDER BY a.attnum),
			   string_agg(format('%I', a.attname) || coalesce(' (foreign key ' || quote_ident(rc.conname) || ')', ''),
						  ', ' ORDER BY a.attnum)
		FROM (SELECT relid, attnum, min(conname) AS conname
			  FROM unnest(ref_rels, ref_atts, ref_cons) u(relid, attnum, conname)
			  GROUP BY relid, attnum) rc
		JOIN pg_attribute a ON a.attrelid = rc.relid AND a.attnum = rc.attnum
		WHERE a.atttypid <> 'int8'::regtype
		GROUP BY rc.relid
		ORDER BY rc.relid <> tbl, rc.relid::regclass::text
	LOOP
		EXECUTE format('ALTER TABLE %s %s', rel, clauses);
		RETURN NEXT format('changed %s to bigint in %s', cols, rel);
	END LOOP;

	IF seq IS NOT NULL AND att.attidentity = '' THEN
		IF NOT seq_owned THEN
			RETURN NEXT format('kept sequence %s: it does not belong to %s.%I', seq_name, tbl, col);
		ELSE
			BEGIN
				EXECUTE format('DROP SEQUENCE %s', seq);
				RETURN NEXT format('dropped sequence %s', seq_name);
			EXCEPTION WHEN dependent_objects_still_exist THEN
				RETURN NEXT format('kept sequence %s: other objects use it', seq_name);
			END;
		END IF;
	END IF;

	IF already THEN
		RETURN NEXT format('%s.%I already defaults to %s', tbl, col, generator);
	ELSE
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, generator);
		RETURN NEXT format('set default of %s.%I to %s', tbl, col, generator);
	END IF;
END
$$;

COMMENT ON FUNCTION idgen_adopt(regclass, name, boolean) IS
'switch an integer key column from its sequence (or pgEdge snowflake sequence) to DEFAULT idgen_next(), widening it and its referencing columns to bigint on request';

-- Time partitions (1.2): IDs are time-ordered, so a range of IDs is a range
-- of time.  idgen_span() gives the width of a partition (pg_partman's
-- integer interval, or retention) without bit arithmetic.  Stable, as
-- idgen_from_timestamp(): layouts defined in SQL can change.
CREATE FUNCTION idgen_span(width interval, layout text DEFAULT 'idgen')
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	idgen_schema name;
	epoch timestamptz;
	span bigint;
BEGIN
	IF extract(month FROM width) <> 0 OR extract(year FROM width) <> 0 THEN
		RAISE EXCEPTION 'interval must not have months or years: %', width
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Months and years differ in length, so they span no fixed number of IDs.',
				  HINT = 'Give the width in days or smaller units.';
	END IF;
	IF width <= interval '0' THEN
		RAISE EXCEPTION 'interval must be positive: %', width
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT ns.nspname INTO STRICT idgen_schema
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'idgen';
	-- From the layout's epoch, the ID 0; a day is 86400 s whatever TimeZone.
	EXECUTE format('SELECT ts FROM %I.idgen_decode(0, $1)', idgen_schema) INTO epoch USING layout;
	EXECUTE format('SELECT %1$I.idgen_from_timestamp($1 + $2, $3) - %1$I.idgen_from_timestamp($1, $3)', idgen_schema)
		INTO span USING epoch, make_interval(secs => extract(epoch FROM width)), layout;
	IF span = 0 THEN
		RAISE EXCEPTION 'interval % is shorter than a time unit of idgen layout "%"', width, layout
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN span;
END
$$;

COMMENT ON FUNCTION idgen_span(interval, text) IS
'how many IDs of the layout an interval holds, whole time units: the width of a time partition on an ID key';
