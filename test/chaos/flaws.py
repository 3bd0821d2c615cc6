"""What idgen must refuse, tried now and then before an op
(Forms.session_forms): before an op that defines or redefines a layout,
layout definitions each broken in one of the ways README's rules for
fields, widths, time units, radixes and names forbid; before a restart, by
ALTER SYSTEM, the values README's table of settings forbids and those at
the edges of their ranges.  A flaw must be refused as the caller's error,
leaving the table or the settings as they were, an edge taken
(invariants.refused_definition, invariants.setting_judged)."""

import math
import os

import psycopg2

from diagnostics import refusal_coded
from invariants import flawed_start_refused, refused_definition, setting_judged
from layouts import FAMILIES

FLAWS = ["twice", "time_later", "unknown", "negative", "too_wide", "no_time", "tick", "radix", "name",
         "widths_short", "null_width", "field_wide", "epoch_fraction", "epoch_early", "epoch_future", "ended",
         "past_9999"]
# docs/design.md, Layouts defined in SQL: checked when defined by the
# function only; a row that arrives otherwise (a restore) was made before
DEFINE_ONLY = ["epoch_future", "ended"]
# in the future of every server's clock, however far a drill moved it
FUTURE = "2199-01-01 00:00:00+00"
BAD_TICKS = ["0 milliseconds", "1.5 milliseconds", "2 seconds", "1 hour", "-1 millisecond", "1 month"]
# the long ones in ms: their time field is cut to about a century, so that
# it ends neither before now nor past the year 9999 (refused for that too)
LONG_TICKS = {"2 seconds": 2000, "1 hour": 3600000}
CENTURY_MS = 100 * 365 * 86400 * 1000
BAD_NAMES = ["Alpha", "9lives", "", "a b", "x" * 64, "twitter", "idgen"]
BAD_RADIXES = [0, 3, 16]
# flaws with several values, each tried
EACH = {"tick": BAD_TICKS, "radix": BAD_RADIXES, "name": BAD_NAMES}
WRITERS = ["define", "insert", "update"]


# Definitions at the edges of docs/design.md's rules, which must be taken:
# (what, fields, widths, time unit, radix, epoch, name)
EDGE_DEFINITIONS = [
    ("a name of 63 characters", ("time", "node", "sequence"), (41, 10, 12), "1 millisecond", 2, "2020-01-01",
     "z9_-" + "x" * 59),
    ("a time unit of 1 s", ("time", "node", "sequence"), (37, 10, 16), "1 second", 2, "2020-01-01", None),
    ("a field of 31 bits", ("time", "sequence"), (32, 31), "1 second", 2, "2020-01-01", None),
    ("a field of 9 digits, 19 in all", ("time", "sequence"), (10, 9), "1 second", 10, "2020-01-01", None),
    ("an epoch of 1900", ("time", "node", "sequence"), (42, 9, 12), "1 millisecond", 2, "1900-01-01", None),
    ("every field", ("time", "node", "worker", "sequence", "shard", "random"), (38, 5, 5, 10, 3, 2),
     "1 millisecond", 2, "2020-01-01", None),
]


def flawed_definitions(family, date, rng):
    """Definitions like family's from date (YYYY-MM-DD), one with each flaw
    (each bad time unit, radix and name), in an order drawn from rng; then
    EDGE_DEFINITIONS, each written another way in turn."""
    flaws = [flawed_definition(family, date, flaw, rng, k) for flaw in rng.sample(FLAWS, len(FLAWS))
             for k in range(len(EACH.get(flaw, [None])))]
    edges = [{"flaw": what, "valid": True, "name": name or "edge", "fields": list(fields), "widths": list(widths),
              "unit": unit, "radix": radix, "epoch": epoch + " 00:00:00+00", "writer": WRITERS[k % len(WRITERS)]}
             for k, (what, fields, widths, unit, radix, epoch, name) in enumerate(EDGE_DEFINITIONS)]
    return [bad for bad in flaws if bad is not None] + edges


def flawed_definition(family, date, flaw, rng, k):
    """A definition like family's with flaw (the kth of EACH's values, if
    it has several), the rest drawn from rng, of a name no op defines
    (unless the name is the flaw): "already exists" would be a refusal
    for another reason.  None where the family cannot have the flaw alone."""
    fields, widths, unit, radix = FAMILIES[family]
    bad = {"flaw": flaw, "name": "flawed", "fields": list(fields), "widths": list(widths), "unit": unit,
           "radix": radix, "epoch": date + " 00:00:00+00"}
    other = rng.randrange(1, len(fields))
    bad["writer"] = "define" if flaw in DEFINE_ONLY else rng.choice(WRITERS)
    return bad if FLAW_EDITS[flaw](bad, other, k) is not False else None


