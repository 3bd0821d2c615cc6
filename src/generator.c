/*
 * generator.c
 *		idgen_next() and its kin: the SQL entry points, attaching a backend
 *		to a worker id, and planning how it generates in each layout.  The
 *		step algorithm itself is step.c's.
 *
 * Calls go one way: this file asks step.c for the next ID, and when step.c
 * answers that a new tick is needed, reserves the tick's high-water mark
 * (hwm.c), notes it for the worker id's next holder, and has step.c start
 * the tick.  step.c calls only layout, clock, horizon and stats; hwm.c and
 * registry.c never call generator.c or step.c.
 *
 * Each backend generates in the worker slot it claimed from the registry, so
 * the hot path reads the clock, bumps a counter in memory only it writes, and
 * packs the fields: no lock, no I/O.  A worker id's new holder starts, in
 * every layout, after the newest tick used under it (one rule:
 * generator_start_as_holder()).
 *
 * idgen_next_block(n) takes n consecutive sequence values of one tick in one
 * step, so the block is n consecutive integers no other call can return.
 *
 * idgen_next(layout) follows the same rules in any layout, counting in the
 * layout's ticks.  A layout with a worker field generates in per-backend
 * state when the backend's worker id fits; otherwise, and in layouts without
 * one, in a state per layout definition shared by the server's backends
 * under a lock of its own (registry.c).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "catalog.h"
#include "clone.h"
#include "clock.h"
#include "compat.h"
#include "hwm.h"
#include "layout.h"
#include "lease.h"
#include "provenance.h"
#include "random.h"
#include "registry.h"
#include "settings.h"
#include "stats.h"
#include "step.h"

/* Most IDs idgen_next_batch() makes in one call; they are kept in memory. */
#define BATCH_MAX		1000000

/* How often a backend in the shared slot looks for a dedicated one. */
#define RECLAIM_INTERVAL_MS 1000

/*
 * How this backend generates in a layout: the step's plan, and what the step
 * does not know: the layout's high-water mark, and, in a dedicated slot, the
 * slot's newest millisecond, which its next holder starts after.
 */
typedef struct GenTarget
{
	GenPlan		plan;
	HwmEntry   *hwm;
	int64	   *holder_last_ms; /* NULL unless in a dedicated slot */
} GenTarget;

/* A layout's target and, when it has a worker id of its own, its state. */
typedef struct LayoutGen
{
	char		name[NAMEDATALEN];	/* hash key */
	GenTarget	target;
	GenState	gen;
	bool		dedicated;
	LayoutStateRef shared;		/* the definition's shared state, if not */
	uint64		claim;			/* me.claims when planned */
	uint64		catalog;		/* catalog_generation() when planned */
} LayoutGen;

/*
 * How this backend is attached to a worker id.  The invariant, by mode:
 *
 *	UNATTACHED: it has not generated yet; nothing else here is meaningful.
 *	DEDICATED: it holds registry slot number worker, slot; gen is &slot->gen,
 *	  which only this backend writes; the slot is given back at exit.
 *	SHARED: every dedicated slot was taken; worker is the shared slot's
 *	  number, slot and gen are NULL, and it generates in the shared slot
 *	  under its lock, trying for a dedicated slot every RECLAIM_INTERVAL_MS.
 *
 * In both attached modes default_target packs worker.  gen != NULL is the
 * hot path's one test: it holds exactly in DEDICATED.  claims counts the
 * slots claimed, so that a layout's plan made under an earlier attachment
 * is made again (LayoutGen.claim).
 */
typedef enum AttachMode
{
	ATTACH_UNATTACHED,
	ATTACH_DEDICATED,
	ATTACH_SHARED,
} AttachMode;

typedef struct Attachment
{
	GenState   *gen;			/* &slot->gen when DEDICATED, else NULL */
	GenTarget	default_target;
	AttachMode	mode;
	RegistrySlot *slot;			/* when DEDICATED */
	int64		worker;			/* registry slot number, when attached */
	uint64		claims;			/* slots claimed so far */
	int64		last_claim_attempt_ms;
	bool		release_set;	/* the exit callback that gives slot back is set */
} Attachment;

static Attachment me = {.mode = ATTACH_UNATTACHED};
static HTAB *layout_gens = NULL;

PG_FUNCTION_INFO_V1(idgen_next);
PG_FUNCTION_INFO_V1(idgen_next_batch);
PG_FUNCTION_INFO_V1(idgen_next_layout);
PG_FUNCTION_INFO_V1(idgen_next_batch_layout);
PG_FUNCTION_INFO_V1(idgen_next_block);
PG_FUNCTION_INFO_V1(idgen_next_block_layout);

