#!/usr/bin/python3
"""Targeted fuzzer of idgen, run by scripts/fuzz against a prepared database
(test/fuzz/setup.sql).

Calls every function of the extension, found in the catalog, with random and
edge values of each argument type, as the unprivileged role fuzz and as the
superuser; feeds objectid random text and wrong-length binary COPY data;
defines random layouts and generates, decodes and converts in them; writes
idgen_layout directly (SQL, text and binary COPY with hand-made arrays,
intervals and timestamps); puts idgen_layout_check() in triggers on other
tables; interleaves layout changes between two sessions; and runs objectid
index, sort and hash queries.

Any SQL error is expected.  What counts:
  - a crash: the connection is lost and the server log shows a backend
    terminated by a signal (or an abnormal exit, or a PANIC); the query that
    was running is kept with the log's lines;
  - an internal error (SQLSTATE XX000): a finding, kept with its query.

Prints a report; exits 0 with or without findings (scripts/fuzz decides).
"""

import argparse
import collections
import io
import json
import os
import random
import re
import struct
import time

import psycopg2
import psycopg2.extensions

FIELD_KINDS = ["time", "node", "worker", "sequence", "shard", "random"]
BUILTIN_LAYOUTS = ["idgen", "twitter", "discord", "sonyflake", "instagram",
                   "redis-borrow", "decimal19", "js53"]
SETUP_LAYOUTS = ["orders", "ledger", "shardy", "rnd", "slow", "dec-small"]   # layouts.sql
# Column names and types of idgen_layout, which its trigger reads.
LAYOUT_COLUMNS = [("name", "text"), ("epoch", "timestamptz"), ("fields", "text[]"),
                  ("widths", "int[]"), ("time_unit", "interval"), ("radix", "int")]
OTHER_TYPES = ["text", "int", "bigint", "smallint", "timestamptz", "timestamp", "interval",
               "text[]", "int[]", "bigint[]", "bytea", "bool", "numeric", '"char"',
               "name", "objectid", "uuid", "jsonb", "int[][]"]
# Puts back the layouts of test/fuzz/setup.sql, which the tables' defaults use.
LAYOUTS_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layouts.sql")
CRASH_BUDGET = 2          # crashes of one shape before that shape is skipped
STATEMENT_TIMEOUT = "2s"


def lit(s):
    """A SQL string literal (standard_conforming_strings is on)."""
    return "'" + s.replace("'", "''") + "'"


def ident(s):
    return '"' + s.replace('"', '""') + '"'


