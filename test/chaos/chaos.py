#!/usr/bin/python3
"""Randomized, model-based checking of idgen's guarantees (scripts/chaos).

Starts its own clusters and drives what DBAs and applications do to them,
chosen from a seed: databases created and dropped; layouts defined, dropped
and defined again (the same names in several databases, other epochs and
widths, with and without a worker field); many concurrent clients
generating through every function (idgen_next in every layout, built-ins
included, idgen_next_block, idgen_next_batch, objectid(), idgen_uuidv7());
restarts with changed idgen.epoch, node_bits, node_id, max_lead_ms and
max_clock_regression_ms; SIGKILL of a backend and of the postmaster; clock
steps back and forward through idgen.clock_offset_ms; ALTER EXTENSION
UPDATE from 1.0, DROP and CREATE EXTENSION; standbys promoted (synchronous
with the primary's node id, asynchronous with their own); pg_dump and
restore into a new node, or into a cluster of its own initdb keeping the
node id; idgen_hwm deleted after a CHECKPOINT; the table of marks filled
(idgen.max_marks = 64); outbox writers and a poller on idgen_horizon();
drills that reach the cases docs/guarantees.md names early in every run.
After every step it checks the invariants of invariants.py over
every ID handed out during the run.

The ops are a function of the seed; what the clients' threads and the
servers do at the same time is not, so a seed reproduces the ops, not
always the interleaving.  On a violation it prints the seed and the
violation, shrinks the ops to a short list that still fails (replaying
subsets, delta debugging, within --shrink-minutes), prints it, saves it as
JSON for --replay, and exits 1.
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cluster import Pg, user_dir   # noqa: E402
from invariants import Violation   # noqa: E402
from ops import Model, describe    # noqa: E402
from world import World, make_template   # noqa: E402

# CI runs two new seeds each time, never a fixed one: a kill that only a
# seed tuned to the drills finds is no kill (docs/chaos.md).  A found case
# is replayed from its saved ops (test/chaos/cases).
CI_MINUTES = (2.0, 1.5)
LATE_FIRST = " --late-first"     # how the seed line and the result say it
ID_KINDS = {"repeated ID": "id", "wrong time": "id", "wrong node": "id", "wrong shard": "id",
            "resumed below": "id", "out of order": "id"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, help="seed of the ops (default: random)")
    p.add_argument("--seeds", help="several seeds, comma-separated, --minutes each")
    p.add_argument("--minutes", type=float, default=5, help="run time, shrinking not included")
    p.add_argument("--clients", type=int, default=4, help="concurrent clients per burst")
    p.add_argument("--databases", type=int, default=3, choices=(1, 2, 3),
                   help="databases per server at most (1 keeps every layout name to one database)")
    p.add_argument("--pg-config", default=shutil.which("pg_config") or "pg_config")
    p.add_argument("--shrink-minutes", type=float, default=5,
                   help="time bound for shrinking (0: do not shrink)")
    p.add_argument("--ci", action="store_true",
                   help="a random seed (--seed sets it) for %.1f minutes, then another for %.1f"
                   % CI_MINUTES)
    p.add_argument("--late-first", action="store_true",
                   help="the drills that come last come first (as for the second seed of --ci"
                        " and --seeds, so that a short run reaches every drill)")
    p.add_argument("--whole-deck", action="store_true",
                   help="end once every drill has run, --minutes at most (scripts/mutants --rates)")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="stop after N steps (scripts/mutants: the unmutated code up to the step that"
                        " killed a mutant)")
    p.add_argument("--fail-fast", action="store_true",
                   help="stop at the first seed that fails (scripts/mutants)")
    p.add_argument("--first-only", action="store_true", help="with --ci: only its first seed")
    p.add_argument("--replay", metavar="FILE", help="run the ops saved by a failing run")
    p.add_argument("--verbose", action="store_true", help="print every op")
    p.add_argument("--ignore", default="", metavar="KIND,...",
                   help="violations of these kinds (e.g. 'stats count'; 'resumed below@move':"
                        " in that drill's ops only) are counted, not reported: to reach other"
                        " bugs of an old version")
    p.add_argument("--self-test", action="store_true",
                   help="test the checker itself (the shrinker), with no server")
    return p.parse_args()


def signature(v):
    """Which failures count as the same when shrinking: a repeat, a wrong
    time or a wrong node in one layout are one bug seen from two sides."""
    return (ID_KINDS.get(v.kind, v.kind), v.layout)


def run_ops(pg, root, template, ops, deadline=None, verbose=False, world_out=None, ignore=()):
    """Runs ops in a fresh world; returns (violation or None, steps run)."""
    world = World(pg, root, template, ignore)
    if world_out is not None:
        world_out.append(world)
    steps = 0
    try:
        for op in ops:
            if deadline is not None and time.time() > deadline:
                break
            started = time.time()
            steps += 1
            world.run(op)
            if verbose:
                print("  step %d (%.1f s): %s" % (steps, time.time() - started, describe(op)),
                      flush=True)
        return None, steps
    except Violation as v:
        return v, steps
    finally:
        world.close()


def ddmin(ops, reproduces, deadline):
    """Delta debugging: drop chunks of the ops while the rest still fails;
    the last op, where the violation showed, is always kept."""
    head, last = ops[:-1], ops[-1:]
    n = 2
    while len(head) >= 1 and time.time() < deadline:
        chunk = max(1, len(head) // n)
        reduced = False
        for start in range(0, len(head), chunk):
            if time.time() >= deadline:
                break
            rest = head[:start] + head[start + chunk:]
            if reproduces(rest + last):
                head, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(head), n * 2)
    return head + last


def shrink(pg, root, template, ops, target, minutes):
    deadline = time.time() + minutes * 60
    tries = [0]

    def reproduces(candidate):
        tries[0] += 1
        sub = os.path.join(root, "replay%d" % tries[0])
        v, _ = run_ops(pg, sub, template, candidate)
        shutil.rmtree(sub, ignore_errors=True)
        ok = v is not None and signature(v) == target
        print("  shrink try %d: %d ops, %s" % (tries[0], len(candidate),
                                              "fails" if ok else "passes"), flush=True)
        return ok

    small = coarse(ops, reproduces, deadline)
    small = ddmin(small, reproduces, deadline)
    return small, tries[0]


def servers(op):
    found = {op.get(k) for k in ("c", "s", "new")} - {None}
    return found | {cl["c"] for cl in op.get("clients", [])}


def coarse(ops, reproduces, deadline):
    """Cheap cuts before delta debugging, whose first tries replay almost
    the whole run: the servers the failing step does not touch, then every
    op of one kind at a time."""
    head, last = ops[:-1], ops[-1:]
    keep = servers(last[0])
    for op in reversed(head):       # and the servers they were copied from
        if op.get("s") in keep or op.get("new") in keep:
            keep |= servers(op)     # a promote names only its standby ("s")
    cuts = [lambda op: not servers(op) <= keep]
    cuts += [lambda op, k=k: op["op"] == k
             for k in ("burst", "reload", "restart", "ext_recreate", "ext_update", "standby",
                       "promote", "dump_restore", "dropdb", "drop", "redefine", "define", "createdb",
                       "outbox", "define_many", "lose_hwm", "resume", "move")]
    for cut in cuts:
        if time.time() >= deadline:
            break
        rest = [op for op in head if not cut(op)]
        if len(rest) < len(head) and reproduces(rest + last):
            head = rest
    return head + last


def summary(world, seed, steps, seconds, ops):
    print("\n======== idgen chaos: seed %d, %d steps in %.0f s ========" % (seed, steps, seconds))
    kinds = collections.Counter(op["op"] for op in ops[:steps])
    print("ops: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())) +
          ("; %d skipped (their server was gone)" % world.skipped if world.skipped else ""))
    total = sum(world.checked.values())
    print("IDs checked: %d" % total)
    checked = collections.Counter()
    for (func, layout), n in world.checked.items():
        # the full drill's many layouts, as one line
        checked[(func, re.sub(r"^fill\d+_\d+$", "fill*", layout))] += n
    for (func, layout), n in sorted(checked.items()):
        print("  %-9s %-14s %9d" % (func, layout, n))
    if world.refusals:
        print("refusals and expected errors (not violations):")
        for msg, n in world.refusals.most_common(20):
            print("  %6d  %s" % (n, msg))
    if world.hostile_checked:
        print("databases that ran hostile sessions, no operator of theirs called: %d times"
              % world.hostile_checked)
    if world.schemas_checked:
        print("databases whose idgen is a fresh install's, and settings as README declares them: %d"
              % world.schemas_checked)
    if world.nodes_checked:
        print("idgen_check_nodes() over every live server, flagging what it should: %d times" % world.nodes_checked)
    if world.inputs_checked:
        print("calls at or past the edges of README's ranges, answered as it says: %d" % world.inputs_checked)
    if world.handovers:
        print("a leased node id generated under by another server than before (times, per layout): %d"
              % world.handovers)
    if world.full_tables:
        print("tables seen full (idgen_capacity, in the full and states drills): " +
              ", ".join("%s %d" % kv for kv in sorted(world.full_tables.items())))
    if world.ignored:
        print("violations ignored (--ignore): " +
              ", ".join("%s %d" % kv for kv in sorted(world.ignored.items())))
    if world.op_errors:
        print("ops that failed (counted, not violations):")
        for msg, n in world.op_errors.most_common(10):
            print("  %6d  %s" % (n, msg))


def ran(world):
    """A run that checked no ID proves nothing (its servers did not start:
    a library built for another PostgreSQL, say): said, and failed, never
    "no violation"."""
    if sum(world.checked.values()):
        return True
    print("chaos could not check anything: no ID was checked; see the ops that failed above")
    return False


def report_violation(pg, root, template, ops, v, seed, args, started):
    print("\n!!!!!!!! VIOLATION at step %d (seed %s, %.0f s into the run) !!!!!!!!"
          % (len(ops), seed, time.time() - started))
    print(v)
    # One line for scripts/mutants.
    print("chaos result: %s%s, seed %s, step %d, %.0f s"
          % (v.kind, " in the %s drill" % v.drill if v.drill else "", seed, len(ops),
             time.time() - started), flush=True)
    if args.shrink_minutes <= 0:
        return
    print("shrinking %d ops (at most %.1f minutes)..." % (len(ops), args.shrink_minutes), flush=True)
    small, tries = shrink(pg, root, template, ops, signature(v), args.shrink_minutes)
    path = os.path.join(tempfile.gettempdir(), "idgen-chaos-%s.json" % seed.split()[0])
    with open(path, "w") as f:
        json.dump(small, f, indent=1)
    print("\nseed %s: %s" % (seed, v))
    print("shortest failing sequence found (%d ops, %d replays):" % (len(small), tries))
    for i, op in enumerate(small, 1):
        print("  %d. %s" % (i, describe(op)))
    print("saved as %s; run it again with: scripts/chaos --replay %s" % (path, path))


def recorded(model, ops, whole_deck=False, max_steps=None):
    """The model's ops, one at a time, each kept in ops for shrinking; with
    whole_deck, until every drill has run; max_steps of them at most."""
    while not (whole_deck and model.deck_done()) and len(ops) != max_steps:
        ops.append(model.next_op())
        yield ops[-1]


def ignore_kinds(args):
    return [k.strip() for k in args.ignore.split(",") if k.strip()]


def run_seed(pg, seed, minutes, late_first, args):
    print("idgen chaos: seed %d%s, %.1f minutes, %d clients, %s"
          % (seed, LATE_FIRST if late_first else "", minutes, args.clients, pg.bindir), flush=True)
    root = tempfile.mkdtemp(prefix="idgen-chaos.")
    try:
        user_dir(root)
        template = make_template(pg, root)
        model = Model(random.Random(seed), args.clients, args.databases, late_first)
        ops = []
        started = time.time()
        deadline = started + minutes * 60
        worlds = []
        v, steps = run_ops(pg, os.path.join(root, "run"), template, recorded(model, ops, args.whole_deck, args.max_steps),
                           deadline, args.verbose, worlds, ignore_kinds(args))
        summary(worlds[0], seed, steps, time.time() - started, ops)
        if args.whole_deck and v is None:
            print("every drill ran" if model.deck_done() else "the time ran out before every drill ran")
        if v is None and not ran(worlds[0]):
            return False
        if v is None:
            print("no violation")
            return True
        report_violation(pg, root, template, ops[:steps], v, "%d%s" % (seed, LATE_FIRST if late_first else ""),
                         args, started)
        return False
    finally:
        shutil.rmtree(root, ignore_errors=True)


def replay(pg, path, args):
    with open(path) as f:
        ops = json.load(f)
    root = tempfile.mkdtemp(prefix="idgen-chaos.")
    try:
        user_dir(root)
        template = make_template(pg, root)
        worlds = []
        started = time.time()
        v, steps = run_ops(pg, os.path.join(root, "run"), template, ops, None, True, worlds,
                           ignore_kinds(args))
        summary(worlds[0], 0, steps, time.time() - started, ops)
        if v is None and not ran(worlds[0]):
            return False
        print(v if v else "no violation")
        return v is None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def self_test():
    import unittest
    import selftest
    import selftest_answers
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromModule(m) for m in (selftest, selftest_answers))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


def main():
    args = parse_args()
    if args.self_test:
        return self_test()
    pg = Pg(args.pg_config)
    if args.replay:
        return 0 if replay(pg, args.replay, args) else 1
    if args.ci:
        args.shrink_minutes = min(args.shrink_minutes, 2)
        draw = random.SystemRandom()
        seeds = [(args.seed if args.seed is not None else draw.randrange(2**31), CI_MINUTES[0], False),
                 (draw.randrange(2**31), CI_MINUTES[1], True)]
        if args.first_only:
            seeds = seeds[:1]
    elif args.seeds:
        seeds = [(int(x), args.minutes, i % 2 == 1) for i, x in enumerate(args.seeds.split(","))]
    else:
        seeds = [(args.seed if args.seed is not None else random.SystemRandom().randrange(2**31),
                  args.minutes, args.late_first)]
    ok = True
    for seed, minutes, late_first in seeds:
        ok = run_seed(pg, seed, minutes, late_first, args) and ok
        if not ok and args.fail_fast:
            break
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
