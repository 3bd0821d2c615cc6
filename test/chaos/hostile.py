"""A schema ahead of pg_catalog in some sessions' search_path, whose
comparison operators shadow pg_catalog's (docs/guarantees.md, A role without
privileges: idgen qualifies the operators of the SQL it runs).  Each database the checker
creates has it; a burst's client, or the session that defines or drops a
layout, now and then runs with it first.  Every shadowing operator counts
its calls in a sequence, which no rollback undoes: after such an op the
count must still be untouched."""

from invariants import no_user_code
from params import HOSTILE_PATH, HOSTILE_SCHEMA as SCHEMA, STRANGER

# The role of the burst's spies (Choices.session_forms), once per server.
STRANGER_SQL = ("DO $r$BEGIN CREATE ROLE %s; EXCEPTION WHEN duplicate_object THEN NULL; END$r$"
                % STRANGER)

# the types idgen's own queries compare, and the row type of its layouts
TYPES = ["text", "name", "oid", '"char"', "int4", "int8", "bool", "timestamptz", "interval", "regclass",
         "idgen_layout", "idgen_system"]
OPERATORS = ["=", "<>", "<", ">", "<=", ">="]

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


class Hostile:
    def plant_hostile(self, c, db):
        self.clusters[c].query(db, PLANT)
        self.clusters[c].query(db, STRANGER_SQL)

    @staticmethod
    def search_path(op):
        return HOSTILE_PATH if op.get("hostile") else None

    def check_hostile(self, op):
        """After an op with a hostile session: no call of a shadowing
        operator, in any database the op's hostile sessions were in."""
        where = {(cl["c"], cl["db"]) for cl in op.get("clients", []) if cl.get("hostile")}
        if op.get("hostile"):
            where.add((op["c"], op["db"]))
        for c, db in sorted(where):
            if not self.live(c):
                continue
            # none where a restore left the schema out
            calls = self.clusters[c].query(
                db, "SELECT pg_sequence_last_value(to_regclass('%s.calls'))" % SCHEMA)[0][0]
            no_user_code(calls or 0, "%s/%s after %s" % (c, db, op["op"]))
            self.hostile_checked += 1