def widen_field(bad, other, k):
    """32 bits, the rest 1 and a tick of a second: time lasts 34 years.
    Not in digits: 10 of them and time's would not fit 19."""
    if bad["radix"] == 10:
        return False
    bad["widths"] = [1] * len(bad["fields"])
    bad["widths"][other] = 32
    bad["widths"][0] = 63 - sum(bad["widths"][1:])
    bad["unit"] = "1 second"


def long_tick(bad, other, k):
    bad["unit"] = BAD_TICKS[k]
    if bad["unit"] in LONG_TICKS:
        bad["widths"][0] = math.ceil(math.log(CENTURY_MS / LONG_TICKS[bad["unit"]], bad["radix"]))


def early_epoch(bad, other, k):
    bad["epoch"] = "1899-12-31 00:00:00+00"
    if bad["radix"] == 2:
        # 2^42 ms from 1899 end in 2039: not ended, which would be refused too
        bad["widths"][0] += 1
        bad["widths"][-1] -= 1


def twice(bad, other, k):
    # a field again, its bits taken from time: only the repeat is wrong
    bad["fields"].append(bad["fields"][other])
    bad["widths"].append(1)
    bad["widths"][0] -= 1


def time_later(bad, other, k):
    for key in ("fields", "widths"):
        bad[key][0], bad[key][other] = bad[key][other], bad[key][0]


def too_wide(bad, other, k):
    bad["widths"][0] += (19 if bad["radix"] == 10 else 63) + 1 - sum(bad["widths"])


def no_time(bad, other, k):
    del bad["fields"][0], bad["widths"][0]


def widths_short(bad, other, k):
    bad["widths"].pop()


def past_9999(bad, other, k):
    """Ticks of a second, 2^38 of them from an epoch of this century: the
    time field reaches past the year 9999 (2^37, an edge, is taken).  The
    sequence takes the bits time gives up or gives."""
    if bad["radix"] == 10 or "sequence" not in bad["fields"]:
        return False
    bad["unit"] = "1 second"
    bad["widths"][bad["fields"].index("sequence")] += bad["widths"][0] - 38
    bad["widths"][0] = 38


def ended(bad, other, k):
    """About 17 minutes of ticks from an epoch years ago."""
    bad["widths"][0] = 6 if bad["radix"] == 10 else 20


def field_set(key, value):
    def edit(bad, other, k):
        bad[key][other] = value
    return edit


def value_set(key, values=None, value=None):
    """key set to the kth of values, or to value."""
    def edit(bad, other, k):
        bad[key] = values[k] if values else value
    return edit


def epoch_fraction(bad, other, k):
    bad["epoch"] = bad["epoch"].replace("00:00:00+00", "00:00:00.0005+00")


FLAW_EDITS = {
    "twice": twice, "time_later": time_later, "unknown": field_set("fields", "machine"),
    "negative": field_set("widths", -1), "null_width": field_set("widths", None), "too_wide": too_wide,
    "no_time": no_time, "widths_short": widths_short, "tick": long_tick, "field_wide": widen_field,
    "radix": value_set("radix", BAD_RADIXES), "name": value_set("name", BAD_NAMES),
    "epoch_fraction": epoch_fraction, "epoch_early": early_epoch,
    "epoch_future": value_set("epoch", value=FUTURE), "ended": ended, "past_9999": past_9999,
}


# README, Configuration: each setting's range, and no password in the
# registry's address, whose setting members of pg_read_all_settings read;
# values at the edges of the ranges, which must be taken, and values past
# them, which must not.
EDGE_SETTINGS = [
    ("node_registry", "host=/tmp dbname=registry passfile=/nonexistent"),
    ("node_id", "0"), ("node_id", "1023"), ("node_lease_s", "5"), ("node_lease_s", "3600"),
    ("node_bits", "0"), ("node_bits", "10"), ("epoch", "1900-01-01"), ("epoch", "2200-01-01"),
    ("max_marks", "64"), ("max_marks", "65536"), ("max_lead_ms", "0"), ("max_lead_ms", "60000"),
    ("max_clock_regression_ms", "0"), ("max_clock_regression_ms", "3600000"), ("lease_test_unsafe", "fence"),
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
    ("max_lead_ms", "-1"), ("max_lead_ms", "60001"), ("max_clock_regression_ms", "-1"),
    ("max_clock_regression_ms", "3600001"),
    ("lease_test_unsafe", "fencing"),
]

