"""objectid as README states it: 12 bytes ordered as bytes (time first),
with the comparison operators, sorting, btree, hash and BRIN indexes,
binary send and receive, and its second.  The expected answers come from
Python's ordering of bytes, not from idgen's code."""

import io

# Values whose bytes differ first at either end and across the sign of a byte
VALUES = ["000000000000000000000000", "00000000000000000000007f", "000000000000000000000080",
          "0000000000000000000000ff", "7f0000000000000000000000", "800000000000000000000000",
          "80000000000000000000ff00", "ff00000000000000000000ff", "ffffffffffffffffffffffff"]
ARRAY = "ARRAY[%s]::objectid[]" % ", ".join("'%s'" % v for v in VALUES)
SHUFFLED = "ARRAY[%s]::objectid[]" % ", ".join("'%s'" % v for v in VALUES[::-1][::2] + VALUES[::-1][1::2])
OPERATORS = ["<", "<=", "=", "<>", ">=", ">"]
INDEXES = ["btree", "hash", "brin"]


def python_compare(a, b):
    x, y = bytes.fromhex(a), bytes.fromhex(b)
    return [x < y, x <= y, x == y, x != y, x >= y, x > y], (x > y) - (x < y)


def calls():
    """(sql, expected) of the operators, objectid_cmp, sorting and the
    second of each value."""
    pairs = [(a, b) for a in VALUES for b in VALUES]
    ops = ",".join("".join("t" if r else "f" for r in python_compare(a, b)[0]) for a, b in pairs)
    cmps = ",".join(str(python_compare(a, b)[1]) for a, b in pairs)
    both = "FROM unnest(%s) WITH ORDINALITY x(a, i), unnest(%s) WITH ORDINALITY y(b, j)" % (ARRAY, ARRAY)
    return [
        ("SELECT string_agg(%s, ',' ORDER BY i, j) %s" % (" || ".join(
            "CASE WHEN a %s b THEN 't' ELSE 'f' END" % op for op in OPERATORS), both), ops),
        ("SELECT string_agg(sign(objectid_cmp(a, b))::text, ',' ORDER BY i, j) %s" % both, cmps),
        ("SELECT string_agg(o::text, ',' ORDER BY o) FROM unnest(%s) o" % SHUFFLED, ",".join(sorted(VALUES))),
        ("SELECT string_agg(o::text, ',' ORDER BY o DESC) FROM unnest(%s) o" % SHUFFLED,
         ",".join(sorted(VALUES, reverse=True))),
        ("SELECT string_agg(extract(epoch FROM objectid_timestamp(o))::bigint::text, ',' ORDER BY i)"
         " FROM unnest(%s) WITH ORDINALITY x(o, i)" % ARRAY, ",".join(str(int(v[:8], 16)) for v in VALUES)),
        ("SELECT count(*) FROM unnest(%s) o WHERE objectid_send(o) <> objectid_to_bytea(o)" % ARRAY, 0),
    ]


def index_calls(table):
    """(sql, expected) of scans of table, which holds VALUES twice, by an
    index: how many are below, equal to and above each value."""
    below = ",".join("%d/%d/%d" % (2 * sum(w < v for w in VALUES), 2, 2 * sum(w > v for w in VALUES))
                     for v in VALUES)
    return [("SELECT string_agg((SELECT count(*) FROM %(t)s WHERE o < v) || '/' ||"
             " (SELECT count(*) FROM %(t)s WHERE o = v) || '/' || (SELECT count(*) FROM %(t)s WHERE o > v),"
             " ',' ORDER BY i) FROM unnest(%(a)s) WITH ORDINALITY x(v, i)" % {"t": table, "a": ARRAY}, below)]


def index_answers(cur, answer):
    """Each index's scans, with sequential scans off; then binary COPY out
    and in again.  [(sql, expected, got)]."""
    found = []
    cur.execute("SET enable_seqscan = off")
    try:
        for kind in INDEXES:
            table = "chaos_objectid_%s" % kind
            cur.execute("CREATE TEMP TABLE %s (o objectid)" % table)
            cur.execute("INSERT INTO %s SELECT o FROM unnest(%s) o, generate_series(1, 2)" % (table, ARRAY))
            cur.execute("CREATE INDEX ON %s USING %s (o)" % (table, kind))
            for sql, expected in index_calls(table) if kind != "hash" else hash_calls(table):
                found.append((sql, expected, answer(cur, sql)))
        found.append(copy_binary(cur, answer))
    finally:
        cur.execute("RESET enable_seqscan")
        for kind in INDEXES:
            cur.execute("DROP TABLE IF EXISTS chaos_objectid_%s" % kind)
        cur.execute("DROP TABLE IF EXISTS chaos_objectid_copy")
    return found


def hash_calls(table):
    return [("SELECT string_agg((SELECT count(*) FROM %s WHERE o = v)::text, ',' ORDER BY i)"
             " FROM unnest(%s) WITH ORDINALITY x(v, i)" % (table, ARRAY), ",".join("2" for _ in VALUES))]


def copy_binary(cur, answer):
    """VALUES through COPY's binary format (objectid_send, objectid_recv)."""
    out = io.BytesIO()
    cur.copy_expert("COPY (SELECT o FROM unnest(%s) o) TO STDOUT (FORMAT binary)" % ARRAY, out)
    cur.execute("CREATE TEMP TABLE chaos_objectid_copy (o objectid)")
    out.seek(0)
    cur.copy_expert("COPY chaos_objectid_copy FROM STDIN (FORMAT binary)", out)
    sql = "SELECT string_agg(o::text, ',' ORDER BY o) FROM chaos_objectid_copy"
    return sql + " (after binary COPY)", ",".join(sorted(VALUES)), answer(cur, sql)
