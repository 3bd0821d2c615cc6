"""Bursts: clients generating at once (a SIGKILL of a backend or of the
postmaster among them, now and then), and every ID they were handed
checked (invariants.py) against the database's layouts, the server's
lineage and idgen_stats."""

import collections

import psycopg2

from answers import decoded_alike
from diagnostics import CLOCK_REFUSAL, refusal_coded
from clients import LOST, normalize, run_clients
from counts import Counts
from invariants import (above, block_whole, connection_kept, hidden, in_time, increasing, known_layout,
                        no_internal_error, ridden_out, right_node, right_shard, sole_holder, started_low,
                        unique)
from layouts import HWM_STEP_MS, Layout, builtin, default_layout, epoch_date_ms, node_problem, shard_range
from params import MAX_NODE_SETTING

SLACK_MS = 50
# idgen's reading of IDs, each in its layout (idgen's own by its name), in
# order: every column of idgen_decode(), the smallest ID of the tick it
# names, the IDs a second holds, and both encodings with their parse.
DECODE_SQL = ("SELECT (extract(epoch FROM d.ts) * 1000)::bigint, d.node_id, d.worker_id, d.sequence, "
              "idgen_from_timestamp(d.ts, u.layout), idgen_span('1 second', u.layout), "
              "idgen_encode(u.id), idgen_parse(idgen_encode(u.id)), "
              "idgen_encode(u.id, 'base62'), idgen_parse(idgen_encode(u.id, 'base62'), 'base62') "
              "FROM unnest(%s::bigint[], %s::text[]) WITH ORDINALITY AS u(id, layout, k), "
              "LATERAL idgen_decode(u.id, u.layout) d ORDER BY u.k")




def clock_behind_refused(message):
    """How far behind the clock was, by a refusal for it, or None."""
    m = CLOCK_REFUSAL.search(message)
    return int(m.group(1)) if m else None