# Settings idgen reads when the server starts (settings.c), whose flawed
# values in the configuration file a start must refuse; of those, the ones
# the default layout depends on, which decoding and horizons need too.
STARTUP_SETTINGS = ["node_bits", "epoch", "node_id", "max_marks", "node_registry", "node_lease_s",
                    "lease_test_unsafe"]
LAYOUT_SETTINGS = ["node_bits", "epoch"]
# Ways to garble the mark file: a line it cannot read first or last, a
# mark beyond any time a layout can hold, a line a field short.
GARBLES = {
    "first": lambda text: b"garbage\n" + text,
    "last": lambda text: text + b"garbage\n",
    "beyond": lambda text: text + b"* 0 9223372036854775000\n",
    "short": lambda text: text + b"* 0\n",
}
# What a start with a flaw is asked: SQL that generates, each way, then
# what reads idgen's own layout, with its name and without, and the horizon
GENERATES = [("next", "SELECT idgen_next()"), ("next named", "SELECT idgen_next('js53')"),
             ("block", "SELECT idgen_next_block(1)"), ("batch", "SELECT idgen_next_batch(1, 'pgedge')")]
READS_LAYOUT = [("decode", "SELECT (idgen_decode(1)).ts"), ("decode named", "SELECT (idgen_decode(1, 'idgen')).ts"),
                ("from_timestamp", "SELECT idgen_from_timestamp(now())"),
                ("from_timestamp named", "SELECT idgen_from_timestamp(now(), 'idgen')"),
                ("span", "SELECT idgen_span('1 day')")]
HORIZONS = [("horizon", "SELECT idgen_horizon()"), ("horizon named", "SELECT idgen_horizon('idgen')")]
# what reads shared memory, and what does not: a start without idgen
# preloaded (docs/guarantees.md, Without preloading)
VIEWS = [("workers", "SELECT count(*) FROM idgen_workers"), ("stats", "SELECT count(*) FROM idgen_stats"),
         ("capacity", "SELECT count(*) FROM idgen_capacity"),
         ("holders", "SELECT count(*) FROM idgen_horizon_holders")]
UNSHARED = [("decode js53", "SELECT (idgen_decode(1, 'js53')).ts"), ("objectid", "SELECT objectid()")]
PROBES = GENERATES + READS_LAYOUT + HORIZONS + VIEWS + UNSHARED


def start_flaw(rng, dbs, k):
    """The kth flaw a start may have (Forms.flaw_forms), from four groups
    in turn, so that a short run has each: of settings the default layout
    depends on, of the others, of the mark file, and idgen not preloaded;
    and the database of dbs it is probed in."""
    settings = [{"setting": n, "value": v} for n, v in FLAWED_SETTINGS if n in STARTUP_SETTINGS]
    groups = [[f for f in settings if f["setting"] in LAYOUT_SETTINGS],
              [f for f in settings if f["setting"] not in LAYOUT_SETTINGS], [{"marks": how} for how in sorted(GARBLES)],
              [{"unloaded": True}]]
    return dict(rng.choice(groups[k % len(groups)]), db=rng.choice(dbs))


