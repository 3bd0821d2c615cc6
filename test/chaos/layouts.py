"""Layouts as the checker sees them: how an ID decodes, which definition it
belongs to for the uniqueness invariant, and the layouts the ops define.

The decoder is written from README's description of layouts (fields from the
most significant down below a zero sign bit, widths in bits or decimal
digits), not from idgen's C code, so that it is an independent reading.
"""

import datetime

HWM_STEP_MS = 1000      # marks run this far ahead of the newest tick (README, Guarantees)

# name: (epoch Unix ms, tick ms, radix, fields, widths); README "Built-in layouts"
BUILTIN = {
    "twitter": (1288834974657, 1, 2, ("time", "node", "worker", "sequence"), (41, 5, 5, 12)),
    "discord": (1420070400000, 1, 2, ("time", "node", "worker", "sequence"), (41, 5, 5, 12)),
    "sonyflake": (1409529600000, 10, 2, ("time", "sequence", "worker"), (39, 8, 16)),
    "instagram": (1314220021721, 1, 2, ("time", "shard", "sequence"), (40, 13, 10)),
    "redis-borrow": (1420070400000, 1, 2, ("time", "node", "sequence", "random"), (42, 2, 9, 10)),
    "decimal19": (-136040000000, 1, 10, ("time", "sequence", "node", "shard"), (13, 1, 2, 3)),
    "js53": (1704067200000, 1, 2, ("time", "node", "worker", "sequence"), (40, 4, 3, 6)),
    "pgedge": (1672531200000, 1, 2, ("time", "node", "sequence"), (41, 10, 12)),
}

# Families of layouts the ops define, each one a way idgen plans generation
# differently: with or without a worker field (own state per backend, or
# one state per layout under a lock), small sequences that borrow ahead of
# the clock at once, long ticks, decimal digits, the sequence above other
# fields, random bits, a shard standing in for the node, a node field too
# narrow for most servers' node ids.
FAMILIES = [
    (("time", "node", "sequence"), (41, 10, 12), "1 millisecond", 2),
    (("time", "node", "sequence"), (45, 6, 4), "1 millisecond", 2),
    (("time", "node", "worker", "sequence"), (41, 5, 5, 12), "1 millisecond", 2),
    (("time", "node", "worker", "sequence"), (43, 4, 4, 6), "1 millisecond", 2),
    (("time", "worker", "sequence"), (41, 10, 12), "1 millisecond", 2),
    (("time", "shard", "sequence"), (41, 12, 10), "1 millisecond", 2),
    (("time", "node", "sequence"), (13, 2, 4), "1 millisecond", 10),
    (("time", "node", "worker", "sequence"), (38, 4, 6, 8), "10 milliseconds", 2),
    (("time", "sequence", "node"), (41, 12, 10), "1 millisecond", 2),
    (("time", "node", "sequence", "random"), (41, 6, 8, 8), "1 millisecond", 2),
    # node ids 0 and 1 only: servers with others must refuse it, every time
    (("time", "node", "sequence"), (41, 1, 12), "1 millisecond", 2),
    # no node field, and a worker field of as many bits as node_bits 5:
    # one worker id a node there, two under 4, none (refused) under 6 and 8
    (("time", "worker", "sequence"), (41, 5, 17), "1 millisecond", 2),
    # a time field of 8.192 s, 16 IDs a millisecond: the time_end drill
    # defines it to end seconds later (never drawn: under EPOCHS it has ended)
    (("time", "node", "sequence"), (13, 7, 4), "1 millisecond", 2),
]
ENDING = len(FAMILIES) - 1
EPOCHS = ["2016-01-01", "2020-01-01", "2022-06-15", "2024-01-01", "2025-03-01"]
NAMES = ["alpha", "beta", "gamma"]


