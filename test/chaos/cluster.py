"""Throwaway PostgreSQL clusters for the chaos run: created by copying one
initdb'd template, listening on a Unix socket of their own only, run as the
unprivileged user postgres when we are root (initdb refuses root)."""

import os
import pwd
import re
import shutil
import signal
import subprocess
import time

import psycopg2

RUN_USER = "postgres" if os.getuid() == 0 else pwd.getpwuid(os.getuid()).pw_name

# Lines of the server log that mean a process died in a way we did not cause.
CHILD_EXIT = re.compile(
    r'(server process|background worker "[^"]*"|[a-z ]+ process) \(PID (\d+)\) '
    r'(was terminated by signal (\d+)|exited with exit code (\d+))')
PANIC = re.compile(r"\bPANIC:  (.*)")
TRAP = re.compile(r"^TRAP: (.*)", re.M)     # a failed assertion (--enable-cassert)
READY = re.compile(r"database system is ready to accept (read-only )?connections")

BASE_CONF = """
shared_preload_libraries = 'idgen'
listen_addresses = ''
port = 5432
max_connections = 60
shared_buffers = 16MB
fsync = off
restart_after_crash = on
lc_messages = 'C'
log_line_prefix = '%m [%p] %e '
log_min_messages = warning
wal_level = replica
max_wal_senders = 4
max_prepared_transactions = 10
# A standby reconnects to its restarted primary at once, not after 5 s, as
# sessions waiting for it as their synchronous standby would.
wal_retrieve_retry_interval = 100ms
include 'chaos.conf'
"""


class Pg:
    """The PostgreSQL installation under test."""

    def __init__(self, pg_config):
        self.bindir = subprocess.check_output([pg_config, "--bindir"], text=True).strip()

    def tool(self, name):
        return os.path.join(self.bindir, name)


def as_user(cmd, **kw):
    """Runs cmd as RUN_USER; raises with its output when it fails."""
    if os.getuid() == 0:
        cmd = ["runuser", "-u", RUN_USER, "--"] + cmd
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd[-6:]), res.stdout.strip()[-800:]))
    return res.stdout


def user_dir(path):
    os.makedirs(path, exist_ok=True)
    if os.getuid() == 0:
        shutil.chown(path, RUN_USER)
    return path