static void generator_plan(GenTarget *t, const IdgenLayout *layout, int64 *workers);

/*
 * The default layout is planned like any other; its worker field is the
 * registry's, so this backend's worker id always fits it, and its state is
 * the slot's (or the shared slot's).
 */
static void
generator_plan_default(void)
{
	int64		workers;

	generator_plan(&me.default_target, layout_default(), &workers);
	me.default_target.plan.worker += me.worker;
	me.default_target.holder_last_ms = me.slot ? &me.slot->last_ms : NULL;
}

/*
 * The one rule for a worker id's new holder, in every layout: start after
 * the newest tick any holder used under the worker id, and above the
 * high-water mark.
 */
static void
generator_start_as_holder(GenState *st, const GenTarget *t)
{
	step_skip_past(st, &t->plan, step_tick_start(&t->plan, me.slot->last_ms));
	step_apply_floor(st, &t->plan, hwm_floor(t->hwm));
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
	/* The tick's start: a long tick must not push the mark far ahead. */
	if (!hwm_reserve(t->hwm, tick))
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
	hwm_wait_confirmed(t->hwm, tick);
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

/* Generating needs shared memory, every setting valid, and a primary. */
static void
generator_require(void)
{
	registry_require();
	settings_require_all();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate idgen IDs during recovery"),
				 errdetail("A standby shares its primary's idgen.node_id, so IDs it made could repeat the primary's."),
				 errhint("Generate IDs on the primary.")));
	lease_require();
	provenance_require();
	clone_warn_once();
}

/* At exit: a dedicated slot goes back to the registry for the next holder. */
static void
generator_detach(int code, Datum arg)
{
	if (me.mode != ATTACH_DEDICATED)
		return;
	registry_release_slot(me.worker);
	me.gen = NULL;
	me.slot = NULL;
	me.mode = ATTACH_UNATTACHED;
}

/* Attaches in DEDICATED mode if a slot is free, else in SHARED mode. */
static void
generator_claim(void)
{
	RegistrySlot *slot;
	int			index;

	Assert(me.mode != ATTACH_DEDICATED);
	/* Before claiming: a slot must never be held without its release set up. */
	if (!me.release_set)
	{
		on_shmem_exit(generator_detach, (Datum) 0);
		me.release_set = true;
	}
	slot = registry_claim_slot(&index, me.mode == ATTACH_SHARED);
	if (slot != NULL)
	{
		me.mode = ATTACH_DEDICATED;
		me.worker = index;
		me.claims++;
		me.slot = slot;
		generator_plan_default();
		generator_start_as_holder(&slot->gen, &me.default_target);
		me.gen = &slot->gen;
		stats_track(me.default_target.plan.stats, me.gen);
	}
	else
	{
		me.mode = ATTACH_SHARED;
		me.worker = registry_shared_index();
		generator_plan_default();
	}
}

static void
generator_attach(void)
{
	generator_require();
	generator_claim();
	me.last_claim_attempt_ms = clock_now_ms();
}

