"""Node id leases as the servers hold them: whose lease is what, no node id
held twice, and the ops that freeze a holder, thaw it or copy it."""

import os
import signal
import time

import psycopg2

from cluster import Cluster, cmdline
from invariants import held_once
from lineage import Lineage
from params import DBS


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
                        " ELSE state END, (extract(epoch FROM previous_mark) * 1000)::bigint"
                        " FROM idgen_node_lease")
            except psycopg2.Error:
                continue
            lease = tuple(rows[0])
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
