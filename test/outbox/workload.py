#!/usr/bin/env python3
"""Outbox writers and pollers against idgen_horizon() (t/020_horizon.pl).

Writers commit and roll back transactions of random length (some over a
second), some taking their ID before they write, some in a savepoint, some
as blocks.  Three pollers follow the outbox at once: one with the horizon
protocol, and two controls: one moving its cursor to the largest ID read,
one following the protocol with the clock in place of the horizon.
Prints one line: key=value pairs the test reads.
"""
import random
import sys
import threading
import time

import psycopg2

# Runs until the writers committed COMMITS transactions: a count, not a
# time, so that a loaded machine runs longer rather than fewer (at most
# CAP seconds).
DSN, COMMITS, WRITERS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
CAP = 300
stop = threading.Event()
commits = [0]
commits_lock = threading.Lock()
writers_done = threading.Event()
errors = []


def writer(seed):
    rng = random.Random(seed)
    conn = psycopg2.connect(DSN)
    cur = conn.cursor()
    try:
        while not stop.is_set():
            kind = rng.random()
            if kind < 0.3:    # the ID first, the row later
                cur.execute("SELECT idgen_next()")
                (oid,) = cur.fetchone()
                time.sleep(rng.random() * 0.3)
                cur.execute("INSERT INTO outbox (id, body) VALUES (%s, 'early')", (oid,))
            elif kind < 0.45:  # in a savepoint
                cur.execute("SAVEPOINT s")
                cur.execute("INSERT INTO outbox (body) VALUES ('savepoint')")
                cur.execute("RELEASE SAVEPOINT s")
            elif kind < 0.55:  # a block of three
                cur.execute("SELECT idgen_next_block(3)")
                (first,) = cur.fetchone()
                cur.execute("INSERT INTO outbox (id, body) SELECT %s + i, 'block' "
                            "FROM generate_series(0, 2) i", (first,))
            else:
                cur.execute("INSERT INTO outbox (body) VALUES ('plain')")
            # most short, some over a second
            r = rng.random()
            time.sleep(1.2 + rng.random() * 0.5 if r < 0.05 else rng.random() * 0.05)
            if rng.random() < 0.25:
                conn.rollback()
            else:
                conn.commit()
                with commits_lock:
                    commits[0] += 1
                    if commits[0] >= COMMITS:
                        stop.set()
    except Exception as e:  # reported, so the test fails loudly
        errors.append(repr(e))
    finally:
        conn.close()


def poller(horizon_seen, max_seen, clock_seen):
    cc = psycopg2.connect(DSN)
    cc.autocommit = True
    c = cc.cursor()
    clock_cursor = 0
    ch = psycopg2.connect(DSN)
    ch.autocommit = True
    h = ch.cursor()
    cm = psycopg2.connect(DSN)
    cm.autocommit = True
    m = cm.cursor()
    cursor, max_cursor = 0, 0
    final = False
    while True:
        last = final
        # the protocol: the horizon, then the rows below it in a later statement
        h.execute("SELECT idgen_horizon()")
        (horizon,) = h.fetchone()
        h.execute("SELECT id FROM outbox WHERE id >= %s AND id < %s", (cursor, horizon))
        horizon_seen.extend(r[0] for r in h.fetchall())
        cursor = horizon
        # a second control: the same protocol with the clock for the horizon
        c.execute("SELECT idgen_from_timestamp(clock_timestamp())")
        (clock,) = c.fetchone()
        c.execute("SELECT id FROM outbox WHERE id >= %s AND id < %s", (clock_cursor, clock))
        clock_seen.extend(r[0] for r in c.fetchall())
        clock_cursor = clock
        # the control: the largest ID read
        m.execute("SELECT id FROM outbox WHERE id > %s ORDER BY id", (max_cursor,))
        rows = [r[0] for r in m.fetchall()]
        max_seen.extend(rows)
        if rows:
            max_cursor = rows[-1]
        if last:
            break
        # one more round after the writers are gone, once the clock has passed
        # any ID they borrowed ahead of it (idgen.max_lead_ms, 1 s)
        final = writers_done.is_set()
        time.sleep(1.1 if final else 0.02)
    ch.close()
    cm.close()
    cc.close()


horizon_seen, max_seen, clock_seen = [], [], []
threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
for t in threads:
    t.start()
p = threading.Thread(target=poller, args=(horizon_seen, max_seen, clock_seen))
p.start()
stop.wait(CAP)
stop.set()
for t in threads:
    t.join()
writers_done.set()
p.join()

conn = psycopg2.connect(DSN)
cur = conn.cursor()
cur.execute("SELECT id FROM outbox")
committed = {r[0] for r in cur.fetchall()}
cur.execute("SELECT count(*) FROM outbox WHERE body = 'early'")
(early,) = cur.fetchone()
print("committed=%d horizon_read=%d horizon_distinct=%d horizon_uncommitted=%d "
      "horizon_missed=%d max_missed=%d clock_missed=%d early=%d errors=%d" % (
          len(committed), len(horizon_seen), len(set(horizon_seen)),
          len(set(horizon_seen) - committed), len(committed - set(horizon_seen)),
          len(committed - set(max_seen)), len(committed - set(clock_seen)),
          early, len(errors)))
for e in errors:
    print("error:", e, file=sys.stderr)
