"""idgen_check_nodes() asked about every live server that has a node id of
its setting, compared with what the checker configured (docs/many-servers.md,
the table of problems): a node id also used by another server, but a standby
of the same cluster (system identifier; every cluster made from the
checker's template shares one), node_bits or idgen.epoch unlike the first
listed server that may generate, a node id unset, rejected or too wide
for node_bits.
dblink is created in a transaction rolled back, so nothing commits (a
synchronous standby may be cut off) and no database keeps it."""

import psycopg2

from diagnostics import nodes_judged
from hostile import idgen_dbs
from layouts import epoch_date_ms
from params import MAX_NODE_SETTING

CHECK = ("SELECT conninfo, problem, node_id, node_bits, epoch::text, in_recovery, source"
         " FROM idgen_check_nodes(%s) ORDER BY conninfo")


def conninfo(cl):
    return "host=%s port=5432 dbname=postgres user=postgres" % cl.dir


def node_of(s):
    """The node id s configures, or a reason it has none that may generate."""
    node, bits = s.get("node_id"), int(s.get("node_bits", 10))
    if node is None:
        return "unset"
    if not 0 <= int(node) <= MAX_NODE_SETTING:
        return "rejected"
    if int(node) >= 1 << bits:
        return "too wide"
    return int(node)


class NodeCheck:
    def nodes_listed(self):
        """{conninfo: (server, settings, system identifier)} of the live
        servers whose node id is their setting's, neither frozen nor
        leasing."""
        listed = {}
        for c, cl in sorted(self.clusters.items()):
            if (self.live(c) or self.live(c, "standby")) and c not in self.frozen and not self.leasing(c) \
                    and "idgen" in cl.settings.get("shared_preload_libraries", "idgen"):
                sysid = cl.query("postgres", "SELECT system_identifier FROM pg_control_system()")[0][0]
                listed[conninfo(cl)] = (c, cl.settings, sysid)
        return listed

    def related(self, a, b):
        """Of one cluster (a system identifier), one of them a standby: it
        cannot generate, and promoted it resumes above the other's marks
        (docs/many-servers.md: not a problem)."""
        return a[2] == b[2] and "standby" in (self.role.get(a[0]), self.role.get(b[0]))

    def expected_columns(self, order, listed):
        """{conninfo: (node_id, node_bits, epoch, in_recovery, source)} as
        configured; node_id None where not judged (too wide) and for none."""
        want = {}
        for ci in order:
            c, s = listed[ci][:2]
            node = node_of(s)
            want[ci] = (node if isinstance(node, int) else None, int(s.get("node_bits", 10)),
                        s.get("epoch", "2024-01-01"), self.role.get(c) == "standby", "setting")
        return want

    def expected_problems(self, order, listed):
        """{conninfo: the kinds of problem it has (diagnostics.NODE_PROBLEMS)}."""
        usable = [ci for ci in order if not isinstance(node_of(listed[ci][1]), str)]
        first = listed[usable[0]][1] if usable else {}
        want = {}
        for ci in order:
            s = listed[ci][1]
            node = node_of(s)
            if isinstance(node, str):
                want[ci] = {"node"}
                continue
            clash = [o for o in usable if o != ci and node_of(listed[o][1]) == node and
                     not self.related(listed[ci], listed[o])]
            want[ci] = {kind for kind, wanted in (
                ("bits", int(s.get("node_bits", 10)) != int(first.get("node_bits", 10))),
                ("epoch", epoch_date_ms(s.get("epoch", "2024-01-01")) !=
                 epoch_date_ms(first.get("epoch", "2024-01-01"))),
                ("clash", bool(clash))) if wanted}
        return want

    def check_nodes(self):
        """From one live primary's database: each listed server's problem is
        flagged as docs/many-servers.md says, and only then."""
        listed = self.nodes_listed()
        callers = [c for c, _, _ in listed.values() if self.live(c) and idgen_dbs(self.clusters[c], current=True)]
        if len(listed) < 2 or not callers:
            return
        order = sorted(listed)
        cl = self.clusters[callers[0]]
        conn = cl.connect(idgen_dbs(cl, current=True)[0])
        try:
            with conn.cursor() as cur:
                cur.execute("BEGIN; CREATE EXTENSION IF NOT EXISTS dblink")
                cur.execute(CHECK, (order,))
                rows = cur.fetchall()
                cur.execute("ROLLBACK")
        except psycopg2.Error as e:
            self.op_errors["idgen_check_nodes: %s" % str(e).splitlines()[0][:100]] += 1
            return
        finally:
            conn.close()
        nodes_judged(rows, self.expected_problems(order, listed), self.expected_columns(order, listed),
                     {ci: server[0] for ci, server in listed.items()}, "step %d" % self.step)
        self.nodes_checked += 1
