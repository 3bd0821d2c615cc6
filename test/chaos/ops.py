"""The model: what the servers should look like, and the random choice of the
next operation from it.

Ops are plain dicts with every parameter spelled out (full settings, layout
definitions, each client's calls), so that a recorded list can be replayed
alone or in part, which is how a failing run is shrunk.  The model is
updated as if every op succeeded; it only steers the choice of later ops,
and the checker reads what the servers really hold.
"""

import collections
import copy
import datetime
import random

from layouts import BUILTIN, EPOCHS, FAMILIES, NAMES

DBS = ["db1", "db2", "db3"]
CURRENT = "current"         # the extension's default_version (recorded cases may name one)
MAX_CLUSTERS = 5
# Node ids set by hand; the registry holds them as leased forever, so that a
# leasing server (of node_bits 4) gets one of LEASE_POOL.  node_bits is kept
# >= 4, so every one of them fits.
NODE_IDS = range(12)
LEASE_POOL = range(12, 16)
LEASE_S = 5                 # idgen.node_lease_s: its minimum, to keep drills short
SETTING_CHOICES = {
    "epoch": ["2024-01-01", "2024-01-01", "2023-12-31", "2023-01-01", "2024-03-01"],
    # 8 leaves 4 worker ids a node: a crowd (choose_burst) shares one
    "node_bits": [4, 4, 5, 6, 8],
    "max_lead_ms": [1000, 1000, 0, 20, 5000],
    "max_clock_regression_ms": [10000, 10000, 3000, 30000, 0],
}
# Clock offsets: small steps back are ridden out, large ones refused;
# forward steps are remembered after the clock is set right again.
OFFSETS = [0, 0, 0, -300, -1500, -4000, -8000, -40000, 2000, 9000]
WEIGHTS = {
    "burst": 40, "define": 10, "redefine": 9, "drop": 3, "clock": 9, "restart": 6,
    "createdb": 2, "dropdb": 1, "ext_recreate": 2, "ext_update": 3,
    "standby": 2, "promote": 2, "dump_restore": 1.5, "retire": 1, "outbox": 5, "drill": 3,
    "standby_restart": 2,
}
# Node ids at the edges: the largest node_bits allows, and the size of a
# layout's node field (FAMILIES: 4, 5 and 6 bits), which that layout must
# refuse.  Above NODE_IDS and LEASE_POOL, so no other server has them.
EDGE_NODES = [(5, 16), (5, 31), (6, 32), (6, 63), (7, 64), (7, 127)]
# A burst with more clients than a server has worker ids, now and then.
CROWD = 3
# An outbox's commits held between their commit record and their
# visibility (a synchronous standby's receiver stopped), now and then.
HOLD_MS = [300, 700]
# Drills: the cases docs/guarantees.md names, as short op sequences that
# reach them for sure.  Each run has every one early (in an order of its
# seed) and more now and then; the random ops around them find the rest.
DRILLS = ["failover", "node_bits", "epoch_later", "churn", "clock_back", "epoch_twins", "refused"]
# Those of 1.5's protections, after the others, whose order (and so the
# step each mutant is killed at) stays what it was for every seed.
LATER_DRILLS = ["full", "lost_hwm", "move"]
# Those of node id leases (issue #31), after those.
LEASE_DRILLS = ["outage", "frozen", "clone"]
# The registry failing (issue #39), after all the others, in this order: a
# failover or a restore leaves every server that leases anew refusing for a
# minute, and
# their place keeps every earlier drill where it was for every seed.
REGISTRY_DRILLS = ["registry_stall", "registry_failover", "registry_restore"]
ALL_DRILLS = DRILLS + LATER_DRILLS + LEASE_DRILLS + REGISTRY_DRILLS
NARROW = len(FAMILIES) - 1      # the family whose node field holds node ids 0 and 1
WIDTH_TWINS = [0, 1]            # families alike but for their widths, without a worker field
# A standby's clock: often right, sometimes behind its primary's.
STANDBY_OFFSETS = [0, 0, 0, -1500, -4000]
# The table of marks is small, as full tables are a class of their own
# (issue #28): idgen 1.4's was fixed at 64 entries.
MAX_MARKS = 64
# Layouts the full drill defines at once: more than the table of marks holds.
FILL_LAYOUTS = 70
FILL_FAMILY = 4             # no node field: node_bits places the node id
FILL_BITS = [4, 5, 6, 7, 8]     # 8 leaves 4 worker ids a node: bursts share one


def describe(op):
    """One line for the reproduction report."""
    kind = op["op"]
    if kind == "burst":
        parts = []
        for i, cl in enumerate(op["clients"]):
            calls = ", ".join(call_text(c) for c in cl["calls"])
            parts.append("client %d on %s/%s: %s" % (i, cl["c"], cl["db"], calls))
        if op.get("serial"):
            parts.append("one client after another")
        kill = op.get("kill")
        if kill:
            parts.append("SIGKILL %s of %s after %d ms" % (
                "the postmaster" if kill["what"] == "postmaster" else
                "client %d's backend" % kill["client"], kill["c"], kill["after_ms"]))
        return "burst: " + "; ".join(parts)
    rest = {k: v for k, v in op.items() if k != "op"}
    return "%s %s" % (kind, " ".join("%s=%s" % (k, v) for k, v in rest.items()))


def combo(settings):
    """A node id and node_bits: idgen 1.4 kept a mark per layout and each."""
    return settings["node_id"], settings["node_bits"]


def call_text(call):
    func, layout, n, m = call
    args = ", ".join(str(a) for a in ([n] if func in ("batch", "block") else []) +
                     (["'%s'" % layout] if layout else []))
    name = {"next": "idgen_next", "batch": "idgen_next_batch", "block": "idgen_next_block",
            "objectid": "objectid", "uuidv7": "idgen_uuidv7"}[func]
    return "%s(%s) x%d" % (name, args, m)


