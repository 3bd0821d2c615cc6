"""Ops that take a server's marks away or carry its IDs elsewhere: the
mark file lost, idgen_resume_after() as the refusal says, a database
moved into a new cluster with the old node id, and one restored into a
new node."""

import os
import time

import psycopg2

from clients import create_extension, normalize
from cluster import Cluster, as_user
from invariants import restored
from ways_out import refused_until_restart, resumed_at_restart, resumed_past
from layouts import HWM_STEP_MS
from lineage import Lineage
from moves import TABLE_STEP, Moves
from params import CURRENT

# how long idgen_resume_after()'s DBA waits for the clock to near the time
RESUME_WAIT_S = 30
# A table whose CHECK constraint reads a layout defined in SQL through a
# function, which no tracking of constraints can see through: a restore
# must define the layouts before it loads the rows (docs/guarantees.md,
# Restoring what reads a layout).
# Its IDs are numbers, not generated: a refusing server can have rows too.
CHECKED_SQL = """
SELECT idgen_define_layout('chk', '2024-01-01 00:00:00+00', '{time,node,sequence}', '{41,10,12}')
WHERE NOT EXISTS (SELECT FROM idgen_layout WHERE name = 'chk');
CREATE OR REPLACE FUNCTION chaos_chk(bigint) RETURNS timestamptz
    LANGUAGE sql STABLE AS $$ SELECT (public.idgen_decode($1, 'chk')).ts $$;
CREATE TABLE IF NOT EXISTS chaos_checked (id bigint CHECK (chaos_chk(id) IS NOT NULL));
INSERT INTO chaos_checked SELECT i FROM generate_series(1, 100) i;
SELECT count(*) FROM chaos_checked"""



def try_next(cl, db):
    """An ID of the default layout from a new session, or None where idgen
    refused (an error without a SQLSTATE, a lost connection, is raised)."""
    return next_or_refusal(cl, db)[0]


# the time of a new ID of layout %s, in Unix milliseconds
RESUMED_TIME = "SELECT (extract(epoch FROM (idgen_decode(idgen_next(%s), %s)).ts) * 1000)::bigint"
FRESH_LAYOUT = "SELECT idgen_define_layout(%s, '2024-01-01+00', '{time,node,sequence}', '{41,10,12}')"


def next_or_refusal(cl, db):
    """(an ID of the default layout from a new session, None), or (None,
    idgen's refusal); an error without a SQLSTATE is raised."""
    try:
        return cl.query(db, "SELECT idgen_next()")[0][0], None
    except psycopg2.Error as e:
        if e.pgcode is None:
            raise
        return None, str(e)


