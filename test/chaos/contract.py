"""What a database's idgen is, whichever way it came: its SQL objects
(functions with their volatility, strictness, parallel safety, security
and search_path, tables, views, types, operators, casts, operator
classes, privileges and comments) are the same after CREATE EXTENSION of
the current version as after an update from an older one, a restore or
pg_upgrade (sql/idgen.sql: the install script and the update scripts
agree); and the settings are declared as README's Settings table says."""

import os
import re

from hostile import idgen_dbs
from answers import restore_judged, schema_alike, settings_declared
from flaws import try_sql
from invariants import Violation

# Privileges with the owner's as "owner", so that a restore by the
# database's owner reads the same; the defaults spelled out.
ACL = """(SELECT pg_catalog.string_agg(g, ',' ORDER BY g) FROM (
          SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' WHEN a.grantee = %(owner)s THEN 'owner'
                      ELSE a.grantee::regrole::text END
                 || ':' || a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END AS g
          FROM pg_catalog.aclexplode(coalesce(%(acl)s, pg_catalog.acldefault(%(kind)s, %(owner)s))) a) acl)"""

RELATION = """(SELECT c.relkind::text || ' ' || c.relpersistence::text || ' rls ' || c.relrowsecurity::text
          || c.relforcerowsecurity::text
          || ' acl ' || %(acl)s
          || ' columns ' || coalesce((SELECT pg_catalog.string_agg(a.attname || ' '
                 || pg_catalog.format_type(a.atttypid, a.atttypmod)
                 || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                 || coalesce(' default ' || pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), '')
                 || coalesce(' acl ' || %(column_acl)s, ''), ', ' ORDER BY a.attnum)
               FROM pg_catalog.pg_attribute a
               LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
          || ' constraints ' || coalesce((SELECT pg_catalog.string_agg(k.conname || ' '
                 || pg_catalog.pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname)
               FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid), '')
          || ' indexes ' || coalesce((SELECT pg_catalog.string_agg(pg_catalog.pg_get_indexdef(i.indexrelid), ', '
                                                                ORDER BY pg_catalog.pg_get_indexdef(i.indexrelid))
               FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid), '')
          || ' triggers ' || coalesce((SELECT pg_catalog.string_agg(pg_catalog.pg_get_triggerdef(t.oid), ', '
                                                                 ORDER BY pg_catalog.pg_get_triggerdef(t.oid))
               FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), '')
          || ' view ' || coalesce(pg_catalog.pg_get_viewdef(c.oid), '')
        FROM pg_catalog.pg_class c WHERE c.oid = m.objid)""" % {
    "acl": ACL % {"owner": "c.relowner", "acl": "c.relacl",
                  "kind": "CASE c.relkind WHEN 'S' THEN 's'::\"char\" ELSE 'r'::\"char\" END"},
    "column_acl": ACL % {"owner": "c.relowner", "acl": "a.attacl", "kind": "'c'::\"char\""}}

FUNCTION = """(SELECT pg_catalog.pg_get_functiondef(p.oid) || ' acl ' || %s
        FROM pg_catalog.pg_proc p WHERE p.oid = m.objid)""" % ACL % {
    "owner": "p.proowner", "acl": "p.proacl", "kind": "'f'::\"char\""}

TYPE = """(SELECT t.typtype::text || ' ' || t.typlen || ' ' || t.typbyval || ' ' || t.typalign::text
          || t.typstorage::text
          || ' ' || t.typinput::text || ' ' || t.typoutput::text || ' ' || t.typreceive::text || ' ' || t.typsend::text
          || ' acl ' || %s
        FROM pg_catalog.pg_type t WHERE t.oid = m.objid)""" % ACL % {
    "owner": "t.typowner", "acl": "t.typacl", "kind": "'T'::\"char\""}

OPERATOR = """(SELECT o.oprcode::text || ' com ' || o.oprcom::regoperator::text || ' neg '
          || o.oprnegate::regoperator::text || ' ' || o.oprrest::text || ' ' || o.oprjoin::text
          || ' ' || o.oprcanmerge::text || o.oprcanhash::text
        FROM pg_catalog.pg_operator o WHERE o.oid = m.objid)"""

FAMILY_MEMBERS = """(SELECT coalesce((SELECT pg_catalog.string_agg(
                                               a.amopstrategy || ' ' || a.amopopr::regoperator::text,
                                               ', ' ORDER BY a.amopstrategy, a.amoplefttype, a.amoprighttype)
                    FROM pg_catalog.pg_amop a WHERE a.amopfamily = %(family)s), '')
          || ' / ' || coalesce((SELECT pg_catalog.string_agg(p.amprocnum || ' ' || p.amproc::regprocedure::text, ', '
                                                            ORDER BY p.amprocnum, p.amproclefttype, p.amprocrighttype)
                    FROM pg_catalog.pg_amproc p WHERE p.amprocfamily = %(family)s), ''))"""

