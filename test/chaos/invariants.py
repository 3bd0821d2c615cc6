"""The invariants the checker holds the servers to (docs/chaos.md): one
function each, and each the one place its kind of violation is raised.
The world runs the ops and, after each, asks these of what the servers
did; what they are checked against is kept elsewhere (a lineage's earlier
IDs in lineage.py, a poller's cursor in outbox.py).  Those on what idgen's
SQL answers (decoding, inputs, the schema, settings, the registry) are in
answers.py.

An error idgen raises on purpose is a refusal, counted and not a violation.
A server process that dies without our SIGKILL, a PANIC, a failed assertion,
an internal error (XX000) or a connection lost without a kill is a
violation.
"""

import time


class Violation(Exception):
    def __init__(self, kind, layout, message):
        super().__init__("%s: %s" % (kind, message))
        self.kind = kind
        self.layout = layout
        self.message = message
        self.drill = None       # the drill whose op found it, if any (World.run)


def fmt_ms(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000.0)) + ".%03d" % (int(ms) % 1000)


# -- every ID handed out
def unique(seen, ids, step, label, shown, where):
    """No ID handed out twice in one layout definition (name and full
    definition; idgen's own layout per idgen.epoch and idgen.node_bits;
    layouts that place the node id by idgen.node_bits also per node_bits),
    nor one objectid or UUIDv7 twice in the run.  seen: ID -> the step that
    first handed it out, or where else it was seen; shown formats an ID."""
    for ident in ids:
        if ident in seen:
            first = seen[ident]
            raise Violation("repeated ID", label, "%s handed out again by %s at step %d; first %s"
                            % (shown % ident, where, step,
                               "at step %d" % first if isinstance(first, int) else first))
        seen[ident] = step


def increasing(ids, label, shown, where):
    """README: IDs (in a layout, but for shards drawn per ID) and
    idgen_uuidv7() increase within a backend (a call's values, made one
    after another in one session)."""
    for before, after in zip(ids, ids[1:]):
        if after <= before:
            raise Violation("out of order", label, "%s follows %s in one session's call, %s"
                            % (shown % after, shown % before, where))


def started_low(firsts, half, label, where):
    """README: the sequence of each new millisecond starts at a random
    value in the lower half of its range.  firsts: (server, client, node,
    worker, tick) -> the smallest sequence the client got in that tick of
    its worker id; half: half the sequence's size."""
    high = [(k, seq) for k, seq in firsts.items() if seq >= half]
    if high:
        (c, client, node, worker, tick), seq = min(high)
        raise Violation("sequence started high", label, "%s: client %d of server %s got no sequence below %d in"
                        " tick %s of node %d, worker %d: it started at %d or later"
                        % (where, client, c, half, fmt_ms(tick), node, worker, seq))


def in_time(t, lo, hi, label, shown, ident, where):
    """An ID decodes to a time between the clock (plus
    idgen.clock_offset_ms) when the call started and the highest clock its
    server's line of succession has seen, plus idgen.max_lead_ms and the
    marks' step."""
    if not lo <= t <= hi:
        raise Violation("wrong time", label, "%s from %s has time %s, outside %s .. %s"
                        % (shown % ident, where, fmt_ms(t), fmt_ms(lo), fmt_ms(hi)))


def block_whole(layout, first, n, where):
    """README, idgen_next_block(): a block lies within one tick of one
    worker id: its n integers differ in the sequence alone."""
    a, b = layout.decode(first), layout.decode(first + n - 1)
    split = sorted(f for f in a if f != "sequence" and a[f] != b[f])
    if split or b["sequence"] - a["sequence"] != n - 1:
        raise Violation("block split", layout.name, "%s: the block of %d from %d runs into another %s"
                        % (where, n, first, " and ".join(split) or "sequence"))


def right_node(problem, label, shown, ident, where):
    """An ID decodes to its server's node id (problem: how it does not,
    or None), with the definition its database had when it was made."""
    if problem:
        raise Violation("wrong node", label, "%s from %s: %s" % (shown % ident, where, problem))


