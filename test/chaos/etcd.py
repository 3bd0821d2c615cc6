"""An etcd registry of node id leases (issue #43): a three-member cluster
of Debian's etcd-server on loopback, which a run's leasing servers lease
from instead of the PostgreSQL registry, spoken to through etcd's v3
HTTP/JSON gateway as idgen's lease worker speaks to it."""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

MEMBERS = ["e1", "e2", "e3"]
PREFIX = "/chaos"
_said = []


def etcd_binary():
    """The etcd binary, or None (said once per process)."""
    path = shutil.which("etcd")
    if path is None and not _said:
        _said.append(True)
        print("etcd is not installed (Debian package etcd-server): the etcd registry is skipped",
              flush=True)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64(text):
    return base64.b64encode(text.encode()).decode()


class Etcd:
    def __init__(self, root):
        self.dir = os.path.join(root, "etcd")
        self.client = {m: free_port() for m in MEMBERS}
        self.peer = {m: free_port() for m in MEMBERS}
        self.proc = {}          # member -> its running Popen
        self.frozen = set()     # members SIGSTOPped

    def url(self):
        return "etcd://%s%s" % (",".join("127.0.0.1:%d" % self.client[m] for m in MEMBERS), PREFIX)

    def start(self, m):
        peers = ",".join("%s=http://127.0.0.1:%d" % (k, self.peer[k]) for k in MEMBERS)
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, m + ".log"), "ab") as log:
            self.proc[m] = subprocess.Popen(
                [etcd_binary(), "--name=" + m, "--data-dir=" + os.path.join(self.dir, m),
                 "--listen-client-urls=http://127.0.0.1:%d" % self.client[m],
                 "--advertise-client-urls=http://127.0.0.1:%d" % self.client[m],
                 "--listen-peer-urls=http://127.0.0.1:%d" % self.peer[m],
                 "--initial-advertise-peer-urls=http://127.0.0.1:%d" % self.peer[m],
                 "--initial-cluster=" + peers, "--initial-cluster-state=new",
                 "--initial-cluster-token=idgen-chaos"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def start_all(self):
        if etcd_binary() is None:
            raise RuntimeError("etcd is not installed: a recorded run that leased from etcd cannot replay")
        for m in MEMBERS:
            if m not in self.proc:
                self.start(m)
        return self.wait_leader()

    def stop(self, m, sig=signal.SIGTERM):
        if m not in self.proc:
            return
        if m in self.frozen:
            self.signal(m, signal.SIGCONT)
        p = self.proc.pop(m)
        p.send_signal(sig)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def signal(self, m, sig):
        os.kill(self.proc[m].pid, sig)
        if sig == signal.SIGSTOP:
            self.frozen.add(m)
        elif sig == signal.SIGCONT:
            self.frozen.discard(m)

    def call(self, m, path, body, timeout=2):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.client[m], path),
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode())

    def leader(self):
        """The member that is its cluster's leader now, or None."""
        for m in self.proc:
            if m in self.frozen:
                continue
            try:
                st = self.call(m, "/v3/maintenance/status", {})
            except (OSError, ValueError):
                continue
            if st.get("leader") and st.get("header", {}).get("member_id") == st["leader"]:
                return m
        return None

    def wait_leader(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = self.leader()
            if m is not None:
                return m
            time.sleep(0.2)
        raise RuntimeError("etcd elected no leader within %d s" % timeout)

    def txn(self, body):
        """A transaction on the leader (or any member that answers)."""
        err = None
        for m in sorted(self.proc, key=lambda k: k in self.frozen):
            try:
                return self.call(m, "/v3/kv/txn", body, timeout=5)
            except (OSError, ValueError, urllib.error.URLError) as e:
                err = e
        raise RuntimeError("etcd answered no transaction: %s" % err)

    def put_absent(self, nodes, value):
        """node/<id> created, with no etcd lease (held until deleted), for
        each of nodes where no server holds it."""
        for n in nodes:
            key = b64("%s/node/%d" % (PREFIX, n))
            self.txn({"compare": [{"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
                      "success": [{"request_put": {"key": key, "value": b64(value)}}]})

    def replace_if(self, nodes, value, new):
        """node/<id> given the value new where it still holds value."""
        for n in nodes:
            key = b64("%s/node/%d" % (PREFIX, n))
            self.txn({"compare": [{"key": key, "target": "VALUE", "result": "EQUAL", "value": b64(value)}],
                      "success": [{"request_put": {"key": key, "value": b64(new)}}]})

    def delete_if(self, nodes, value):
        """node/<id> deleted where it still holds value."""
        for n in nodes:
            key = b64("%s/node/%d" % (PREFIX, n))
            self.txn({"compare": [{"key": key, "target": "VALUE", "result": "EQUAL", "value": b64(value)}],
                      "success": [{"request_delete_range": {"key": key}}]})

    def close(self):
        for m in list(self.proc):
            self.stop(m, signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)
