"""The space the model draws ops from: the servers' settings and node ids,
the weights of the random ops, and the drills (ops.py, drills.py and
lease_drills.py draw from them; the world reads some too)."""

DBS = ["db1", "db2", "db3"]
CURRENT = "current"         # the extension's default_version (recorded cases may name one)
MAX_CLUSTERS = 5
# Node ids set by hand; the registry holds them as leased forever, so that a
# leasing server (of node_bits 4) gets one of LEASE_POOL.  node_bits is kept
# >= 4, so every one of them fits.
NODE_IDS = range(12)
LEASE_POOL = range(12, 16)
LEASE_S = 5                 # idgen.node_lease_s: its minimum, to keep drills short
SETTING_CHOICES = {
    "epoch": ["2024-01-01", "2024-01-01", "2023-12-31", "2023-01-01", "2024-03-01"],
    # 8 leaves 4 worker ids a node: a crowd (choose_burst) shares one
    "node_bits": [4, 4, 5, 6, 8],
    "max_lead_ms": [1000, 1000, 0, 20, 5000],
    "max_clock_regression_ms": [10000, 10000, 3000, 30000, 0],
}
# Clock offsets: small steps back are ridden out, large ones refused;
# forward steps are remembered after the clock is set right again.
OFFSETS = [0, 0, 0, -300, -1500, -4000, -8000, -40000, 2000, 9000]
WEIGHTS = {
    "burst": 40, "define": 10, "redefine": 9, "drop": 3, "clock": 9, "restart": 6,
    "createdb": 2, "dropdb": 1, "ext_recreate": 2, "ext_update": 3,
    "standby": 2, "promote": 2, "dump_restore": 1.5, "retire": 1, "outbox": 5, "drill": 3,
    "standby_restart": 2,
}
# Node ids at the edges: the largest node_bits allows, and the size of a
# layout's node field (FAMILIES: 4, 5 and 6 bits), which that layout must
# refuse.  Above NODE_IDS and LEASE_POOL, so no other server has them.
EDGE_NODES = [(5, 16), (5, 31), (6, 32), (6, 63), (7, 64), (7, 127)]
# A burst with more clients than a server has worker ids, now and then.
CROWD = 3
# The crowd drill's sessions: more than js53's 8 worker ids, and than the 4
# a node has under idgen.node_bits = 8.
CROWD_SIZE = 12
# Where in a server's range of shards a call's shard argument lies (Bursts.
# resolve_shard): its edges, and one past each, which idgen must refuse.
SHARD_AT = ["first", "middle", "last", "past", "past", "before"]
# idgen.node_id's own range (README): PostgreSQL rejects a value past it
MAX_NODE_SETTING = 1023
# An outbox's commits held between their commit record and their
# visibility (a synchronous standby's receiver stopped), now and then.
HOLD_MS = [300, 700]
# After a burst, now and then, idgen_adopt() on a table whose keys
# lie where adopts.KEY_AT says: ahead of the clock twice as often, which a
# margin counted the wrong way admits.
ADOPT_AFTER = 0.12
ADOPT_KEYS = ["sequence", "far_below", "below", "inside", "ahead", "ahead", "far_ahead"]
# Families a held session crosses in a random redefinition: both with a
# worker field (a state of its own), the first of 64 IDs a tick.
THROUGH_FAMILIES = [3, 2]
# Drills: the cases docs/guarantees.md names, as short op sequences that
# reach them for sure.  Each run has every one early (in an order of its
# seed) and more now and then; the random ops around them find the rest.
DRILLS = ["failover", "node_bits", "epoch_later", "churn", "clock_back", "epoch_twins", "refused",
          "crash", "time_end", "crowd"]
