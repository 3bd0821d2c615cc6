"""Forms of ops drawn from streams of their own (Choices.side_stream), so
that adding one leaves the ops a seed drew before as they were: an
idgen_adopt() after a burst, the sessions' forms, blocks past what one may
be."""

from flaws import EDGE_SETTINGS, FLAWED_SETTINGS, flawed_definitions, start_flaw
from layouts import ENDING, EPOCHS, NAMES
from params import (ADOPT_AFTER, ADOPT_KEYS, CROWDED_OUTBOX, CURRENT, EDGE_BLOCKS, FLAWED_DEFINES, FLAWED_STARTS,
                    MAX_NODE_SETTING, RESTARTED_CLUSTERS, RESUMED_RESTARTS, TRIED_SETTINGS,
                    HOSTILE_CLIENTS, HOSTILE_DEFINES, POLLED_RESTARTS, RACING, SPY_BURSTS, STRANGER,
                    TX_CLIENTS)


def fits(s):
    """Whether settings s have no flaw of their own that a start refuses
    first (the node_bits drill restarts with a node id that does not fit)."""
    return s.get("node_id") is not None and 0 <= s["node_id"] < min(1 << s["node_bits"], MAX_NODE_SETTING + 1)


class Forms:
    def maybe_adopt(self, op):
        """Now and then (drawn from a stream of its own), a burst ends with
        idgen_adopt() on a new table of one of its databases (adopts.py),
        which takes no step of the drills' schedule: a serial column holds
        only a sequence's keys, which idgen_adopt() widens."""
        side = self.side_stream("/adopt %d" % self.steps)
        if op["op"] != "burst" or side.random() >= ADOPT_AFTER:
            return
        c = op["clients"][0]["c"]
        dbs = self.dbs(c, CURRENT)
        if not dbs:
            return
        keys = side.choice(ADOPT_KEYS)
        column = side.choice(["bigserial", "identity"] + (["serial"] if keys == "sequence" else []))
        op["adopt"] = {"c": c, "db": side.choice(dbs), "table": self.new_name("chaos_adopt"),
                       "keys": keys, "column": column, "rows": 200}

    def session_forms(self, op):
        """Now and then (drawn from a stream of its own), a burst's client,
        or the session that defines or drops layouts, runs with a schema
        first in its search_path whose operators shadow pg_catalog's
        (hostile.py): idgen's own queries must not call them.  And a
        client makes each call in a transaction of its own, inside a
        savepoint it releases, the transaction then committed or rolled
        back: what a call records in the transaction (this server's row of
        idgen_system, the first time a database generates here) goes with
        the transaction, not with the savepoint.  Not where a synchronous
        standby is cut off: a commit would wait for it.  And a redefinition
        without a held session, now and then, races another's."""
        side = self.side_stream("/sessions %d" % self.steps)
        for cl in op.get("clients", []) if op["op"] == "burst" else []:
            if side.random() < HOSTILE_CLIENTS:
                cl["hostile"] = True
            if side.random() < TX_CLIENTS and not cl.get("timeout_ms"):
                cl["tx"] = {"isolation": side.choice(["READ COMMITTED", "REPEATABLE READ"]),
                            "end": side.choice(["COMMIT", "ROLLBACK"])}
        if op["op"] == "burst" and op["clients"] and side.random() < SPY_BURSTS:
            first = op["clients"][0]
            current = self.clusters[first["c"]]["dbs"][first["db"]]["version"] == CURRENT
            views = "idgen_workers,idgen_horizon_holders" if current else None
            op["clients"].append({"c": first["c"], "db": first["db"], "role": STRANGER,
                                  "calls": [["spy", views, 1, 20]]})
        if op["op"] in ("redefine", "drop", "define_many") and side.random() < HOSTILE_DEFINES:
            op["hostile"] = True
        if op["op"] == "redefine" and not op.get("held") and side.random() < RACING:
            # another name defined at once, in a transaction that races op's
            # (redefines.py); the model learns it as it learnt op.  Not to
            # end soon as op's may (time_end, move): its wide time field
            # would then need an epoch centuries back, which is refused.
            op["racing"] = dict(self.layout_spec(side.choice([n for n in NAMES if n != op["name"]]), side),
                                ends_in_ms=None)
            self.apply_define(dict(op, **op["racing"]))
        self.flaw_forms(op)
        self.crowd_forms(op)

    def crowd_forms(self, op):
        """Now and then (a stream of its own), an outbox op first fills its
        server's free backend slots, each session holding an ID in an open
        transaction (Outbox.crowd_horizon): a horizon that skips a slot is
        found whichever slot it is."""
        side = self.side_stream("/crowd %d" % self.steps)
        if op["op"] == "outbox" and side.random() < CROWDED_OUTBOX:
            op["crowd"] = True

    def flaw_forms(self, op):
        """Now and then, what idgen must refuse tried before op (flaws.py),
        drawn from a stream of its own: draws added to /sessions would move
        the draws after them there, and seeds recorded before would no
        longer reproduce."""
        side = self.side_stream("/flaws %d" % self.steps)
        if op["op"] in ("define", "redefine") and op.get("epoch") and side.random() < FLAWED_DEFINES:
            op["flawed"] = flawed_definitions(op["family"], op["epoch"], side)
        if op["op"] == "createdb" and op["version"] == CURRENT:
            # every new database, of a family and epoch of its own
            op["flawed"] = flawed_definitions(side.randrange(ENDING), side.choice(EPOCHS), side)
        if op["op"] == "restart" and side.random() < TRIED_SETTINGS:
            tried = [(n, v, True) for n, v in FLAWED_SETTINGS] + [(n, v, False) for n, v in EDGE_SETTINGS]
            op["tried_settings"] = [list(t) for t in side.sample(tried, len(tried))]
        if op["op"] == "restart" and self.plain_restart(op):
            m = self.clusters[op["c"]]["set"]
            # not where the clock goes back: the start with a flaw would
            # take from the margin by which the clock is behind the IDs
            if fits(op["set"]) and op["set"]["clock_offset_ms"] >= m["clock_offset_ms"] \
                    and side.random() < FLAWED_STARTS:
                op["flawed_start"] = self.next_start_flaw(side, self.dbs(op["c"], CURRENT))
            # a drill's restart checks what came before it, which a resume
            # would raise past
            if not (op.get("drill") or op.get("part")) and side.random() < RESUMED_RESTARTS:
                op["resumed_in"] = side.choice(self.dbs(op["c"], CURRENT))
        if op["op"] == "cluster" and not op.get("unpolled") and side.random() < RESTARTED_CLUSTERS:
            self.restart_after(op, side)

    def next_start_flaw(self, side, dbs):
        self.start_flaws += 1
        return start_flaw(side, dbs, self.start_flaws - 1)

    def plain_restart(self, op):
        """A fast restart of a primary that does not lease, with a database
        of this version."""
        return op["mode"] == "fast" and self.clusters[op["c"]]["role"] == "primary" and not self.leasing(op["c"]) \
            and self.dbs(op["c"], CURRENT)

    def restart_after(self, op, side):
        """A new server that does not lease, once its databases are made,
        restarted fast with its settings: started once with a flaw first
        (flaws.py), or after README's step after an unseen load
        (Restores.resume_before_restart), or both.  Before it made an ID:
        a drill's restart checks what came before it, which a resume would
        raise past, and a start with a flaw would take from its clock's
        margins."""
        s = op["set"]
        if s.get("lease") or s.get("synchronous_standby_names") or not op.get("dbs"):
            return
        then = {"c": op["c"]}
        if fits(s) and side.random() < 1 / 2:
            then["flawed_start"] = self.next_start_flaw(side, op["dbs"])
        if "flawed_start" not in then or side.random() < 1 / 2:
            then["resumed_in"] = side.choice(op["dbs"])
        op["then_restart"] = then

    def edge_block(self, call, fields, widths, radix):
        """Now and then (drawn from a stream of its own), a block past what
        one may be: one more ID than the layout's sequence holds, or any
        block where the sequence is not the lowest field (sonyflake's).
        idgen refuses both; IDs of another tick or worker id would be a
        block split (invariant 2)."""
        self.edge_calls += 1
        side = self.side_stream("/edge %d" % self.edge_calls)
        if side.random() >= EDGE_BLOCKS:
            return call
        seq = radix ** widths[fields.index("sequence")]
        n = seq + 1 if fields[-1] == "sequence" else side.choice([2, 16])
        return ["block", call[1], n, 1] + call[4:]

    def polled_restart(self, op):
        """Now and then (drawn from a stream of its own), a random burst or
        outbox op on a server whose outbox is polled is followed by its
        restart with the clock back, a second or more after the last poll
        (as polled_back): the horizon's durable mark must be ahead of every
        horizon the polls returned."""
        side = self.side_stream("/polled %d" % self.steps)
        c = op["clients"][0]["c"] if op["op"] == "burst" and op["clients"] else op.get("c")
        if op["op"] not in ("burst", "outbox") or op.get("drill") or op.get("part") or op.get("kill") \
                or side.random() >= POLLED_RESTARTS or c not in self.quiet_primaries() \
                or not self.clusters[c].get("polled"):
            return
        restart = {"op": "restart", "c": c, "mode": side.choice(["fast", "immediate"]),
                   "set": dict(self.clusters[c]["set"])}
        pause = self.back_after_poll(restart, side)
        self.queue.insert(len(self.queue) - 1, pause)
