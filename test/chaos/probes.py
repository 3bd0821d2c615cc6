"""Calls whose answer README states whatever the servers did before:
inputs out of range, which must be refused as the caller's error, the
edges of the ranges, which must be answered as README computes them, and
generation on a standby, which must be refused.  The expected answers
come from layouts.py's reading of README, not from idgen's code."""

import psycopg2

import objectids
from flaws import GENERATES, try_sql
from hostile import idgen_dbs
from answers import horizon_warned, input_judged, refused_with, standby_refused
from diagnostics import refusal_coded
from layouts import BUILTIN, Layout, default_layout, epoch_date_ms

# a timestamptz of Unix ms, exact for every ms of the layouts' ranges
AT_MS = "(timestamptz 'epoch' + %d::bigint * interval '1 ms')"
# Expected of a call that must be refused: by a generating function, any
# error but an internal one (a server that refuses to generate may refuse
# it for that first); by the others, one of the caller's data.
REFUSED = "refused"
DATA_REFUSED = "refused as data"
UNKNOWN_REFUSED = "refused as unknown"

# Generating calls README gives a range for, just past it; a layout of a
# 10-bit node field, which every server's node id fits.
GENERATING_OUT_OF_RANGE = [
    "SELECT idgen_next_block(0)", "SELECT idgen_next_block(-1)", "SELECT idgen_next_block(4097)",
    "SELECT idgen_next_block(0, 'pgedge')", "SELECT idgen_next_block(4097, 'pgedge')",
    "SELECT idgen_next_batch(0)", "SELECT idgen_next_batch(-1, 'pgedge')", "SELECT idgen_next_batch(1000001)",
    # one call site passed a layout's name, then a name it begins or that
    # begins with it: no such layout
    "SELECT count(*) FROM (SELECT idgen_next(l) FROM unnest(ARRAY['pgedge', 'pgedg']) l) n",
    "SELECT count(*) FROM (SELECT idgen_next(l) FROM unnest(ARRAY['pgedge', 'pgedgex']) l) n",
    "SELECT idgen_next('nosuch')",
    # a shard for a layout without a shard field
    "SELECT idgen_next('twitter', 0)", "SELECT idgen_next_batch(1, 'js53', 0)",
    "SELECT idgen_next_block(1, 'pgedge', 0)",
    # idgen's own layout by name takes its own path, and has no shard field either
    "SELECT idgen_next('idgen', 0)", "SELECT idgen_next_batch(1, 'idgen', 0)", "SELECT idgen_next_block(1, 'idgen', 0)",
]

# Calls of the others just past their ranges, that need no layout's epoch.
OUT_OF_RANGE = [
    "SELECT * FROM idgen_decode(-1)", "SELECT * FROM idgen_decode(-1, 'twitter')",
    "SELECT idgen_span('0 s')", "SELECT idgen_span('-1 day', 'discord')",
    "SELECT idgen_encode(-1)", "SELECT idgen_encode(1, 'base64')", "SELECT idgen_parse('!!!')",
    # fixed widths: 13 characters of base32, 11 of base62, 24 hex digits, 12 bytes
    "SELECT idgen_parse('000000000000')", "SELECT idgen_parse('00000000000000')",
    "SELECT idgen_parse('8000000000000')", "SELECT idgen_parse('AzL8n0Y58m70', 'base62')",
    "SELECT idgen_parse('AzL8n0Y58m8', 'base62')",
    "SELECT 'zz'::objectid", "SELECT '0123456789abcdef012345678'::objectid",
    "SELECT '0123456789abcdef0123456'::objectid", "SELECT objectid_from_bytea('\\x00'::bytea)",
    "SELECT objectid_from_bytea('\\x0102030405060708090a0b0c0d'::bytea)",
    "SELECT objectid_from_timestamp('1969-12-31 23:59:59+00')",
    "SELECT objectid_from_timestamp('2106-02-07 06:28:16+00')",
    # one flaw at a right width; infinite and month-long times
    "SELECT idgen_parse('000000000000U')", "SELECT idgen_parse('0000000000-', 'base62')",
    "SELECT idgen_parse('000000000000', 'base62')", "SELECT '0123456789abcdef0123456g'::objectid",
    "SELECT objectid_from_timestamp('infinity')", "SELECT idgen_from_timestamp('infinity', 'twitter')",
    "SELECT idgen_span('1 month', 'twitter')", "SELECT idgen_span('5 ms', 'sonyflake')",
]

