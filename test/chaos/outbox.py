"""The outbox of docs/outbox.md: writers in transactions that hold their
IDs a while, and a poller that reads [cursor, idgen_horizon()) in a later
statement, at once; the pollers of every outbox poll again after ops that
restart a server, step its clock or promote one."""

import copy
import os
import re
import signal
import threading
import time

import psycopg2

from clients import LOST, normalize, now_ms
from diagnostics import holders_told
from horizons import Horizons
from invariants import (Violation, horizon_kept, no_internal_error, no_standby_horizon,
                        none_missed, read_once, unique)
from params import RELEASED

# A built-in layout, so that no op drops or redefines it under the poller.
NAMED_HORIZON = "twitter"
# the prepared transactions holding the horizon back
PREPARED_HOLDERS = ("SELECT prepared_gid, extract(epoch FROM since) * 1000 FROM idgen_horizon_holders"
                    " WHERE prepared_gid IS NOT NULL")
OUTBOX_DDL = ("CREATE TABLE IF NOT EXISTS chaos_outbox (id bigint PRIMARY KEY DEFAULT idgen_next(), "
              "w int NOT NULL); "
              # DROP EXTENSION ... CASCADE took the default with it
              "ALTER TABLE chaos_outbox ALTER id SET DEFAULT idgen_next()")

OUTBOX_INSERT = "INSERT INTO chaos_outbox (w) SELECT %d FROM generate_series(1, {n}) RETURNING id"


class Poller:
    """An outbox poller of docs/outbox.md: h := idgen_horizon(); read
    [cursor, h) in a later statement; cursor := h."""

    def __init__(self):
        self.cursor = 0
        self.highest = None     # the largest horizon it was given
        self.named = None       # the largest of NAMED_HORIZON's
        self.named_switched = False
        self.read = {}          # id -> step it was read at
        self.polls = 0
        self.switched = False   # to a promoted standby, its horizon not yet past the cursor

    def copy(self):
        return copy.deepcopy(self)

    def switch(self):
        """The poller follows its server's promoted synchronous standby:
        docs/outbox.md has it keep its cursor until the new primary's
        horizon passes it (no row may be written below it meanwhile)."""
        other = self.copy()
        other.switched = other.named_switched = True
        return other

    def waits(self, h):
        """Keeping the cursor after a switch, while the horizon is below it."""
        below = self.highest is not None and h < self.highest
        if below and self.switched:
            return True
        self.switched = False
        return False

    def take_horizon(self, h, step, where):
        horizon_kept(h, self.highest, "idgen", "idgen_horizon()", "%s at step %d" % (where, step))
        self.highest = h if self.highest is None else max(self.highest, h)

    def take_named(self, h, step, where):
        """idgen_horizon(NAMED_HORIZON), taken after idgen_horizon(): the
        same rule, in that layout's IDs."""
        if self.named_switched and self.named is not None and h < self.named:
            return
        horizon_kept(h, self.named, NAMED_HORIZON, "idgen_horizon('%s')" % NAMED_HORIZON,
                     "%s at step %d" % (where, step))
        self.named_switched = False
        self.named = h if self.named is None else max(self.named, h)

    def take_rows(self, ids, h, step, where):
        for ident in ids:
            read_once(ident, self.read, "%s at step %d (cursor %d, horizon %d)"
                      % (where, step, self.cursor, h))
            self.read[ident] = step
        self.cursor = h
        self.polls += 1

    def check_missed(self, below, step, where):
        """below: every row of the table under the cursor, now."""
        none_missed([i for i in below if i not in self.read], self.cursor,
                    "%s by step %d" % (where, step))



