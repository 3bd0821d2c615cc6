"""Drills of one server's generation: worker ids changing hands, a
clock stepped back, power cuts, a layout's time field running out, one
name defined twice, a node field too narrow.  Each returns its first op
and queues the others, or None when the servers do not allow it now."""

from layouts import ENDING, EPOCHS, HWM_STEP_MS, NAMES
from params import (CROWD_SIZE, CURRENT, DEFAULT_MAX_MARKS, NARROW, STATE_FAMILY, STATE_LAYOUTS, STATE_NODE_BITS,
                    THROUGH_FAMILIES, WIDTH_TWINS)


class GenDrills:
    def drill_churn(self):
        """Sessions one after another on one worker id, each borrowing ahead
        of the clock in js53 (64 IDs a millisecond): each new holder of the
        worker id must start after its predecessor's newest tick."""
        c, db = self.pick_db()
        if c is None:
            return None
        # 12,000 IDs borrow 190 ms ahead, which outlasts a session's end
        # and the next one's start; blocks of 16 then, which often find
        # fewer left in a tick of 64; most then take an ID of idgen's own
        # layout, at the clock: what the worker id's next holder starts
        # after is its holders' newest tick in any layout, not the last
        # they used.
        clients = [{"c": c, "db": db, "calls": [["next", "js53", 1, 12000], ["block", "js53", 16, 20]] +
                    ([["next", None, 1, 1]] if self.r.random() < 0.7 else [])} for _ in range(5)]
        churn = {"op": "burst", "clients": clients, "kill": None, "serial": True}
        s = self.clusters[c]["set"]
        if s["max_lead_ms"] >= 1000:
            return churn
        # a lead that lets them borrow that far
        self.queue.append(churn)
        return {"op": "reload", "c": c, "set": dict(s, max_lead_ms=1000)}

    def drill_crowd(self):
        """More sessions at once than worker ids: first in js53, whose
        worker field holds 8 of the server's worker ids (those beyond share
        one locked state, packed as its last), then, the server restarted
        with idgen.node_bits = 8 (4 worker ids a node), in idgen's own
        layout (the sessions beyond share the last worker id, locked)."""
        c = self.quiet_primary()
        if c is None:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        s = self.clusters[c]["set"]

        def crowd(name):
            # idle first, so that they all take a worker id at once
            calls = [["sleep", None, 1, 300]] + [["next", name, 1, 3000]] * 5
            return {"op": "burst", "kill": None,
                    "clients": [{"c": c, "db": db, "calls": calls} for _ in range(CROWD_SIZE)]}
        # node ids here are below 128: 8 bits hold every one
        self.queue += [{"op": "restart", "c": c, "mode": "fast", "set": dict(s, node_bits=8)}, crowd(None)]
        return crowd("js53")

    def drill_crash(self):
        """Power cuts while a server generates with its clock ahead, each
        at another distance from the newest mark (sessions idle a while,
        drawn around the step by which marks run ahead, and take a few
        IDs more), the host's clock set right while the server was down:
        IDs must resume above those made before each cut, which only the
        marks made durable before use keep them above."""
        c = self.quiet_primary()
        if c is None:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_lead_ms=5000, max_clock_regression_ms=10000)
        ahead = dict(s, clock_offset_ms=s["clock_offset_ms"] + 2000)
        ops = []
        for _ in range(3):
            idle = int(self.r.uniform(0.8, 1.6) * HWM_STEP_MS)
            calls = [["next", None, 1, 3000], ["sleep", None, 1, idle], ["next", None, 1, 20]]
            cut = {"what": "postmaster", "c": c, "client": None, "after_ms": idle + 300, "set": s}
            ops += [{"op": "reload", "c": c, "set": ahead, "poll": False},
                    {"op": "burst", "kill": cut, "poll": False,
                     "clients": [{"c": c, "db": db, "calls": calls} for _ in range(2)]},
                    {"op": "burst", "kill": None,
                     "clients": [{"c": c, "db": db, "calls": [["next", None, 1, 300]]}]}]
        self.queue += ops[1:]
        return ops[0]

    def drill_time_end(self):
        """A layout whose time field ends a second after it is defined,
        generated in past its end one ID a statement (a statement that
        failed would hide the IDs it made before): each an ID up to the
        end, a refusal after it, never one whose time went round."""
        c, db = self.pick_db()
        if c is None:
            return None
        name = self.r.choice(NAMES)
        calls = [["next", name, 1, 1]] * 5000
        self.queue.append({"op": "burst", "kill": None,
                           "clients": [{"c": c, "db": db, "calls": calls} for _ in range(2)]})
        return {"op": "redefine", "c": c, "db": db, "name": name, "epoch": None, "family": ENDING,
                "ends_in_ms": 1000}

    def drill_clock_back(self):
        """decimal19's one shared state per server (ten IDs a millisecond)
        far ahead of the clock, then the clock half a second back, a session
        held open across the step (do_reload).  An outbox polled before the
        step, and written at once after it: its writers' clocks are behind
        the horizons returned, and their first IDs must still come above
        them (outbox invariant 4)."""
        c, db = self.pick_db()
        if c is None:
            return None
        s = self.clusters[c]["set"]
        def burst():
            return {"op": "burst", "kill": None,
                    "clients": [{"c": c, "db": db, "calls": [["next", "decimal19", 1, 3000]]}
                                for _ in range(2)]}
        back = {"op": "reload", "c": c, "set": dict(s, clock_offset_ms=s["clock_offset_ms"] - 500), "held": db}
        self.queue += [op for op in (self.outbox_in(c, db), back, self.outbox_in(c, db), burst()) if op]
        self.queue += self.clock_jump_back()
        return burst()

    def clock_jump_back(self):
        """Then, on a server with a node id of its own, the clock 15 s ahead
        and back with idgen.max_clock_regression_ms = 0: refused, and the
        hint names a node id that never generated as the way out; on odd
        steps a restart while ahead, once the clock passed its marks,
        folds them into marks of every node id, and the hint says another
        node id would not help (answers.clock_hint_told)."""
        own = [(c, d) for c in self.primaries() if not self.leasing(c) for d in self.dbs(c, CURRENT)]
        # a server of its own initdb, whose idgen_hwm holds every mark it has
        own = [(c, d) for c, d in own if not self.clusters[c].get("backup")] or own
        if not own:
            return []
        # chosen by the step, not drawn: the seed's later ops stay as they were
        c, db = own[self.steps % len(own)]
        s = self.clusters[c]["set"]
        strict = dict(s, max_clock_regression_ms=0)
        ahead = dict(strict, clock_offset_ms=s["clock_offset_ms"] + 15000)
        calls = [["next", None, 1, 50], ["next", "js53", 1, 50]]
        ops = [{"op": "reload", "c": c, "set": ahead},
               {"op": "burst", "kill": None, "clients": [{"c": c, "db": db, "calls": calls}]}]
        if self.steps % 2:
            ops.append({"op": "restart", "c": c, "mode": "fast", "set": ahead, "after_ms": 2500})
        # the bound stays 0, one of SETTING_CHOICES, until the server's next change
        return ops + [{"op": "reload", "c": c, "set": strict},
                      {"op": "burst", "kill": None, "clients": [{"c": c, "db": db, "calls": calls}]}]

    def drill_epoch_twins(self):
        """One name in two databases, defined alike but for the epoch, then
        for the widths (or the other way round): two definitions, each with
        a state of its own, generated in at once."""
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
        # both kinds of twins, in either order: alike but for the epoch, and
        # the same fields, tick and radix in other widths, one epoch
        twins = [(e1, e2, fam, fam), (e1, e1) + tuple(self.r.sample(WIDTH_TWINS, 2))]
        self.r.shuffle(twins)
        # long enough that the four overlap whatever their connections take:
        # a state the two definitions shared showed only where they met
        clients = [{"c": c, "db": db, "calls": [["next", name, 1, 3000]]}
                   for db in (db1, db2, db1, db2)]
        ops = [prep]
        # half the time (drawn from a stream of its own), the held session
        # crosses two definitions with a worker field instead (redefines.py)
        through = list(THROUGH_FAMILIES) if self.side_stream().random() < 0.5 else []
        for k, (epoch1, epoch2, fam1, fam2) in enumerate(twins):
            # the second time, a session that generated under the first
            # definition, held open, generates after the change: in db2,
            # whose epoch or widths change whatever the draws (db1's may not)
            ops += [{"op": "redefine", "c": c, "db": db1, "name": name, "epoch": epoch1, "family": fam1},
                    {"op": "redefine", "c": c, "db": db2, "name": name, "epoch": epoch2, "family": fam2,
                     "held": k == 1, "through": through if k == 1 else []},
                    {"op": "burst", "clients": clients, "kill": None}]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

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

    @staticmethod
    def held_across_recycling(c, db, borrow, others):
        """The states drill's filling in one burst: the session that borrowed
        in the first layout stays open while another, once the clock passed
        those ticks, recycles its state, then takes its ticks again at the
        same time as a session new to it.  Both must draw from one state of
        the first layout, not go on in the one recycled (a slow server
        recycles later, or not at all: nothing is then checked)."""
        # about 2 s of borrowing, the others from 3.5 s on, then both
        # sessions at about 9 s, each taking 0.9 s of ticks
        return {"op": "burst", "kill": None,
                "clients": [{"c": c, "db": db, "calls": borrow + [["sleep", None, 1, 7000]] + borrow[:5]},
                            {"c": c, "db": db, "calls": [["sleep", None, 1, 3500]] + others},
                            {"c": c, "db": db, "calls": [["sleep", None, 1, 9000]] + borrow[:5]}]}

    def drill_states(self):
        """The table of shared layout states full (limits.sql's case, under
        load): one layout of sixteen IDs a millisecond takes every sequence
        of its ticks for two seconds, borrowing ahead; once the clock passed
        them, the other layouts, one ID each, recycle its state, now the
        one whose newest tick is oldest; the clock goes four seconds back,
        and it generates again.  Its fresh state must start after the
        newest tick of the state given up, which the clock has not passed:
        starting at the clock repeats its IDs.  The server runs the
        default idgen.max_marks meanwhile (every layout a mark of its own,
        none raised by others folded into it), and a lead of 1 s."""
        pairs = [(c, d) for c in self.quiet_primaries()
                 if self.clusters[c]["set"]["node_id"] < 1 << STATE_NODE_BITS
                 for d in self.dbs(c, CURRENT)]
        if not pairs:
            return None
        c, db = self.r.choice(pairs)
        s = self.clusters[c]["set"]
        prefix = self.new_name("st") + "_"
        first = prefix + "1"
        one = self.one_client(c, db)
        # a lead of 1 s: the IDs end about 1 s after the burst, wherever
        # the run's settings left it, and the pause outlasts them
        roomy = dict(s, max_marks=DEFAULT_MAX_MARKS, max_lead_ms=1000)
        back = dict(roomy, clock_offset_ms=s["clock_offset_ms"] - 4000,
                    max_clock_regression_ms=max(s["max_clock_regression_ms"], 10000))
        borrow = [["next", first, 1, 3000]] * 10
        others = [["next", "%s%d" % (prefix, i), 1, 1] for i in range(2, STATE_LAYOUTS + 1)]
        fill = [one(borrow), {"op": "pause", "ms": 1500, "poll": False}, one(others)]
        if self.side_stream("/states").random() >= 0.5:
            # held across recycling first; then the others, each touched
            # again, pass the first layout's state from one to the next
            # until the last recycles it, as in the plain form
            fill[0] = self.held_across_recycling(c, db, borrow, others)
        self.queue += [{"op": "define_many", "c": c, "db": db, "prefix": prefix, "count": STATE_LAYOUTS,
                        "family": STATE_FAMILY, "epoch": self.r.choice(EPOCHS)}] + fill + [
                       {"op": "reload", "c": c, "set": back, "poll": False},
                       one([["next", first, 1, 3000]] * 10),
                       {"op": "restart", "c": c, "mode": "fast", "set": s}]
        return {"op": "restart", "c": c, "mode": "fast", "set": roomy}
