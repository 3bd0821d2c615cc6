/*
 * step.c
 *		The step algorithm's slower parts: starting a tick, the clock's
 *		rules, waiting, and the floors a state starts above (step.h).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "base/node.h"
#include "base/random.h"
#include "base/settings.h"
#include "lease/lease.h"
#include "step.h"

/*
 * Sets a state's counters to 0, for a new holder or a state just zeroed:
 * where 64-bit atomics are emulated, zeroed memory is not yet an atomic.
 */
static void
step_reset_counts(GenState *st)
{
	pg_atomic_init_u64(&st->issued, 0);
	pg_atomic_init_u64(&st->regressions, 0);
	pg_atomic_init_u64(&st->waits, 0);
}

/*
 * A state that knows nothing yet: no tick used, counts at 0.  It starts
 * where step_start() puts it.
 */
void
step_state_init(GenState *st)
{
	memset(st, 0, sizeof(*st));
	step_reset_counts(st);
}

/*
 * A worker id's state given to a new holder: it keeps the newest tick its
 * holders used, which the new one starts after (step_start), and counts
 * afresh.
 */
void
step_state_hand_over(GenState *st)
{
	st->clock_behind = false;
	step_reset_counts(st);
}

/*
 * Makes st's next ID fall in a tick after the one starting at tick, unless
 * st is already past it: for a state that cannot know what was used in that
 * tick (a worker id's new holder, an old plan's fields).
 */
static void
step_skip_past(GenState *st, const GenPlan *plan, int64 tick)
{
	if (st->last_ms > tick)
		return;
	st->last_ms = tick;
	st->seq = plan->seq_max;
}

/*
 * A state new to this server run, or whose memory of its newest tick is
 * gone or stale (a crash, restart or promotion), starts after floor: every
 * tick used before starts below it, so the tick after the one holding
 * floor's previous millisecond is unused.  Starting there may run ahead of
 * the clock.  The floor was up to mark_step_ms above the IDs, so the clock
 * is trusted to have reached the floor less that and the allowed lead: a
 * clock behind that counts as a regression.
 */
static void
step_apply_floor(GenState *st, const GenPlan *plan, int64 floor)
{
	int64		first = layout_tick_start(plan->layout, floor - 1) + plan->tick_ms;

	if (st->last_ms >= first - plan->tick_ms)
		return;
	step_skip_past(st, plan, first - plan->tick_ms);
	st->clock_high = Max(st->clock_high,
						 floor - plan->limits->max_lead_ms - plan->mark_step_ms);
}

/*
 * Where a state starts, for every caller: after the tick starting at
 * after_tick, which others may have used with the state's fields (a worker
 * id's previous holders, an old plan), and above floor, below which every
 * tick used before lies (the marks'); STEP_NONE for either that does not
 * apply.  generator.c gives a worker id's new holder its predecessors'
 * newest tick and the mark's floor, and a shared state its floor each time
 * it takes the lock (slots.c's, higher for a recycled state);
 * layout_gen.c gives a state replanned its own newest tick.
 */
void
step_start(GenState *st, const GenPlan *plan, int64 after_tick, int64 floor)
{
	if (after_tick != STEP_NONE)
		step_skip_past(st, plan, after_tick);
	if (floor != STEP_NONE)
		step_apply_floor(st, plan, floor);
}

/*
 * The ways out of a refusal for the clock: wait for it, or, when the marks
 * that hold this node id back are its own (the clock jumped ahead and back),
 * restart on a node id that never generated in the layout, which starts from
 * the clock.  Marks of every node id (written by idgen 1.2, or the overflow
 * mark) hold back any node id, so then waiting is the only way.
 */
static int
step_refuse_clock_hint(const GenPlan *plan, int64 behind)
{
	int64		now = clock_now_ms();
	const char *until = timestamptz_to_str(clock_ms_to_timestamptz(now + behind));

	/* a leased node id is not the user's to change */
	if (lease_on)
		return errhint("Check the server's time synchronization. IDs resume at %s, when the clock catches up.",
					   until);
	if (plan->shared_floor - plan->limits->max_lead_ms - plan->mark_step_ms - now <=
		plan->limits->max_clock_regression_ms)
		return errhint("Check the server's time synchronization. IDs resume at %s, when the clock catches up; to generate at once, restart the server with an %s that has never generated IDs in layout \"%s\".",
					   until, "idgen.node_id", plan->layout->name);
	return errhint("Check the server's time synchronization. IDs resume at %s, when the clock catches up. Another %s would not help: marks that bind every node id hold layout \"%s\" back.",
				   until, "idgen.node_id", plan->layout->name);
}

/*
 * The clock is too far behind the newest ID, or the high-water mark.  After
 * a restart that moved idgen.epoch later, the mark is ahead by the move: say
 * so rather than blame the clock.
 */
