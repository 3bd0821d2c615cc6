"""The invariants on what idgen tells a DBA beside its answers
(answers.py): a refusal's hint and SQLSTATE, the marks it folds at
startup, idgen_check_nodes() and idgen_stats' times.  One function
each, and each the one place its kind of violation is raised."""

import collections
import datetime
import re

from invariants import Violation, fmt_ms

# marks.h: marks run this far ahead of the newest tick asked for
MARK_STEP_MS = 1000
# how near the edge a hint is not judged: the file and the call are read apart
HINT_MARGIN_MS = 3000
RESUME_AT = re.compile(r"IDs resume at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?")
ALLOWED = re.compile(r"allows the clock to fall behind by at most (\d+) ms")
FRESH_NODE = "restart the server with an idgen.node_id that has never generated"
NO_FRESH_NODE = "Another idgen.node_id would not help"


def resume_ms(message):
    """The time a clock refusal's hint says IDs resume at, in Unix ms."""
    m = RESUME_AT.search(message)
    if not m:
        return None
    at = datetime.datetime.fromisoformat(m.group(1)).replace(tzinfo=datetime.timezone.utc)
    sign = -1 if m.group(2)[0] == "-" else 1
    shift = datetime.timedelta(hours=int(m.group(2)[1:]), minutes=int(m.group(3) or 0))
    return (at - sign * shift).timestamp() * 1000.0


def clock_hint_told(message, shared, behind, view, where, only_ahead=False):
    """docs/troubleshooting.md, system clock is N ms behind: the hint names
    when IDs resume (the clock plus how far behind it is) and, as the way
    not to wait, a node id that never generated in the layout, unless
    marks of every node id hold the layout back as far (then it says that
    another node id would not help).  shared: the highest such mark by
    idgen_hwm, None for none, as the fewest and the most marks folded at
    startup would make it (judged where both agree); view: the settings of
    the burst; only_ahead: judge only where those marks are ahead, as the
    file may lag."""
    at, allowed = resume_ms(message), ALLOWED.search(message)
    if at is None or allowed is None or int(allowed.group(1)) != view["regression"]:
        return
    now = at - behind
    ahead = [(m or 0) - view["lead"] - MARK_STEP_MS - now - view["regression"] for m in shared]
    fresh, not_fresh = FRESH_NODE in message, NO_FRESH_NODE in message
    if min(map(abs, ahead)) < HINT_MARGIN_MS or (ahead[0] > 0) != (ahead[1] > 0) or \
            (only_ahead and ahead[0] < 0) or (fresh == (ahead[0] <= 0) and not_fresh != fresh):
        return
    raise Violation("hint misleads", None, "%s: %s; idgen_hwm has %s" % (
        where, message.strip().splitlines()[-1],
        "no mark of every node id" if shared[0] is None else
        "marks of every node id up to %s, %d ms %s what the clock may fall behind and IDs run ahead of it" % (
            fmt_ms(shared[0]), abs(ahead[0]), "past" if ahead[0] > 0 else "within")))


def folded_passed_only(before, after, now, where):
    """docs/design.md, High-water marks: at startup only marks the clock
    has passed are folded into marks of every node id, so such a mark
    rises no higher than the clock (or its old value, moved with its
    layout's epoch, or a mark of one node id moved into it).  before:
    {(name, epoch_ms): mark} of idgen_hwm's lines, after: of its lines
    without a node id; now: idgen's clock after the start."""
    old = collections.defaultdict(int)
    for (name, epoch), mark in before.items():
        old[name] = max(old[name], mark)
    for (name, epoch), mark in sorted(after.items()):
        moved = [m + epoch - e for (n, e), m in before.items() if n == name]
        if mark > max(moved + [old[name], now]) + MARK_STEP_MS:
            raise Violation("marks ahead folded", name, "%s: idgen_hwm's mark of every node id for %s rose"
                            " to %s, %d ms past the clock at startup (before: %s)" % (
                                where, name, fmt_ms(mark), mark - now,
                                fmt_ms(max(moved)) if moved else "none"))


# docs/many-servers.md: how each kind of problem begins or reads
NODE_PROBLEMS = {"node": "idgen.node_id is", "bits": "idgen.node_bits is ", "epoch": "idgen.epoch is ",
                 "clash": " is also used by "}


def nodes_judged(rows, want, columns, server, where):
    """docs/many-servers.md: idgen_check_nodes() gives each listed server
    the problems of the table it has, and no other, and reports its node
    id, node_bits, epoch, whether in recovery and the node id's source as
    configured.  rows: (conninfo, problem, those columns); want: conninfo
    -> the kinds of problem it has (NODE_PROBLEMS); columns: conninfo ->
    those columns configured (node_id None: not judged); server: conninfo
    -> its name."""
    got = {r[0]: r[1:] for r in rows}
    for ci in sorted(want):
        said = got.get(ci, (None,) * 6)
        told = tuple(said[1:]) if columns[ci][0] is not None else (None,) + tuple(said[2:])
        expected = columns[ci] if columns[ci][0] is not None else (None,) + columns[ci][1:]
        kinds = {kind for kind, text in NODE_PROBLEMS.items() if text in (said[0] or "")}
        if ci not in got:
            wrong = "no row"
        elif (said[0] or "").startswith("could not check this server"):
            continue        # not reached then: a crowd may have held every slot
        elif told != expected and "node" not in want[ci]:
            wrong = "(node_id, node_bits, epoch, in_recovery, source) %s, configured %s" % (told, expected)
        elif kinds != want[ci] or bool(said[0]) != bool(want[ci]):
            wrong = "problem %r; expected %s" % (said[0], ", ".join(sorted(want[ci])) or "none")
        else:
            continue
        raise Violation("nodes misjudged", None, "%s: idgen_check_nodes() over %s says of %s: %s"
                        % (where, ", ".join(sorted(server.values())), server[ci], wrong))


