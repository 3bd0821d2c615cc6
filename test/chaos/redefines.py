"""A layout redefined under a session that generated in it, held open: the
session generates again at once, under the new definition (docs/guarantees.md,
Layouts defined in SQL: read again by every backend after a change)."""

# The held session takes this many ms of its layout's ticks first, or this
# many IDs if fewer: its state is then in a tick the clock has not reached,
# which the new definition must not go on in.
BORROW_MS = 300
BORROW_IDS = 50000


class Redefines:
    def do_redefine(self, op):
        """The layout dropped and defined again; with "held", a session that
        generated in it before, held open, generates in it after.  With
        "through" too, two definitions with a worker field come between
        (the first of 64 IDs a tick, so that the batch borrows ahead): the
        session then has a state of its own in both, which its next call
        must start over, not go on with."""
        if not self.live(op["c"]):
            return False
        cl = self.clusters[op["c"]]
        conn = cl.connect(op["db"])
        held = cl.connect(op["db"]) if op.get("held") else None
        before = None
        try:
            if held is None:
                self.redefine_on(conn, op)
                return None
            changes = [dict(op, family=f) for f in op.get("through", [])] + [op]
            if len(changes) > 1:
                self.redefine_on(conn, changes.pop(0))
            before = self.borrow_ahead(op, held)
            self.redefine_on(conn, changes.pop(0))
            # at once: its state still ahead of the clock
            self.held_call(op["c"], op["db"], held, ("next", op["name"], 1, 300), view_after=True)
            for change in changes:      # the definition op asks for, last
                self.redefine_on(conn, change)
        finally:
            conn.close()
            if held is not None:
                held.close()
        self.check_call(*before)
        return None

    def redefine_on(self, conn, op):
        sql, args = self.define_sql(op)
        with conn.cursor() as cur:
            cur.execute("SELECT idgen_drop_layout(%s) FROM idgen_layout WHERE name = %s",
                        (op["name"], op["name"]))
            cur.execute(sql, args)

    def borrow_ahead(self, op, held):
        """The held session's batch (refused where it may not generate: a
        narrow node field), and what to check it with after the change,
        which follows it at once."""
        view = self.read_view(op["c"], op["db"])
        old = view["layouts"].get(op["name"]) if view else None
        n = min(BORROW_IDS, BORROW_MS * old.size["sequence"]) if old and old.has("sequence") else 1
        return self.held_run(op["c"], op["db"], held, ("batch", op["name"], n, 1)), view, None
