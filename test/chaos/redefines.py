"""A layout redefined under a session that generated in it, held open: the
session generates again at once, under the new definition (docs/guarantees.md,
Layouts defined in SQL: read again by every backend after a change).  Or two
layouts defined in transactions that race; after every change, the copy a
dump restores first holds the table."""

import threading

from invariants import layouts_saved

# The held session takes this many ms of its layout's ticks first, or this
# many IDs if fewer: its state is then in a tick the clock has not reached,
# which the new definition must not go on in.
BORROW_MS = 300
BORROW_IDS = 50000


# The table's rows the saved copy lacks, and the copy's rows the table lacks.
SAVED_DIFF = """
SELECT (SELECT string_agg(name, ', ') FROM (SELECT * FROM idgen_layout EXCEPT
            SELECT * FROM jsonb_populate_recordset(NULL::idgen_layout, idgen_layouts_saved())) t),
       (SELECT string_agg(name, ', ') FROM (SELECT * FROM jsonb_populate_recordset(NULL::idgen_layout,
            idgen_layouts_saved()) EXCEPT SELECT * FROM idgen_layout) s)"""


class Redefines:
    def do_redefine(self, op):
        """The layout dropped and defined again; with "held", a session that
        generated in it before, held open, generates in it after.  With
        "through" too, two definitions with a worker field come between
        (the first of 64 IDs a tick, so that the batch borrows ahead): the
        session then has a state of its own in both, which its next call
        must start over, not go on with; and after the last, the state it
        had under the first must not come back."""
        if not self.live(op["c"]):
            return False
        if op.get("flawed"):
            self.refuse_flawed(op)
        cl = self.clusters[op["c"]]
        conn = cl.connect(op["db"], search_path=self.search_path(op))
        held = cl.connect(op["db"]) if op.get("held") else None
        befores = []
        try:
            if held is None:
                if op.get("racing"):
                    self.race_on(cl, conn, op)
                else:
                    self.redefine_on(conn, op)
                return None
            changes = [dict(op, family=f) for f in op.get("through", [])] + [op]
            befores.append(self.borrow_ahead(op, held))
            if len(changes) > 1:
                self.redefine_on(conn, changes.pop(0))
                befores.append(self.borrow_ahead(op, held))
            self.redefine_on(conn, changes.pop(0))
            self.held_and_fresh(op, held, conn)
            for change in changes:      # the definition op asks for, last
                self.redefine_on(conn, change)
            if changes:
                self.held_and_fresh(op, held, conn)
        finally:
            conn.close()
            if held is not None:
                held.close()
        for before in befores:
            self.check_call(*before)
        return None

    def race_on(self, cl, conn, op):
        """op's layout and its "racing" one, another name, each defined in a
        REPEATABLE READ transaction that read idgen_layout before the other
        committed; the racing one commits first (test/specs/layout_save.spec)."""
        other = cl.connect(op["db"])
        try:
            for session in (conn, other):
                with session.cursor() as cur:
                    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM idgen_layout")
            for session, spec in ((other, dict(op, **op["racing"])), (conn, op)):
                self.redefine_on(session, spec)
                with session.cursor() as cur:
                    cur.execute("COMMIT")
        finally:
            other.close()

    def check_saved(self, op):
        """After a change of layouts: idgen_layouts_saved() holds the table
        (invariant 6), where the database has it (1.5 on)."""
        if op["op"] not in ("redefine", "drop", "define_many") or not self.live(op["c"]):
            return
        cl = self.clusters[op["c"]]
        if not cl.query(op["db"], "SELECT to_regprocedure('idgen_layouts_saved()') IS NOT NULL")[0][0]:
            return
        (unsaved, stale), = cl.query(op["db"], SAVED_DIFF)
        layouts_saved(unsaved, stale, "%s/%s after %s" % (op["c"], op["db"], op["op"]))

    def redefine_on(self, conn, op):
        sql, args = self.define_sql(op)
        with conn.cursor() as cur:
            # pg_catalog's =, named: the session's search_path may be hostile's
            cur.execute("SELECT idgen_drop_layout(%s) FROM idgen_layout WHERE name OPERATOR(pg_catalog.=) %s",
                        (op["name"], op["name"]))
            cur.execute(sql, args)

    def held_and_fresh(self, op, held, conn):
        """The held session, its state still ahead of the clock, and a
        session new to the definition take BORROW_MS of its ticks each, at
        once.  Under one definition both draw from one state, or each from
        its worker id's: never from a state of each their own in the same
        ticks (a backend that kept an earlier definition's state would)."""
        call = ("batch", op["name"], self.borrow_size(op), 1)
        results = [None, None]

        def run(i, session):
            results[i] = self.held_run(op["c"], op["db"], session, call)
        threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate((held, conn))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        view = self.read_view(op["c"], op["db"])
        for res in results:
            self.check_call(res, view, None)

    @staticmethod
    def borrow_ids(layout):
        """A batch of BORROW_MS of layout's ticks, at most BORROW_IDS."""
        return min(BORROW_IDS, BORROW_MS * layout.size["sequence"]) if layout and layout.has("sequence") else 1

    def borrow_size(self, op):
        view = self.read_view(op["c"], op["db"])
        return self.borrow_ids(view["layouts"].get(op["name"]) if view else None)

    def borrow_ahead(self, op, held):
        """The held session's batch (refused where it may not generate: a
        narrow node field), and what to check it with after the change,
        which follows it at once."""
        view = self.read_view(op["c"], op["db"])
        n = self.borrow_ids(view["layouts"].get(op["name"]) if view else None)
        return self.held_run(op["c"], op["db"], held, ("batch", op["name"], n, 1)), view, None
