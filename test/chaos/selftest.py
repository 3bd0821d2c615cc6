#!/usr/bin/python3
"""Tests of the checker itself (scripts/chaos --self-test): the shrinker on
the op lists a run records, with a stand-in for replaying them.  They need
no server."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chaos import coarse, ddmin   # noqa: E402


def burst(c, n):
    return {"op": "burst", "clients": [{"c": c, "db": "db1", "calls": [["next", None, 1, n]]}],
            "kill": None}


# A run with a promotion: B is A's standby, promoted with A killed; the
# violation shows in a burst on B.  C is another server the failure does
# not involve.
RUN = [
    {"op": "cluster", "c": "A", "set": {"node_id": 1}},
    {"op": "cluster", "c": "C", "set": {"node_id": 2}},
    burst("A", 10),
    burst("C", 20),
    {"op": "standby", "c": "A", "s": "B", "sync": True, "node_id": None},
    burst("A", 30),
    {"op": "promote", "s": "B", "kill_primary": True},
    burst("C", 40),
    burst("B", 50),
]


def fails_with(*needed):
    """A stand-in for a replay: the ops fail when they hold every op of
    needed (by index in RUN)."""
    def reproduces(ops):
        return all(RUN[i] in ops for i in needed)
    return reproduces


class Shrinker(unittest.TestCase):
    def test_coarse_keeps_a_promotions_primary(self):
        # Promote ops name only their standby: the cut of the servers the
        # failing step does not touch must follow it back to its primary,
        # and cut C's ops.
        needed = (0, 4, 5, 6, 8)
        small = coarse(RUN, fails_with(*needed), time.time() + 60)
        for i in needed:
            self.assertIn(RUN[i], small)
        for i in (1, 3, 7):
            self.assertNotIn(RUN[i], small)

    def test_ddmin_finds_the_failing_ops(self):
        small = ddmin(RUN, fails_with(0, 6, 8), time.time() + 60)
        self.assertEqual(small, [RUN[0], RUN[6], RUN[8]])


if __name__ == "__main__":
    unittest.main()
