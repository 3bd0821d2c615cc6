"""The invariants of the ways out of idgen's refusals for lost marks and
another cluster's IDs (README, idgen_resume_after(); docs/guarantees.md,
A new cluster holding an old one's IDs): the refusal reaches every
backend, the call raises the marks past the time it names, and a
restart ends it.  One function each, and each the one place its kind of
violation is raised."""

from invariants import Violation, fmt_ms


def refused_until_restart(got, where):
    """README, idgen_resume_after(): it raises the marks, and generation
    resumes at the next restart, also where the server generated before
    (after rows copied in that idgen cannot see).  got: the ID a new
    session got after the call, or None."""
    if got is not None:
        raise Violation("resumed before the restart", None, "%s: after idgen_resume_after(), before the restart,"
                        " a new session got ID %d" % (where, got))


# idgen's refusals that idgen_resume_after() and a restart end
UNTIL_RESUMED = ("idgen high-water marks were lost", "holds idgen IDs of another cluster",
                 "idgen generation resumes after a restart")


def refusal_reached_held(held_ids, error, where):
    """docs/guarantees.md: the refusal is the server's and sticky, a
    backend that generated before it refuses at its next tick.  held_ids:
    what a session held across a restore was handed after it; error: a new
    session's refusal just after, or None."""
    if held_ids and error is not None and any(m in error for m in UNTIL_RESUMED):
        raise Violation("refusal not sticky", None, "%s: a session held across the restore was handed %d"
                        " IDs, where a new session is refused: %s" % (where, len(held_ids), error.splitlines()[0]))


def resumed_past(got_ms, after_ms, layout, where):
    """README, idgen_resume_after(after): raises every mark past after.
    got_ms: the time of a new ID of layout after the restart; the tick
    that holds after may start a few milliseconds before it."""
    if got_ms < after_ms - 10:
        raise Violation("resume time ignored", layout, "%s: after idgen_resume_after(%s) and a restart, a new ID of"
                        " %s is of %s" % (where, fmt_ms(after_ms), layout, fmt_ms(got_ms)))


def resumed_at_restart(error, where):
    """README, idgen_resume_after(): generation resumes at the next
    restart.  error: a new session's refusal after it, or None.  The mark
    file that restart read is the one the server wrote: never unreadable."""
    if error is not None and any(m in error for m in UNTIL_RESUMED + ('"idgen_hwm" is unreadable',)):
        raise Violation("not resumed", None, "%s: after idgen_resume_after() and a restart, idgen_next()"
                        " still refused: %s" % (where, error.splitlines()[0]))
