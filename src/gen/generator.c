/*
 * generator.c
 *		Attaching a backend to a worker id, and the loop that drives the step
 *		in a state: idgen_next(), the hot path, and the others' generating.
 *		The step algorithm itself is step.c's; planning is plan.c's; the
 *		per-layout generators are layout_gen.c's; the other SQL entry points
 *		are next.c's.
 *
 * Calls go one way: this file asks step.c for the next ID, and when step.c
 * answers that a new tick is needed, reserves the tick's high-water mark
 * (marks/), notes it for the worker id's next holder, and has step.c start
 * the tick.  What step.c calls is listed once, in step.h.
 *
 * Each backend generates in the worker slot it claimed (slots.c), so
 * the hot path reads the clock, bumps a counter in memory only it writes, and
 * packs the fields: no lock, no I/O.  A worker id's new holder starts, in
 * every layout, after the newest tick used under it
 * (generator_start_as_holder()).
 *
 * idgen_next() stays in this file, so that its step is inlined into it.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "storage/ipc.h"

#include "base/clock.h"
#include "base/settings.h"
#include "generator.h"
#include "lease/lease.h"
#include "marks/marks.h"
#include "provenance/provenance.h"
#include "stats.h"

/* How often a backend in the shared slot looks for a dedicated one. */
#define RECLAIM_INTERVAL_MS 1000

static Attachment me = {.mode = ATTACH_UNATTACHED};

/* Runs when this backend claims a slot (generator_set_claim_hook). */
static void (*generator_claim_hook) (void) = NULL;

PG_FUNCTION_INFO_V1(idgen_next);

/*
 * The default layout is planned like any other; its worker field is the
 * slots', so this backend's worker id always fits it, and its state is
 * the slot's (or the shared slot's).
 */
static void
generator_plan_default(void)
{
	int64		workers;

	plan_target(&me.default_target, layout_default(), &workers);
	me.default_target.plan.worker += me.worker;
	me.default_target.holder_last_ms = me.slot ? &me.slot->last_ms : NULL;
}

/*
 * Where a worker id's new holder starts, in every layout: after the newest
 * tick any holder used under the worker id, and above the high-water mark
 * (step_start).
 */
void
generator_start_as_holder(GenState *st, const GenTarget *t)
{
	step_start(st, &t->plan, layout_tick_start(t->plan.layout, me.slot->last_ms),
			   marks_floor(t->mark_entry));
}

/*
 * Starts the tick step_try() asked for once its mark is reserved, and puts
 * its first ID in *id; false when the mark awaits synchronous standbys
 * (the caller waits with generator_wait_confirmed(), holding no lock).  A
 * dedicated slot's next holder will start after the tick.
 */
static pg_noinline bool
generator_start_tick(GenState *st, const GenTarget *t, int64 tick, int64 n, int64 *id)
{
	/* a refusal reaches backends that generated before it */
	provenance_check_tick();
	/* The tick's start: a long tick must not push the mark far ahead. */
	if (!marks_reserve(t->mark_entry, tick))
		return false;
	/*
	 * A leased node id: the lease must hold the tick.  Checked after the
	 * mark, so that the marks a released lease reports are above every tick
	 * that passed here.
	 */
	lease_check_tick(tick, t->plan.tick_ms);
	if (t->holder_last_ms != NULL)
		*t->holder_last_ms = Max(*t->holder_last_ms, tick + t->plan.tick_ms - 1);
	*id = step_start_tick(st, &t->plan, tick, n);
	return true;
}

/* Waits for synchronous standbys to confirm the mark above tick. */
static void
generator_wait_confirmed(const GenTarget *t, int64 tick)
{
	if (t->plan.stats)
		stats_pending(t->plan.stats)->confirm_waits++;
	marks_wait_confirmed(t->mark_entry, tick);
}

/*
 * The next n IDs of a state no other process writes; inlined with n = 1
 * into idgen_next(), so its step stays the one-ID step.
 */
static pg_attribute_always_inline int64
generator_step(GenState *st, const GenTarget *t, int64 n)
{
	int64		id;
	GenWait		wait;

	for (;;)
	{
		StepResult	r = step_try(st, &t->plan, clock_now_ms(), n, &id, &wait);

		if (likely(r == STEP_DONE))
			return id;
		if (r == STEP_WAIT)
			step_wait(&t->plan, &wait);
		else if (generator_start_tick(st, t, wait.tick_ms, n, &id))
			return id;
		else
			generator_wait_confirmed(t, wait.tick_ms);
	}
}

/*
 * provenance.c's row of this cluster was rolled back with the transaction
 * that added it: check again before the next ID, which the slow path
 * (me.gen NULL) makes sure of.
 */
static void
generator_recheck(void)
{
	me.recheck = true;
	me.gen = NULL;
}

/*
 * Generating needs shared memory, every setting valid, a primary and a
 * readable mark file.
 */
static void
generator_require(void)
{
	slots_require();
	settings_require_all();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate idgen IDs during recovery"),
				 errdetail("A standby shares its primary's idgen.node_id, so IDs it made could repeat the primary's."),
				 errhint("Generate IDs on the primary.")));
	marks_require_readable();
	lease_require();
	provenance_set_recheck_hook(generator_recheck);
	provenance_require();
	clone_warn_once();
}

