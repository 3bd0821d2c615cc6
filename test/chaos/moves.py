"""The ways a database's IDs are carried that the move drill draws (issue
#38 item 7): a restore by the database's non-superuser owner, one table's
dump that idgen cannot see, and a rollback after pg_upgrade (the new
cluster's dump restored into the old one)."""

import os
import random
import shutil

import psycopg2

from clients import LOST, call_sql, create_extension, now_ms, parse_ids
from cluster import RUN_USER, Cluster, as_user
from ways_out import refusal_reached_held
from lineage import Lineage
from params import CURRENT

OWNER = "chaos_owner"
TABLE = "chaos_ids"
# made on a new cluster before idgen_hwm is copied in, and dropped again
FORGOT_DB = "chaos_forgot"
# README, Rows copied in without idgen's objects: the step after such a load
TABLE_STEP = "SELECT idgen_resume_after((idgen_decode(max(id))).ts) FROM %s" % TABLE
# a layout no other server defines: IDs made in it before a restore equal none
HELD_LAYOUT = ("SELECT idgen_define_layout('held', '2024-01-01 00:00:00+00', '{time,node,sequence}', "
               "'{41,10,12}'); SELECT idgen_next('held')")


class Moves:
    def dump(self, c, db, path, what):
        """pg_dump -Fc of c's db; what "table": of the table chaos_ids only,
        first filled with the largest ID c's line made in idgen's own layout
        (the newest: a server resumes above its earlier IDs), as a table
        whose key is idgen_next() holds.  Returns, for one table, the
        earliest idgen.epoch its IDs can have been made under, which its
        DBA knows: README's step needs it where the new server's is later."""
        args, epoch = [], None
        if what == "table":
            epoch = self.clusters[c].query(db, "SELECT least((min(epoch) AT TIME ZONE 'UTC')::date, "
                                               "current_setting('idgen.epoch')::date) "
                                               "FROM idgen_system")[0][0]
            tops = [v for part in (self.lineage[c].frontier.before, self.lineage[c].frontier.now)
                    for (g, _, _), v in part.items() if g == ("idgen",)]
            self.clusters[c].query(db, "CREATE TABLE IF NOT EXISTS %s (id bigint PRIMARY KEY)" % TABLE)
            if tops:
                self.clusters[c].query(db, "INSERT INTO %s VALUES (%%s) ON CONFLICT DO NOTHING" % TABLE,
                                       (max(tops),))
            args = ["-t", TABLE]
        as_user([self.pg.tool("pg_dump"), "-Fc", "-f", path, "-h", self.clusters[c].dir, "-p", "5432",
                 "-U", "postgres"] + args + [db])
        return epoch

    def load(self, cl, db, path, op, fresh):
        """The dump at path into cl's db, by op's "who": postgres, or (a
        hosting service's way) the database's owner, a role without
        superuser, into a database a superuser created with the extension.
        One table goes into a database that has the extension already.
        fresh: the database is made anew (dropped first if it exists)."""
        who, what = op.get("who", "postgres"), op.get("what", "db")
        if who == "owner":
            cl.query("postgres", "DO $$BEGIN CREATE ROLE %s LOGIN; "
                                 "EXCEPTION WHEN duplicate_object THEN NULL; END$$" % OWNER)
        if fresh:
            cl.query("postgres", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % db)
            cl.query("postgres", 'CREATE DATABASE "%s"%s' % (db, " OWNER " + OWNER if who == "owner" else ""))
            if who == "owner" or what == "table":
                cl.query(db, create_extension(CURRENT))
        elif who == "owner":
            cl.query("postgres", 'ALTER DATABASE "%s" OWNER TO %s' % (db, OWNER))
        if what == "table":
            cl.query(db, "DROP TABLE IF EXISTS %s" % TABLE)
        rows = None if what == "table" else op.get("rows")
        self.restore(cl, db, path, rows, OWNER if who == "owner" else "postgres", op.get("split"))

    @staticmethod
    def earlier_clusters(cl, db, n, salt):
        """n rows of idgen_system as a database moved n times before would
        hold: other clusters' (random system identifiers of full length,
        the same for each move of a database name, so that moves in a row
        stay within the 64 notes), recorded before every row it has, under
        its earliest epoch, so that the refusal and the way out are those of
        the cluster moved from."""
        base = random.Random("history %s" % salt).randrange(10 ** 18, 9 * 10 ** 18)
        cl.query(db, "INSERT INTO idgen_system SELECT %s + g, first.recorded_at - g * interval '1 day', "
                     "first.epoch FROM (SELECT min(recorded_at) AS recorded_at, min(epoch) AS epoch "
                     "FROM idgen_system) first, generate_series(1, %s) g", (base, n))

    def do_upgrade(self, op):
        """pg_upgrade of c (stopped) into a cluster of its own initdb, in
        copy mode (c can start again), idgen_hwm copied as README says
        (op's "forgot": after a start without it); the new server
        continues c's line with op's settings."""
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        self.touch(c)
        src.stop("fast")
        self.role[c] = "upgraded"
        self.drop_pollers(c)
        cl = Cluster(self.pg, self.root, new)
        cl.base_offset_ms = src.base_offset_ms      # the same host
        cl.create_fresh()
        cl.write_settings(op["set"])
        self.clusters[new] = cl
        self.role[new] = "primary"
        as_user([self.pg.tool("pg_upgrade"), "--no-sync", "-d", src.data, "-D", cl.data,
                 "-b", self.pg.bindir, "-B", self.pg.bindir, "-s", cl.dir], cwd=cl.dir)
        self.lineage[new] = self.continued(c)
        if op.get("forgot"):
            self.forgot_hwm(new, op["forgot"])
            cl.write_settings(op["set"])
        hwm = os.path.join(cl.data, "idgen_hwm")
        shutil.copy2(os.path.join(src.data, "idgen_hwm"), hwm)
        if os.getuid() == 0:
            shutil.chown(hwm, RUN_USER)
        cl.start()
        self.touch(new)

    def forgot_hwm(self, c, behind):
        """Server c, just made by pg_upgrade, started before README's copy
        of idgen_hwm, with the settings behind (its clock behind the old
        IDs): a database made there, which holds none of them, generates
        first, and must be refused (or resume above them); then c stops
        for the copy."""
        cl = self.clusters[c]
        cl.write_settings(behind)
        cl.start()
        cl.query("postgres", 'CREATE DATABASE "%s" TEMPLATE template0' % FORGOT_DB)
        cl.query(FORGOT_DB, create_extension(CURRENT))
        conn = cl.connect(FORGOT_DB)
        self.held_after(c, FORGOT_DB, conn, ("next", None, 1, 3000))
        cl.query("postgres", 'DROP DATABASE "%s" WITH (FORCE)' % FORGOT_DB)
        cl.stop("fast")

    def do_rollback(self, op):
        """c's database (or table) dumped, c retired, and the server c was
        upgraded from started again with op's settings, the dump restored
        into it: it continues c's line, whose IDs it must resume above."""
        c, to, db = op["c"], op["new"], op["db"]
        if not self.live(c) or self.role.get(to) != "upgraded":
            return False
        dump = os.path.join(self.clusters[c].dir, "rollback.custom")
        op = dict(op, rows=self.checked_rows(c, db))
        self.table_epoch[to] = self.dump(c, db, dump, op.get("what", "db"))
        self.touch(c)
        self.clusters[c].stop("fast")
        self.role[c] = "retired"
        self.drop_pollers(c)
        cl = self.clusters[to]
        cl.write_settings(op["set"])
        self.lineage[to] = self.continued(c)
        cl.start()
        self.role[to] = "primary"
        self.touch(to)
        whole = op.get("what", "db") == "db"
        held = self.hold_other(cl, op["other"]) if whole and op.get("other") else None
        self.load(cl, db, dump, op, whole)
        if held:
            self.held_after(to, op["other"], held)

    def hold_other(self, cl, other):
        """A session held in the old server's database other (made if
        missing), which must refuse too once the rollback's restore is in;
        None where it cannot generate (an older extension, a layout 'held'
        of before)."""
        if not cl.query("postgres", "SELECT 1 FROM pg_database WHERE datname = %s", (other,)):
            cl.query("postgres", 'CREATE DATABASE "%s"' % other)
            cl.query(other, create_extension(CURRENT))
        try:
            return self.hold_session(cl, other)
        except psycopg2.Error:
            return None

    def hold_session(self, cl, db):
        """A session of cl's db that generates before a restore into another
        database of the server, and stays open (issue #38, row 4)."""
        conn = cl.connect(db)
        with conn.cursor() as cur:
            cur.execute(HELD_LAYOUT)
        return conn

    def held_after(self, c, db, conn, call=("next", None, 1, 1000)):
        """The held session generates again after the restore: refused (a
        refusal is server-wide and sticky), or above every ID of the line;
        then a new session of its database, refused if the held one was."""
        ids = self.held_call(c, db, conn, call)
        conn.close()
        fresh = self.clusters[c].connect(db)
        try:
            view = self.read_view(c, db)
            res = self.held_run(c, db, fresh, ("next", None, 1, 1))
        finally:
            fresh.close()
        self.check_call(res, view, None)
        refusal_reached_held(ids, res["error"] and res["error"][1], "%s/%s" % (c, db))

    def held_call(self, c, db, conn, call, view_after=False):
        """One call in a session held open across ops, checked as a burst's;
        returns what it was handed.  view_after: the database read after
        the call, not before, so that the call follows the last op at once."""
        view = None if view_after else self.read_view(c, db)
        res = self.held_run(c, db, conn, call)
        self.check_call(res, self.read_view(c, db) if view_after else view, None)
        return res["ids"]

    @staticmethod
    def held_run(c, db, conn, call):
        """One call in a held session, not yet checked: its result."""
        call = list(call)
        res = {"c": c, "db": db, "call": call, "text": call_sql(call), "ids": [], "error": None}
        res["t0"] = now_ms()
        try:
            with conn.cursor() as cur:
                cur.execute(res["text"])
                res["ids"] = parse_ids(call, cur.fetchone()[0])
        except psycopg2.Error as e:
            res["error"] = (e.pgcode or LOST, str(e))
        res["t1"] = now_ms()
        return res

    def continued(self, c):
        """A line that goes on from c's, in a new run."""
        lin = self.lineage[c]
        frontier = lin.frontier.copy()
        frontier.new_run()
        return Lineage(lin.hi, lin.lead, frontier, lin.newest, lin.newest_of)

    def drop_pollers(self, c):
        for key in [k for k in self.pollers if k[0] == c]:
            del self.pollers[key]