class Outbox(Horizons):
    def do_outbox(self, op):
        c, db = op["c"], op["db"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        cl.query(db, OUTBOX_DDL)
        view = self.read_view(c, db)
        poller = self.pollers.setdefault((c, db), Poller())
        where = "%s/%s" % (c, db)
        self.touch(c)
        if op.get("crowd"):
            self.crowd_horizon(cl, db, where)
            self.workers_released(c, db)
        self.stats_begin(c, [db])
        held = self.hold_commits(c, op.get("hold_ms", 0))
        try:
            results, problems = run_outbox(cl, db, op["writers"], poller, self.step, where,
                                           self.refusals)
        finally:
            if held is not None:
                held.join()
        self.touch(c)
        for res in results:
            if res["error"] is not None and res["error"][0] == "23505":
                # chaos_outbox's key saw an ID twice: one a row holds, handed out again
                key = re.search(r"\(id\)=\((\d+)\)", res["error"][1])
                key = key.group(1) if key else res["error"][1].splitlines()[0]
                unique({key: "in a row of chaos_outbox, whose key refused the insert"}, (key,),
                       self.step, "idgen", "%s", where)
            self.check_call(res, view, None)
        if problems:
            raise problems[0]
        self.poll(c, db)
        self.horizon_moves_on(c, db, where)
        self.stats_check(c)

    def prepare_held(self, c, db):
        """Outbox rows in two transactions left prepared across a restart
        (a crash replays both entries, the second after the first): their
        IDs hold the horizon (docs/outbox.md).  Returns their names, those
        idgen did not refuse."""
        cl = self.clusters[c]
        cl.query(db, OUTBOX_DDL)
        self.pollers.setdefault((c, db), Poller())
        view = self.read_view(c, db)
        gids, out = [], []
        for k in range(2):
            gid = "chaos_held_%d_%d" % (self.step, k)
            conn = cl.connect(db)
            try:
                with conn.cursor() as cur:
                    cur.execute("BEGIN")
                    insert_rows(cur, {"c": c, "db": db}, OUTBOX_INSERT % 0, 3, out)
                    cur.execute("PREPARE TRANSACTION %s", (gid,))
                gids.append(gid)
            except psycopg2.Error:
                pass
            finally:
                conn.close()
        for res in out:
            self.check_call(res, view, None)
        return gids

    def commit_held(self, c, db, gids):
        """After the restart: a poll while the transactions are prepared,
        then COMMIT PREPARED; the next poll must read their rows.  Each
        is among idgen_horizon_holders meanwhile."""
        self.poll(c, db)
        try:
            shown = self.clusters[c].query(db, PREPARED_HOLDERS)
        except psycopg2.Error:
            shown = None
        if shown is not None:
            self.found_mid_op(holders_told, dict(shown), dict.fromkeys(gids, float("inf")), [],
                              "%s/%s at step %d, prepared before a restart" % (c, db, self.step))
        for gid in gids:
            try:
                self.clusters[c].query(db, "COMMIT PREPARED %s", (gid,))
            except psycopg2.Error as e:
                self.op_errors["COMMIT PREPARED: %s" % normalize(str(e))] += 1

    def hold_commits(self, c, hold_ms):
        """Stops the walreceiver of c's synchronous standby for hold_ms:
        c's commits meanwhile have their commit record and wait, invisible,
        while the poller polls.  Returns the thread that resumes it, or
        None where c has no synchronous standby."""
        sbs = [s for s, p in self.primary_of.items()
               if p == c and self.sync.get(s) and self.live(s, "standby")]
        if not hold_ms or not sbs:
            return None
        rows = self.clusters[sbs[0]].query("postgres", "SELECT pid FROM pg_stat_wal_receiver")
        if not rows or rows[0][0] is None:
            return None
        pid = rows[0][0]
        os.kill(pid, signal.SIGSTOP)
        self.refusals["commits held by a stopped synchronous standby"] += 1

        def resume():
            time.sleep(hold_ms / 1000.0)
            os.kill(pid, signal.SIGCONT)
        thread = threading.Thread(target=resume)
        thread.start()
        return thread

    def poll(self, c, db, timeout_ms=30000):
        """One poll of the recipe, then every row under the cursor must
        have been read."""
        poller = self.pollers[(c, db)]
        where = "%s/%s" % (c, db)
        try:
            conn = self.clusters[c].connect(db, timeout_ms)
        except psycopg2.Error as e:
            self.op_errors["poll: %s" % normalize(str(e))] += 1
            return
        try:
            if poll_once(conn, poller, self.step, where, self.refusals):
                with conn.cursor() as cur:
                    cur.execute("SELECT id FROM chaos_outbox WHERE id < %s", (poller.cursor,))
                    poller.check_missed([r[0] for r in cur.fetchall()], self.step, where)
        except psycopg2.Error as e:
            self.op_errors["poll: %s" % normalize(str(e))] += 1
        finally:
            conn.close()

    def poll_all(self, timeout_ms=30000):
        for c, db in list(self.pollers):
            if self.live(c):
                self.poll(c, db, timeout_ms)
        for s in sorted(self.clusters):
            for c, db in list(self.pollers):
                if self.primary_of.get(s) == c and self.live(s, "standby"):
                    self.poll_standby(s, db)

    def poll_standby(self, s, db):
        """A poller pointed at a standby: idgen_horizon() there must refuse,
        any way (a database not yet replayed, say), and never answer; nor
        may it generate (Probes.check_standby)."""
        try:
            h = self.clusters[s].query(db, "SELECT idgen_horizon()")[0][0]
        except psycopg2.Error as e:
            self.refusals["horizon on a standby: %s" % (e.pgcode or "no session")] += 1
        else:
            no_standby_horizon(h, "%s/%s at step %d" % (s, db, self.step))
        self.check_standby(s, db)


def poll_once(conn, poller, step, where, refusals):
    """h := idgen_horizon(); read [cursor, h); cursor := h.  False when
    idgen refused the horizon (a standby, a bad setting)."""
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT idgen_horizon()")
        except psycopg2.Error as e:
            if e.pgcode is None:
                raise
            no_internal_error(e.pgcode, None, "idgen", "%s: idgen_horizon(): %s" % (where, e))
            refusals["horizon: %s %s" % (e.pgcode, normalize(str(e)))] += 1
            return False
        h = cur.fetchone()[0]
        if poller.waits(h):
            return True
        poller.take_horizon(h, step, where)
        cur.execute("SELECT id FROM chaos_outbox WHERE id >= %s AND id < %s ORDER BY id",
                    (poller.cursor, h))
        poller.take_rows([r[0] for r in cur.fetchall()], h, step, where)
        try:
            cur.execute("SELECT idgen_horizon(%s)", (NAMED_HORIZON,))
        except psycopg2.Error as e:
            if e.pgcode is None:
                raise
            no_internal_error(e.pgcode, None, NAMED_HORIZON, "%s: idgen_horizon('%s'): %s" % (where, NAMED_HORIZON, e))
            refusals["horizon('%s'): %s %s" % (NAMED_HORIZON, e.pgcode, normalize(str(e)))] += 1
            return True
        poller.take_named(cur.fetchone()[0], step, where)
    return True


def write_outbox(cl, db, index, txns, out):
    """One writer: each transaction inserts rows, holds its IDs for a while,
    inserts one more, and commits, rolls back, or prepares and, after the
    same while (the poller polls), commits the prepared transaction; or
    (RELEASED) makes its rows in a savepoint, releases it and rolls back."""
    base = {"c": cl.name, "db": db}
    try:
        conn = cl.connect(db)
    except psycopg2.Error:
        return
    sql = OUTBOX_INSERT % index
    try:
        for k, (rows, hold_ms, end) in enumerate(txns):
            with conn.cursor() as cur:
                try:
                    cur.execute("BEGIN" + ("; SAVEPOINT w" if end == RELEASED else ""))
                    insert_rows(cur, base, sql, rows, out)
                    if hold_ms:
                        cur.execute("SELECT pg_sleep(%s)", (hold_ms / 1000.0,))
                    insert_rows(cur, base, sql, 1, out)
                    if end == "PREPARE":
                        commit_prepared(cur, "chaos_%d_%d_%d" % (conn.get_backend_pid(), index, k),
                                        max(hold_ms, 50))
                    else:
                        cur.execute("RELEASE w; ROLLBACK" if end == RELEASED else end)
                except psycopg2.Error:
                    if conn.closed:
                        return
                    cur.execute("ROLLBACK")
    finally:
        conn.close()


def commit_prepared(cur, gid, hold_ms):
    """PREPARE TRANSACTION, hold_ms with the transaction prepared (its
    IDs must hold the horizon), COMMIT PREPARED; or, when that fails,
    ROLLBACK PREPARED, so that no prepared transaction outlives its
    writer (it would hold the horizon, and its database, for good)."""
    cur.execute("PREPARE TRANSACTION %s", (gid,))
    try:
        cur.execute("SELECT pg_sleep(%s)", (hold_ms / 1000.0,))
        cur.execute("COMMIT PREPARED %s", (gid,))
    except psycopg2.Error:
        cur.execute("ROLLBACK PREPARED %s", (gid,))
        raise


def insert_rows(cur, base, sql, n, out):
    """An insert of n rows, recorded as a call that made n IDs."""
    res = dict(base, call=["next", None, 1, n], text=sql.format(n=n), ids=[], error=None,
               t0=now_ms())
    out.append(res)
    try:
        cur.execute(res["text"])
        res["ids"] = [r[0] for r in cur.fetchall()]
    except psycopg2.Error as e:
        res["error"] = (e.pgcode or LOST, str(e))
        raise
    finally:
        res["t1"] = now_ms()


def run_outbox(cl, db, writers, poller, step, where, refusals):
    """The writers in threads, and a poller polling until they are done
    and once more after; returns the writers' results and the violations
    the poller found."""
    out, problems = [], []
    done = threading.Event()

    def poll_loop():
        try:
            conn = cl.connect(db)
        except psycopg2.Error:
            return
        # The writers' first IDs come first: a horizon taken before them
        # (on a restarted server, the first since its start) bounds every
        # later one, and would hide what they publish.
        time.sleep(0.05)
        try:
            while True:
                last = done.is_set()
                poll_once(conn, poller, step, where, refusals)
                if last:
                    return
                time.sleep(0.01)
        except Violation as v:
            problems.append(v)
        except psycopg2.Error as e:
            refusals["poller: %s" % normalize(str(e))] += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=write_outbox, args=(cl, db, i, txns, out))
               for i, txns in enumerate(writers)]
    poller_thread = threading.Thread(target=poll_loop)
    for t in threads + [poller_thread]:
        t.start()
    for t in threads:
        t.join()
    done.set()
    poller_thread.join()
    return out, problems
