"""The invariants beyond one definition's uniqueness and decoding (world.py
checks those): what docs/guarantees.md and docs/outbox.md promise across a
server's runs, of its outbox cursor, and of idgen_stats.

- Resuming above (Frontier): after a restart, a crash, or a promotion of a
  synchronous standby with its primary's node id, a server generates above
  every ID its lineage handed out before in the layout, also after
  idgen.epoch or idgen.node_bits changed in between; a leasing server
  (a promoted standby of a leasing one included) above those of every
  node id; moving the epoch later
  is refused until the clock passes those IDs.  Within one run backends
  interleave worker ids, so only IDs of earlier runs bound new ones.
- The outbox poller (Poller): idgen_horizon() never decreases along a
  lineage (restarts, crashes, clock steps, promotions of synchronous
  standbys), nor does idgen_horizon(name) of a layout other than idgen's
  own (NAMED_HORIZON: idgen's layout has a floor of its own that may hide
  what transactions publish), and a poller following docs/outbox.md reads
  every committed row of an outbox table exactly once.
- Counts (stats_mismatch): idgen_stats.ids per layout equals what the
  sessions that ended cleanly were handed since idgen_stats_reset().
"""

import copy

# A built-in layout, so that no op drops or redefines it under the poller.
NAMED_HORIZON = "twitter"

class Violation(Exception):
    def __init__(self, kind, layout, message):
        super().__init__("%s: %s" % (kind, message))
        self.kind = kind
        self.layout = layout
        self.message = message
        self.drill = None       # the drill whose op found it, if any (World.run)


class Frontier:
    """The largest ID a lineage handed out, per layout group (a definition,
    or idgen's own layout under every idgen.epoch and node_bits), node id
    and node_bits: of the server's earlier runs, and of the current one."""

    def __init__(self):
        self.before = {}    # (group, node, bits) -> largest ID of earlier runs
        self.now = {}       # the same, this run

    def copy(self):
        return copy.deepcopy(self)

    def new_run(self):
        for key, top in self.now.items():
            self.before[key] = max(self.before.get(key, top), top)
        self.now = {}

    def include(self, other):
        """A promoted synchronous standby: every ID its primary handed out
        (its marks reached the standby before the IDs were used) is from an
        earlier run of this lineage."""
        for part in (other.before, other.now):
            for key, top in part.items():
                self.before[key] = max(self.before.get(key, top), top)

    def bound(self, group, node, bits, bits_matter, any_node=False):
        """The largest ID of earlier runs that IDs of node under bits must
        stay above: the same node id's; with other node_bits, every node
        id's where node_bits places the machine fields (marks of other
        node_bits bind, docs/guarantees.md); with any_node (a leased node
        id), every node id's: a leasing server starts a node id new to it
        above every mark it has (docs/node-ids.md)."""
        top, why = None, None
        for (g, n, b), value in self.before.items():
            if g == group and (n == node or any_node or (bits_matter and b != bits)) and \
                    (top is None or value > top):
                top, why = value, (n, b)
        return top, why

    def add(self, group, node, bits, top):
        key = (group, node, bits)
        self.now[key] = max(self.now.get(key, top), top)


class Poller:
    """An outbox poller of docs/outbox.md: h := idgen_horizon(); read
    [cursor, h) in a later statement; cursor := h."""

    def __init__(self):
        self.cursor = 0
        self.highest = None     # the largest horizon it was given
        self.named = None       # the largest of NAMED_HORIZON's
        self.named_switched = False
        self.read = {}          # id -> step it was read at
        self.polls = 0
        self.switched = False   # to a promoted standby, its horizon not yet past the cursor

    def copy(self):
        return copy.deepcopy(self)

    def switch(self):
        """The poller follows its server's promoted synchronous standby:
        docs/outbox.md has it keep its cursor until the new primary's
        horizon passes it (no row may be written below it meanwhile)."""
        other = self.copy()
        other.switched = other.named_switched = True
        return other

    def waits(self, h):
        """Keeping the cursor after a switch, while the horizon is below it."""
        below = self.highest is not None and h < self.highest
        if below and self.switched:
            return True
        self.switched = False
        return False

    def take_horizon(self, h, step, where):
        if self.highest is not None and h < self.highest:
            raise Violation("horizon went back", "idgen",
                            "%s: idgen_horizon() returned %d at step %d, below %d returned before"
                            " on this server or the one it was promoted from (%d IDs below)"
                            % (where, h, step, self.highest, self.highest - h))
        self.highest = h if self.highest is None else max(self.highest, h)

    def take_named(self, h, step, where):
        """idgen_horizon(NAMED_HORIZON), taken after idgen_horizon(): the
        same rule, in that layout's IDs."""
        if self.named is not None and h < self.named:
            if self.named_switched:
                return
            raise Violation("horizon went back", NAMED_HORIZON,
                            "%s: idgen_horizon('%s') returned %d at step %d, below %d returned"
                            " before on this server or the one it was promoted from"
                            % (where, NAMED_HORIZON, h, step, self.named))
        self.named_switched = False
        self.named = h if self.named is None else max(self.named, h)

    def take_rows(self, ids, h, step, where):
        for ident in ids:
            if ident in self.read:
                raise Violation("row read twice", "idgen",
                                "%s: outbox row %d read again at step %d (cursor %d, horizon %d);"
                                " first read at step %d" % (where, ident, step, self.cursor, h,
                                                            self.read[ident]))
            self.read[ident] = step
        self.cursor = h
        self.polls += 1

    def check_missed(self, below, step, where):
        """below: every row of the table under the cursor, now."""
        missed = [i for i in below if i not in self.read]
        if missed:
            raise Violation("row missed", "idgen",
                            "%s: %d committed outbox rows below the cursor %d were never read by"
                            " step %d, e.g. %s" % (where, len(missed), self.cursor, step,
                                                   ", ".join(map(str, sorted(missed)[:5]))))


def stats_mismatch(expected, counted, unknown):
    """The first layout whose idgen_stats.ids differs from the IDs handed
    out, as (layout, expected, counted), or None.  unknown: layouts where a
    call failed, so some IDs may have been counted and never handed out."""
    for name in sorted(set(expected) | set(counted)):
        if name in unknown:
            continue
        if expected.get(name, 0) != counted.get(name, 0):
            return name, expected.get(name, 0), counted.get(name, 0)
    return None
