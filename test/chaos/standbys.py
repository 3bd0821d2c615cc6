"""Streaming standbys: made, restarted, cut off from their primary, and
promoted (a synchronous one continues its primary's lineage)."""

import os
import signal
import time

from cluster import Cluster
from lineage import Lineage


class Standbys:
    def do_standby(self, op):
        c, s = op["c"], op["s"]
        if not self.live(c) or s in self.clusters:
            return False
        p = self.clusters[c]
        cl = Cluster(self.pg, self.root, s)
        cl.create_standby(p)
        cl.base_offset_ms += op.get("base_ms", 0)
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
        if op.get("later"):
            self.refusals["failover drill: the standby's idgen.epoch a day later"] += 1
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
                self.lose_cut_off(s)
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
        """A synchronous standby cut off, so that the primary's sessions
        wait for marks it never confirms: its walreceiver stopped, or, with
        "sender", its primary's walsender (no crash of the standby follows
        then: lose_cut_off); or woken."""
        s = op["s"]
        if op["stop"]:
            if not self.live(s, "standby") or s in self.receivers or not self.live(self.primary_of[s]):
                return False
            if op.get("sender"):
                pid = self.streaming_pid(self.clusters[self.primary_of[s]], "SELECT pid FROM pg_stat_replication "
                                         "WHERE application_name = %s AND state = 'streaming'", (s,))
            else:
                pid = self.streaming_pid(self.clusters[s], "SELECT pid FROM pg_stat_wal_receiver "
                                                           "WHERE status = 'streaming'")
            if pid is None:
                return False
            self.receivers[s] = pid
            if op.get("sender"):
                self.senders.add(s)
            os.kill(pid, signal.SIGSTOP)
        elif s in self.receivers:
            self.senders.discard(s)
            os.kill(self.receivers.pop(s), signal.SIGCONT)

    def lose_cut_off(self, s):
        """A standby cut off until its primary died loses what it did not
        get, as across a partition: its stopped walreceiver is killed, not
        woken to read what its socket still holds (the standby then
        reinitialises and replays what it wrote); a stopped walsender died
        with its primary, and nothing reached the standby's socket."""
        pid = self.receivers.pop(s, None)
        if pid is None or s in self.senders:
            self.senders.discard(s)
            return
        cl = self.clusters[s]
        cl.kill_backend(pid)
        cl.wait_ready()

    @staticmethod
    def streaming_pid(cl, query, args=None, timeout=30):
        """The pid of a walreceiver or walsender (query) once it streams,
        None if it never does: a standby restarted just before starts its
        receiver later, and a cut-off that found none was no cut-off at
        all."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = cl.query("postgres", query, args)
            if rows and rows[0][0] is not None:
                return rows[0][0]
            time.sleep(0.1)
        return None

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
