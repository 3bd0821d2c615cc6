"""What the horizon's holders tell, and that the horizon moves on: a
crowd of sessions in every free backend slot, each holding an ID (invariant
4), and, after an outbox op, the horizon past its newest committed row once
nothing holds it back.  A part of Outbox."""

import time

import psycopg2

from clients import normalize
from answers import horizon_passed, slots_full_counted
from counts import CAPACITY, capacity_of
from diagnostics import holders_told
from flaws import try_sql
from invariants import horizon_below_holders
from layouts import default_layout, epoch_date_ms

# more sessions than a chaos server has backend slots (cluster.BASE_CONF)
CROWD_SESSIONS = 200
DEFAULT_SETTINGS = "SELECT current_setting('idgen.epoch'), current_setting('idgen.node_bits')"
# the table's newest row, and whether anything holds the horizon back
NEWEST_ROW = ("SELECT (SELECT max(id) FROM chaos_outbox), (SELECT count(*) FROM idgen_horizon_holders)"
              " + (SELECT count(*) FROM pg_prepared_xacts), current_setting('idgen.epoch'),"
              " current_setting('idgen.node_bits')")
# sessions outside any transaction that idgen_horizon_holders shows
IDLE_HOLDERS = ("SELECT h.pid FROM idgen_horizon_holders h JOIN pg_stat_activity a ON a.pid = h.pid"
                " WHERE a.state = 'idle'")
# the sessions holding the horizon back, and the time their IDs start at
HOLDERS = "SELECT pid, extract(epoch FROM since) * 1000 FROM idgen_horizon_holders WHERE pid IS NOT NULL"


def worker_ids_row(cur):
    """idgen_capacity's worker ids: (overflows, in_use, capacity), or None."""
    return None if try_sql(cur, CAPACITY, ("worker_ids",)) else capacity_of(cur.fetchall())


class Horizons:
    def horizon_moves_on(self, c, db, where):
        """Once an outbox op ended: no session that is idle, outside any
        transaction, holds the horizon (read twice, the op's sessions
        having ended); and with nothing holding it back (none in
        idgen_horizon_holders, none prepared), once idgen's clock passed
        the newest row's tick, the horizon passes that row
        (answers.horizon_passed).  Not judged where the row is further
        ahead of the clock than a pause of 2 s."""
        cl = self.clusters[c]
        try:
            conn = cl.connect(db, 10000)
        except psycopg2.Error:
            return
        try:
            with conn.cursor() as cur:
                cur.execute(IDLE_HOLDERS)
                idle = {pid for pid, in cur.fetchall()}
                cur.execute(IDLE_HOLDERS)
                idle &= {pid for pid, in cur.fetchall()}
                self.found_mid_op(holders_told, dict.fromkeys(idle, 0), {}, sorted(idle), where)
                cur.execute(NEWEST_ROW)
                newest, held, epoch, bits = cur.fetchone()
                if newest is None or held:
                    return
                wait = default_layout(epoch_date_ms(epoch), int(bits)).decode(newest)["time"] + 5 - cl.idgen_clock_ms()
                if wait > 2000:
                    return
                time.sleep(max(wait, 0) / 1000.0)
                cur.execute("SELECT idgen_horizon(), (SELECT count(*) FROM idgen_horizon_holders)")
                h, held = cur.fetchone()
            if not held:
                self.found_mid_op(horizon_passed, h, newest, "%s at step %d" % (where, self.step))
        except psycopg2.Error:
            return
        finally:
            conn.close()

    def crowd_horizon(self, cl, db, where):
        """Sessions in every free backend slot (until the server takes no
        more), each holding an ID of idgen's layout, a millisecond or more
        after the last, in an open transaction; then, as they end from the
        first, idgen_horizon(), asked from a session opened before them,
        must be at most the least ID still held: whichever slot a scan of
        holders would skip, its holder is the least in turn."""
        asker, held, ids, pids = cl.connect(db), [], [], []
        try:
            with asker.cursor() as cur:
                # committed first: a database's first ID here records this
                # cluster in idgen_system, which would hold the others back
                if try_sql(cur, "SELECT idgen_next()", None):
                    self.refusals["crowd: the server refuses to generate"] += 1
                    return
                before = worker_ids_row(cur)
                cur.execute(DEFAULT_SETTINGS)
                epoch, bits = cur.fetchone()
                layout = default_layout(epoch_date_ms(epoch), int(bits))
            for _ in range(CROWD_SESSIONS):
                try:
                    conn = cl.connect(db)
                    held.append(conn)
                    with conn.cursor() as cur:
                        cur.execute("BEGIN; SELECT idgen_next(), pg_backend_pid()")
                        ident, pid = cur.fetchone()
                        ids.append(ident)
                        pids.append(pid)
                except psycopg2.Error as e:
                    self.refusals["crowd: %s" % normalize(str(e))] += 1
                    break
                time.sleep(0.002)
            with asker.cursor() as cur:
                self.found_mid_op(slots_full_counted, before, worker_ids_row(cur), len(ids), where)
                for k, least in enumerate(ids):
                    cur.execute("SELECT idgen_horizon()")
                    self.found_mid_op(horizon_below_holders, cur.fetchone()[0], least, len(ids) - k, where)
                    cur.execute(HOLDERS)
                    self.found_mid_op(holders_told, dict(cur.fetchall()),
                                      {p: layout.decode(i)["time"] for p, i in zip(pids[k:], ids[k:])},
                                      [asker.get_backend_pid()] + pids[:k],
                                      where)
                    with held[k].cursor() as ending:
                        ending.execute("ROLLBACK")
        finally:
            cl.close_all(held + [asker], db)
