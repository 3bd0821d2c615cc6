"""What a server counts of the sessions that generated: idgen_stats
(invariant 5), read after each burst and outbox op, and idgen_workers,
after each burst and crowd."""

import collections
import os
import time

import psycopg2

from clients import normalize
from invariants import increasing
from answers import (counted, counted_short, drops_counted, given_up_idle_first, marks_full_counted, published_at_end,
                     regressions_per_incident, stats_columns, worker_kept)
from diagnostics import stats_times_told, worker_row_told
from layouts import BUILTIN, builtin, default_layout, epoch_date_ms
from params import DBS

# per layout name, summed over its definitions: the IDs; then those made in
# a shared state and the earliest and latest stats_reset (Unix seconds),
# which idgen_stats has from 1.3
STATS_IDS = "SELECT layout, sum(ids) FROM idgen_stats GROUP BY layout"
STATS_COLUMNS = ("SELECT layout, sum(ids), sum(shared_ids), extract(epoch FROM min(stats_reset)), "
                 "extract(epoch FROM max(stats_reset)) FROM idgen_stats GROUP BY layout")
STATS_TIMES = ("SELECT layout, count(*) OVER (PARTITION BY layout), extract(epoch FROM time_left) * 1000, "
               "extract(epoch FROM mark) * 1000, mark_lead_ms FROM idgen_stats")
SETTINGS = ("SELECT name, setting FROM pg_settings WHERE name IN "
            "('idgen.epoch', 'idgen.node_bits', 'idgen.clock_offset_ms')")
# what a session held across a clock step makes before and after it
UUIDV7_CALL = ("uuidv7", None, 1, 100)
NEXT_CALL = ("next", None, 1, 1)
# blocks of a whole tick each, so that the last runs ahead of the clock
BLOCKS_CALL = ("block", None, 4096, 16)
OWN_REGRESSIONS = "SELECT sum(clock_regressions) FROM idgen_workers WHERE pid = pg_backend_pid()"
# the row of a session's own worker id, with when the session began
OWN_ROW = ("SELECT worker_id, ids_issued, extract(epoch FROM last_ts) * 1000, lead_ms, clock_regressions, clock_behind,"
           " extract(epoch FROM claimed_at) * 1000, (SELECT extract(epoch FROM backend_start) * 1000"
           " FROM pg_stat_activity WHERE pid = pg_backend_pid()), current_setting('idgen.epoch'),"
           " current_setting('idgen.node_bits'), (SELECT sum(clock_regressions) FROM idgen_stats WHERE layout = 'idgen'),"
           " (SELECT overflows FROM idgen_capacity WHERE name = 'stats'),"
           " (SELECT max(max_lead_ms) FROM idgen_stats WHERE layout = 'idgen'), clock_waits,"
           " (SELECT sum(clock_waits) FROM idgen_stats WHERE layout = 'idgen'),"
           " (SELECT sum(clock_wait_ms) FROM idgen_stats WHERE layout = 'idgen')"
           " FROM idgen_workers WHERE pid = pg_backend_pid() AND NOT is_shared")
OWN_COLUMNS = ("worker_id", "ids_issued", "last_ts", "lead_ms", "clock_regressions", "clock_behind", "claimed_at",
               "backend_start", "epoch", "node_bits", "stats_regressions", "stats_overflows",
               "stats_max_lead", "clock_waits", "stats_waits", "stats_wait_ms")
# how far this host's clock and the server's may read apart, in ms
CLOCK_SLACK_MS = 5
REGRESSIONS = "SELECT layout, sum(clock_regressions) FROM idgen_stats GROUP BY layout"
IDS_OF = "SELECT coalesce(sum(ids), 0) FROM idgen_stats WHERE layout = %s"
WORKER_ROWS = "SELECT pid, worker_id FROM idgen_workers WHERE NOT is_shared"
# a table of idgen_capacity by name: (overflows, in_use, capacity)
CAPACITY = "SELECT overflows, in_use, capacity FROM idgen_capacity WHERE name = %s"