# One row per member of the extension: what it is, and how it is defined.
FINGERPRINT = """
WITH m AS (
    SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
    WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e')
SELECT pg_catalog.pg_describe_object(m.classid, m.objid, 0),
       coalesce(CASE m.classid
           WHEN 'pg_catalog.pg_proc'::regclass THEN %(function)s
           WHEN 'pg_catalog.pg_class'::regclass THEN %(relation)s
           WHEN 'pg_catalog.pg_type'::regclass THEN %(type)s
           WHEN 'pg_catalog.pg_operator'::regclass THEN %(operator)s
           WHEN 'pg_catalog.pg_opfamily'::regclass THEN %(family)s
           WHEN 'pg_catalog.pg_opclass'::regclass THEN
               (SELECT c.opcdefault::text || ' ' || c.opcintype::regtype::text || ' '
                       || pg_catalog.pg_describe_object('pg_catalog.pg_opfamily'::regclass, c.opcfamily, 0)
                FROM pg_catalog.pg_opclass c WHERE c.oid = m.objid)
           WHEN 'pg_catalog.pg_cast'::regclass THEN
               (SELECT c.castfunc::regprocedure::text || ' ' || c.castcontext::text || c.castmethod::text
                FROM pg_catalog.pg_cast c WHERE c.oid = m.objid)
           WHEN 'pg_catalog.pg_event_trigger'::regclass THEN
               (SELECT t.evtevent || ' ' || t.evtfoid::regprocedure::text || ' ' || t.evtenabled::text
                       || ' ' || coalesce(t.evttags::text, '')
                FROM pg_catalog.pg_event_trigger t WHERE t.oid = m.objid)
       END, '')
       || coalesce(' comment ' || (SELECT ds.description FROM pg_catalog.pg_description ds
                                   WHERE ds.objoid = m.objid AND ds.classoid = m.classid AND ds.objsubid = 0), '')
FROM m
UNION ALL
SELECT 'configuration table ' || c::regclass::text, coalesce(e.extcondition[k], '')
FROM pg_catalog.pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS u(c, k)
WHERE e.extname = 'idgen'
ORDER BY 1""" % {"function": FUNCTION, "relation": RELATION, "type": TYPE, "operator": OPERATOR,
                 "family": FAMILY_MEMBERS % {"family": "m.objid"}}

# The older versions whose update to the current one is compared with a
# fresh install, once a run: the oldest runs every update script.
PATHS = ["1.0"]
SCRATCH = "chaos_paths"
# A restore's function holding a layout, created by RESTORER (restore_probe)
RESTORER = "chaos_restorer"
SAVED_LAYOUTS = """CREATE FUNCTION public.idgen_layouts_saved() RETURNS pg_catalog.jsonb LANGUAGE sql IMMUTABLE
AS $f$SELECT '[{"name": "chaos_saved", "epoch": "2024-01-01T00:00:00+00:00", "radix": 2,
"fields": ["time", "node", "sequence"], "widths": [41, 10, 12], "time_unit": "00:00:00.001"}]'::pg_catalog.jsonb$f$"""

# the same layout, widths changed: a restore into a database that defines it
SAVED_OTHERWISE = SAVED_LAYOUTS.replace("[41, 10, 12]", "[40, 11, 12]")

SETTINGS_SQL = ("SELECT name, context, boot_val, min_val, max_val FROM pg_catalog.pg_settings"
                " WHERE name LIKE 'idgen.%' ORDER BY 1")
# README, Settings: a row of its table, and the range in its description
SETTING_ROW = re.compile(r"^\| `(idgen\.[a-z_]+)` \| (`?)([^|`]*)\2 \| ([a-z]+) \| ([^|]*)\|$")
RANGE = re.compile(r"\((-?\d+)[–-](-?\d+)(?: [a-z]+)?\)")


def readme_settings(readme):
    """{name: (context, default or None, (min, max) or None)} of README's
    Settings table."""
    table = {}
    for line in readme.splitlines():
        m = SETTING_ROW.match(line.strip())
        if m:
            name, _, default, context, text = m.groups()
            bounds = RANGE.search(text)
            table[name] = (context, None if default == "none" else default,
                           (bounds.group(1), bounds.group(2)) if bounds else None)
    return table


# docs/troubleshooting.md: an error in bold, code quoted, and its SQLSTATE
TROUBLE = re.compile(r"\*\*`([^`]+)`[^*]*\*\* \(SQLSTATE `([0-9A-Z]{5})`")