class Cluster:
    """One server.  Settings are kept in chaos.conf, rewritten whole, so that
    a restart or reload applies exactly the settings the op asked for."""

    def __init__(self, pg, root, name):
        self.pg = pg
        self.name = name
        self.dir = user_dir(os.path.join(root, name))
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self.log_offset = 0
        self.killed_pids = set()
        self.killed_backend = None  # (pid, log offset) of a SIGKILL not yet waited out
        self.settings = {}
        # added to every idgen.clock_offset_ms written: this host's clock,
        # set far off by a drill, which later ops' offsets are relative to
        self.base_offset_ms = 0
        self.running = False
        self.from_backup = False    # made by pg_basebackup: it replayed marks
        self.start_clock_ms = 0
        self.unpolled = False       # no idgen_horizon() taken here, not even by the probes

    # -- creation
    def create(self, template):
        as_user(["cp", "-a", template, self.data])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(BASE_CONF + "unix_socket_directories = '%s'\ncluster_name = '%s'\n"
                    % (self.dir, self.name))

    def create_fresh(self):
        """A cluster of its own initdb: a system identifier of its own, as
        a new cluster that pg_upgrade or a restore fills has."""
        as_user([self.pg.tool("initdb"), "-D", self.data, "-A", "trust", "-U", "postgres",
                 "--no-sync"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(BASE_CONF + "unix_socket_directories = '%s'\ncluster_name = '%s'\n"
                    % (self.dir, self.name))

    def create_standby(self, primary, clone=False):
        """A base backup of primary: a standby, or with clone a copy that
        starts as a primary of its own."""
        as_user([self.pg.tool("pg_basebackup"), "-D", self.data] + ([] if clone else ["-R"]) +
                ["-X", "stream", "-c", "fast", "-h", primary.dir, "-p", "5432", "-U", "postgres"])
        self.base_offset_ms = primary.base_offset_ms
        self.from_backup = True
        self.own_address()

    def own_address(self):
        """A copied data directory's settings made this cluster's: its
        socket directory and its name."""
        conf = os.path.join(self.data, "postgresql.conf")
        with open(conf) as f:
            text = f.read()
        text = re.sub(r"unix_socket_directories = .*", "unix_socket_directories = '%s'" % self.dir, text)
        text = re.sub(r"cluster_name = .*", "cluster_name = '%s'" % self.name, text)
        with open(conf, "w") as f:
            f.write(text)

    def take_place(self, other):
        """other's data directory (a promoted standby, stopped) moved into
        this cluster's place, this one's gone: it starts at this one's
        address (a failover behind one name, as a DNS name or a virtual IP
        moved to the new primary gives)."""
        shutil.rmtree(self.data)
        shutil.move(other.data, self.data)
        self.base_offset_ms = other.base_offset_ms
        self.own_address()

    def write_settings(self, settings):
        self.settings = dict(settings)
        settings = dict(settings)
        if "clock_offset_ms" in settings:
            settings["clock_offset_ms"] = int(settings["clock_offset_ms"]) + self.base_offset_ms
        lines = ["idgen.%s = '%s'" % (k, v) for k, v in sorted(settings.items())
                 if k not in ("synchronous_standby_names", "shared_preload_libraries")]
        if settings.get("synchronous_standby_names"):
            lines.append("synchronous_standby_names = '%s'" % settings["synchronous_standby_names"])
        if "shared_preload_libraries" in settings:
            lines.append("shared_preload_libraries = '%s'" % settings["shared_preload_libraries"])
        path = os.path.join(self.data, "chaos.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        if os.getuid() == 0:
            shutil.chown(path, RUN_USER)

    # -- running
    def idgen_clock_ms(self):
        """idgen's clock under the settings written: this host's, moved by
        idgen.clock_offset_ms (which write_settings adds base_offset_ms to)."""
        return time.time() * 1000.0 + int(self.settings.get("clock_offset_ms", 0)) + self.base_offset_ms

    def start(self):
        # idgen's clock as it starts, at most: marks it has passed are folded
        self.start_clock_ms = self.idgen_clock_ms()
        as_user([self.pg.tool("pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "120", "start"])
        self.running = True

    def stop(self, mode="fast"):
        as_user([self.pg.tool("pg_ctl"), "-D", self.data, "-m", mode, "-w", "-t", "120", "stop"])
        self.running = False

    def reload(self):
        as_user([self.pg.tool("pg_ctl"), "-D", self.data, "reload"])

    def promote(self):
        as_user([self.pg.tool("pg_ctl"), "-D", self.data, "-w", "-t", "120", "promote"])

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def children(self, ppid):
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        stat = f.read()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == ppid:
                    pids.append(int(entry))
        return pids

    def kill_postmaster(self):
        """SIGKILL the postmaster and every child, as a power cut would, so
        that no orphaned backend keeps the shared memory in use."""
        pm = self.postmaster_pid()
        if pm is None:
            return
        pids = [pm] + self.children(pm)
        for pid in pids:
            self.killed_pids.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.time() + 60
        while any(os.path.exists("/proc/%d" % p) for p in pids) and time.time() < deadline:
            time.sleep(0.05)
        self.running = False

    def kill_backend(self, pid):
        self.killed_pids.add(pid)
        self.killed_backend = (pid, self.log_size())
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            self.killed_backend = None

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def wait_log(self, offset, pattern, deadline):
        """The first match of pattern in the log past offset, waiting until
        the deadline; None if it never came."""
        while True:
            with open(self.log, "rb") as f:
                f.seek(offset)
                m = pattern.search(f.read().decode("utf-8", "replace"))
            if m or time.time() > deadline:
                return m
            time.sleep(0.05)

    def wait_ready(self, timeout=120):
        """After a backend's SIGKILL the postmaster, once it notices, ends
        every backend and reinitialises: wait until it has noticed and serves
        again.  A connection that merely succeeds may come before it noticed,
        and the next one then finds it in recovery.  Returns whether the
        server reinitialised (the backend may have exited before the kill)."""
        deadline = time.time() + timeout
        restarted = False
        if self.killed_backend:
            pid, offset = self.killed_backend
            self.killed_backend = None
            died = self.wait_log(offset, re.compile(
                r"\(PID %d\) (was terminated by signal|exited with exit code)" % pid), deadline)
            if died and "signal" in died.group(1):
                restarted = True
                self.wait_log(offset + died.end(), READY, deadline)
        while True:
            try:
                conn = self.connect("postgres")
                conn.close()
                return restarted
            except psycopg2.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def connect(self, db, timeout_ms=30000, search_path=None):
        options = "-c statement_timeout=%d" % timeout_ms
        if search_path:
            options += " -c search_path=%s" % search_path
        conn = psycopg2.connect(host=self.dir, port=5432, dbname=db, user="postgres",
                                connect_timeout=10, options=options)
        conn.autocommit = True
        return conn

    def close_all(self, conns, db="postgres"):
        """Closes conns and waits (up to 10 s) until their backends are
        gone: what a session counts in idgen_stats it may publish as it
        exits, after the checker has zeroed the counts for the next op."""
        pids = [conn.get_backend_pid() for conn in conns if not conn.closed]
        for conn in conns:
            conn.close()
        deadline = time.time() + 10
        while pids and time.time() < deadline:
            try:
                if not self.query(db, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,))[0][0]:
                    return
            except psycopg2.OperationalError:
                pass        # every slot still taken, or the server going down
            time.sleep(0.01)

    def query(self, db, sql, args=None, search_path=None):
        conn = self.connect(db, search_path=search_path)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else None
        finally:
            conn.close()

    # -- the log
    def scan_log(self):
        """Deaths in the log since the last scan that we did not cause."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self.log_offset)
                text = f.read().decode("utf-8", "replace")
                self.log_offset = f.tell()
        except FileNotFoundError:
            return []
        found = []
        for m in CHILD_EXIT.finditer(text):
            pid, sig, code = int(m.group(2)), m.group(4), m.group(5)
            if sig is not None and not (sig == "9" and pid in self.killed_pids):
                found.append(m.group(0))
            elif code is not None and code not in ("0", "1"):
                found.append(m.group(0))
        # what went wrong first, then who died of it
        return (["TRAP: " + m.group(1) for m in TRAP.finditer(text)] +
                ["PANIC: " + m.group(1) for m in PANIC.finditer(text)] + found)

    def remove(self):
        if self.running:
            try:
                self.stop("immediate")
            except RuntimeError:
                self.kill_postmaster()
        shutil.rmtree(self.dir, ignore_errors=True)


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""
