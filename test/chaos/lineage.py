"""What a server's line of succession has handed out and seen, which later
runs are checked against: a restart, a crash or the promotion of a
synchronous standby starts a new run of the same lineage."""

import copy


class Lineage:
    """What a server and the standbys promoted in its place have seen: the
    highest clock reading (wall + offset), the longest lead allowed, the
    IDs they handed out that later runs must stay above, and the latest
    time such an ID decodes to (the end of its tick): of any node id, and
    of each (newest_of: a released lease's mark covers its own node id's)."""

    def __init__(self, hi=0.0, lead=0, frontier=None, newest=0, newest_of=None):
        self.hi = hi
        self.lead = lead
        self.frontier = frontier or Frontier()
        self.newest = newest
        self.newest_of = dict(newest_of or {})


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