/* A backend in the shared slot tries for a dedicated one now and then. */
static void
generator_maybe_reclaim(int64 now)
{
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
 * above the floor the registry gives (registry_lock_state).
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
		GenState   *st = registry_lock_state(shared ? plan->layout : NULL, t->hwm,
												 shared, &floor);
		StepResult	r;
		bool		done;

		step_apply_floor(st, plan, floor);
		r = step_try(st, plan, clock_now_ms(), n, &id, &wait);
		done = r == STEP_DONE ||
			(r == STEP_NEW_TICK && generator_start_tick(st, t, wait.tick_ms, n, &id));
		registry_unlock_state(shared);
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
	if (me.mode == ATTACH_UNATTACHED)
		generator_attach();
	else
		generator_maybe_reclaim(clock_now_ms());
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
static pg_noinline int64
generator_next_block(int64 n)
{
	if (likely(me.gen != NULL))
		return generator_step(me.gen, &me.default_target, n);
	return generator_next_slow(n);
}

static void
generator_cannot(const IdgenLayout *layout, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot generate IDs in idgen layout \"%s\"", layout->name),
			 errdetail_internal("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Where this server's node id goes: the node field; else the top of the
 * worker field; else, for layouts with a shard only, shards are split among
 * the nodes.  A layout with none of these could repeat another server's IDs.
 */
static void
generator_plan_machine(GenPlan *plan, int64 *workers)
{
	const IdgenLayout *l = plan->layout;
	int64		nodes = ((int64) 1) << idgen_node_bits;

	*workers = 0;
	plan->shard_lo = 0;
	plan->shard_count = layout_has_field(l, IDGEN_FIELD_SHARD) ? l->size[IDGEN_FIELD_SHARD] : 0;
	if (layout_has_field(l, IDGEN_FIELD_NODE))
	{
		if (idgen_node_id >= l->size[IDGEN_FIELD_NODE])
			generator_cannot(l, psprintf("Its node field holds node ids from 0 to %lld, and this server's %s is %d.",
										 (long long) l->size[IDGEN_FIELD_NODE] - 1,
										 "idgen.node_id", idgen_node_id),
							 "Generate in it on servers whose node ids fit.");
		plan->node = idgen_node_id;
		if (layout_has_field(l, IDGEN_FIELD_WORKER))
			*workers = l->size[IDGEN_FIELD_WORKER];
	}
	else if (layout_has_field(l, IDGEN_FIELD_WORKER))
	{
		*workers = l->size[IDGEN_FIELD_WORKER] / nodes;
		if (*workers < 1)
			generator_cannot(l, psprintf("It has no node field, and its worker field is too narrow to hold %d node ids.",
										 (int) nodes), NULL);
		plan->worker = idgen_node_id * *workers;
	}
	else if (plan->shard_count / nodes >= 1)
	{
		plan->shard_count /= nodes;
		plan->shard_lo = idgen_node_id * plan->shard_count;
	}
	else
		generator_cannot(l, "It has no node, worker or shard field wide enough to tell this server's IDs from other servers'.",
						 "Give the layout a node field.");
}

/*
 * How any layout's fields are filled, but for the worker id, which the
 * caller adds to plan->worker; *workers is the number the layout holds.
 */
static void
generator_plan(GenTarget *t, const IdgenLayout *layout, int64 *workers)
{
	GenPlan    *plan = &t->plan;

	if (!layout_has_field(layout, IDGEN_FIELD_SEQ))
		generator_cannot(layout, "It has no sequence field.", "Give the layout a sequence field.");
	memset(t, 0, sizeof(*t));
	plan->layout = layout;
	t->hwm = hwm_attach(layout);
	plan->stats = stats_local(layout, t->hwm);
	plan->limits = &idgen_limits;
	plan->mark_step_ms = HWM_STEP_MS;
	/* Fixed once the layout's mark is attached: only recovery moves them. */
	plan->shared_floor = hwm_shared_floor(t->hwm);
	plan->epoch_later_until = hwm_epoch_later_until(t->hwm);
	plan->tick_ms = layout->tick_ms;
	plan->seq_max = layout->size[IDGEN_FIELD_SEQ] - 1;
	plan->seq_scale = layout->scale[IDGEN_FIELD_SEQ];
	/* Only a lowest sequence spreads the low digits; otherwise count from 0. */
	plan->seq_start_span = (plan->seq_scale == 1) ? layout->size[IDGEN_FIELD_SEQ] / 2 : 0;
	generator_plan_machine(plan, workers);
}

/*
 * lg's plan is whole and current: only now, as planning can raise an error
 * (a layout this server cannot generate in), and a plan marked current is
 * used without another look.
 */
static void
generator_layout_planned(LayoutGen *lg)
{
	lg->claim = me.claims;
	lg->catalog = catalog_generation();
}

/*
 * Sets up how this backend generates in lg's layout.  Its worker id is its
 * registry slot's, when that fits below the layout's last worker id, which
 * the backends sharing the layout's state use.
 */
static void
generator_plan_layout(LayoutGen *lg, const IdgenLayout *layout)
{
	GenTarget  *t = &lg->target;
	GenPlan    *plan = &t->plan;
	int64		workers;
	bool		was_dedicated = lg->dedicated && lg->claim == me.claims;

	/* Count the old plan's IDs before its state may be started over. */
	stats_untrack(plan->stats, &lg->gen);
	if (layout == layout_default())
	{
		/*
		 * The default layout by name generates in the default target
		 * (generator_prepare): a second state of one definition would start
		 * apart from it, and take its counts.
		 */
		memset(t, 0, sizeof(*t));
		plan->layout = layout;
		lg->dedicated = false;
		generator_layout_planned(lg);
		return;
	}
	generator_plan(t, layout, &workers);
	/* The definition may have changed: look its shared state up again. */
	lg->shared = (LayoutStateRef) LAYOUT_STATE_REF_INIT;
	lg->dedicated = me.mode == ATTACH_DEDICATED && me.worker < workers - 1;
	plan->worker += lg->dedicated ? me.worker : Max(workers - 1, 0);
	if (lg->dedicated)
	{
		t->holder_last_ms = &me.slot->last_ms;
		if (!was_dedicated)
		{
			memset(&lg->gen, 0, sizeof(lg->gen));
			generator_start_as_holder(&lg->gen, t);
		}
		else
			/* Fields packed under the old plan must not be reused. */
			step_skip_past(&lg->gen, plan, lg->gen.last_ms + plan->tick_ms);
		stats_track(plan->stats, &lg->gen);
	}
	generator_layout_planned(lg);
}

/* The layout a call site named last, so that repeated calls skip the lookup. */
typedef struct LayoutCallCache
{
	LayoutGen  *lg;
	int			len;
	char		name[NAMEDATALEN];
} LayoutCallCache;

static inline bool
generator_layout_current(const LayoutGen *lg)
{
	return lg->claim == me.claims && lg->catalog == catalog_generation();
}

static LayoutGen *
generator_layout_lookup(const char *name)
{
	LayoutGen  *lg;
	bool		found;

	if (layout_gens == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(LayoutGen);
		layout_gens = hash_create("idgen layout generators", 16, &ctl,
								  HASH_ELEM | HASH_STRINGS);
	}
	if (strlen(name) >= NAMEDATALEN)
		(void) catalog_resolve(name); /* reports the unknown layout */
	lg = hash_search(layout_gens, name, HASH_FIND, NULL);
	if (lg == NULL || !generator_layout_current(lg))
	{
		const IdgenLayout *layout = catalog_resolve(name);

		lg = hash_search(layout_gens, name, HASH_ENTER, &found);
		if (!found)
		{
			lg->dedicated = false;
			lg->target.plan.stats = NULL;
		}
		generator_plan_layout(lg, layout);
	}
	return lg;
}

static LayoutGen *
generator_layout(FunctionCallInfo fcinfo, text *name_arg)
{
	LayoutCallCache *cache = (LayoutCallCache *) fcinfo->flinfo->fn_extra;
	const char *name = VARDATA_ANY(name_arg);
	int			len = VARSIZE_ANY_EXHDR(name_arg);

	if (likely(cache != NULL && cache->len == len &&
			   memcmp(cache->name, name, len) == 0 &&
			   generator_layout_current(cache->lg)))
		return cache->lg;
	if (cache == NULL)
		cache = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LayoutCallCache));
	cache->lg = generator_layout_lookup(text_to_cstring(name_arg));
	/* names too long for a layout never get this far */
	cache->len = len;
	memcpy(cache->name, name, len);
	return cache->lg;
}