class Bursts(Counts):
    def do_burst(self, op):
        clients = [cl for cl in op["clients"] if self.live(cl["c"])]
        if not clients:
            return False
        views = {}
        for cl in clients:
            key = (cl["c"], cl["db"])
            if key not in views:
                views[key] = self.read_view(*key)
        clients = [dict(cl, calls=[self.resolve_shard(call, views[(cl["c"], cl["db"])]) for call in cl["calls"]])
                   for cl in clients]
        for c in {cl["c"] for cl in clients}:
            self.touch(c)
            self.stats_begin(c, [cl["db"] for cl in clients if cl["c"] == c])
        kill = op.get("kill")
        if kill and not self.live(kill["c"]):
            kill = None
        self.tick_starts = {"firsts": {}, "failed": set()}
        results, kill_ms = run_clients(self.clusters, clients, kill, op.get("serial"))
        killed, restarted = self.after_kill(kill)
        for c in {cl["c"] for cl in clients}:
            if self.live(c):
                self.touch(c)
        self.counts.pop(killed, None)
        for res in results:
            if res["call"] is None:
                connection_kept(res["c"], killed, "%s/%s: could not connect: %s"
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
        self.check_decode(results, killed)
        self.check_tick_starts()
        for c in sorted({cl["c"] for cl in clients}):
            self.stats_check(c)
            self.workers_released(c, next(cl["db"] for cl in clients if cl["c"] == c))

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
                            "'idgen.node_bits', 'idgen.epoch', 'idgen.clock_offset_ms', 'idgen.max_lead_ms', "
                            "'idgen.max_clock_regression_ms')")
                s = dict(cur.fetchall())
                bits, epoch, offset, lead = (
                    int(s["idgen.node_bits"]), s["idgen.epoch"],
                    int(s["idgen.clock_offset_ms"]), int(s["idgen.max_lead_ms"]))
                leased = self.leasing(c)
                node = None if leased else int(s["idgen.node_id"])
                # past the setting's range PostgreSQL keeps the default, 0:
                # the IDs must carry what the DBA configured (so: refused)
                if not leased and (cl.settings.get("node_id") or 0) > MAX_NODE_SETTING:
                    node = cl.settings["node_id"]
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
                "lead": lead, "layouts": layouts, "leased": leased,
                "regression": int(s["idgen.max_clock_regression_ms"])}

    def resolve_shard(self, call, view):
        """A call with the shard its position names in the server's range
        (params.SHARD_AT), or with none where that range is not known."""
        if len(call) < 5:
            return call
        layout = self.layout_of(call[1], view) if view else None
        if layout is None or not layout.has("shard") or view["node"] is None or view["leased"]:
            return call[:4]
        lo, count = shard_range(layout, view["node"], view["bits"])
        at = {"first": lo, "middle": lo + count // 2, "last": lo + count - 1, "past": lo + count,
              "before": lo - 1}
        return call[:4] + [at[call[4]]]

    def check_shard(self, res, layout, view):
        """What a call did with the shard it passed (invariants.right_shard)."""
        shard = res["call"][4]
        lo, count = shard_range(layout, view["node"], view["bits"])
        refused = res["error"] is not None and "out of range for idgen layout" in res["error"][1]
        right_shard(shard, lo <= shard < lo + count, [(i, layout.decode(i)["shard"]) for i in res["ids"]],
                    refused, layout.name, "%%d of %s" % layout.describe(),
                    "%s/%s %s" % (res["c"], res["db"], res["text"]))

    def after_kill(self, kill):
        """Bring the server back after a kill; returns the killed server,
        and whether it restarted (a backend may have exited before)."""
        if not kill:
            return None, False
        self.epoch_later_run.discard(kill["c"])     # a crash starts idgen anew
        cl = self.clusters[kill["c"]]
        if kill["what"] == "postmaster":
            if kill.get("set"):
                # the host's clock set right while the server was down
                cl.write_settings(self.settings_for(kill["c"], kill["set"]))
            cl.start()
            return kill["c"], True
        return kill["c"], cl.wait_ready()

    def check_call(self, res, view, killed):
        func, layout_name = res["call"][0], res["call"][1]
        if func == "spy":
            if res["error"] is None:
                hidden(res["ids"][0], "%s/%s: %s" % (res["c"], res["db"], res["text"]))
            else:
                self.note_error(res, killed)
            return
        self.count_call(res)
        if res["error"] is not None:
            if "client" in res:
                self.tick_starts["failed"].add((res["c"], res["client"]))
            self.note_error(res, killed)
            if view is not None:
                self.check_clock_refusal(res, view)
        if len(res["call"]) > 4:
            self.check_shard(res, self.layout_of(layout_name, view), view)
        if not res["ids"] or view is None:
            return
        if func in ("objectid", "uuidv7"):
            self.check_opaque(res, view)
            return
        if view.get("leased") and view["node"] is None:
            # leased during the call
            lease = self.lease_of(res["c"])
            view["node"] = lease[0] if lease else None
            right_node("no node id leased" if view["node"] is None else None, layout_name, "%s",
                       "IDs", "%s/%s %s" % (res["c"], res["db"], res["text"]))
        layout = self.layout_of(layout_name, view)
        known_layout(layout, layout_name, "%s/%s" % (res["c"], res["db"]))
        seen = self.seen[layout.key(view["bits"])]
        lin = self.lineage[res["c"]]
        lo = res["t0"] + view["offset"] - layout.tick_ms - 5
        hi = max(lin.hi, res["t1"] + view["offset"]) + lin.lead + HWM_STEP_MS + layout.tick_ms + SLACK_MS
        where = "%s/%s %s (offset %d ms)" % (res["c"], res["db"], res["text"], view["offset"])
        shown = "%%d of %s" % layout.describe()
        if func == "block":
            n = res["call"][2]
            for first in res["ids"][::n]:
                block_whole(layout, first, n, where)
        if not layout.has("shard") or len(res["call"]) > 4:
            # README: increasing within a backend, but for a shard drawn per ID
            increasing(res["ids"], layout.name, shown, where)
        for ident in res["ids"]:
            unique(seen, (ident,), self.step, layout.name, shown, where)
            values = layout.decode(ident)
            in_time(values["time"], lo, hi, layout.name, shown, ident, where)
            right_node(node_problem(layout, values, view["node"], view["bits"]), layout.name, shown,
                       ident, where)
            lin.newest = max(lin.newest, values["time"] + layout.tick_ms)
            lin.newest_of[view["node"]] = max(lin.newest_of.get(view["node"], 0), values["time"] + layout.tick_ms)
        self.check_frontier(res, layout, view, where)
        self.note_tick_starts(res, layout, view)
        self.checked[(func, layout.name)] += len(res["ids"])
        res["layout"] = layout

    def check_decode(self, results, killed):
        """idgen_decode() reads the first ID of each call as the checker's
        own decoder does (invariant 2): the start of its tick and each
        field's column; and what README computes from them agrees
        (DECODE_SQL).  Not on a server the burst killed, whose settings may
        have changed with its restart."""
        firsts = collections.defaultdict(list)      # (server, database) -> [(ID, layout)]
        for res in results:
            if res.get("layout") is not None and res["c"] != killed and self.live(res["c"]):
                firsts[(res["c"], res["db"])].append((res["ids"][0], res["layout"]))
        for (c, db), pairs in sorted(firsts.items()):
            try:
                rows = self.clusters[c].query(db, DECODE_SQL, ([i for i, _ in pairs],
                                                               [lay.name for _, lay in pairs]))
            except psycopg2.Error as e:
                if e.pgcode != "42883":         # 1.0 has no idgen_decode(id, layout)
                    raise
                continue
            for (ident, layout), row in zip(pairs, rows):
                decoded_alike(ident, layout, row, "%s/%s" % (c, db))

    def check_frontier(self, res, layout, view, where):
        """IDs of this run above every ID of the lineage's earlier runs that
        they could equal (lineage.Frontier)."""
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
        above(low, bound, layout.name, "%d of %s from %s at step %d (node %d, node_bits %d)"
              % (low, layout.describe(), where, self.step, node, bits),
              "handed out before a restart, crash or promotion (node %d, node_bits %d)" % why
              if why else "")
        frontier.add(group, node, bits, top)

    def check_lease_handover(self, res, layout, group, node, bits, where):
        """A leased node id changes hands upwards: IDs a server makes under
        it are above every ID another server made under it before (its
        new holder starts above the old one's mark; the old one, past its
        fence or woken after its lease was taken, makes none)."""
        low = min(res["ids"])
        sole_holder(self.holder.get(node), res["c"], node, layout.name,
                    "%s made IDs at step %d (e.g. %d)" % (where, self.step, low))
        tops = self.lease_tops[(group, node, bits)]
        others = [(top, c) for c, top in tops.items() if c != res["c"]]
        bound, who = max(others) if others else (None, None)
        above(low, bound, layout.name, "%d of %s from %s at step %d (leased node id %d)"
              % (low, layout.describe(), where, self.step, node),
              "which %s made under that node id before" % who)
        if others and res["c"] not in tops:
            self.handovers += 1
        tops[res["c"]] = max(tops.get(res["c"], 0), max(res["ids"]))

    def check_opaque(self, res, view):
        """objectid and UUIDv7: unique over the run, time near the clock."""
        func = res["call"][0]
        seen = self.seen[(func,)]
        lin = self.lineage[res["c"]]
        lo = res["t0"] + view["offset"] - 1005
        hi = max(lin.hi, res["t1"] + view["offset"]) + 1000 + SLACK_MS
        where = "%s/%s" % (res["c"], res["db"])
        for ident in res["ids"]:
            unique(seen, (ident,), self.step, func, "%x", where)
            in_time((ident >> 64) * 1000 if func == "objectid" else ident >> 80, lo, hi, func, "%x",
                    ident, where)
        if func == "uuidv7":
            increasing(res["ids"], func, "%x", where)
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

    def note_tick_starts(self, res, layout, view):
        """The smallest sequence each burst client got in each tick of its
        own worker id in idgen's layout (invariants.started_low): no other
        session makes IDs there, its predecessors none in its ticks."""
        if not getattr(layout, "default", False) or "client" not in res:
            return
        shared = (1 << (10 - view["bits"])) - 1
        starts = self.tick_starts["firsts"]
        for ident in res["ids"]:
            v = layout.decode(ident)
            if v["worker"] != shared:
                key = (res["c"], res["client"], v["node"], v["worker"], v["time"])
                starts[key] = min(starts.get(key, v["sequence"]), v["sequence"])

    def check_tick_starts(self):
        """Of the clients that had no call fail, each tick started low."""
        failed = self.tick_starts["failed"]
        started_low({k: seq for k, seq in self.tick_starts["firsts"].items() if k[:2] not in failed},
                    1 << 11, "idgen", "step %d" % self.step)

    def check_clock_refusal(self, res, view):
        """A refusal for the clock names how far behind it is; within
        idgen.max_clock_regression_ms (as set before the call and after it)
        it should have been ridden out; past it, its hint says the way out
        (MarkFile.check_clock_hint)."""
        behind = clock_behind_refused(res["error"][1])
        self.check_epoch_named(res)
        if behind is not None and behind > view["regression"]:
            self.check_clock_hint(res, view, behind)
        if behind is None or behind > view["regression"] or not self.live(res["c"]):
            return
        try:
            now = self.clusters[res["c"]].query(res["db"], "SELECT setting::int FROM pg_settings "
                                                           "WHERE name = 'idgen.max_clock_regression_ms'")
        except psycopg2.Error:
            return
        if not now:
            return
        ridden_out(behind, min(now[0][0], view["regression"]), res["call"][1],
                   "%s/%s %s" % (res["c"], res["db"], res["text"]))

    def note_error(self, res, killed):
        code, msg = res["error"]
        where = "%s/%s %s" % (res["c"], res["db"], res["text"])
        no_internal_error(code, killed, res["call"][1], "%s: %s" % (where, msg))
        if code == LOST:
            connection_kept(res["c"], killed, "%s lost its connection with no kill: %s" % (where, msg))
            self.refusals["connection lost to our SIGKILL"] += 1
        elif killed is not None and code in ("57P01", "57P02", "57P03", "08006", "08003"):
            self.refusals["terminated by our SIGKILL"] += 1
        else:
            refusal_coded(self.error_codes, code, msg, where)
            self.refusals["%s %s" % (code, normalize(msg))] += 1
