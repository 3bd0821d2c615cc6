"""Drills of node id leases (issue #31) and of the registry failing (issue
#39): its outage, a frozen holder, a copied holder, the registry stalled,
failed over or restored from a dump."""

import copy

from params import CURRENT, DAY_MS, LEASE_POOL, LEASE_S, MAX_CLUSTERS

# The leasing servers' epoch moved a day later, in the release drill's later form.
LATER_LEASE_EPOCH = "2024-01-02"


class LeaseDrills:
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

    def pick_holder(self):
        """A leasing primary, one of its databases and its settings, for a
        drill that adds a server (None when there is no room for one)."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        if not servers or len(self.clusters) >= MAX_CLUSTERS:
            return None
        f = self.r.choice(servers)
        return f, self.r.choice(self.dbs(f, CURRENT)), self.clusters[f]["set"]

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
        # the leases read halfway, their renewals failing: not yet expired
        ops = [{"op": "registry_stop"}, {"op": "pause", "ms": LEASE_S * 500, "leases": True},
               {"op": "pause", "ms": LEASE_S * 500 + 1000}, self.lease_bursts(servers),
               {"op": "registry_start"}, self.lease_bursts(servers)]
        self.queue += ops[1:]
        return ops[0]

    def drill_frozen(self):
        """A holder whose clock is ahead frozen past its lease (the whole
        server, or its lease worker alone) while the registry holds every
        other node id; a new server leases its node id and generates above
        its IDs; woken, the holder makes no ID under it.  The new server
        stays, the frozen one is retired; or, in half the drills (drawn
        from a stream of its own), stopped while its lease worker is still
        frozen, which must not release the new server's lease."""
        picked = self.pick_holder()
        if picked is None:
            return None
        f, db, s = picked
        what = self.r.choice(["server", "worker"])
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
        ops.append(copy.deepcopy(one))          # past the fence: refused
        after = {"op": "burst", "kill": None,
                 "clients": [{"c": t, "db": db, "calls": [["next", None, 1, 3000], ["next", "pgedge", 1, 3000]]}
                             for _ in range(2)]}
        if self.side_stream("/frozen").random() < 0.5:
            ops += [{"op": "thaw", "c": f, "unreserve": True}, after, one, {"op": "retire", "c": f}]
        else:
            # stopped before its lease worker wakes: it releases at exit
            # the lease it no longer holds, which must leave the new one's
            ops += [{"op": "stop_frozen", "c": f, "unreserve": True}, after]
        self.queue += ops[1:]
        return ops[0]

    def drill_release(self):
        """A holder restarted with its clock ahead generates, then stops
        cleanly, releasing its node id with the mark of its IDs; the other
        node ids reserved, a new server whose clock is right leases it and
        must start above those IDs.  The new server stays.  Or, in half
        the drills where no leasing server has a standby (drawn from a
        stream of its own), the later form (release_later)."""
        picked = self.pick_holder()
        if picked is None:
            return None
        f, db, s = picked
        # the restart leaves only marks the clock has not passed: those of
        # the IDs the burst makes, above the marks it started from
        ahead = dict(s, clock_offset_ms=max(s["clock_offset_ms"], 0) + 6000, max_lead_ms=3000)
        t = self.new_name("T")
        ops = [{"op": "restart", "c": f, "mode": "fast", "set": ahead},
               self.lease_burst(f, db), {"op": "reserve"}, {"op": "retire", "c": f}]
        settings = dict(self.lease_settings(), max_clock_regression_ms=30000)
        if self.side_stream().random() < 0.5 and self.leases_alone():
            return self.release_later(ops, f, t, db, settings)
        ops += [{"op": "cluster", "c": t, "set": settings,
                 "wait_lease": 2 * LEASE_S, "dbs": [db], "takes": f, "part": "release"},
                self.lease_burst(t, db), {"op": "unreserve"}]
        self.queue += ops[1:]
        return ops[0]

    def leases_alone(self):
        """No leasing server has a standby, nor is one."""
        return not any(self.leasing(c) and (m["standby"] or m["role"] != "primary")
                       for c, m in self.clusters.items())

    def release_later(self, ops, f, t, db, settings):
        """The release drill under an epoch a day later: every other
        leasing server retired too, the registry's other leases moved to
        that epoch (it refuses live leases under two), and the new server
        there, its clock a day ahead less 3 s: it must start above the
        released IDs, their mark raised by the day, not at its clock (its
        IDs' time field 3 s and more below theirs).  Then it is retired, the
        leases moved back, and a leasing server made for later drills."""
        others = [{"op": "retire", "c": c} for c in self.clusters if self.leasing(c) and c != f]
        later = dict(settings, epoch=LATER_LEASE_EPOCH, clock_offset_ms=DAY_MS - 3000)
        ops = ops[:2] + others + ops[2:] + [
            {"op": "lease_epoch", "epoch": LATER_LEASE_EPOCH},
            {"op": "cluster", "c": t, "set": later, "wait_lease": 2 * LEASE_S, "dbs": [db], "takes": f},
            self.lease_burst(t, db), {"op": "retire", "c": t}, {"op": "unreserve"},
            {"op": "lease_epoch", "epoch": self.lease_settings()["epoch"]},
            {"op": "cluster", "c": self.new_name("L"), "set": self.lease_settings(), "dbs": ["db1"]}]
        self.queue += ops[1:]
        return ops[0]

    @staticmethod
    def lease_burst(c, db):
        """Two clients on c's db, in idgen's own layout and pgedge's."""
        return {"op": "burst", "kill": None,
                "clients": [{"c": c, "db": db, "calls": [["next", None, 1, 3000], ["next", "pgedge", 1, 300]]}
                            for _ in range(2)]}

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
        side = self.side_stream()
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
        """The registry stalled (SIGSTOP, or its lease table locked) past a
        lease while a new leasing server waits for a node id and the
        holders generate: within their
        fence, then past it (refused); woken, every holder holds its node
        id again on its own and the new server leases a free one."""
        servers = [c for c in self.lessees() if not self.clusters[c]["standby"]]
        leasing = [c for c in self.clusters if self.leasing(c)]
        # one node id of LEASE_POOL stays free for the new server
        if not servers or len(self.clusters) >= MAX_CLUSTERS or len(leasing) >= len(LEASE_POOL) - 1:
            return None
        n = self.new_name("N")
        waited = self.burst_new_db(n, "db1")
        how = self.r.choice(["stop", "lock"])
        # Locked, with every free node id reserved: the new server's acquires
        # that queue behind the lock find only the holders' leases, ended by
        # the registry's clock; one that commits after its caller gave up
        # must not take one of them (issue #39 row 3).
        reserve = [{"op": "reserve"}] if how == "lock" else []
        stall = [{"op": "registry_freeze", "how": how},
                 {"op": "cluster", "c": n, "set": self.lease_settings(), "wait_lease": 0, "dbs": ["db1"]},
                 self.lease_bursts(servers),
                 # past the lease, or a second lease: calls given up on pile up
                 {"op": "pause", "ms": LEASE_S * 1000 + self.r.choice([1000, 2000, LEASE_S * 1000])},
                 self.lease_bursts(servers),
                 {"op": "registry_thaw", "wait_s": 3 * LEASE_S}]
        last = dict(waited, clients=self.lease_bursts(servers)["clients"] + waited["clients"])
        ops = reserve + stall + [{"op": "unreserve"} for _ in reserve] + [last]
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

    def drill_registry_handover(self):
        """The registry's last dump restored, or its asynchronous standby
        promoted after its walsender was cut, while a holder is frozen,
        whose IDs since are ahead of the other servers' clocks: the
        renewals that reported their mark are lost.  The other node ids
        reserved, a new server leases the holder's once its lease ends; its
        clock behind those IDs, it must start above them, the registry
        fencing itself (issue #39 rows 1 and 2), or refuse.  Both are
        retired."""
        picked = self.pick_holder()
        if picked is None:
            return None
        f, db, s = picked
        # as in the frozen drill: renewed with the clock ahead, its lead 3 s
        ahead = dict(s, clock_offset_ms=max(s["clock_offset_ms"], 0) + 9000, max_lead_ms=3000,
                     max_clock_regression_ms=10000)
        t = self.new_name("T")
        if self.r.random() < 0.5:
            before, loss = [{"op": "registry_dump"}], {"op": "registry_restore"}
        else:
            before = [{"op": "registry_standby", "sync": False}, {"op": "registry_cut"}]
            loss = {"op": "registry_failover", "sync": False}
        ops = before + [
            {"op": "reload", "c": f, "set": ahead, "then_ms": LEASE_S * 1000 // 3 + 500},
            self.burst_on(f, f), {"op": "freeze", "c": f, "what": "server"},
            dict(loss, wait_s=2 * LEASE_S),
            {"op": "reserve", "but": f},
            {"op": "cluster", "c": t, "set": dict(self.lease_settings(), max_clock_regression_ms=30000),
             "wait_lease": 4 * LEASE_S, "dbs": [db], "takes": f},
            self.lease_burst(t, db),
            {"op": "thaw", "c": f, "unreserve": True},
            {"op": "retire", "c": f}, {"op": "retire", "c": t}]
        self.queue += [op for op in ops[1:] if op]
        return ops[0]

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
