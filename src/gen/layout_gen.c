/*
 * layout_gen.c
 *		This backend's generator of each layout it generated in: the plan and,
 *		when its worker id fits the layout, a state of its own; otherwise the
 *		way to the layout definition's state shared by the server's backends
 *		under a lock of its own (slots.c).
 *
 * Two caches stand in front of a layout's generator, both made stale by one
 * counter, layout_gen_epoch: the table of generators by name, and each call
 * site's memory of the name it passed last, which spares idgen_next(name)
 * the hash lookup.  The definitions themselves are layout_defs.c's, which
 * callers that do not generate (decode, the horizon) use too.  A plan
 * depends on two things besides its name: the definition and this backend's
 * worker id.  Both modules sit below this one and call it through a hook
 * when theirs changes, raising the counter; a plan made before is then made
 * again, its state kept.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/hsearch.h"

#include "defs/layout_defs.h"
#include "layout_gen.h"
#include "stats.h"

static HTAB *layout_gens = NULL;

/* Plans made before its current value are stale; never 0, a new entry's. */
static uint64 layout_gen_epoch = 1;

/* A definition changed, or this backend claimed a slot. */
static void
layout_gen_invalidate(void)
{
	layout_gen_epoch++;
}

/*
 * lg's plan is whole and current: only now, as planning can raise an error
 * (a layout this server cannot generate in), and a plan marked current is
 * used without another look.
 */
static void
layout_gen_planned(LayoutGen *lg)
{
	lg->epoch = layout_gen_epoch;
}

/*
 * Sets up how this backend generates in lg's layout.  Its worker id is its
 * worker slot's, when that fits below the layout's last worker id, which
 * the backends sharing the layout's state use.  A state of its own stays
 * the slot's: a backend holds its slot until it exits.
 */
static void
layout_gen_plan(LayoutGen *lg, const IdgenLayout *layout)
{
	const Attachment *me = generator_attachment();
	GenTarget  *t = &lg->target;
	GenPlan    *plan = &t->plan;
	int64		workers;
	bool		was_dedicated = lg->dedicated;

	/* Count the old plan's IDs before its state may be started over. */
	stats_untrack(plan->stats, &lg->gen.issued);
	if (layout == layout_default())
	{
		/*
		 * The default layout by name generates in the default target
		 * (next.c): a second state of one definition would start apart
		 * from it, and take its counts.
		 */
		memset(t, 0, sizeof(*t));
		plan->layout = layout;
		lg->dedicated = false;
		layout_gen_planned(lg);
		return;
	}
	plan_target(t, layout, &workers);
	/* The definition may have changed: look its shared state up again. */
	lg->shared = (LayoutStateRef) LAYOUT_STATE_REF_INIT;
	lg->dedicated = me->mode == ATTACH_DEDICATED && me->worker < workers - 1;
	plan->worker += lg->dedicated ? me->worker : Max(workers - 1, 0);
	if (lg->dedicated)
	{
		t->holder_last_ms = &me->slot->last_ms;
		if (!was_dedicated)
		{
			step_state_init(&lg->gen);
			generator_start_as_holder(&lg->gen, t);
		}
		else
			/* Fields packed under the old plan must not be reused. */
			step_start(&lg->gen, plan, lg->gen.last_ms + plan->tick_ms, STEP_NONE);
		stats_track(plan->stats, &lg->gen.issued);
	}
	layout_gen_planned(lg);
}

/*
 * The layout a call site named last, so that repeated calls skip the lookup
 * while no plan went stale.
 */
typedef struct LayoutCallCache
{
	LayoutGen  *lg;
	uint64		epoch;			/* lg->epoch when noted */
	int			len;
	char		name[NAMEDATALEN];
} LayoutCallCache;

/* Before the first generator: nothing was planned yet that could go stale. */
static void
layout_gen_init(void)
{
	HASHCTL		ctl;

	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(LayoutGen);
	layout_gens = hash_create("idgen layout generators", 16, &ctl,
							  HASH_ELEM | HASH_STRINGS);
	layout_defs_set_change_hook(layout_gen_invalidate);
	generator_set_claim_hook(layout_gen_invalidate);
}

static LayoutGen *
layout_gen_lookup(const char *name)
{
	LayoutGen  *lg;
	bool		found;

	if (layout_gens == NULL)
		layout_gen_init();
	if (strlen(name) >= NAMEDATALEN)
		(void) layout_defs_resolve(name); /* reports the unknown layout */
	lg = hash_search(layout_gens, name, HASH_FIND, NULL);
	if (lg == NULL || lg->epoch != layout_gen_epoch)
	{
		const IdgenLayout *layout = layout_defs_resolve(name);

		lg = hash_search(layout_gens, name, HASH_ENTER, &found);
		if (!found)
		{
			lg->dedicated = false;
			lg->target.plan.stats = NULL;
			lg->epoch = 0;
		}
		layout_gen_plan(lg, layout);
	}
	return lg;
}

/*
 * The generator of the layout named by a call's argument; a call site that
 * names the same layout again finds it without a lookup.
 */
LayoutGen *
layout_gen_for_call(FunctionCallInfo fcinfo, text *name_arg)
{
	LayoutCallCache *cache = (LayoutCallCache *) fcinfo->flinfo->fn_extra;
	const char *name = VARDATA_ANY(name_arg);
	int			len = VARSIZE_ANY_EXHDR(name_arg);
	LayoutGen  *lg;

	if (likely(cache != NULL && cache->epoch == layout_gen_epoch &&
			   cache->len == len && memcmp(cache->name, name, len) == 0))
		return cache->lg;
	/* Noted only once found: a failed lookup leaves the cache as it was. */
	lg = layout_gen_lookup(text_to_cstring(name_arg));
	if (cache == NULL)
		cache = fcinfo->flinfo->fn_extra =
			MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(LayoutCallCache));
	cache->lg = lg;
	cache->epoch = lg->epoch;
	/* names too long for a layout never get this far */
	cache->len = len;
	memcpy(cache->name, name, len);
	return lg;
}