# Those of 1.5's protections, after the others, whose order (and so the
# step each mutant is killed at) stays what it was for every seed.
LATER_DRILLS = ["full", "lost_hwm", "move", "states"]
# Those of node id leases (issue #31), after those.
LEASE_DRILLS = ["outage", "frozen", "clone", "release"]
# The registry failing (issue #39), after all the others, in this order: a
# failover or a restore leaves every server that leases anew refusing for a
# minute, and
# their place keeps every earlier drill where it was for every seed.
REGISTRY_DRILLS = ["registry_stall", "registry_failover", "registry_restore", "registry_handover"]
ALL_DRILLS = DRILLS + LATER_DRILLS + LEASE_DRILLS + REGISTRY_DRILLS
NARROW = 10                     # the family whose node field holds node ids 0 and 1
WIDTH_TWINS = [0, 1]            # families alike but for their widths, without a worker field
# A standby's clock: often right, sometimes behind its primary's.
STANDBY_OFFSETS = [0, 0, 0, -1500, -4000]
# a day in ms: a clock set as far ahead as idgen.epoch moved later
DAY_MS = 86400000
# The table of marks is small, as full tables are a class of their own
# (issue #28): idgen 1.4's was fixed at 64 entries.
MAX_MARKS = 64
DEFAULT_MAX_MARKS = 4096        # idgen.max_marks' default (README)
# Layouts the full drill defines at once: more than the table of marks holds.
FILL_LAYOUTS = 70
FILL_FAMILY = 4             # no node field: node_bits places the node id
FILL_BITS = [4, 5, 6, 7, 8]     # 8 leaves 4 worker ids a node: bursts share one
# Layouts the states drill defines: more than the server's 1024 shared
# layout states; of a family with one state per layout, 16 IDs a tick,
# whose node field holds node ids below 64.
STATE_LAYOUTS = 1100
STATE_FAMILY = 1
STATE_NODE_BITS = 6
# A schema whose operators shadow pg_catalog's, first in the search_path of
# some sessions (hostile.py): of a burst's clients, and of the sessions that
# define or drop layouts, these shares.
HOSTILE_SCHEMA = "chaos_hostile"
HOSTILE_PATH = HOSTILE_SCHEMA + ",pg_catalog,public"
HOSTILE_CLIENTS = 0.25
HOSTILE_DEFINES = 0.5
# Of a burst's clients, this share makes each call in a transaction of its
# own, inside a savepoint released, then committed or rolled back.
TX_CLIENTS = 0.25
# Of the redefinitions without a held session (the drills' too), this share
# races another name's, defined in a transaction of its own at once
# (redefines.py).
RACING = 0.5
# An outbox transaction's end (outbox.write_outbox): its rows made in a
# savepoint, released, then the transaction rolled back.
RELEASED = "RELEASE, ROLLBACK"
# A role without privileges, made with every database of a server
# (hostile.py), and the share of bursts in which a client of that role reads
# idgen_workers and idgen_horizon_holders while the others generate.
STRANGER = "chaos_stranger"
SPY_BURSTS = 0.2
# outbox ops that first fill the free backend slots with held IDs (Outbox.crowd_horizon)
CROWDED_OUTBOX = 0.3
# Of the calls drawn, this share is a block past what one may be
# (Choices.edge_block).
EDGE_BLOCKS = 0.2
# Of the random bursts and outbox ops on a polled quiet primary, this share
# is followed by its restart with the clock back (Forms.polled_restart).
POLLED_RESTARTS = 0.3
# Before this share of the definitions and redefinitions drawn (the
# drills' too), the session tries one with each flaw idgen must refuse
# (flaws.py).
FLAWED_DEFINES = 0.3
# Before this share of the restarts drawn (the drills' too), ALTER SYSTEM
# sets each setting to the values at the edges of its range and past them
# (flaws.py).
TRIED_SETTINGS = 0.3
# Before this share of the fast restarts of primaries that do not lease
# (not where the clock goes back), the server starts once with a flawed
# setting in its configuration file or its mark file garbled (flaws.py).
FLAWED_STARTS = 0.3
# Before this share of the random ones (not a drill's), a DBA raises the
# marks past the newest ID, as README says to after rows copied in that
# idgen cannot see (Restores.resume_before_restart).
RESUMED_RESTARTS = 0.5
# After this share of the new servers that do not lease, a fast restart:
# one that starts once with a flawed setting in its configuration file or
# its mark file garbled (flaws.py), or after a DBA raised the marks past
# the newest ID, as README says to after rows copied in that idgen cannot
# see (Restores.resume_before_restart), or both.
RESTARTED_CLUSTERS = 0.8
