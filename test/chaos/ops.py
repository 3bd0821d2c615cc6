"""The model: what the servers should look like, and the random choice of the
next operation from it.

Ops are plain dicts with every parameter spelled out (full settings, layout
definitions, each client's calls), so that a recorded list can be replayed
alone or in part, which is how a failing run is shrunk.  The model is
updated as if every op succeeded; it only steers the choice of later ops,
and the checker reads what the servers really hold.

Model is the state and the draw of the next op; its choices of each kind
are in choices.py, the drills in drills.py and lease_drills.py, the update
of the state in applying.py, and what they draw from in params.py.
"""

from applying import Applying
from clients import call_args
from choices import Choices
from drills import Drills
from forms import Forms
from etcd_drills import ETCD_DRILLS, EtcdDrills, draws_etcd
from gen_drills import GenDrills
from layouts import ENDING, EPOCHS
from lease_drills import LeaseDrills
from params import (ALL_DRILLS, CURRENT, DBS, DRILLS, HOSTILE_PATH, LATER_DRILLS, LEASE_DRILLS, LEASE_S,
                    MAX_MARKS, NODE_IDS, REGISTRY_DRILLS, WEIGHTS)


def describe(op):
    """One line for the reproduction report."""
    kind = op["op"]
    if kind == "burst":
        parts = []
        for i, cl in enumerate(op["clients"]):
            calls = ", ".join(call_text(c) for c in cl["calls"])
            parts.append("client %d on %s/%s%s: %s" % (i, cl["c"], cl["db"], session_text(cl), calls))
        if op.get("serial"):
            parts.append("one client after another")
        kill = op.get("kill")
        if op.get("adopt"):
            parts.append("then idgen_adopt() of keys %(keys)s in a %(column)s column of %(c)s/%(db)s"
                         % op["adopt"])
        if kill:
            parts.append("SIGKILL %s of %s after %d ms" % (
                "the postmaster" if kill["what"] == "postmaster" else
                "client %d's backend" % kill["client"], kill["c"], kill["after_ms"]))
            if kill.get("set"):
                parts.append("started again with %s" % kill["set"])
        return "burst: " + "; ".join(parts)
    rest = {k: v for k, v in op.items() if k != "op"}
    return "%s %s" % (kind, " ".join("%s=%s" % (k, v) for k, v in rest.items()))


def session_text(cl):
    """A client's session form (Choices.session_forms), if any."""
    forms = (["as %s" % cl["role"]] if cl.get("role") else []) + \
        (["search_path %s" % HOSTILE_PATH] if cl.get("hostile") else []) + \
        (["each call in a %(isolation)s transaction, a savepoint released, then %(end)s" % cl["tx"]]
         if cl.get("tx") else [])
    return " (%s)" % "; ".join(forms) if forms else ""


def call_text(call):
    """A call as chosen: its shard, if any, is where in the server's range
    the burst takes it (Bursts.resolve_shard)."""
    func, m = call[0], call[3]
    if func == "sleep":
        return "pg_sleep(%g)" % (m / 1000.0)
    if func == "spy":
        return "%s read %d ms in" % (call[1] or "idgen_workers", m)
    args = call_args(call[:4]) + (["shard %s" % call[4]] if len(call) > 4 else [])
    name = {"next": "idgen_next", "batch": "idgen_next_batch", "block": "idgen_next_block",
            "objectid": "objectid", "uuidv7": "idgen_uuidv7"}[func]
    return "%s(%s) x%d" % (name, ", ".join(args), m)



class Model(Choices, Forms, Drills, GenDrills, LeaseDrills, EtcdDrills, Applying):
    def __init__(self, rng, clients, databases=len(DBS), late_first=False):
        self.r = rng
        self.etcd = draws_etcd(rng)
        self.clients = clients
        self.db_names = DBS[:databases]
        self.clusters = {}
        self.used_nodes = set()
        self.serial = 0
        self.edge_calls = 0         # calls drawn: Choices.edge_block's salt
        self.start_flaws = 0        # flawed starts drawn: their group in turn
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
        # etcd's drills in the PostgreSQL registry's place, on a run that has etcd
        self.drills += ETCD_DRILLS if self.etcd else REGISTRY_DRILLS
        if late_first:
            # the drills that come last, first: a second seed of a short run
            # reaches what the first seed's budget ends before
            self.drills = [d for d in self.drills if d not in DRILLS] + \
                [d for d in self.drills if d in DRILLS]
        self.drill_at = self.r.randint(6, 12)

    def setup_ops(self):
        ops = []
        for name, node in (("A", 1), ("B", 2)):
            ops.append({"op": "cluster", "c": name, "set": self.default_settings(node)})
        ops.append(dict({"op": "registry", "reserved": list(NODE_IDS)}, **({"etcd": True} if self.etcd else {})))
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
                elif kind in LEASE_DRILLS + REGISTRY_DRILLS + ETCD_DRILLS:
                    op = self.make_leasing()
                elif kind != "failover" and self.quiet_primary() is None:
                    op = self.make_quiet()
            # the lease drills, last, closer together
            self.drill_at = self.steps + self.r.randint(1, 5)
            if op is not None:
                self.apply(op)
                self.session_forms(op)
                return op
        op = self.queue.pop(0) if self.queue else self.choose()
        self.apply(op)
        self.maybe_adopt(op)
        self.session_forms(op)
        self.polled_restart(op)
        return op

    def deck_done(self):
        """Every drill has run, with the ops it queued."""
        return not self.drills and not self.queue

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

    def layout_spec(self, name, rng=None):
        """A definition of name drawn from rng (the main stream by default)."""
        rng = rng or self.r
        # Layouts without a worker field share one state per server: twice as often.
        fam = rng.choice(list(range(ENDING)) + [0, 1])
        return {"name": name, "epoch": rng.choice(EPOCHS), "family": fam}

    def choose_drill(self):
        kind = self.r.choice(ALL_DRILLS)
        if self.etcd and kind in REGISTRY_DRILLS:
            kind = ETCD_DRILLS[REGISTRY_DRILLS.index(kind) % len(ETCD_DRILLS)]
        return self.drill(kind)

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
