/*
 * plan.c
 *		How this backend fills a layout's fields: where its node id goes, the
 *		sequence's range and place, the limits and floors the step obeys.
 *		Planning refuses a layout this server cannot generate in; it knows
 *		nothing of the worker id this backend holds, which the caller adds.
 */
#include "postgres.h"

#include "base/node.h"
#include "base/settings.h"
#include "plan.h"

static void
plan_cannot(const IdgenLayout *layout, const char *detail, const char *hint)
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
plan_machine(GenPlan *plan, int64 *workers)
{
	const IdgenLayout *l = plan->layout;
	int			node = node_id();
	int64		nodes = ((int64) 1) << idgen_node_bits;

	*workers = 0;
	plan->shard_lo = 0;
	plan->shard_count = layout_has_field(l, IDGEN_FIELD_SHARD) ? l->size[IDGEN_FIELD_SHARD] : 0;
	if (layout_has_field(l, IDGEN_FIELD_NODE))
	{
		if (node >= l->size[IDGEN_FIELD_NODE])
			plan_cannot(l, psprintf("Its node field holds node ids from 0 to %lld, and this server's %s is %d.",
									(long long) l->size[IDGEN_FIELD_NODE] - 1,
									"idgen.node_id", node),
						"Generate in it on servers whose node ids fit.");
		plan->node = node;
		if (layout_has_field(l, IDGEN_FIELD_WORKER))
			*workers = l->size[IDGEN_FIELD_WORKER];
	}
	else if (layout_has_field(l, IDGEN_FIELD_WORKER))
	{
		*workers = l->size[IDGEN_FIELD_WORKER] / nodes;
		if (*workers < 1)
			plan_cannot(l, psprintf("It has no node field, and its worker field is too narrow to hold %d node ids.",
									(int) nodes), NULL);
		plan->worker = node * *workers;
	}
	else if (plan->shard_count / nodes >= 1)
	{
		plan->shard_count /= nodes;
		plan->shard_lo = node * plan->shard_count;
	}
	else
		plan_cannot(l, "It has no node, worker or shard field wide enough to tell this server's IDs from other servers'.",
					"Give the layout a node field.");
}

/*
 * How any layout's fields are filled, but for the worker id, which the
 * caller adds to plan->worker; *workers is the number the layout holds.
 */
void
plan_target(GenTarget *t, const IdgenLayout *layout, int64 *workers)
{
	GenPlan    *plan = &t->plan;

	if (!layout_has_field(layout, IDGEN_FIELD_SEQ))
		plan_cannot(layout, "It has no sequence field.", "Give the layout a sequence field.");
	memset(t, 0, sizeof(*t));
	plan->layout = layout;
	t->mark_entry = marks_attach(layout);
	plan->stats = stats_local(layout, t->mark_entry);
	plan->limits = &idgen_limits;
	plan->mark_step_ms = MARKS_STEP_MS;
	/* Fixed once the layout's mark is attached: only recovery moves them. */
	plan->shared_floor = marks_shared_floor(t->mark_entry);
	plan->epoch_later_until = marks_epoch_later_until(t->mark_entry);
	plan->tick_ms = layout->tick_ms;
	plan->seq_max = layout->size[IDGEN_FIELD_SEQ] - 1;
	plan->seq_scale = layout->scale[IDGEN_FIELD_SEQ];
	/* Only a lowest sequence spreads the low digits; otherwise count from 0. */
	plan->seq_start_span = (plan->seq_scale == 1) ? layout->size[IDGEN_FIELD_SEQ] / 2 : 0;
	plan_machine(plan, workers);
}
