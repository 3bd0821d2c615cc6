#!/usr/bin/python3
"""Tests of the checker itself (scripts/chaos --self-test): the shrinker on
the op lists a run records, with a stand-in for replaying them, and the wait
after a backend's SIGKILL, with a server log written by the test.  They need
no server."""

import os
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chaos import coarse, ddmin   # noqa: E402
from cluster import Cluster        # noqa: E402


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


class WaitAfterKill(unittest.TestCase):
    """A connection can succeed before the postmaster has noticed a backend's
    SIGKILL; the next burst then meets a server in recovery.  wait_ready must
    wait for the postmaster to notice and to serve again."""

    def test_waits_for_the_reinitialisation(self):
        with tempfile.TemporaryDirectory() as root:
            cl = Cluster(None, root, "A")
            cl.connect = lambda db, timeout_ms=30000: type("Conn", (), {"close": lambda self: None})()
            with open(cl.log, "w") as f:
                f.write("LOG:  database system is ready to accept connections\n")
            cl.killed_backend = (4242, os.path.getsize(cl.log))   # as kill_backend leaves it

            def postmaster():
                time.sleep(0.3)
                with open(cl.log, "a") as f:
                    f.write("LOG:  server process (PID 4242) was terminated by signal 9: Killed\n"
                            "LOG:  all server processes terminated; reinitializing\n")
                time.sleep(0.3)
                with open(cl.log, "a") as f:
                    f.write("LOG:  database system is ready to accept connections\n")
            writer = threading.Thread(target=postmaster)
            writer.start()
            started = time.time()
            cl.wait_ready(timeout=10)
            waited = time.time() - started
            writer.join()
            self.assertGreaterEqual(waited, 0.55)

    def test_a_backend_that_exited_needs_no_wait(self):
        with tempfile.TemporaryDirectory() as root:
            cl = Cluster(None, root, "A")
            cl.connect = lambda db, timeout_ms=30000: type("Conn", (), {"close": lambda self: None})()
            with open(cl.log, "w") as f:
                f.write("LOG:  server process (PID 4242) exited with exit code 1\n")
            cl.killed_backend = (4242, 0)
            started = time.time()
            cl.wait_ready(timeout=10)
            self.assertLess(time.time() - started, 1)


if __name__ == "__main__":
    unittest.main()