class Values:
    """SQL expressions of random and edge values, by type."""

    def __init__(self, rng, sockdir, port):
        self.r = rng
        self.sockdir = sockdir
        self.port = port
        self.layouts = list(SETUP_LAYOUTS)   # defined ones, kept up to date

    def choice(self, *options):
        return self.r.choice(options)

    # -- integers
    def bigint(self):
        r = self.r
        p = r.random()
        if p < 0.35:
            return str(r.choice([0, 1, -1, 2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1,
                                 2**53 - 1, 2**53, 2**53 + 1, 2**62, 2**41 - 1, 2**41,
                                 2**40, 2**32, 2**31, 4095, 4096, 999, 1000, 10**18,
                                 10**19 - 1, 9223372036854775807, 1536, 2047, 8191]))
        if p < 0.55:
            return str(r.randint(-2**63, 2**63 - 1))
        if p < 0.70:
            return str(r.randint(0, 2**r.randint(1, 63)))
        if p < 0.75:
            return str(r.randint(-1000, 1000))
        if p < 0.80:
            return "NULL"
        return r.choice([
            "idgen_next()", "idgen_next('js53')", "(SELECT max(id) FROM orders)",
            "(SELECT min(id) FROM orders)", "idgen_from_timestamp(now())",
            "idgen_from_timestamp(now(), %s)" % lit(self.layout_name()),
            "idgen_next(%s)" % lit(self.layout_name()),
            "(idgen_next() # (1::bigint << %d))" % r.randint(0, 62),
            "(SELECT id FROM ledger ORDER BY random() LIMIT 1)",
            "idgen_parse(%s)" % lit(self.crockford()),
        ])

    def integer(self):
        r = self.r
        p = r.random()
        if p < 0.5:
            return str(r.choice([0, 1, -1, 2, 3, 9, 10, 12, 13, 16, 19, 20, 31, 32, 40, 41,
                                 53, 62, 63, 64, 65, 1000, 1000000, 1000001,
                                 2**31 - 1, -2**31, 2**30]))
        if p < 0.8:
            return str(r.randint(-100, 100))
        if p < 0.9:
            return str(r.randint(-2**31, 2**31 - 1))
        return "NULL"

    def boolean(self):
        return self.choice("true", "false", "NULL")

    # -- text
    def layout_name(self):
        r = self.r
        p = r.random()
        if p < 0.4:
            return r.choice(BUILTIN_LAYOUTS)
        if p < 0.8 and self.layouts:
            return r.choice(self.layouts)
        return r.choice(["IDGEN", "Twitter", "js53 ", " js53", "js5", "nope", "",
                         "idgen\x01", "a" * 63, "a" * 64, "a" * 200, "décimal",
                         "orders;drop", "z" + "9" * 62, "-", "_x", "redis_borrow"])

    def crockford(self):
        r = self.r
        alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyzILOilo"
        n = r.choice([13, 13, 11, 11, 12, 14, 10, 0, 1, 26])
        s = "".join(r.choice(alphabet) for _ in range(n))
        return r.choice([s, s, "7ZZZZZZZZZZZZ", "8000000000000", "ZZZZZZZZZZZZZ",
                         "zzzzzzzzzzz", "AzL8n0Y58m7", "LygHa16AHYF", "LygHa16AHYG",
                         "0000000000000", "-000000000001", "+000000000001",
                         "0000000000000\n", " 000000000000"])

    def text(self):
        r = self.r
        p = r.random()
        if p < 0.25:
            return lit(self.layout_name())
        if p < 0.4:
            return lit(r.choice(["base32", "base62", "BASE32", "Base62", "base64", "hex",
                                 "", "base32 ", "base3", "crockford"]))
        if p < 0.55:
            return lit(self.crockford())
        if p < 0.65:
            return lit(self.hexstring())
        if p < 0.75:
            n = r.randint(0, 40)
            return lit("".join(chr(r.randint(32, 126)) for _ in range(n)))
        if p < 0.85:
            return lit(r.choice(["é", "日本語", "\U0001F600", "\u200b", "ÿ" * 13,
                                 "Ⅼ" * 13, "٣" * 11, "ǅ", "\u00a0" * 12]))
        return r.choice([
            "repeat('a', 1000000)", "repeat('0', 100000)", "repeat('é', 63)",
            "E'\\x01'", "E'\\t'", "E'\\x7f'", "chr(1)", "chr(128)", "E'js53\\n'",
            "''", "NULL", "repeat('z', 64)", "repeat(' ', 13)",
            "idgen_encode(idgen_next())", "idgen_encode(idgen_next(), 'base62')",
            "(SELECT name FROM idgen_layout ORDER BY random() LIMIT 1)",
        ])

    def hexstring(self):
        r = self.r
        n = r.choice([24, 24, 24, 23, 25, 0, 12, 48, 26])
        s = "".join(r.choice("0123456789abcdefABCDEF") for _ in range(n))
        if r.random() < 0.3 and s:
            i = r.randrange(len(s))
            s = s[:i] + r.choice("gG xz-\t\u00e9\x7f") + s[i + 1:]
        return r.choice([s, s, s, " " + s, s + " ", "0x" + s, "\\x" + s, s.upper()])

    def cstring(self):
        return self.text()

    def name(self):
        return lit(self.r.choice(["id", "note", "legacy_id", "item", "oid", "xmin", "ctid",
                                  "", "a" * 70, "ID", "qty", "tableoid", "k", "v"]))

    # -- time
    def timestamptz(self):
        r = self.r
        p = r.random()
        if p < 0.45:
            return lit(r.choice([
                "infinity", "-infinity", "epoch", "1900-01-01+00", "1899-12-31 23:59:59.999+00",
                "1970-01-01+00", "1969-12-31 23:59:59.999999+00", "2024-01-01+00",
                "2023-12-31 23:59:59.999999+00", "2093-09-06 15:47:35.551+00",
                "2093-09-06 15:47:35.552+00", "2106-02-07 06:28:15+00",
                "2106-02-07 06:28:16+00", "2200-01-01+00", "9999-12-31 23:59:59.999+00",
                "10000-01-01+00", "294276-12-31 23:59:59.999999+00",
                "4713-01-01 00:00:00+00 BC", "2010-11-04 01:42:54.657+00",
                "2014-09-01+00", "2011-08-24 21:07:01.721+00", "2046-06-27+00",
                "2058-11-03+00", "2257-12-19+00", "1965-09-09 11:06:40+00",
                "2020-01-01 00:00:00.0005+00"])) + "::timestamptz"
        if p < 0.65:
            return "now() + %s" % self.interval_value()
        if p < 0.85:
            return "to_timestamp(%r)" % r.uniform(-2.3e9, 2.6e11)
        if p < 0.9:
            return "NULL"
        return r.choice(["now()", "clock_timestamp()", "statement_timestamp() - interval '1 ms'",
                         "(SELECT min(at) FROM events)", "(SELECT max(at) FROM events)",
                         "idgen_uuid_timestamp(idgen_uuidv7())",
                         "(idgen_decode(idgen_next())).ts"])

    def interval_value(self):
        r = self.r
        if r.random() < 0.6:
            return lit(r.choice([
                "1 ms", "1 millisecond", "10 ms", "100 ms", "1 second", "1001 ms", "999 microseconds",
                "1.5 ms", "0", "-1 ms", "1 month", "1 day", "1 mon -30 days", "2147483647 days",
                "-2147483648 days", "2147483647 months", "178000000 years", "1 day -86399999 ms",
                "00:00:00.001", "0.001", "1 microsecond", "1000 ms", "2 ms", "24:00:00",
                "-178000000 years", "2562047788 hours", "1 ms 1 microsecond",
                "100 years"])) + "::interval"
        n = r.choice([r.randint(-5000, 5000), r.randint(-2**40, 2**40), r.randint(1, 1000)])
        return "make_interval(secs => %s)" % (n / 1000.0)

    def interval(self):
        if self.r.random() < 0.05:
            return "NULL"
        return self.interval_value()

    # -- arrays
    def fields_list(self):
        r = self.r
        kinds = FIELD_KINDS[1:]
        r.shuffle(kinds)
        fields = ["time"] + kinds[:r.randint(0, 5)]
        if r.random() < 0.15:
            r.shuffle(fields)
        if r.random() < 0.1:
            fields.append(r.choice(FIELD_KINDS + ["seq", "TIME", "", "time ", "timé", None]))
        if r.random() < 0.05:
            fields = fields * 2
        return fields

    def widths_for(self, fields, radix):
        r = self.r
        total = r.choice([63, 63, 62, 53, 64, 19, 18, 10]) if radix == 2 else r.choice([19, 18, 15, 20])
        if r.random() < 0.15:
            return [r.choice([0, 1, -1, 31, 32, 63, 64, 2**31 - 1, -2**31, 9, 10])
                    for _ in fields]
        widths = []
        rest = total
        for i, f in enumerate(fields):
            left = len(fields) - i - 1
            if left == 0:
                w = rest
            elif f == "time":
                w = max(1, rest - r.randint(left, left * (12 if radix == 2 else 3)))
            else:
                w = r.randint(0, max(1, min(rest - left, 31 if radix == 2 else 9)))
            widths.append(w)
            rest -= w
        if r.random() < 0.1:
            widths.append(r.randint(0, 20))
        if r.random() < 0.1 and widths:
            widths.pop()
        return widths

    def array_literal(self, elems, elemtype):
        parts = ["NULL" if e is None else
                 (lit(e) if elemtype == "text" else str(e)) for e in elems]
        return "ARRAY[%s]::%s[]" % (", ".join(parts), elemtype)

    def text_array(self):
        r = self.r
        p = r.random()
        if p < 0.6:
            return self.array_literal(self.fields_list(), "text")
        return r.choice([
            "'{}'::text[]", "'{{time,node},{worker,sequence}}'::text[]",
            "'[0:3]={time,node,worker,sequence}'::text[]",
            "'[-2147483648:-2147483645]={time,node,worker,sequence}'::text[]",
            "'[2147483646:2147483647]={time,sequence}'::text[]",
            "ARRAY[NULL]::text[]", "ARRAY[NULL, 'time']::text[]", "NULL::text[]",
            "'{{{{{{time}}}}}}'::text[]", "array_fill('time'::text, ARRAY[7])",
            "array_fill('sequence'::text, ARRAY[2, 2])",
            "ARRAY[repeat('x', 100000)]", "'{time,\"\"}'::text[]",
            "string_to_array('time,node,worker,sequence,shard,random,time', ',')",
        ])

    def int_array(self):
        r = self.r
        p = r.random()
        if p < 0.6:
            return self.array_literal(self.widths_for(self.fields_list(), r.choice([2, 10])),
                                      "int")
        return r.choice([
            "'{}'::int[]", "'{{41,10},{12,0}}'::int[]", "'[0:3]={41,5,5,12}'::int[]",
            "'[-2147483648:-2147483645]={41,5,5,12}'::int[]", "ARRAY[NULL]::int[]",
            "ARRAY[41, NULL, 12]::int[]", "NULL::int[]", "'{{{{{{41}}}}}}'::int[]",
            "array_fill(0, ARRAY[6])", "array_fill(2147483647, ARRAY[2])",
            "array_fill(-2147483648, ARRAY[4])", "ARRAY[63]", "ARRAY[64]", "ARRAY[1, 62]",
            "ARRAY[19]", "ARRAY[20, 0]",
        ])

    def conninfo_array(self):
        """Connection strings for idgen_check_nodes: local sockets only."""
        r = self.r
        me = "host=%s port=%s" % (self.sockdir, self.port)
        options = [me + " dbname=target user=postgres", me + " dbname=target user=fuzz",
                   me + " dbname=smith", me + " dbname=nope", "host=/nonexistent",
                   me + " connect_timeout=1", "", "x", "==", "port=1 host=/tmp",
                   me + " options='-c statement_timeout=1'", me + " user=nobody",
                   "postgresql:///target?host=%s&port=%s" % (self.sockdir, self.port),
                   me + " dbname='" + "a" * 80 + "'"]
        elems = [r.choice(options + [None]) for _ in range(r.randint(0, 5))]
        if r.random() < 0.1:
            return r.choice(["'{}'::text[]", "NULL::text[]", "ARRAY[[%s]]" % lit(me)])
        return self.array_literal(elems, "text")

    # -- other types
    def objectid(self):
        r = self.r
        p = r.random()
        if p < 0.5:
            return lit("".join(r.choice("0123456789abcdef") for _ in range(24))) + "::objectid"
        if p < 0.7:
            return lit(r.choice(["000000000000000000000000", "ffffffffffffffffffffffff",
                                 "7fffffff0000000000000000", "80000000ffffffffffffffff",
                                 "FFFFFFFFFFFFFFFFFFFFFFFF"])) + "::objectid"
        if p < 0.8:
            return "objectid()"
        if p < 0.9:
            return "(SELECT oid FROM docs ORDER BY random() LIMIT 1)"
        return "NULL::objectid"

    def bytea(self):
        r = self.r
        n = r.choice([12, 12, 12, 0, 1, 11, 13, 24, r.randint(0, 40)])
        return "'\\x%s'::bytea" % "".join("%02x" % r.randint(0, 255) for _ in range(n))

    def uuid(self):
        r = self.r
        p = r.random()
        if p < 0.6:
            b = bytearray(r.getrandbits(8) for _ in range(16))
            if r.random() < 0.7:
                b[6] = (b[6] & 0x0F) | (r.choice([7, 7, 7, 4, 0, 15, 8]) << 4)
            if r.random() < 0.7:
                b[8] = (b[8] & 0x3F) | 0x80
            h = b.hex()
            return "'%s-%s-%s-%s-%s'::uuid" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
        return r.choice(["'ffffffff-ffff-7fff-bfff-ffffffffffff'::uuid",
                         "'00000000-0000-7000-8000-000000000000'::uuid",
                         "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid",
                         "'00000000-0000-0000-0000-000000000000'::uuid",
                         "idgen_uuidv7()", "gen_random_uuid()", "NULL::uuid",
                         "(SELECT u FROM events ORDER BY random() LIMIT 1)"])

    def regclass(self):
        return lit(self.r.choice(["orders", "legacy", "legacy_child", "idgen_layout", "pg_class",
                                  "order_times", "docs", "events", "js_items", "ledger",
                                  "fuzz.adopt_1", "fuzz.adopt_2", "fuzz.adopt_3",
                                  "0", "12345678", "pg_catalog.pg_proc", "idgen_workers",
                                  "fuzz.trig_1"])) + "::regclass"

    def for_type(self, typname):
        gen = {
            "bigint": self.bigint, "integer": self.integer, "smallint": self.integer,
            "text": self.text, "cstring": self.cstring, "name": self.name,
            "boolean": self.boolean, "timestamp with time zone": self.timestamptz,
            "interval": self.interval, "text[]": self.text_array, "integer[]": self.int_array,
            "objectid": self.objectid, "bytea": self.bytea, "uuid": self.uuid,
            "regclass": self.regclass,
        }.get(typname)
        if gen is None:
            return "NULL"
        return gen()


