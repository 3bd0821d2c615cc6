"""The invariants on what idgen's SQL answers, beside invariants.py's on
the IDs it hands out: a decoding, an input at or past README's ranges,
the schema a database's idgen has, the settings' declarations, the counts
of idgen_stats and idgen_workers, a standby's and a registry's answers.
One function each, and each the one place its kind of violation is
raised."""

import collections

from invariants import Violation, fmt_ms


def decoded_alike(ident, layout, row, where):
    """idgen_decode(ident, layout) reads it as README describes the layout,
    as the checker's decoder does (Layout.columns); idgen_from_timestamp()
    of its time is the smallest ID of that tick, idgen_span('1 second')
    the IDs of its whole ticks, and each encoding is README's (fixed
    width, sorting like the ID) and parses back.  row: DECODE_SQL's."""
    ours = layout.columns(ident)
    theirs = tuple(row[:4])
    alike = all(o is None or o == ("NULL" if t is None else t) for o, t in zip(ours, theirs))
    wants = [((ours[0] - layout.epoch_ms) // layout.tick_ms) * layout.scale["time"],
             layout.span_ms(1000), encoded(ident, BASE32, 13), ident, encoded(ident, BASE62, 11), ident]
    if not alike:
        got, said = (fmt_ms(theirs[0]),) + theirs[1:], (fmt_ms(ours[0]),) + ours[1:]
    elif list(row[4:]) != wants:
        got, said = row[4:], wants
    else:
        return
    raise Violation("wrong decode", layout.name, "%s: %d in %s gives (%s); the layout says (%s)"
                    % (where, ident, layout.describe(), ", ".join(map(str, got)), ", ".join(map(str, said))))


BASE32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def encoded(ident, alphabet, width):
    """README, Reference: fixed-width digits of alphabet (ASCII order)."""
    digits = ""
    for _ in range(width):
        ident, d = divmod(ident, len(alphabet))
        digits = alphabet[d] + digits
    return digits


def schema_alike(ref, schema, where):
    """sql/idgen.sql: a fresh install, every update path, a restore and
    pg_upgrade give the extension the same objects, defined alike.
    ref, schema: {object: its definition}."""
    for name in sorted(set(ref) | set(schema)):
        ours, fresh = schema.get(name), ref.get(name)
        if ours != fresh:
            raise Violation("schema differs", None, "%s: %s is %s; a fresh install has %s" % (
                where, name, *where_they_differ(ours, fresh)))


def where_they_differ(a, b):
    """The two texts around their first difference ("nothing" for None)."""
    if a is None or b is None:
        return [("nothing" if t is None else repr(t[:200])) for t in (a, b)]
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - 80)
    return [repr(("..." if start else "") + t[start:at + 80]) for t in (a, b)]


def settings_declared(rows, readme, where):
    """README, Settings: each of idgen's settings has the context, default
    and range its table gives, and there is no other.  rows: pg_settings'
    (name, context, boot_val, min_val, max_val)."""
    problems = []
    for name, context, boot, low, high in rows:
        if name not in readme:
            problems.append("%s, which README does not list" % name)
            continue
        want, default, bounds = readme[name]
        if context != want or (default is not None and boot != default) or \
                (bounds is not None and (low, high) != bounds):
            problems.append("%s: context %s, default %s, range %s-%s; README: %s, %s, %s" % (
                name, context, boot, low, high, want, default, "-".join(bounds) if bounds else "none"))
    missing = set(readme) - {r[0] for r in rows}
    problems += ["no setting %s" % name for name in sorted(missing)]
    if problems:
        raise Violation("setting misdeclared", None, "%s: %s" % (where, "; ".join(problems)))


def lease_granted_free(got, live, marks, presented, where):
    """README, Reference: the registry's acquire hands out a node id no
    live lease holds, whatever token is presented (presented: the node id
    whose holder's token was, or None), and its next holder starts above
    the node id's mark.  got: ("value", (node_id, previous_mark_ms)) or an
    error, which is a refusal; live: the node ids held; marks: each row's."""
    if got[0] != "value" or got[1][0] is None:
        return
    chosen, previous = got[1]
    if chosen in live or previous < marks.get(chosen, 0):
        raise Violation("lease misgranted", None, "%s: an acquire %s got node id %d from %d%s" % (
            where, "with a stranger's token" if presented is None else "with node id %d's token" % presented,
            chosen, previous, ", which a live lease holds" if chosen in live else
            ", below its mark %d" % marks[chosen]))