def capacity_of(rows):
    """CAPACITY's row as integers, or None where there is none."""
    return tuple(int(v) for v in rows[0]) if rows else None


class Counts:
    def stats_begin(self, c, dbs):
        """Zeroes c's counts, in the first database that has idgen_stats."""
        cl = self.clusters[c]
        for db in dict.fromkeys(list(dbs) + DBS):
            reset_at = time.time()
            try:
                cl.query(db, "SELECT idgen_stats_reset()")
            except psycopg2.Error:
                continue
            self.counts[c] = {"db": db, "expected": collections.Counter(), "unknown": set(),
                              "table": self.capacity(c, db), "order": collections.defaultdict(list), "anonymous": set(),
                              "reset_at": reset_at, "made": collections.defaultdict(list)}
            return

    def count_call(self, res):
        counts = self.counts.get(res["c"])
        func, layout_name = res["call"][0], res["call"][1]
        if counts is None or func in ("objectid", "uuidv7", "sleep"):
            return
        name = "idgen" if layout_name is None else layout_name
        if "client" in res:
            counts["order"][res["client"]].append(name)
        else:
            counts["anonymous"].add(name)
        if res["error"] is not None:
            counts["unknown"].add(name)     # it may have made IDs it did not hand out
        else:
            counts["expected"][name] += len(res["ids"])
            if res["ids"]:
                counts["made"][name].append((max(res["ids"]), res["t1"]))

    def stats_check(self, c):
        counts = self.counts.pop(c, None)
        if counts is None or not self.live(c):
            return
        try:
            rows = self.clusters[c].query(counts["db"], STATS_IDS)
        except psycopg2.Error as e:
            self.op_errors["reading idgen_stats: %s" % normalize(str(e))] += 1
            return
        # an entry given to another definition lost its counts (README,
        # Monitoring): then each count is at most what sessions were handed
        table = self.capacity(c, counts["db"])
        at_most = (table or (None,))[0] != (counts["table"] or (None,))[0]
        got = {name: int(n) for name, n in rows}
        where = "server %s at step %d" % (c, self.step)
        drops_counted(counts["table"], table, counted_short(counts["expected"], got, counts["unknown"]), where)
        stats_columns(self.read(c, counts["db"], STATS_COLUMNS) or [], counts["reset_at"], time.time(), where)
        self.stats_times(c, counts["db"], where, counts["made"])
        marks_full_counted([n for n, k in counts["expected"].items() if k], self.capacity(c, counts["db"], "marks"),
                           where)
        regressions = dict(self.read(c, counts["db"], REGRESSIONS) or [])
        sessions = collections.Counter(n for names in counts["order"].values() for n in set(names))
        regressions_per_incident({n: int(k or 0) for n, k in regressions.items() if n not in counts["anonymous"]},
                                 sessions, where)
        counted(counts["expected"], got, counts["unknown"], where, at_most)
        if at_most:
            given_up_idle_first(counts["order"], counts["expected"], got, counts["unknown"], where)

    def stats_times(self, c, db, where, made):
        """idgen_stats' times against the built-in layouts' definitions
        (one name may be defined otherwise in each database); made: by
        layout name, each call's highest ID and when it ended."""
        cl = self.clusters[c]
        try:
            rows = [(r[0], r[1]) + tuple(None if v is None else float(v) for v in r[2:])
                    for r in cl.query(db, STATS_TIMES)]
            s = dict(cl.query(db, SETTINGS))
        except psycopg2.Error:
            return      # an older version's idgen_stats
        layouts = {n: builtin(n) for n in BUILTIN if n != "idgen"}
        layouts["idgen"] = default_layout(epoch_date_ms(s["idgen.epoch"]), int(s["idgen.node_bits"]))
        now = time.time() * 1000.0
        stats_times_told(rows, layouts, (now, now + int(s["idgen.clock_offset_ms"])), where, made)

    def stats_at_rollback(self, cl, db, where):
        """README, idgen_stats: counts are published at transaction end, a
        rollback's too: 100 IDs made in a transaction rolled back, its
        session still open, are in the view read by another session (at
        least: no other session runs then).  Not where the table gave a
        row up meanwhile, nor where the calls were refused."""
        reader, writer = cl.connect(db), cl.connect(db)
        try:
            with reader.cursor() as r, writer.cursor() as w:
                r.execute(CAPACITY, ("stats",))
                table = capacity_of(r.fetchall())
                r.execute(IDS_OF, ("idgen",))
                before = r.fetchone()[0]
                try:
                    w.execute("BEGIN; SELECT count(idgen_next()) FROM generate_series(1, 100)")
                finally:
                    w.execute("ROLLBACK")
                r.execute(IDS_OF, ("idgen",))
                after = r.fetchone()[0]
                r.execute(CAPACITY, ("stats",))
                if table is not None and capacity_of(r.fetchall()) == table:
                    published_at_end(before, after, 100, where)
        except psycopg2.Error:
            return
        finally:
            cl.close_all([reader, writer], db)

    def across_step_before(self, c, db, conn):
        """Before a reload that may step the clock: a session held across it
        makes an ID and UUIDv7s (across_step_after).  Returns what
        across_step_after needs: the UUIDv7s, the session's IDs, its row
        of idgen_workers and idgen's clock around the calls."""
        cl = self.clusters[c]
        held = {"clock_first": cl.idgen_clock_ms()}
        held["ids"] = self.held_call(c, db, conn, NEXT_CALL)
        held["first_end"] = time.time() * 1000.0
        held["row"] = self.own_row(conn)
        held["uuids"] = self.held_call(c, db, conn, UUIDV7_CALL)
        held["clock_before"] = cl.idgen_clock_ms()
        return held

    def across_step_after(self, c, db, conn, held, settings):
        """After the step: its UUIDv7s increase across it (README:
        increasing within a backend), and of the 100 IDs it makes then, a
        clock behind its last is one regression, counted once in the views
        (docs/guarantees.md, The clock steps back while running)."""
        cl = self.clusters[c]
        after = self.held_call(c, db, conn, UUIDV7_CALL)
        clock_start = cl.idgen_clock_ms()
        ids = self.held_call(c, db, conn, NEXT_CALL[:3] + (100,))
        blocks = self.held_call(c, db, conn, BLOCKS_CALL)
        clock_end = cl.idgen_clock_ms()
        try:
            with conn.cursor() as cur:
                cur.execute(OWN_REGRESSIONS)
                rows = cur.fetchall()
        except psycopg2.Error:
            rows = []
        row = self.own_row(conn)
        conn.close()
        where = "%s/%s, one session before and after a reload with %s" % (c, db, settings)
        increasing(held["uuids"][-1:] + after[:1], "uuidv7", "%x", where)
        # no row of its own where it generated on the shared worker id
        own = {"idgen": int(rows[0][0])} if rows and rows[0][0] is not None else {}
        regressions_per_incident(own, {"idgen": 0}, where, slack=1)
        if row and held["row"] and len(held["ids"]) == 1 and len(ids) == 100 and len(blocks) == 16 * 4096:
            worker_row_told(row, self.own_row_expected(held, row, ids + blocks, clock_start, clock_end), where)

    @staticmethod
    def own_row(conn):
        """The session's own row of idgen_workers (OWN_COLUMNS), or None:
        it holds the shared worker id, or the view is older."""
        try:
            with conn.cursor() as cur:
                cur.execute(OWN_ROW)
                rows = cur.fetchall()
        except psycopg2.Error:
            return None
        return dict(zip(OWN_COLUMNS, rows[0])) if len(rows) == 1 else None

    @staticmethod
    def own_row_expected(held, row, ids, clock_start, clock_end):
        """What the held session's row must say after its IDs of idgen's
        layout (one, then ids): their worker field, the last one's time, where the
        clock was sure to be behind the highest it saw (before the step,
        clock_first on; clock_start to clock_end around the last call)
        or sure not to be, and lead_ms within what that clock allows."""
        layout = default_layout(epoch_date_ms(row["epoch"]), int(row["node_bits"]))
        first, last = layout.decode(ids[0]), layout.decode(ids[-1])
        slack = CLOCK_SLACK_MS
        behind = clock_end < held["clock_first"] - slack
        fresh = held["row"]["clock_regressions"] == 0
        never = fresh and clock_start > held["clock_before"] + slack
        highest = max(held["clock_first"], clock_start)
        lead_low = last["time"] - clock_end - slack if never else 0
        kept = held["row"]["stats_overflows"] == row["stats_overflows"]
        return {"worker_id": first["worker"] if first["worker"] == last["worker"] else None,
                "ids_issued": 1 + len(ids), "last_ts": float(last["time"]),
                "lead_ms": (max(lead_low, 0), max(last["time"] - highest, 0) + slack),
                "clock_behind": True if behind else False if never else None,
                "clock_regressions": 1 if behind and fresh else 0 if never else None,
                # a tick's lead counts from the highest clock then, at most the last
                "stats_max_lead": (row["lead_ms"], float("inf")) if kept and row["lead_ms"] is not None else None,
                # idgen_stats counts the same incident, once (its entry kept)
                "stats_regressions": None if not kept or held["row"]["stats_regressions"] is None else
                held["row"]["stats_regressions"] + 1 if behind and fresh else
                held["row"]["stats_regressions"] if never else None,
                "claimed_at": (float(row["backend_start"]) - 1, held["first_end"] + slack),
                # its waits for the clock, the same in both views, and their time
                "stats_waits": Counts.waits_expected(held["row"], row) if kept else None,
                "stats_wait_ms": Counts.wait_ms_expected(held["row"], row) if kept else None}

    @staticmethod
    def waits_expected(before, after):
        """idgen_stats' clock_waits of idgen's layout after the held
        session's calls: as many more as its own row counted."""
        if before["stats_waits"] is None or before["clock_waits"] is None or after["clock_waits"] is None:
            return None
        return int(before["stats_waits"]) + int(after["clock_waits"]) - int(before["clock_waits"])

    @staticmethod
    def wait_ms_expected(before, after):
        """Its clock_wait_ms after those calls: more where it waited,
        the same where it did not."""
        if before["stats_wait_ms"] is None or before["clock_waits"] is None or after["clock_waits"] is None:
            return None
        was = float(before["stats_wait_ms"])
        return (was + 1e-6, float("inf")) if after["clock_waits"] != before["clock_waits"] else (was, was)

    def capacity(self, c, db, name="stats"):
        """c's table `name` in idgen_capacity: (overflows, in_use,
        capacity), or None where it cannot say."""
        rows = self.read(c, db, CAPACITY, (name,))
        return capacity_of(rows) if rows is not None else None

    def read(self, c, db, sql, args=None):
        """The rows of sql on c, or None where it fails (an older
        version's idgen, say)."""
        try:
            return self.clusters[c].query(db, sql, args)
        except psycopg2.Error:
            return None

    def workers_released(self, c, db):
        """A session gives its worker id back as it exits, before its
        process ends (README: idgen_workers has one row per claimed worker
        id): after a burst, a row whose process is gone, still there when
        read again (so not one exiting as it was read), is a worker id kept."""
        if not self.live(c):
            return
        cl = self.clusters[c]
        try:
            gone = {row for row in cl.query(db, WORKER_ROWS) if not os.path.exists("/proc/%d" % row[0])}
            kept = gone & set(cl.query(db, WORKER_ROWS)) if gone else set()
        except psycopg2.Error:
            return
        worker_kept(sorted(kept), "%s/%s at step %d" % (c, db, self.step))