class Lost(Exception):
    """The connection went away while a query ran."""


class Skip(Exception):
    """This shape of test crashed the server often enough: not again."""


class Session:
    """One connection, reopened when lost."""

    def __init__(self, fuzzer, user):
        self.f = fuzzer
        self.user = user
        self.conn = None

    def connect(self):
        if self.conn is not None and not self.conn.closed:
            return
        # The server may be restarting after a crash: wait for it.
        deadline = time.time() + 60
        while True:
            try:
                self.conn = psycopg2.connect(host=self.f.args.host, port=self.f.args.port,
                                             dbname=self.f.args.dbname, user=self.user,
                                             application_name="idgen-fuzz",
                                             options="-c statement_timeout=%s" % STATEMENT_TIMEOUT)
                break
            except psycopg2.OperationalError as e:
                if time.time() > deadline:
                    raise SystemExit("cannot connect to the server: %s" % e)
                time.sleep(0.2)
        self.conn.autocommit = True

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg2.Error:
                pass
        self.conn = None


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.r = random.Random(args.seed)
        self.v = Values(self.r, args.host, args.port)
        self.su = Session(self, "postgres")
        self.fz = Session(self, "fuzz")
        self.queries = 0
        self.by_action = collections.Counter()
        self.action_seconds = collections.Counter()
        self.slow = []                              # (seconds, query) over 0.5 s
        self.sqlstates = collections.Counter()
        self.internal = collections.OrderedDict()   # message -> (query, count)
        self.crashes = []                           # dicts
        self.lost_without_crash = []
        self.crashes_by_shape = collections.Counter()
        self.skipped_shapes = set()
        self.log_offset = self.log_size()
        self.functions = []
        self.counter = 0
        self.shape = None

    # -- running queries
    def log_size(self):
        try:
            with open(self.args.log, "rb") as f:
                f.seek(0, 2)
                return f.tell()
        except OSError:
            return 0

    def new_log(self):
        try:
            with open(self.args.log, "rb") as f:
                f.seek(self.log_offset)
                data = f.read()
        except OSError:
            return ""
        self.log_offset += len(data)
        return data.decode("utf-8", "replace")

    def session(self, superuser):
        s = self.su if superuser else self.fz
        s.connect()
        return s

    def run(self, sql, superuser=False, copy_data=None, fetch=False, session=None):
        """Runs one statement; returns its rows if fetch (else []), None on any SQL error."""
        s = session or self.session(superuser)
        s.connect()
        if s.conn.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_INERROR \
                and not sql.startswith(("ROLLBACK", "COMMIT")):
            return None     # the transaction failed already: skip to its end
        self.queries += 1
        cur = s.conn.cursor()
        started = time.time()
        try:
            if copy_data is not None:
                cur.copy_expert(sql, io.BytesIO(copy_data) if isinstance(copy_data, bytes)
                                else io.StringIO(copy_data))
                return []
            cur.execute(sql)
            if fetch and cur.description is not None:
                return cur.fetchmany(1000)
            return []
        except psycopg2.Error as e:
            if s.conn.closed or e.pgcode is None and isinstance(
                    e, (psycopg2.OperationalError, psycopg2.InterfaceError)):
                self.connection_lost(sql, str(e))
                raise Lost()
            self.sqlstates[e.pgcode] += 1
            if e.pgcode == "XX000":
                msg = (e.diag.message_primary or str(e)).strip()
                key = re.sub(r"\d+", "N", msg)
                if key in self.internal:
                    self.internal[key][2] += 1
                else:
                    self.internal[key] = [msg, sql, 1]
                    self.say("XX000 %s\n  query: %s" % (msg, shorten(sql)))
            return None
        finally:
            took = time.time() - started
            if took > 0.5:
                self.slow.append((took, sql))
            try:
                cur.close()
            except psycopg2.Error:
                pass

    def try_run(self, sql, superuser=False, **kw):
        """As run(), but a lost connection is recorded and swallowed."""
        try:
            return self.run(sql, superuser, **kw)
        except Lost:
            return None

    def connection_lost(self, sql, error):
        for s in (self.su, self.fz) + tuple(self.extra_sessions()):
            s.close()
        # The client can see the connection close before the postmaster has
        # reaped the backend (and logged how it ended): wait until the server
        # answers queries again, and for the log to tell a crash.
        crash_re = re.compile(r"(?m)^.*(terminated by signal|terminated by exception|"
                              r"exited with exit code [^01]|PANIC:).*$")
        log = ""
        crash = None
        for attempt in range(10):
            time.sleep(0.2)
            try:
                self.su.connect()
                self.su.conn.cursor().execute("SELECT 1")
            except psycopg2.Error:
                self.su.close()
                continue
            log += self.new_log()
            crash = crash_re.search(log)
            if crash is not None or attempt >= 3:
                break
        if crash is None:
            self.lost_without_crash.append((sql, error.strip()))
            return
        detail = re.search(r"(?m)^.*Failed process was running: .*$", log)
        shape = self.shape or "?"
        self.crashes_by_shape[shape] += 1
        self.crashes.append({"shape": shape, "query": sql, "error": error.strip(),
                             "log": crash.group(0).strip(),
                             "running": detail.group(0).strip() if detail else ""})
        self.say("CRASH (%s): %s\n  query: %s\n  log: %s" % (
            shape, error.strip().splitlines()[0] if error.strip() else "", shorten(sql),
            crash.group(0).strip()))
        if self.crashes_by_shape[shape] >= CRASH_BUDGET:
            self.skipped_shapes.add(shape)
            self.say("  (shape %s crashed %d times: skipped from now on)" % (shape, CRASH_BUDGET))

    def begin_shape(self, shape):
        """Names what the next queries test, for grouping crashes."""
        self.shape = shape
        if shape in self.skipped_shapes:
            raise Skip()

    def extra_sessions(self):
        return getattr(self, "_extra", [])

    def say(self, msg):
        print(msg, flush=True)

    def unique(self, prefix):
        self.counter += 1
        return "%s_%d" % (prefix, self.counter)

    # -- the catalog
    def load_functions(self):
        rows = self.run("""
            SELECT p.oid::regprocedure::text, p.proname,
                   coalesce(array_agg(format_type(t.typ, NULL) ORDER BY t.ord)
                            FILTER (WHERE t.typ IS NOT NULL), '{}'),
                   p.pronargdefaults, coalesce(p.proargnames, '{}'), p.prorettype::regtype::text,
                   p.proretset
            FROM pg_proc p
            JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                 AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
            LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY t(typ, ord) ON true
            GROUP BY p.oid ORDER BY 1""", superuser=True, fetch=True)
        for sig, name, argtypes, ndefaults, argnames, rettype, retset in rows:
            self.functions.append({"sig": sig, "name": name, "args": list(argtypes),
                                   "ndefaults": ndefaults, "argnames": list(argnames),
                                   "rettype": rettype, "retset": retset})
        return len(self.functions)

    # -- actions
    def act_call_function(self):
        """Every function of the extension with random and edge arguments."""
        r, v = self.r, self.v
        f = r.choice(self.functions)
        superuser = r.random() < 0.4
        nargs = len(f["args"])
        n = r.randint(nargs - f["ndefaults"], nargs)
        if r.random() < 0.05:
            n = r.randint(0, nargs + 2)
        args = []
        for i in range(n):
            typ = f["args"][i] if i < nargs else r.choice(["bigint", "text", "integer"])
            if f["name"] == "idgen_check_nodes":
                val = v.conninfo_array()
            else:
                val = v.for_type(typ)
            if r.random() < 0.85 and i < nargs and not val.endswith("[]") and typ != "cstring":
                val = "(%s)::%s" % (val, typ)
            if r.random() < 0.1 and i < len(f["argnames"]) and f["argnames"][i]:
                val = "%s => %s" % (f["argnames"][i], val)
            args.append(val)
        if any("=>" in a for a in args):
            # named notation: named arguments after positional ones
            args.sort(key=lambda a: "=>" in a)
        call = "%s(%s)" % (f["name"], ", ".join(args))
        shape_kind = r.random()
        if f["retset"] or f["rettype"] == "record" or shape_kind < 0.2:
            sql = "SELECT * FROM %s" % call
        elif shape_kind < 0.35:
            sql = "SELECT %s FROM generate_series(1, %d)" % (call, r.randint(2, 50))
        elif shape_kind < 0.45 and n > 0:
            # The same call site with a different value in each row.
            i = r.randrange(n)
            typ = f["args"][i] if i < nargs else "text"
            if "=>" in args[i]:
                sql = "SELECT %s" % call
            else:
                rows = ", ".join("((%s)::%s)" % (v.for_type(typ) if f["name"] != "idgen_check_nodes"
                                                else v.conninfo_array(), typ)
                                 for _ in range(r.randint(2, 6)))
                args2 = list(args)
                args2[i] = "x.a"
                sql = "SELECT %s(%s) FROM (VALUES %s) x(a)" % (f["name"], ", ".join(args2), rows)
        else:
            sql = "SELECT %s" % call
        self.begin_shape("call:" + f["sig"] + (":su" if superuser else ":fuzz"))
        self.run(sql, superuser)

    def act_objectid_text(self):
        """objectid_in with random strings, as casts and through text COPY."""
        r = self.r
        strings = [self.v.hexstring() for _ in range(r.randint(1, 8))]
        self.begin_shape("objectid_in")
        if r.random() < 0.6:
            for s in strings:
                self.run("SELECT %s::objectid, %s::text::objectid::bytea" % (lit(s), lit(s)))
        else:
            table = "fuzz.oid_text"
            self.run("CREATE TABLE IF NOT EXISTS %s (o objectid, b bigint)" % table)
            data = "".join("%s\t%d\n" % (s.replace("\\", "\\\\").replace("\t", "\\t")
                                        .replace("\n", "\\n"), i)
                           for i, s in enumerate(strings))
            self.run("COPY %s FROM STDIN" % table, copy_data=data)
            self.run("DELETE FROM %s" % table)

    def act_objectid_binary_copy(self):
        """Binary COPY of objectid values of every length, and broken files."""
        r = self.r
        self.begin_shape("objectid_recv")
        self.run("CREATE TABLE IF NOT EXISTS fuzz.oid_bin (o objectid, n bigint, u uuid)")
        rows = []
        for _ in range(r.randint(1, 5)):
            length = r.choice([12, 12, 0, 1, 11, 13, 16, 24, r.randint(0, 64)])
            o = bytes(r.getrandbits(8) for _ in range(length))
            fields = [o, struct.pack(">q", r.randint(-2**63, 2**63 - 1)),
                      bytes(r.getrandbits(8) for _ in range(16))]
            rows.append(fields)
        data = pgcopy_binary(rows)
        if r.random() < 0.2:
            data = mutate(data, r)
        self.run("COPY fuzz.oid_bin FROM STDIN (FORMAT binary)", copy_data=data)
        self.run("SELECT o, o::text, objectid_timestamp(o), o::bytea FROM fuzz.oid_bin")
        self.run("DELETE FROM fuzz.oid_bin")
        # objectid_send
        self.run("COPY (SELECT oid FROM docs ORDER BY random() LIMIT 5) TO STDOUT (FORMAT binary)",
                 copy_data=b"")

    def act_define_layout(self):
        """Random layouts, then generation, decoding and conversion in them."""
        r, v = self.r, self.v
        superuser = r.random() < 0.5
        name = r.choice([self.unique("l"), self.unique("lay-x"), r.choice(BUILTIN_LAYOUTS),
                         v.layout_name(), "L" + str(r.randint(0, 9))]) if r.random() < 0.2 \
            else self.unique("l")
        radix = r.choice([2, 2, 2, 10, 10, 3, 0, 16, -2])
        fields = v.fields_list()
        widths = v.widths_for(fields, radix)
        epoch = r.choice([
            "'2024-01-01+00'", "'1900-01-01+00'", "'1899-12-31 23:59:59+00'", "'1970-01-01+00'",
            "now() - interval '1 hour'", "now()", "now() + interval '1 day'",
            "'2020-02-29 12:34:56.789+00'", "'2020-02-29 12:34:56.7891+00'", "'infinity'",
            "date_trunc('second', now())", "'2199-12-31+00'", "'2200-01-02+00'",
            "to_timestamp(%d / 1000.0)" % r.randint(-2208988800000, 1700000000000)])
        # Long ticks are rarer: generation may wait up to a tick for the clock.
        unit = r.choice(["'1 ms'"] * 6 + ["'10 ms'"] * 2 + [
            "'1 s'", "'7 ms'", "'999 ms'", "'1001 ms'", "'0'", "'-1 ms'", "'1 month'",
            "'1.5 ms'", "'250 ms'", "'1 day'", "'2147483647 days'", "'1 ms 1 microsecond'",
            "'3 ms'"])
        sql = "SELECT idgen_define_layout(%s, %s, %s, %s, %s::interval, %d)" % (
            lit(name), epoch, v.array_literal(fields, "text"), v.array_literal(widths, "int"),
            unit, radix)
        self.begin_shape("define_layout")
        ok = self.run(sql, superuser) is not None
        if ok and name not in v.layouts:
            v.layouts.append(name)
        use = name if ok else r.choice(v.layouts)
        self.use_layout(use, superuser)
        if len(v.layouts) > 40 or (ok and r.random() < 0.3):
            victim = r.choice([n for n in v.layouts if n not in SETUP_LAYOUTS] or [None])
            if victim:
                if self.run("SELECT idgen_drop_layout(%s)" % lit(victim), True) is not None:
                    v.layouts.remove(victim)

    def use_layout(self, name, superuser):
        r, v = self.r, self.v
        L = lit(name)
        shard = v.bigint()
        for sql in r.sample([
                "SELECT idgen_next(%s)" % L,
                "SELECT idgen_next(%s, %s)" % (L, shard),
                "SELECT idgen_next(%s, %d)" % (L, r.randint(0, 2000)),
                "SELECT count(*) FROM idgen_next_batch(%d, %s)" % (r.choice([
                    r.randint(1, 10), r.randint(1, 10), r.randint(1, 3000)]), L),
                "SELECT count(*) FROM idgen_next_batch(%d, %s, %s)" % (r.randint(1, 10), L, shard),
                "SELECT * FROM idgen_decode(idgen_next(%s), %s)" % (L, L),
                "SELECT * FROM idgen_decode(%s, %s)" % (v.bigint(), L),
                "SELECT idgen_from_timestamp(%s, %s)" % (v.timestamptz(), L),
                "SELECT idgen_from_timestamp(now(), %s) <= idgen_next(%s)" % (L, L),
                "SELECT (idgen_decode(idgen_from_timestamp(%s, %s), %s)).*" % (
                    v.timestamptz(), L, L),
                "SELECT a < b FROM (SELECT idgen_next(%s) a, idgen_next(%s) b) x" % (L, L),
                "SELECT idgen_encode(idgen_next(%s), 'base62')" % L,
        ], r.randint(2, 6)):
            self.run(sql, superuser)

    def act_layout_table(self):
        """idgen_layout written directly: SQL, in transactions, text COPY."""
        r, v = self.r, self.v
        superuser = r.random() < 0.6
        s = self.session(superuser)
        name = self.unique("t")
        self.begin_shape("layout_table")
        row = "(%s, %s, %s, %s, %s, %s)" % (lit(name), v.timestamptz(), v.text_array(),
                                            v.int_array(), v.interval(), v.integer())
        statements = r.choice([
            ["INSERT INTO idgen_layout VALUES %s" % row],
            ["INSERT INTO idgen_layout VALUES %s ON CONFLICT (name) DO UPDATE SET widths = "
             "excluded.widths, fields = excluded.fields" % row.replace(lit(name), lit(
                 r.choice(v.layouts)))],
            ["UPDATE idgen_layout SET widths = %s WHERE name = %s" % (v.int_array(),
                                                                      lit(r.choice(v.layouts)))],
            ["UPDATE idgen_layout SET fields = %s, widths = %s WHERE name = %s" % (
                v.text_array(), v.int_array(), lit(r.choice(v.layouts)))],
            ["UPDATE idgen_layout SET epoch = %s, time_unit = %s, radix = %s WHERE name = %s" % (
                v.timestamptz(), v.interval(), v.integer(), lit(r.choice(v.layouts)))],
            ["UPDATE idgen_layout SET name = %s WHERE name = %s" % (
                lit(v.layout_name()), lit(r.choice(v.layouts)))],
            ["DELETE FROM idgen_layout WHERE name = %s" % lit(r.choice(v.layouts))],
            ["TRUNCATE idgen_layout"],
            ["INSERT INTO idgen_layout SELECT %s || i, epoch, fields, widths, time_unit, radix "
             "FROM idgen_layout, generate_series(1, 3) i" % lit(name)],
            ["MERGE INTO idgen_layout l USING (VALUES %s) x(name, epoch, fields, widths, "
             "time_unit, radix) ON l.name = x.name WHEN MATCHED THEN UPDATE SET radix = x.radix "
             "WHEN NOT MATCHED THEN INSERT VALUES (x.name, x.epoch, x.fields, x.widths, "
             "x.time_unit, x.radix)" % row],
        ])
        commit = r.random() < 0.3
        try:
            self.run("BEGIN", session=s)
            if r.random() < 0.5:
                self.run("SELECT idgen_next(%s)" % lit(r.choice(v.layouts)), session=s)
            for st in statements:
                if r.random() < 0.3:
                    self.run("SAVEPOINT a", session=s)
                    self.run(st, session=s)
                    self.run("ROLLBACK TO SAVEPOINT a", session=s)
                else:
                    self.run(st, session=s)
            for _ in range(r.randint(0, 3)):
                L = lit(r.choice(v.layouts + [name]))
                self.run(r.choice(["SELECT idgen_next(%s)" % L,
                                   "SELECT * FROM idgen_decode(idgen_next(%s), %s)" % (L, L),
                                   "SELECT idgen_from_timestamp(now(), %s)" % L]), session=s)
            self.run("COMMIT" if commit else "ROLLBACK", session=s)
        except Lost:
            return
        if commit:
            self.restore_layouts()
        if r.random() < 0.3:
            # text COPY into the table
            lines = []
            for _ in range(r.randint(1, 3)):
                fields = v.fields_list()
                radix = r.choice([2, 10])
                lines.append("%s\t%s\t{%s}\t{%s}\t%s\t%d\n" % (
                    self.unique("c"), r.choice(["2024-01-01+00", "infinity", "1900-01-01+00",
                                                "2020-01-01 00:00:00.0001+00"]),
                    ",".join(f if f is not None else "NULL" for f in fields),
                    ",".join(str(w) for w in v.widths_for(fields, radix)),
                    r.choice(["1 ms", "10 ms", "1 month", "0"]), radix))
            try:
                self.run("BEGIN", session=s)
                self.run("COPY idgen_layout FROM STDIN", session=s, copy_data="".join(lines))
                self.run("ROLLBACK", session=s)
            except Lost:
                pass

    def act_layout_binary_copy(self):
        """Binary COPY into idgen_layout: arrays with any header, any interval."""
        r = self.r
        self.begin_shape("layout_binary_copy")
        superuser = r.random() < 0.6
        s = self.session(superuser)
        rows = []
        for _ in range(r.randint(1, 3)):
            fields = self.v.fields_list()
            radix = r.choice([2, 10, 2, r.randint(-5, 20)])
            widths = self.v.widths_for(fields, radix if radix in (2, 10) else 2)
            epoch_us = r.choice([
                (1704067200000 - 946684800000) * 1000, 0, -1, 2**63 - 1, -2**63, 1,
                r.randint(-2**63, 2**63 - 1), r.randint(-3000000000000, 3000000000000) * 1000])
            unit = struct.pack(">qii", r.choice([1000, 10000, 1000000, 1, 0, -1000, 2**63 - 1,
                                                 r.randint(-2**63, 2**63 - 1)]),
                               r.choice([0, 0, 1, -1, 2**31 - 1, -2**31]),
                               r.choice([0, 0, 0, 1, -1, 2**31 - 1]))
            rows.append([
                self.unique("b").encode() if r.random() < 0.9 else
                bytes(r.getrandbits(8) for _ in range(r.randint(0, 70))),
                struct.pack(">q", epoch_us),
                binary_array([f.encode() if f is not None else None for f in fields], 25, r),
                binary_array([struct.pack(">i", w) for w in widths], 23, r),
                unit,
                struct.pack(">i", radix),
            ])
        data = pgcopy_binary(rows)
        if r.random() < 0.1:
            data = mutate(data, r)
        try:
            self.run("BEGIN", session=s)
            self.run("COPY idgen_layout FROM STDIN (FORMAT binary)", session=s, copy_data=data)
            self.run("SELECT name, idgen_next(name) FROM idgen_layout", session=s)
            self.run("ROLLBACK", session=s)
        except Lost:
            pass

    def act_trigger(self):
        """idgen_layout_check() in triggers on other tables and views."""
        r, v = self.r, self.v
        superuser = r.random() < 0.6
        s = self.session(superuser)
        table = "fuzz." + self.unique("trig")
        columns_kind = r.choice(["same", "same", "retyped", "subset", "other", "extra"])
        cols = list(LAYOUT_COLUMNS)
        if columns_kind == "retyped":
            cols = [(n, t if r.random() < 0.5 else r.choice(OTHER_TYPES)) for n, t in cols]
        elif columns_kind == "subset":
            cols = r.sample(cols, r.randint(0, 5))
        elif columns_kind == "other":
            cols = [("a", r.choice(OTHER_TYPES)), ("b", "text")]
        elif columns_kind == "extra":
            cols = [("x", "int")] + cols + [("y", "text")]
            r.shuffle(cols)
        kind = r.choice(["plain", "plain", "plain", "partitioned", "view", "foreign-ish"])
        level = r.choice(["ROW", "STATEMENT"])
        timing = r.choice(["BEFORE", "AFTER"])
        events = r.sample(["INSERT", "UPDATE", "DELETE", "TRUNCATE"], r.randint(1, 4))
        if kind == "view":
            timing, level = "INSTEAD OF", "ROW"
            events = [e for e in events if e != "TRUNCATE"] or ["INSERT"]
            events = events[:1]
        if level == "ROW" and "TRUNCATE" in events:
            events.remove("TRUNCATE")
            if not events:
                events = ["INSERT"]
        if kind == "foreign-ish":
            kind = "plain"
            table = "idgen_layout"   # extra triggers on the extension's own table
        self.begin_shape("trigger:%s:%s:%s" % (level, timing, columns_kind
                                               if table != "idgen_layout" else "own"))
        coldefs = ", ".join("%s %s" % (ident(n), t) for n, t in cols)
        ddl = []
        target = table
        if table == "idgen_layout":
            pass
        elif kind == "plain":
            ddl.append("CREATE TABLE %s (%s)" % (table, coldefs))
        elif kind == "partitioned":
            ddl.append("CREATE TABLE %s (k int DEFAULT 1, %s) PARTITION BY LIST (k)" % (
                table, coldefs) if cols else "CREATE TABLE %s (k int DEFAULT 1) PARTITION BY LIST (k)"
                % table)
            ddl.append("CREATE TABLE %s_1 PARTITION OF %s FOR VALUES IN (1)" % (table, table))
            if r.random() < 0.5:
                target = table + "_1"
        elif kind == "view":
            ddl.append("CREATE TABLE %s_base (%s)" % (table, coldefs or "k int"))
            ddl.append("CREATE VIEW %s AS SELECT * FROM %s_base" % (table, table))
        when = ""
        if level == "ROW" and timing != "INSTEAD OF" and r.random() < 0.2 and events == ["INSERT"]:
            when = " WHEN (true)"
        referencing = ""
        if timing == "AFTER" and kind == "plain" and r.random() < 0.3 and len(events) == 1 \
                and events[0] in ("INSERT", "UPDATE", "DELETE"):
            referencing = " REFERENCING %s TABLE AS tt" % ("OLD" if events[0] == "DELETE" else "NEW")
        trig = self.unique("tg")
        ddl.append("CREATE TRIGGER %s %s %s ON %s%s FOR EACH %s%s EXECUTE FUNCTION "
                   "idgen_layout_check()" % (trig, timing, " OR ".join(events), target,
                                             referencing, level, when))
        names = [n for n, _ in cols]
        types = dict(cols)

        def value(n):
            t = types[n]
            if t == "text" and n == "name":
                return lit(self.unique("tr"))
            if r.random() < 0.6 and (n, t) in LAYOUT_COLUMNS:
                return {"name": lit(self.unique("tr")), "epoch": "'2024-01-01+00'",
                        "fields": "'{time,sequence}'", "widths": "'{41,22}'",
                        "time_unit": "'1 ms'", "radix": "2"}[n]
            g = {"text": v.text, "int": v.integer, "bigint": v.bigint, "smallint": v.integer,
                 "timestamptz": v.timestamptz, "interval": v.interval, "text[]": v.text_array,
                 "int[]": v.int_array, "bytea": v.bytea, "objectid": v.objectid,
                 "uuid": v.uuid}.get(t)
            return "(%s)::%s" % (g() if g else "NULL", t)

        if names:
            insert = "INSERT INTO %s (%s) VALUES (%s)" % (
                target, ", ".join(ident(n) for n in names), ", ".join(value(n) for n in names))
        else:
            insert = "INSERT INTO %s DEFAULT VALUES" % target
        dml = [insert]
        if "UPDATE" in events:
            dml.append("UPDATE %s SET %s" % (target, ", ".join(
                "%s = %s" % (ident(n), value(n)) for n in names[:2]) or "k = k"))
        if "DELETE" in events:
            dml.append("DELETE FROM %s" % target)
        if "TRUNCATE" in events and kind != "view":
            dml.append("TRUNCATE %s" % target)
        if r.random() < 0.2 and names:
            dml.append("COPY %s (%s) FROM STDIN" % (target, ", ".join(ident(n) for n in names)))
        commit = r.random() < 0.2 and table != "idgen_layout"
        try:
            self.run("BEGIN", session=s)
            for st in ddl + dml:
                if st.startswith("COPY"):
                    self.run(st, session=s, copy_data="\t".join(
                        "\\N" for _ in names) + "\n")
                else:
                    self.run(st, session=s)
            self.run("COMMIT" if commit else "ROLLBACK", session=s)
            if commit:
                self.run("DROP TABLE IF EXISTS %s_base, %s CASCADE" % (table, table),
                         session=s)
        except Lost:
            pass

    def act_interleave(self):
        """Two sessions: layout changes seen (or not) by one that has cached them."""
        r, v = self.r, self.v
        self.begin_shape("interleave")
        a = self.su
        b = self.fz if r.random() < 0.5 else self.extra_session()
        a.connect()
        b.connect()
        name = self.unique("i")
        L = lit(name)

        def define(fields, widths, epoch="2024-01-01+00", unit="1 ms", radix=2):
            return "SELECT idgen_define_layout(%s, %s, %s, %s, %s, %d)" % (
                L, lit(epoch), v.array_literal(fields, "text"), v.array_literal(widths, "int"),
                lit(unit), radix)

        layouts = [(["time", "node", "worker", "sequence"], [41, 5, 5, 12]),
                   (["time", "sequence"], [41, 22]),
                   (["time", "shard", "sequence"], [41, 13, 9]),
                   (["time", "worker", "sequence"], [20, 1, 1]),
                   (["time", "node", "sequence", "shard"], [13, 2, 1, 3])]
        steps = []
        for _ in range(r.randint(3, 10)):
            fields, widths = r.choice(layouts)
            radix = 10 if sum(widths) <= 19 and r.random() < 0.5 else 2
            steps.append(r.choice([
                (a, define(fields, widths, radix=radix)),
                (a, "SELECT idgen_drop_layout(%s)" % L),
                (a, "BEGIN"), (a, "COMMIT"), (a, "ROLLBACK"), (b, "BEGIN"), (b, "COMMIT"),
                (b, "BEGIN ISOLATION LEVEL REPEATABLE READ"),
                (b, "SELECT idgen_next(%s)" % L), (b, "SELECT idgen_next(%s, 5)" % L),
                (b, "SELECT * FROM idgen_decode(idgen_next(%s), %s)" % (L, L)),
                (b, "SELECT idgen_next(%s) FROM generate_series(1, 100)" % L),
                (a, "SELECT idgen_next(%s)" % L),
                (b, "PREPARE p%d AS SELECT idgen_next($1)" % self.counter),
                (b, "EXECUTE p%d(%s)" % (self.counter, L)),
                (a, "UPDATE idgen_layout SET widths = %s WHERE name = %s" % (
                    v.array_literal(widths, "int"), L)),
                (a, "UPDATE idgen_layout SET epoch = epoch - interval '1 day' WHERE name = %s" % L),
            ]))
        # Within one statement: drop and define while generating.
        if r.random() < 0.3:
            fields, widths = r.choice(layouts)
            steps.append((a, "SELECT idgen_next(%s), idgen_drop_layout(%s), %s, idgen_next(%s) "
                          "FROM generate_series(1, 3)" % (L, L, define(fields, widths)[7:], L)))
        try:
            for s, sql in steps:
                self.run(sql, session=s)
        except Lost:
            return
        for s in (a, b):
            try:
                if not s.conn.closed and s.conn.get_transaction_status() != \
                        psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                    self.run("ROLLBACK", session=s)
                self.run("DEALLOCATE ALL", session=s)
            except Lost:
                return
        self.try_run("SELECT idgen_drop_layout(%s)" % L, True)

    def extra_session(self):
        if not hasattr(self, "_extra"):
            self._extra = [Session(self, "fuzz")]
        return self._extra[0]

    def act_objectid_queries(self):
        """objectid's operators through every index, sort and hash path."""
        r, v = self.r, self.v
        self.begin_shape("objectid_queries")
        settings = r.sample(["enable_seqscan", "enable_indexscan", "enable_bitmapscan",
                             "enable_hashjoin", "enable_mergejoin", "enable_hashagg",
                             "enable_sort", "enable_indexonlyscan", "enable_nestloop"],
                            r.randint(0, 4))
        s = self.session(r.random() < 0.3)
        op = r.choice(["=", "<>", "<", "<=", ">", ">="])
        queries = [
            "SELECT count(*) FROM docs WHERE oid %s %s" % (op, v.objectid()),
            "SELECT count(*) FROM events WHERE oid %s %s" % (op, v.objectid()),
            "SELECT oid FROM docs ORDER BY oid %s LIMIT %d" % (r.choice(["", "DESC"]), r.randint(1, 50)),
            "SELECT count(DISTINCT oid) FROM events",
            "SELECT oid, count(*) FROM events GROUP BY oid ORDER BY 2 DESC LIMIT 3",
            "SELECT count(*) FROM docs a JOIN events b ON a.oid = b.oid",
            "SELECT count(*) FROM (SELECT oid FROM docs LIMIT 200) a JOIN (SELECT oid FROM "
            "events ORDER BY random() LIMIT 200) b ON a.oid %s b.oid" % op,
            "SELECT count(*) FROM events WHERE oid BETWEEN %s AND %s" % (v.objectid(), v.objectid()),
            "SELECT count(*) FROM events WHERE oid = ANY (ARRAY[%s, %s, %s])" % (
                v.objectid(), v.objectid(), v.objectid()),
            "SELECT count(*) FROM (SELECT substring(decode(md5(i::text), 'hex') FROM 1 FOR 12)"
            "::objectid o FROM generate_series(1, %d) i ORDER BY 1) x" % r.choice([
                r.randint(1, 1000), r.randint(1, 1000), r.randint(1, 100000)]),
            "SELECT objectid_hash_extended(%s, %s), objectid_hash(%s)" % (
                v.objectid(), v.bigint(), v.objectid()),
            "SELECT count(*) FROM docs WHERE oid IN (SELECT oid FROM events)",
            "SELECT objectid_cmp(a, b), a < b, a = b FROM (SELECT %s a, %s b) x" % (
                v.objectid(), v.objectid()),
            "SELECT %s::bytea::objectid" % v.bytea(),
            "SELECT objectid_from_timestamp(%s)" % v.timestamptz(),
            "SELECT objectid_timestamp(objectid_from_timestamp(%s))" % v.timestamptz(),
            "SELECT count(*) FROM events WHERE oid >= objectid_from_timestamp(%s)" % v.timestamptz(),
            "SELECT * FROM docs WHERE oid = %s::text::objectid" % v.objectid(),
            "SELECT count(*) FROM docs WHERE uid > %s" % v.uuid(),
            "SELECT idgen_uuid_timestamp(u), u FROM events ORDER BY u LIMIT 3",
            "SELECT count(*) FROM orders WHERE id >= idgen_from_timestamp(%s)" % v.timestamptz(),
            "SELECT d.* FROM orders o, idgen_decode(o.id) d ORDER BY o.id DESC LIMIT 3",
            # layouts read in parallel workers, when parallel query is forced
            "SELECT count(*) FROM events e, idgen_decode(e.id %% (1::bigint << 40), %s) d "
            "WHERE d.ts IS NOT NULL" % lit(v.layout_name()),
            "SELECT count(*), max(idgen_from_timestamp(at, %s)) FROM events WHERE at < now()"
            % lit(v.layout_name()),
            "SELECT max(objectid_timestamp(oid)), count(DISTINCT idgen_uuid_timestamp(u)) FROM events",
        ]
        dml = [
            "INSERT INTO docs (oid, body) VALUES (%s, 'fuzz') ON CONFLICT DO NOTHING" % v.objectid(),
            "INSERT INTO docs (body) SELECT 'fuzz' FROM generate_series(1, %d)" % r.randint(1, 500),
            "UPDATE events SET oid = %s WHERE oid = (SELECT oid FROM events ORDER BY random() "
            "LIMIT 1)" % v.objectid(),
            "DELETE FROM docs WHERE body = 'fuzz' AND oid %s %s" % (op, v.objectid()),
            "INSERT INTO events (oid, at) SELECT objectid_from_timestamp(t), t FROM "
            "generate_series(now() - interval '1 year', now(), %s) t" % r.choice([
                "interval '1 day'", "interval '1 hour'"]),
            "DELETE FROM events WHERE at > now() - interval '2 years'",
        ]
        try:
            self.run("BEGIN", session=s)
            for g in settings:
                self.run("SET LOCAL %s = off" % g, session=s)
            if r.random() < 0.3:
                self.run("SET LOCAL work_mem = '64kB'", session=s)
            if r.random() < 0.3:
                for g in ["parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                          "min_parallel_table_scan_size = 0", "max_parallel_workers_per_gather = 2",
                          self.force_parallel if r.random() < 0.5 else "jit = off"]:
                    self.run("SET LOCAL " + g, session=s)
            for q in r.sample(queries, r.randint(1, 5)):
                self.run(q, session=s)
            commit = r.random() < 0.5
            for q in r.sample(dml, r.randint(0, 2)):
                self.run(q, session=s)
            self.run("COMMIT" if commit else "ROLLBACK", session=s)
            if r.random() < 0.02:
                self.run(r.choice(["VACUUM docs", "REINDEX TABLE docs", "ANALYZE events",
                                   "SELECT brin_summarize_new_values('events_oid_brin')",
                                   "REINDEX INDEX docs_oid_hash", "VACUUM FULL events"]), True)
        except Lost:
            pass

    def act_adopt(self):
        """idgen_adopt on fresh tables of every key kind."""
        r = self.r
        self.begin_shape("adopt")
        superuser = r.random() < 0.5
        s = self.session(superuser)
        t = "fuzz." + self.unique("adopt")
        key = r.choice(["serial", "bigserial", "smallserial", "int GENERATED ALWAYS AS IDENTITY",
                        "bigint GENERATED BY DEFAULT AS IDENTITY", "int DEFAULT nextval('fuzz.sq')",
                        "bigint DEFAULT idgen_next()", "text", "int",
                        "bigint GENERATED ALWAYS AS (7) STORED", "numeric"])
        ddl = ["CREATE SEQUENCE IF NOT EXISTS fuzz.sq",
               "CREATE TABLE %s (id %s PRIMARY KEY, v text)%s" % (
                   t, key, " PARTITION BY RANGE (id)" if r.random() < 0.1 else "")]
        if "PARTITION" in ddl[-1]:
            ddl.append("CREATE TABLE %s_p PARTITION OF %s DEFAULT" % (t, t))
        for i in range(r.randint(0, 2)):
            ddl.append("CREATE TABLE %s_c%d (id serial, ref %s REFERENCES %s %s)" % (
                t, i, r.choice(["int", "bigint", "smallint"]), t,
                r.choice(["", "ON DELETE CASCADE", "ON UPDATE CASCADE"])))
        fill = "INSERT INTO %s (v) SELECT 'v' FROM generate_series(1, %d)" % (t, r.randint(0, 20))
        if r.random() < 0.3:
            fill = "INSERT INTO %s (id, v) OVERRIDING SYSTEM VALUE VALUES (%s, 'x')" % (
                t, r.choice(["32767", "2147483647", "idgen_next()", "-1", "0"]))
        call = "SELECT * FROM idgen_adopt(%s, %s, %s)" % (
            lit(t), lit(r.choice(["id", "id", "v", "ID", "nope", ""])), r.choice(["true", "false"]))
        try:
            self.run("BEGIN", session=s)
            for st in ddl + [fill, call, call if r.random() < 0.2 else "SELECT 1",
                             "INSERT INTO %s (v) VALUES ('after')" % t]:
                self.run(st, session=s)
            self.run("ROLLBACK", session=s)
        except Lost:
            pass

    def act_clock(self):
        """Small clock offsets (superuser), then generation and UUIDs.  Not
        large forward ones: IDs made then would stay ahead of the clock, and
        idgen would refuse to generate for the rest of the run."""
        r = self.r
        self.begin_shape("clock_offset")
        s = self.su
        s.connect()
        try:
            self.run("BEGIN", session=s)
            self.run("SET LOCAL idgen.clock_offset_ms = %d" % r.choice([
                r.randint(-1500, 300), 0, -1, 1, -2**31, -3600000]), session=s)
            for sql in r.sample(["SELECT idgen_next()", "SELECT idgen_next('js53')",
                                 "SELECT idgen_uuidv7()", "SELECT objectid()",
                                 "SELECT count(*) FROM idgen_next_batch(1000)",
                                 "SELECT * FROM idgen_workers",
                                 "SELECT idgen_next('sonyflake')"], 3):
                self.run(sql, session=s)
            self.run("ROLLBACK", session=s)
        except Lost:
            pass

    def restore_layouts(self):
        """Puts back the layouts the tables' defaults use (one may be dropped)."""
        self.shape = "restore"
        with open(LAYOUTS_SQL) as f:
            self.try_run(f.read(), True)
        rows = self.try_run("SELECT name FROM idgen_layout", True, fetch=True)
        if rows is not None:
            # The setup's layouts stay listed (and are put back next time).
            present = {n for (n,) in rows}
            self.v.layouts = list(dict.fromkeys(
                SETUP_LAYOUTS + [n for n in self.v.layouts if n in present] + sorted(present)))

    # -- main loop
    def main(self):
        args = self.args
        self.say("targeted fuzzer: seed %d, %d s" % (args.seed, args.seconds))
        self.session(True)
        self.session(False)
        version = self.run("SHOW server_version_num", True, fetch=True)[0][0]
        self.force_parallel = "%s = on" % ("debug_parallel_query" if int(version) >= 160000
                                           else "force_parallel_mode")
        n = self.load_functions()
        self.say("functions of extension idgen: %d" % n)
        for f in self.functions:
            self.say("  %s%s" % (f["sig"], " (SETOF %s)" % f["rettype"] if f["retset"] else ""))
        actions = [
            (30, self.act_call_function),
            (6, self.act_objectid_text),
            (6, self.act_objectid_binary_copy),
            (10, self.act_define_layout),
            (6, self.act_layout_table),
            (5, self.act_layout_binary_copy),
            (8, self.act_trigger),
            (5, self.act_interleave),
            (7, self.act_objectid_queries),
            (3, self.act_adopt),
            (1, self.act_clock),
        ]
        weights = [w for w, _ in actions]
        # One round of every action first, so that a short run covers all.
        order = [a for _, a in actions]
        start = time.time()
        next_report = start + 30
        while time.time() - start < args.seconds:
            act = order.pop(0) if order else self.r.choices([a for _, a in actions], weights)[0]
            self.shape = None
            name = act.__name__[4:]
            self.by_action[name] += 1
            t = time.time()
            try:
                act()
            except (Lost, Skip):
                pass
            self.action_seconds[name] += time.time() - t
            if self.r.random() < 0.02:
                self.restore_layouts()
            if time.time() > next_report:
                next_report += 30
                self.say("  %4d s: %d queries, %d crashes, %d internal errors" % (
                    time.time() - start, self.queries, len(self.crashes), len(self.internal)))
        self.elapsed = time.time() - start
        self.restore_layouts()
        self.report()

    def report(self):
        say = self.say
        say("targeted fuzzer: %d queries in %.0f s (%.0f/s)" % (
            self.queries, self.elapsed, self.queries / max(self.elapsed, 1)))
        say("  actions (times run, seconds): " + ", ".join(
            "%s %d %.0fs" % (name, n, self.action_seconds[name])
            for name, n in self.by_action.most_common()))
        say("  statements over 0.5 s: %d, the slowest:" % len(self.slow))
        for took, sql in sorted(self.slow, reverse=True)[:3]:
            say("    %.1f s: %s" % (took, shorten(sql, 200)))
        total_errors = sum(self.sqlstates.values())
        say("  SQL errors: %d; by SQLSTATE: %s" % (total_errors, ", ".join(
            "%s %d" % kv for kv in self.sqlstates.most_common(8))))
        say("  internal errors (XX000): %d distinct" % len(self.internal))
        for msg, sql, count in self.internal.values():
            say("    %dx %s\n       query: %s" % (count, msg, shorten(sql, 400)))
        say("  connections lost without a crash in the log: %d" % len(self.lost_without_crash))
        for sql, error in self.lost_without_crash[:5]:
            say("    %s\n       query: %s" % (" ".join(error.split()), shorten(sql)))
        say("  crashes: %d" % len(self.crashes))
        shown = set()
        for c in self.crashes:
            if c["shape"] in shown:
                continue
            shown.add(c["shape"])
            say("    [%s] x%d\n       query: %s\n       log: %s" % (
                c["shape"], self.crashes_by_shape[c["shape"]], shorten(c["query"], 400), c["log"]))
        if self.args.summary:
            with open(self.args.summary, "w") as f:
                json.dump({"queries": self.queries, "seconds": round(self.elapsed),
                           "crashes": len(self.crashes), "internal": len(self.internal),
                           "sqlstates": dict(self.sqlstates)}, f)


