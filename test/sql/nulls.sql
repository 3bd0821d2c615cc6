-- One rule for NULL arguments, checked on every function of the extension
-- found in the catalog, so that a function added later is checked too:
-- a function is STRICT (NULL in, NULL out; a set-returning one returns no
-- rows), unless one of its arguments gives NULL a meaning, which it shows
-- with DEFAULT NULL (the shard: a random one; the list of servers: every
-- Citus node).  Then NULL in any other argument still gives NULL, or no
-- rows, never an error.  Trigger functions and functions without arguments
-- are outside the rule.
CREATE TEMP VIEW idgen_functions AS
SELECT p.oid, p.oid::regprocedure AS func, p.proisstrict, p.proretset,
       p.pronargs, p.pronargdefaults, p.proargtypes,
       coalesce(p.proargnames, '{}') AS argnames,
       pg_get_function_arguments(p.oid) AS args
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
  AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
  AND p.pronargs > 0;

-- Arguments where NULL has a meaning: those declared DEFAULT NULL.
CREATE TEMP VIEW idgen_null_meaning AS
SELECT f.func, a.i AS argno, f.argnames[a.i] AS argname
FROM idgen_functions f
CROSS JOIN LATERAL (
	SELECT arg, row_number() OVER () AS i
	FROM unnest(regexp_split_to_array(f.args, ', ')) arg
	WHERE arg !~ '^OUT ') a
WHERE a.arg ~ ' DEFAULT NULL(::.*)?$';

SELECT func, argname FROM idgen_null_meaning ORDER BY func::text, 2;

-- Functions that break the rule: not STRICT without an argument for NULL.
SELECT func AS not_strict_without_reason
FROM idgen_functions f
WHERE NOT f.proisstrict
  AND NOT EXISTS (SELECT FROM idgen_null_meaning m WHERE m.func = f.func)
ORDER BY func::text;

-- Every other argument of the functions that are not STRICT, NULL in turn,
-- the others given a valid value: the call returns NULL or no rows.
CREATE TEMP TABLE null_calls (func regprocedure, argno int, outcome text);
DO $$
DECLARE
	f record;
	vals text[];
	call text;
	n bigint;
BEGIN
	FOR f IN SELECT * FROM idgen_functions WHERE NOT proisstrict LOOP
		FOR i IN 1 .. f.pronargs LOOP
			CONTINUE WHEN EXISTS (SELECT FROM idgen_null_meaning m
								  WHERE m.func = f.func AND m.argno = i);
			vals := '{}';
			FOR k IN 1 .. f.pronargs LOOP
				vals[k] := CASE
					WHEN k = i OR EXISTS (SELECT FROM idgen_null_meaning m
										  WHERE m.func = f.func AND m.argno = k) THEN 'NULL'
					WHEN f.argnames[k] = 'layout' THEN quote_literal('js53')
					WHEN f.proargtypes[k - 1] IN ('int4'::regtype, 'int8'::regtype) THEN '1'
					WHEN f.proargtypes[k - 1] = 'text'::regtype THEN quote_literal('x')
					ELSE 'NULL' END || '::' || format_type(f.proargtypes[k - 1], NULL);
			END LOOP;
			call := format('%s(%s)', f.oid::regproc, array_to_string(vals, ', '));
			BEGIN
				IF f.proretset THEN
					EXECUTE format('SELECT count(*) FROM %s', call) INTO n;
				ELSE
					EXECUTE format('SELECT count(r) FROM (SELECT %s AS r) s', call) INTO n;
				END IF;
				INSERT INTO null_calls VALUES (f.oid, i,
					CASE WHEN n = 0 THEN 'NULL' ELSE 'a value' END);
			EXCEPTION WHEN OTHERS THEN
				INSERT INTO null_calls VALUES (f.oid, i, 'error: ' || SQLERRM);
			END;
		END LOOP;
	END LOOP;
END
$$;
SELECT func, argno, outcome FROM null_calls ORDER BY func::text, 2;
