#!/usr/bin/python3
"""Tests of the checker itself (scripts/chaos --self-test): the shrinker on
the op lists a run records, with a stand-in for replaying them; the wait
after a backend's SIGKILL, with a server log written by the test; and the
invariants on values given by hand.  They need no server."""

import ast
import glob
import os
import random
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chaos import coarse, ddmin   # noqa: E402
from cluster import Cluster        # noqa: E402
from etcd_drills import ETCD_DRILLS     # noqa: E402
from contract import readme_settings     # noqa: E402
from answers import (counted_short, decoded_alike, drops_counted, given_up_idle_first, horizon_warned,  # noqa: E402
                     input_judged, lease_granted_free, restore_judged, schema_alike, settings_declared, slots_full_counted,
                     standby_refused, stats_columns, stats_mismatch, worker_kept)
from invariants import (Violation, above, increasing, lease_state_told, previous_mark_kept,  # noqa: E402
                        ridden_out, right_shard, started_low, unique)
from probes import DATA_REFUSED, REFUSED, input_calls     # noqa: E402
from layouts import Layout, builtin, shard_range      # noqa: E402
from lineage import Frontier       # noqa: E402
from ops import Model      # noqa: E402
from outbox import NAMED_HORIZON, Poller    # noqa: E402
from params import ALL_DRILLS, DRILLS, REGISTRY_DRILLS      # noqa: E402


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
            restarted = cl.wait_ready(timeout=10)
            waited = time.time() - started
            writer.join()
            self.assertGreaterEqual(waited, 0.55)
            self.assertTrue(restarted)

    def test_a_backend_that_exited_needs_no_wait(self):
        with tempfile.TemporaryDirectory() as root:
            cl = Cluster(None, root, "A")
            cl.connect = lambda db, timeout_ms=30000: type("Conn", (), {"close": lambda self: None})()
            with open(cl.log, "w") as f:
                f.write("LOG:  server process (PID 4242) exited with exit code 1\n")
            cl.killed_backend = (4242, 0)
            started = time.time()
            self.assertFalse(cl.wait_ready(timeout=10))
            self.assertLess(time.time() - started, 1)


class Frontiers(unittest.TestCase):
    """IDs of a server's later runs lie above those of its earlier runs that
    they could equal."""

    def test_only_earlier_runs_bind(self):
        f = Frontier()
        f.add(("idgen",), 1, 4, 500)
        self.assertEqual(f.bound(("idgen",), 1, 4, True), (None, None))   # the same run
        f.new_run()
        self.assertEqual(f.bound(("idgen",), 1, 4, True), (500, (1, 4)))

    def test_other_node_binds_only_under_other_node_bits(self):
        f = Frontier()
        f.add(("idgen",), 1, 4, 500)
        f.add(("twitter",), 1, 4, 700)
        f.new_run()
        self.assertEqual(f.bound(("idgen",), 2, 4, True), (None, None))
        self.assertEqual(f.bound(("idgen",), 2, 5, True), (500, (1, 4)))
        # A layout with a node field of its own: node_bits does not place IDs.
        self.assertEqual(f.bound(("twitter",), 2, 5, False), (None, None))
        self.assertEqual(f.bound(("twitter",), 1, 5, False), (700, (1, 4)))

    def test_a_synchronous_standby_takes_all_its_primarys_ids(self):
        primary, standby = Frontier(), Frontier()
        primary.add(("idgen",), 1, 4, 300)
        primary.new_run()
        primary.add(("idgen",), 1, 4, 900)     # the primary's last run
        standby.include(primary)
        self.assertEqual(standby.bound(("idgen",), 1, 4, True)[0], 900)


