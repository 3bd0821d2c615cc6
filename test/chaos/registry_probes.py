"""The registry's lease functions asked directly, as a server that lost
its token, or a copy presenting a live one, would call them (README,
Reference; docs/node-ids.md): in a transaction rolled back, so that the
holders' leases stay as they were.  A renewal or release without the
holder's token changes nothing, a lease longer than 3600 s or of other
node_bits is refused, and an acquire never hands out a node id whose
lease is live."""

import uuid

import psycopg2

from answers import input_judged, lease_granted_free

# Live for a second more at least: an acquire a moment later may take a
# lease that has just run out.
LIVE = ("SELECT node_id, token::text, epoch_ms, node_bits FROM idgen_lease"
        " WHERE NOT released AND expires_at > clock_timestamp() + interval '1 s' ORDER BY node_id")
MARKS = "SELECT node_id, mark_ms FROM idgen_lease"
ROW = "SELECT released, expires_at, mark_ms, token FROM idgen_lease WHERE node_id = %s"
ACQUIRE = "SELECT node_id, previous_mark_ms FROM idgen_lease_acquire(%s, 'chaos: probe', 0, %s, %s, %s)"


def asked(cur, sql, args, whole=False, then=None):
    """("value", the first column or whole row) or (SQLSTATE, message), in
    a savepoint; with then, also then's first row read before the savepoint
    is rolled back (None where the call failed)."""
    cur.execute("SAVEPOINT probe")
    after = None
    try:
        cur.execute(sql, args)
        row = cur.fetchone()
        got = ("value", row if whole else row[0])
        if then is not None:
            cur.execute(*then)
            after = cur.fetchone()
    except psycopg2.Error as e:
        got = (e.pgcode, str(e))
    cur.execute("ROLLBACK TO SAVEPOINT probe")
    return got if then is None else (got, after)


class RegistryProbes:
    def probe_registry(self):
        """After an op that changes what the registry holds, on a registry
        that is up and not stalled."""
        cl = self.registry()
        if cl is None or self.registry_frozen is not None or not cl.running:
            return
        try:
            conn = cl.connect("postgres")
        except psycopg2.OperationalError:
            return      # stopping, or stopped by the op
        try:
            with conn.cursor() as cur:
                # the holders' renewals wait meanwhile: the rows stay as read
                cur.execute("BEGIN; LOCK TABLE idgen_lease IN EXCLUSIVE MODE")
                cur.execute(LIVE)
                live = cur.fetchall()
                if live:
                    self.ask_registry(cur, live, "the registry at step %d" % self.step)
                cur.execute("ROLLBACK")
        finally:
            conn.close()

    def ask_registry(self, cur, live, where):
        node, token, epoch, bits = live[0]
        stranger = str(uuid.uuid4())
        cur.execute(ROW, (node,))
        before = cur.fetchone()
        for sql, args, expected in [
                ("SELECT idgen_lease_renew(%s, %s, 5, 0)", (node, stranger), "refused"),
                ("SELECT idgen_lease_renew(%s, %s, 3601, 0)", (node, token), "refused as data"),
                ("SELECT idgen_lease_renew(%s, %s, 0, 0)", (node, token), "refused as data"),
                (ACQUIRE, (11, stranger, 5, epoch), "refused as data"),
                (ACQUIRE, (bits, stranger, 3601, epoch), "refused as data")]:
            input_judged(sql % args, expected, asked(cur, sql, args), where)
            self.inputs_checked += 1
        # a release without the holder's token: false, the row as it was
        got, after = asked(cur, "SELECT idgen_lease_release(%s, %s, 0)", (node, stranger), then=(ROW, (node,)))
        input_judged("idgen_lease_release(%d, a stranger's token, 0)" % node, False, got, where)
        input_judged("node id %d's lease after a stranger's release" % node, before, ("value", after), where)
        self.inputs_checked += 2
        cur.execute(MARKS)
        marks = dict(cur.fetchall())
        # a stranger, and a copy of each holder presenting its token
        for presented, tok, ep, bt in [(None, stranger, epoch, bits)] + live:
            got = asked(cur, ACQUIRE, (bt, tok, 5, ep), whole=True)
            lease_granted_free(got, {row[0] for row in live}, marks, presented, where)
            self.inputs_checked += 1