REFUSALS = ("refused", "refused as data", "refused as unknown")


def refused_with(code):
    """What a call docs/guarantees.md gives the SQLSTATE of expects."""
    return "refused with SQLSTATE %s" % code


def input_judged(sql, expected, got, where):
    """README, Reference: a call outside a function's stated range is
    refused: as the caller's data (SQLSTATE class 22), or where it
    generates by any error but an internal one (a server that refuses to
    generate may refuse it for that first); one at its edge is answered as
    README computes it; a name of no layout is refused as such (42704);
    one whose SQLSTATE docs/guarantees.md gives, with it.
    expected: the value or one of REFUSALS; got: ("value", v) or
    (SQLSTATE, message)."""
    code = got[0] if got[0] != "value" else None
    if expected == refused_with(code):
        return
    if expected == "refused" and code and not code.startswith("XX"):
        return
    if expected == "refused as data" and code and code.startswith("22"):
        return
    if expected == "refused as unknown" and code == "42704":
        return
    if expected not in REFUSALS and got == ("value", expected):
        return
    answer = "%s" % got[1] if got[0] == "value" else "%s %s" % (got[0], got[1].splitlines()[0])
    raise Violation("input misjudged", None, "%s: %s gave %s, not %s" % (where, sql, answer, expected))


def standby_refused(sql, error, where):
    """docs/guarantees.md: a standby refuses to generate (it shares its
    primary's node id).  error: (SQLSTATE, message) of sql there, or None."""
    if error is None or error[0] is None or error[0].startswith("XX"):
        raise Violation("generated on a standby", None, "%s: %s %s" % (
            where, sql, "answered" if error is None else "failed: %s" % error[1].splitlines()[0]))


# A session lost to a server going down, a statement that timed out (a
# lock another op holds), a name the model thought free: not idgen's refusal.
NOT_REFUSALS = ("57P01", "57P02", "57P03", "57014", "42710", "42P04")


def request_taken(op, code, message, where):
    """README: a layout defined by its rules, a database given idgen, an
    update to this version, are taken; an error there (but NOT_REFUSALS)
    is a valid request refused."""
    if code is None or code.startswith("08") or code in NOT_REFUSALS:
        return
    raise Violation("valid request refused", op.get("name"), "%s: %s refused with %s (%s)" % (
        where, op["op"], code, message.splitlines()[0]))


def counted_short(expected, counts, unknown):
    """The first layout idgen_stats counted fewer IDs of than were handed
    out, as (layout, handed out, counted), or None."""
    for name in sorted(expected):
        if name not in unknown and counts.get(name, 0) < expected[name]:
            return name, expected[name], counts.get(name, 0)
    return None


def stats_mismatch(expected, counted, unknown, at_most=False):
    """The first layout whose idgen_stats.ids differs from the IDs handed
    out (with at_most, exceeds them), as (layout, expected, counted), or
    None.  unknown: layouts where a call failed, so some IDs may have been
    counted and never handed out."""
    for name in sorted(set(expected) | set(counted)):
        if name in unknown:
            continue
        want, got = expected.get(name, 0), counted.get(name, 0)
        if got > want or (got < want and not at_most):
            return name, want, got
    return None


def counted(expected, counts, unknown, where, at_most=False):
    """idgen_stats.ids per layout equals what the sessions that ended
    cleanly were handed since idgen_stats_reset(); at most that, once the
    table of statistics gave a definition's entry to another."""
    bad = stats_mismatch(expected, counts, unknown, at_most)
    if bad:
        raise Violation("stats count", bad[0], "%s: idgen_stats.ids of layout %s is %d, and the"
                        " sessions since idgen_stats_reset() were handed %d"
                        % (where, bad[0], bad[2], bad[1]))


