"""A schema ahead of pg_catalog in some sessions' search_path, whose
comparison operators shadow pg_catalog's (docs/guarantees.md, A role without
privileges: idgen qualifies the operators of the SQL it runs).  Each database the checker
creates has it; a burst's client, or the session that defines or drops a
layout, now and then runs with it first.  Every shadowing operator counts
its calls in a sequence, which no rollback undoes: after such an op the
count must still be untouched."""

import psycopg2

from diagnostics import worker_row_told
from invariants import no_user_code, out_of_reach
from params import HOSTILE_PATH, HOSTILE_SCHEMA as SCHEMA, STRANGER

# The role of the burst's spies (Choices.session_forms), once per server.
STRANGER_SQL = ("DO $r$BEGIN CREATE ROLE %s; EXCEPTION WHEN duplicate_object THEN NULL; END$r$"
                % STRANGER)

# the types idgen's own queries compare, and the row type of its layouts
TYPES = ["text", "name", "oid", '"char"', "int4", "int8", "bool", "timestamptz", "interval", "regclass",
         "idgen_layout", "idgen_system"]
OPERATORS = ["=", "<>", "<", ">", "<=", ">="]

CURRENT_HERE = ("SELECT e.extversion = a.default_version FROM pg_extension e"
                " JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'idgen'")


def idgen_dbs(cl, current=False, like="db%"):
    """cl's databases named like like that have idgen (of this version)."""
    dbs = [db for (db,) in cl.query("postgres", "SELECT datname FROM pg_database WHERE datname LIKE %s"
                                                " AND datallowconn ORDER BY 1", (like,))]
    sql = CURRENT_HERE if current else "SELECT true FROM pg_extension WHERE extname = 'idgen'"
    return [db for db in dbs if cl.query(db, sql) == [(True,)]]


# What of idgen's a role without privileges may use of those it must not,
# in the database one is connected to (out_of_reach).
REACHED = """
SELECT p.oid::regprocedure::text
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
WHERE pg_catalog.has_function_privilege(%(role)s, p.oid, 'EXECUTE')
  AND (p.prorettype IN ('pg_catalog.trigger'::regtype, 'pg_catalog.event_trigger'::regtype)
       OR p.proname IN ('objectid_sortsupport', 'idgen_stats_reset', 'idgen_resume_after')
       OR p.proname LIKE 'idgen\\_lease\\_%%')
UNION ALL
SELECT 'the tokens of ' || c.oid::regclass::text
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
WHERE c.relname = 'idgen_lease' AND pg_catalog.has_column_privilege(%(role)s, c.oid, 'token', 'SELECT')
UNION ALL
SELECT 'writes to ' || c.oid::regclass::text
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
WHERE pg_catalog.has_table_privilege(%(role)s, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
UNION ALL
SELECT 'sets ' || name FROM pg_catalog.pg_settings WHERE name LIKE 'idgen.%%' AND context = 'user'
ORDER BY 1"""

# What that role sees, in a session of its own, of what it must not: the
# registry's address (superuser only: it may name a password file) and
# who holds a node id.
SEES = """
SET ROLE %s;
SELECT 'the setting ' || name FROM pg_catalog.pg_settings WHERE name = 'idgen.node_registry'
UNION ALL
SELECT 'the holder of node id ' || node_id FROM idgen_leases WHERE holder IS NOT NULL OR system_identifier IS NOT NULL
ORDER BY 1""" % STRANGER

# What that role sees of its own session, in a transaction holding one ID
# it made (rolled back): its row of idgen_workers with its times and
# counts, where a worker id was free (the row is the role's that claimed
# it), and its pid among the horizon's holders (their times go by the
# session's login role, as pg_stat_activity's do, not shown after SET ROLE).
OWN_ROWS = ("SELECT (SELECT count(*) FROM idgen_workers WHERE pid = pg_backend_pid() AND claimed_at IS NOT NULL"
            " AND last_ts IS NOT NULL AND ids_issued = 1),"
            " (SELECT count(*) FROM idgen_horizon_holders WHERE pid = pg_backend_pid())")
FREE_WORKER = "SELECT in_use < capacity FROM idgen_capacity WHERE name = 'worker_ids'"

