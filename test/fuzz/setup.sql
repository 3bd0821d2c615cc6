-- A database for scripts/fuzz: idgen's types, functions and layouts, tables
-- whose keys default to idgen's generators, indexes of every objectid
-- opclass, and some rows.  Run by the superuser in a fresh database; the
-- role fuzz (LOGIN, no superuser) must exist.
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION idgen;

-- Layouts defined in SQL, of every field kind and both radixes.
\ir layouts.sql

CREATE TABLE orders (
	id bigint PRIMARY KEY DEFAULT idgen_next(),
	item text,
	qty int,
	created timestamptz DEFAULT now()
);
CREATE TABLE js_items (
	id bigint PRIMARY KEY DEFAULT idgen_next('js53'),
	order_id bigint REFERENCES orders,
	label text
);
CREATE TABLE ledger (
	id bigint PRIMARY KEY DEFAULT idgen_next('ledger', 42),
	amount numeric,
	ref bigint DEFAULT idgen_next('orders')
);
CREATE TABLE shards (
	id bigint DEFAULT idgen_next('shardy'),
	insta bigint DEFAULT idgen_next('instagram', NULL),
	flake bigint DEFAULT idgen_next('sonyflake'),
	rnd bigint DEFAULT idgen_next('rnd'),
	PRIMARY KEY (id)
);
CREATE TABLE docs (
	oid objectid PRIMARY KEY DEFAULT objectid(),
	uid uuid DEFAULT idgen_uuidv7(),
	body text,
	tw bigint DEFAULT idgen_next('twitter')
);
CREATE INDEX docs_oid_hash ON docs USING hash (oid);
CREATE INDEX docs_oid_brin ON docs USING brin (oid) WITH (pages_per_range = 2);
CREATE INDEX docs_uid ON docs (uid);
CREATE TABLE events (
	id bigint DEFAULT idgen_next('discord'),
	oid objectid,
	at timestamptz,
	u uuid,
	raw bytea
);
CREATE INDEX events_oid_brin ON events USING brin (oid);
CREATE INDEX events_oid_btree ON events (oid DESC NULLS FIRST);
CREATE INDEX events_id_brin ON events USING brin (id);
-- For idgen_adopt: serial, identity and plain integer keys, a foreign key.
CREATE TABLE legacy (id serial PRIMARY KEY, note text);
CREATE TABLE legacy_child (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	legacy_id int REFERENCES legacy);
CREATE VIEW order_times AS
	SELECT o.id, d.ts, d.node_id, d.worker_id, d.sequence, o.item
	FROM orders o, idgen_decode(o.id) d;

INSERT INTO orders (item, qty)
	SELECT 'item ' || i, i % 17 FROM generate_series(1, 2000) i;
INSERT INTO js_items (order_id, label)
	SELECT id, 'label ' || id FROM orders WHERE qty < 3;
INSERT INTO ledger (amount) SELECT i / 7.0 FROM generate_series(1, 500) i;
INSERT INTO shards SELECT FROM generate_series(1, 300);
INSERT INTO docs (body) SELECT md5(i::text) FROM generate_series(1, 2000) i;
INSERT INTO docs (oid, body) VALUES
	('000000000000000000000000', 'smallest'),
	('ffffffffffffffffffffffff', 'largest'),
	('7fffffff0000000000000000', 'sign bit');
INSERT INTO events (oid, at, u, raw)
	SELECT objectid_from_timestamp(t), t, idgen_uuidv7(), objectid_to_bytea(objectid_from_timestamp(t))
	FROM generate_series(timestamptz '1970-01-01+00', '2100-01-01+00', interval '11 days') t;
INSERT INTO events (oid) VALUES (NULL);
INSERT INTO legacy (note) SELECT 'note ' || i FROM generate_series(1, 50) i;
INSERT INTO legacy_child (legacy_id) SELECT id FROM legacy;
ANALYZE;

-- The unprivileged role may read and change every table, idgen_layout too,
-- and create its own objects in schema fuzz.
CREATE SCHEMA fuzz AUTHORIZATION fuzz;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO fuzz;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO fuzz;