static int64
generator_shard(const GenPlan *plan, bool given, int64 shard)
{
	const IdgenLayout *layout = plan->layout;

	if (!given)
		return plan->shard_count ? plan->shard_lo + (int64) (random_u64() % plan->shard_count) : 0;
	if (plan->shard_count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen layout \"%s\" has no shard field", layout->name),
				 errhint("Leave out the shard argument.")));
	if (shard < plan->shard_lo || shard >= plan->shard_lo + plan->shard_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %lld is out of range for idgen layout \"%s\"",
						(long long) shard, layout->name),
				 errdetail("This server (node %d) makes IDs of layout \"%s\" with shards from %lld to %lld.",
						   idgen_node_id, layout->name, (long long) plan->shard_lo,
						   (long long) (plan->shard_lo + plan->shard_count - 1)),
				 errhint("Pass a shard in that range, or none for a random one.")));
	return shard;
}

/*
 * The first of n IDs of lg's layout; shard and random fields are filled per
 * call, so a block has one shard (n > 1 only where they lie above the
 * sequence).
 */
static int64
generator_next_in(LayoutGen *lg, bool shard_given, int64 shard, int64 n)
{
	const GenPlan *plan = &lg->target.plan;
	const IdgenLayout *layout = plan->layout;
	int64		id;

	shard = generator_shard(plan, shard_given, shard);
	if (lg->dedicated)
		id = generator_step(&lg->gen, &lg->target, n);
	else
		id = generator_next_locked(&lg->shared, &lg->target, n);
	if (plan->shard_count)
		id += shard * layout->scale[IDGEN_FIELD_SHARD];
	if (layout_has_field(layout, IDGEN_FIELD_RANDOM))
		id += (int64) (random_u64() % layout->size[IDGEN_FIELD_RANDOM]) *
			layout->scale[IDGEN_FIELD_RANDOM];
	return id;
}

/*
 * The layout's generator, after attaching this backend; the default's is
 * NULL.  The caller has returned NULL for a NULL layout.
 */
