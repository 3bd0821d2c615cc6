"""What idgen must refuse, tried now and then before an op
(Forms.session_forms): before an op that defines or redefines a layout,
layout definitions each broken in one of the ways README's rules for
fields, widths, time units, radixes and names forbid; before a restart, by
ALTER SYSTEM, the values README's table of settings forbids and those at
the edges of their ranges.  A flaw must be refused as the caller's error,
leaving the table or the settings as they were, an edge taken
(invariants.refused_definition, invariants.setting_judged)."""

import psycopg2

from invariants import refused_definition, setting_judged
from layouts import FAMILIES

FLAWS = ["twice", "time_later", "unknown", "negative", "too_wide", "no_time", "tick", "radix", "name"]
BAD_TICKS = ["0 milliseconds", "1.5 milliseconds", "2 seconds", "-1 millisecond", "1 month"]
BAD_NAMES = ["Alpha", "9lives", "", "a b", "x" * 64, "twitter", "idgen"]


def flawed_definitions(family, rng):
    """Definitions like family's, one with each flaw, in an order drawn
    from rng."""
    return [flawed_definition(family, flaw, rng) for flaw in rng.sample(FLAWS, len(FLAWS))]


def flawed_definition(family, flaw, rng):
    """A definition like family's with flaw, the rest drawn from rng, of a
    name no op defines (unless the name is the flaw): "already exists"
    would be a refusal for another reason."""
    name = "flawed"
    fields, widths, unit, radix = FAMILIES[family]
    fields, widths = list(fields), list(widths)
    other = rng.randrange(1, len(fields))
    if flaw == "twice":
        # a field again, its bits taken from time: only the repeat is wrong
        fields.append(fields[other])
        widths.append(1)
        widths[0] -= 1
    elif flaw == "time_later":
        fields[0], fields[other] = fields[other], fields[0]
        widths[0], widths[other] = widths[other], widths[0]
    elif flaw == "unknown":
        fields[other] = "machine"
    elif flaw == "negative":
        widths[other] = -1
    elif flaw == "too_wide":
        widths[0] += (19 if radix == 10 else 63) + 1 - sum(widths)
    elif flaw == "no_time":
        del fields[0], widths[0]
    elif flaw == "tick":
        unit = rng.choice(BAD_TICKS)
    elif flaw == "radix":
        radix = rng.choice([0, 3, 16])
    elif flaw == "name":
        name = rng.choice(BAD_NAMES)
    return {"flaw": flaw, "name": name, "fields": fields, "widths": widths, "unit": unit, "radix": radix}

# README, Configuration: each setting's range, and no password in the
# registry's address, whose setting members of pg_read_all_settings read;
# values at the edges of the ranges, which must be taken, and values past
# them, which must not.
EDGE_SETTINGS = [
    ("node_registry", "host=/tmp dbname=registry passfile=/nonexistent"),
    ("node_id", "0"), ("node_id", "1023"), ("node_lease_s", "5"), ("node_lease_s", "3600"),
    ("node_bits", "0"), ("node_bits", "10"), ("epoch", "1900-01-01"), ("epoch", "2200-01-01"),
    ("max_marks", "64"), ("max_marks", "65536"), ("max_lead_ms", "60000"),
    ("max_clock_regression_ms", "3600000"), ("lease_test_unsafe", "fence"),
]
FLAWED_SETTINGS = [
    ("node_registry", "host=/tmp dbname=registry password=secret"),
    ("node_registry", "postgresql://chaos:secret@localhost/registry"),
    ("node_registry", "etcd://chaos:secret@127.0.0.1:2379/idgen"),
    ("node_registry", "etcd://127.0.0.1:2379/idgen?password=secret"),
    ("node_id", "1024"), ("node_id", "-1"),
    ("node_lease_s", "4"), ("node_lease_s", "3601"),
    ("node_bits", "11"), ("node_bits", "-1"),
    ("epoch", "1899-12-31"), ("epoch", "2200-01-02"), ("epoch", "2024-02-30"), ("epoch", "2024-13-01"),
    ("max_marks", "63"), ("max_marks", "65537"),
    ("max_lead_ms", "60001"), ("max_clock_regression_ms", "3600001"),
    ("lease_test_unsafe", "fencing"),
]


class Flaws:
    def refuse_flawed(self, op):
        """The flawed definitions, tried in a session of op's database."""
        conn = self.clusters[op["c"]].connect(op["db"], search_path=self.search_path(op))
        count = "SELECT count(*) FROM idgen_layout"
        try:
            with conn.cursor() as cur:
                for bad in op["flawed"]:
                    cur.execute(count)
                    before = cur.fetchone()[0]
                    error = try_sql(cur, "SELECT idgen_define_layout(%s, %s::timestamptz, %s::text[], %s::int[],"
                                         " %s::interval, %s)", (bad["name"], op["epoch"] + " 00:00:00+00",
                                                                 bad["fields"], bad["widths"], bad["unit"],
                                                                 bad["radix"]))
                    cur.execute(count)
                    self.found_mid_op(refused_definition, bad, error, before, cur.fetchone()[0],
                                      "%s/%s" % (op["c"], op["db"]))
        finally:
            conn.close()

    def try_settings(self, op):
        """Settings at an edge or past it, by ALTER SYSTEM on op's server:
        one taken is taken back before the restart reads it."""
        conn = self.clusters[op["c"]].connect("postgres")
        try:
            with conn.cursor() as cur:
                for name, value, flawed in op["tried_settings"]:
                    error = try_sql(cur, "ALTER SYSTEM SET idgen.%s = %%s" % name, (value,))
                    if error is None:
                        cur.execute("ALTER SYSTEM RESET idgen.%s" % name)
                    self.found_mid_op(setting_judged, name, value, flawed, error, op["c"])
        finally:
            conn.close()


def try_sql(cur, sql, args):
    """The error (SQLSTATE, message) a statement ends in, or None."""
    try:
        cur.execute(sql, args)
    except psycopg2.Error as e:
        return (e.pgcode, str(e))
    return None
