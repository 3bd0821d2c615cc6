"""Node id leases as the servers hold them: whose lease is what, no node id
held twice, and the ops that freeze a holder, thaw it or copy it."""

import os
import signal
import time

import psycopg2

from cluster import Cluster, cmdline
from invariants import held_once, lease_state_told, own_release
from lineage import Lineage
from params import DBS
from registry import REGISTRY


class Leases:
    def leasing(self, c):
        cl = self.clusters.get(c)
        return cl is not None and bool(cl.settings.get("node_registry"))

    def lease_of(self, c):
        """(node id, state, previous mark in Unix ms) of c's lease, from
        the first database whose idgen has idgen_node_lease; None when none."""
        for db in ["postgres"] + DBS:
            try:
                rows = self.clusters[c].query(
                    db, "SELECT node_id, CASE WHEN state = 'held' AND seconds_left > 0 THEN 'held'"
                        " ELSE state END, (extract(epoch FROM previous_mark) * 1000)::bigint,"
                        " state, seconds_left, source, node_bits, current_setting('idgen.node_bits')::int,"
                        " (SELECT setting::int FROM pg_settings WHERE name = 'idgen.node_lease_s')"
                        " FROM idgen_node_lease")
            except psycopg2.Error:
                continue
            registry = self.clusters[c].settings.get("node_registry") or ""
            configured = "etcd" if registry.startswith(("etcd:", "etcds:")) else "lease" if registry else "setting"
            row = rows[0]
            lease_state_told(row[3], row[4], "%s at step %d" % (c, self.step),
                             (row[5], configured, row[6], row[7], row[8]))
            lease = tuple(rows[0][:3])
            if lease[1] == "held" and self.holder.get(lease[0], (None,))[0] != c:
                self.holder[lease[0]] = (c, self.step)
            return lease
        return None

    def wait_lease(self, c, timeout):
        """Waits until c holds a lease; returns lease_of(c) then."""
        deadline = time.time() + timeout
        while True:
            lease = self.lease_of(c)
            if lease is None or lease[1] == "held" or time.time() > deadline:
                return lease
            time.sleep(0.1)

    def lessees(self):
        return [c for c in self.clusters if self.leasing(c) and self.live(c)]

    def all_held(self, but):
        """Every other live leasing server holds a lease (none waits for one)."""
        for c in self.lessees():
            if c != but:
                lease = self.lease_of(c)
                if lease is None or lease[1] != "held":
                    return False
        return True

    def released_rows(self):
        """{node id: released} of the registry's leases, or None where no
        live, unfrozen database registry can tell."""
        reg = self.registry()
        if reg is None or self.registry_frozen is not None or not self.live(REGISTRY, "registry"):
            return None
        try:
            return dict(reg.query("postgres", "SELECT node_id, released FROM idgen_lease"))
        except psycopg2.Error:
            return None

    def held_by_others(self, c):
        """{node id: server} of the live servers but c that hold a lease."""
        return {lease[0]: o for o, lease in ((o, self.lease_of(o)) for o in self.lessees() if o != c)
                if lease and lease[1] == "held"}

    def stop_releasing(self, c, mode):
        """Stops c by pg_ctl, checking its release."""
        self.releasing_own(c, lambda: self.clusters[c].stop(mode))

    def releasing_own(self, c, stop):
        """Runs stop(), which stops c: a leasing server's stop releases its
        own lease, never another holder's (invariants.own_release)."""
        before = self.released_rows() if self.leasing(c) else None
        others = self.held_by_others(c) if before is not None else {}
        stop()
        if before is not None:
            self.found_mid_op(own_release, c, others, before, self.released_rows(), self.step)

    def check_held(self):
        """No node id is held by two live servers at once."""
        held_once(((c, self.lease_of(c)) for c in self.lessees()), self.step)

    def do_freeze(self, op):
        """SIGSTOP the postmaster and all its children, or the lease worker alone."""
        c = op["c"]
        if not self.live(c) or c in self.frozen:
            return False
        cl = self.clusters[c]
        pm = cl.postmaster_pid()
        if pm is None:
            return False
        pids = [pm] + cl.children(pm)
        if op["what"] == "worker":
            pids = [p for p in pids if "idgen node lease" in cmdline(p)]
            if not pids:
                return False
        self.touch(c)
        lease = self.lease_of(c)
        if op.get("reserve"):
            self.do_reserve(op)
        self.frozen[c] = (op["what"], pids, lease)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass        # a backend that just ended

    def do_thaw(self, op):
        """SIGCONT, with but_worker to all but the lease worker, which
        stays frozen (a later thaw wakes it)."""
        c = op["c"]
        if c not in self.frozen:
            return False
        what, pids, lease = self.frozen.pop(c)
        worker = [p for p in pids if "idgen node lease" in cmdline(p)] if op.get("but_worker") else []
        for pid in pids:
            if pid not in worker:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        if worker:
            self.frozen[c] = ("worker", worker, lease)
        self.touch(c)
        if op.get("unreserve"):
            self.do_unreserve(op)

    def do_stop_frozen(self, op):
        """A fast shutdown of a server whose lease worker alone is frozen,
        which wakes with its shutdown pending, before its timeout to renew
        could tell it its lease was lost; retired.  Retired all the same,
        as the model has it, where the freeze did not take."""
        c = op["c"]
        if self.frozen.get(c, ("server",))[0] != "worker":
            self.do_thaw({"c": c})
            done = self.do_retire(op)
            if op.get("unreserve"):
                self.do_unreserve(op)
            return done
        pids = self.frozen.pop(c)[1]
        cl = self.clusters[c]

        def stop():
            postmaster = cl.postmaster_pid()
            if postmaster is None:
                # gone: its pids may be another server's now
                cl.running = False
                return
            os.kill(postmaster, signal.SIGINT)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 60
            while cl.postmaster_pid() is not None and time.time() < deadline:
                time.sleep(0.1)
            cl.running = False
        self.releasing_own(c, stop)
        self.role[c] = "retired"
        if op.get("unreserve"):
            self.do_unreserve(op)

    def do_clone(self, op):
        """A pg_basebackup of a holder started as a primary: it is a new
        holder (another node id, or none while all are held)."""
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        cl = Cluster(self.pg, self.root, new)
        cl.create_standby(src, clone=True)
        cl.write_settings(src.settings)
        self.clusters[new] = cl
        self.role[new] = "primary"
        self.lineage[new] = Lineage()
        cl.start()
        self.touch(new)
        self.wait_lease(new, 2)
        self.check_held()
