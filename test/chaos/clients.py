"""Clients: each in a thread of its own with one connection, making the
calls of a burst op and recording what they were handed and when; the
SIGKILL a burst may send while they run."""

import re
import threading
import time

import psycopg2

from params import CURRENT, HOSTILE_PATH

LOST = "connection lost"


def now_ms():
    return time.time() * 1000.0


def normalize(msg):
    return re.sub(r"\d+", "N", msg.strip().splitlines()[0])[:150]


SQL = {
    # in the order made
    "next": "SELECT string_agg(idgen_next({args})::text, ',' ORDER BY g) FROM generate_series(1, {m}) g",
    "batch": "SELECT string_agg(i::text, ',' ORDER BY k) FROM idgen_next_batch({args}) WITH ORDINALITY b(i, k)",
    "block": "SELECT string_agg(idgen_next_block({args})::text, ',' ORDER BY g) FROM generate_series(1, {m}) g",
    "objectid": "SELECT string_agg(objectid()::text, ',' ORDER BY g) FROM generate_series(1, {m}) g",
    "uuidv7": ("SELECT string_agg(replace(idgen_uuidv7()::text, '-', ''), ',' ORDER BY g)"
               " FROM generate_series(1, {m}) g"),
    # a session idle between its calls, m ms
    "sleep": "SELECT pg_sleep({m} / 1000.0)::text",
}


# A role without privileges, m ms into a burst, counts the rows of these
# views that show it more of the others' sessions than pg_stat_activity does
# (hostile.py): by default idgen_workers alone, as idgen 1.0 has no other.
SPY_READS = 40
SPIED = {
    "idgen_workers": "pid IS NOT NULL OR claimed_at IS NOT NULL OR last_ts IS NOT NULL "
                     "OR ids_issued IS NOT NULL OR clock_waits IS NOT NULL",
    "idgen_horizon_holders": "pid IS NOT NULL AND (since IS NOT NULL OR held_for IS NOT NULL)",
}


def spy_sql(call):
    """From m ms in, SPY_READS reads 5 ms apart: one in the midst of the
    others' statements, whose transactions hold the horizon while they run.
    Recorded cases (views None) read once."""
    views = (call[1] or "idgen_workers").split(",")
    counts = " + ".join("(SELECT count(*) FROM %s WHERE g > 0 AND (%s))" % (v, SPIED[v]) for v in views)
    reads = SPY_READS if call[1] else 1
    return ("SELECT pg_sleep(%g)::text || sum(seen) FROM generate_series(1, %d) g, "
            "LATERAL (SELECT pg_sleep(0.005 * least(g - 1, 1))) s, LATERAL (SELECT %s AS seen) v"
            % (call[3] / 1000.0, reads, counts))


def call_args(call):
    """The arguments of a call's function: the batch or block size, the
    layout, the shard (call[4], where the burst resolved one)."""
    func, layout, n = call[:3]
    shard = call[4] if len(call) > 4 else None
    return ([str(n)] if func in ("batch", "block") else []) + (["'%s'" % layout] if layout else []) + \
        ([str(shard)] if shard is not None else [])


def call_sql(call):
    if call[0] == "spy":
        return spy_sql(call)
    return SQL[call[0]].format(args=", ".join(call_args(call)), m=call[3])


def parse_ids(call, text):
    func, n = call[0], call[2]
    if func == "spy":
        return [int(text)]
    if not text:
        return []
    if func in ("objectid", "uuidv7"):
        return [int(x, 16) for x in text.split(",")]
    ids = [int(x) for x in text.split(",")]
    if func == "block":
        return [first + k for first in ids for k in range(n)]
    return ids


def run_client(clusters, spec, out, pids, index):
    cl = clusters[spec["c"]]
    base = {"c": spec["c"], "db": spec["db"], "client": index}
    try:
        conn = cl.connect(spec["db"], spec.get("timeout_ms", 30000),
                          HOSTILE_PATH if spec.get("hostile") else None)
    except psycopg2.Error as e:
        out.append(dict(base, call=None, error=normalize(str(e))))
        return
    base["conn_ms"] = now_ms()
    pids[index] = conn.get_backend_pid()
    if spec.get("role"):
        try:
            with conn.cursor() as cur:
                cur.execute("SET ROLE %s" % spec["role"])
        except psycopg2.Error as e:
            # a cluster made by a restore, which has no such role
            out.append(dict(base, call=spec["calls"][0], text="SET ROLE", ids=[], error=(e.pgcode, str(e))))
            conn.close()
            return
    tx = spec.get("tx")
    try:
        for call in spec["calls"]:
            res = dict(base, call=call, text=call_sql(call), ids=[], error=None)
            res["t0"] = now_ms()
            try:
                with conn.cursor() as cur:
                    if tx:
                        cur.execute("BEGIN ISOLATION LEVEL %s; SAVEPOINT chaos" % tx["isolation"])
                    cur.execute(res["text"])
                    text = cur.fetchone()[0]
                    res["t1"] = now_ms()
                    if tx:
                        cur.execute("RELEASE chaos; " + tx["end"])
                res["ids"] = parse_ids(call, text)
            except psycopg2.Error as e:
                res["t1"] = res.get("t1", now_ms())
                code = e.pgcode or LOST
                res["error"] = (code, str(e))
                end_transaction(conn, tx)
            out.append(res)
            if res["error"] and (res["error"][0] == LOST or conn.closed):
                break
    finally:
        conn.close()


def end_transaction(conn, tx):
    """After an error inside a client's transaction (tx), it ends."""
    if tx and not conn.closed:
        try:
            with conn.cursor() as cur:
                cur.execute("ROLLBACK")
        except psycopg2.Error:
            pass


def run_clients(clusters, clients, kill, serial=False):
    """Every client in a thread of its own, all at once (or one after
    another); the kill, if any, fires after its delay from the start.
    Returns the results and when the kill was sent."""
    out, pids = [], {}
    kill_ms = None
    threads = [threading.Thread(target=run_client, args=(clusters, spec, out, pids, i))
               for i, spec in enumerate(clients)]
    for t in threads:
        t.start()
        if serial:
            t.join()
    if kill:
        time.sleep(kill["after_ms"] / 1000.0)
        cl = clusters[kill["c"]]
        kill_ms = now_ms()
        if kill["what"] == "postmaster":
            cl.kill_postmaster()
        else:
            idx = kill["client"] if kill["client"] is not None and kill["client"] < len(clients) else 0
            pid = pids.get(idx)
            if pid is None or clients[idx]["c"] != kill["c"]:
                pid = backend_pid(cl)
            if pid:
                cl.kill_backend(pid)
    for t in threads:
        t.join()
    return out, kill_ms


def create_extension(version):
    if version == CURRENT:
        return "CREATE EXTENSION idgen"
    return "CREATE EXTENSION idgen VERSION '%s'" % version


def backend_pid(cl):
    rows = cl.query("postgres", "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                "AND pid <> pg_backend_pid() LIMIT 1")
    if rows:
        return rows[0][0]
    return cl.query("postgres", "SELECT pg_backend_pid()")[0][0]
