"""Drills of the etcd registry (issue #43), in the PostgreSQL registry's
drills' place on a run whose leasing servers lease from etcd: its leader
killed and started again, a minority member frozen and woken.  The whole
cluster down past the lease is the outage drill, a holder frozen past its
lease while another takes its node id the frozen drill (lease_drills.py),
on whichever registry the run has."""

import random

from etcd import etcd_binary
from params import LEASE_S

ETCD_DRILLS = ["etcd_leader", "etcd_minority"]


def draws_etcd(rng):
    """Whether a run leases from etcd: one in two, drawn from a stream of
    its own (rng's state, none of its draws), so that every run's ops are
    those of its seed before etcd was added, but for the registry's."""
    return random.Random("etcd %s" % (rng.getstate(),)).random() < 0.5 and etcd_binary() is not None


class EtcdDrills:
    def failing_member(self, fail, wake):
        """fail, then bursts on every holder over two leases, then wake and
        bursts: a majority lives throughout, so no holder pauses."""
        servers = self.lessees()
        if not servers:
            return None
        ops = [fail, self.lease_bursts(servers), {"op": "pause", "ms": 2 * LEASE_S * 1000},
               self.lease_bursts(servers), wake, self.lease_bursts(servers)]
        ops = [op for op in ops if op]
        self.queue += ops[1:]
        return ops[0]

    def drill_etcd_leader(self):
        """The etcd leader killed (SIGKILL), started again after two leases."""
        return self.failing_member({"op": "etcd_kill"}, {"op": "etcd_start"})

    def drill_etcd_minority(self):
        """A follower frozen (SIGSTOP) for two leases, then woken."""
        return self.failing_member({"op": "etcd_freeze"}, {"op": "etcd_thaw"})

    def apply_etcd_kill(self, op):
        pass

    apply_etcd_start = apply_etcd_freeze = apply_etcd_thaw = apply_etcd_kill
