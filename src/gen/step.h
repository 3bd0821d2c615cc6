/*
 * step.h
 *		The step algorithm: the next IDs of a generator state under a plan,
 *		knowing nothing of where the state lives nor of high-water marks.
 *		Of other modules it calls only base/ (layout, clock, random, the
 *		node id), the horizon's transaction floor, the lease's previous mark
 *		for a refusal, and stats' counters; its caller (generator.c)
 *		reserves each new tick's mark and tells the holder.
 *
 * Uniqueness rests on three rules:
 *
 *	- logical time never goes back: it is the larger of the clock and the
 *	  newest tick used, so a clock step back keeps counting in the newest
 *	  tick instead of reusing an older one;
 *	- a tick whose sequence is used up is left for the next one, borrowed
 *	  ahead of the clock up to idgen.max_lead_ms;
 *	- a state that cannot know what was used (a worker id's new holder, a
 *	  restart) starts after what was used: the holders' newest tick, the
 *	  high-water mark.
 *
 * The sequence of each new tick starts at a random value in the lower half
 * of its range, so the low digits of IDs spread evenly (id % N) even at one
 * ID per tick, and every tick still holds at least half its range.  The hot
 * path, step_try(), is inline; the rest is in step.c.
 */
#ifndef IDGEN_STEP_H
#define IDGEN_STEP_H

#include "port/atomics.h"

#include "base/clock.h"
#include "base/layout.h"
#include "base/settings.h"
#include "horizon/horizon.h"
#include "stats.h"

/*
 * Generator state: where a worker id (or a layout's shared state) is in its
 * layout's ticks.  Whoever owns it writes it: a backend's own memory, its
 * worker slot (slots.c), or a state shared under a lock.  idgen_workers reads a
 * slot's counters without a lock, so they are atomics, read whole on
 * platforms without 8-byte loads too; step_count() adds to them.
 */
typedef struct GenState
{
	int64		last_ms;		/* Unix ms of the newest tick used here */
	int64		clock_high;		/* highest clock reading trusted here */
	int64		ms_base;		/* the ID of last_ms with sequence 0 */
	int64		seq;			/* sequence of the newest ID in last_ms */
	bool		clock_behind;	/* riding out a clock regression */
	pg_atomic_uint64 issued;	/* IDs made by the current holder */
	pg_atomic_uint64 regressions;	/* clock regressions seen by the holder */
	pg_atomic_uint64 waits;		/* times the holder slept for the clock */
} GenState;

/*
 * How this backend fills a layout's fields: the node and worker it packs,
 * the sequence's range and place, and where shard values may fall.
 */
typedef struct GenPlan
{
	const IdgenLayout *layout;
	int64		tick_ms;
	int64		seq_max;
	int64		seq_start_span; /* new ticks start below it; 0: at 0 */
	int64		seq_scale;
	int64		node;
	int64		worker;
	int64		shard_lo;		/* shards this node may use */
	int64		shard_count;
	const IdgenLimits *limits;	/* lead and clock regression allowed */
	int64		mark_step_ms;	/* how far a floor may lie above the IDs below it */
	int64		shared_floor;	/* the floor of a node id new to the layout */
	int64		epoch_later_until;	/* the epoch moved later: refusals before
									 * this blame that; else PG_INT64_MIN */
	StatsLocal *stats;			/* this backend's counts of the layout */
} GenPlan;

/*
 * What step_try() did: made an ID; needs the clock to reach until_ms, which
 * the caller waits for holding no lock (step_wait); or needs a new tick
 * starting at tick_ms, which the caller starts with step_start_tick() once
 * the tick's mark is reserved.
 */
typedef enum StepResult
{
	STEP_DONE,
	STEP_WAIT,
	STEP_NEW_TICK,
} StepResult;

typedef struct GenWait
{
	int64		until_ms;		/* STEP_WAIT */
	int64		tick_ms;		/* STEP_NEW_TICK */
} GenWait;


/* step_start()'s argument that does not apply */
#define STEP_NONE PG_INT64_MIN

extern void step_state_init(GenState *st);
extern void step_state_hand_over(GenState *st);
extern void step_start(GenState *st, const GenPlan *plan, int64 after_tick, int64 floor);
extern void step_clock_behind(GenState *st, const GenPlan *plan, int64 now);
extern void step_check_tick(const GenPlan *plan, int64 ms);
extern int64 step_start_tick(GenState *st, const GenPlan *plan, int64 ms, int64 n);
extern void step_wait(const GenPlan *plan, const GenWait *wait);
extern void step_horizon(GenState *st, const GenPlan *plan, int64 now);

/*
 * Adds n to a counter of a state.  Only the state's writer adds (its owner,
 * or whoever holds its lock), so a read and a write do, without the locked
 * instruction of pg_atomic_fetch_add_u64() on the hot path: on 64-bit
 * platforms they are a plain load and store.
 */
static inline void
step_count(pg_atomic_uint64 *counter, uint64 n)
{
	pg_atomic_write_u64(counter, pg_atomic_read_u64(counter) + n);
}

/*
 * Makes the next n IDs of st, n consecutive sequence values of one tick, and
 * puts the first into *id; idgen_next() passes n = 1, a constant that folds
 * away.  When that needs the clock to move on, or a new tick, it changes
 * nothing that matters, fills *wait and says which.
 */
static pg_attribute_always_inline StepResult
step_try(GenState *st, const GenPlan *plan, int64 now, int64 n,
		 int64 *id, GenWait *wait)
{
	/* The transaction's first ID, or a clock below its horizon floor. */
	if (unlikely(now < horizon_xact_ms))
		step_horizon(st, plan, now);
	if (likely(now >= st->clock_high))
	{
		st->clock_high = now;
		if (unlikely(st->clock_behind))
			st->clock_behind = false;
	}
	else
		step_clock_behind(st, plan, now);
	if (unlikely(plan->tick_ms != 1))
		now = layout_tick_start(plan->layout, now);

	/* Check the clock against logical time before touching the sequence. */
	if (now <= st->last_ms && st->seq <= plan->seq_max - n)
		st->seq += n;
	else
	{
		int64		tick = now;

		if (now <= st->last_ms)
		{
			tick = st->last_ms + plan->tick_ms;
			if (tick > st->clock_high + plan->limits->max_lead_ms)
			{
				step_count(&st->waits, 1);
				wait->until_ms = tick - plan->limits->max_lead_ms;
				return STEP_WAIT;
			}
		}
		step_check_tick(plan, tick);
		wait->tick_ms = tick;
		return STEP_NEW_TICK;
	}
	step_count(&st->issued, n);
	*id = st->ms_base + (st->seq - (n - 1)) * plan->seq_scale;
	return STEP_DONE;
}

#endif							/* IDGEN_STEP_H */