def troubleshooting_codes(text):
    """[(pattern of the message's beginning, SQLSTATE)] of
    docs/troubleshooting.md's errors: N stands for a number, … for
    anything."""
    codes = []
    for message, code in TROUBLE.findall(re.sub(r"\n +", " ", text)):
        parts = [re.escape(part) for part in re.split(r"\bN\b|…", message)]
        pattern = "".join(p + (r"(?:-?\d+|.*?)" if i < len(parts) - 1 else "") for i, p in enumerate(parts))
        codes.append((re.compile(pattern), code))
    return codes


def documented():
    """README's settings and docs/troubleshooting.md's SQLSTATEs."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(top, "README.md")) as f:
        settings = readme_settings(f.read())
    with open(os.path.join(top, "docs", "troubleshooting.md")) as f:
        return settings, troubleshooting_codes(f.read())


class Contract:
    def check_contract(self):
        """After an op that makes or changes an extension's objects: every
        database of every live primary whose idgen is of this version has
        the schema of a fresh install, and each server declares its
        settings as README does."""
        for c in sorted(self.clusters):
            if not self.live(c):
                continue
            cl = self.clusters[c]
            settings_declared(cl.query("postgres", SETTINGS_SQL), self.readme_settings, c)
            if self.schema_ref is None:
                self.schema_ref = self.schema_paths(cl)
            for db in idgen_dbs(cl, current=True, like="%"):
                schema_alike(self.schema_ref, dict(cl.query(db, FINGERPRINT)), "%s/%s" % (c, db))
                self.schemas_checked += 1

    def restore_probe(self, cl):
        """In the fresh install's database: idgen_layouts_saved() created
        as a restore does, by a role that may create it in idgen's schema
        but neither owns the database nor may write idgen_layout, then by
        the database's owner (answers.restore_judged)."""
        cl.query("postgres", "DO $$BEGIN CREATE ROLE %s; EXCEPTION WHEN duplicate_object THEN NULL; END$$"
                 % RESTORER)
        cl.query(SCRATCH, "GRANT CREATE ON SCHEMA public TO %s" % RESTORER)
        for owner in (False, True):
            if owner:
                cl.query("postgres", 'ALTER DATABASE "%s" OWNER TO %s' % (SCRATCH, RESTORER))
            conn = cl.connect(SCRATCH)
            try:
                with conn.cursor() as cur:
                    error = try_sql(cur, "SET ROLE %s; %s" % (RESTORER, SAVED_LAYOUTS), None)
                    cur.execute("RESET ROLE; SELECT count(*) FROM idgen_layout WHERE name = 'chaos_saved'")
                    defined = cur.fetchone()[0]
            finally:
                conn.close()
            try:
                restore_judged(owner, error, defined, "%s/%s" % (cl.name, SCRATCH))
                if owner:
                    restore_judged(owner, *self.restore_otherwise(cl), where="%s/%s" % (cl.name, SCRATCH),
                                   differs=True)
            except Violation:
                cl.query("postgres", 'DROP DATABASE "%s" WITH (FORCE)' % SCRATCH)
                raise

    @staticmethod
    def restore_otherwise(cl):
        """The owner's restore, again, of the layout the database now
        defines, with other widths: the error, and whether the database's
        definition stayed (1) or not (0)."""
        conn = cl.connect(SCRATCH)
        try:
            with conn.cursor() as cur:
                error = try_sql(cur, "DROP FUNCTION public.idgen_layouts_saved(); SET ROLE %s; %s"
                                % (RESTORER, SAVED_OTHERWISE), None)
                cur.execute("RESET ROLE; SELECT count(*) FROM idgen_layout WHERE name = 'chaos_saved'"
                            " AND widths = '{41,10,12}'")
                return error, cur.fetchone()[0]
        finally:
            conn.close()

    def schema_paths(self, cl):
        """The schema of a fresh install, compared with that of each update
        path of PATHS (in a database made for it, then dropped)."""
        ref = None
        for version in [None] + PATHS:
            cl.query("postgres", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % SCRATCH)
            cl.query("postgres", 'CREATE DATABASE "%s"' % SCRATCH)
            if version is None:
                cl.query(SCRATCH, "CREATE EXTENSION idgen")
            else:
                cl.query(SCRATCH, "CREATE EXTENSION idgen VERSION '%s'" % version)
                cl.query(SCRATCH, "ALTER EXTENSION idgen UPDATE")
            schema = dict(cl.query(SCRATCH, FINGERPRINT))
            if ref is None:
                ref = schema
                self.restore_probe(cl)
            else:
                schema_alike(ref, schema, "a database updated from %s" % version)
        cl.query("postgres", 'DROP DATABASE "%s" WITH (FORCE)' % SCRATCH)
        return ref