# Calls that name no layout: the name one's beginning or one longer, and
# in one statement after the name it begins.
UNKNOWN = [
    "SELECT * FROM idgen_decode(1, 'pgedg')", "SELECT idgen_from_timestamp(now(), 'twitte')",
    "SELECT idgen_span('1 day', 'idgenx')",
    "SELECT count(*) FROM unnest(ARRAY['pgedge', 'pgedg']) l, idgen_decode(1, l)",
    "SELECT count(idgen_from_timestamp(now(), l)) FROM unnest(ARRAY['twitter', 'twitterx']) l",
    # README: drops a layout defined in SQL; a built-in one is none of those
    "SELECT idgen_drop_layout('nosuch')", "SELECT idgen_drop_layout('twitter')",
]

# README's answers that need no layout: the encodings' edges and the
# letters base32 reads as digits, objectid's text and bytes.
# docs/guarantees.md, Rows copied in without idgen's objects: a time ahead
# of idgen's clock by more than any bound (an hour at most) is refused as
# the caller's (22023), before any mark moves
RESUME_AHEAD = ("SELECT idgen_resume_after(now() + interval '1 millisecond' * ((SELECT setting::bigint"
                " FROM pg_settings WHERE name = 'idgen.clock_offset_ms') + 7200000))", refused_with("22023"))

EXACT = [
    ("SELECT idgen_encode(0)", "0000000000000"), ("SELECT idgen_encode(0, 'base62')", "00000000000"),
    ("SELECT idgen_encode(9223372036854775807)", "7ZZZZZZZZZZZZ"),
    ("SELECT idgen_parse('7zzzzzzzzzzzz')", (1 << 63) - 1),
    ("SELECT idgen_parse('AzL8n0Y58m7', 'base62')", (1 << 63) - 1),
    ("SELECT idgen_parse('OOOOOOOOOOOOI') + idgen_parse('000000000000l')", 2),
    ("SELECT idgen_encode(4194303) COLLATE \"C\" < idgen_encode(4194304) COLLATE \"C\"", True),
    ("SELECT '0123456789ABCDEF01234567'::objectid::text", "0123456789abcdef01234567"),
    ("SELECT encode(objectid_to_bytea('0123456789abcdef01234567'), 'hex')", "0123456789abcdef01234567"),
    ("SELECT objectid_from_bytea('\\x0102030405060708090a0b0c')::text", "0102030405060708090a0b0c"),
    # objectid: the first and last second, as seconds of Unix time in 4 bytes
    ("SELECT objectid_from_timestamp('1970-01-01+00')::text", "000000000000000000000000"),
    ("SELECT objectid_from_timestamp('2106-02-07 06:28:15.999+00')::text", "ffffffff0000000000000000"),
    ("SELECT objectid_timestamp('ffffffffffffffffffffffff') = '2106-02-07 06:28:15+00'", True),
    # the tick containing a time with a part of a millisecond (a second) is
    # the one it began in, before 2000 (PostgreSQL's epoch) and 1970 too
    ("SELECT idgen_from_timestamp('1999-12-31 23:59:59.9995+00', 'decimal19')", 1082724799999 * 10 ** 6),
    ("SELECT idgen_from_timestamp('1969-12-31 23:59:59.9995+00', 'decimal19')", 136039999999 * 10 ** 6),
    ("SELECT objectid_from_timestamp('1999-12-31 23:59:59.5+00')::text", "386d437f0000000000000000"),
    # README's spans: a day is 86,400 s, in whole ticks
    ("SELECT idgen_span('1 day', 'twitter')", 86400000 << 22),
    ("SELECT idgen_span('1 second', 'sonyflake')", 100 << 24),
    ("SELECT idgen_span('1 day', 'decimal19')", 86400000 * 10 ** 6),
    # RFC 9562's example of a version 7 UUID, and one of version 4
    ("SELECT idgen_uuid_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f') = to_timestamp(1645557742)", True),
    ("SELECT idgen_uuid_timestamp('919108f7-52d1-4320-9bac-f847db4148a8')", None),
    # version 7 with another variant (00, 11), version 8; the last millisecond
    ("SELECT idgen_uuid_timestamp('017f22e2-79b0-7cc3-18c4-dc0c0c07398f')", None),
    ("SELECT idgen_uuid_timestamp('017f22e2-79b0-7cc3-d8c4-dc0c0c07398f')", None),
    ("SELECT idgen_uuid_timestamp('017f22e2-79b0-8cc3-98c4-dc0c0c07398f')", None),
    ("SELECT extract(epoch FROM idgen_uuid_timestamp('ffffffff-ffff-7fff-bfff-ffffffffffff')) * 1000",
     (1 << 48) - 1),
    # A NULL argument gives NULL
    ("SELECT (idgen_decode(NULL::bigint)).ts", None), ("SELECT idgen_decode(1, NULL)", None),
    ("SELECT idgen_from_timestamp(NULL, 'twitter')", None), ("SELECT idgen_span(NULL, 'twitter')", None),
    ("SELECT idgen_encode(NULL)", None), ("SELECT idgen_parse(NULL, 'base62')", None),
    ("SELECT objectid_timestamp(NULL)", None),
]