class Restores(Moves):
    def do_lose_hwm(self, op):
        """idgen_hwm deleted with the server stopped, after a CHECKPOINT took
        the WAL copy of its marks away; the server starts with op's
        settings (its clock behind its last IDs), and restarts op's
        "restarts" times more: each start reads the file the last wrote."""
        c = op["c"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        cl.query("postgres", "CHECKPOINT")
        self.touch(c)
        cl.stop("fast")
        self.lineage[c].frontier.new_run()
        try:
            os.remove(os.path.join(cl.data, "idgen_hwm"))
        except FileNotFoundError:
            pass
        cl.write_settings(self.settings_for(c, op["set"]))
        cl.start()
        for _ in range(op.get("restarts", 0)):
            cl.stop("fast")
            self.lineage[c].frontier.new_run()
            cl.start()
        self.touch(c)

    def do_resume(self, op):
        """The way out of a refusal for lost or missing marks: as the error
        says, idgen_resume_after(t), t past every ID the server's line
        handed out, and a restart (which ends the sessions that generated
        below the new marks)."""
        c = op["c"]
        if not self.live(c):
            return False
        cl = self.clusters[c]
        self.touch(c)
        self.raising_marks(c)
        after = None
        if op.get("table"):
            self.table_step(c, op["db"])
            resumed = True
        else:
            after = self.resume_after(c, op["db"], op.get("newest", False))
            resumed = after is not None
        if resumed:
            self.refusing_until_restart(c, op["db"])
        cl.stop("fast")
        self.lineage[c].frontier.new_run()
        cl.start()
        self.touch(c)
        if resumed:
            self.resumed(c, op["db"], after)

    def resume_before_restart(self, c, db):
        """README's step after rows copied in that idgen cannot see, by a
        DBA who knows none reaches past the newest ID the server handed
        out: the marks raised past it (a time too far ahead of the clock
        refused and counted); a new session then refuses until the
        restart."""
        cl = self.clusters[c]
        self.raising_marks(c)
        try:
            cl.query(db, "SELECT idgen_resume_after(to_timestamp(%s))", ((self.lineage[c].newest + 1) / 1000.0,))
        except psycopg2.Error as e:
            self.op_errors["idgen_resume_after before a restart: %s" % normalize(str(e))] += 1
            return False
        self.refusing_until_restart(c, db)
        return True

    def resumed(self, c, db, after=None):
        """After idgen_resume_after() and the restart, db generates
        (ways_out.resumed_at_restart); after: the time it named, past
        which README says every mark was raised, whatever the clock: an ID
        of the default layout, one of js53 and one of a layout defined
        then (ways_out.resumed_past)."""
        cl, where = self.clusters[c], "%s/%s at step %d" % (c, db, self.step)
        error = next_or_refusal(cl, db)[1]
        self.found_mid_op(resumed_at_restart, error, where)
        if after is None or error is not None:
            return
        # and a layout defined now, whose marks are none of its own: the
        # overflow mark's, which the call raised too
        fresh = "resumed%d" % self.step
        for layout in ("idgen", "js53", fresh):
            try:
                if layout == fresh:
                    cl.query(db, FRESH_LAYOUT, (fresh,))
                got = cl.query(db, RESUMED_TIME, (layout, layout))[0][0]
            except psycopg2.Error as e:
                self.op_errors["after idgen_resume_after(), %s: %s" % (layout, normalize(str(e)))] += 1
                continue
            self.found_mid_op(resumed_past, got, after, layout, where)

    def refusing_until_restart(self, c, db):
        """After idgen_resume_after(), a new session gets no ID until the
        restart (ways_out.refused_until_restart)."""
        self.found_mid_op(refused_until_restart, try_next(self.clusters[c], db), "%s/%s at step %d"
                          % (c, db, self.step))

    def table_step(self, c, db):
        """README's step after one table's load, as its hint says where it
        refuses: where this server's idgen.epoch is later than the one the
        IDs were made under, it reads their time ahead of the clock; the
        server takes their epoch and restarts.  Where their time is ahead
        of the clock by more than idgen.max_clock_regression_ms (the line
        made them with its clock further ahead), the DBA waits until the
        clock is near it.  Then the step runs again."""
        cl = self.clusters[c]
        for wait in range(RESUME_WAIT_S, -1, -1):
            try:
                cl.query(db, TABLE_STEP)
                return
            except psycopg2.Error as e:
                if e.pgcode != "22023" or not wait:
                    raise
                if wait == RESUME_WAIT_S:
                    self.op_errors["README's step: %s" % normalize(e.diag.message_primary)] += 1
            if self.table_epoch[c].isoformat() < str(cl.settings["epoch"]):
                cl.stop("fast")
                cl.write_settings(dict(cl.settings, epoch=self.table_epoch[c].isoformat()))
                self.lineage[c].frontier.new_run()
                cl.start()
            else:
                time.sleep(1)

    def resume_after(self, c, db, newest):
        """newest: past the newest ID the line handed out, as the error's hint
        says; otherwise past any it could have (the clock it saw, the lead
        and the step of the marks), above every horizon it returned."""
        lin = self.lineage[c]
        after = lin.newest + 1 if newest else lin.hi + lin.lead + HWM_STEP_MS + 1000
        for wait in range(RESUME_WAIT_S, -1, -1):
            try:
                self.clusters[c].query(db, "SELECT idgen_resume_after(to_timestamp(%s))", (after / 1000.0,))
                return after
            except psycopg2.Error as e:
                # 1.4 has no such function; a time too far ahead of this
                # server's clock, which the hint says to wait for
                if e.pgcode != "22023" or not wait:
                    self.op_errors["idgen_resume_after: %s" % normalize(str(e))] += 1
                    return None
                time.sleep(1)

    def do_move(self, op):
        """pg_dump of a database (or, op's "what" "table", of one table),
        its server retired, and pg_restore (by op's "who") into a new
        cluster of its own initdb (another system identifier) with the old
        server's node id: the new server continues the old one's line."""
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        cl = Cluster(self.pg, self.root, new)
        # a host whose clock is as far off as the old one's
        cl.base_offset_ms = self.clusters[c].base_offset_ms
        dump = os.path.join(cl.dir, "dump.custom")
        op = dict(op, rows=self.checked_rows(c, op["db"]))
        self.table_epoch[new] = self.dump(c, op["db"], dump, op.get("what", "db"))
        self.touch(c)
        self.clusters[c].stop("fast")
        self.role[c] = "retired"
        self.drop_pollers(c)
        cl.create_fresh()
        cl.write_settings(op["set"])
        self.clusters[new] = cl
        self.role[new] = "primary"
        self.lineage[new] = self.continued(c)
        cl.start()
        self.touch(new)
        held = None
        if op.get("other"):
            cl.query("postgres", 'CREATE DATABASE "%s"' % op["other"])
            cl.query(op["other"], create_extension(CURRENT))
            # one table is not seen: only a whole database's refusal reaches it
            if op.get("what", "db") == "db":
                held = self.hold_session(cl, op["other"])
        self.load(cl, op["db"], dump, op, True)
        if held:
            self.held_after(new, op["other"], held)
        # after the held session: these rows pass the trigger, which refuses
        if op.get("history"):
            self.earlier_clusters(cl, op["db"], op["history"], op["db"])

    def checked_rows(self, c, db):
        """Rows of chaos_checked in c's db after adding 100; None where the
        database cannot have it (an extension older than layouts)."""
        try:
            return self.clusters[c].query(db, CHECKED_SQL)[0][0]
        except psycopg2.Error:
            return None

    def restore(self, cl, db, dump, rows, user="postgres", split=False):
        """pg_restore by user (without the dump's owners where not
        postgres; split: the schema, then the data with the triggers off),
        then every row of chaos_checked must be back."""
        steps = [["--schema-only"], ["--data-only", "--disable-triggers"]] if split else [[]]
        for step in steps:
            try:
                as_user([self.pg.tool("pg_restore"), "-h", cl.dir, "-p", "5432", "-U", user] + step +
                        ([] if user == "postgres" else ["--no-owner"]) + ["-d", db, dump])
            except RuntimeError as e:
                self.op_errors["pg_restore: %s" % normalize(str(e)[-200:])] += 1
        if rows is None:
            return
        back = cl.query(db, "SELECT CASE WHEN to_regclass('chaos_checked') IS NULL THEN 0 ELSE "
                            "(SELECT count(*) FROM chaos_checked) END")[0][0]
        restored(back, rows, "%s/%s" % (cl.name, db))

    def do_dump_restore(self, op):
        c, new = op["c"], op["new"]
        if not self.live(c) or new in self.clusters:
            return False
        src = self.clusters[c]
        cl = self.new_cluster(new, op["set"])
        dump = os.path.join(cl.dir, "dump.custom")
        rows = self.checked_rows(c, op["db"])
        as_user([self.pg.tool("pg_dump"), "-Fc", "-f", dump, "-h", src.dir, "-p", "5432",
                 "-U", "postgres", op["db"]])
        self.clusters[new] = cl
        self.role[new] = "primary"
        self.lineage[new] = Lineage()
        cl.start()
        cl.query("postgres", 'CREATE DATABASE "%s"' % op["db"])
        self.restore(cl, op["db"], dump, rows)
        self.touch(new)
        # A restored database holds the source's IDs: the server refuses until
        # told to resume past them (docs/guarantees.md, A new cluster...).
        lin = self.lineage[c]
        after = lin.hi + lin.lead + HWM_STEP_MS + 1000
        try:
            cl.query(op["db"], "SELECT idgen_resume_after(to_timestamp(%s))", (after / 1000.0,))
        except psycopg2.Error:
            return      # a database older than 1.5 carries nothing to refuse for
        cl.stop("fast")
        cl.start()
