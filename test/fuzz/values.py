"""Random and edge values of each argument type for the targeted fuzzer
(targeted.py), as SQL literals, drawn from its seed."""

FIELD_KINDS = ["time", "node", "worker", "sequence", "shard", "random"]
BUILTIN_LAYOUTS = ["idgen", "twitter", "discord", "sonyflake", "instagram",
                   "redis-borrow", "decimal19", "js53"]
SETUP_LAYOUTS = ["orders", "ledger", "shardy", "rnd", "slow", "dec-small"]   # layouts.sql


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
