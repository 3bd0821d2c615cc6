"""The model's random choice of an op of each kind (Model.choose draws the
kind from params.WEIGHTS), and the bursts and outboxes drills put in
between."""

import collections
import copy
import datetime
import random

from layouts import BUILTIN, FAMILIES, NAMES
from params import (CROWD, CURRENT, EDGE_NODES, HOLD_MS, MAX_CLUSTERS, MAX_NODE_SETTING, OFFSETS,
                    SETTING_CHOICES, SHARD_AT, STANDBY_OFFSETS, THROUGH_FAMILIES)


class Choices:
    def choose_define(self):
        c, db = self.pick_db()
        if c is None:
            return None
        free = [n for n in NAMES if n not in self.clusters[c]["dbs"][db]["layouts"]]
        if not free:
            return None
        # Names another database of the server defines, more often than not.
        taken = [n for n in free if any(n in self.clusters[c]["dbs"][d]["layouts"] for d in self.dbs(c))]
        name = self.r.choice(taken if taken and self.r.random() < 0.6 else free)
        return dict(op="define", c=c, db=db, **self.layout_spec(name))

    def choose_redefine(self):
        c, db = self.pick_db()
        if c is None or not self.clusters[c]["dbs"][db]["layouts"]:
            return None
        name = self.r.choice(sorted(self.clusters[c]["dbs"][db]["layouts"]))
        # now and then a session that generated in it before does after,
        # across two definitions with a worker field (redefines.py)
        op = dict(op="redefine", c=c, db=db, held=self.r.random() < 0.3, **self.layout_spec(name))
        if op["held"]:
            op["through"] = list(THROUGH_FAMILIES)
        if self.r.random() < 0.5:
            # Applications keep generating across a DBA's change: a burst in
            # the name before it (borrowing ahead of the clock) and after it.
            before = self.burst_in(c, db, name, 3000)
            self.queue += [op, self.burst_in(c, db, name, 300)]
            return before
        return op

    def burst_in(self, c, db, name, m):
        clients = [{"c": c, "db": db, "calls": [["next", name, 1, m]]} for _ in range(2)]
        return {"op": "burst", "clients": clients, "kill": None}

    def choose_drop(self):
        c, db = self.pick_db()
        if c is None or not self.clusters[c]["dbs"][db]["layouts"]:
            return None
        name = self.r.choice(sorted(self.clusters[c]["dbs"][db]["layouts"]))
        return {"op": "drop", "c": c, "db": db, "name": name}

    def choose_clock(self):
        c = self.r.choice(self.primaries())
        s = dict(self.clusters[c]["set"])
        # a step back past every bound, now and then: refusals and their hints
        s["clock_offset_ms"] = self.r.choice(OFFSETS) if self.r.random() < 0.85 else min(OFFSETS)
        if self.r.random() < 0.25:
            key = self.r.choice(["max_lead_ms", "max_clock_regression_ms"])
            s[key] = self.r.choice(SETTING_CHOICES[key])
        op = {"op": "reload", "c": c, "set": s}
        if self.dbs(c, CURRENT) and self.r.random() < 0.4:
            op["held"] = self.r.choice(self.dbs(c, CURRENT))
        return op

    def choose_restart(self):
        c = self.r.choice(self.primaries())
        m = self.clusters[c]
        s = dict(m["set"])
        for key in self.r.sample(sorted(SETTING_CHOICES), self.r.randint(0, 2)):
            # A standby must keep its primary's epoch and node_bits.
            if not ((m["standby"] or self.leasing(c)) and key in ("epoch", "node_bits")):
                s[key] = self.r.choice(SETTING_CHOICES[key])
        if not self.leasing(c) and s["node_id"] >= 1 << s["node_bits"]:
            s["node_bits"] = m["set"]["node_bits"]
        if self.r.random() < 0.3:
            s["clock_offset_ms"] = self.r.choice(OFFSETS)
        p = self.r.random()
        if p > 0.96 and not self.leasing(c) and not m["standby"] and self.dbs(c, CURRENT):
            ops = self.bad_node_ops(c, s)
            self.queue += ops[1:]
            return ops[0]
        if p < 0.15 and not self.leasing(c):
            # Back to an id this server used before, or one nobody used.
            node = self.r.choice(sorted(m["nodes"])) if self.r.random() < 0.5 else self.free_node()
            if node is not None and node < 1 << s["node_bits"]:
                s["node_id"] = node
        elif p < 0.25 and not self.leasing(c) and not m["standby"]:
            edges = [e for e in EDGE_NODES if e[1] not in self.used_nodes]
            if edges:
                s["node_bits"], s["node_id"] = self.r.choice(edges)
        op = {"op": "restart", "c": c, "mode": self.r.choice(["fast", "immediate"]), "set": s}
        if self.dbs(c, CURRENT) and self.r.random() < 0.4:
            # an outbox transaction left prepared across it
            op["prepared"] = self.r.choice(self.dbs(c, CURRENT))
        return self.polled_back(c, op)

    def side_stream(self, salt=""):
        """A stream of draws of its own, seeded by the main one's state but
        taking none of its draws: a form added to a drill leaves the ops
        the seed drew before as they were.  A salt (the step) sets apart
        draws between which the main stream may draw nothing (queued ops)."""
        return random.Random(str(self.r.getstate()) + salt)

    def polled_back(self, c, op):
        """Now and then (drawn from a stream of its own), a restart of a
        server whose outbox is polled comes with its clock back, a second
        or more after the last poll: the horizon's mark, written when the
        horizon comes near it, must still be ahead of every horizon
        returned, since the restart starts there."""
        side = self.side_stream()
        if not self.clusters[c].get("polled") or self.leasing(c) or side.random() < 0.7:
            return op
        return self.back_after_poll(op, side)

    def back_after_poll(self, restart, side):
        """restart queued with its clock a second or more behind both its
        own and the server's now, after a pause past the last poll, which
        it returns."""
        s = restart["set"]
        restart["set"] = dict(s, clock_offset_ms=min(s["clock_offset_ms"],
                                                     self.clusters[restart["c"]]["set"]["clock_offset_ms"])
                              - side.choice([1000, 3000]))
        self.queue.append(restart)
        return {"op": "pause", "ms": side.choice([1100, 1300, 1500])}

    def bad_node_ops(self, c, s, bad=None):
        """A restart with a node id one past idgen.node_bits' range, or one
        past the setting's own (1024: PostgreSQL keeps the default, 0, and
        idgen must remember the value it rejected), which every layout must
        refuse, those that split their worker ids or shards among node ids
        too; a burst; a restart with s."""
        db = self.r.choice(self.dbs(c, CURRENT))
        calls = [["next", None, 1, 20], ["next", "sonyflake", 1, 20], ["next", "instagram", 1, 20],
                 self.choose_call(c, db, None)]
        if bad is None:
            bad = self.r.choice([1 << s["node_bits"], 1 << s["node_bits"], MAX_NODE_SETTING + 1])
        return [{"op": "restart", "c": c, "mode": "fast", "set": dict(s, node_id=bad)},
                {"op": "burst", "kill": None, "clients": [{"c": c, "db": db, "calls": calls}]},
                {"op": "restart", "c": c, "mode": "fast", "set": s}]

    def choose_createdb(self):
        c = self.r.choice(self.primaries())
        free = [d for d in self.db_names if d not in self.clusters[c]["dbs"]]
        if not free:
            return None
        version = "1.0" if self.r.random() < 0.3 else CURRENT
        return {"op": "createdb", "c": c, "db": self.r.choice(free), "version": version}

    def choose_dropdb(self):
        c = self.r.choice(self.primaries())
        if len(self.dbs(c)) < 2:
            return None
        return {"op": "dropdb", "c": c, "db": self.r.choice(self.dbs(c))}

    def choose_ext_recreate(self):
        c, db = self.pick_db(None)
        if c is None:
            return None
        version = "1.0" if self.r.random() < 0.4 else CURRENT
        return {"op": "ext_recreate", "c": c, "db": db, "version": version}

    def choose_ext_update(self):
        c, db = self.pick_db("1.0")
        return None if c is None else {"op": "ext_update", "c": c, "db": db}

    def choose_standby(self):
        if self.standbys() or len(self.clusters) >= MAX_CLUSTERS:
            return None
        sync = self.r.random() < 0.5
        node = None if sync else self.free_node()
        # leasing servers' standbys: the known limitation of docs/node-ids.md
        prim = [c for c in self.primaries() if not self.leasing(c)]
        if not sync and node is None or not prim:
            return None
        c = self.r.choice(prim)
        return {"op": "standby", "c": c, "s": self.new_name("S"), "sync": sync, "node_id": node,
                "offset": self.r.choice(STANDBY_OFFSETS), "set": self.standby_settings(c)}

    def cut_off_burst(self, c):
        """Bare calls on c while its synchronous standby is cut off: they
        wait for marks it never confirms, and give up after 1 s; the calls
        after the first find the mark the first raised, written here and
        never confirmed."""
        burst = self.burst_on(c, c)
        if burst:
            for client in burst["clients"]:
                client["timeout_ms"] = 1000
                client["calls"] = [["next", None, 1, 300]] * 3 + client["calls"][1:3]
        return burst

    def standby_settings(self, c):
        """Settings a standby has that its primary c has not, a third of
        the time: another idgen.epoch or idgen.node_bits (rolled out to it
        first)."""
        p = self.r.random()
        if p < 0.17:
            return {"epoch": self.r.choice(SETTING_CHOICES["epoch"])}
        # none where c's node id fits no node_bits (one past the setting's range)
        fit = [b for b in SETTING_CHOICES["node_bits"] if self.clusters[c]["set"]["node_id"] < 1 << b]
        if p < 0.33 and fit:
            return {"node_bits": self.r.choice(fit)}
        return {}

    def later_standby(self, p):
        """Half the failover drills' standbys, drawn from a stream of their
        own (the main stream draws what it drew before): idgen.epoch a day
        later than its primary p's, rolled out to it first (issue #38 row
        1).  Its clock is then set a day ahead too, so that, counted from
        its epoch, it is a few seconds behind the primary's newest IDs: the
        marks it replays must move with the epoch.  The epoch and whether
        p restarts first (else its clock moves by a reload), or None."""
        side = self.side_stream()
        if side.random() < 0.5:
            return None
        day = datetime.date.fromisoformat(self.clusters[p]["set"]["epoch"])
        return (day + datetime.timedelta(days=1)).isoformat(), side.random() < 0.5

    def choose_standby_restart(self):
        """A standby restarted or crashed before its promotion, after a
        restartpoint or not: what it replayed must outlive the restart."""
        if not self.standbys():
            return None
        return self.standby_restart(self.standbys()[0])

    def standby_restart(self, s):
        return {"op": "standby_restart", "s": s, "mode": self.r.choice(["fast", "immediate"]),
                "restartpoint": self.r.random() < 0.7}

    def burst_db(self, model, c, db):
        """A burst on server c in database db, which model's db holds."""
        clients = [{"c": c, "db": db, "calls": [["next", None, 1, 3000]] +
                    [self.choose_call(model, db, None) for _ in range(self.r.randint(1, 3))]}
                   for _ in range(self.clients)]
        return {"op": "burst", "clients": clients, "kill": None}

    def burst_new_db(self, c, db):
        """A burst in idgen's own layouts on server c's database db, which
        holds no layouts of its own; None without one."""
        if db is None:
            return None
        clients = [{"c": c, "db": db, "calls": [["next", None, 1, 3000], ["next", "pgedge", 1, 300]]}
                   for _ in range(2)]
        return {"op": "burst", "clients": clients, "kill": None}

    def burst_on(self, model, c):
        """A burst on server c, with model's databases and layouts, idgen's
        own layout first."""
        dbs = self.dbs(model, CURRENT) or self.dbs(model)
        if not dbs:
            return None
        clients = []
        for _ in range(self.clients):
            db = self.r.choice(dbs)
            calls = [["next", None, 1, 3000]] + [self.choose_call(model, db, None)
                                                 for _ in range(self.r.randint(1, 3))]
            clients.append({"c": c, "db": db, "calls": calls})
        return {"op": "burst", "clients": clients, "kill": None}

    def outbox_in(self, c, db):
        op = self.choose_outbox()
        if op is not None:
            op.update(c=c, db=db)
        return op

    def held_outbox(self, c, db):
        """An outbox on c, which has a synchronous standby, whose commits
        that standby holds a while between their commit record and their
        visibility.  Its transactions hold no IDs while they run: the
        oldest then is one whose commit is held, not one still running,
        whose IDs would hold the horizon below the others' anyway."""
        op = self.outbox_in(c, db)
        if op is not None:
            op["hold_ms"] = self.r.choice(HOLD_MS)
            for txns in op["writers"]:
                for txn in txns:
                    txn[1] = 0
        return op

    def choose_outbox(self, model=None, c=None):
        """Writers of an outbox table in transactions that hold their IDs
        a while, and a poller following docs/outbox.md."""
        if model is None:
            model, db = self.pick_db()
            if model is None:
                return None
        else:
            dbs = self.dbs(model, CURRENT)
            if not dbs:
                return None
            db = self.r.choice(dbs)
        writers = [[[self.r.choice([1, 1, 2, 5]), self.r.choice([0, 0, 30, 100, 300]),
                     self.r.choice(["COMMIT"] * 5 + ["ROLLBACK", "PREPARE"])]
                    for _ in range(self.r.randint(1, 4))]
                   for _ in range(self.r.randint(2, 4))]
        op = {"op": "outbox", "c": c or model, "db": db, "writers": writers}
        if self.r.random() < 0.4:
            op["hold_ms"] = self.r.choice(HOLD_MS)     # where a synchronous standby is
        return op

    def choose_promote(self):
        if not self.standbys():
            return None
        s = self.standbys()[0]
        # A standby with the primary's node id only after the primary is gone.
        kill = self.clusters[s]["sync"] or self.r.random() < 0.5
        return {"op": "promote", "s": s, "kill_primary": kill}

    def choose_dump_restore(self):
        if len(self.clusters) >= MAX_CLUSTERS:
            return None
        c, db = self.pick_db(None)
        node = self.free_node()
        if c is None or node is None:
            return None
        s = dict(self.clusters[c]["set"], node_id=node, clock_offset_ms=0)
        s.pop("synchronous_standby_names", None)
        s.pop("lease", None)
        s.pop("node_lease_s", None)
        return {"op": "dump_restore", "c": c, "db": db, "new": self.new_name("R"), "set": s}

    def choose_retire(self):
        prim = [c for c in self.primaries() if not self.clusters[c]["standby"]]
        if len(self.primaries()) <= 2 or not prim:
            return None
        return {"op": "retire", "c": self.r.choice(prim)}

    def choose_burst(self):
        focus = self.r.choice(self.primaries())
        dbs = self.clusters[focus]["dbs"]
        names = collections.Counter(n for d in dbs for n in dbs[d]["layouts"])
        shared = sorted(n for n, k in names.items() if k > 1)
        # Most bursts generate in one name from every database defining it.
        focus_name = self.r.choice(shared if shared and self.r.random() < 0.7 else sorted(names)) \
            if names else None
        clients = []
        for _ in range(self.clients):
            c = focus if self.r.random() < 0.75 else self.r.choice(self.primaries())
            if not self.clusters[c]["dbs"]:
                continue
            holders = [d for d in self.dbs(c) if focus_name in self.clusters[c]["dbs"][d]["layouts"]]
            db = self.r.choice(holders if holders and self.r.random() < 0.8 else self.dbs(c))
            calls = [self.choose_call(c, db, focus_name) for _ in range(self.r.randint(1, 4))]
            clients.append({"c": c, "db": db, "calls": calls})
        if not clients:
            return None
        if self.r.random() < 0.1:
            clients += copy.deepcopy(clients * (CROWD - 1))
        op = {"op": "burst", "clients": clients, "kill": None}
        p = self.r.random()
        if p < 0.10:
            i = self.r.randrange(len(clients))
            op["kill"] = {"what": "backend", "c": clients[i]["c"], "client": i,
                          "after_ms": self.r.randint(5, 300)}
        elif p < 0.14:
            op["kill"] = {"what": "postmaster", "c": focus, "client": None,
                          "after_ms": self.r.randint(5, 300)}
            if self.r.random() < 0.5:
                # the host's clock stepped while the server was down
                op["kill"]["set"] = dict(self.clusters[focus]["set"],
                                         clock_offset_ms=self.r.choice(OFFSETS))
        return op

    def choose_call(self, c, db, focus_name):
        """[function, layout or None, n (batch size or block size), repeats,
        and where the layout has a shard field, often where in the server's
        range the shard passed lies (params.SHARD_AT)]"""
        dbm = self.clusters[c]["dbs"][db]
        r = self.r
        if dbm["version"] == "1.0":
            func = r.choice(["next", "next", "batch", "objectid", "uuidv7"])
            return [func, None, r.choice([1, 100, 2000]), r.choice([1, 50, 1000])]
        p = r.random()
        if p < 0.65 and dbm["layouts"]:
            name = focus_name if focus_name in dbm["layouts"] and r.random() < 0.8 \
                else r.choice(sorted(dbm["layouts"]))
            fields, widths, _, radix = FAMILIES[dbm["layouts"][name]["family"]]
        elif p < 0.75:
            name = r.choice(sorted(BUILTIN))
            _, _, radix, fields, widths = BUILTIN[name]
        elif p < 0.9:
            name = r.choice([None, "idgen"])
            fields, widths, radix = ("time", "node", "worker", "sequence"), (41, 4, 6, 12), 2
        else:
            return [r.choice(["objectid", "uuidv7"]), None, 1, r.choice([10, 1000])]
        blocks, shards = fields[-1] == "sequence", "shard" in fields
        func = r.choice(["next", "next", "batch"] + (["block"] if blocks else []))
        if func == "block" and r.random() < 0.25:
            # at the sequence's edge: three quarters of it, or all of it
            seq = radix ** widths[-1]
            call = [func, name, r.choice([3 * seq // 4, seq]), r.choice([1, 3])]
        elif func == "block":
            call = [func, name, r.choice([1, 2, 5, 16]), r.choice([1, 20, 200])]
        elif func == "batch":
            call = [func, name, r.choice([1, 50, 500, 3000]), 1]
        else:
            call = [func, name, 1, r.choice([1, 20, 300, 3000])]
        if shards and r.random() < 0.6:
            call.append(r.choice(SHARD_AT))
        return self.edge_block(call, fields, widths, radix)
