/*
 * next.c
 *		The SQL entry points idgen_next(layout), idgen_next_batch() and
 *		idgen_next_block(), with their argument checks; idgen_next() itself,
 *		the hot path, is generator.c's.
 *
 * idgen_next_block(n) takes n consecutive sequence values of one tick in one
 * step, so the block is n consecutive integers no other call can return.
 *
 * idgen_next(layout) follows the same rules in any layout, counting in the
 * layout's ticks.  A layout with a worker field generates in per-backend
 * state when the backend's worker id fits; otherwise, and in layouts without
 * one, in a state per layout definition shared by the server's backends
 * under a lock of its own (slots.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"

#include "base/node.h"
#include "base/random.h"
#include "base/settings.h"
#include "generator.h"
#include "layout_gen.h"

/* Most IDs idgen_next_batch() makes in one call; they are kept in memory. */
#define BATCH_MAX		1000000

PG_FUNCTION_INFO_V1(idgen_next_batch);
PG_FUNCTION_INFO_V1(idgen_next_layout);
PG_FUNCTION_INFO_V1(idgen_next_batch_layout);
PG_FUNCTION_INFO_V1(idgen_next_block);
PG_FUNCTION_INFO_V1(idgen_next_block_layout);

static int64
next_shard(const GenPlan *plan, bool given, int64 shard)
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
						   node_id(), layout->name, (long long) plan->shard_lo,
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
next_in(LayoutGen *lg, bool shard_given, int64 shard, int64 n)
{
	const GenPlan *plan = &lg->target.plan;
	const IdgenLayout *layout = plan->layout;
	int64		id;

	shard = next_shard(plan, shard_given, shard);
	id = generator_next_target(lg->dedicated ? &lg->gen : NULL, &lg->shared,
							   &lg->target, n);
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
next_prepare(FunctionCallInfo fcinfo, int layout_arg)
{
	LayoutGen  *lg;

	generator_enter();
	lg = layout_gen_for_call(fcinfo, PG_GETARG_TEXT_PP(layout_arg));
	if (lg->target.plan.layout == layout_default())
	{
		if (!PG_ARGISNULL(layout_arg + 1))
			(void) next_shard(&generator_attachment()->default_target.plan, true, 0);
		return NULL;
	}
	return lg;
}

static int64
next_arg(FunctionCallInfo fcinfo, LayoutGen *lg, int shard_arg)
{
	if (lg == NULL)
		return generator_next_default(1);
	return next_in(lg, !PG_ARGISNULL(shard_arg), PG_GETARG_INT64(shard_arg), 1);
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
	lg = next_prepare(fcinfo, 0);
	PG_RETURN_INT64(next_arg(fcinfo, lg, 1));
}

/*
 * n IDs in one call, made one by one as idgen_next() makes them, so they
 * obey the same rules; only the per-call overhead is saved.
 */
static void
next_batch(FunctionCallInfo fcinfo, LayoutGen *lg)
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
		Datum		id = Int64GetDatum(next_arg(fcinfo, lg, 2));

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
		CHECK_FOR_INTERRUPTS();
	}
}

Datum
idgen_next_batch(PG_FUNCTION_ARGS)
{
	next_batch(fcinfo, NULL);
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
	next_batch(fcinfo, next_prepare(fcinfo, 1));
	return (Datum) 0;
}

/*
 * Checks a block size for a layout: the block's IDs are consecutive integers
 * only when the sequence is the lowest field.  A block fits in one tick, and
 * may take its whole sequence (4096 values in the default layout): a tick
 * for a block that large starts at 0.
 */
static void
next_check_block(const IdgenLayout *layout, int32 n)
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

	next_check_block(layout_default(), n);
	PG_RETURN_INT64(generator_next_default(n));
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
	lg = next_prepare(fcinfo, 1);
	if (lg == NULL)
	{
		next_check_block(layout_default(), n);
		PG_RETURN_INT64(generator_next_default(n));
	}
	next_check_block(lg->target.plan.layout, n);
	PG_RETURN_INT64(next_in(lg, !PG_ARGISNULL(2), PG_GETARG_INT64(2), n));
}
