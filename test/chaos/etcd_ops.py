"""The world's ops on the etcd registry (etcd.py): it started in the
PostgreSQL registry's place, stopped and started whole (the outage drill),
node ids reserved in it (the frozen drill), and its members failed: the
leader killed, a minority member frozen.  While a majority lives, every
holder keeps its node id throughout; after the whole cluster was down,
every holder holds its own again, on its own."""

import signal
import time

from etcd import Etcd
from invariants import lease_kept
from params import LEASE_POOL, LEASE_S, NODE_IDS

# Tokens of the node keys the checker writes: node ids set by hand, and
# the free ones while a holder is frozen (registry.py's reservations).
BY_HAND = "chaos-set-by-hand"
RESERVED = "chaos-reserved"


def node_value(token, epoch_ms):
    """A node key's value, under the leasing servers' node_bits and epoch:
    etcd, as the registry database, refuses live leases under two."""
    return "%s 4 %d chaos" % (token, epoch_ms)


class EtcdRegistry:
    def etcd_registry(self, op):
        self.etcd = Etcd(self.root)
        self.etcd.start_all()
        self.etcd.put_absent(op["reserved"], node_value(BY_HAND, self.lease_epoch_ms))

    def etcd_stop(self):
        """The whole etcd cluster stopped; its holders then are those that
        must hold their node ids again when it is back."""
        if not self.etcd.proc:
            return False
        self.etcd_held = self.held_now()
        for m in list(self.etcd.proc):
            self.etcd.stop(m)

    def etcd_start(self):
        if self.etcd.proc:
            return False
        self.etcd.start_all()
        self.etcd_kept("the whole etcd cluster was down", 3 * LEASE_S)

    def etcd_reserve(self):
        if not self.etcd.proc:
            return False
        self.etcd.put_absent(LEASE_POOL, node_value(RESERVED, self.lease_epoch_ms))

    def etcd_lease_epoch(self, epoch_ms):
        """The keys the checker holds moved to another epoch."""
        if not self.etcd.proc:
            return False
        for token, nodes in ((BY_HAND, NODE_IDS), (RESERVED, LEASE_POOL)):
            self.etcd.replace_if(nodes, node_value(token, self.lease_epoch_ms), node_value(token, epoch_ms))
        return None

    def etcd_unreserve(self):
        if not self.etcd.proc:
            return False
        self.etcd.delete_if(LEASE_POOL, node_value(RESERVED, self.lease_epoch_ms))

    def held_now(self):
        """{server: node id} of the live leasing servers holding one, and the step."""
        leases = {c: self.lease_of(c) for c in self.lessees()}
        self.lease_refusals = self.refused_for_lease()
        return {c: lease[0] for c, lease in leases.items() if lease and lease[1] == "held"}, self.step

    def refused_for_lease(self):
        return sum(n for msg, n in self.refusals.items() if "holds no node id lease" in msg)

    def count_refused(self, what):
        """The summary says how many calls were refused for want of a lease
        while a majority of etcd lived (none, as etcd promises)."""
        self.refusals["etcd drill: calls refused for want of a lease while %s" % what] += \
            self.refused_for_lease() - self.lease_refusals

    def etcd_kept(self, what, wait_s):
        """Every server that held a node id when etcd_held was taken holds
        the same one again within wait_s."""
        (held, step), self.etcd_held = self.etcd_held, ({}, self.step)
        deadline = time.time() + wait_s
        for c in sorted(held):
            if not self.live(c):
                continue
            lease = self.wait_lease(c, max(0.0, deadline - time.time()))
            lease_kept(c, held[c], (lease[0], lease[1]) if lease else None,
                       "when %s at step %d, %d s after it was whole at step %d" % (what, step, wait_s, self.step))
        self.check_held()

    def do_etcd_kill(self, op):
        """The etcd leader killed (SIGKILL)."""
        if self.etcd is None or len(self.etcd.proc) < 3:
            return False
        leader = self.etcd.wait_leader()
        self.etcd_held = self.held_now()
        self.etcd.stop(leader, signal.SIGKILL)

    def do_etcd_start(self, op):
        """The killed member started again: no holder lost its node id."""
        if self.etcd is None or len(self.etcd.proc) != 2:
            return False
        self.count_refused("a member was killed")
        self.etcd.start_all()
        self.etcd_kept("an etcd member was killed", LEASE_S)

    def do_etcd_freeze(self, op):
        """A follower frozen (SIGSTOP): a minority cut off."""
        if self.etcd is None or len(self.etcd.proc) < 3 or self.etcd.frozen:
            return False
        leader = self.etcd.wait_leader()
        m = [k for k in sorted(self.etcd.proc) if k != leader][0]
        self.etcd_held = self.held_now()
        self.etcd.signal(m, signal.SIGSTOP)

    def do_etcd_thaw(self, op):
        """The frozen member woken: no holder lost its node id."""
        if self.etcd is None or not self.etcd.frozen:
            return False
        self.count_refused("a member was frozen")
        for m in list(self.etcd.frozen):
            self.etcd.signal(m, signal.SIGCONT)
        self.etcd_kept("an etcd member was frozen", LEASE_S)