def shorten(sql, n=300):
    sql = " ".join(sql.split())
    return sql if len(sql) <= n else sql[:n] + "..."


def pgcopy_binary(rows):
    """A PGCOPY file; each field bytes or None (NULL)."""
    out = bytearray(b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0))
    for fields in rows:
        out += struct.pack(">h", len(fields))
        for f in fields:
            if f is None:
                out += struct.pack(">i", -1)
            else:
                out += struct.pack(">i", len(f)) + f
    out += struct.pack(">h", -1)
    return bytes(out)


def binary_array(elems, elemtype, r):
    """array_recv's input, usually right, with random dimensions and bounds."""
    ndim = 1
    dims = [(len(elems), 1)]
    p = r.random()
    if p < 0.1:
        ndim = 0
        dims = []
        elems = []
    elif p < 0.2:
        dims = [(len(elems), r.choice([0, -1, 2**31 - 1, -2**31, 5]))]
    elif p < 0.3 and len(elems) % 2 == 0 and elems:
        ndim = 2
        dims = [(2, 1), (len(elems) // 2, 1)]
    elif p < 0.35:
        ndim = r.randint(0, 8)
        dims = [(r.randint(0, 3), r.randint(-3, 3)) for _ in range(ndim)]
    elif p < 0.4:
        dims = [(len(elems) + r.choice([-1, 1, 2**30]), 1)]
    has_null = 1 if any(e is None for e in elems) else r.choice([0, 0, 1])
    if r.random() < 0.05:
        elemtype = r.choice([23, 25, 20, 0, 16])
    out = bytearray(struct.pack(">iiI", ndim, has_null, elemtype))
    for n, lb in dims:
        out += struct.pack(">ii", n, lb)
    for e in elems:
        out += struct.pack(">i", -1) if e is None else struct.pack(">i", len(e)) + e
    return bytes(out)


def mutate(data, r):
    """A few random byte flips, cuts or insertions."""
    b = bytearray(data)
    for _ in range(r.randint(1, 4)):
        i = r.randrange(len(b)) if b else 0
        op = r.random()
        if op < 0.5 and b:
            b[i] = r.getrandbits(8)
        elif op < 0.75:
            del b[i:i + r.randint(1, 8)]
        else:
            b[i:i] = bytes(r.getrandbits(8) for _ in range(r.randint(1, 8)))
    return bytes(b)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", required=True, help="the server's socket directory")
    p.add_argument("--port", default="5432")
    p.add_argument("--dbname", default="target")
    p.add_argument("--log", required=True, help="the server log, read for crashes")
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--summary", help="write counts as JSON here")
    Fuzzer(p.parse_args()).main()


if __name__ == "__main__":
    main()