class Model:
    def __init__(self, rng, clients, databases=len(DBS)):
        self.r = rng
        self.clients = clients
        self.db_names = DBS[:databases]
        self.clusters = {}
        self.used_nodes = set()
        self.serial = 0
        self.queue = self.setup_ops()
        # Every run has each drill early, however short it is.
        self.steps = 0
        self.drills = list(DRILLS)
        self.r.shuffle(self.drills)
        later = list(LATER_DRILLS)
        self.r.shuffle(later)
        self.drills += later
        # epoch_later twice in a row: a server that never polled first, then
        # one with a poller (drill_epoch_later)
        self.drills.insert(self.drills.index("epoch_later"), "epoch_later")
        self.epoch_later_runs = 0
        # the lease drills among those
        for kind in LEASE_DRILLS:
            self.drills.insert(self.r.randint(len(DRILLS), len(self.drills)), kind)
        self.drills += REGISTRY_DRILLS
        self.drill_at = self.r.randint(6, 12)

    # -- the first ops: two servers, two databases on one, one on the other,
    # the registry and a server that leases its node id from it
    def setup_ops(self):
        ops = []
        for name, node in (("A", 1), ("B", 2)):
            ops.append({"op": "cluster", "c": name, "set": self.default_settings(node)})
        ops.append({"op": "registry", "reserved": list(NODE_IDS)})
        ops.append({"op": "cluster", "c": "L", "set": self.lease_settings()})
        for c, db in [("A", d) for d in self.db_names[:2]] + [("B", "db1"), ("L", "db1")]:
            ops.append({"op": "createdb", "c": c, "db": db, "version": CURRENT})
        return ops

    @classmethod
    def lease_settings(cls):
        """A server that leases its node id: the registry gives it one of
        LEASE_POOL; every leasing server keeps node_bits 4 (the registry
        refuses live leases under two) and its epoch."""
        s = cls.default_settings(None)
        s.update(lease=True, node_lease_s=LEASE_S)
        return s

    @staticmethod
    def default_settings(node):
        return {"node_id": node, "node_bits": 4, "epoch": "2024-01-01", "max_lead_ms": 1000,
                "max_clock_regression_ms": 10000, "clock_offset_ms": 0, "max_marks": MAX_MARKS}

    def next_op(self):
        self.steps += 1
        if not self.queue and self.drills and self.steps >= self.drill_at:
            kind = self.drills.pop(0)
            op = self.drill(kind)
            if op is None:
                self.drills.append(kind)     # later, when the servers allow it
                if kind == "failover" and self.standbys():
                    op = self.choose_promote()      # the standby there is in the way
                elif kind == "refused":
                    op = self.make_wide()
                elif kind in LEASE_DRILLS + REGISTRY_DRILLS:
                    op = self.make_leasing()
                elif kind != "failover" and self.quiet_primary() is None:
                    op = self.make_quiet()
            # the lease drills, last, closer together
            self.drill_at = self.steps + self.r.randint(2, 6)
            if op is not None:
                self.apply(op)
                return op
        op = self.queue.pop(0) if self.queue else self.choose()
        self.apply(op)
        return op

    # -- queries on the model
    def primaries(self):
        return [c for c, m in self.clusters.items() if m["role"] == "primary"]

    def standbys(self):
        return [c for c, m in self.clusters.items() if m["role"] == "standby"]

    def dbs(self, c, version=None):
        return [d for d, m in self.clusters[c]["dbs"].items()
                if version is None or m["version"] == version]

    def leasing(self, c):
        return bool(self.clusters[c]["set"].get("lease"))

    def free_node(self):
        free = [n for n in NODE_IDS if n not in self.used_nodes]
        return self.r.choice(free) if free else None

    def new_name(self, prefix):
        self.serial += 1
        return "%s%d" % (prefix, self.serial)

    # -- choosing
    def choose(self):
        while True:
            kinds = list(WEIGHTS)
            kind = self.r.choices(kinds, [WEIGHTS[k] for k in kinds])[0]
            op = getattr(self, "choose_" + kind)()
            if op is not None:
                return op

    def pick_db(self, version=CURRENT):
        pairs = [(c, d) for c in self.primaries() for d in self.dbs(c, version)]
        return self.r.choice(pairs) if pairs else (None, None)

    def layout_spec(self, name):
        # Layouts without a worker field share one state per server: twice as often.
        fam = self.r.choice(list(range(len(FAMILIES))) + [0, 1])
        return {"name": name, "epoch": self.r.choice(EPOCHS), "family": fam}

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
        op = dict(op="redefine", c=c, db=db, **self.layout_spec(name))
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
        s["clock_offset_ms"] = self.r.choice(OFFSETS)
        if self.r.random() < 0.25:
            key = self.r.choice(["max_lead_ms", "max_clock_regression_ms"])
            s[key] = self.r.choice(SETTING_CHOICES[key])
        return {"op": "reload", "c": c, "set": s}

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
        if p < 0.15 and not self.leasing(c):
            # Back to an id this server used before, or one nobody used.
            node = self.r.choice(sorted(m["nodes"])) if self.r.random() < 0.5 else self.free_node()
            if node is not None and node < 1 << s["node_bits"]:
                s["node_id"] = node
        elif p < 0.25 and not self.leasing(c) and not m["standby"]:
            edges = [e for e in EDGE_NODES if e[1] not in self.used_nodes]
            if edges:
                s["node_bits"], s["node_id"] = self.r.choice(edges)
        return {"op": "restart", "c": c, "mode": self.r.choice(["fast", "immediate"]), "set": s}

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
        if p < 0.33:
            bits = self.r.choice([b for b in SETTING_CHOICES["node_bits"]
                                  if self.clusters[c]["set"]["node_id"] < 1 << b])
            return {"node_bits": bits}
        return {}

    def choose_standby_restart(self):
        """A standby restarted or crashed before its promotion, after a
        restartpoint or not: what it replayed must outlive the restart."""
        if not self.standbys():
            return None
        return self.standby_restart(self.standbys()[0])

    def standby_restart(self, s):
        return {"op": "standby_restart", "s": s, "mode": self.r.choice(["fast", "immediate"]),
                "restartpoint": self.r.random() < 0.7}

    def choose_drill(self):
        return self.drill(self.r.choice(ALL_DRILLS))

    def drill(self, kind):
        """The first op of a drill, the others queued; None when the
        servers do not allow it now."""
        queued = len(self.queue)
        op = getattr(self, "drill_" + kind)()
        if op is not None:
            op["drill"] = kind
            # the drill's other ops name it too, for the report and --ignore
            for later in self.queue[queued:]:
                later["part"] = kind
        return op

    def drill_failover(self):
        """A synchronous standby promoted after its primary ran with its
        clock ahead: the standby must resume above the primary's IDs and
        its horizon, its own clock being behind them."""
        prim = [c for c in self.primaries() if not self.clusters[c]["standby"]
                and not self.leasing(c)]
        # One server more than elsewhere: the drill ends with its primary gone.
        if self.standbys() or len(self.clusters) > MAX_CLUSTERS or not prim:
            return None
        p = self.r.choice(prim)
        dbs = self.dbs(p, CURRENT)
        if not dbs:
            return None
        db = self.r.choice(dbs)
        s = self.new_name("S")
        # The standby copies these, but for its clock, 1.5 or 3 s behind: the
        # promoted standby starts far below the primary's last IDs and
        # horizons, which it must ride out (at most 14 + 3 + 1 s) within the
        # limit.  Far enough ahead that its clock is still behind them after
        # the drill's pauses: only its marks keep it above.
        ahead = dict(self.clusters[p]["set"], max_clock_regression_ms=30000,
                     clock_offset_ms=self.r.choice([12000, 14000]))
        # A standby is a server restarted with other settings when it is
        # promoted: now and then its epoch or node_bits differ.
        ops = [{"op": "standby", "c": p, "s": s, "sync": True, "node_id": None,
                "offset": self.r.choice([-1500, -3000]), "set": self.standby_settings(p)},
               self.burst_on(p, p), self.outbox_in(p, db),
               # idle while the poller polls: the horizon passes the marks
               {"op": "pause", "ms": 2000},
               # most often restarted or crashed then, after a restartpoint:
               # no mark reaches it after that, so those it replayed before
               # must outlive the restart
               self.standby_restart(s) if self.r.random() < 0.7 else None]
        # the standby cut off while sessions take IDs, the primary dying
        # before it is back: IDs handed out must be below its marks; idle
        # first (no poll: the horizon would wait for it) until the clock is
        # past the marks it confirmed
        ops += [{"op": "receiver", "s": s, "stop": True},
                {"op": "pause", "ms": ahead["max_lead_ms"] + 1500, "poll": False},
                self.cut_off_burst(p)]
        ops += [{"op": "promote", "s": s, "kill_primary": True}, self.burst_on(p, s),
                self.outbox_in(s, db)]
        self.queue += [op for op in ops if op]
        return {"op": "reload", "c": p, "set": ahead}

    def make_wide(self):
        """The refused drill needs a server whose node id is 2 or more."""
        c = self.quiet_primary()
        free = [n for n in NODE_IDS if n >= 2 and n not in self.used_nodes]
        if c is None or not free:
            return None
        return {"op": "restart", "c": c, "mode": "fast",
                "set": dict(self.clusters[c]["set"], node_id=self.r.choice(free))}

    def make_quiet(self):
        """Drills need a primary without a standby and with a database of
        the current version: update one, or promote the standby."""
        for c in self.primaries():
            if not self.clusters[c]["standby"] and self.dbs(c, "1.0"):
                return {"op": "ext_update", "c": c, "db": self.r.choice(self.dbs(c, "1.0"))}
        return self.choose_promote()

    def quiet_primaries(self):
        """Primaries without a standby, whose settings may change."""
        return [c for c in self.primaries() if not self.clusters[c]["standby"]
                and self.dbs(c, CURRENT) and not self.leasing(c)]

    def quiet_primary(self):
        prim = self.quiet_primaries()
        return self.r.choice(prim) if prim else None

    def settings_drill(self, change, poller, aheads, c=None):
        """The clock ahead, IDs, then a restart with other settings and the
        clock right: IDs must resume above the earlier ones, or be refused
        (an epoch moved later).  With a poller, its horizons are ahead too,
        and transactions then hold IDs at once, the clock behind them.
        Without, nobody polls while the clock is ahead: the horizon's floor
        would keep IDs above it whatever the marks said."""
        c = c or self.quiet_primary()
        if c is None:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_clock_regression_ms=10000)
        ahead = dict(s, clock_offset_ms=s["clock_offset_ms"] + self.r.choice(aheads))
        restart = dict(s, **change(s))
        ops = [self.outbox_in(c, db) if poller else None,
               {"op": "reload", "c": c, "set": ahead, "poll": poller}, self.burst_on(c, c),
               {"op": "restart", "c": c, "mode": self.r.choice(["fast", "immediate"]), "set": restart}]
        if restart["epoch"] != s["epoch"]:
            # idgen's own layout only (the others would wait out the clock's
            # gap), and back: the server would refuse it for days
            clients = [{"c": c, "db": db, "calls": [["next", None, 1, 3000]]} for _ in range(2)]
            ops += [{"op": "burst", "clients": clients, "kill": None},
                    # the first poll after it comes while the writers hold IDs
                    {"op": "restart", "c": c, "mode": "fast", "set": dict(restart, epoch=s["epoch"]),
                     "poll": False}]
        ops += [self.outbox_in(c, db), self.burst_on(c, c)]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_node_bits(self):
        return self.settings_drill(lambda s: {"node_bits": self.r.choice(
            [b for b in SETTING_CHOICES["node_bits"] if b != s["node_bits"]])}, False, [2000, 3000])

    def drill_epoch_later(self):
        def later(s):
            y, m, d = (int(x) for x in s["epoch"].split("-"))
            moved = datetime.date(y, m, d) + datetime.timedelta(days=self.r.choice([1, 60]))
            return {"epoch": moved.isoformat()}
        # Where the horizon was ever taken, its file's mark refuses the moved
        # epoch as well, up to the horizons it returned: the first run is on
        # a new server that never polls, where only the marks of
        # hwm_move_epoch() stand between the IDs and those made before; the
        # second has a poller, for the horizon across the move.
        self.epoch_later_runs += 1
        if self.epoch_later_runs == 1:
            op = self.epoch_later_unpolled(later)
            if op is not None:
                return op
        # far enough ahead that the clock is still behind the horizons when
        # the writers take IDs after the epoch is back (mutant horizon_restart)
        return self.settings_drill(later, True, [6000, 8000])

    def epoch_later_unpolled(self, later):
        """A new server of its own: the clock ahead, IDs of idgen's layout,
        the epoch moved later (refused until the clock passes those IDs),
        and back; then it is retired."""
        node = self.free_node()
        if node is None:
            return None
        c, db = self.new_name("E"), self.db_names[0]
        s = dict(self.default_settings(node), max_clock_regression_ms=10000)
        ahead = dict(s, clock_offset_ms=self.r.choice([3000, 4000]))
        moved = dict(s, **later(s))
        def ids():
            return {"op": "burst", "kill": None,
                    "clients": [{"c": c, "db": db, "calls": [["next", None, 1, 3000]]} for _ in range(2)]}
        ops = [{"op": "cluster", "c": c, "set": s, "dbs": [db]},
               {"op": "reload", "c": c, "set": ahead, "poll": False}, ids(),
               {"op": "restart", "c": c, "mode": self.r.choice(["fast", "immediate"]), "set": moved},
               ids(), {"op": "restart", "c": c, "mode": "fast", "set": s, "poll": False}, ids(),
               {"op": "retire", "c": c}]
        self.queue += ops[1:]
        return ops[0]

    def drill_churn(self):
        """Sessions one after another on one worker id, each borrowing ahead
        of the clock in js53 (64 IDs a millisecond): each new holder of the
        worker id must start after its predecessor's newest tick."""
        c, db = self.pick_db()
        if c is None:
            return None
        clients = [{"c": c, "db": db, "calls": [["next", "js53", 1, 3000]]} for _ in range(5)]
        return {"op": "burst", "clients": clients, "kill": None, "serial": True}

    def drill_clock_back(self):
        """decimal19's one shared state per server (ten IDs a millisecond)
        far ahead of the clock, then the clock half a second back."""
        c, db = self.pick_db()
        if c is None:
            return None
        s = self.clusters[c]["set"]
        def burst():
            return {"op": "burst", "kill": None,
                    "clients": [{"c": c, "db": db, "calls": [["next", "decimal19", 1, 3000]]}
                                for _ in range(2)]}
        back = {"op": "reload", "c": c, "set": dict(s, clock_offset_ms=s["clock_offset_ms"] - 500)}
        self.queue += [back, burst()]
        return burst()

    def drill_epoch_twins(self):
        """One name in two databases, defined alike but for the epoch, or
        for the widths: two definitions, each with a state of its own,
        generated in at once."""
        c = self.r.choice(self.primaries())
        dbs = self.dbs(c, CURRENT)
        prep = None
        if len(dbs) < 2:
            # make a second database of the current version
            old = [d for d in self.dbs(c) if d not in dbs]
            free = [d for d in self.db_names if d not in self.clusters[c]["dbs"]]
            if old:
                prep = {"op": "ext_recreate", "c": c, "db": self.r.choice(old), "version": CURRENT}
            elif free:
                prep = {"op": "createdb", "c": c, "db": self.r.choice(free), "version": CURRENT}
            else:
                return None
            dbs = dbs + [prep["db"]]
            if len(dbs) < 2:
                return None
        db1, db2 = self.r.sample(dbs, 2)
        name = self.r.choice(NAMES)
        fam = self.r.choice([0, 1, 5, 8])           # no worker field: one state per definition
        e1, e2 = self.r.sample(EPOCHS, 2)
        fam2 = fam
        if self.r.random() < 0.5:
            # the same fields, tick and radix in other widths, one epoch
            fam, fam2 = self.r.sample(WIDTH_TWINS, 2)
            e2 = e1
        # long enough that the four overlap whatever their connections take:
        # a state the two definitions shared showed only where they met
        clients = [{"c": c, "db": db, "calls": [["next", name, 1, 3000]]}
                   for db in (db1, db2, db1, db2)]
        ops = [prep, {"op": "redefine", "c": c, "db": db1, "name": name, "epoch": e1, "family": fam},
               {"op": "redefine", "c": c, "db": db2, "name": name, "epoch": e2, "family": fam2},
               {"op": "burst", "clients": clients, "kill": None}]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_full(self):
        """The table of marks full (issue #28, item 1): more layouts than it
        holds generate with the clock ahead, so that their marks outlive a
        restart; idgen's own layout further ahead; then a restart with other
        node_bits (and another node id of the server's, or a new one), a
        combination new to the server, the clock back: the marks of other
        node_bits must bind, also those that had to share an entry.  Then
        idgen.epoch a day earlier, IDs, a restart once the clock passed
        their marks (which folds them), and the epoch back, a day later than
        those IDs': refused, whichever entry holds the marks."""
        c = self.quiet_primary()
        if c is None:
            return None
        m = self.clusters[c]
        s = dict(m["set"], max_clock_regression_ms=10000)
        # Another node id of the server's, or one nobody used: overflow
        # marks of a node id must bind other node ids under other node_bits.
        others = sorted(m["nodes"] - {s["node_id"]})
        free = self.free_node()
        n = self.r.choice(others + ([free] if free is not None else []) or [s["node_id"]])
        new_bits = [b for b in FILL_BITS if (n, b) not in m["combos"] and b != s["node_bits"]]
        if not new_bits:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        prefix = self.new_name("fill") + "_"
        fill = [["next", "%s%d" % (prefix, i), 1, 1] for i in range(1, FILL_LAYOUTS + 1)]
        ahead = self.r.choice([3000, 4000])
        later = dict(s, clock_offset_ms=s["clock_offset_ms"] + ahead + 2000)
        moved = dict(s, node_id=n, node_bits=self.r.choice(new_bits))
        y, mo, d = (int(x) for x in s["epoch"].split("-"))
        earlier = dict(moved, epoch=(datetime.date(y, mo, d) - datetime.timedelta(days=1)).isoformat())

        def one(calls):
            return {"op": "burst", "kill": None, "clients": [{"c": c, "db": db, "calls": calls}]}
        ops = [{"op": "define_many", "c": c, "db": db, "prefix": prefix, "count": FILL_LAYOUTS,
                "family": FILL_FAMILY, "epoch": self.r.choice(EPOCHS)},
               {"op": "reload", "c": c, "set": dict(s, clock_offset_ms=s["clock_offset_ms"] + ahead),
                "poll": False},
               one(fill),
               {"op": "reload", "c": c, "set": later, "poll": False},
               one([["next", None, 1, 3000]]),
               {"op": "restart", "c": c, "mode": "fast", "set": moved, "poll": False},
               # the filling layouts first, while the clock is behind their
               # IDs, the last first: theirs were the marks that had to share
               one(fill[::-1] + [["next", None, 1, 3000]]),
               # idgen.epoch a day earlier (above every ID), IDs, the clock
               # past their marks, which a restart folds; then the epoch back
               # a day later than those IDs': refused
               {"op": "restart", "c": c, "mode": "fast", "set": earlier, "poll": False},
               one([["next", None, 1, 300]]),
               {"op": "pause", "ms": 2000, "poll": False},
               {"op": "restart", "c": c, "mode": "fast", "set": earlier, "poll": False},
               # a mark written, so that the file keeps what the start folded
               one([["next", "twitter", 1, 20]]),
               {"op": "restart", "c": c, "mode": "fast", "set": moved, "poll": False},
               one([["next", None, 1, 300]]),
               {"op": "restart", "c": c, "mode": "fast", "set": earlier, "poll": False},
               self.outbox_in(c, db), self.burst_on(c, c)]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_lost_hwm(self):
        """idgen_hwm deleted after a CHECKPOINT, with the server stopped,
        the clock then behind the server's last IDs: generating is refused
        in every layout (docs/guarantees.md, The mark file is lost) until
        idgen_resume_after() and a restart; then IDs resume above."""
        c = self.quiet_primary()
        if c is None:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_clock_regression_ms=10000)
        ahead = dict(s, clock_offset_ms=s["clock_offset_ms"] + self.r.choice([2000, 3000]))
        ops = [{"op": "reload", "c": c, "set": ahead, "poll": False}, self.burst_on(c, c),
               {"op": "lose_hwm", "c": c, "set": s}, self.burst_on(c, c),
               {"op": "resume", "c": c, "db": db}, self.burst_on(c, c), self.outbox_in(c, db)]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_move(self):
        """A database moved by pg_dump and pg_restore into a new cluster (a
        fresh initdb: another system identifier) that keeps the old server's
        node id, the old one retired, the new clock behind the old IDs:
        refused (docs/guarantees.md, A new cluster holding an old one's IDs)
        until idgen_resume_after() and a restart; then IDs resume above."""
        prim = [c for c in self.primaries() if not self.clusters[c]["standby"]
                and self.dbs(c, CURRENT) and not self.leasing(c)]
        if len(self.primaries()) < 2 or not prim:
            return None
        c = self.r.choice(prim)
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_clock_regression_ms=10000)
        s.pop("synchronous_standby_names", None)
        # Any epoch: idgen_system says the one the old IDs were made under,
        # and idgen_resume_after() resumes above them under a later one.
        s["epoch"] = self.r.choice(SETTING_CHOICES["epoch"])
        new = self.new_name("M")
        # The new cluster has a database of its own already: the refusal
        # holds there too, as every database shares the layouts.
        others = [d for d in self.db_names if d != db]
        other = self.r.choice(others) if others else None
        # far enough ahead that the move (dump, initdb, restore) ends before
        # the old IDs' time; idgen_resume_after() gets the newest one's
        ahead = dict(s, clock_offset_ms=s["clock_offset_ms"] + self.r.choice([4000, 5000]))
        ops = [{"op": "reload", "c": c, "set": ahead, "poll": False}, self.burst_on(c, c),
               {"op": "move", "c": c, "db": db, "new": new, "set": s, "other": other},
               self.burst_new_db(new, other), self.burst_db(c, new, db),
               {"op": "resume", "c": new, "db": db, "newest": True},
               self.burst_db(c, new, db), self.burst_new_db(new, other), self.outbox_in(new, db)]
        self.queue += [op for op in ops[1:] if op]
        return ops[0]

    # -- node id leases (issue #31)
    def lessees(self):
        """Leasing primaries with a database to generate in."""
        return [c for c in self.primaries() if self.leasing(c) and self.dbs(c, CURRENT)]

    def make_leasing(self):
        """A leasing server for the lease drills, when the registry has room
        and the servers allow one more."""
        if len(self.clusters) >= MAX_CLUSTERS or \
                len([c for c in self.clusters if self.leasing(c)]) >= len(LEASE_POOL) - 1:
            return self.choose_retire()
        c = self.new_name("L")
        self.queue.append({"op": "createdb", "c": c, "db": "db1", "version": CURRENT})
        return {"op": "cluster", "c": c, "set": self.lease_settings()}

    def lease_bursts(self, servers, model=None):
        """Two clients on each server (with model's databases, or its own)."""
        clients = []
        for c in servers:
            burst = self.burst_on(model or c, c)
            if burst:
                clients += burst["clients"][:2]
        return {"op": "burst", "clients": clients, "kill": None} if clients else None

    def drill_outage(self):
        """The registry stopped for longer than a lease: its holders
        generate for the rest of their lease, then refuse naming it; it is
        started again and they renew and generate."""
        servers = self.lessees()
        if not servers:
            return None
        ops = [{"op": "registry_stop"}, {"op": "pause", "ms": LEASE_S * 1000 + 1000},
               self.lease_bursts(servers),
               {"op": "registry_start"}, self.lease_bursts(servers)]
        self.queue += ops[1:]
        return ops[0]

    def drill_frozen(self):
        """A holder whose clock is ahead frozen past its lease (the whole
        server, or its lease worker alone) while the registry holds every
        other node id; a new server leases its node id and generates above
        its IDs; woken, the holder makes no ID under it.  The new server
        stays, the frozen one is retired."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        if not servers or len(self.clusters) >= MAX_CLUSTERS:
            return None
        f = self.r.choice(servers)
        db = self.r.choice(self.dbs(f, CURRENT))
        what = self.r.choice(["server", "worker"])
        s = self.clusters[f]["set"]
        # The holder's clock further ahead than the freeze lasts, so that
        # the new server's clock is behind the holder's IDs; a lead of 3 s,
        # so that the ceiling (the lease's mark) is still ahead when the
        # holder generates past its fence: only the fence stops it.
        ahead = dict(s, clock_offset_ms=max(s["clock_offset_ms"], 0) + 9000, max_lead_ms=3000,
                     max_clock_regression_ms=10000)
        t = self.new_name("T")
        one = {"op": "burst", "kill": None,
               "clients": [{"c": f, "db": db, "calls": [["next", None, 1, 300], ["next", "pgedge", 1, 300]]}
                           for _ in range(2)]}
        # a pause after the reload: the lease is renewed with the clock
        # ahead, its ceiling with it; the freeze reserves the free node ids,
        # the thaw frees them
        ops = [{"op": "reload", "c": f, "set": ahead, "then_ms": LEASE_S * 1000 // 3 + 500},
               self.burst_on(f, f),
               {"op": "freeze", "c": f, "what": what, "reserve": True}]
        if what == "worker":
            ops.append(copy.deepcopy(one))      # within the fence: generates
        # the new server starts above the holder's mark, up to 18 s ahead of
        # its clock: within its idgen.max_clock_regression_ms
        ops.append({"op": "cluster", "c": t, "set": dict(self.lease_settings(), max_clock_regression_ms=30000),
                    "wait_lease": 3 * LEASE_S, "dbs": [db], "takes": f})
        if what == "server":
            # its backends wake before its lease worker learns the news
            ops.append({"op": "thaw", "c": f, "but_worker": True})
        ops += [copy.deepcopy(one),             # past the fence: refused
                {"op": "thaw", "c": f, "unreserve": True},
                {"op": "burst", "kill": None,
                 "clients": [{"c": t, "db": db, "calls": [["next", None, 1, 3000], ["next", "pgedge", 1, 3000]]}
                             for _ in range(2)]},
                one, {"op": "retire", "c": f}]
        self.queue += ops[1:]
        return ops[0]

    def drill_clone(self):
        """A copy (pg_basebackup) of a holder started as a primary: another
        node id, or refused while every node id is held; then the holder
        restarted keeps its node id.  Or, as often, the copy is a streaming
        standby promoted while the holder lives (lease_standby)."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        if not servers or len(self.clusters) >= MAX_CLUSTERS:
            return None
        c = self.r.choice(servers)
        # The standby form draws from a stream of its own, and the copy's
        # draws are made either way: the drills after this one are the same
        # in both forms (and as before the standby form was added).
        side = random.Random(str(self.r.getstate()))
        # one standby at a time (choose_standby), and a free node id for it
        room = len([k for k in self.clusters if self.leasing(k)]) < len(LEASE_POOL)
        standby = not self.standbys() and room and side.random() < 0.5
        k = self.new_name("S" if standby else "C")
        ops = [{"op": "clone", "c": c, "new": k}, self.burst_on(c, k),
               {"op": "restart", "c": c, "mode": "fast", "set": dict(self.clusters[c]["set"])},
               self.lease_bursts([c, k], c), {"op": "retire", "c": k}]
        if standby:
            ops = self.lease_standby(c, k, side)
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_registry_stall(self):
        """The registry stalled (SIGSTOP) past a lease while a new leasing
        server waits for a node id and the holders generate: within their
        fence, then past it (refused); woken, every holder holds its node
        id again on its own and the new server leases a free one."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        leasing = [c for c in self.clusters if self.leasing(c)]
        # one node id of LEASE_POOL stays free for the new server
        if not servers or len(self.clusters) >= MAX_CLUSTERS or len(leasing) >= len(LEASE_POOL) - 1:
            return None
        n = self.new_name("N")
        waited = self.burst_new_db(n, "db1")
        ops = [{"op": "registry_freeze"},
               {"op": "cluster", "c": n, "set": self.lease_settings(), "wait_lease": 0, "dbs": ["db1"]},
               self.lease_bursts(servers),
               {"op": "pause", "ms": LEASE_S * 1000 + self.r.choice([1000, 2000])},
               self.lease_bursts(servers),
               {"op": "registry_thaw", "wait_s": 3 * LEASE_S},
               dict(waited, clients=self.lease_bursts(servers)["clients"] + waited["clients"])]
        self.queue += ops[1:]
        return ops[0]

    def drill_registry_failover(self):
        """A streaming standby of the registry, synchronous or not, promoted
        in its place after it is killed; a holder restarted before (its
        release and new lease are, asynchronously, the commits lost: the
        registry's walsender is stopped first).  On its new timeline the
        registry fences itself (registry_restore's checks)."""
        return self.lost_commits({"op": "registry_failover", "sync": self.r.random() < 0.5})

    def drill_registry_restore(self):
        """The registry's last dump restored into a new cluster at its
        address, after a holder restarted (its release and new lease are
        the commits lost): the registry fences itself; the other holders
        renew and generate, the restarted one is refused its renewal and
        generates no more; restarted again, it leases anew above the
        fence's floor (a lease and a minute ahead: refused meanwhile)."""
        return self.lost_commits({"op": "registry_restore"})

    def lost_commits(self, loss):
        """A holder restarted after the registry's dump or behind its
        asynchronous standby's back, then the loss (loss: the op that
        replaces the registry); bursts before and after, and the holder
        restarted again."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        if not servers:
            return None
        c = self.r.choice(servers)
        restart = {"op": "restart", "c": c, "mode": "fast", "set": dict(self.clusters[c]["set"])}
        if loss["op"] == "registry_restore":
            ops = [{"op": "registry_dump"}]
        else:
            ops = [{"op": "registry_standby", "sync": loss["sync"]}, self.lease_bursts(servers)]
            if not loss["sync"]:
                ops.append({"op": "registry_cut"})
        ops += [restart, self.lease_bursts(servers), dict(loss, wait_s=2 * LEASE_S),
                self.lease_bursts(servers), copy.deepcopy(restart), self.lease_bursts(servers)]
        self.queue += ops[1:]
        return ops[0]

    def lease_standby(self, c, b, rng):
        """Server b: a streaming standby of holder c (synchronous or not),
        its clock 4.5 or 6 s behind c's, outbox rows on c, the standby
        promoted while c lives: it leases another node id (one of LEASE_POOL
        is free: drill_clone sees to it), under which its IDs must start
        above every ID it replicated from c (invariants 3 and 7); a
        synchronous one's poller reads on (invariant 4).  The promoted one
        is retired.  Its choices are rng's."""
        main, self.r = self.r, rng
        try:
            sync = self.r.random() < 0.5
            db = self.r.choice(self.dbs(c, CURRENT))
            # it waits for its clock up to 6 s and c's lead and step; or for the
            # mark of its new node id's previous holder, which may have run
            # further ahead (the frozen drill's): as the frozen drill's server
            return [{"op": "standby", "c": c, "s": b, "sync": sync, "node_id": None,
                     "offset": self.clusters[c]["set"]["clock_offset_ms"] - self.r.choice([4500, 6000]),
                     "set": {"max_clock_regression_ms": 30000}},
                    self.outbox_in(c, db),
                    self.standby_restart(b) if self.r.random() < 0.5 else None,
                    # an asynchronous one replays all c wrote first: then it too
                    # holds the marks of every ID c made
                    {"op": "promote", "s": b, "kill_primary": False, "catch_up": not sync},
                    self.outbox_in(b, db), {"op": "retire", "c": b}]
        finally:
            self.r = main

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

    def drill_refused(self):
        """A layout whose node field is too narrow for the server's node id,
        called again and again in one session, in every function: refused
        each time, never generated in with half a plan."""
        # a leased node id is one of LEASE_POOL, all above 1
        pairs = [(c, d) for c in self.primaries()
                 if self.leasing(c) or self.clusters[c]["set"]["node_id"] >= 2
                 for d in self.dbs(c, CURRENT)]
        if not pairs:
            return None
        c, db = self.r.choice(pairs)
        name = self.r.choice(NAMES)
        calls = [["next", name, 1, 1], ["next", name, 1, 20], ["batch", name, 50, 1],
                 ["block", name, 2, 1], ["next", None, 1, 20]]
        self.queue.append({"op": "burst", "kill": None,
                           "clients": [{"c": c, "db": db, "calls": calls} for _ in range(2)]})
        return {"op": "redefine", "c": c, "db": db, "name": name, "epoch": self.r.choice(EPOCHS),
                "family": NARROW}

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
                     "COMMIT" if self.r.random() < 0.8 else "ROLLBACK"]
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
        return op

    def choose_call(self, c, db, focus_name):
        """[function, layout or None, n (batch size or block size), repeats]"""
        dbm = self.clusters[c]["dbs"][db]
        r = self.r
        if dbm["version"] == "1.0":
            func = r.choice(["next", "next", "batch", "objectid", "uuidv7"])
            return [func, None, r.choice([1, 100, 2000]), r.choice([1, 50, 1000])]
        p = r.random()
        if p < 0.65 and dbm["layouts"]:
            name = focus_name if focus_name in dbm["layouts"] and r.random() < 0.8 \
                else r.choice(sorted(dbm["layouts"]))
            fam = FAMILIES[dbm["layouts"][name]["family"]]
            blocks = fam[0][-1] == "sequence"
        elif p < 0.75:
            name = r.choice(sorted(BUILTIN))
            blocks = BUILTIN[name][3][-1] == "sequence"
        elif p < 0.9:
            name = r.choice([None, "idgen"])
            blocks = True
        else:
            return [r.choice(["objectid", "uuidv7"]), None, 1, r.choice([10, 1000])]
        func = r.choice(["next", "next", "batch"] + (["block"] if blocks else []))
        if func == "block":
            return [func, name, r.choice([1, 2, 5, 16]), r.choice([1, 20, 200])]
        if func == "batch":
            return [func, name, r.choice([1, 50, 500, 3000]), 1]
        return [func, name, 1, r.choice([1, 20, 300, 3000])]

    # -- applying an op to the model, as if it succeeded
    def apply(self, op):
        getattr(self, "apply_" + op["op"])(op)

    def apply_cluster(self, op):
        self.clusters[op["c"]] = {"set": dict(op["set"]), "role": "primary",
                                  "dbs": {db: {"version": CURRENT, "layouts": {}} for db in op.get("dbs", [])},
                                  "standby": None, "nodes": {op["set"]["node_id"]}, "sync": False,
                                  "combos": {combo(op["set"])}, "epochs": {op["set"]["epoch"]}}
        self.used_nodes.add(op["set"]["node_id"])

    def apply_createdb(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]] = {"version": op["version"], "layouts": {}}

    def apply_dropdb(self, op):
        del self.clusters[op["c"]]["dbs"][op["db"]]

    def apply_define(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["layouts"][op["name"]] = {
            "epoch": op["epoch"], "family": op["family"]}

    apply_redefine = apply_define

    def apply_drop(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["layouts"].pop(op["name"], None)

    def apply_reload(self, op):
        self.clusters[op["c"]]["set"] = dict(op["set"])

    def apply_restart(self, op):
        m = self.clusters[op["c"]]
        m["set"] = dict(op["set"])
        m["nodes"].add(op["set"]["node_id"])
        m["combos"].add(combo(op["set"]))
        m["epochs"].add(op["set"]["epoch"])
        self.used_nodes.add(op["set"]["node_id"])

    def apply_ext_recreate(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]] = {"version": op["version"], "layouts": {}}

    def apply_ext_update(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["version"] = CURRENT

    def apply_standby(self, op):
        p = self.clusters[op["c"]]
        node = p["set"]["node_id"] if op["sync"] else op["node_id"]
        s = dict(p["set"], node_id=node, clock_offset_ms=op.get("offset", 0), **op.get("set", {}))
        self.clusters[op["s"]] = {"set": s,
                                  "role": "standby", "dbs": p["dbs"], "standby": None,
                                  "nodes": set(p["nodes"]) if op["sync"] else {node},
                                  "combos": (set(p["combos"]) if op["sync"] else set()) | {combo(s)},
                                  "epochs": (set(p["epochs"]) if op["sync"] else set()) | {s["epoch"]},
                                  "sync": op["sync"], "primary": op["c"],
                                  "polled": p.get("polled", False)}
        p["standby"] = op["s"]
        self.used_nodes.add(node)
        if op["sync"]:
            p["set"]["synchronous_standby_names"] = op["s"]

    def apply_promote(self, op):
        s = self.clusters[op["s"]]
        p = self.clusters[s["primary"]]
        s["dbs"] = copy.deepcopy(s["dbs"])
        s["role"] = "primary"
        p["standby"] = None
        p["set"].pop("synchronous_standby_names", None)
        if op["kill_primary"]:
            del self.clusters[s["primary"]]

    def apply_dump_restore(self, op):
        src = self.clusters[op["c"]]["dbs"][op["db"]]
        self.clusters[op["new"]] = {"set": dict(op["set"]), "role": "primary", "standby": None,
                                    "dbs": {op["db"]: {"version": CURRENT,
                                                       "layouts": copy.deepcopy(src["layouts"])}},
                                    "nodes": {op["set"]["node_id"]}, "sync": False,
                                    "combos": {combo(op["set"])}, "epochs": {op["set"]["epoch"]}}
        self.used_nodes.add(op["set"]["node_id"])

    def apply_retire(self, op):
        del self.clusters[op["c"]]

    def apply_clone(self, op):
        src = self.clusters[op["c"]]
        self.clusters[op["new"]] = dict(copy.deepcopy(src), standby=None, role="primary")

    def apply_registry(self, op):
        pass

    def apply_define_many(self, op):
        pass        # the model's bursts keep to the layouts named in NAMES

    def apply_lose_hwm(self, op):
        self.clusters[op["c"]]["set"] = dict(op["set"])

    def apply_move(self, op):
        """The node id goes with the database; the old server is retired."""
        old = self.clusters.pop(op["c"])
        dbs = {op["db"]: copy.deepcopy(old["dbs"][op["db"]])}
        if op.get("other"):
            dbs[op["other"]] = {"version": CURRENT, "layouts": {}}
        self.clusters[op["new"]] = {"set": dict(op["set"]), "role": "primary", "standby": None,
                                    "dbs": dbs,
                                    "nodes": set(old["nodes"]), "combos": set(old["combos"]),
                                    "epochs": set(old["epochs"]) | {op["set"]["epoch"]}, "sync": False}

    def apply_burst(self, op):
        pass

    def apply_outbox(self, op):
        # its horizon file has a mark from now on, and copies of it too
        self.clusters[op["c"]]["polled"] = True

    apply_pause = apply_resume = apply_standby_restart = apply_receiver = apply_burst
    apply_registry_stop = apply_registry_start = apply_reserve = apply_unreserve = apply_burst
    apply_freeze = apply_thaw = apply_burst
    apply_registry_freeze = apply_registry_thaw = apply_registry_dump = apply_registry_restore = apply_burst
    apply_registry_standby = apply_registry_cut = apply_registry_failover = apply_burst
