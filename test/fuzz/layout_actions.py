"""The targeted fuzzer's actions on layouts: defining them, writing
idgen_layout directly (SQL, text and binary COPY), idgen_layout_check() in
triggers on other tables, layout changes interleaved between two sessions,
and putting the setup's layouts back."""

import os
import struct

import psycopg2

from pgbinary import binary_array, mutate, pgcopy_binary
from sessions import Lost
from values import BUILTIN_LAYOUTS, SETUP_LAYOUTS, ident, lit

# Column names and types of idgen_layout, which its trigger reads.
LAYOUT_COLUMNS = [("name", "text"), ("epoch", "timestamptz"), ("fields", "text[]"),
                  ("widths", "int[]"), ("time_unit", "interval"), ("radix", "int")]
OTHER_TYPES = ["text", "int", "bigint", "smallint", "timestamptz", "timestamp", "interval",
               "text[]", "int[]", "bigint[]", "bytea", "bool", "numeric", '"char"',
               "name", "objectid", "uuid", "jsonb", "int[][]"]
# Puts back the layouts of test/fuzz/setup.sql, which the tables' defaults use.
LAYOUTS_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layouts.sql")


class LayoutActions:
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
        statements = self.layout_table_statements(name)
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
            self.layout_table_copy(s)

    def layout_table_statements(self, name):
        """SQL that writes idgen_layout: a row named name, or others'."""
        r, v = self.r, self.v
        row = "(%s, %s, %s, %s, %s, %s)" % (lit(name), v.timestamptz(), v.text_array(),
                                            v.int_array(), v.interval(), v.integer())
        return r.choice([
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

    def layout_table_copy(self, s):
        """Text COPY into idgen_layout, rolled back."""
        r, v = self.r, self.v
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
        r = self.r
        superuser = r.random() < 0.6
        s = self.session(superuser)
        table = "fuzz." + self.unique("trig")
        columns_kind, cols = self.trigger_columns()
        kind, level, timing, events = self.trigger_events()
        if kind == "foreign-ish":
            kind = "plain"
            table = "idgen_layout"   # extra triggers on the extension's own table
        self.begin_shape("trigger:%s:%s:%s" % (level, timing, columns_kind
                                               if table != "idgen_layout" else "own"))
        ddl, target = self.trigger_ddl(table, kind, cols, level, timing, events)
        names = [n for n, _ in cols]
        dml = self.trigger_dml(target, names, cols, kind, events)
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

    def trigger_columns(self):
        """The columns of the table the trigger is on: idgen_layout's, or
        others."""
        r = self.r
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
        return columns_kind, cols

    def trigger_events(self):
        """What the trigger is on: (kind of table, level, timing, events)."""
        r = self.r
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
        return kind, level, timing, events

    def trigger_ddl(self, table, kind, cols, level, timing, events):
        """The table (unless it is idgen_layout) and the trigger; returns the
        statements and the table the trigger is on."""
        r = self.r
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
        return ddl, target

    def trigger_dml(self, target, names, cols, kind, events):
        """Statements that fire the trigger, with values of the columns'
        types."""
        r, v = self.r, self.v
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
        return dml

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
