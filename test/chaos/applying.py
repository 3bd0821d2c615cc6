"""Applying an op to the model, as if it succeeded: what later choices
read."""

import copy

from params import CURRENT


def combo(settings):
    """A node id and node_bits: idgen 1.4 kept a mark per layout and each."""
    return settings["node_id"], settings["node_bits"]


class Applying:
    def apply(self, op):
        getattr(self, "apply_" + op["op"])(op)

    def apply_cluster(self, op):
        self.clusters[op["c"]] = {"set": dict(op["set"]), "role": "primary",
                                  "dbs": {db: {"version": CURRENT, "layouts": {}} for db in op.get("dbs", [])},
                                  "standby": None, "nodes": {op["set"]["node_id"]}, "sync": False,
                                  "combos": {combo(op["set"])}, "epochs": {op["set"]["epoch"]}}
        self.used_nodes.add(op["set"]["node_id"])

    def apply_createdb(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]] = {"version": op["version"], "layouts": {}}

    def apply_dropdb(self, op):
        del self.clusters[op["c"]]["dbs"][op["db"]]

    def apply_define(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["layouts"][op["name"]] = {
            "epoch": op["epoch"], "family": op["family"]}

    apply_redefine = apply_define

    def apply_drop(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["layouts"].pop(op["name"], None)

    def apply_reload(self, op):
        self.clusters[op["c"]]["set"] = dict(op["set"])

    def apply_restart(self, op):
        m = self.clusters[op["c"]]
        m["set"] = dict(op["set"])
        m["nodes"].add(op["set"]["node_id"])
        m["combos"].add(combo(op["set"]))
        m["epochs"].add(op["set"]["epoch"])
        self.used_nodes.add(op["set"]["node_id"])

    def apply_ext_recreate(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]] = {"version": op["version"], "layouts": {}}

    def apply_ext_update(self, op):
        self.clusters[op["c"]]["dbs"][op["db"]]["version"] = CURRENT

    def apply_standby(self, op):
        p = self.clusters[op["c"]]
        node = p["set"]["node_id"] if op["sync"] else op["node_id"]
        s = dict(p["set"], node_id=node, clock_offset_ms=op.get("offset", 0), **op.get("set", {}))
        self.clusters[op["s"]] = {"set": s, "backup": True,
                                  "role": "standby", "dbs": p["dbs"], "standby": None,
                                  "nodes": set(p["nodes"]) if op["sync"] else {node},
                                  "combos": (set(p["combos"]) if op["sync"] else set()) | {combo(s)},
                                  "epochs": (set(p["epochs"]) if op["sync"] else set()) | {s["epoch"]},
                                  "sync": op["sync"], "primary": op["c"],
                                  "polled": p.get("polled", False)}
        p["standby"] = op["s"]
        self.used_nodes.add(node)
        if op["sync"]:
            p["set"]["synchronous_standby_names"] = op["s"]

    def apply_promote(self, op):
        s = self.clusters[op["s"]]
        p = self.clusters[s["primary"]]
        s["dbs"] = copy.deepcopy(s["dbs"])
        s["role"] = "primary"
        p["standby"] = None
        p["set"].pop("synchronous_standby_names", None)
        if op["kill_primary"]:
            del self.clusters[s["primary"]]

    def apply_dump_restore(self, op):
        src = self.clusters[op["c"]]["dbs"][op["db"]]
        self.clusters[op["new"]] = {"set": dict(op["set"]), "role": "primary", "standby": None,
                                    "dbs": {op["db"]: {"version": CURRENT,
                                                       "layouts": copy.deepcopy(src["layouts"])}},
                                    "nodes": {op["set"]["node_id"]}, "sync": False,
                                    "combos": {combo(op["set"])}, "epochs": {op["set"]["epoch"]}}
        self.used_nodes.add(op["set"]["node_id"])

    def apply_retire(self, op):
        del self.clusters[op["c"]]

    apply_stop_frozen = apply_retire

    def apply_clone(self, op):
        src = self.clusters[op["c"]]
        self.clusters[op["new"]] = dict(copy.deepcopy(src), standby=None, role="primary", backup=True)

    def apply_registry(self, op):
        pass

    def apply_define_many(self, op):
        pass        # the model's bursts keep to the layouts named in NAMES

    def apply_lose_hwm(self, op):
        self.clusters[op["c"]]["set"] = dict(op["set"])

    def apply_move(self, op):
        """The node id goes with the database; the old server is retired."""
        old = self.clusters.pop(op["c"])
        dbs = {op["db"]: copy.deepcopy(old["dbs"][op["db"]]) if op.get("what") != "table" else
               {"version": CURRENT, "layouts": {}}}
        if op.get("other"):
            dbs[op["other"]] = {"version": CURRENT, "layouts": {}}
        self.clusters[op["new"]] = {"set": dict(op["set"]), "role": "primary", "standby": None,
                                    "dbs": dbs,
                                    "nodes": set(old["nodes"]), "combos": set(old["combos"]),
                                    "epochs": set(old["epochs"]) | {op["set"]["epoch"]}, "sync": False}

    def apply_upgrade(self, op):
        """The new cluster has the old one's databases; the old one is
        out of the model until its rollback."""
        old = self.clusters.pop(op["c"])
        self.clusters[op["new"]] = dict(copy.deepcopy(old), set=dict(op["set"]), standby=None, sync=False,
                                        epochs=set(old["epochs"]) | {op["set"]["epoch"]})

    def apply_rollback(self, op):
        """The old cluster back with the new one's databases (the new one's
        line), the new one retired."""
        m = self.clusters.pop(op["c"])
        self.clusters[op["new"]] = dict(m, set=dict(op["set"]), epochs=m["epochs"] | {op["set"]["epoch"]})
        if op.get("other") and op.get("what", "db") == "db":
            self.clusters[op["new"]]["dbs"].setdefault(op["other"], {"version": CURRENT, "layouts": {}})

    def apply_burst(self, op):
        if op.get("kill") and op["kill"].get("set"):
            self.clusters[op["kill"]["c"]]["set"] = dict(op["kill"]["set"])

    def apply_none(self, op):
        pass

    def apply_outbox(self, op):
        # its horizon file has a mark from now on, and copies of it too
        self.clusters[op["c"]]["polled"] = True

    apply_pause = apply_resume = apply_standby_restart = apply_receiver = apply_none

    apply_registry_stop = apply_registry_start = apply_reserve = apply_unreserve = apply_none

    apply_lease_epoch = apply_none

    apply_freeze = apply_thaw = apply_none

    apply_registry_freeze = apply_registry_thaw = apply_registry_dump = apply_registry_restore = apply_none

    apply_registry_standby = apply_registry_cut = apply_registry_failover = apply_none