class Pollers(unittest.TestCase):
    def test_the_horizon_must_not_go_back(self):
        p = Poller()
        self.assertFalse(p.waits(100))
        p.take_horizon(100, 1, "A")
        p.take_rows([10, 20], 100, 1, "A")
        self.assertFalse(p.waits(90))
        with self.assertRaises(Violation) as cm:
            p.take_horizon(90, 2, "A")
        self.assertEqual(cm.exception.kind, "horizon went back")

    def test_rows_once_and_none_missed(self):
        p = Poller()
        p.take_horizon(100, 1, "A")
        p.take_rows([10, 20], 100, 1, "A")
        with self.assertRaises(Violation) as cm:
            p.take_rows([20], 100, 2, "A")
        self.assertEqual(cm.exception.kind, "row read twice")
        p.check_missed([10, 20], 3, "A")
        with self.assertRaises(Violation) as cm:
            p.check_missed([10, 15, 20], 3, "A")
        self.assertEqual(cm.exception.kind, "row missed")

    def test_after_a_switch_the_cursor_waits_for_the_horizon(self):
        p = Poller()
        p.take_horizon(100, 1, "A")
        p.take_rows([], 100, 1, "A")
        s = p.switch()
        self.assertTrue(s.waits(80))    # keeps its cursor
        self.assertFalse(s.waits(120))
        self.assertFalse(s.waits(80))   # passed once: strict again

    def test_a_named_layouts_horizon_must_not_go_back(self):
        p = Poller()
        p.take_named(500, 1, "A")
        p.take_named(500, 2, "A")
        with self.assertRaises(Violation) as cm:
            p.take_named(499, 3, "A")
        self.assertEqual(cm.exception.layout, NAMED_HORIZON)
        s = p.switch()
        s.take_named(400, 4, "B")       # a promoted standby's, until it passes
        s.take_named(600, 5, "B")
        with self.assertRaises(Violation):
            s.take_named(550, 6, "B")


class Drills(unittest.TestCase):
    """Whatever the seed, a short run reaches every drill early."""

    def test_every_drill_in_the_first_220_ops(self):
        for seed in range(100):
            for late_first in (False, True):
                model = Model(random.Random(seed), 4, late_first=late_first)
                seen = {model.next_op().get("drill") for _ in range(220)}
                # a run leasing from etcd has etcd's drills in the registry's
                drills = set(ALL_DRILLS) - set(REGISTRY_DRILLS) | set(ETCD_DRILLS) if model.etcd \
                    else set(ALL_DRILLS)
                self.assertEqual(drills - seen, set(), "seed %d, late first: %s" % (seed, late_first))

    def test_whole_deck_ends_after_every_drill(self):
        # chaos --whole-deck stops when deck_done(): not before any drill has run
        model = Model(random.Random(11), 4)
        seen = set()
        while not model.deck_done():
            seen.add(model.next_op().get("drill"))
        drills = set(ALL_DRILLS) - set(REGISTRY_DRILLS) | set(ETCD_DRILLS) if model.etcd else set(ALL_DRILLS)
        self.assertEqual(drills - seen, set())

    def test_late_drills_first(self):
        # the second seed of a short run starts with the drills the first's budget may not reach
        model = Model(random.Random(7), 4, late_first=True)
        first = [model.next_op().get("drill") for _ in range(60)]
        self.assertIn(next(d for d in first if d), set(ALL_DRILLS) - set(DRILLS))