def right_shard(asked, inside, ids, refused, label, shown, where):
    """A shard passed to a generating function is the shard field of every
    ID it returns, if it is in the server's range (inside; docs/design.md,
    Layouts); a shard outside is refused (refused: the call was, as out of
    range), and one inside is not.  ids: (ID, its shard field)."""
    problem = "refused shard %d, which is in the server's range" % asked if inside and refused else None
    for ident, shard in ids:
        if not inside or shard != asked:
            problem = "handed out %s with shard %d; shard %d was passed%s" % (
                shown % ident, shard, asked, "" if inside else ", outside the server's range")
            break
    if problem:
        raise Violation("wrong shard", label, "%s %s" % (where, problem))


def known_layout(layout, name, where):
    """IDs are of a layout the database defines (or a built-in one)."""
    if layout is None:
        raise Violation("unknown layout", name, "%s handed out IDs of layout %s, which the database"
                                                " did not define" % (where, name))


def above(low, bound, label, what, before):
    """A server resumes above every ID its lineage's earlier runs handed
    out that this one could equal (lineage.Frontier), and a leased node
    id's new holder above every ID its earlier holders made under it.
    low: the smallest ID of a call; bound: the largest it must pass, or
    None; before: who handed that one out."""
    if bound is not None and low <= bound:
        raise Violation("resumed below", label, "%s is not above %d, %s" % (what, bound, before))


# -- node id leases
def held_once(leases, step):
    """No node id is held by two live servers at once.  leases: (server,
    its lease or None), of every live leasing server."""
    holders = {}
    for c, lease in leases:
        if lease and lease[1] == "held":
            if lease[0] in holders:
                raise Violation("node id held twice", None, "servers %s and %s both hold node id %d"
                                " at step %d" % (holders[lease[0]], c, lease[0], step))
            holders[lease[0]] = c


def own_release(c, others, before, after, step):
    """docs/guarantees.md, Node ids leased from a registry: a holder that
    stops releases its own lease (its token's), never one another server
    holds, though it be of the node id the stopped one held before.
    others: {node id: the live server that holds it}, c aside; before,
    after: {node id: released} of the registry's rows around c's stop, or
    None where the registry could not tell."""
    for n, released in (after or {}).items():
        if released and before.get(n) is False and n in others:
            raise Violation("lease released by another", None, "the stop of %s at step %d released the"
                            " lease of node id %d, which %s holds" % (c, step, n, others[n]))


def lease_state_told(state, seconds_left, where, told=None):
    """docs/guarantees.md: idgen_node_lease's state is expired once the
    fence passes, not while the lease still has time (a second's slack
    for the read).  README: its source is where the node id comes from,
    its node_bits the server's, and a lease has no more seconds left than
    it lasts.  told: (source, the source configured, node_bits, the
    server's, idgen.node_lease_s), or None."""
    source, configured, bits, own_bits, lasts = told or (None,) * 5
    wrong = None
    if state == "expired" and (seconds_left or 0) > 1:
        wrong = "expired with %.1f s of the lease left" % seconds_left
    elif source != configured or bits != own_bits:
        wrong = "source %s and node_bits %s, where the server's are %s and %s" % (source, bits, configured, own_bits)
    elif seconds_left is not None and lasts is not None and seconds_left > lasts + 1:
        wrong = "%.1f s left of a lease of %s s" % (seconds_left, lasts)
    if wrong:
        raise Violation("lease state", None, "%s: idgen_node_lease says %s" % (where, wrong))


def sole_holder(holder, c, node, label, what):
    """No server makes IDs under a node id another server has held since
    (holder: (that server, since which step), or None)."""
    if holder is not None and holder[0] != c:
        raise Violation("two holders", label, "%s under node id %d, which %s has held since step %d"
                        % (what, node, holder[0], holder[1]))


