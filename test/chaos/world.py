"""Running ops against real servers, and the invariants checked after
every step over every ID any client was handed (checks.py has the others:
resuming above earlier runs, the outbox poller, idgen_stats' counts):

(a) no ID is handed out twice in one layout definition (name and full
    definition; idgen's own layout per idgen.epoch and idgen.node_bits;
    layouts that place the node id by idgen.node_bits also per node_bits);
(b) every ID decodes, with the definition its database had when it was
    made, to the server's node id and to a time between the clock (plus
    idgen.clock_offset_ms) when the call started and the highest clock the
    server's line of succession has seen, plus idgen.max_lead_ms and the
    high-water mark's step.

An error idgen raises on purpose is a refusal, counted and not a violation.
A server process that dies without our SIGKILL, a PANIC, a failed assertion,
an internal error (XX000) or a connection lost without a kill is a
violation.
"""

import collections
import datetime
import os
import re
import shutil
import signal
import threading
import time

import psycopg2

from checks import NAMED_HORIZON, Frontier, Poller, Violation, stats_mismatch
from cluster import Cluster, as_user, user_dir
from layouts import FAMILIES, HWM_STEP_MS, Layout, builtin, default_layout, node_problem
from ops import Model
from params import CURRENT, DBS, LEASE_POOL, LEASE_S

SLACK_MS = 50
LOST = "connection lost"
# Ops after which every outbox poller polls: those that restart a server,
# step its clock or promote one (and bursts with a SIGKILL).
POLL_AFTER = {"restart", "reload", "promote", "standby", "ext_recreate", "ext_update", "pause",
              "lose_hwm", "resume", "registry_start", "thaw", "registry_thaw", "registry_restore",
              "registry_failover"}
# Ops after which no two servers may hold one node id.
LEASE_CHECK_AFTER = {"cluster", "clone", "restart", "registry_start", "thaw", "unreserve",
                     "registry_thaw", "registry_restore", "registry_failover"}
REGISTRY = "REG"            # the registry's cluster: it generates nothing
REGISTRY_STANDBY = "REGS"   # its standby, until it is promoted into its place
RESERVED = "chaos: reserved"    # the holder of node ids the registry must not hand out
# A registry's row for node ids no leasing server may get, whatever their
# lease says: those set by hand, and while a holder is frozen, the free
# ones, so that its node id is the one a new server gets.  Under the
# leasing servers' epoch: the registry refuses live leases under two.
# Each is a lease of LEASE_S renewed at the end of the reservation, as a
# holder that renews to the end would leave it: a registry that lost
# commits holds every node id for the longest lease in its table, which a
# reservation renewed once for a century would make a century.
RESERVE_SQL = """
LOCK TABLE idgen_lease IN EXCLUSIVE MODE;
INSERT INTO idgen_lease AS l (node_id, node_bits, epoch_ms, holder, system_identifier, token,
    acquired_at, renewed_at, expires_at, released, mark_ms)
SELECT n, 4, %%s, %%s, 0, gen_random_uuid(), now(), now() + %%s::interval - interval '%d s',
    now() + %%s::interval, false, 0
FROM unnest(%%s::int[]) n
ON CONFLICT (node_id) DO UPDATE SET holder = excluded.holder, token = excluded.token,
    renewed_at = excluded.renewed_at, expires_at = excluded.expires_at, released = false
WHERE l.released OR l.expires_at <= clock_timestamp()""" % LEASE_S
OUTBOX_DDL = ("CREATE TABLE IF NOT EXISTS chaos_outbox (id bigint PRIMARY KEY DEFAULT idgen_next(), "
              "w int NOT NULL); "
              # DROP EXTENSION ... CASCADE took the default with it
              "ALTER TABLE chaos_outbox ALTER id SET DEFAULT idgen_next()")


# A table whose CHECK reads a layout through a SQL function, which no check
# of constraints can see through: a restore must define the layouts before
# it loads the rows (docs/guarantees.md, Restoring what reads a layout).
# Its IDs are numbers, not generated: a refusing server can have rows too.
CHECKED_SQL = """
SELECT idgen_define_layout('chk', '2024-01-01 00:00:00+00', '{time,node,sequence}', '{41,10,12}')
WHERE NOT EXISTS (SELECT FROM idgen_layout WHERE name = 'chk');
CREATE OR REPLACE FUNCTION chaos_chk(bigint) RETURNS timestamptz
    LANGUAGE sql STABLE AS $$ SELECT (public.idgen_decode($1, 'chk')).ts $$;
CREATE TABLE IF NOT EXISTS chaos_checked (id bigint CHECK (chaos_chk(id) IS NOT NULL));
INSERT INTO chaos_checked SELECT i FROM generate_series(1, 100) i;
SELECT count(*) FROM chaos_checked"""


def now_ms():
    return time.time() * 1000.0


def epoch_date_ms(date):
    y, m, d = (int(x) for x in date.split("-"))
    return int(datetime.datetime(y, m, d, tzinfo=datetime.timezone.utc).timestamp() * 1000)


def normalize(msg):
    return re.sub(r"\d+", "N", msg.strip().splitlines()[0])[:150]


class Lineage:
    """What a server and the standbys promoted in its place have seen: the
    highest clock reading (wall + offset), the longest lead allowed, the
    IDs they handed out that later runs must stay above, and the latest
    time such an ID decodes to (the end of its tick)."""

    def __init__(self, hi=0.0, lead=0, frontier=None, newest=0):
        self.hi = hi
        self.lead = lead
        self.frontier = frontier or Frontier()
        self.newest = newest