static void
step_refuse_clock(const GenPlan *plan, int64 behind)
{
	int64		previous = lease_previous_mark();

	/*
	 * A leased node id starts above its previous holders' mark, which the
	 * registry has from their clocks: this server's may be right.
	 */
	if (previous >= clock_now_ms() + behind)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen IDs under node id %d start at %s, after the IDs its previous holder may have made",
						node_id(),
						timestamptz_to_str(clock_ms_to_timestamptz(clock_now_ms() + behind))),
				 errdetail("The registry holds a mark of %s for the node id, %lld ms ahead of this server's clock: the clock of the server that held it before ran ahead. IDs under the node id start after every ID that server could have made.",
						   timestamptz_to_str(clock_ms_to_timestamptz(previous)),
						   (long long) (previous - clock_now_ms())),
				 errhint("IDs are generated from %s on, when this server's clock gets there.",
						 timestamptz_to_str(clock_ms_to_timestamptz(clock_now_ms() + behind)))));
	if (clock_now_ms() < plan->epoch_later_until)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot generate idgen IDs because %s was moved later", "idgen.epoch"),
				 errdetail("IDs issued before the change have larger time fields; new IDs must be above them, and the clock reaches them in %lld ms.",
						   (long long) behind),
				 errhint("Set %s back to the date it had when those IDs were issued, and restart the server.",
						 "idgen.epoch")));
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("system clock is %lld ms behind the time of the newest idgen ID",
					(long long) behind),
			 errdetail("%s allows the clock to fall behind by at most %d ms.",
					   "idgen.max_clock_regression_ms", plan->limits->max_clock_regression_ms),
			 step_refuse_clock_hint(plan, behind)));
}

/*
 * The clock reads earlier than a reading this state already trusted.  Within
 * idgen.max_clock_regression_ms we keep going on logical time and log the
 * incident once; past it we refuse rather than run ahead of the clock for
 * that long.
 */
void
step_clock_behind(GenState *st, const GenPlan *plan, int64 now)
{
	int64		behind = st->clock_high - now;

	if (behind > plan->limits->max_clock_regression_ms)
		step_refuse_clock(plan, behind);
	if (!st->clock_behind)
	{
		st->clock_behind = true;
		step_count(&st->regressions, 1);
		if (plan->stats)
			stats_pending(plan->stats)->regressions++;
		ereport(LOG,
				(errmsg("idgen: system clock is %lld ms behind the time of the newest ID",
						(long long) behind),
				 errdetail("IDs continue from idgen's logical time until the clock catches up.")));
	}
}

/*
 * Sleeps until the clock reaches target_ms, holding no lock, so borrowing
 * stays within bounds.  A wait longer than the clock may lag the newest ID
 * (or than a high-water mark's step, after a restart) is refused instead:
 * no unbounded sleep.
 */
static void
step_sleep_until(const GenPlan *plan, int64 target_ms)
{
	int64		limit = Max(plan->limits->max_clock_regression_ms, plan->mark_step_ms) +
		plan->tick_ms;

	for (;;)
	{
		int64		now = clock_now_ms();

		if (now >= target_ms)
			return;
		if (target_ms - now > limit)
			step_refuse_clock(plan, target_ms - now);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(target_ms - now, 10), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Every new tick passes here (step_try), whichever path chose it, before
 * its mark is reserved, so the range check cannot be skipped.
 */
void
step_check_tick(const GenPlan *plan, int64 ms)
{
	const IdgenLayout *layout = plan->layout;

	if (unlikely(ms < layout->epoch_ms))
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("system clock is before the epoch of idgen layout \"%s\"", layout->name),
				 errhint("Check the server's clock, or use a layout with an earlier epoch (for the default layout, %s).",
						 "idgen.epoch")));
	layout_check_end(layout, ms);
}

/*
 * Starts the tick at ms, which step_try() asked for and whose mark the
 * caller reserved, and returns the first of n IDs in it.  The fields other
 * than the sequence are packed once per tick, not once per ID.  The
 * sequence starts where n values still fit (n is at most seq_max + 1, when
 * it starts at 0).
 */
int64
step_start_tick(GenState *st, const GenPlan *plan, int64 ms, int64 n)
{
	const IdgenLayout *layout = plan->layout;
	IdgenFields fields = {0};
	int64		span = Min(plan->seq_start_span, plan->seq_max + 2 - n);

	if (ms - st->clock_high > 0 && plan->stats)
	{
		StatsCounters *c = stats_pending(plan->stats);

		c->max_lead_ms = Max(c->max_lead_ms, ms - st->clock_high);
	}
	fields.value[IDGEN_FIELD_TIME] = layout_tick_number(layout, ms);
	fields.value[IDGEN_FIELD_NODE] = plan->node;
	fields.value[IDGEN_FIELD_WORKER] = plan->worker;
	st->ms_base = layout_pack(layout, &fields);
	st->last_ms = ms;
	st->seq = span > 0 ? (int64) (random_u64() % span) : 0;
	st->seq += n - 1;
	step_count(&st->issued, n);
	return st->ms_base + (st->seq - (n - 1)) * plan->seq_scale;
}

/* Waits for the clock as told, counting the wait for idgen_stats. */
void
step_wait(const GenPlan *plan, const GenWait *wait)
{
	StatsCounters *c = plan->stats ? stats_pending(plan->stats) : NULL;
	instr_time	start,
				spent;

	INSTR_TIME_SET_CURRENT(start);
	step_sleep_until(plan, wait->until_ms);
	if (c)
	{
		INSTR_TIME_SET_CURRENT(spent);
		INSTR_TIME_SUBTRACT(spent, start);
		c->clock_waits++;
		c->clock_wait_us += INSTR_TIME_GET_MICROSEC(spent);
	}
}


/*
 * The transaction's first ID publishes it (horizon.c); its IDs must then end
 * at or after its horizon floor Q.  A step given a reading below Q (a floor
 * ahead of this clock, a clock stepped back) first moves st to the tick
 * holding Q, unless st is there already.
 */
void
step_horizon(GenState *st, const GenPlan *plan, int64 now)
{
	int64		q = horizon_enter(now);

	if (now < q)
		step_skip_past(st, plan, layout_tick_start(plan->layout, q) - plan->tick_ms);
}