def lease_kept(c, node, now, when, or_none=False, or_another=False):
    """A holder that held node id node before (when) holds it now: after
    the registry stalled and woke, (or_none: if it holds one at all) after
    a fast restart, and (or_another: it holds one, this or another) after
    the registry was stopped and started again, nobody else holding its
    own: it generates for the rest of its lease, then refuses until the
    registry is back (README).  now: (node id, state) of its lease, or
    None."""
    if now == (node, "held") or or_none and (now is None or now[1] != "held") or \
            or_another and now is not None and now[1] == "held":
        return
    raise Violation("lease changed", None, "%s held node id %d %s, and then %s"
                    % (c, node, when, "node id %s %s" % now if now else "no lease"))


# -- what a server holds
def restored(back, rows, where):
    """A restore brings back every row whose CHECK reads a layout through
    a SQL function (docs/guarantees.md, Restoring what reads a layout)."""
    if back != rows:
        raise Violation("rows lost on restore", "chk",
                        "%s: pg_restore brought back %d of the %d rows of chaos_checked, whose"
                        " CHECK reads layout chk through a SQL function" % (where, back, rows))


def layouts_saved(unsaved, stale, where):
    """The copy of idgen_layout that a dump restores before any table's
    data (idgen_layouts_saved()) holds the table's rows after every change,
    however the changes raced (docs/guarantees.md, Restoring what reads a
    layout): the rows it lacks, and those it holds that the table does not."""
    if unsaved or stale:
        raise Violation("layouts unsaved", None, "%s: idgen_layouts_saved() lacks %s and holds %s"
                        % (where, unsaved or "none of the table's rows", stale or "no other"))


# -- the outbox poller (docs/outbox.md)
def horizon_kept(h, highest, label, what, where):
    """idgen_horizon() never decreases along a lineage (restarts, crashes,
    clock steps, promotions of synchronous standbys), nor does
    idgen_horizon(name) of a layout other than idgen's own."""
    if highest is not None and h < highest:
        raise Violation("horizon went back", label, "%s: %s returned %d, below %d returned before on"
                        " this server or the one it was promoted from (%d IDs below)"
                        % (where, what, h, highest, highest - h))


def horizon_below_holders(h, least, holders, where):
    """docs/outbox.md: every transaction that took an ID below the horizon
    has ended; least: the least ID of the transactions still open."""
    if h > least:
        raise Violation("horizon passed a holder", "idgen", "%s: idgen_horizon() returned %d while %d open"
                        " transactions held IDs from %d" % (where, h, holders, least))


def read_once(ident, read, where):
    """A poller reads no committed outbox row twice (read: ID -> the step
    it was read at)."""
    if ident in read:
        raise Violation("row read twice", "idgen", "%s: outbox row %d read again; first read at"
                        " step %d" % (where, ident, read[ident]))


def none_missed(missed, cursor, where):
    """A poller reads every committed outbox row below its cursor."""
    if missed:
        raise Violation("row missed", "idgen", "%s: %d committed outbox rows below the cursor %d were"
                        " never read, e.g. %s" % (where, len(missed), cursor,
                                                  ", ".join(map(str, sorted(missed)[:5]))))


# -- the servers themselves
def ridden_out(behind, allowed, label, where):
    """A clock behind the newest ID by up to idgen.max_clock_regression_ms
    is ridden out, by borrowing or waiting (docs/guarantees.md, The clock
    steps back; A restart with the clock behind): only further behind is
    generation refused."""
    if behind <= allowed:
        raise Violation("promised wait refused", label, "%s refused with the clock %d ms behind, within"
                        " idgen.max_clock_regression_ms = %d" % (where, behind, allowed))


def no_crash(c, deaths):
    """No server process dies but by our SIGKILL (deaths: what its log
    says of those that did)."""
    if deaths:
        raise Violation("crash", None, "server %s: %s" % (c, "; ".join(deaths[:3])))


