"""More tests of the checker's invariants on values given by hand, run
with selftest.py's (scripts/chaos --self-test): the clock's hint, the
marks folded at startup, idgen_check_nodes() and idgen_stats' times; and
a run's own verdict; the ways out of a refusal."""

import contextlib
import io
import types
import unittest

from answers import marks_full_counted, regressions_per_incident
from chaos import ran
from contract import documented
from diagnostics import (FRESH_NODE, NO_FRESH_NODE, clock_hint_told, epoch_named, folded_passed_only, nodes_judged,
                         refusal_coded, stats_times_told)
from invariants import Violation
from layouts import builtin, default_layout, epoch_date_ms
from ways_out import refusal_reached_held, resumed_at_restart, resumed_past

NOW = 1767225600000     # 2026-01-01 00:00 UTC


class Answers(unittest.TestCase):
    def test_the_clock_hint_names_a_fresh_node_only_where_it_helps(self):
        msg = ("system clock is 20000 ms behind ...\nDETAIL:  idgen.max_clock_regression_ms allows the clock to fall"
               " behind by at most 10000 ms.\nHINT:  ... IDs resume at 2026-01-01 01:00:20+01 ... %s")
        view = {"regression": 10000, "lead": 1000}
        for hint, told, misled in ((FRESH_NODE, None, NOW + 30000), (NO_FRESH_NODE, NOW + 30000, NOW)):
            clock_hint_told(msg % hint, (told, told), 20000, view, "here")
            clock_hint_told(msg % hint, (misled, told), 20000, view, "here")    # not known
            self.assertRaises(Violation, clock_hint_told, msg % hint, (misled, misled), 20000, view, "here")

    def test_only_passed_marks_are_folded(self):
        folded_passed_only({("*", 0): NOW}, {("*", 0): NOW + 500, ("idgen", 5): 9}, NOW, "here")
        with self.assertRaisesRegex(Violation, "marks ahead folded"):
            folded_passed_only({("*", 0): NOW}, {("*", 0): NOW + 9000}, NOW, "here")

    def test_check_nodes_flags_what_it_should(self):
        want, columns = {"a": set(), "b": {"node"}, "c": {"bits"}}, {
            "a": (1, 4, "2024-01-01", False, "setting"), "b": (None, 4, "2024-01-01", False, "setting"),
            "c": (2, 5, "2024-01-01", False, "setting")}
        names = {"a": "A", "b": "B", "c": "C"}
        good = [("a", None, 1, 4, "2024-01-01", False, "setting"),
                ("b", "idgen.node_id is not set", None, 4, None, False, None),
                ("c", "idgen.node_bits is 5, but 4 on A", 2, 5, "2024-01-01", False, "setting")]
        nodes_judged(good, want, columns, names, "here")
        for bad in ([good[0], ("b", None) + good[1][2:], good[2]], [("a", "x is also used by C") + good[0][2:]] + good[1:],
                    [("a", None, 1, 5, "2024-01-01", False, "setting")] + good[1:], good[:2],
                    good[:2] + [("c", "idgen.epoch is 2024-01-02, but 2024-01-01 on A") + good[2][2:]]):
            self.assertRaises(Violation, nodes_judged, bad, want, columns, names, "here")

    def test_stats_times_are_the_layouts(self):
        idgen = default_layout(epoch_date_ms("2024-01-01"), 4)
        layouts = {"idgen": idgen, "twitter": builtin("twitter")}
        left = idgen.time_end_ms() - NOW
        self.assertEqual(idgen.time_end_ms(), epoch_date_ms("2024-01-01") + (1 << 41))
        stats_times_told([("idgen", 1, left - 900, NOW + 990, 990), ("twitter", 2, 0, None, None)], layouts,
                         (NOW, NOW + 40000), "here")
        for row in (("idgen", 1, left + 3600000, None, None), ("idgen", 1, left, NOW + 990, 40000)):
            with self.assertRaisesRegex(Violation, "stats times"):
                stats_times_told([row], layouts, (NOW, NOW + 40000), "here")
        # the mark at or past the highest ID made
        made = {"idgen": [((NOW + 40200 - idgen.epoch_ms) << 22, NOW)]}
        stats_times_told([("idgen", 1, left, NOW + 40990, 40990)], layouts, (NOW, NOW + 40000), "here", made)
        with self.assertRaisesRegex(Violation, "stats times"):
            stats_times_told([("idgen", 1, left, NOW + 40100, 40100)], layouts, (NOW, NOW + 40000), "here", made)

    def test_errors_keep_the_sqlstate_troubleshooting_gives(self):
        codes = documented()[1]
        self.assertGreaterEqual(len(codes), 14)
        clock = "system clock is 12000 ms behind the time of the newest idgen ID\nDETAIL:  ..."
        other = ('database "db1" holds idgen IDs of another cluster (system identifier 7), whose high-water marks'
                 " this server does not have")
        refusal_coded(codes, "58000", clock, "here")
        refusal_coded(codes, "55000", other, "here")
        refusal_coded(codes, "22012", "division by zero", "here")
        for code, message in (("55000", clock), ("22023", other), ("XX000", 'idgen layout "x" does not exist')):
            self.assertRaises(Violation, refusal_coded, codes, code, message, "here")

    def test_counts_of_full_marks_and_regressions(self):
        marks_full_counted(["a"] * 70, (6, 64, 64), "here")
        self.assertRaises(Violation, marks_full_counted, [str(i) for i in range(70)], (1, 64, 64), "here")
        regressions_per_incident({"idgen": 9, "js53": 0}, {"idgen": 2}, "here")
        self.assertRaises(Violation, regressions_per_incident, {"idgen": 1000}, {"idgen": 2}, "here")

    def test_an_epoch_moved_later_is_named(self):
        epoch_named("cannot generate idgen IDs because idgen.epoch was moved later", "here")
        self.assertRaises(Violation, epoch_named, "system clock is 86400000 ms behind the time of the newest idgen ID",
                          "here")

    def test_no_two_parts_of_the_world_define_one_method(self):
        # a method of one mixin silently hides another's of the same name
        from world import World
        owners = {}
        for part in World.__mro__[1:-1]:
            for name, value in vars(part).items():
                if callable(value) and not name.startswith("__"):
                    owners.setdefault(name, []).append(part.__name__)
        self.assertEqual({n: o for n, o in owners.items() if len(o) > 1}, {})


