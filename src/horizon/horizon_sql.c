/*
 * horizon_sql.c
 *		The horizon's SQL functions: idgen_horizon() and its layout's
 *		variant, which turn the horizon in Unix ms into an ID of the layout
 *		covered by a durable mark, and idgen_horizon_holders().
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/layout.h"
#include "base/settings.h"
#include "defs/layout_defs.h"
#include "horizon_shared.h"
#include "marks/marks.h"

PG_FUNCTION_INFO_V1(idgen_horizon);
PG_FUNCTION_INFO_V1(idgen_horizon_layout);
PG_FUNCTION_INFO_V1(idgen_horizon_holders);

/* The smallest ID of the tick holding ms: IDs below it end before ms. */
static int64
horizon_id(const IdgenLayout *layout, int64 ms)
{
	if (ms <= layout->epoch_ms)
		return 0;
	return layout_tick_id(layout, ms);
}

/*
 * Makes ms, a horizon about to be returned for layout, lie below the mark a
 * promoted standby would start the layout after: the mark the synchronous
 * standbys confirmed, else the local durable one.  When the horizon has
 * passed it (an idle server whose clock moved on), the mark is raised and
 * confirmed first, as a new tick's would be.  Otherwise a standby promoted
 * with its clock behind starts IDs below a horizon already returned, and
 * pollers skip them.  A server that cannot generate makes no IDs to order.
 */
static void
horizon_cover_by_mark(const IdgenLayout *layout, int64 ms)
{
	static MarkEntry *default_entry = NULL;
	MarkEntry   *e;

	if (!settings_all_valid())
		return;
	if (layout != layout_default())
		e = marks_attach(layout);
	else
	{
		if (default_entry == NULL)
			default_entry = marks_attach(layout);
		e = default_entry;
	}
	while (!marks_reserve(e, ms))
		marks_wait_confirmed(e, ms);
}

/*
 * The default layout's horizon, ms being every layout's: its epoch may have
 * moved since prepared transactions of earlier runs took IDs, which count
 * from theirs.  Every ID of this run starts above default_floor, which an
 * epoch moved later raised above the horizons returned before (see
 * horizon_settle_epoch): the horizon stands there at least, also while
 * transactions of other layouts hold ms below it.
 */
static int64
horizon_default_ms(int64 ms)
{
	int64		earlier = PG_INT64_MAX;

	/* only shrinks once recovery ends: entries of earlier runs come before */
	if (hz->nearlier > 0)
	{
		LWLockAcquire(hz->lock, LW_SHARED);
		for (int i = 0; i < hz->nprepared; i++)
			if (hz->prepared[i].earlier_run)
				earlier = Min(earlier, hz->prepared[i].default_ms +
							  (hz->default_epoch - hz->prepared[i].epoch_ms));
		LWLockRelease(hz->lock);
	}
	return Max(Min(ms, earlier), Min(hz->default_floor, earlier));
}

/*
 * A REPEATABLE READ or SERIALIZABLE transaction reads with the snapshot of
 * its first statement, taken before this horizon: rows of transactions
 * that committed since are below the horizon and invisible to it.  The
 * recipe (docs/outbox.md) reads in a later statement with a new snapshot.
 */
static void
horizon_warn_snapshot(void)
{
	if (IsolationUsesXactSnapshot())
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("reads in this transaction may miss rows below the idgen horizon"),
				 errdetail("A %s transaction reads with the snapshot of its first statement, taken before the horizon.",
						   IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errhint("Take the horizon and read below it in READ COMMITTED, or read in a later transaction.")));
}

static int64
horizon_of(const IdgenLayout *layout)
{
	int64		ms = horizon_compute();

	horizon_warn_snapshot();
	if (layout == layout_default())
		ms = horizon_default_ms(ms);

	horizon_cover_by_mark(layout, ms);
	return horizon_id(layout, ms);
}

Datum
idgen_horizon(PG_FUNCTION_ARGS)
{
	settings_require_preloaded(hz != NULL);
	settings_require_layout();
	PG_RETURN_INT64(horizon_of(layout_default()));
}

Datum
idgen_horizon_layout(PG_FUNCTION_ARGS)
{
	const IdgenLayout *layout;

	settings_require_preloaded(hz != NULL);
	layout = layout_defs_resolve(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	if (layout == layout_default())
		settings_require_layout();
	PG_RETURN_INT64(horizon_of(layout));
}

#define HOLDERS_COLS 4

static void
horizon_add_holder(ReturnSetInfo *rsinfo, int pid, TransactionId xid, int64 ms, int64 now,
				   bool visible)
{
	Datum		values[HOLDERS_COLS];
	bool		nulls[HOLDERS_COLS] = {false, false, !visible, !visible};
	Interval   *held = palloc0(sizeof(Interval));

	values[0] = Int32GetDatum(pid);
	nulls[0] = pid == 0;
	values[1] = TransactionIdGetDatum(xid);
	nulls[1] = !TransactionIdIsValid(xid);
	values[2] = TimestampTzGetDatum(clock_ms_to_timestamptz(ms));
	held->time = Max(now - ms, 0) * INT64CONST(1000);
	values[3] = IntervalPGetDatum(held);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Whether the caller may see when proc's transaction began: as
 * pg_stat_activity shows xact_start, to its role and pg_read_all_stats.
 */
static bool
horizon_may_see(PGPROC *proc)
{
	Oid			me = GetUserId();

	return proc != NULL && (has_privs_of_role(me, proc->roleId) ||
							has_privs_of_role(me, ROLE_PG_READ_ALL_STATS));
}

/*
 * What holds the horizon back: each backend in a transaction that took an
 * ID, and each prepared transaction that did, with the time its IDs start
 * at.  A backend that ends meanwhile may show with the pid of whoever took
 * its number, or none: the view is for watching, not for deciding.
 */
Datum
idgen_horizon_holders(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		now = clock_now_ms();

	settings_require_preloaded(hz != NULL);
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < hz->nbackends; i++)
	{
		uint64		ms = pg_atomic_read_u64(&hz->oldest[i]);
		PGPROC	   *proc;

		if (ms == HORIZON_NONE)
			continue;
		proc = idgen_backend_proc(i);
		horizon_add_holder(rsinfo, proc ? proc->pid : 0, InvalidTransactionId, (int64) ms, now,
						   horizon_may_see(proc));
	}
	LWLockAcquire(hz->lock, LW_SHARED);
	for (int i = 0; i < hz->nprepared; i++)
		if (TransactionIdIsInProgress(hz->prepared[i].xid))
			horizon_add_holder(rsinfo, 0, hz->prepared[i].xid, hz->prepared[i].ms, now, true);
	LWLockRelease(hz->lock);
	return (Datum) 0;
}