class World:
    def __init__(self, pg, root, template, ignore=()):
        self.pg = pg
        self.ignore = set(ignore)
        self.ignored = collections.Counter()       # kind -> violations let pass
        self.full_tables = collections.Counter()   # idgen_capacity's name -> times seen full
        self.root = user_dir(root)
        self.template = template
        self.clusters = {}          # name -> Cluster
        self.role = {}              # name -> "primary" | "standby"
        self.primary_of = {}        # standby -> primary
        self.lineage = {}           # name -> Lineage
        self.seen = collections.defaultdict(dict)   # definition key -> {id: step}
        self.checked = collections.Counter()        # (function, layout) -> IDs
        self.refusals = collections.Counter()       # normalized message -> count
        self.op_errors = collections.Counter()
        self.skipped = 0
        self.step = 0
        self.sync = {}              # standby -> synchronous?
        self.pollers = {}           # (server, database) -> Poller of its outbox
        self.counts = {}            # server -> IDs handed out since idgen_stats_reset()
        self.late = []              # IDs of a run that began during a burst
        self.frozen = {}            # server -> (what, pids SIGSTOPped, its lease then)
        self.receivers = {}         # standby -> its walreceiver's pid, SIGSTOPped
        self.handovers = 0          # IDs made under a node id another server made IDs under
        # (group, leased node id, node_bits) -> {server: largest ID it made under it}
        self.lease_tops = collections.defaultdict(dict)
        self.holder = {}            # leased node id -> (server seen holding it, step)
        self.registry_frozen = None     # (pids SIGSTOPped, {server: node id held}, step)
        self.registry_dump = None       # the path of the registry's last pg_dump

    # -- helpers
    def live(self, c, role="primary"):
        cl = self.clusters.get(c)
        return cl is not None and cl.running and self.role.get(c) == role and \
            (c not in self.frozen or self.frozen[c][0] != "server")

    def conf(self, s):
        """A leasing server's settings: the registry's conninfo, no node id."""
        s = dict(s)
        if s.pop("lease", False):
            s.pop("node_id", None)
            s["node_registry"] = "host=%s port=5432 dbname=postgres" % os.path.join(self.root, REGISTRY)
        return s

    def touch(self, c):
        """Raise the lineage's highest clock to the clock in force now."""
        cl = self.clusters[c]
        lin = self.lineage[c]
        lin.hi = max(lin.hi, now_ms() + int(cl.settings.get("clock_offset_ms", 0)))
        lin.lead = max(lin.lead, int(cl.settings.get("max_lead_ms", 1000)))

    def settings_for(self, c, s):
        """Drop a synchronous standby that this replay does not have, or
        every session would wait for it."""
        s = dict(s)
        sb = s.get("synchronous_standby_names")
        if sb and not self.live(sb, "standby"):
            s.pop("synchronous_standby_names")
        return self.conf(s)

    def check_log(self, c):
        cl = self.clusters.get(c)
        if cl is None:
            return
        deaths = cl.scan_log()
        if deaths:
            raise Violation("crash", None, "server %s: %s" % (c, "; ".join(deaths[:3])))

    def run(self, op):
        """Runs one op and checks the invariants.  Violations of the kinds
        in self.ignore (--ignore, to reach other bugs of an old version)
        are counted, and the run goes on."""
        try:
            self.run_op(op)
        except Violation as v:
            v.drill = op.get("drill") or op.get("part")
            if v.kind not in self.ignore and "%s@%s" % (v.kind, v.drill) not in self.ignore:
                raise
            if not self.ignored[v.kind]:
                print("  ignored (--ignore) at step %d: %s" % (self.step, v), flush=True)
            self.ignored[v.kind] += 1

    def run_op(self, op):
        self.step += 1
        handler = getattr(self, "do_" + op["op"])
        try:
            done = handler(op)
        except (RuntimeError, psycopg2.Error) as e:
            self.op_errors["%s: %s" % (op["op"], normalize(str(e)))] += 1
            done = True
        if done is False:
            self.skipped += 1
        elif op["op"] == "burst" and "full" in (op.get("drill"), op.get("part")):
            self.note_capacity(op["clients"][0]["c"])
        for c in list(self.clusters):
            self.check_log(c)
        if op["op"] in LEASE_CHECK_AFTER:
            self.check_held()
        if (op["op"] in POLL_AFTER or (op["op"] == "burst" and op.get("kill"))) and op.get("poll", True):
            self.poll_all()

    # -- servers
    def new_cluster(self, name, settings):
        cl = Cluster(self.pg, self.root, name)
        cl.create(self.template)
        cl.write_settings(self.conf(settings))
        return cl

    def do_cluster(self, op):
        cl = self.new_cluster(op["c"], op["set"])
        self.clusters[op["c"]] = cl
        self.role[op["c"]] = "primary"
        self.lineage[op["c"]] = Lineage()
        cl.start()
        self.touch(op["c"])
        for db in op.get("dbs", []):
            cl.query("postgres", 'CREATE DATABASE "%s"' % db)
            cl.query(db, create_extension(CURRENT))
        if op["set"].get("lease"):
            # the lease stays visible whatever the ops do to db1-db3 (an
            # extension of 1.0 has no idgen_node_lease)
            cl.query("postgres", create_extension(CURRENT))
            lease = self.wait_lease(op["c"], op.get("wait_lease", 2 * op["set"]["node_lease_s"]))
            took = self.frozen.get(op.get("takes"), (None, None, None))[2]
            if took is not None:
                # the frozen drill reached its case, or not (the registry's view)
                self.refusals["frozen drill: the new server %s the frozen holder's node id"
                              % ("leased" if lease and lease[:2] == (took[0], "held") else
                                 "did not lease")] += 1

    def do_restart(self, op):
        c = op["c"]
        if not self.live(c):
            return False
        self.touch(c)
        cl = self.clusters[c]
        # a holder restarted cleanly gets its node id back, unless another
        # server was waiting for one (it may take the released id first)
        keep = self.lease_of(c) if op["mode"] == "fast" and self.all_held(c) else None
        cl.stop(op["mode"])
        self.lineage[c].frontier.new_run()
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.start()
        self.touch(c)
        if cl.settings.get("node_registry"):
            now = self.wait_lease(c, 3 * int(cl.settings["node_lease_s"]))
            if keep is not None and keep[1] == "held" and now is not None and now[1] == "held" \
                    and now[0] != keep[0]:
                raise Violation("lease changed", None, "%s restarted (fast) at step %d leased node id"
                                " %s, not its own %d" % (c, self.step, now[0], keep[0]))

    def do_reload(self, op):
        c = op["c"]
        if not self.live(c):
            return False
        self.touch(c)
        cl = self.clusters[c]
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.reload()
        self.wait_setting(cl, "idgen.clock_offset_ms", op["set"]["clock_offset_ms"])
        time.sleep(op.get("then_ms", 0) / 1000.0)      # nothing happens a while
        self.touch(c)

    # -- node id leases
    def leasing(self, c):
        cl = self.clusters.get(c)
        return cl is not None and bool(cl.settings.get("node_registry"))

    def lease_of(self, c):
        """(node id, state, previous mark in Unix ms) of c's lease, from
        the first database whose idgen has idgen_node_lease; None when none."""
        for db in ["postgres"] + DBS:
            try:
                rows = self.clusters[c].query(
                    db, "SELECT node_id, CASE WHEN state = 'held' AND seconds_left > 0 THEN 'held'"
                        " ELSE state END, (extract(epoch FROM previous_mark) * 1000)::bigint"
                        " FROM idgen_node_lease")
            except psycopg2.Error:
                continue
            lease = tuple(rows[0])
            if lease[1] == "held" and self.holder.get(lease[0], (None,))[0] != c:
                self.holder[lease[0]] = (c, self.step)
            return lease
        return None

    def wait_lease(self, c, timeout):
        """Waits until c holds a lease; returns lease_of(c) then."""
        deadline = time.time() + timeout
        while True:
            lease = self.lease_of(c)
            if lease is None or lease[1] == "held" or time.time() > deadline:
                return lease
            time.sleep(0.1)

    def lessees(self):
        return [c for c in self.clusters if self.leasing(c) and self.live(c)]

    def all_held(self, but):
        """Every other live leasing server holds a lease (none waits for one)."""
        for c in self.lessees():
            if c != but:
                lease = self.lease_of(c)
                if lease is None or lease[1] != "held":
                    return False
        return True

    def check_held(self):
        """No node id is held by two live servers at once."""
        holders = {}
        for c in self.lessees():
            lease = self.lease_of(c)
            if lease and lease[1] == "held":
                if lease[0] in holders:
                    raise Violation("node id held twice", None, "servers %s and %s both hold node id"
                                    " %d at step %d" % (holders[lease[0]], c, lease[0], self.step))
                holders[lease[0]] = c

    def registry(self):
        cl = self.clusters.get(REGISTRY)
        return cl if cl is not None and self.role.get(REGISTRY) == "registry" else None

    def do_registry(self, op):
        """The registry: a cluster of its own, which nothing generates in,
        so that stopping it stops no server that generates."""
        cl = self.new_cluster(REGISTRY, {"node_id": 0})
        self.clusters[REGISTRY] = cl
        self.role[REGISTRY] = "registry"
        cl.start()
        cl.query("postgres", "CREATE EXTENSION idgen")
        cl.query("postgres", RESERVE_SQL, (epoch_date_ms(Model.lease_settings()["epoch"]),
                                           "chaos: set by hand", "100 years", "100 years",
                                           op["reserved"]))

    def do_registry_stop(self, op):
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        cl.stop("fast")

    def do_registry_start(self, op):
        """The registry back: every holder renews (or leases again) and generates."""
        cl = self.registry()
        if cl is None or cl.running:
            return False
        cl.start()
        for c in self.lessees():
            self.wait_lease(c, 3 * int(self.clusters[c].settings["node_lease_s"]))

    def do_reserve(self, op):
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        cl.query("postgres", RESERVE_SQL, (epoch_date_ms(Model.lease_settings()["epoch"]),
                                           RESERVED, "1 day", "1 day", list(LEASE_POOL)))

    def do_unreserve(self, op):
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        # as a holder's release leaves its row
        cl.query("postgres", "UPDATE idgen_lease SET released = true, expires_at = least(expires_at, "
                             "clock_timestamp()) WHERE holder = %s", (RESERVED,))

    def do_registry_freeze(self, op):
        """The registry stalled: SIGSTOP its postmaster and all its children,
        so that calls in flight and new connections hang, as on a paused VM.
        Its holders' node ids then are what it must give back."""
        cl = self.registry()
        if cl is None or not cl.running or self.registry_frozen is not None:
            return False
        pm = cl.postmaster_pid()
        if pm is None:
            return False
        leases = {c: self.lease_of(c) for c in self.lessees()}
        held = {c: lease[0] for c, lease in leases.items() if lease and lease[1] == "held"}
        pids = [pm] + cl.children(pm)
        self.registry_frozen = (pids, held, self.step)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass

    def do_registry_thaw(self, op):
        """SIGCONT the stalled registry.  Every server that held a node id
        when it stalled holds the same one again within op's wait_s, on its
        own (the registry extends the leases that ran out while it answered
        nothing, for their holders); a server that waited meanwhile leases
        one if any is free (the summary counts whether it did)."""
        if self.registry_frozen is None:
            return False
        held, step = self.wake_registry()
        deadline = time.time() + op["wait_s"]
        for c in self.lessees():
            lease = self.wait_lease(c, max(0.0, deadline - time.time()))
            now = (lease[0], lease[1]) if lease else None
            if c in held and now != (held[c], "held"):
                raise Violation("lease changed", None, "%s held node id %d when the registry stalled at"
                                " step %d, and %s %d s after it woke at step %d"
                                % (c, held[c], step, "node id %s %s" % now if now else "no lease",
                                   op["wait_s"], self.step))
            if c not in held:
                self.refusals["registry_stall drill: a server that waited %s" % (
                    "leased a node id" if now and now[1] == "held" else "leased none")] += 1

    def wake_registry(self):
        """SIGCONT the stalled registry; returns whom it saw holding what,
        and the step it stalled at."""
        pids, held, step = self.registry_frozen
        self.registry_frozen = None
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        return held, step

    def do_registry_standby(self, op):
        """A streaming standby of the registry (REGISTRY_STANDBY),
        synchronous or not, in a directory of its own."""
        cl = self.registry()
        if cl is None or not cl.running or REGISTRY_STANDBY in self.clusters:
            return False
        sb = Cluster(self.pg, self.root, REGISTRY_STANDBY)
        sb.create_standby(cl)
        sb.write_settings(cl.settings)
        self.clusters[REGISTRY_STANDBY] = sb
        self.role[REGISTRY_STANDBY] = "registry standby"
        sb.start()
        if op["sync"]:
            cl.write_settings(dict(cl.settings, synchronous_standby_names=REGISTRY_STANDBY))
            cl.reload()
            self.wait_sync(cl, REGISTRY_STANDBY)

    def do_registry_cut(self, op):
        """The registry's walsenders stopped (SIGSTOP): what it commits from
        now on never reaches its asynchronous standby, which a failover
        then loses."""
        cl = self.registry()
        if cl is None or not cl.running or REGISTRY_STANDBY not in self.clusters:
            return False
        pm = cl.postmaster_pid()
        pids = [p for p in cl.children(pm) if "walsender" in cmdline(p)] if pm else []
        if not pids:
            return False
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)

    def do_registry_failover(self, op):
        """The registry killed (SIGKILL of all its processes), its standby
        promoted and moved into its place (its address: the leasing
        servers' conninfo reaches it).  On a new timeline it fences itself:
        holders whose tokens it has renew, those it lost are refused.
        Waits up to op's wait_s for the holders to be held or lost; the
        summary counts which."""
        cl = self.registry()
        sb = self.clusters.get(REGISTRY_STANDBY)
        if cl is None or not cl.running or sb is None or not sb.running:
            return False
        held = self.holders()
        cl.kill_postmaster()
        sb.promote()
        sb.stop("fast")
        self.check_log(REGISTRY_STANDBY)
        del self.clusters[REGISTRY_STANDBY]
        cl.take_place(sb)
        cl.write_settings({k: v for k, v in cl.settings.items() if k != "synchronous_standby_names"})
        cl.start()
        self.settle(held, op["wait_s"], "registry_failover drill (%s)"
                    % ("synchronous" if op["sync"] else "asynchronous"))

    def renewal_of(self, c):
        """(state, valid_until) of c's lease; None when it cannot be read."""
        try:
            rows = self.clusters[c].query("postgres", "SELECT state, valid_until FROM idgen_node_lease")
        except psycopg2.Error:
            return None
        return tuple(rows[0]) if rows else None

    def holders(self):
        """The live leasing servers that hold a node id now."""
        return [c for c in self.lessees() if (self.lease_of(c) or (None, None))[1] == "held"]

    def settle(self, held, wait_s, drill):
        """Waits up to wait_s for every one of held, after the registry lost
        commits, to have renewed its lease with it since (its valid_until
        moved) or to have lost it: until then a holder whose lease it lost
        still shows it held, and restarted, could not get that node id
        back (the registry has it held by its token of before).  The
        summary counts which."""
        before = {c: self.renewal_of(c) for c in held}
        deadline = time.time() + wait_s
        states = {}
        while held and time.time() < deadline:
            now = {c: self.renewal_of(c) for c in held if self.live(c)}
            states = {c: r[0] if r else None for c, r in now.items()}
            if all(r is None or r[0] == "lost" or r[0] == "held" and r != before[c]
                   for c, r in now.items()):
                break
            time.sleep(0.1)
        for c, state in sorted(states.items()):
            self.refusals["%s: a holder %s" % (drill, "renewed" if state == "held" else
                                                 "lost its node id" if state == "lost"
                                                 else "was %s" % state)] += 1

    def do_registry_dump(self, op):
        """pg_dump of the registry's database; the commits after it are
        those a restore loses."""
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        path = os.path.join(cl.dir, "registry.dump")
        as_user([self.pg.tool("pg_dump"), "-Fc", "-f", path, "-h", cl.dir, "-p", "5432",
                 "-U", "postgres", "postgres"])
        self.registry_dump = path

    def do_registry_restore(self, op):
        """The registry replaced by a new cluster (initdb: another system
        identifier) at its address, its last dump restored in one
        transaction (so that no lease call sees the extension without its
        rows).  It fences itself: holders whose tokens it has renew, one
        whose lease it lost is refused (lost), and every next holder starts
        above its clock plus a lease and a minute.  Waits up to op's wait_s
        for the holders to be held or lost; the summary counts which."""
        cl = self.registry()
        if cl is None or not cl.running or self.registry_dump is None:
            return False
        held = self.holders()
        cl.stop("fast")
        shutil.rmtree(cl.data)
        cl.create_fresh()
        cl.write_settings({"node_id": 0})
        cl.start()
        as_user([self.pg.tool("pg_restore"), "--single-transaction", "--exit-on-error", "-h", cl.dir,
                 "-p", "5432", "-U", "postgres", "-d", "postgres", self.registry_dump])
        self.settle(held, op["wait_s"], "registry_restore drill")

    def do_freeze(self, op):
        """SIGSTOP the postmaster and all its children, or the lease worker alone."""
        c = op["c"]
        if not self.live(c) or c in self.frozen:
            return False
        cl = self.clusters[c]
        pm = cl.postmaster_pid()
        if pm is None:
            return False
        pids = [pm] + cl.children(pm)
        if op["what"] == "worker":
            pids = [p for p in pids if "idgen node lease" in cmdline(p)]
            if not pids:
                return False
        self.touch(c)
        lease = self.lease_of(c)
        if op.get("reserve"):
            self.do_reserve(op)
        self.frozen[c] = (op["what"], pids, lease)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass        # a backend that just ended

    def do_thaw(self, op):
        """SIGCONT, with but_worker to all but the lease worker, which
        stays frozen (a later thaw wakes it)."""
        c = op["c"]
        if c not in self.frozen:
            return False
        what, pids, lease = self.frozen.pop(c)
        worker = [p for p in pids if "idgen node lease" in cmdline(p)] if op.get("but_worker") else []
        for pid in pids:
            if pid not in worker:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        if worker:
            self.frozen[c] = ("worker", worker, lease)
        self.touch(c)
        if op.get("unreserve"):
            self.do_unreserve(op)

    def do_clone(self, op):
        """A pg_basebackup of a holder started as a primary: it is a new
        holder (another node id, or none while all are held)."""
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        cl = Cluster(self.pg, self.root, new)
        cl.create_standby(src, clone=True)
        cl.write_settings(src.settings)
        self.clusters[new] = cl
        self.role[new] = "primary"
        self.lineage[new] = Lineage()
        cl.start()
        self.touch(new)
        self.wait_lease(new, 2)
        self.check_held()

    def note_capacity(self, c):
        """Which tables of shared memory have been full in the server's run
        (idgen_capacity, 1.5 on): the summary says what the run reached."""
        if not self.live(c):
            return
        for db in DBS:
            try:
                rows = self.clusters[c].query(db, "SELECT name FROM idgen_capacity WHERE overflows > 0")
            except psycopg2.Error:
                continue
            for (name,) in rows:
                self.full_tables[name] += 1
            return

    @staticmethod
    def wait_setting(cl, name, value, timeout=30):
        """New sessions must see the new value before a burst starts: the
        postmaster applies a reload when it gets to it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if cl.query("postgres", "SELECT setting FROM pg_settings WHERE name = %s",
                        (name,))[0][0] == str(value):
                return
            time.sleep(0.05)
        raise RuntimeError("%s did not reach %s" % (name, value))

    def do_lose_hwm(self, op):
        """idgen_hwm deleted with the server stopped, after a CHECKPOINT took
        the WAL copy of its marks away; the server starts with op's
        settings (its clock behind its last IDs)."""
        c = op["c"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        cl.query("postgres", "CHECKPOINT")
        self.touch(c)
        cl.stop("fast")
        self.lineage[c].frontier.new_run()
        try:
            os.remove(os.path.join(cl.data, "idgen_hwm"))
        except FileNotFoundError:
            pass
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.start()
        self.touch(c)

    def do_resume(self, op):
        """The way out of a refusal for lost or missing marks: as the error
        says, idgen_resume_after(t), t past every ID the server's line
        handed out, and a restart (which ends the sessions that generated
        below the new marks)."""
        c = op["c"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        self.touch(c)
        self.resume_after(c, op["db"], op.get("newest", False))
        cl.stop("fast")
        self.lineage[c].frontier.new_run()
        cl.start()
        self.touch(c)

    def resume_after(self, c, db, newest):
        """newest: past the newest ID the line handed out, as the error's hint
        says; otherwise past any it could have (the clock it saw, the lead
        and the step of the marks), above every horizon it returned."""
        lin = self.lineage[c]
        after = lin.newest + 1 if newest else lin.hi + lin.lead + HWM_STEP_MS + 1000
        try:
            self.clusters[c].query(db, "SELECT idgen_resume_after(to_timestamp(%s))", (after / 1000.0,))
        except psycopg2.Error as e:
            # 1.4 has no such function; a refusal of a time too far ahead
            self.op_errors["idgen_resume_after: %s" % normalize(str(e))] += 1

    def do_move(self, op):
        """pg_dump of a database, its server retired, and pg_restore into a
        new cluster of its own initdb (another system identifier) with the
        old server's node id: the new server continues the old one's line."""
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        cl = Cluster(self.pg, self.root, new)
        dump = os.path.join(cl.dir, "dump.custom")
        rows = self.checked_rows(c, op["db"])
        as_user([self.pg.tool("pg_dump"), "-Fc", "-f", dump, "-h", src.dir, "-p", "5432",
                 "-U", "postgres", op["db"]])
        self.touch(c)
        src.stop("fast")
        self.role[c] = "retired"
        for key in [k for k in self.pollers if k[0] == c]:
            del self.pollers[key]
        cl.create_fresh()
        cl.write_settings(op["set"])
        self.clusters[new] = cl
        self.role[new] = "primary"
        lin = self.lineage[c]
        frontier = lin.frontier.copy()
        frontier.new_run()
        self.lineage[new] = Lineage(lin.hi, lin.lead, frontier, lin.newest)
        cl.start()
        self.touch(new)
        if op.get("other"):
            cl.query("postgres", 'CREATE DATABASE "%s"' % op["other"])
            cl.query(op["other"], create_extension(CURRENT))
        cl.query("postgres", 'CREATE DATABASE "%s"' % op["db"])
        self.restore(cl, op["db"], dump, rows)

    def checked_rows(self, c, db):
        """Rows of chaos_checked in c's db after adding 100; None where the
        database cannot have it (an extension older than layouts)."""
        try:
            return self.clusters[c].query(db, CHECKED_SQL)[0][0]
        except psycopg2.Error:
            return None

    def restore(self, cl, db, dump, rows):
        """pg_restore, then every row of chaos_checked must be back."""
        try:
            as_user([self.pg.tool("pg_restore"), "-h", cl.dir, "-p", "5432", "-U", "postgres",
                     "-d", db, dump])
        except RuntimeError as e:
            self.op_errors["pg_restore: %s" % normalize(str(e)[-200:])] += 1
        if rows is None:
            return
        back = cl.query(db, "SELECT CASE WHEN to_regclass('chaos_checked') IS NULL THEN 0 ELSE "
                            "(SELECT count(*) FROM chaos_checked) END")[0][0]
        if back != rows:
            raise Violation("rows lost on restore", "chk",
                            "%s/%s: pg_restore brought back %d of the %d rows of chaos_checked,"
                            " whose CHECK reads layout chk through a SQL function"
                            % (cl.name, db, back, rows))

    def do_define_many(self, op):
        """op's count layouts of one family at once, named prefix1, prefix2..."""
        if not self.live(op["c"]):
            return False
        fields, widths, unit, radix = FAMILIES[op["family"]]
        self.clusters[op["c"]].query(
            op["db"], "SELECT count(idgen_define_layout(%s || i, %s::timestamptz, %s::text[], "
                      "%s::int[], %s::interval, %s)) FROM generate_series(1, %s) i",
            (op["prefix"], op["epoch"] + " 00:00:00+00", list(fields), list(widths), unit, radix,
             op["count"]))

    def do_pause(self, op):
        """Nothing happens a while (the pollers poll after it)."""
        time.sleep(op["ms"] / 1000.0)

    def do_retire(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].stop("fast")
        self.role[op["c"]] = "retired"

    # -- databases and layouts
    def do_createdb(self, op):
        if not self.live(op["c"]):
            return False
        cl = self.clusters[op["c"]]
        cl.query("postgres", 'CREATE DATABASE "%s"' % op["db"])
        cl.query(op["db"], create_extension(op["version"]))

    def do_dropdb(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].query("postgres", 'DROP DATABASE "%s" WITH (FORCE)' % op["db"])
        self.pollers.pop((op["c"], op["db"]), None)

    def define_sql(self, op):
        fields, widths, unit, radix = FAMILIES[op["family"]]
        return ("SELECT idgen_define_layout(%s, %s::timestamptz, %s::text[], %s::int[], %s::interval, %s)",
                (op["name"], op["epoch"] + " 00:00:00+00", list(fields), list(widths), unit, radix))

    def do_define(self, op):
        if not self.live(op["c"]):
            return False
        sql, args = self.define_sql(op)
        self.clusters[op["c"]].query(op["db"], sql, args)

    def do_redefine(self, op):
        if not self.live(op["c"]):
            return False
        sql, args = self.define_sql(op)
        cl = self.clusters[op["c"]]
        conn = cl.connect(op["db"])
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT idgen_drop_layout(%s) FROM idgen_layout WHERE name = %s",
                            (op["name"], op["name"]))
                cur.execute(sql, args)
        finally:
            conn.close()

    def do_drop(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].query(op["db"], "SELECT idgen_drop_layout(%s)", (op["name"],))

    def do_ext_recreate(self, op):
        if not self.live(op["c"]):
            return False
        cl = self.clusters[op["c"]]
        cl.query(op["db"], "DROP EXTENSION IF EXISTS idgen CASCADE")
        cl.query(op["db"], create_extension(op["version"]))

    def do_ext_update(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].query(op["db"], "ALTER EXTENSION idgen UPDATE")

    # -- standbys, promotion, dump and restore
    def do_standby(self, op):
        c, s = op["c"], op["s"]
        if not self.live(c) or s in self.clusters:
            return False
        p = self.clusters[c]
        cl = Cluster(self.pg, self.root, s)
        cl.create_standby(p)
        settings = dict(p.settings, clock_offset_ms=op.get("offset", 0), synchronous_standby_names="",
                        **op.get("set", {}))
        if not self.leasing(c):
            # a leasing one's standby leases nothing until promoted
            settings["node_id"] = p.settings["node_id"] if op["sync"] else op["node_id"]
        cl.write_settings(settings)
        self.clusters[s] = cl
        self.role[s] = "standby"
        self.primary_of[s] = c
        self.sync[s] = op["sync"]
        # The base backup holds the marks of every ID handed out so far.
        frontier = self.lineage[c].frontier.copy()
        frontier.new_run()
        self.lineage[s] = Lineage(self.lineage[c].hi, self.lineage[c].lead, frontier,
                                  self.lineage[c].newest)
        cl.start()
        if op["sync"]:
            p.write_settings(dict(p.settings, synchronous_standby_names=s))
            p.reload()
            self.wait_sync(p, s)

    @staticmethod
    def wait_sync(p, s, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = p.query("postgres", "SELECT sync_state FROM pg_stat_replication "
                                       "WHERE application_name = %s", (s,))
            if rows and rows[0][0] == "sync":
                return
            time.sleep(0.1)
        raise RuntimeError("standby %s never became synchronous" % s)

    def do_promote(self, op):
        s = op["s"]
        if not self.live(s, "standby"):
            return False
        c = self.primary_of[s]
        if op.get("catch_up") and self.live(c):
            self.catch_up(self.clusters[c], self.clusters[s])
        if self.sync.get(s) or op.get("catch_up"):
            # Its primary's sessions waited for it: it has the marks of all
            # their IDs, and the outbox rows they committed.
            self.lineage[s].frontier.include(self.lineage[c].frontier)
            self.lineage[s].newest = max(self.lineage[s].newest, self.lineage[c].newest)
            for (pc, db), poller in list(self.pollers.items()):
                if pc == c and self.sync.get(s):
                    self.pollers[(s, db)] = poller.switch()
        if self.live(c):
            self.touch(c)
            lin = self.lineage[c]
            self.lineage[s].hi = max(self.lineage[s].hi, lin.hi)
            self.lineage[s].lead = max(self.lineage[s].lead, lin.lead)
            p = self.clusters[c]
            if op["kill_primary"]:
                p.kill_postmaster()
                self.role[c] = "dead"
                # cut off until its primary died: what it did not get is lost
                self.do_receiver({"s": s, "stop": False})
            else:
                p.write_settings({k: v for k, v in p.settings.items()
                                  if k != "synchronous_standby_names"})
                p.reload()
        self.clusters[s].promote()
        self.role[s] = "primary"
        self.touch(s)
        if self.leasing(s):
            # a node id of its own while its primary lives (the clone drill's
            # standby form): whether it got one, the summary says
            lease = self.wait_lease(s, 3 * int(self.clusters[s].settings["node_lease_s"]))
            self.refusals["promoted standby of a leasing server: %s" % (
                "leased node id %d" % lease[0] if lease and lease[1] == "held" else "leased none")] += 1

    def do_standby_restart(self, op):
        """A standby stopped (fast) or crashed (immediate) and started
        again; with restartpoint, after one, so that what it replayed
        before is no longer in the WAL it reads at start."""
        s = op["s"]
        if not self.live(s, "standby"):
            return False
        sb = self.clusters[s]
        p = self.clusters[self.primary_of[s]]
        if op["restartpoint"] and self.live(self.primary_of[s]):
            p.query("postgres", "CHECKPOINT")
            self.catch_up(p, sb)
            sb.query("postgres", "CHECKPOINT")
        sb.stop(op["mode"])
        sb.start()
        if self.sync.get(s) and self.live(self.primary_of[s]):
            self.wait_sync(p, s)

    def do_receiver(self, op):
        """A synchronous standby cut off: its walreceiver stopped, so that
        the primary's sessions wait for marks it never confirms; or woken."""
        s = op["s"]
        if op["stop"]:
            if not self.live(s, "standby") or s in self.receivers:
                return False
            rows = self.clusters[s].query("postgres", "SELECT pid FROM pg_stat_wal_receiver")
            if not rows or rows[0][0] is None:
                return False
            self.receivers[s] = rows[0][0]
            os.kill(self.receivers[s], signal.SIGSTOP)
        elif s in self.receivers:
            os.kill(self.receivers.pop(s), signal.SIGCONT)

    @staticmethod
    def catch_up(p, s, timeout=60):
        """An asynchronous standby replays all its primary wrote so far:
        the marks of every ID the primary handed out."""
        lsn = p.query("postgres", "SELECT pg_current_wal_insert_lsn()")[0][0]
        deadline = time.time() + timeout
        while time.time() < deadline:
            if s.query("postgres", "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,))[0][0]:
                return
            time.sleep(0.1)
        raise RuntimeError("standby %s never caught up" % s.name)

    def do_dump_restore(self, op):
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        cl = self.new_cluster(new, op["set"])
        dump = os.path.join(cl.dir, "dump.custom")
        rows = self.checked_rows(c, op["db"])
        as_user([self.pg.tool("pg_dump"), "-Fc", "-f", dump, "-h", src.dir, "-p", "5432",
                 "-U", "postgres", op["db"]])
        self.clusters[new] = cl
        self.role[new] = "primary"
        self.lineage[new] = Lineage()
        cl.start()
        cl.query("postgres", 'CREATE DATABASE "%s"' % op["db"])
        self.restore(cl, op["db"], dump, rows)
        self.touch(new)
        # A restored database holds the source's IDs: the server refuses until
        # told to resume past them (docs/guarantees.md, A new cluster...).
        lin = self.lineage[c]
        after = lin.hi + lin.lead + HWM_STEP_MS + 1000
        try:
            cl.query(op["db"], "SELECT idgen_resume_after(to_timestamp(%s))", (after / 1000.0,))
        except psycopg2.Error:
            return      # a database older than 1.5 carries nothing to refuse for
        cl.stop("fast")
        cl.start()

    # -- generation
    def do_burst(self, op):
        clients = [cl for cl in op["clients"] if self.live(cl["c"])]
        if not clients:
            return False
        views = {}
        for cl in clients:
            key = (cl["c"], cl["db"])
            if key not in views:
                views[key] = self.read_view(*key)
        for c in {cl["c"] for cl in clients}:
            self.touch(c)
            self.stats_begin(c, [cl["db"] for cl in clients if cl["c"] == c])
        kill = op.get("kill")
        if kill and not self.live(kill["c"]):
            kill = None
        results, kill_ms = run_clients(self.clusters, clients, kill, op.get("serial"))
        killed, restarted = self.after_kill(kill)
        for c in {cl["c"] for cl in clients}:
            if self.live(c):
                self.touch(c)
        self.counts.pop(killed, None)
        for res in results:
            if res["call"] is None:
                if killed != res["c"]:
                    raise Violation("connection lost", None, "%s/%s: could not connect: %s"
                                    % (res["c"], res["db"], res["error"]))
                self.refusals["could not connect during our SIGKILL"] += 1
                continue
            # A session that began after the kill is of the server's next run.
            res["late"] = killed == res["c"] and res["conn_ms"] > kill_ms
            self.check_call(res, views.get((res["c"], res["db"])), killed)
        if restarted:
            self.lineage[killed].frontier.new_run()
        for c, group, node, bits, top in self.late:
            self.lineage[c].frontier.add(group, node, bits, top)
        self.late = []
        for c in sorted({cl["c"] for cl in clients}):
            self.stats_check(c)

    def read_view(self, c, db):
        """What the checker needs to know of a database before generating:
        the server's settings and the layouts the database defines."""
        cl = self.clusters[c]
        try:
            conn = cl.connect(db)
        except psycopg2.Error:
            return None
        try:
            with conn.cursor() as cur:
                # pg_settings, whose setting is in the base unit, unlike SHOW's "1s"
                cur.execute("SELECT name, setting FROM pg_settings WHERE name IN ('idgen.node_id', "
                            "'idgen.node_bits', 'idgen.epoch', 'idgen.clock_offset_ms', 'idgen.max_lead_ms')")
                s = dict(cur.fetchall())
                bits, epoch, offset, lead = (
                    int(s["idgen.node_bits"]), s["idgen.epoch"],
                    int(s["idgen.clock_offset_ms"]), int(s["idgen.max_lead_ms"]))
                leased = self.leasing(c)
                node = None if leased else int(s["idgen.node_id"])
                layouts = {}
                cur.execute("SELECT to_regclass('idgen_layout') IS NOT NULL")
                if cur.fetchone()[0]:
                    cur.execute("SELECT name, (extract(epoch FROM epoch) * 1000)::bigint, "
                                "(extract(epoch FROM time_unit) * 1000)::int, radix, fields, widths "
                                "FROM idgen_layout")
                    for name, e, tick, radix, fields, widths in cur.fetchall():
                        layouts[name] = Layout(name, e, tick, radix, fields, widths)
        finally:
            conn.close()
        if leased:
            # The registry's node id; a new holder starts above the mark of
            # its previous holders, however far ahead of its clock.
            lease = self.lease_of(c)
            if lease is not None:
                node = lease[0]
                self.lineage[c].hi = max(self.lineage[c].hi, lease[2] or 0)
        return {"node": node, "bits": bits, "epoch_ms": epoch_date_ms(epoch), "offset": offset,
                "lead": lead, "layouts": layouts, "leased": leased}

    def after_kill(self, kill):
        """Bring the server back after a kill; returns the killed server,
        and whether it restarted (a backend may have exited before)."""
        if not kill:
            return None, False
        cl = self.clusters[kill["c"]]
        if kill["what"] == "postmaster":
            cl.start()
            return kill["c"], True
        return kill["c"], cl.wait_ready()

    # -- the invariants
    def check_call(self, res, view, killed):
        func, layout_name = res["call"][0], res["call"][1]
        self.count_call(res)
        if res["error"] is not None:
            self.note_error(res, killed)
        if not res["ids"] or view is None:
            return
        if func in ("objectid", "uuidv7"):
            self.check_opaque(res, view)
            return
        if view.get("leased") and view["node"] is None:
            # leased during the call
            lease = self.lease_of(res["c"])
            view["node"] = lease[0] if lease else None
            if view["node"] is None:
                raise Violation("wrong node", layout_name, "%s/%s %s handed out IDs with no node id"
                                " leased" % (res["c"], res["db"], res["text"]))
        layout = self.layout_of(layout_name, view)
        if layout is None:
            raise Violation("unknown layout", layout_name,
                            "%s/%s handed out IDs of layout %s, which the database did not define"
                            % (res["c"], res["db"], layout_name))
        key = layout.key(view["bits"])
        seen = self.seen[key]
        lin = self.lineage[res["c"]]
        lo = res["t0"] + view["offset"] - layout.tick_ms - 5
        hi = max(lin.hi, res["t1"] + view["offset"]) + lin.lead + HWM_STEP_MS + layout.tick_ms + SLACK_MS
        where = "%s/%s %s" % (res["c"], res["db"], res["text"])
        for ident in res["ids"]:
            if ident in seen:
                raise Violation("repeated ID", layout.name,
                                "%d of %s handed out again by %s at step %d; first at step %d"
                                % (ident, layout.describe(), where, self.step, seen[ident]))
            seen[ident] = self.step
            lin.newest = max(lin.newest, self.check_decode(ident, layout, view, lo, hi, where))
        self.check_frontier(res, layout, view, where)
        self.checked[(func, layout.name)] += len(res["ids"])

    def check_frontier(self, res, layout, view, where):
        """IDs of this run above every ID of the lineage's earlier runs that
        they could equal (checks.Frontier)."""
        frontier = self.lineage[res["c"]].frontier
        group, node, bits = layout.group(), view["node"], view["bits"]
        top = max(res["ids"])
        if view.get("leased"):
            self.check_lease_handover(res, layout, group, node, bits, where)
        if res.get("late"):
            self.late.append((res["c"], group, node, bits, top))
            return
        # a leasing server's node id may change: it continues above every ID it made
        bound, why = frontier.bound(group, node, bits, layout.bits_matter(), bool(view.get("leased")))
        low = min(res["ids"])
        if bound is not None and low <= bound:
            raise Violation("resumed below", layout.name,
                            "%d of %s from %s at step %d (node %d, node_bits %d) is not above %d,"
                            " handed out before a restart, crash or promotion (node %d,"
                            " node_bits %d)" % (low, layout.describe(), where, self.step, node,
                                                bits, bound, why[0], why[1]))
        frontier.add(group, node, bits, top)

    def check_lease_handover(self, res, layout, group, node, bits, where):
        """A leased node id changes hands upwards: IDs a server makes under
        it are above every ID another server made under it before (its
        new holder starts above the old one's mark; the old one, past its
        fence or woken after its lease was taken, makes none)."""
        holder = self.holder.get(node)
        if holder is not None and holder[0] != res["c"]:
            raise Violation("two holders", layout.name,
                            "%s made IDs under node id %d at step %d (e.g. %d), which %s has held since"
                            " step %d" % (where, node, self.step, min(res["ids"]), holder[0], holder[1]))
        tops = self.lease_tops[(group, node, bits)]
        others = [(top, c) for c, top in tops.items() if c != res["c"]]
        low = min(res["ids"])
        if others and low <= max(others)[0]:
            bound, who = max(others)
            raise Violation("resumed below", layout.name,
                            "%d of %s from %s at step %d (leased node id %d) is not above %d, which"
                            " %s made under that node id before" % (low, layout.describe(), where,
                                                                    self.step, node, bound, who))
        if others and res["c"] not in tops:
            self.handovers += 1
        tops[res["c"]] = max(tops.get(res["c"], 0), max(res["ids"]))

    def check_decode(self, ident, layout, view, lo, hi, where):
        values = layout.decode(ident)
        t = values["time"]
        if not lo <= t <= hi:
            raise Violation("wrong time", layout.name,
                            "%d of %s from %s decodes to %s, outside %s .. %s (offset %d ms)"
                            % (ident, layout.describe(), where, fmt_ms(t), fmt_ms(lo), fmt_ms(hi),
                               view["offset"]))
        problem = node_problem(layout, values, view["node"], view["bits"])
        if problem:
            raise Violation("wrong node", layout.name, "%d of %s from %s: %s"
                            % (ident, layout.describe(), where, problem))
        return t + layout.tick_ms

    def check_opaque(self, res, view):
        """objectid and UUIDv7: unique over the run, time near the clock."""
        func = res["call"][0]
        seen = self.seen[(func,)]
        lin = self.lineage[res["c"]]
        lo = res["t0"] + view["offset"] - 1005
        hi = max(lin.hi, res["t1"] + view["offset"]) + 1000 + SLACK_MS
        for ident in res["ids"]:
            if ident in seen:
                raise Violation("repeated ID", func, "%x handed out again at step %d; first at step %d"
                                % (ident, self.step, seen[ident]))
            seen[ident] = self.step
            t = (ident >> 64) * 1000 if func == "objectid" else ident >> 80
            if not lo <= t <= hi:
                raise Violation("wrong time", func, "%x from %s/%s has time %s, outside %s .. %s"
                                % (ident, res["c"], res["db"], fmt_ms(t), fmt_ms(lo), fmt_ms(hi)))
        self.checked[(func, "")] += len(res["ids"])

    def layout_of(self, name, view):
        if name in (None, "idgen"):
            return default_layout(view["epoch_ms"], view["bits"])
        if name in view["layouts"]:
            return view["layouts"][name]
        try:
            return builtin(name)
        except KeyError:
            return None

    # -- idgen_stats against the IDs handed out
    def stats_begin(self, c, dbs):
        """Zeroes c's counts, in the first database that has idgen_stats."""
        cl = self.clusters[c]
        for db in dict.fromkeys(list(dbs) + DBS):
            try:
                cl.query(db, "SELECT idgen_stats_reset()")
            except psycopg2.Error:
                continue
            self.counts[c] = {"db": db, "expected": collections.Counter(), "unknown": set()}
            return

    def count_call(self, res):
        counts = self.counts.get(res["c"])
        func, layout_name = res["call"][0], res["call"][1]
        if counts is None or func in ("objectid", "uuidv7"):
            return
        name = "idgen" if layout_name is None else layout_name
        if res["error"] is not None:
            counts["unknown"].add(name)     # it may have made IDs it did not hand out
        else:
            counts["expected"][name] += len(res["ids"])

    def stats_check(self, c):
        counts = self.counts.pop(c, None)
        if counts is None or not self.live(c):
            return
        try:
            rows = self.clusters[c].query(counts["db"], "SELECT layout, sum(ids) FROM idgen_stats "
                                                        "GROUP BY layout")
        except psycopg2.Error as e:
            self.op_errors["reading idgen_stats: %s" % normalize(str(e))] += 1
            return
        bad = stats_mismatch(counts["expected"], {name: int(n) for name, n in rows},
                             counts["unknown"])
        if bad:
            raise Violation("stats count", bad[0],
                            "server %s at step %d: idgen_stats.ids of layout %s is %d, and the"
                            " sessions since idgen_stats_reset() were handed %d"
                            % (c, self.step, bad[0], bad[2], bad[1]))

    # -- the outbox and its poller (docs/outbox.md)
    def do_outbox(self, op):
        c, db = op["c"], op["db"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        cl.query(db, OUTBOX_DDL)
        view = self.read_view(c, db)
        poller = self.pollers.setdefault((c, db), Poller())
        where = "%s/%s" % (c, db)
        self.touch(c)
        self.stats_begin(c, [db])
        held = self.hold_commits(c, op.get("hold_ms", 0))
        try:
            results, problems = run_outbox(cl, db, op["writers"], poller, self.step, where,
                                           self.refusals)
        finally:
            if held is not None:
                held.join()
        self.touch(c)
        for res in results:
            if res["error"] is not None and res["error"][0] == "23505":
                raise Violation("repeated ID", "idgen", "%s: an outbox insert repeated a key: %s"
                                % (where, res["error"][1].splitlines()[0]))
            self.check_call(res, view, None)
        if problems:
            raise problems[0]
        self.poll(c, db)
        self.stats_check(c)

    def hold_commits(self, c, hold_ms):
        """Stops the walreceiver of c's synchronous standby for hold_ms:
        c's commits meanwhile have their commit record and wait, invisible,
        while the poller polls.  Returns the thread that resumes it, or
        None where c has no synchronous standby."""
        sbs = [s for s, p in self.primary_of.items()
               if p == c and self.sync.get(s) and self.live(s, "standby")]
        if not hold_ms or not sbs:
            return None
        rows = self.clusters[sbs[0]].query("postgres", "SELECT pid FROM pg_stat_wal_receiver")
        if not rows or rows[0][0] is None:
            return None
        pid = rows[0][0]
        os.kill(pid, signal.SIGSTOP)
        self.refusals["commits held by a stopped synchronous standby"] += 1

        def resume():
            time.sleep(hold_ms / 1000.0)
            os.kill(pid, signal.SIGCONT)
        thread = threading.Thread(target=resume)
        thread.start()
        return thread

    def poll(self, c, db):
        """One poll of the recipe, then every row under the cursor must
        have been read."""
        poller = self.pollers[(c, db)]
        where = "%s/%s" % (c, db)
        try:
            conn = self.clusters[c].connect(db)
        except psycopg2.Error as e:
            self.op_errors["poll: %s" % normalize(str(e))] += 1
            return
        try:
            if poll_once(conn, poller, self.step, where, self.refusals):
                with conn.cursor() as cur:
                    cur.execute("SELECT id FROM chaos_outbox WHERE id < %s", (poller.cursor,))
                    poller.check_missed([r[0] for r in cur.fetchall()], self.step, where)
        except psycopg2.Error as e:
            self.op_errors["poll: %s" % normalize(str(e))] += 1
        finally:
            conn.close()

    def poll_all(self):
        for c, db in list(self.pollers):
            if self.live(c):
                self.poll(c, db)

    def note_error(self, res, killed):
        code, msg = res["error"]
        if code == LOST:
            if killed is None or killed != res["c"]:
                raise Violation("connection lost", None, "%s/%s lost its connection in %s with no kill: %s"
                                % (res["c"], res["db"], res["text"], msg))
            self.refusals["connection lost to our SIGKILL"] += 1
        elif code == "XX000" and killed is None:
            raise Violation("internal error", res["call"][1], "%s/%s %s: %s"
                            % (res["c"], res["db"], res["text"], msg))
        elif killed is not None and code in ("57P01", "57P02", "57P03", "08006", "08003"):
            self.refusals["terminated by our SIGKILL"] += 1
        else:
            self.refusals["%s %s" % (code, normalize(msg))] += 1

    def close(self):
        if self.registry_frozen is not None:
            self.wake_registry()
        for c in list(self.frozen):
            self.do_thaw({"c": c})
        for s in list(self.receivers):
            self.do_receiver({"s": s, "stop": False})
        for cl in self.clusters.values():
            cl.remove()


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def fmt_ms(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000.0)) + ".%03d" % (int(ms) % 1000)


# -- clients
SQL = {
    "next": "SELECT string_agg(idgen_next({args})::text, ',') FROM generate_series(1, {m})",
    "batch": "SELECT string_agg(i::text, ',') FROM idgen_next_batch({args}) i",
    "block": "SELECT string_agg(idgen_next_block({args})::text, ',') FROM generate_series(1, {m})",
    "objectid": "SELECT string_agg(objectid()::text, ',') FROM generate_series(1, {m})",
    "uuidv7": "SELECT string_agg(replace(idgen_uuidv7()::text, '-', ''), ',') FROM generate_series(1, {m})",
}


def call_sql(call):
    func, layout, n, m = call
    args = ([str(n)] if func in ("batch", "block") else []) + (["'%s'" % layout] if layout else [])
    return SQL[func].format(args=", ".join(args), m=m)


def parse_ids(call, text):
    func, _, n, _ = call
    if not text:
        return []
    if func in ("objectid", "uuidv7"):
        return [int(x, 16) for x in text.split(",")]
    ids = [int(x) for x in text.split(",")]
    if func == "block":
        return [first + k for first in ids for k in range(n)]
    return ids


def run_client(clusters, spec, out, pids, index):
    cl = clusters[spec["c"]]
    base = {"c": spec["c"], "db": spec["db"]}
    try:
        conn = cl.connect(spec["db"], spec.get("timeout_ms", 30000))
    except psycopg2.Error as e:
        out.append(dict(base, call=None, error=normalize(str(e))))
        return
    base["conn_ms"] = now_ms()
    pids[index] = conn.get_backend_pid()
    try:
        for call in spec["calls"]:
            res = dict(base, call=call, text=call_sql(call), ids=[], error=None)
            res["t0"] = now_ms()
            try:
                with conn.cursor() as cur:
                    cur.execute(res["text"])
                    text = cur.fetchone()[0]
                res["t1"] = now_ms()
                res["ids"] = parse_ids(call, text)
            except psycopg2.Error as e:
                res["t1"] = now_ms()
                code = e.pgcode or LOST
                res["error"] = (code, str(e))
            out.append(res)
            if res["error"] and (res["error"][0] == LOST or conn.closed):
                break
    finally:
        conn.close()


def run_clients(clusters, clients, kill, serial=False):
    """Every client in a thread of its own, all at once (or one after
    another); the kill, if any, fires after its delay from the start.
    Returns the results and when the kill was sent."""
    out, pids = [], {}
    kill_ms = None
    threads = [threading.Thread(target=run_client, args=(clusters, spec, out, pids, i))
               for i, spec in enumerate(clients)]
    for t in threads:
        t.start()
        if serial:
            t.join()
    if kill:
        time.sleep(kill["after_ms"] / 1000.0)
        cl = clusters[kill["c"]]
        kill_ms = now_ms()
        if kill["what"] == "postmaster":
            cl.kill_postmaster()
        else:
            idx = kill["client"] if kill["client"] is not None and kill["client"] < len(clients) else 0
            pid = pids.get(idx)
            if pid is None or clients[idx]["c"] != kill["c"]:
                pid = backend_pid(cl)
            if pid:
                cl.kill_backend(pid)
    for t in threads:
        t.join()
    return out, kill_ms


# -- the outbox: writers and their poller, at once
def create_extension(version):
    if version == CURRENT:
        return "CREATE EXTENSION idgen"
    return "CREATE EXTENSION idgen VERSION '%s'" % version


def poll_once(conn, poller, step, where, refusals):
    """h := idgen_horizon(); read [cursor, h); cursor := h.  False when
    idgen refused the horizon (a standby, a bad setting)."""
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT idgen_horizon()")
        except psycopg2.Error as e:
            if e.pgcode is None:
                raise
            refusals["horizon: %s %s" % (e.pgcode, normalize(str(e)))] += 1
            return False
        h = cur.fetchone()[0]
        if poller.waits(h):
            return True
        poller.take_horizon(h, step, where)
        cur.execute("SELECT id FROM chaos_outbox WHERE id >= %s AND id < %s ORDER BY id",
                    (poller.cursor, h))
        poller.take_rows([r[0] for r in cur.fetchall()], h, step, where)
        try:
            cur.execute("SELECT idgen_horizon(%s)", (NAMED_HORIZON,))
        except psycopg2.Error as e:
            if e.pgcode is None:
                raise
            refusals["horizon('%s'): %s %s" % (NAMED_HORIZON, e.pgcode, normalize(str(e)))] += 1
            return True
        poller.take_named(cur.fetchone()[0], step, where)
    return True


def write_outbox(cl, db, index, txns, out):
    """One writer: each transaction inserts rows, holds its IDs for a while,
    inserts one more, and commits or rolls back."""
    base = {"c": cl.name, "db": db}
    try:
        conn = cl.connect(db)
    except psycopg2.Error:
        return
    sql = ("INSERT INTO chaos_outbox (w) SELECT %d FROM generate_series(1, {n}) RETURNING id"
           % index)
    try:
        for rows, hold_ms, end in txns:
            with conn.cursor() as cur:
                try:
                    cur.execute("BEGIN")
                    insert_rows(cur, base, sql, rows, out)
                    if hold_ms:
                        cur.execute("SELECT pg_sleep(%s)", (hold_ms / 1000.0,))
                    insert_rows(cur, base, sql, 1, out)
                    cur.execute(end)
                except psycopg2.Error:
                    if conn.closed:
                        return
                    cur.execute("ROLLBACK")
    finally:
        conn.close()


def insert_rows(cur, base, sql, n, out):
    """An insert of n rows, recorded as a call that made n IDs."""
    res = dict(base, call=["next", None, 1, n], text=sql.format(n=n), ids=[], error=None,
               t0=now_ms())
    out.append(res)
    try:
        cur.execute(res["text"])
        res["ids"] = [r[0] for r in cur.fetchall()]
    except psycopg2.Error as e:
        res["error"] = (e.pgcode or LOST, str(e))
        raise
    finally:
        res["t1"] = now_ms()


def run_outbox(cl, db, writers, poller, step, where, refusals):
    """The writers in threads, and a poller polling until they are done
    and once more after; returns the writers' results and the violations
    the poller found."""
    out, problems = [], []
    done = threading.Event()

    def poll_loop():
        try:
            conn = cl.connect(db)
        except psycopg2.Error:
            return
        # The writers' first IDs come first: a horizon taken before them
        # (on a restarted server, the first since its start) bounds every
        # later one, and would hide what they publish.
        time.sleep(0.05)
        try:
            while True:
                last = done.is_set()
                poll_once(conn, poller, step, where, refusals)
                if last:
                    return
                time.sleep(0.01)
        except Violation as v:
            problems.append(v)
        except psycopg2.Error as e:
            refusals["poller: %s" % normalize(str(e))] += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=write_outbox, args=(cl, db, i, txns, out))
               for i, txns in enumerate(writers)]
    poller_thread = threading.Thread(target=poll_loop)
    for t in threads + [poller_thread]:
        t.start()
    for t in threads:
        t.join()
    done.set()
    poller_thread.join()
    return out, problems


def backend_pid(cl):
    rows = cl.query("postgres", "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                "AND pid <> pg_backend_pid() LIMIT 1")
    if rows:
        return rows[0][0]
    return cl.query("postgres", "SELECT pg_backend_pid()")[0][0]


def make_template(pg, root):
    """One initdb for the whole run (and every replay while shrinking)."""
    path = os.path.join(user_dir(root), "template")
    as_user([pg.tool("initdb"), "-D", path, "-A", "trust", "-U", "postgres", "--no-sync"])
    return path