def connection_kept(c, killed, what):
    """A session loses its connection only to our SIGKILL of its server."""
    if killed is None or killed != c:
        raise Violation("connection lost", None, what)


def no_internal_error(code, killed, label, what):
    """idgen raises no internal error (XX000) but while we kill it."""
    if code == "XX000" and killed is None:
        raise Violation("internal error", label, what)


# -- idgen_adopt()
def adopt_changed(before, after, where):
    """idgen_adopt() changes nothing when it refuses (before, after: the
    column's default, identity, type, the count of keys and the largest)."""
    if before != after:
        raise Violation("adopt changed", None, "%s refused, yet changed the table: %s, then %s"
                        % (where, before, after))


def adopt_narrow(problem, where):
    """README, Adopting idgen: widen changes the columns that reference the
    key to bigint with it, and without widen a column too narrow for idgen
    IDs is refused.  problem: how it went otherwise, or None."""
    if problem:
        raise Violation("adopt narrow", None, "%s: %s" % (where, problem))


def adopt_refused(largest, error, where):
    """Keys below the range of new IDs are adopted."""
    raise Violation("adopt refused", None, "%s refused keys below the range of new IDs (the largest %d): %s"
                    % (where, largest, error))


def adopt_admitted(largest, low, why, where):
    """idgen_adopt() refuses keys that reach the range of new IDs: none
    ahead of the clock (low None: why says where they lie), and every ID
    the new default makes is above every key it admitted (low: the
    smallest)."""
    if low is None or low <= largest:
        raise Violation("adopt admitted", None, "%s admitted keys up to %d, though %s" % (
            where, largest, why if low is None else "the new default then made %d" % low))


# -- what a caller asks of idgen
def refused_definition(bad, error, before, after, where):
    """README, Layouts: fields are time first, then any of node, worker,
    sequence, shard and random, each once, in bits or digits that a bigint
    holds; a time unit of whole milliseconds.  A definition that breaks
    one is refused as the caller's error (SQLSTATE class 22 or 42), and
    the table is left as it was, however it was written (bad["writer"]).
    error: (SQLSTATE, message) or None; before, after: the table's rows,
    digested.  One at the edges of the rules (bad["valid"]) is taken, and
    the table changed."""
    if bad.get("valid"):
        if error is not None or before == after:
            raise Violation("valid definition refused", bad["name"], "%s: %s of %s, fields %s, widths %s, %s,"
                            " radix %s: %s" % (where, bad["writer"], bad["flaw"], bad["fields"], bad["widths"],
                                               bad["unit"], bad["radix"], "taken, the table unchanged"
                                               if error is None else "refused with %s (%s)" % (
                                                   error[0], error[1].splitlines()[0])))
        return
    if error is not None and (error[0] or "").startswith(("22", "42")) and before == after:
        return
    raise Violation("flawed definition", bad["name"], "%s: %s of %r, fields %s, widths %s, %s, radix %s, %s: %s" % (
        where, bad["writer"], bad["name"], bad["fields"], bad["widths"], bad["unit"], bad["radix"], bad["flaw"],
        "accepted" if error is None else "refused with %s (%s), the table %s" % (
            error[0], error[1].splitlines()[0], "unchanged" if before == after else "changed")))


def setting_judged(name, value, flawed, error, where):
    """README, Configuration: a value outside a setting's range, or a
    password in idgen.node_registry, is refused when set (ALTER SYSTEM) as
    the caller's error; a value at the edge of the range is taken."""
    if flawed and error is not None and (error[0] or "").startswith(("22", "42")):
        return
    if not flawed and error is None:
        return
    raise Violation("setting misjudged", None, "%s: ALTER SYSTEM SET idgen.%s = '%s' %s" % (
        where, name, value, "accepted" if error is None else "refused with %s (%s)" % (
            error[0], error[1].splitlines()[0])))