class Flaws:
    def start_flawed(self, op):
        """Between the stop and the start of op's restart (a fast one, of a
        primary that does not lease): the server started once with a flaw,
        a flawed value of a setting in its configuration file or its mark
        file garbled, asked PROBES, stopped, and the flaw undone.  README:
        an invalid value makes generation refuse, naming the setting, and
        never falls back to a default; a mark file that cannot be read is
        refused, not read in part (invariants.flawed_start_refused)."""
        c, flaw = op["c"], op["flawed_start"]
        cl = self.clusters[c]
        hwm = os.path.join(cl.data, "idgen_hwm")
        kept = None
        settings = self.settings_for(c, op["set"])
        if "setting" in flaw:
            settings[flaw["setting"]] = flaw["value"]
        elif "unloaded" in flaw:
            settings["shared_preload_libraries"] = ""
        elif os.path.exists(hwm):
            with open(hwm, "rb") as f:
                kept = f.read()
            with open(hwm, "wb") as f:
                f.write(GARBLES[flaw["marks"]](kept))
        else:
            return
        cl.write_settings(settings)
        try:
            cl.start()
            answers = {name: probe(cl, flaw["db"], sql) for name, sql in PROBES}
        except RuntimeError as e:
            # README: a bad value never stops the server
            answers = {"start": str(e).splitlines()[-1]}
        finally:
            if cl.running:
                cl.stop("fast")
            if kept is not None:
                with open(hwm, "wb") as f:
                    f.write(kept)
            cl.write_settings(self.settings_for(c, op["set"]))
        named, must_refuse, must_answer = flaw_answers(flaw)
        for name, error in answers.items():
            if isinstance(error, tuple) and error[0]:
                self.found_mid_op(refusal_coded, self.error_codes, error[0], error[1],
                                  "%s/%s at step %d, %s" % (c, flaw["db"], self.step, name))
        self.found_mid_op(flawed_start_refused, flaw, answers, named, [p for p, _ in must_refuse],
                          [p for p, _ in must_answer], "%s/%s at step %d" % (c, flaw["db"], self.step))

    def refuse_flawed(self, op):
        """The flawed definitions, tried in a session of op's database, each
        written its own way: by idgen_define_layout(), or into the table
        by INSERT, or by an UPDATE of a row there (of the name only where
        the name is the flaw), which the table's trigger must check too."""
        conn = self.clusters[op["c"]].connect(op["db"], search_path=self.search_path(op))
        try:
            with conn.cursor() as cur:
                for bad in op["flawed"]:
                    # one taken wrongly is undone, so that the layouts the
                    # model knows stay as they are
                    cur.execute("BEGIN")
                    cur.execute(TABLE)
                    before = cur.fetchone()[0]
                    sql, args = write_sql(bad, cur)
                    cur.execute("SAVEPOINT write")
                    error = try_sql(cur, sql, args)
                    if error is not None:
                        cur.execute("ROLLBACK TO SAVEPOINT write")
                    cur.execute(TABLE)
                    after = cur.fetchone()[0]
                    cur.execute("ROLLBACK")
                    self.found_mid_op(refused_definition, bad, error, before, after, "%s/%s" % (op["c"], op["db"]))
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


# the table's rows, to tell whether a write changed it (the caller's
# search_path may have a schema ahead of pg_catalog: Hostile)
TABLE = ("SELECT pg_catalog.md5(COALESCE(pg_catalog.string_agg(l::text, ',' ORDER BY l.name), ''))"
         " FROM idgen_layout l")
WRITE = {
    "define": "SELECT idgen_define_layout(%(name)s, %(epoch)s::timestamptz, %(fields)s::text[], %(widths)s::int[],"
              " %(unit)s::interval, %(radix)s)",
    "insert": "INSERT INTO idgen_layout (name, epoch, fields, widths, time_unit, radix)"
              " VALUES (%(name)s, %(epoch)s, %(fields)s, %(widths)s, %(unit)s, %(radix)s)",
    "update": "UPDATE idgen_layout SET epoch = %(epoch)s, fields = %(fields)s, widths = %(widths)s,"
              " time_unit = %(unit)s, radix = %(radix)s WHERE name OPERATOR(pg_catalog.=) %(row)s",
    "rename": "UPDATE idgen_layout SET name = %(name)s WHERE name OPERATOR(pg_catalog.=) %(row)s",
}


def write_sql(bad, cur):
    """The statement that writes bad its way, and its arguments.  An
    UPDATE where the table has no row is an INSERT."""
    args = dict(bad)
    writer = bad["writer"]
    if writer == "update":
        cur.execute("SELECT pg_catalog.min(name) FROM idgen_layout")
        args["row"] = cur.fetchone()[0]
        if args["row"] is None:
            writer = "insert"
        elif bad["flaw"] == "name":
            writer = "rename"
    return WRITE[writer], args


def flaw_answers(flaw):
    """What a start with flaw must name when it refuses, the PROBES it
    must refuse, and those it must answer."""
    if "unloaded" in flaw:
        return "shared_preload_libraries", GENERATES + HORIZONS + VIEWS, READS_LAYOUT + UNSHARED
    if "marks" in flaw:
        return '"idgen_hwm" is unreadable', GENERATES + HORIZONS, READS_LAYOUT + UNSHARED
    if flaw["setting"] in LAYOUT_SETTINGS:
        return "idgen." + flaw["setting"], GENERATES + READS_LAYOUT + HORIZONS, UNSHARED
    return "idgen." + flaw["setting"], GENERATES, HORIZONS + UNSHARED


def probe(cl, db, sql):
    """The error (SQLSTATE, message) a statement in a new session ends in,
    or None."""
    try:
        conn = cl.connect(db)
    except psycopg2.Error as e:
        return (e.pgcode, "no session: %s" % e)
    try:
        with conn.cursor() as cur:
            return try_sql(cur, sql, None)
    finally:
        conn.close()


def try_sql(cur, sql, args):
    """The error (SQLSTATE, message) a statement ends in, or None."""
    try:
        cur.execute(sql, args)
    except psycopg2.Error as e:
        return (e.pgcode, str(e))
    return None