# What must answer where a session generates: (the call that shows it
# does, [README's answers]).  Edges inside the ranges, NULL arguments and
# the bits of a version 7 UUID.
ANSWERS = [
    ("SELECT idgen_next('pgedge')", [
        ("SELECT idgen_next_block(4096, 'pgedge') IS NOT NULL", True),
        ("SELECT count(DISTINCT i) FROM idgen_next_batch(1000, 'pgedge') i", 1000),
        ("SELECT count(*) FROM idgen_next_batch(1, 'pgedge')", 1),
        # README: n from 1 to 1,000,000
        ("SELECT count(*) FROM idgen_next_batch(1000000, 'pgedge')", 1000000),
        ("SELECT idgen_next(NULL::text)", None), ("SELECT count(*) FROM idgen_next_batch(2, NULL)", 0),
        ("SELECT idgen_next_block(NULL, 'pgedge')", None),
        # README: a NULL argument gives NULL or no rows, in every overload
        ("SELECT idgen_next_block(1, NULL)", None), ("SELECT idgen_next_block(1, NULL, 0)", None),
        ("SELECT idgen_next(NULL, 0)", None), ("SELECT idgen_next_block(NULL::int)", None),
        ("SELECT count(*) FROM idgen_next_batch(NULL, 'pgedge')", 0),
        ("SELECT count(*) FROM idgen_next_batch(NULL, 'pgedge', 0)", 0),
        ("SELECT count(*) FROM idgen_next_batch(NULL::int)", 0)]),
    # but a NULL shard: one at random
    ("SELECT idgen_next('instagram')", [
        ("SELECT idgen_next('instagram', NULL) IS NOT NULL", True),
        ("SELECT count(*) FROM idgen_next_batch(2, 'instagram', NULL)", 2),
        ("SELECT idgen_next_block(2, 'instagram', NULL) IS NOT NULL", True)]),
    ("SELECT idgen_next()", [
        ("SELECT idgen_next_block(4096) IS NOT NULL", True),
        ("SELECT idgen_next_block(1, 'idgen') IS NOT NULL", True)]),
    ("SELECT idgen_uuidv7()", [
        ("SELECT count(*) FROM (SELECT idgen_uuidv7()::text u FROM generate_series(1, 100)) s"
         " WHERE substr(u, 15, 1) = '7' AND substr(u, 20, 1) IN ('8', '9', 'a', 'b')", 100)]),
]