# -- what idgen runs in a caller's session
def no_user_code(calls, where):
    """docs/guarantees.md, Privileges: idgen's queries name pg_catalog's
    operators, so that a schema ahead of it in the caller's search_path
    cannot run its own inside idgen, with the caller's rights."""
    if calls:
        raise Violation("user operator called", None, "%s: an operator of a schema in the session's"
                        " search_path ran %d times inside idgen" % (where, calls))


def hidden(shown, where):
    """docs/guarantees.md, A role without privileges: idgen_workers and
    idgen_horizon_holders show it no more of other roles' sessions than
    pg_stat_activity does: their worker ids and pids, not their times or
    counts."""
    if shown:
        raise Violation("shown to a stranger", None, "%s: a role without privileges saw the times or"
                        " counts of %d rows of other sessions" % (where, shown))


def out_of_reach(reached, where):
    """docs/guarantees.md, A role without privileges: it may not execute
    the functions only idgen calls (triggers, sort support),
    idgen_stats_reset(), idgen_resume_after() or the registry's lease
    functions, nor read the registry's tokens, nor see who holds a node
    id; nor write idgen's tables, nor change its settings or see the
    registry's address (README, Settings).  reached: those it may."""
    if reached:
        raise Violation("reached by a stranger", None, "%s: a role without privileges may use %s"
                        % (where, ", ".join(reached)))


def no_standby_horizon(h, where):
    """docs/outbox.md, Standbys: a standby cannot see which of the
    primary's transactions hold IDs, so idgen_horizon() refuses there."""
    raise Violation("horizon on a standby", None, "%s: idgen_horizon() returned %s during recovery" % (where, h))


def flawed_start_refused(flaw, answers, named, must_refuse, must_answer, where):
    """README, Configuration: a server started with an invalid value in its
    configuration file refuses to generate, naming the setting, and never
    falls back to a default: where the default layout depends on it,
    decoding and horizons refuse too, naming it; otherwise the horizon is
    answered (docs/guarantees.md, of a bad idgen.node_id).  A mark file
    that cannot be read refuses generation, saying so.  Without idgen
    preloaded, generation, the horizon and the views refuse, saying how
    to preload, and decoding and objectid work (docs/guarantees.md,
    Without preloading).  None stops the server.  answers: probe name ->
    (SQLSTATE, message) or None, or {"start": why} where the server did
    not start; named: what a refusal must name; must_refuse and
    must_answer: the probes' names (flaws.PROBES)."""
    wrong = ["the server did not start (%s)" % answers["start"]] if "start" in answers else [
        "%s %s" % (p, "answered" if answers[p] is None else "refused without naming %s (%s)"
                   % (named, answers[p][1].splitlines()[0]))
        for p in must_refuse if answers[p] is None or named not in answers[p][1]] + [
        "%s refused (%s)" % (p, answers[p][1].splitlines()[0]) for p in must_answer if answers[p]]
    if wrong and "marks" in flaw:
        raise Violation("marks misread", None, "%s: started with its mark file garbled (%s): %s"
                        % (where, flaw["marks"], "; ".join(wrong)))
    if wrong:
        raise Violation("bad setting used", None, "%s: started with %s: %s" % (
            where, "idgen.%s = '%s'" % (flaw["setting"], flaw["value"]) if "setting" in flaw
            else "shared_preload_libraries = ''", "; ".join(wrong)))


def previous_mark_kept(previous_ms, newest_ms, where):
    """docs/node-ids.md: a server that leases a released node id is told
    the mark its holder released it with, at or above every ID the holder
    made (raised by the difference of epochs, where they differ).
    previous_ms: idgen_node_lease.previous_mark, in Unix ms, or None;
    newest_ms: where the holder's newest ID's tick ends (of 10 ms at most)."""
    if newest_ms and (previous_ms is None or previous_ms < newest_ms - 10):
        raise Violation("lease mark lost", None, "%s: the node id's previous mark is %s, below the newest ID"
                        " its holder made, of %s" % (where, "none" if previous_ms is None else fmt_ms(previous_ms),
                                                     fmt_ms(newest_ms)))