/* At exit: a dedicated slot goes back to the slots for the next holder. */
static void
generator_detach(int code, Datum arg)
{
	if (me.mode != ATTACH_DEDICATED)
		return;
	slots_release_slot(me.worker);
	me.gen = NULL;
	me.slot = NULL;
	me.mode = ATTACH_UNATTACHED;
}

/* Attaches in DEDICATED mode if a slot is free, else in SHARED mode. */
static void
generator_claim(void)
{
	WorkerSlot *slot;
	int			index;

	Assert(me.mode != ATTACH_DEDICATED);
	/* Before claiming: a slot must never be held without its release set up. */
	if (!me.release_set)
	{
		on_shmem_exit(generator_detach, (Datum) 0);
		me.release_set = true;
	}
	slot = slots_claim_slot(&index, me.mode == ATTACH_SHARED);
	if (slot != NULL)
	{
		/*
		 * The shared worker id is the highest: in a tick it used there, its
		 * own worker id's IDs would sort below those it already has.
		 */
		slot->last_ms = Max(slot->last_ms, me.shared_last_ms);
		me.mode = ATTACH_DEDICATED;
		me.worker = index;
		me.slot = slot;
		generator_plan_default();
		generator_start_as_holder(&slot->gen, &me.default_target);
		me.gen = &slot->gen;
		stats_track(me.default_target.plan.stats, &me.gen->issued);
		if (generator_claim_hook != NULL)
			generator_claim_hook();
	}
	else
	{
		me.mode = ATTACH_SHARED;
		me.worker = slots_shared_index();
		generator_plan_default();
	}
}

/*
 * hook runs when this backend claims a slot: a plan made before packs
 * another worker id (layout_gen.c, which sits above this file and registers
 * here, so that calls go one way).
 */
void
generator_set_claim_hook(void (*hook) (void))
{
	generator_claim_hook = hook;
}

/*
 * Before generating: attaches a backend that never generated; a backend in
 * the shared slot tries for a dedicated one now and then.
 */
void
generator_enter(void)
{
	int64		now;

	if (unlikely(me.recheck))
	{
		provenance_require();
		me.recheck = false;
		if (me.mode == ATTACH_DEDICATED)
			me.gen = &me.slot->gen;
	}
	if (me.mode == ATTACH_UNATTACHED)
	{
		generator_require();
		generator_claim();
		me.last_claim_attempt_ms = clock_now_ms();
		return;
	}
	now = clock_now_ms();
	if (me.mode != ATTACH_SHARED || now - me.last_claim_attempt_ms < RECLAIM_INTERVAL_MS)
		return;
	me.last_claim_attempt_ms = now;
	generator_claim();
}

/*
 * A state the server's backends share under a lock (shared is NULL for the
 * default layout's shared slot, else where the layout definition's state
 * was last found): the same step as in a backend's own state, with the
 * clock read under the lock, as another holder may have just moved on, and
 * above the floor slots.c gives (slots_lock_state).
 */
static int64
generator_next_locked(LayoutStateRef *shared, const GenTarget *t, int64 n)
{
	const GenPlan *plan = &t->plan;
	int64		id;
	GenWait		wait;

	for (;;)
	{
		int64		floor;
		GenState   *st = slots_lock_state(shared ? plan->layout : NULL, t->mark_entry,
										  shared, &floor);
		StepResult	r;
		bool		done;

		step_start(st, plan, STEP_NONE, floor);
		r = step_try(st, plan, clock_now_ms(), n, &id, &wait);
		done = r == STEP_DONE ||
			(r == STEP_NEW_TICK && generator_start_tick(st, t, wait.tick_ms, n, &id));
		if (done && me.mode == ATTACH_SHARED)
			me.shared_last_ms = Max(me.shared_last_ms, st->last_ms + plan->tick_ms - 1);
		slots_unlock_state(shared);
		if (done)
		{
			if (plan->stats)
			{
				stats_pending(plan->stats)->ids += n;
				stats_pending(plan->stats)->shared_ids += n;
			}
			return id;
		}
		if (r == STEP_WAIT)
			step_wait(plan, &wait);
		else
			generator_wait_confirmed(t, wait.tick_ms);
	}
}

/* Kept out of line so that idgen_next's common path stays a small leaf. */
static pg_noinline int64
generator_next_slow(int64 n)
{
	generator_enter();
	if (me.gen != NULL)
		return generator_step(me.gen, &me.default_target, n);
	return generator_next_locked(NULL, &me.default_target, n);
}

static inline int64
generator_next(void)
{
	if (likely(me.gen != NULL))
		return generator_step(me.gen, &me.default_target, 1);
	return generator_next_slow(1);
}

/* The first of n consecutive IDs of the default layout. */
pg_noinline int64
generator_next_default(int64 n)
{
	if (likely(me.gen != NULL))
		return generator_step(me.gen, &me.default_target, n);
	return generator_next_slow(n);
}

/*
 * The first of n IDs of a layout's target: in own, a state no other process
 * writes, or else in the state shared under a lock.
 */
int64
generator_next_target(GenState *own, LayoutStateRef *shared, const GenTarget *t, int64 n)
{
	if (own != NULL)
		return generator_step(own, t, n);
	return generator_next_locked(shared, t, n);
}

/* How this backend is attached, for planning the other layouts. */
const Attachment *
generator_attachment(void)
{
	return &me;
}

Datum
idgen_next(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(generator_next());
}