PLANT = """
DO $plant$
DECLARE
    t text;
    o text;
    f text;
BEGIN
    CREATE SCHEMA %(s)s;
    CREATE SEQUENCE %(s)s.calls;
    GRANT USAGE ON SCHEMA %(s)s TO PUBLIC;
    GRANT USAGE, UPDATE ON SEQUENCE %(s)s.calls TO PUBLIC;
    FOREACH t IN ARRAY %(types)s LOOP
        CONTINUE WHEN to_regtype(t) IS NULL;
        FOREACH o IN ARRAY %(ops)s LOOP
            f := 'op_' || substr(md5(t || o), 1, 12);
            EXECUTE format('CREATE FUNCTION %(s)s.%%I(%%s, %%s) RETURNS boolean LANGUAGE plpgsql AS '
                           '$f$BEGIN PERFORM pg_catalog.nextval(''%(s)s.calls''); '
                           'RETURN $1 OPERATOR(pg_catalog.%%s) $2; END$f$', f, t, t, o);
            EXECUTE format('CREATE OPERATOR %(s)s.%%s (LEFTARG = %%s, RIGHTARG = %%s, FUNCTION = %(s)s.%%I)',
                           o, t, t, f);
        END LOOP;
    END LOOP;
END
$plant$""" % {"s": SCHEMA, "types": "ARRAY[%s]" % ", ".join("'%s'" % t for t in TYPES),
              "ops": "ARRAY[%s]" % ", ".join("'%s'" % o for o in OPERATORS)}


# A function made by a session with the hostile path: idgen's event
# trigger reads what the command made, and reads idgen_layouts_saved() only
# when the command made that one (the planner tests the object first), so
# the probe makes it again as it is, as a restore would.  Rolled back: no
# commit to wait for a synchronous standby that is cut off.
SAVED_DEF = ("SELECT pg_catalog.pg_get_functiondef(p.oid) FROM pg_catalog.pg_proc p"
             " JOIN pg_catalog.pg_extension e ON e.extnamespace = p.pronamespace AND e.extname = 'idgen'"
             " WHERE p.proname = 'idgen_layouts_saved' AND p.pronargs = 0")
DDL_PROBE = "CREATE OR REPLACE FUNCTION public.chaos_ddl_probe() RETURNS int LANGUAGE sql AS 'SELECT 1'"


def ddl_probe(cl, db):
    made = [d for (d,) in cl.query(db, SAVED_DEF)] or [DDL_PROBE]
    return "BEGIN; %s; ROLLBACK" % made[0]


class Hostile:
    def plant_hostile(self, c, db):
        self.clusters[c].query(db, PLANT)
        self.clusters[c].query(db, STRANGER_SQL)

    @staticmethod
    def search_path(op):
        return HOSTILE_PATH if op.get("hostile") else None

    def check_reach(self):
        """What a role without privileges may use, in every database of
        every live primary whose idgen is of this version: after an op
        that makes or changes an extension's objects (a create, an update,
        a restore, pg_upgrade and its rollback)."""
        for c in sorted(self.clusters):
            if not self.live(c) and not (self.live(c, "registry") and self.registry_frozen is None):
                continue
            cl = self.clusters[c]
            for db in idgen_dbs(cl, current=True, like="%"):
                cl.query(db, STRANGER_SQL)
                reached = cl.query(db, REACHED, {"role": STRANGER}) + cl.query(db, SEES)
                out_of_reach([r[0] for r in reached], "%s/%s" % (c, db))
                if self.live(c):
                    self.own_rows_seen(cl, db, "%s/%s at step %d" % (c, db, self.step))

    @staticmethod
    def own_rows_seen(cl, db, where):
        """README, idgen_workers and idgen_horizon_holders: a role without
        privileges sees its own sessions' details, as pg_stat_activity
        shows them.  Not judged where idgen refuses, or had no worker id
        free before the call."""
        try:
            conn = cl.connect(db, 5000)
        except psycopg2.Error:
            return
        try:
            with conn.cursor() as cur:
                cur.execute("BEGIN; SET ROLE %s" % STRANGER)
                cur.execute(FREE_WORKER)
                free = cur.fetchall()
                cur.execute("SELECT idgen_next()")
                cur.execute(OWN_ROWS)
                rows, holders = cur.fetchone()
        except psycopg2.Error:
            return
        finally:
            conn.close()
        if free and free[0][0]:
            worker_row_told({"own rows with times": rows, "own holders": holders},
                            {"own rows with times": 1, "own holders": 1}, "%s, as %s" % (where, STRANGER))

    def check_hostile(self, op):
        """After an op with a hostile session: no call of a shadowing
        operator, in any database the op's hostile sessions were in."""
        where = {(cl["c"], cl["db"]) for cl in op.get("clients", []) if cl.get("hostile")}
        if op.get("hostile"):
            where.add((op["c"], op["db"]))
        for c, db in sorted(where):
            if self.live(c):
                # DDL under that path too: idgen's event triggers run in it
                cl = self.clusters[c]
                cl.query(db, ddl_probe(cl, db), search_path=HOSTILE_PATH)
                self.check_user_code(c, db, op["op"])

    def check_user_code(self, c, db, after):
        # none where a restore left the schema out
        calls = self.clusters[c].query(db, "SELECT pg_sequence_last_value(to_regclass('%s.calls'))" % SCHEMA)[0][0]
        no_user_code(calls or 0, "%s/%s after %s" % (c, db, after))
        self.hostile_checked += 1
