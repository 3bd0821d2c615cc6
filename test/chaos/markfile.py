"""What a server's idgen_hwm says of the marks that bind every node id
(docs/design.md, High-water marks): lines without a node id, the `*`
overflow mark's and the default layout's, and lines written under other
node_bits.  Read from the file, which idgen replaces whole, so a read
sees one version of it."""

import os

from diagnostics import clock_hint_told, epoch_named, folded_passed_only
from layouts import epoch_date_ms
from clients import now_ms
from hostile import idgen_dbs

OVERFLOW = "*"
DEFAULT = "idgen"


def read_marks(cl):
    """[(name, epoch_ms, mark_ms, node or None, node_bits or None)], or
    None when there is no file to read."""
    try:
        with open(os.path.join(cl.data, "idgen_hwm")) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    marks = []
    for line in lines:
        f = line.split()
        if len(f) in (3, 5) and not line.startswith("#"):
            node = (int(f[3]), int(f[4])) if len(f) == 5 else (None, None)
            marks.append((f[0], int(f[1]), int(f[2])) + node)
    return marks


def highest(marks, unbound_only=False):
    """{(name, epoch_ms): the highest mark} of the lines, or of those that
    bind every node id."""
    top = {}
    for m in marks:
        if m[3] is None or not unbound_only:
            top[m[:2]] = max(top.get(m[:2], m[2]), m[2])
    return top


def shared_bound(marks, layout, bits, default_epoch_ms, folded_ms):
    """The highest mark that binds a node id new to layout (marks.c,
    marks_binds and marks_attach's shared floor), or None.  The default
    layout's marks move with idgen.epoch when the server starts; marks of
    one node id at or below folded_ms count as folded at its start into
    marks of every node id (the default layout's into its own, the others'
    into `*`), as the file may not be written again yet."""
    def binds(m):
        if m[3] is not None and m[2] <= folded_ms:
            return m[0] != DEFAULT or layout == DEFAULT
        return m[0] in (layout, OVERFLOW) and (m[3] is None or m[4] != bits)
    bound = [m[2] + (default_epoch_ms - m[1] if m[0] == DEFAULT else 0) for m in marks if binds(m)]
    return max(bound) if bound else None


# a server's marks table counted no shared mark since it started
NO_MARK_SHARED = "SELECT overflows = 0 FROM idgen_capacity WHERE name = 'marks'"


class MarkFile:
    def before_restart(self, c):
        """What restarted() compares with: idgen_hwm's marks, idgen.epoch."""
        cl = self.clusters[c]
        return read_marks(cl), cl.settings.get("epoch")

    def restarted(self, c, before, flawed=False):
        """Once a server restarted: its marks before, to compare with once
        idgen next writes its file (check_folds); and whether idgen.epoch
        moved later than marks of idgen's layout it kept, which its
        refusals must then name (check_epoch_named).  Neither after a
        flawed start, which may have rewritten the file between."""
        cl = self.clusters[c]
        marks, epoch = before
        start = cl.idgen_clock_ms()
        self.epoch_later_run.discard(c)
        self.fold_pending.pop(c, None)
        if flawed:
            return
        self.fold_pending[c] = (cl, marks, now_ms(), start)
        if not epoch or not cl.settings.get("epoch"):
            return
        new = epoch_date_ms(cl.settings["epoch"])
        # each mark moved from the epoch it was written under
        if new > epoch_date_ms(epoch) and any(m[0] == DEFAULT and new > m[1] and m[2] + new - m[1] > start
                                              for m in marks or []):
            self.epoch_later_run.add(c)

    def check_epoch_named(self, res):
        """docs/guarantees.md, idgen.epoch changed between restarts: moving
        it later is refused, naming idgen.epoch, until the clock passes the
        IDs issued before; not as a clock that fell behind."""
        if res["c"] in self.epoch_later_run and (res["call"][1] or DEFAULT) == DEFAULT:
            epoch_named(res["error"][1], "%s/%s %s" % (res["c"], res["db"], res["text"]))

    def raising_marks(self, c):
        """idgen_resume_after() is about to raise c's marks past any clock,
        into the file: check_folds, which judges the first write after a
        start as that start's folds, would judge the raise instead."""
        self.fold_pending.pop(c, None)

    def check_folds(self):
        """After a restart, once idgen wrote its file again: marks that bind
        every node id rose only by the marks the clock had passed at
        startup (marks_load.c folds those, and only those); the others stay
        per layout and node id, so other layouts and node ids resume at
        once (docs/guarantees.md, One layout borrowed far ahead, then a
        restart).  Not where a full table shared marks since."""
        for c, (cl, before, at, start) in sorted(self.fold_pending.items()):
            try:
                written = os.path.getmtime(os.path.join(cl.data, "idgen_hwm")) * 1000.0 > at
            except OSError:
                written = True
            if self.clusters.get(c) is not cl or not self.live(c) or before is None:
                del self.fold_pending[c]
            elif written:
                del self.fold_pending[c]
                dbs = idgen_dbs(cl, current=True)
                # the overflow mark only: the default layout's of every node id
                # also rises at startup to where the horizon stood in an
                # earlier epoch (marks_bind_default_layout)
                after = {k: m for k, m in highest(read_marks(cl) or [], True).items() if k[0] == OVERFLOW}
                if dbs and cl.query(dbs[0], NO_MARK_SHARED) == [(True,)]:
                    folded_passed_only(highest(before), after, start,
                                       "%s, restarted, at step %d" % (c, self.step))

    def check_clock_hint(self, res, view, behind):
        """A refusal for the clock names a node id that never generated as
        the way out exactly when no mark of every node id holds the layout
        back (docs/troubleshooting.md; step.c)."""
        if view["leased"] or not self.live(res["c"]):
            return
        marks = read_marks(self.clusters[res["c"]])
        if marks is None:
            return
        cl = self.clusters[res["c"]]
        layout = res["call"][1] or DEFAULT
        # folded at the server's start, at least; at most, at the highest
        # clock it ran under (a backend's crash starts idgen anew too)
        shared = [shared_bound(marks, layout, view["bits"], view["epoch_ms"], folded)
                  for folded in (cl.start_clock_ms, self.lineage[res["c"]].hi)]
        # a server made from a base backup may hold replayed marks its file
        # does not have yet: there the file can only show too few
        clock_hint_told(res["error"][1], shared, behind, view, "%s/%s %s" % (res["c"], res["db"], res["text"]),
                        only_ahead=cl.from_backup)