class Counts(unittest.TestCase):
    def test_stats_mismatch(self):
        self.assertIsNone(stats_mismatch({"idgen": 5}, {"idgen": 5}, set()))
        self.assertEqual(stats_mismatch({"idgen": 5}, {"idgen": 1}, set()), ("idgen", 5, 1))
        self.assertEqual(stats_mismatch({}, {"js53": 3}, set()), ("js53", 0, 3))
        self.assertIsNone(stats_mismatch({"idgen": 5}, {"idgen": 7}, {"idgen"}))
        # once the table dropped a definition's counts: at most, never more
        self.assertIsNone(stats_mismatch({"idgen": 5, "js53": 2}, {"idgen": 3}, set(), at_most=True))
        self.assertEqual(stats_mismatch({"idgen": 5}, {"idgen": 6}, set(), at_most=True), ("idgen", 5, 6))

    def test_the_longest_idle_is_given_up_first(self):
        order = {0: ["a", "b", "c", "d"], 1: ["idgen", "d"]}
        expected = {"a": 1, "b": 1, "c": 1, "d": 2, "idgen": 1}
        # the oldest lost: as promised; d, which two sessions used, is not judged
        given_up_idle_first(order, expected, {"b": 1, "c": 1, "d": 0}, set(), "here")
        # c lost while a, used before c, kept its counts
        with self.assertRaisesRegex(Violation, "busier.*layout c"):
            given_up_idle_first(order, expected, {"a": 1, "b": 1}, set(), "here")
        given_up_idle_first(order, expected, {"a": 1, "b": 1}, {"c"}, "here")

    def test_stats_columns(self):
        stats_columns([("idgen", 10, 2, 100.5, 101.0), ("pgedge", 4, 4, 100.0, 100.0)], 100.2, 102, "here")
        for row in [("pgedge", 4, 3, 100.0, 100.0), ("idgen", 2, 3, 100.0, 100.0),
                    ("idgen", 2, 0, 90.0, 100.0), ("idgen", 2, 0, 100.0, 110.0)]:
            with self.assertRaisesRegex(Violation, "stats columns"):
                stats_columns([row], 100.2, 102, "here")

    def test_drops_counted_only_when_full(self):
        drops_counted((5, 10, 1024), (5, 12, 1024), None, "here")
        drops_counted((5, 1000, 1024), (9, 1024, 1024), ("a", 2, 0), "here")
        with self.assertRaisesRegex(Violation, "drops miscounted.*counted 2 dropped"):
            drops_counted((5, 10, 1024), (7, 12, 1024), None, "here")
        with self.assertRaisesRegex(Violation, "drops miscounted.*counted none"):
            drops_counted((5, 1024, 1024), (5, 1024, 1024), ("a", 2, 0), "here")
        drops_counted((5, 10, 1024), (0, 3, 1024), None, "here")        # a table anew
        # the one counted short, past one counted more
        self.assertEqual(counted_short({"a": 1, "b": 3}, {"a": 2, "b": 1}, set()), ("b", 3, 1))

    def test_horizon_warns_where_reads_may_miss_rows(self):
        warning = "WARNING:  reads in this transaction may miss rows below the idgen horizon\n"
        horizon_warned("READ COMMITTED", [], "here")
        horizon_warned("SERIALIZABLE", [warning], "here")
        for isolation, warnings in [("REPEATABLE READ", []), ("READ COMMITTED", [warning])]:
            with self.assertRaisesRegex(Violation, "horizon warning"):
                horizon_warned(isolation, warnings, "here")

    def test_restore_by_a_stranger_and_by_the_owner(self):
        denied = ("42501", "permission denied to define the idgen layouts that idgen_layouts_saved() holds")
        restore_judged(False, denied, 0, "here")
        restore_judged(True, None, 1, "here")
        for owner, error, defined in [(False, ("42501", "permission denied for table idgen_layout"), 0),
                                      (False, None, 1), (True, denied, 0), (True, None, 0)]:
            with self.assertRaisesRegex(Violation, "restore misjudged"):
                restore_judged(owner, error, defined, "here")

    def test_backends_without_a_worker_id_counted(self):
        slots_full_counted((0, 3, 63), (0, 60, 63), 57, "here")
        slots_full_counted((2, 3, 63), (3, 63, 63), 70, "here")
        with self.assertRaisesRegex(Violation, "overflow uncounted"):
            slots_full_counted((2, 3, 63), (2, 63, 63), 70, "here")

    def test_a_lease_with_time_left_is_not_expired(self):
        lease_state_told("expired", 0.0, "here")
        lease_state_told("renewing", 12.0, "here")
        with self.assertRaisesRegex(Violation, "lease state"):
            lease_state_told("expired", 12.0, "here")

    def test_worker_ids_of_exited_backends(self):
        worker_kept([], "here")
        with self.assertRaisesRegex(Violation, "worker id kept.*worker ids \\[7\\]"):
            worker_kept([(1234, 7)], "here")

    def test_each_tick_starts_in_the_lower_half(self):
        started_low({("A", 0, 1, 2, 1000): 0, ("A", 1, 1, 3, 1000): 2047}, 2048, "idgen", "here")
        with self.assertRaisesRegex(Violation, "sequence started high.*client 1 of server A"):
            started_low({("A", 0, 1, 2, 1000): 5, ("A", 1, 1, 3, 1000): 2048}, 2048, "idgen", "here")

    def test_a_released_mark_comes_with_the_node_id(self):
        previous_mark_kept(1700000000000, 1700000000005, "here")
        previous_mark_kept(None, 0, "here")
        with self.assertRaisesRegex(Violation, "lease mark lost"):
            previous_mark_kept(12345, 1700000000000, "here")
        with self.assertRaisesRegex(Violation, "lease mark lost.*none"):
            previous_mark_kept(None, 1700000000000, "here")

    def test_a_clock_within_the_bound_is_ridden_out(self):
        ridden_out(10001, 10000, "idgen", "here")
        with self.assertRaisesRegex(Violation, "promised wait refused"):
            ridden_out(4000, 10000, "idgen", "here")