def stats_times_told(rows, layouts, clocks, where, made=None):
    """README, Monitoring: idgen_stats' time_left is until the layout's
    time field runs out, and mark_lead_ms how far its mark is ahead of
    the clock; the mark, a high-water mark, is at or past every ID made.
    rows: (layout, its rows, time_left and mark in Unix ms, mark_lead_ms);
    layouts: name -> Layout; clocks: this host's clock and idgen's (either
    may be the view's); made: name -> [(a call's highest ID, its end in
    Unix ms)]."""
    for name, n, left, mark, lead in rows:
        layout = layouts.get(name)
        if n != 1 or layout is None or left is None:
            continue
        calls = (made or {}).get(name, [])
        end = layout.time_end_ms()
        near_end = end - max(clocks) < 60000
        off = min(abs(left - (end - now)) for now in clocks)
        wrong = None
        if not near_end and off > layout.tick_ms + 5000:
            wrong = "time_left %.0f s, %.0f s from the end of its time field (%s)" % (left / 1000.0, off / 1000.0,
                                                                                    fmt_ms(end))
        if not near_end and mark is not None and lead is not None and \
                min(abs(lead - (mark - now)) for now in clocks) > 2000:
            wrong = "mark_lead_ms %d with its mark at %s" % (lead, fmt_ms(mark))
        if calls and (mark is None or mark < max(layout.decode(i)["time"] for i, _ in calls)):
            wrong = "its mark at %s, below an ID it made" % ("NULL" if mark is None else fmt_ms(mark))
        if wrong:
            raise Violation("stats times", name, "%s: idgen_stats of layout %s has %s" % (where, name, wrong))


def refusal_coded(codes, code, message, where):
    """docs/troubleshooting.md gives each error's SQLSTATE, which code that
    retries or reports it relies on.  codes: troubleshooting_codes; code,
    message: an error idgen raised."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, documented in codes:
        if pattern.match(first) and code != documented:
            raise Violation("refusal miscoded", None, "%s: %s %s, where docs/troubleshooting.md gives %s"
                            % (where, code, first, documented))


# troubleshooting.md: the refusal for the clock, how far behind it is
CLOCK_REFUSAL = re.compile(r"system clock is (\d+) ms behind the time of the newest idgen ID")


def epoch_named(message, where):
    """A refusal of idgen's layout in a server run that began with
    idgen.epoch moved later than IDs it had issued: it names the epoch,
    and never says the clock fell behind (the clock did not move)."""
    if CLOCK_REFUSAL.match(message):
        raise Violation("refusal misnamed", "idgen", "%s: %s, in a run that moved idgen.epoch later than the"
                        " server's IDs" % (where, message.strip().splitlines()[0]))


def worker_row_told(row, expected, where):
    """README, idgen_workers: a session's row tells what its worker id
    did: ids_issued the IDs it made, last_ts its newest ID's time,
    worker_id its IDs' worker field, claimed_at when it claimed it,
    lead_ms how far its newest ID is ahead of the clock, clock_behind
    whether the clock is behind it now, clock_regressions how often it
    fell behind.  row: the columns read; expected: each a value, a (low,
    high) bound, or None where not judged."""
    for column, want in sorted(expected.items()):
        got = row[column]
        if want is None:
            continue
        if isinstance(want, tuple):
            told = got is not None and want[0] <= float(got) <= want[1]
        else:
            told = got is not None and (float(got) == want if isinstance(want, float) else got == want)
        if not told:
            raise Violation("workers misreported", None, "%s: its row of idgen_workers has %s %s, expected %s" % (
                where, column, got, "%.0f to %.0f" % want if isinstance(want, tuple) else want))


def holders_told(rows, holding, ended, where):
    """README, idgen_horizon_holders: each session in a transaction that
    took an ID, and no other, with since no later than its IDs' time (the
    horizon stands there).  rows: pid -> since (Unix ms) of the view's
    sessions; holding: pid -> its ID's time of the sessions in such a
    transaction; ended: pids of sessions whose transaction ended.  A
    prepared transaction that took an ID goes by its gid."""
    wrong = ["%s ended its transaction but shows" % pid for pid in ended if pid in rows]
    for pid, first in sorted(holding.items()):
        since = rows.get(pid)
        if pid not in rows:
            wrong.append("%s holds an ID in an open transaction but has no row" % pid)
        elif since is None or float(since) > first:
            wrong.append("%s has since %s, after its ID's time %s" % (
                pid, "NULL" if since is None else fmt_ms(float(since)), fmt_ms(first)))
    if wrong:
        raise Violation("holders misreported", None, "%s: idgen_horizon_holders: %s" % (where, "; ".join(wrong[:3])))