# Generating calls a standby must refuse (docs/guarantees.md, A standby
# promoted with the primary's node id: a standby refuses to generate).
ON_STANDBY = [sql for _, sql in GENERATES]


def edges(layout, name):
    """A binary layout's first and last ticks and the ms on either side:
    idgen_from_timestamp() gives the smallest ID of the tick (README,
    Reference), idgen_decode() of the largest ID its last tick, and the
    ms outside are refused.  name None: the overloads without one."""
    scale, span = layout.scale["time"], 2 ** layout.widths[0]
    first, last = layout.epoch_ms, layout.time_end_ms() - layout.tick_ms
    largest = span * scale - 1
    named = "" if name is None else ", '%s'" % name

    def from_ts(ms):
        return "SELECT idgen_from_timestamp(%s%s)" % (AT_MS % ms, named)
    calls = [(from_ts(first), 0), (from_ts(last + layout.tick_ms - 1), (span - 1) * scale),
             (from_ts(first - 1), DATA_REFUSED), (from_ts(last + layout.tick_ms), DATA_REFUSED),
             ("SELECT (extract(epoch FROM ts) * 1000)::bigint FROM idgen_decode(%d%s)" % (largest, named), last)]
    if largest < (1 << 63) - 1:
        calls.append(("SELECT * FROM idgen_decode(%d%s)" % (largest + 1, named), DATA_REFUSED))
    return calls


# docs/guarantees.md, The time field: a layout whose row arrived as it was
# (under session_replication_role = replica), its epoch a day ahead of idgen's
# clock (the server's moved by idgen.clock_offset_ms) or its time field
# over, refuses on every path that starts a tick.  Each in a transaction
# that ask_inputs rolls back.
AS_IS = ("BEGIN; SET LOCAL session_replication_role = replica; INSERT INTO idgen_layout (name, epoch, fields, widths)"
         " VALUES ('chaos_as_is', %s, '{time,node,worker,sequence}', %s); SET LOCAL session_replication_role = origin;"
         " SELECT %s")
AS_IS_ROWS = [("date_trunc('second', now()) + interval '1 day' + interval '1 millisecond' * (SELECT setting::bigint"
               " FROM pg_settings WHERE name = 'idgen.clock_offset_ms')", "'{41,5,5,12}'"),
              ("'2000-01-01+00'", "'{20,5,5,12}'")]
AS_IS_CALLS = ["idgen_next('chaos_as_is')", "idgen_next_batch(3, 'chaos_as_is')::text",
               "idgen_next_block(3, 'chaos_as_is')"]


# docs/design.md, Layouts: without a node field, a worker (or else shard)
# field is split among the node ids idgen.node_bits allows; one narrower
# than that gives a node id none, and generating in it is refused.
NARROW = ("BEGIN; SELECT idgen_define_layout('chaos_narrow', '2020-01-01+00', '{time,%s,sequence}', '{40,%d,%d}');"
          " SELECT idgen_next('chaos_narrow')")

# docs/guarantees.md, A role without privileges: idgen's triggers refuse to
# run on any other table or event (39P01).  Each fired on a table of the
# probe's own, in a transaction that ask_inputs rolls back.
TRIGGERS = ("SELECT p.oid::regproc::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_depend d"
            " ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'"
            " JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'"
            " WHERE p.prorettype = 'pg_catalog.trigger'::regtype ORDER BY 1")