def given_up_idle_first(order, expected, counts, unknown, where):
    """The table of statistics gives up the entry published least recently
    (README, Monitoring).  Each session publishes as each call ends, so of
    the layouts only one session generated in, one whose calls all came
    before another's first is the less recent: it cannot keep its counts
    when that other lost some.  order: each session's layouts, call by
    call; counts: idgen_stats.ids per layout."""
    callers = collections.Counter(name for names in order.values() for name in set(names))
    for names in order.values():
        mine = [n for n in names if callers[n] == 1 and n not in unknown]
        first = {}
        for i, n in enumerate(mine):
            first.setdefault(n, i)
        last = {n: i for i, n in enumerate(mine)}
        kept = [n for n in last if counts.get(n, 0) == expected.get(n, 0) > 0]
        lost = [n for n in first if counts.get(n, 0) < expected.get(n, 0)]
        if not kept or not lost:
            continue
        idle = min(kept, key=last.get)
        busy = max(lost, key=first.get)
        if first[busy] > last[idle]:
            raise Violation("stats gave up the busier", busy, "%s: idgen_stats lost counts of layout %s,"
                            " generated in after every call in %s, which kept its %d"
                            % (where, busy, idle, counts[idle]))

# Built-in layouts without a worker field: one state per definition, under
# a lock, so every ID of theirs is made in a shared state.
SHARED_ONLY = ("pgedge", "instagram", "decimal19")


def stats_columns(rows, reset_at, now, where):
    """idgen_stats beside its ids (README, Reference): shared_ids, the IDs
    made in a shared state, are some of them, all of them for a layout
    with no worker field; stats_reset is when idgen_stats_reset() ran, or
    the row began since.  rows: (layout, ids, shared_ids, earliest and
    latest stats_reset, Unix s) per layout name; reset_at, now: Unix s."""
    for name, ids, shared, first, last in rows:
        wrong = ("shared_ids %d of %d ids" % (shared, ids) if shared > ids or (name in SHARED_ONLY and shared != ids)
                 else "stats_reset %.3f, outside %.3f to %.3f" % (first if first < reset_at - 1 else last, reset_at, now)
                 if first < reset_at - 1 or last > now + 1 else None)
        if wrong:
            raise Violation("stats columns", name, "%s: idgen_stats of layout %s has %s" % (where, name, wrong))


def published_at_end(before, after, made, where):
    """README, idgen_stats: counts published at transaction end, whether
    it commits or rolls back.  before, after: idgen_stats' ids of idgen's
    layout around a transaction that made `made` IDs and rolled back, its
    session still open."""
    if after - before < made:
        raise Violation("stats unpublished", "idgen", "%s: idgen_stats counted %d of the %d IDs of a transaction"
                        " rolled back, its session still open" % (where, after - before, made))


def drops_counted(before, after, lost, where):
    """idgen_capacity's overflows of the statistics' table count the
    definitions whose counts it dropped (README, Reference): none while it
    still had room at the end (entries are only ever given up, never
    freed), and some where counts were lost.  before, after: (overflows,
    in_use, capacity) around a burst, or None; lost: (layout, handed out,
    counted) of a layout counted short, or None."""
    if before is None or after is None or after[0] < before[0]:
        return      # a server started again meanwhile: a table anew
    more = after[0] - before[0]
    if more and after[1] < after[2]:
        wrong = "counted %d dropped while %d of its %d entries were in use" % (more, after[1], after[2])
    elif lost and not more:
        wrong = "counted none dropped, and layout %s lost counts (%d counted of %d)" % (lost[0], lost[2], lost[1])
    else:
        return
    raise Violation("drops miscounted", None, "%s: idgen_capacity's stats %s" % (where, wrong))


def slots_full_counted(before, after, sessions, where):
    """docs/guarantees.md, A table of shared memory is full: idgen_capacity
    counts a backend that found every worker id taken.  before, after:
    (overflows, in_use, capacity) of worker ids around sessions that each
    generated, all still open; or None."""
    if before is None or after is None or before[1] + sessions <= before[2] or after[0] > before[0]:
        return
    raise Violation("overflow uncounted", None, "%s: %d sessions generated with %d of %d worker ids taken,"
                    " and idgen_capacity counted no backend without one" % (where, sessions, before[1], before[2]))