static LayoutGen *
generator_prepare(FunctionCallInfo fcinfo, int layout_arg)
{
	LayoutGen  *lg;

	if (me.mode == ATTACH_UNATTACHED)
		generator_attach();
	else
		generator_maybe_reclaim(clock_now_ms());
	lg = generator_layout(fcinfo, PG_GETARG_TEXT_PP(layout_arg));
	if (lg->target.plan.layout == layout_default())
	{
		if (!PG_ARGISNULL(layout_arg + 1))
			(void) generator_shard(&me.default_target.plan, true, 0);
		return NULL;
	}
	return lg;
}

static int64
generator_next_arg(FunctionCallInfo fcinfo, LayoutGen *lg, int shard_arg)
{
	if (lg == NULL)
		return generator_next();
	return generator_next_in(lg, !PG_ARGISNULL(shard_arg), PG_GETARG_INT64(shard_arg), 1);
}

Datum
idgen_next(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(generator_next());
}

/*
 * idgen_next(layout text, shard bigint DEFAULT NULL).  Not STRICT, as a NULL
 * shard means a random one; NULL in any other argument gives NULL, as a
 * STRICT function's would.
 */
Datum
idgen_next_layout(PG_FUNCTION_ARGS)
{
	LayoutGen  *lg;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	lg = generator_prepare(fcinfo, 0);
	PG_RETURN_INT64(generator_next_arg(fcinfo, lg, 1));
}

/*
 * n IDs in one call, made one by one as idgen_next() makes them, so they
 * obey the same rules; only the per-call overhead is saved.
 */
static void
generator_batch(FunctionCallInfo fcinfo, LayoutGen *lg)
{
	int32		n = PG_GETARG_INT32(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		isnull = false;

	if (n < 1 || n > BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of IDs must be between 1 and %d: %d", BATCH_MAX, n),
				 errhint("Ask for at least one ID, and call the function again for more than %d.",
						 BATCH_MAX)));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int32 i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(generator_next_arg(fcinfo, lg, 2));

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
		CHECK_FOR_INTERRUPTS();
	}
}

Datum
idgen_next_batch(PG_FUNCTION_ARGS)
{
	generator_batch(fcinfo, NULL);
	return (Datum) 0;
}

/* idgen_next_batch(n int, layout text, shard bigint DEFAULT NULL) */
Datum
idgen_next_batch_layout(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
	{
		/* no rows, as from a STRICT set-returning function */
		InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
		return (Datum) 0;
	}
	generator_batch(fcinfo, generator_prepare(fcinfo, 1));
	return (Datum) 0;
}

/*
 * Checks a block size for a layout: the block's IDs are consecutive integers
 * only when the sequence is the lowest field.  A block fits in one tick, and
 * may take its whole sequence (4096 values in the default layout): a tick
 * for a block that large starts at 0.
 */
static void
generator_check_block(const IdgenLayout *layout, int32 n)
{
	int64		size = layout->size[IDGEN_FIELD_SEQ];

	if (layout->scale[IDGEN_FIELD_SEQ] != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot take blocks of IDs in idgen layout \"%s\"", layout->name),
				 errdetail("Its sequence is not its lowest field, so consecutive integers are not consecutive IDs."),
				 errhint("Use idgen_next_batch() for several IDs of this layout.")));
	if (n < 1 || n > size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block size must be between 1 and %lld: %d", (long long) size, n),
				 errdetail("A block lies within one tick of one worker id, whose sequence in idgen layout \"%s\" holds %lld values.",
						   layout->name, (long long) size),
				 errhint("Take several blocks.")));
}

/*
 * idgen_next_block(n int): the first of n consecutive integers, each an ID
 * of the default layout that nothing else returns.
 */
Datum
idgen_next_block(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);

	generator_check_block(layout_default(), n);
	PG_RETURN_INT64(generator_next_block(n));
}

/* idgen_next_block(n int, layout text, shard bigint DEFAULT NULL) */
Datum
idgen_next_block_layout(PG_FUNCTION_ARGS)
{
	LayoutGen  *lg;
	int32		n;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	n = PG_GETARG_INT32(0);
	lg = generator_prepare(fcinfo, 1);
	if (lg == NULL)
	{
		generator_check_block(layout_default(), n);
		PG_RETURN_INT64(generator_next_block(n));
	}
	generator_check_block(lg->target.plan.layout, n);
	PG_RETURN_INT64(generator_next_in(lg, !PG_ARGISNULL(2), PG_GETARG_INT64(2), n));
}