class Verdict(unittest.TestCase):
    def test_a_run_that_checked_no_id_fails(self):
        # no server started (a library built for another PostgreSQL): such
        # a run said "no violation" before, and its mutants all survived
        world = types.SimpleNamespace(checked={})
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertFalse(ran(world))
        world.checked[("next", "idgen")] = 3
        self.assertTrue(ran(world))


class WaysOut(unittest.TestCase):
    def test_generation_resumes_at_the_restart(self):
        resumed_at_restart(None, "here")
        resumed_at_restart("system clock is 12000 ms behind the time of the newest idgen ID", "here")
        with self.assertRaisesRegex(Violation, "not resumed"):
            resumed_at_restart('database "db1" holds idgen IDs of another cluster (system identifier 1)', "here")
        with self.assertRaisesRegex(Violation, "not resumed"):
            resumed_at_restart('"idgen_hwm" is unreadable: line 3 ...', "here")

    def test_resumed_past_the_time_named(self):
        resumed_past(1700000000000, 1700000000005, "js53", "here")
        with self.assertRaisesRegex(Violation, "resume time ignored.*js53"):
            resumed_past(1699999999000, 1700000000000, "js53", "here")

    def test_a_refusal_reaches_the_held_session(self):
        other = 'database "db1" holds idgen IDs of another cluster (system identifier 1)'
        refusal_reached_held([], other, "here")
        refusal_reached_held([5, 6], None, "here")
        refusal_reached_held([5, 6], "system clock is 12000 ms behind the time of the newest idgen ID", "here")
        with self.assertRaisesRegex(Violation, "refusal not sticky.*2 IDs"):
            refusal_reached_held([5, 6], other, "here")
