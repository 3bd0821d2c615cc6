-- objectid: text and binary forms, casts
-- runs alone too: create the extension unless an earlier test did
SET client_min_messages = warning;
RESET client_min_messages;

-- text round trips: input in any case, output in lowercase
SELECT '507f1f77bcf86cd799439011'::objectid;
SELECT '507F1F77BCF86CD799439011'::objectid;
SELECT 'aBcDeF0123456789AbCdEf01'::objectid;
SELECT '000000000000000000000000'::objectid AS zero,
       'ffffffffffffffffffffffff'::objectid AS ones;
SELECT '507f1f77bcf86cd799439011'::objectid::text::objectid
     = '507f1f77bcf86cd799439011'::objectid AS round_trip;

-- anything but exactly 24 hex digits is refused
SELECT '507f1f77bcf86cd79943901'::objectid;		-- 23 digits
SELECT '507f1f77bcf86cd7994390111'::objectid;	-- 25 digits
SELECT '507f1f77bcf86cd79943901g'::objectid;	-- not hex
SELECT 'z07f1f77bcf86cd799439011'::objectid;
SELECT ' 507f1f77bcf86cd799439011'::objectid;	-- spaces
SELECT '507f1f77bcf86cd799439011 '::objectid;
SELECT '507f1f77bcf8 6cd79943901'::objectid;
SELECT '0x507f1f77bcf86cd7994390'::objectid;
SELECT '507f1f77-bcf86cd7-99439011'::objectid;
SELECT ''::objectid;
-- NULL stays NULL; the input function is never called for it
SELECT NULL::objectid IS NULL AS is_null;
SELECT objectid_out(NULL) IS NULL AS out_null;

-- storage: fixed length of 12 bytes, no header
SELECT pg_column_size('507f1f77bcf86cd799439011'::objectid) AS size;
SELECT typlen, typbyval, typalign, typstorage
FROM pg_type WHERE typname = 'objectid';

-- explicit casts to and from bytea and text, and only explicit ones
SELECT '507f1f77bcf86cd799439011'::objectid::bytea;
SELECT '\x507f1f77bcf86cd799439011'::bytea::objectid;
SELECT '\x507f1f77bcf86cd7994390'::bytea::objectid;		-- 11 bytes
SELECT '\x507f1f77bcf86cd79943901122'::bytea::objectid;	-- 13 bytes
SELECT ''::bytea::objectid;
SELECT CAST('507f1f77bcf86cd799439011'::objectid AS text) AS to_text,
       CAST('507F1F77BCF86CD799439011'::text AS objectid) AS from_text;
SELECT CAST('507f1f77bcf86cd79943901'::text AS objectid);
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_cast
WHERE castsource = 'objectid'::regtype OR casttarget = 'objectid'::regtype
ORDER BY 1::text, 2::text;
CREATE TEMP TABLE oid_text (t text, b bytea, o objectid);
INSERT INTO oid_text (t) VALUES ('507f1f77bcf86cd799439011'::objectid);
INSERT INTO oid_text (b) VALUES ('507f1f77bcf86cd799439011'::objectid);
INSERT INTO oid_text (o) VALUES ('507f1f77bcf86cd799439011'::text);
INSERT INTO oid_text (o) VALUES ('\x507f1f77bcf86cd799439011'::bytea);
SELECT '507f1f77bcf86cd799439011'::objectid = '507f1f77bcf86cd799439011'::text;
SELECT length('507f1f77bcf86cd799439011'::objectid);
-- an unknown literal is still read as objectid
INSERT INTO oid_text (o) VALUES ('507f1f77bcf86cd799439011');
SELECT o FROM oid_text;

-- objectid_send: the 12 bytes, as the binary protocol carries them
SELECT objectid_send('507f1f77bcf86cd799439011');
SELECT objectid_send(o) = o::bytea AS same_bytes FROM oid_text;

-- COPY BINARY round trip through objectid_send and objectid_recv
\getenv abs_builddir PG_ABS_BUILDDIR
\set filename :abs_builddir '/results/objectid_io.data'
CREATE TEMP TABLE oid_copy (n int, o objectid);
INSERT INTO oid_copy VALUES
	(1, '000000000000000000000000'),
	(2, '507f1f77bcf86cd799439011'),
	(3, 'ffffffffffffffffffffffff'),
	(4, NULL);
COPY oid_copy TO :'filename' (FORMAT binary);
CREATE TEMP TABLE oid_copy2 (LIKE oid_copy);
COPY oid_copy2 FROM :'filename' (FORMAT binary);
SELECT * FROM oid_copy2 ORDER BY n;
SELECT count(*) AS unchanged
FROM oid_copy a JOIN oid_copy2 b USING (n)
WHERE a.o = b.o OR (a.o IS NULL AND b.o IS NULL);

-- objectid_recv refuses a field of the wrong length
CREATE TEMP TABLE oid_bytes (n int, o bytea);
INSERT INTO oid_bytes VALUES (1, '\x507f1f77bcf86cd7994390');
COPY oid_bytes TO :'filename' (FORMAT binary);
COPY oid_copy2 FROM :'filename' (FORMAT binary);
TRUNCATE oid_bytes;
INSERT INTO oid_bytes VALUES (1, '\x507f1f77bcf86cd79943901122');
COPY oid_bytes TO :'filename' (FORMAT binary);
COPY oid_copy2 FROM :'filename' (FORMAT binary);
TRUNCATE oid_bytes;
INSERT INTO oid_bytes VALUES (1, '');
COPY oid_bytes TO :'filename' (FORMAT binary);
COPY oid_copy2 FROM :'filename' (FORMAT binary);
-- and reads exactly 12
TRUNCATE oid_bytes;
INSERT INTO oid_bytes VALUES (5, '\xfedcba987654321001234567');
COPY oid_bytes TO :'filename' (FORMAT binary);
COPY oid_copy2 FROM :'filename' (FORMAT binary);
SELECT * FROM oid_copy2 WHERE n = 5;

-- From PostgreSQL 16 on, bad text is a soft error: pg_input_is_valid() says
-- false instead of raising (15 has neither soft errors nor the function).
DO $$
DECLARE
	ok boolean;
BEGIN
	IF current_setting('server_version_num')::int >= 160000 THEN
		EXECUTE $q$
			SELECT pg_input_is_valid('507f1f77bcf86cd799439011', 'objectid')
			   AND NOT pg_input_is_valid('507f1f77bcf86cd79943901z', 'objectid')
			   AND NOT pg_input_is_valid('507f1f77bcf86cd7994390', 'objectid')
		$q$ INTO ok;
		IF NOT ok THEN
			RAISE EXCEPTION 'objectid input does not report soft errors';
		END IF;
	END IF;
END
$$;
