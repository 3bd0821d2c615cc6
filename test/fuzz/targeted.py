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

This file runs the actions and keeps the counts; the actions are in
call_actions.py and layout_actions.py, the values they draw in values.py,
binary COPY data in pgbinary.py, connections in sessions.py.
"""

import argparse
import collections
import io
import json
import random
import re
import time

import psycopg2
import psycopg2.extensions

from call_actions import CallActions
from layout_actions import LayoutActions
from sessions import Lost, Session, Skip, shorten
from values import Values

CRASH_BUDGET = 2          # crashes of one shape before that shape is skipped


class Fuzzer(CallActions, LayoutActions):
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