def regressions_per_incident(regressions, sessions, where, slack=3):
    """docs/guarantees.md, The clock steps back while running: a regression
    is counted once per incident, not per ID.  With the clock still during
    a burst each session's state of a layout meets one at most (a state
    recycled or a layout redefined meanwhile may make two or three).
    regressions: idgen_stats' clock_regressions by layout; sessions: how
    many of the burst's sessions called each; slack: what a layout may have
    besides.  A session held across one clock step: one at most."""
    for name, n in sorted(regressions.items()):
        if n > 3 * sessions.get(name, 0) + slack:
            raise Violation("regressions overcounted", name, "%s: idgen_stats counts %d clock regressions of"
                            " layout %s in a burst of %d sessions calling it" % (where, n, name, sessions.get(name, 0)))


def marks_full_counted(layouts, table, where):
    """README, idgen_capacity: overflows counts how often an entry was
    wanted when none was free.  Each layout that generated in one burst
    holds a mark of its own or shares one, so of n layouts at least n
    minus the table's capacity found none.  table: (overflows, in_use,
    capacity) of marks after the burst."""
    if table is not None and table[0] < len(layouts) - table[2]:
        raise Violation("marks overflow uncounted", None, "%s: %d layouts generated in one burst, the table of marks holds"
                        " %d, and idgen_capacity counts %d overflows" % (where, len(layouts), table[2], table[0]))


def worker_kept(rows, where):
    """idgen_workers has one row per claimed worker id: one whose backend
    has exited was never given back.  rows: (pid, worker_id) of those."""
    if rows:
        raise Violation("worker id kept", None, "%s: worker ids %s are still claimed by backends that exited"
                        " (pids %s)" % (where, [w for _, w in rows], [p for p, _ in rows]))


def horizon_warned(isolation, warnings, where):
    """docs/guarantees.md, Who holds the horizon, and misuse: the horizon
    warns when taken in a REPEATABLE READ or SERIALIZABLE transaction,
    whose reads may miss rows below it; not in READ COMMITTED.  warnings:
    the WARNINGs idgen_horizon() raised."""
    said = [w.strip() for w in warnings if "may miss rows below the idgen horizon" in w]
    if bool(said) != (isolation != "READ COMMITTED"):
        raise Violation("horizon warning", None, "%s: idgen_horizon() in a %s transaction %s" % (
            where, isolation, "warned: %s" % said[0] if said else "did not warn"))


def restore_judged(owner, error, defined, where, differs=False):
    """docs/guarantees.md, A restore by the database's owner: the owner's
    restore defines the layouts idgen_layouts_saved() holds; a role that
    neither owns the database nor may write idgen_layout is refused,
    naming that function and the way, and defines none; a layout the
    database defines otherwise is an error (differs: the owner's restore
    of such a one, defined: 1 where the database's definition stayed).
    error: (SQLSTATE, message) of the function's creation, or None;
    defined: the layouts defined then."""
    if differs:
        wrong = None if error and error[0] == "42710" and defined == 1 else \
            "defined otherwise: %s" % ("taken" if error is None else error[1].splitlines()[0])
    elif owner and error:
        wrong = "refused: %s" % error[1].splitlines()[0]
    elif owner:
        wrong = None if defined else "defined none"
    elif defined:
        wrong = "defined %d" % defined
    elif error is None:
        wrong = "taken"
    elif error[0] != "42501" or "idgen_layouts_saved() holds" not in error[1]:
        wrong = "refused with %s: %s" % (error[0], error[1].splitlines()[0])
    else:
        wrong = None
    if wrong:
        raise Violation("restore misjudged", None, "%s: a restore of idgen_layouts_saved() by %s: %s" % (
            where, "the database's owner" if owner else "a role that neither owns the database nor may"
            " write idgen_layout", wrong))


def horizon_passed(h, newest, where):
    """README, Outbox: every committed row is read; with no transaction
    holding the horizon back, it passes a committed row once idgen's clock
    has passed the row's tick.  newest: the highest ID of the table."""
    if h <= newest:
        raise Violation("horizon stuck", "idgen", "%s: idgen_horizon() returned %d, not above the committed row %d,"
                        " though no transaction held it back and the clock had passed that row" % (where, h, newest))
