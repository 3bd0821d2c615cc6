"""Drills: the cases docs/guarantees.md names, as short op sequences that
reach them for sure (those of node id leases and of the registry are in
lease_drills.py).  Each returns its first op and queues the others, or
None when the servers do not allow it now."""

import datetime

from layouts import ENDING, EPOCHS, NAMES
from params import (CURRENT, DAY_MS, FILL_BITS, FILL_FAMILY, FILL_LAYOUTS, MAX_CLUSTERS, MAX_NODE_SETTING,
                    NODE_IDS, RELEASED, SETTING_CHOICES)


class Drills:
    def drill_failover(self):
        """A synchronous standby promoted after its primary ran with its
        clock ahead: the standby must resume above the primary's IDs and
        its horizon, its own clock being behind them.  Half the time the
        standby's idgen.epoch is a day later, and its clock a day ahead
        (later_standby)."""
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
               # its commits held a while as the poller polls
               self.burst_on(p, p), self.held_outbox(p, db),
               # idle while the poller polls: the horizon passes the marks
               {"op": "pause", "ms": 2000},
               # most often restarted or crashed then, after a restartpoint:
               # no mark reaches it after that, so those it replayed before
               # must outlive the restart
               self.standby_restart(s) if self.r.random() < 0.7 else None]
        first = {"op": "reload", "c": p, "set": ahead}
        # the standby cut off while sessions take IDs, the primary dying
        # before it is back: IDs handed out must be below its marks; idle
        # first (no poll) until the clock is past the marks it confirmed;
        # then a poll that gives up after 1 s: the horizon must wait for them
        cut = [{"op": "receiver", "s": s, "stop": True},
               {"op": "pause", "ms": ahead["max_lead_ms"] + 1500, "poll": False},
               self.cut_off_burst(p), {"op": "pause", "ms": 0, "poll_timeout_ms": 1000}]
        first, cut = self.later_form(p, ops, first, cut)
        ops += cut + [{"op": "promote", "s": s, "kill_primary": True}, self.burst_on(p, s),
                      self.outbox_in(s, db)]
        self.queue += [op for op in ops if op]
        return first

    def later_form(self, p, ops, first, cut):
        """The failover drill's ops (first, and cut, the standby cut off)
        in its later form, half the time: the standby's epoch a day later
        (later_standby).  The primary restarted first, its clock ahead,
        folds the marks of its node id the clock passed: the burst's reach
        the standby as marks new to its table.  Else they update those of
        its base backup, which its start moved with the epoch (idgen 1.5
        repeated IDs then, issue #38 row 1).  The standby is never
        restarted: a start moves the marks replayed so far with the file's,
        and so does the crash that killing its cut-off receiver is
        (lose_cut_off), so it is cut off at its primary's walsender."""
        later = self.later_standby(p)
        if not later:
            return first, cut
        epoch, restart_first = later
        if restart_first:
            first = dict(first, op="restart", mode="fast")
        # the day is the standby's host's: later ops' offsets add to it
        ops[0].update(base_ms=DAY_MS, set={"epoch": epoch}, later=True)
        ops[4] = None
        return first, [dict(cut[0], sender=True)] + cut[1:]

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
        and transactions then hold IDs at once, the clock behind them, one
        of them prepared across the restart.  Without, nobody polls while the clock is ahead: the horizon's floor
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
        if poller:
            # an outbox transaction left prepared across the restart
            ops[-1]["prepared"] = db
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
        """A restart with other node_bits; then one with a node id past
        their range, and back; then one past the setting's range, and back."""
        op = self.settings_drill(lambda s: {"node_bits": self.r.choice(
            [b for b in SETTING_CHOICES["node_bits"] if b != s["node_bits"]])}, False, [2000, 3000])
        last = [o for o in [op] + self.queue if o and o["op"] == "restart"][-1:]
        if last and not self.leasing(last[0]["c"]):
            for bad in (1 << last[0]["set"]["node_bits"], MAX_NODE_SETTING + 1):
                self.queue += self.bad_node_ops(last[0]["c"], last[0]["set"], bad)
        return op

    def drill_epoch_later(self):
        def later(s):
            y, m, d = (int(x) for x in s["epoch"].split("-"))
            moved = datetime.date(y, m, d) + datetime.timedelta(days=self.r.choice([1, 60]))
            return {"epoch": moved.isoformat()}
        # Where the horizon was ever taken, its file's mark refuses the moved
        # epoch as well, up to the horizons it returned: the first run is on
        # a new server that never polls, where only the marks of
        # marks_move_epoch() stand between the IDs and those made before; the
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
        ops = [{"op": "cluster", "c": c, "set": s, "dbs": [db], "unpolled": True},
               {"op": "reload", "c": c, "set": ahead, "poll": False}, ids(),
               {"op": "restart", "c": c, "mode": self.r.choice(["fast", "immediate"]), "set": moved},
               ids(), {"op": "restart", "c": c, "mode": "fast", "set": s, "poll": False}, ids(),
               {"op": "retire", "c": c}]
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
        one = self.one_client(c, db)
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

    @staticmethod
    def one_client(c, db):
        """A burst of one client on c's db, of the calls given."""
        return lambda calls: {"op": "burst", "kill": None,
                              "clients": [{"c": c, "db": db, "calls": calls}]}

    def drill_lost_hwm(self):
        """idgen_hwm deleted after a CHECKPOINT, with the server stopped,
        the clock then behind the server's last IDs: generating is refused
        in every layout (docs/guarantees.md, The mark file is lost) until
        idgen_resume_after() and a restart; then IDs resume above.  Half
        the time (drawn from a stream of its own), restarted twice more
        after the loss, its clock 5 s further behind: still refused, as
        each start keeps the loss in the file it writes."""
        c = self.quiet_primary()
        if c is None:
            return None
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_clock_regression_ms=10000)
        ahead_ms = self.r.choice([2000, 3000])
        restarts = 2 if self.side_stream().random() < 0.5 else 0
        ahead = dict(s, clock_offset_ms=s["clock_offset_ms"] + ahead_ms + 2500 * restarts)
        ops = [{"op": "reload", "c": c, "set": ahead, "poll": False}, self.burst_on(c, c),
               {"op": "lose_hwm", "c": c, "set": s, "restarts": restarts}, self.burst_on(c, c),
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
        # not a server left with a node id past its node_bits: its new
        # cluster, with the same settings, could not restore idgen's rows
        prim = [c for c in self.primaries() if not self.clusters[c]["standby"]
                and self.dbs(c, CURRENT) and not self.leasing(c)
                and self.clusters[c]["set"]["node_id"] < 1 << self.clusters[c]["set"]["node_bits"]]
        if len(self.primaries()) < 2 or not prim:
            return None
        c = self.r.choice(prim)
        db = self.r.choice(self.dbs(c, CURRENT))
        s = dict(self.clusters[c]["set"], max_clock_regression_ms=10000)
        s.pop("synchronous_standby_names", None)
        # Any epoch, later half the time: idgen_system says the one the old
        # IDs were made under, and idgen_resume_after() resumes above them
        # under a later one by the difference.
        day = datetime.date.fromisoformat(s["epoch"])
        s["epoch"] = (day + datetime.timedelta(days=self.r.choice([0, -1, 1, 60]))).isoformat()
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
        ops = self.move_form(ops, ahead)
        self.queue += [op for op in ops[1:] if op]
        return ops[0]

    def move_form(self, ops, ahead):
        """The move drill's ops in the form drawn from a stream of their own
        (the main stream's draws stay the plain move's): who restores (postgres,
        or the owner into a database a superuser made), what (the database, with
        a layout that ends, or one table idgen cannot see: README's step, then
        idgen's own layout until the clock passes the old IDs of every layout)
        and which way (into a new cluster, or back after its pg_upgrade)."""
        side = self.side_stream()
        who, what = side.choice(["postgres", "owner"]), side.choice(["db", "db", "table"])
        rollback = side.random() < 1 / 2
        restart, lead = self.move_restart(side, what)
        reload, first, move, new_other, refused, resume, after, other_after, outbox = ops
        c, db, new, s = move["c"], move["db"], move["new"], move["set"]
        move.update({k: v for k, v in (("who", who), ("what", what)) if v not in ("postgres", "db")})
        move.update(self.move_history(side, what, rollback), **self.move_split(side, who, what))
        lead = lead or 20000 * ("split" in move)     # two restores take as long as a restart
        if rollback:
            # the new cluster generates, the old one gets its data back; a
            # session of its other database held across (made if missing)
            move.update(op="rollback", c=new, new=c)
            # 6 s further ahead: the rollback's steps take seconds, and the old
            # server must start behind the IDs the new one made; not for one
            # table, whose step must pass idgen.max_clock_regression_ms
            ahead = dict(ahead, clock_offset_ms=ahead["clock_offset_ms"] + 6000 * (what == "db") + lead)
            made = self.on(refused, new)
            if what == "db":
                # one session whose first transaction rolls back after a
                # savepoint around its IDs was released: the row of idgen_system
                # the new cluster added goes with it, and must be added again
                made = {"op": "outbox", "c": new, "db": db,
                        "writers": [[[1, 0, RELEASED]] + [[5, 0, "COMMIT"]] * 3]}
            # first a minute behind without README's copy of idgen_hwm (forgot_hwm)
            ops = [reload, first, {"op": "upgrade", "c": c, "new": new, "set": ahead,
                                   "forgot": dict(s, clock_offset_ms=s["clock_offset_ms"] - 60000)},
                   made, move, restart and dict(restart, c=c, set=s),
                   restart and self.burst_new_db(c, move.get("other")), self.on(refused, c)]
            new, other_after, outbox = c, None, outbox and dict(outbox, c=c)
            after = self.on(after, c)
        else:
            # a database made on the refusing server (its extension records
            # the server in idgen_system) before the others generate: the
            # refusal holds
            third = [d for d in self.db_names if d not in (db, move.get("other"))]
            made = third and {"op": "createdb", "c": new, "db": third[0], "version": CURRENT}
            reload = dict(reload, set=dict(ahead, clock_offset_ms=ahead["clock_offset_ms"] + lead))
            ops = [reload, first, move, made, new_other, refused]
            if restart:
                # the other database asks first: nothing may look at the
                # restored one in between (a new database's probes, or the
                # restart's, would: unprobed)
                ops[3:5] = [dict(restart, c=new, set=s), new_other, made]
        if what == "db":
            ops.insert(next(i for i, o in enumerate(ops) if o is move), self.ended_layout(side, move["c"], db))
            return ops + [dict(resume, c=new), after, other_after, outbox]
        own = {"op": "burst", "kill": None,
               "clients": [{"c": new, "db": db, "calls": [["next", None, 1, 3000]]} for _ in range(2)]}
        idle = ahead["clock_offset_ms"] - s["clock_offset_ms"] + ahead["max_lead_ms"] + 2000
        return ops[:4 + rollback] + [
            {"op": "resume", "c": new, "db": db, "table": True}, own, {"op": "pause", "ms": idle, "past": new},
            after if rollback else self.burst_new_db(new, db), other_after, outbox]

    @staticmethod
    def ended_layout(side, c, db):
        """A layout whose time field ends a second after it is defined, in
        the database a whole-database move dumps: a restore must take it as
        it was (docs/guarantees.md), or the restore's layouts fail as a
        whole and the rows a CHECK reads a layout through are lost."""
        return {"op": "redefine", "c": c, "db": db, "name": side.choice(NAMES), "epoch": None, "family": ENDING,
                "ends_in_ms": 1000}

    @staticmethod
    def move_history(side, what, rollback):
        """Three in four moves of a whole database into a new cluster: its
        idgen_system holds rows of 6, 12 or 24 earlier clusters too, as a
        database moved that many times before does, which idgen_hwm must
        keep once noted or covered (the same rows for every move of a
        database: moves in a row stay within its 64 notes)."""
        history = side.choice([0, 6, 12, 24]) if what == "db" and not rollback else 0
        return {"history": history} if history else {}

    @staticmethod
    def move_split(side, who, what):
        """Three in four of a superuser's restores of a whole database are in
        two steps, the schema and then the data with the triggers off
        (--data-only --disable-triggers): idgen's must stay on, or the rows
        of idgen_system pass the trigger that refuses for them unchecked.
        Only a superuser can turn triggers off, so this form needs the draws
        of the others: at one in two, few seeds reached it."""
        return {"split": True} if who == "postgres" and what == "db" and side.random() < 3 / 4 else {}

    @staticmethod
    def move_restart(side, what):
        """For a database, two times in three the restoring server restarts
        before its other databases generate: the refusal must outlive it
        (idgen_hwm's note).  The old IDs then start 20 s further ahead (the
        lead returned), so that its clock is still behind them after the
        move, the restart and a new database on a loaded machine (the way
        out waits for the clock)."""
        restart = side.random() < 2 / 3 and what == "db" and {"op": "restart", "unprobed": True,
                                                              "mode": side.choice(["fast", "immediate"])}
        return restart, 20000 if restart else 0

    @staticmethod
    def on(burst, c):
        """burst's clients on server c."""
        return burst and dict(burst, clients=[dict(cl, c=c) for cl in burst["clients"]])
