"""The targeted fuzzer's actions on functions and types: every function of
the extension with random arguments, objectid's text and binary input, its
operators through every index, sort and hash path, idgen_adopt_node() and
clock settings."""

import struct

from pgbinary import mutate, pgcopy_binary
from sessions import Lost, Session
from values import lit


class CallActions:
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

    def extra_session(self):
        if not hasattr(self, "_extra"):
            self._extra = [Session(self, "fuzz")]
        return self._extra[0]

    def act_objectid_queries(self):
        """objectid's operators through every index, sort and hash path."""
        r = self.r
        self.begin_shape("objectid_queries")
        settings = r.sample(["enable_seqscan", "enable_indexscan", "enable_bitmapscan",
                             "enable_hashjoin", "enable_mergejoin", "enable_hashagg",
                             "enable_sort", "enable_indexonlyscan", "enable_nestloop"],
                            r.randint(0, 4))
        s = self.session(r.random() < 0.3)
        op = r.choice(["=", "<>", "<", "<=", ">", ">="])
        queries = self.objectid_select(op)
        dml = self.objectid_dml(op)
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

    def objectid_select(self, op):
        """Queries of objectid's operators (op among them), its index, sort
        and hash paths, and of layouts read in parallel workers."""
        r, v = self.r, self.v
        return [
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

    def objectid_dml(self, op):
        """Writes to the tables with objectid columns."""
        r, v = self.r, self.v
        return [
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