class Invariants(unittest.TestCase):
    def test_each_kind_is_raised_in_one_place(self):
        # invariants.py, answers.py, diagnostics.py and ways_out.py alone raise, once per kind
        where = {}
        for path in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.py")):
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Violation":
                    where.setdefault(node.args[0].value, []).append(os.path.basename(path))
        self.assertGreater(len(where), 10)
        for kind, files in where.items():
            self.assertIn(files, [["invariants.py"], ["answers.py"], ["diagnostics.py"], ["ways_out.py"]], kind)

    def test_repeated_ids_and_their_first_step(self):
        seen = {}
        unique(seen, [1, 2], 3, "idgen", "%d", "A/db1")
        with self.assertRaises(Violation) as cm:
            unique(seen, [4, 2], 5, "idgen", "%d", "A/db1")
        self.assertIn("first at step 3", cm.exception.message)
        self.assertIn(4, seen)

    def test_uuidv7_increasing(self):
        increasing([1, 2, 5], "uuidv7", "%x", "")
        with self.assertRaises(Violation) as cm:
            increasing([1, 3, 3], "uuidv7", "%x", "")
        self.assertEqual(cm.exception.kind, "out of order")

    def test_shards(self):
        # docs/design.md: with 4 node bits, node 3 makes instagram's shards 1536-2047
        self.assertEqual(shard_range(builtin("instagram"), 3, 4), (1536, 512))
        self.assertEqual(shard_range(builtin("decimal19"), 3, 4), (0, 1000))
        right_shard(1536, True, [(7, 1536)], False, "instagram", "%d", "")
        right_shard(2048, False, [], True, "instagram", "%d", "")
        for asked, inside, ids, refused in [(2048, False, [(7, 2048)], False), (1536, True, [(7, 1537)], False),
                                            (1536, True, [], True)]:
            with self.assertRaises(Violation) as cm:
                right_shard(asked, inside, ids, refused, "instagram", "%d", "")
            self.assertEqual(cm.exception.kind, "wrong shard")

    def test_resuming_above(self):
        above(11, 10, "idgen", "11", "")
        above(1, None, "idgen", "1", "")
        with self.assertRaises(Violation) as cm:
            above(10, 10, "idgen", "10", "handed out before")
        self.assertEqual(cm.exception.kind, "resumed below")

    def test_inputs_at_the_edges(self):
        listed = input_calls({"epoch": "2024-01-01", "node_bits": 4})
        calls = dict(listed)
        self.assertEqual(len(calls), len(listed))
        # js53: 40 bits of ms from 2024-01-01, 13 below them
        self.assertEqual(calls["SELECT idgen_from_timestamp((timestamptz 'epoch' + 1704067200000::bigint"
                               " * interval '1 ms'), 'js53')"], 0)
        self.assertEqual(calls["SELECT * FROM idgen_decode(%d, 'js53')" % (1 << 53)], DATA_REFUSED)
        self.assertEqual(calls["SELECT idgen_next_block(0)"], REFUSED)
        self.assertIn("SELECT idgen_from_timestamp((timestamptz 'epoch' + 1704067200000::bigint"
                      " * interval '1 ms'))", calls)
        self.assertFalse([sql for sql in calls if "'idgen'" in sql and "node_bits" in sql])
        for flawed in [{"epoch": "2024-13-01", "node_bits": 4}, {"epoch": "2024-01-01", "node_bits": 11}]:
            # idgen's own edges, by name and without, and its shared tables
            self.assertEqual(len(input_calls(flawed)) + 14, len(listed))
        input_judged("q", "refused", ("55000", "refusing to generate"), "")
        input_judged("q", "refused as data", ("22023", "block size"), "")
        input_judged("q", 7, ("value", 7), "")
        for expected, got in [("refused", ("value", 1)), ("refused", ("XX000", "oops")), (7, ("value", 8)),
                              ("refused as data", ("42883", "no such function")), (7, ("22008", "out of range"))]:
            with self.assertRaises(Violation) as cm:
                input_judged("q", expected, got, "")
            self.assertEqual(cm.exception.kind, "input misjudged")

    def test_decoded_columns(self):
        """README and docs/design.md: a shard takes the column the layout
        leaves free, node_id first; a field it lacks is NULL."""
        insta = builtin("instagram")
        ident = (5 << 23) | (1537 << 10) | 9
        row = [insta.epoch_ms + 5, 1537, None, 9, 5 << 23, 1000 << 23]
        decoded_alike(ident, insta, row + ["000000019G109", ident, "0000002wak5", ident], "")
        for wrong in [[insta.epoch_ms + 5, 1537, 1537, 9], [insta.epoch_ms + 5, None, None, 9],
                      [insta.epoch_ms + 4, 1537, None, 9]]:
            with self.assertRaises(Violation) as cm:
                decoded_alike(ident, insta, wrong + row[4:] + ["000000019G109", ident, "0000002wak5", ident], "")
            self.assertEqual(cm.exception.kind, "wrong decode")
        dec = builtin("decimal19")
        self.assertEqual(dec.columns(12345678), (dec.epoch_ms + 12, 45, 678, 3))
        # no worker field: the shard is worker_id
        both = Layout("b", 0, 1, 2, ("time", "node", "shard", "sequence"), (41, 5, 5, 12))
        self.assertEqual(both.columns((1 << 22) | (3 << 17) | (2 << 12) | 7), (1, 3, 2, 7))

    def test_schema_and_settings(self):
        schema_alike({"f": "a"}, {"f": "a"}, "")
        for other in [{"f": "b"}, {}, {"f": "a", "g": "x"}]:
            with self.assertRaises(Violation) as cm:
                schema_alike({"f": "a"}, other, "")
            self.assertEqual(cm.exception.kind, "schema differs")
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")) as f:
            readme = readme_settings(f.read())
        self.assertEqual(readme["idgen.node_bits"], ("postmaster", "4", ("0", "10")))
        self.assertEqual(readme["idgen.clock_offset_ms"], ("superuser", "0", None))
        self.assertEqual(len(readme), 10)
        rows = [(n, c, d or "", b[0] if b else None, b[1] if b else None) for n, (c, d, b) in readme.items()]
        settings_declared(rows, readme, "")
        for changed in [("idgen.clock_offset_ms", "user", "0", None, None),
                        ("idgen.node_bits", "postmaster", "4", "0", "11")]:
            with self.assertRaises(Violation) as cm:
                settings_declared([r for r in rows if r[0] != changed[0]] + [changed], readme, "")
            self.assertEqual(cm.exception.kind, "setting misdeclared")
        with self.assertRaises(Violation):
            settings_declared(rows[1:], readme, "")

    def test_leases_granted(self):
        lease_granted_free(("value", (7, 50)), {0, 1}, {7: 50}, 0, "")
        lease_granted_free(("54000", "all node ids are leased"), {0, 1}, {}, 0, "")
        lease_granted_free(("value", (None, None)), {0, 1}, {}, None, "")
        for got in [("value", (0, 10)), ("value", (7, 49))]:
            with self.assertRaises(Violation) as cm:
                lease_granted_free(got, {0, 1}, {7: 50, 0: 0}, 0, "")
            self.assertEqual(cm.exception.kind, "lease misgranted")

    def test_a_standby_refuses_to_generate(self):
        standby_refused("q", ("25006", "cannot generate idgen IDs during recovery"), "")
        for error in [None, ("XX000", "oops"), (None, "server closed the connection")]:
            with self.assertRaises(Violation) as cm:
                standby_refused("q", error, "")
            self.assertEqual(cm.exception.kind, "generated on a standby")


if __name__ == "__main__":
    unittest.main()
