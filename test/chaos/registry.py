"""The registry of node id leases: a cluster of its own that nothing
generates in, and the ops that stop it, stall it, fail it over to its
standby or restore it from a dump; after each, whether its holders renewed
or lost their node ids."""

import os
import shutil
import signal
import time

import psycopg2

from cluster import Cluster, as_user, cmdline
from invariants import lease_kept
from layouts import epoch_date_ms
from params import LEASE_POOL, LEASE_S

REGISTRY = "REG"            # the registry's cluster: it generates nothing
REGISTRY_STANDBY = "REGS"   # its standby, until it is promoted into its place
RESERVED = "chaos: reserved"    # the holder of node ids the registry must not hand out
BY_HAND = "chaos: set by hand"  # the holder of node ids set by hand
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


class Registry:
    def registry(self):
        cl = self.clusters.get(REGISTRY)
        return cl if cl is not None and self.role.get(REGISTRY) == "registry" else None

    def do_registry(self, op):
        """The registry: a cluster of its own, which nothing generates in,
        so that stopping it stops no server that generates; or a
        three-member etcd cluster in its place (op's etcd)."""
        if op.get("etcd"):
            return self.etcd_registry(op)
        cl = self.new_cluster(REGISTRY, {"node_id": 0})
        self.clusters[REGISTRY] = cl
        self.role[REGISTRY] = "registry"
        cl.start()
        cl.query("postgres", "CREATE EXTENSION idgen")
        cl.query("postgres", RESERVE_SQL, (self.lease_epoch_ms, BY_HAND, "100 years", "100 years",
                                           op["reserved"]))

    def registry_address(self):
        """idgen.node_registry of the leasing servers."""
        if self.etcd is not None:
            return self.etcd.url()
        return "host=%s port=5432 dbname=postgres" % os.path.join(self.root, REGISTRY)

    def do_registry_stop(self, op):
        if self.etcd is not None:
            return self.etcd_stop()
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        self.before_outage = (cl, {c: lease[0] for c, lease in ((c, self.lease_of(c)) for c in self.lessees())
                                   if lease and lease[1] == "held"})
        cl.stop("fast")

    def do_registry_start(self, op):
        """The registry back: every holder renews (or leases again) and generates."""
        if self.etcd is not None:
            return self.etcd_start()
        cl = self.registry()
        if cl is None or cl.running:
            return False
        cl.start()
        now = {c: self.wait_lease(c, 3 * int(self.clusters[c].settings["node_lease_s"])) for c in self.lessees()}
        held = {lease[0]: c for c, lease in now.items() if lease and lease[1] == "held"}
        stopped, before = self.before_outage
        # the holders when this registry stopped, not one a failover or
        # a restore put in its place since
        for c, node in (before.items() if stopped is cl else ()):
            if c in now and c not in self.frozen and held.get(node, c) == c:
                lease_kept(c, node, now[c][:2] if now[c] else None,
                           "before the registry stopped (and no other server holds it since)", or_none=False,
                           or_another=True)
        self.before_outage = (None, {})

    def do_reserve(self, op):
        if self.etcd is not None:
            return self.etcd_reserve()
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        # but the node id of a frozen holder, which a new server is to lease
        but = self.frozen.get(op.get("but"), (None, None, None))[2]
        cl.query("postgres", RESERVE_SQL, (self.lease_epoch_ms, RESERVED,
                                           "1 day", "1 day", [n for n in LEASE_POOL if not but or n != but[0]]))

    def do_lease_epoch(self, op):
        """The leases the checker holds (node ids set by hand, reserved)
        moved to another epoch, the leasing servers' from now on: the
        registry refuses live leases under two."""
        epoch_ms = epoch_date_ms(op["epoch"])
        if self.etcd is not None:
            done = self.etcd_lease_epoch(epoch_ms)
        elif self.registry() is None or not self.registry().running:
            done = False
        else:
            done = self.registry().query("postgres", "UPDATE idgen_lease SET epoch_ms = %s "
                                         "WHERE holder IN (%s, %s) AND NOT released",
                                         (epoch_ms, BY_HAND, RESERVED))
        if done is not False:
            self.lease_epoch_ms = epoch_ms
        return done

    def do_unreserve(self, op):
        if self.etcd is not None:
            return self.etcd_unreserve()
        cl = self.registry()
        if cl is None or not cl.running:
            return False
        # as a holder's release leaves its row
        cl.query("postgres", "UPDATE idgen_lease SET released = true, expires_at = least(expires_at, "
                             "clock_timestamp()) WHERE holder = %s", (RESERVED,))

    def do_registry_freeze(self, op):
        """The registry stalled: SIGSTOP its postmaster and all its children,
        so that calls in flight and new connections hang, as on a paused VM;
        or (how "lock") its lease table locked against writes by a
        transaction left open, so that calls queue behind the lock and
        would commit when it goes, after their callers gave up (issue #39
        row 3).  Its holders' node ids then are what it must give back."""
        cl = self.registry()
        if cl is None or not cl.running or self.registry_frozen is not None:
            return False
        pm = cl.postmaster_pid()
        if pm is None:
            return False
        leases = {c: self.lease_of(c) for c in self.lessees()}
        held = {c: lease[0] for c, lease in leases.items() if lease and lease[1] == "held"}
        if op.get("how") == "lock":
            conn = cl.connect("postgres", timeout_ms=0)
            conn.autocommit = False
            with conn.cursor() as cur:
                cur.execute("LOCK TABLE idgen_lease IN EXCLUSIVE MODE")
            self.registry_frozen = (conn, held, self.step)
            return
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
            if c in held:
                lease_kept(c, held[c], now, "when the registry stalled at step %d, %d s after it woke"
                           " at step %d" % (step, op["wait_s"], self.step))
            if c not in held:
                self.refusals["registry_stall drill: a server that waited %s" % (
                    "leased a node id" if now and now[1] == "held" else "leased none")] += 1

    def wake_registry(self):
        """SIGCONT the stalled registry; returns whom it saw holding what,
        and the step it stalled at."""
        stalled, held, step = self.registry_frozen
        self.registry_frozen = None
        if not isinstance(stalled, list):
            try:
                stalled.close()     # the lock's transaction, rolled back
            except psycopg2.Error:
                pass
            return held, step
        for pid in stalled:
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