ELSEWHERE = ("BEGIN; CREATE TEMP TABLE chaos_elsewhere (system_identifier bigint, recorded_at timestamptz);"
             " CREATE TRIGGER chaos_elsewhere %s INSERT ON chaos_elsewhere FOR EACH %s EXECUTE FUNCTION %s();"
             " INSERT INTO chaos_elsewhere VALUES (12345, now()); SELECT 1")


def input_calls(settings):
    """The calls past the ranges, EXACT, and the edges of the binary
    built-in layouts and of idgen's own under the server's settings (by
    name, and without)."""
    calls = [(sql, REFUSED) for sql in GENERATING_OUT_OF_RANGE] + [RESUME_AHEAD] + \
        [(sql, DATA_REFUSED) for sql in OUT_OF_RANGE] + [(sql, UNKNOWN_REFUSED) for sql in UNKNOWN] + EXACT + \
        objectids.calls()
    for name, (epoch_ms, tick, radix, fields, widths) in sorted(BUILTIN.items()):
        if radix == 2:
            calls += edges(Layout(name, epoch_ms, tick, radix, fields, widths), name)
    if valid_layout_settings(settings):
        own = default_layout(epoch_date_ms(str(settings["epoch"])), int(settings["node_bits"]))
        calls += edges(own, "idgen") + edges(own, None) + shared_tables(own)
    return calls


def shared_tables(own):
    """README: idgen_layouts lists the built-in layouts as its table gives
    them, idgen's own under the settings; idgen_capacity's worker ids are
    those of the machine field's rest, but the shared one."""
    layouts = [builtin_row(Layout(n, *v)) for n, v in BUILTIN.items()] + [builtin_row(own)]
    workers = 2 ** own.widths[own.fields.index("worker")] - 1
    return [("SELECT string_agg(concat_ws(' ', name, (extract(epoch FROM epoch) * 1000)::bigint, fields, widths,"
             " (extract(epoch FROM time_unit) * 1000)::bigint, radix), '; ' ORDER BY name)"
             " FROM idgen_layouts WHERE built_in", "; ".join(sorted(layouts))),
            ("SELECT bool_and(in_use <= capacity AND (last_overflow IS NULL) = (overflows = 0))"
             " FROM idgen_capacity", True),
            ("SELECT capacity >= current_setting('idgen.max_marks')::int FROM idgen_capacity WHERE name = 'marks'",
             True)] + \
        ([("SELECT capacity FROM idgen_capacity WHERE name = 'worker_ids'", workers)] if workers else [])


def builtin_row(lay):
    return "%s %d {%s} {%s} %d %d" % (lay.name, lay.epoch_ms, ",".join(lay.fields),
                                      ",".join(map(str, lay.widths)), lay.tick_ms, lay.radix)


def answer(cur, sql):
    """("value", the first column) or (SQLSTATE, message)."""
    error = try_sql(cur, sql, None)
    return error if error else ("value", cur.fetchone()[0])


def valid_layout_settings(settings):
    """idgen.epoch and idgen.node_bits within README's ranges: idgen's own
    layout is defined (otherwise decoding refuses, which flaws.py checks)."""
    try:
        bits, epoch_ms = int(settings["node_bits"]), epoch_date_ms(str(settings["epoch"]))
    except (KeyError, ValueError):
        return False
    return 0 <= bits <= 10 and epoch_date_ms("1900-01-01") <= epoch_ms <= epoch_date_ms("2200-01-01")


ISOLATIONS = ("READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")


