"""More tests of the checker's invariants on values given by hand, run
with selftest.py's (scripts/chaos --self-test): the clock's hint, the
marks folded at startup, idgen_check_nodes() and idgen_stats' times."""

import unittest

from answers import (FRESH_NODE, NO_FRESH_NODE, clock_hint_told, folded_passed_only, nodes_judged,
                     stats_times_told, time_end_ms)
from invariants import Violation
from layouts import builtin, default_layout, epoch_date_ms

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
        want, columns = {"a": False, "b": True}, {"a": (1, 4, "2024-01-01", False, "setting"),
                                                  "b": (None, 4, "2024-01-01", False, "setting")}
        names = {"a": "A", "b": "B"}
        good = [("a", None, 1, 4, "2024-01-01", False, "setting"), ("b", "node id unset", None, 4, None, False, None)]
        nodes_judged(good, want, columns, names, "here")
        for bad in ([good[0], ("b", None) + good[1][2:]], [("a", "clash") + good[0][2:], good[1]],
                    [("a", None, 1, 5, "2024-01-01", False, "setting"), good[1]], good[:1]):
            self.assertRaises(Violation, nodes_judged, bad, want, columns, names, "here")

    def test_stats_times_are_the_layouts(self):
        idgen = default_layout(epoch_date_ms("2024-01-01"), 4)
        layouts = {"idgen": idgen, "twitter": builtin("twitter")}
        left = time_end_ms(idgen) - NOW
        self.assertEqual(time_end_ms(idgen), epoch_date_ms("2024-01-01") + (1 << 41))
        stats_times_told([("idgen", 1, left - 900, NOW + 990, 990), ("twitter", 2, 0, None, None)], layouts,
                         (NOW, NOW + 40000), "here")
        for row in (("idgen", 1, left + 3600000, None, None), ("idgen", 1, left, NOW + 990, 40000)):
            with self.assertRaisesRegex(Violation, "stats times"):
                stats_times_told([row], layouts, (NOW, NOW + 40000), "here")