class Layout:
    """A layout definition: enough to decode its IDs and to name it."""

    def __init__(self, name, epoch_ms, tick_ms, radix, fields, widths):
        self.name = name
        self.epoch_ms = int(epoch_ms)
        self.tick_ms = int(tick_ms)
        self.radix = int(radix)
        self.fields = tuple(fields)
        self.widths = tuple(int(w) for w in widths)
        self.default = False
        self.size, self.scale = {}, {}
        scale = 1
        for field, width in reversed(list(zip(self.fields, self.widths))):
            if field == "time":
                self.scale["time"] = scale
                break
            self.size[field] = self.radix ** width
            self.scale[field] = scale
            scale *= self.size[field]

    def time_end_ms(self):
        """When the time field runs out: its values, as many as the field
        and a positive bigint hold, ticks after the epoch."""
        width = self.widths[self.fields.index("time")]
        return self.epoch_ms + min(self.radix ** width, ((1 << 63) - 1) // self.scale["time"] + 1) * self.tick_ms

    def has(self, field):
        return field in self.fields

    def decode(self, ident):
        """Field values of an ID, time as the Unix ms its tick starts at."""
        values = {f: (ident // self.scale[f]) % self.size[f] for f in self.size}
        values["time"] = self.epoch_ms + (ident // self.scale["time"]) * self.tick_ms
        return values

    def columns(self, ident):
        """idgen_decode()'s columns as docs/design.md maps a layout's fields:
        node_id the node field, worker_id the worker field, a shard field
        in the one left free (node_id first), sequence the sequence field;
        NULL for what the layout lacks.  A field of no width may read
        either way (None here: not compared)."""
        values = self.decode(ident)

        def column(field):
            if not self.has(field):
                return "NULL"
            return values[field] if self.widths[self.fields.index(field)] else None
        node, worker = column("node"), column("worker")
        if self.has("shard"):
            if node == "NULL":
                node = column("shard")
            elif worker == "NULL":
                worker = column("shard")
        return values["time"], node, worker, column("sequence")

    def span_ms(self, ms):
        """idgen_span() of ms whole milliseconds: the IDs its whole ticks hold."""
        return (ms // self.tick_ms) * self.scale["time"]

    def depends_on_node_bits(self):
        """Without a node field, the node id lands in a range of worker ids
        or shards whose size is set by idgen.node_bits (README, Generating
        in other layouts)."""
        return not self.has("node")

    def key(self, node_bits):
        """The definition the uniqueness invariant is counted in."""
        base = (self.name, self.epoch_ms, self.tick_ms, self.radix, self.fields, self.widths)
        return base + ((node_bits,) if self.depends_on_node_bits() else ())

    def group(self):
        """What a server resumes above after a restart (lineage.Frontier):
        the definition, or idgen's own layout under any idgen.epoch and
        node_bits, whose time field is always its top 41 bits."""
        if self.default:
            return ("idgen",)
        return (self.name, self.epoch_ms, self.tick_ms, self.radix, self.fields, self.widths)

    def bits_matter(self):
        """Does idgen.node_bits place this server's IDs in the layout?"""
        return self.default or self.depends_on_node_bits()

    def blocks_allowed(self):
        return self.fields[-1] == "sequence"

    def describe(self):
        return "%s(epoch %d, %s, %s, tick %d ms, radix %d)" % (
            self.name, self.epoch_ms, ",".join(self.fields),
            ",".join(map(str, self.widths)), self.tick_ms, self.radix)


def default_layout(epoch_ms, node_bits):
    """idgen's own layout under idgen.epoch and idgen.node_bits."""
    layout = Layout("idgen", epoch_ms, 1, 2, ("time", "node", "worker", "sequence"),
                    (41, node_bits, 10 - node_bits, 12))
    layout.default = True
    return layout


def epoch_date_ms(date):
    """idgen.epoch's date (YYYY-MM-DD) in Unix ms."""
    y, m, d = (int(x) for x in date.split("-"))
    return int(datetime.datetime(y, m, d, tzinfo=datetime.timezone.utc).timestamp() * 1000)


def builtin(name):
    epoch, tick, radix, fields, widths = BUILTIN[name]
    return Layout(name, epoch, tick, radix, fields, widths)


def shard_range(layout, node_id, node_bits):
    """The shards a server makes IDs of, as (first, count): the whole
    field where a node or worker field tells servers apart, else the
    node's share under idgen.node_bits (docs/design.md, Layouts)."""
    size = layout.size["shard"]
    if layout.has("node") or layout.has("worker"):
        return 0, size
    per_node = size >> node_bits
    return node_id * per_node, per_node


def node_problem(layout, values, node_id, node_bits):
    """Why the fields do not carry this server's node id, or None."""
    nodes = 1 << node_bits
    if layout.has("node"):
        if values["node"] != node_id:
            return "node field %d, server's node id %d" % (values["node"], node_id)
        return None
    if layout.has("worker"):
        field, per_node = "worker", layout.size["worker"] // nodes
        lo = node_id * per_node
    else:
        field = "shard"
        lo, per_node = shard_range(layout, node_id, node_bits)
    if not lo <= values[field] < lo + per_node:
        return "%s field %d, outside node %d's range %d-%d (node_bits %d)" % (
            field, values[field], node_id, lo, lo + per_node - 1, node_bits)
    return None
