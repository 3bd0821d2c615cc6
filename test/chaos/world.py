"""The world: real servers that ops are run against, one op at a time,
and what the checker knows of them (their roles, lineages, pollers,
leases).  After every op it asks invariants.py whether what the servers
did holds; the ops of each concern are in their own module (bursts,
outbox, standbys, restores, leases, registry), as mixins of World.

An error idgen raises on purpose is a refusal, counted and not a violation.
"""

import collections
import datetime
import os
import time

import psycopg2

from adopts import Adopts
from bursts import Bursts
from clients import create_extension, normalize, now_ms
from cluster import Cluster, as_user, user_dir
from invariants import Violation, lease_kept, no_crash, previous_mark_kept
from layouts import FAMILIES, epoch_date_ms
from leases import Leases
from markfile import MarkFile
from nodecheck import NodeCheck
from lineage import Lineage
from ops import Model
from outbox import Outbox
from probes import Probes
from redefines import Redefines
from params import CURRENT, DBS
from etcd_ops import EtcdRegistry
from answers import request_taken
from diagnostics import refusal_coded
from contract import Contract, documented
from flaws import Flaws
from hostile import Hostile
from registry import Registry
from registry_probes import RegistryProbes
from restores import Restores
from standbys import Standbys

# Ops after which every outbox poller polls: those that restart a server,
# step its clock or promote one (and bursts with a SIGKILL).
POLL_AFTER = {"restart", "reload", "promote", "standby", "ext_recreate", "ext_update", "pause",
              "lose_hwm", "resume", "registry_start", "thaw", "registry_thaw", "registry_restore",
              "registry_failover", "etcd_start", "etcd_thaw"}
# Ops that make or change an extension's objects, after which a role
# without privileges may use no more than it may (Hostile.check_reach), and
# the extension is that of a fresh install (Contract.check_contract).
REACH_CHECK_AFTER = {"cluster", "createdb", "ext_recreate", "ext_update", "upgrade", "rollback", "move",
                     "dump_restore", "registry", "registry_restore"}
# Ops whose request is valid as drawn, which idgen must take (but a
# definition timed to end, which may have ended by the time it is written).
TAKEN = {"define", "redefine", "createdb", "ext_update", "ext_recreate"}
# Ops that make, start or promote a server, after which it is asked
# inputs at the edges of README's ranges (Probes.check_inputs).
INPUT_CHECK_AFTER = {"cluster", "createdb", "restart", "promote", "clone", "move", "upgrade", "rollback",
                     "dump_restore"}
# Ops that change a server's node id, node_bits or epoch, or add a server.
NODE_CHECK_AFTER = {"cluster", "restart", "standby", "promote", "clone"}
# Ops after which no two servers may hold one node id.
LEASE_CHECK_AFTER = {"cluster", "clone", "restart", "registry_start", "thaw", "stop_frozen", "unreserve",
                     "registry_thaw", "registry_restore", "registry_failover", "etcd_start", "etcd_thaw"}


# The longest a pause waits for a server's clock to pass its line's IDs.
PAST_WAIT_MS = 60000