class Probes:
    def check_inputs(self, op):
        """After an op that made or restarted a server: in one database of
        each such live primary with idgen of this version, input_calls."""
        servers = [op[k] for k in ("c", "new", "s") if isinstance(op.get(k), str)]
        for c in sorted(set(servers)):
            if not self.live(c):
                continue
            cl = self.clusters[c]
            self.touch(c)
            for db in idgen_dbs(cl, current=True)[:1]:
                self.ask_inputs(cl, db, "%s/%s after %s at step %d" % (c, db, op["op"], self.step))

    @staticmethod
    def ask_rolled_back(cur, settings, where):
        """The calls that write, each in a transaction rolled back: in a
        layout whose row arrived as it was, in layouts whose one field
        that tells servers apart is too narrow for the server's node_bits,
        and idgen's triggers fired on a table of the probe's own."""
        cur.execute(TRIGGERS)
        calls = [(AS_IS % (epoch, widths, call), REFUSED) for epoch, widths in AS_IS_ROWS for call in AS_IS_CALLS] + \
            [(ELSEWHERE % (when, level, f), refused_with("39P01")) for (f,) in cur.fetchall()
             for when in ("BEFORE", "AFTER") for level in ("ROW", "STATEMENT")]
        if valid_layout_settings(settings) and int(settings["node_bits"]) > 0:
            bits = int(settings["node_bits"])
            calls += [(NARROW % (field, bits - 1, 62 - 40 - bits), REFUSED) for field in ("worker", "shard")]
        for sql, expected in calls:
            got = answer(cur, sql)
            cur.execute("ROLLBACK")
            input_judged(sql, expected, got, where)

    def ask_inputs(self, cl, db, where):
        conn = cl.connect(db)
        try:
            with conn.cursor() as cur:
                for sql, expected in input_calls(cl.settings):
                    input_judged(sql, expected, answer(cur, sql), where)
                    self.inputs_checked += 1
                for control, calls in ANSWERS:
                    self.ask_answers(cur, control, calls, where)
                for sql, expected, got in objectids.index_answers(cur, answer):
                    input_judged(sql, expected, got, where)
                    self.inputs_checked += 1
                self.ask_rolled_back(cur, cl.settings, where)
                if not cl.unpolled:
                    # taken, the horizon's file would hold marks of its own
                    self.horizon_warns(conn, cur, where)
        finally:
            cl.close_all([conn], db)
        self.stats_at_rollback(cl, db, where)

    def horizon_warns(self, conn, cur, where):
        """The horizon taken in each isolation level (where it answers),
        in a transaction rolled back (answers.horizon_warned)."""
        for isolation in ISOLATIONS:
            del conn.notices[:]
            got = answer(cur, "BEGIN ISOLATION LEVEL %s; SELECT idgen_horizon()" % isolation)
            try_sql(cur, "ROLLBACK", None)
            if got[0] == "value":
                horizon_warned(isolation, [n for n in conn.notices if n.startswith("WARNING")], where)
                self.inputs_checked += 1

    def ask_answers(self, cur, control, calls, where):
        """Where control answers, calls must, as README says; a refusal
        counts only if control still answers after it (a lease that ran
        out in between, say)."""
        if answer(cur, control)[0] != "value":
            return
        for sql, expected in calls:
            got = answer(cur, sql)
            if got[0] != "value" and answer(cur, control)[0] != "value":
                return
            input_judged(sql, expected, got, where)
            self.inputs_checked += 1

    def check_standby_dbs(self, s):
        """After a standby is made or restarted: ON_STANDBY in each of its
        databases with idgen."""
        if not self.live(s, "standby"):
            return
        for db in idgen_dbs(self.clusters[s]):
            self.check_standby(s, db)

    def check_standby(self, s, db):
        """Generation on a standby, each way of ON_STANDBY, is refused."""
        try:
            conn = self.clusters[s].connect(db)
        except psycopg2.Error as e:
            self.refusals["generation on a standby: no session (%s)" % (e.pgcode or "none")] += 1
            return
        try:
            with conn.cursor() as cur:
                for sql in ON_STANDBY:
                    where = "%s/%s at step %d" % (s, db, self.step)
                    error = try_sql(cur, sql, None)
                    standby_refused(sql, error, where)
                    refusal_coded(self.error_codes, error[0], error[1], "%s: %s" % (where, sql))
                    self.refusals["generation on a standby"] += 1
        finally:
            conn.close()