class World(Adopts, Bursts, Contract, EtcdRegistry, Flaws, Hostile, Leases, MarkFile, NodeCheck, Outbox, Probes,
            Redefines, Registry, RegistryProbes, Restores, Standbys):
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
        self.found = []             # violations found mid-op, raised once it is done
        self.op_errors = collections.Counter()
        self.skipped = 0
        self.step = 0
        self.sync = {}              # standby -> synchronous?
        self.pollers = {}           # (server, database) -> Poller of its outbox
        self.counts = {}            # server -> IDs handed out since idgen_stats_reset()
        self.late = []              # IDs of a run that began during a burst
        self.frozen = {}            # server -> (what, pids SIGSTOPped, its lease then)
        self.released = {}          # retired leasing server -> its lease then
        self.receivers = {}         # standby -> the pid SIGSTOPped to cut it off: its walreceiver's,
        self.senders = set()        # or, for these, its primary's walsender's
        self.handovers = 0          # IDs made under a node id another server made IDs under
        self.hostile_checked = 0    # databases checked after an op with a hostile session
        self.inputs_checked = 0     # calls at or past the edges of README's ranges
        self.nodes_checked = 0      # idgen_check_nodes() calls judged
        self.schemas_checked = 0    # databases whose idgen matched a fresh install (Contract)
        self.schema_ref = None
        self.readme_settings, self.error_codes = documented()
        # (group, leased node id, node_bits) -> {server: largest ID it made under it}
        self.lease_tops = collections.defaultdict(dict)
        self.holder = {}            # leased node id -> (server seen holding it, step)
        self.registry_frozen = None     # (pids SIGSTOPped or the lock's connection, {server: node id held}, step)
        self.registry_dump = None       # the path of the registry's last pg_dump
        self.etcd = None                # the etcd registry (etcd.py), in the registry's place
        self.etcd_held = ({}, 0)        # {server: node id held} when an etcd member failed, the step
        self.lease_refusals = 0         # calls refused for want of a lease then
        self.before_outage = (None, {})     # (the registry stopped, {server: node id it held})
        self.fold_pending, self.epoch_later_run = {}, set()     # MarkFile's: restarts to check, epochs moved
        self.table_epoch = {}           # server -> the idgen.epoch of one table's IDs loaded into it
        # the leasing servers' idgen.epoch, under which the checker holds its leases
        self.lease_epoch_ms = epoch_date_ms(Model.lease_settings()["epoch"])

    def live(self, c, role="primary"):
        cl = self.clusters.get(c)
        return cl is not None and cl.running and self.role.get(c) == role and \
            (c not in self.frozen or self.frozen[c][0] != "server")

    def conf(self, s):
        """A leasing server's settings: the registry's conninfo, no node id."""
        s = dict(s)
        if s.pop("lease", False):
            s.pop("node_id", None)
            s["node_registry"] = self.registry_address()
        return s

    def touch(self, c):
        """Raise the lineage's highest clock to the clock in force now."""
        cl = self.clusters[c]
        lin = self.lineage[c]
        lin.hi = max(lin.hi, cl.idgen_clock_ms())
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
        no_crash(c, cl.scan_log())

    def run(self, op):
        """Runs one op and checks the invariants.  Violations of the kinds
        in self.ignore (--ignore, to reach other bugs of an old version)
        are counted, and the run goes on."""
        try:
            self.run_op(op)
            after = []
        except Violation as v:
            after = [v]
        # those found mid-op first: they came first
        for v in self.found + after:
            v.drill = op.get("drill") or op.get("part")
            if v.kind not in self.ignore and "%s@%s" % (v.kind, v.drill) not in self.ignore:
                raise v
            if not self.ignored[v.kind]:
                print("  ignored (--ignore) at step %d: %s" % (self.step, v), flush=True)
            self.ignored[v.kind] += 1

    def found_mid_op(self, check, *args):
        """check(*args), a Violation it raises kept until the op is done
        (run_op): raised mid-op, it would leave the op half done, and the
        world unlike the model under --ignore."""
        try:
            check(*args)
        except Violation as v:
            self.found.append(v)

    def run_op(self, op):
        self.step += 1
        self.found = []
        handler = getattr(self, "do_" + op["op"])
        try:
            done = handler(op)
            if op.get("adopt") and done is not False:
                self.do_adopt(op["adopt"])
            if op.get("then_restart") and done is not False:
                then = op["then_restart"]
                self.do_restart(dict(then, op="restart", mode="fast", set=dict(self.clusters[then["c"]].settings)))
        except (RuntimeError, psycopg2.Error) as e:
            if isinstance(e, psycopg2.Error) and op["op"] in TAKEN and not op.get("ends_in_ms") and \
                    self.live(op["c"]):
                self.found_mid_op(request_taken, op, e.pgcode, str(e), "%s at step %d" % (op["c"], self.step))
            if isinstance(e, psycopg2.Error) and e.pgcode:
                self.found_mid_op(refusal_coded, self.error_codes, e.pgcode, str(e), "%s, step %d" % (op["op"], self.step))
            self.op_errors["%s: %s" % (op["op"], normalize(str(e)))] += 1
            done = True
        if done is False:
            self.skipped += 1
        elif op["op"] == "burst" and {"full", "states"} & {op.get("drill"), op.get("part")}:
            self.note_capacity(op["clients"][0]["c"])
        if done is not False:
            try:
                self.check_hostile(op)
                self.check_saved(op)
                self.check_folds()
                if op["op"] in REACH_CHECK_AFTER:
                    self.check_reach()
                    self.check_contract()
                # "unprobed": the drill's next op must be the first to generate
                if op["op"] in INPUT_CHECK_AFTER and not op.get("unprobed"):
                    self.check_inputs(op)
                if op["op"] in NODE_CHECK_AFTER:
                    self.check_nodes()
                if op["op"] in ("standby", "standby_restart"):
                    self.check_standby_dbs(op["s"])
            except psycopg2.Error as e:
                # a database the op failed to reach, say
                self.op_errors["%s, checked after: %s" % (op["op"], normalize(str(e)))] += 1
        for c in list(self.clusters):
            self.check_log(c)
        if op["op"] in LEASE_CHECK_AFTER:
            self.check_held()
            self.probe_registry()
        if (op["op"] in POLL_AFTER or (op["op"] == "burst" and op.get("kill"))) and op.get("poll", True):
            self.poll_all(op.get("poll_timeout_ms", 30000))

    def new_cluster(self, name, settings):
        cl = Cluster(self.pg, self.root, name)
        cl.create(self.template)
        cl.write_settings(self.conf(settings))
        return cl

    def do_cluster(self, op):
        cl = self.new_cluster(op["c"], op["set"])
        cl.unpolled = op.get("unpolled", False)
        self.clusters[op["c"]] = cl
        self.role[op["c"]] = "primary"
        self.lineage[op["c"]] = Lineage()
        cl.start()
        self.touch(op["c"])
        for db in op.get("dbs", []):
            cl.query("postgres", 'CREATE DATABASE "%s"' % db)
            cl.query(db, create_extension(CURRENT))
            self.plant_hostile(op["c"], db)
        if op["set"].get("lease"):
            # the lease stays visible whatever the ops do to db1-db3 (an
            # extension of 1.0 has no idgen_node_lease)
            cl.query("postgres", create_extension(CURRENT))
            lease = self.wait_lease(op["c"], op.get("wait_lease", 2 * op["set"]["node_lease_s"]))
            took = self.frozen.get(op.get("takes"), (None, None, self.released.get(op.get("takes"))))[2]
            if took is not None:
                # the frozen drill reached its case, or not (the registry's view)
                taken = lease and lease[:2] == (took[0], "held")
                self.refusals["%s drill: the new server %s the holder's node id"
                              % (op.get("part", "frozen"), "leased" if taken else "did not lease")] += 1
                if taken and op["takes"] not in self.frozen:
                    # released: the mark it reported for that node id came along
                    self.found_mid_op(previous_mark_kept, lease[2], self.lineage[op["takes"]].newest_of.get(took[0]),
                                      "%s, after %s, at step %d" % (op["c"], op["takes"], self.step))

    def do_restart(self, op):
        c = op["c"]
        if not self.live(c):
            return False
        self.touch(c)
        time.sleep(op.get("after_ms", 0) / 1000.0)     # the clock past the marks
        if op.get("tried_settings"):
            self.try_settings(op)
        cl = self.clusters[c]
        # a holder restarted cleanly gets its node id back, unless another
        # server was waiting for one (it may take the released id first)
        keep = self.lease_of(c) if op["mode"] == "fast" and self.all_held(c) else None
        gids = self.prepare_held(c, op["prepared"]) if op.get("prepared") else []
        resumed = op.get("resumed_in") and self.resume_before_restart(c, op["resumed_in"])
        before = self.before_restart(c)
        self.stop_releasing(c, op["mode"])
        self.lineage[c].frontier.new_run()
        if op.get("flawed_start"):
            self.start_flawed(op)
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.start()
        self.touch(c)
        self.restarted(c, before, flawed=bool(op.get("flawed_start")))
        if resumed and not op.get("flawed_start"):
            self.resumed(c, op["resumed_in"])
        if gids:
            self.commit_held(c, op["prepared"], gids)
        if cl.settings.get("node_registry"):
            now = self.wait_lease(c, 3 * int(cl.settings["node_lease_s"]))
            if keep is not None and keep[1] == "held":
                lease_kept(c, keep[0], now[:2] if now else None,
                           "before its fast restart at step %d" % self.step, or_none=True)

    def do_reload(self, op):
        """New settings, a clock step among them; with "held", a session of
        that database generates before and after (Counts.across_step_after)."""
        c = op["c"]
        if not self.live(c):
            return False
        self.touch(c)
        cl = self.clusters[c]
        held = cl.connect(op["held"]) if op.get("held") else None
        before = self.across_step_before(c, op["held"], held) if held else []
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.reload()
        self.wait_setting(cl, "idgen.clock_offset_ms", op["set"]["clock_offset_ms"] + cl.base_offset_ms)
        time.sleep(op.get("then_ms", 0) / 1000.0)      # nothing happens a while
        self.touch(c)
        if held:
            self.across_step_after(c, op["held"], held, before, op["set"])

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

    def do_define_many(self, op):
        """op's count layouts of one family at once, named prefix1, prefix2..."""
        if not self.live(op["c"]):
            return False
        fields, widths, unit, radix = FAMILIES[op["family"]]
        self.clusters[op["c"]].query(
            op["db"], "SELECT count(idgen_define_layout(%s || i, %s::timestamptz, %s::text[], "
                      "%s::int[], %s::interval, %s)) FROM generate_series(1, %s) i",
            (op["prefix"], op["epoch"] + " 00:00:00+00", list(fields), list(widths), unit, radix,
             op["count"]), self.search_path(op))

    def do_pause(self, op):
        """Nothing happens a while (the pollers poll after it); with
        "past", at least until that server's clock passes the newest ID
        its line handed out (up to PAST_WAIT_MS): a DBA waiting for the
        clock, which knows the IDs the table it loaded holds, not their
        time in every layout."""
        ms = op["ms"]
        c = op.get("past")
        if c is not None and self.live(c):
            cl = self.clusters[c]
            clock = now_ms() + int(cl.settings.get("clock_offset_ms", 0)) + cl.base_offset_ms
            ms = max(ms, min(self.lineage[c].newest - clock + 100, PAST_WAIT_MS))
        time.sleep(ms / 1000.0)
        if op.get("leases"):
            self.check_held()       # and each lease's state, as lease_of reads it

    def do_retire(self, op):
        if not self.live(op["c"]):
            return False
        if self.leasing(op["c"]):
            # the node id it releases, for a server that takes it (drill_release)
            self.released[op["c"]] = self.lease_of(op["c"])
        self.stop_releasing(op["c"], "fast")
        self.role[op["c"]] = "retired"

    def do_createdb(self, op):
        if not self.live(op["c"]):
            return False
        cl = self.clusters[op["c"]]
        cl.query("postgres", 'CREATE DATABASE "%s"' % op["db"])
        cl.query(op["db"], create_extension(op["version"]))
        self.plant_hostile(op["c"], op["db"])
        if op.get("flawed"):
            self.refuse_flawed(op)

    def do_dropdb(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].query("postgres", 'DROP DATABASE "%s" WITH (FORCE)' % op["db"])
        self.pollers.pop((op["c"], op["db"]), None)

    def define_sql(self, op):
        fields, widths, unit, radix = FAMILIES[op["family"]]
        epoch = op["epoch"] + " 00:00:00+00" if op["epoch"] else None
        if op.get("ends_in_ms") is not None:
            # its time field ends that long from now, by the server's clock
            cl = self.clusters[op["c"]]
            # in whole milliseconds, as a layout's epoch must be
            ms = int(now_ms()) + int(cl.settings.get("clock_offset_ms", 0)) + cl.base_offset_ms + \
                op["ends_in_ms"] - 2 ** widths[fields.index("time")]
            epoch = datetime.datetime.fromtimestamp(ms / 1000.0, datetime.timezone.utc).isoformat()
        return ("SELECT idgen_define_layout(%s, %s::timestamptz, %s::text[], %s::int[], %s::interval, %s)",
                (op["name"], epoch, list(fields), list(widths), unit, radix))

    def do_define(self, op):
        if not self.live(op["c"]):
            return False
        if op.get("flawed"):
            self.refuse_flawed(op)
        sql, args = self.define_sql(op)
        self.clusters[op["c"]].query(op["db"], sql, args, self.search_path(op))

    def do_drop(self, op):
        if not self.live(op["c"]):
            return False
        self.clusters[op["c"]].query(op["db"], "SELECT idgen_drop_layout(%s)", (op["name"],), self.search_path(op))

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

    def close(self):
        if self.registry_frozen is not None:
            self.wake_registry()
        for c in list(self.frozen):
            self.do_thaw({"c": c})
        for s in list(self.receivers):
            self.do_receiver({"s": s, "stop": False})
        for cl in self.clusters.values():
            cl.remove()
        if self.etcd is not None:
            self.etcd.close()


def make_template(pg, root):
    """One initdb for the whole run (and every replay while shrinking)."""
    path = os.path.join(user_dir(root), "template")
    as_user([pg.tool("initdb"), "-D", path, "-A", "trust", "-U", "postgres", "--no-sync"])
    return path
