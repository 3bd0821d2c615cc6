/*
 * horizon.c
 *		idgen_horizon(): a gap-free cursor for outbox pollers.
 *
 * IDs are handed out in order but committed out of order, so a poller that
 * moves its cursor to the largest ID it read skips a transaction that took
 * a smaller ID and commits later.  idgen_horizon() returns H such that every
 * transaction that got, or will get, an ID below H from this server has
 * ended by the time the call returns; reading [cursor, H) in a later
 * statement then sees every committed row exactly once.
 *
 * Times are Unix ms.  An ID lies below the horizon of its layout (the
 * smallest ID of the tick holding H) exactly when its tick's last
 * millisecond is below H.  step_try() makes an ID whose tick ends at or
 * after the clock reading it was given, so a transaction whose every step
 * was given a reading of at least Q takes no ID whose tick ends below Q.
 *
 * Shared state:
 *	- oldest[b]: the clock reading at backend b's transaction's first ID
 *	  (P), or HORIZON_NONE.  Written only by b, read by the horizon.
 *	- floor (F): raised by every horizon call to its clock reading, never
 *	  lowered; a transaction's steps are never given less than F as it was
 *	  after its first ID (horizon_enter, step_horizon in step.c).
 *	- prepared: (xid, Q) of prepared transactions, made durable in a file
 *	  and logged in WAL before PREPARE's own record, so restarts, crashes
 *	  and promoted standbys keep them.
 *	- mark: F never passes it, and it is durable in the same file, so the
 *	  floor restarts at or above every horizon returned before.
 *
 * Why no transaction is missed (Dekker): a transaction's first ID stores P
 * in oldest[b], then a full barrier, then reads F into Q = max(P, F); a
 * horizon stores F (a compare-and-exchange, a full barrier), then reads
 * every oldest[].  One of the two reads sees the other's store.  If the
 * horizon saw P, H <= P <= Q; if the transaction saw the horizon's F, H <= F
 * <= Q.  Either way every ID of the transaction ends at or after Q >= H.
 * oldest[b] is cleared after the transaction has left the proc array
 * (XACT_EVENT_COMMIT and _ABORT come after ProcArrayEndTransaction), with a
 * barrier first, so a horizon that sees it cleared also sees it ended.  A
 * prepared transaction's entry is in place, under the lock, before oldest[b]
 * is cleared, and the horizon reads oldest[] before the entries.  An entry
 * lives until its xid is no longer in progress.  A horizon once returned
 * stays true (F is at or above it forever, and across restarts through the
 * mark), so returning the largest value computed so far keeps it monotonic.
 *
 * This file keeps the transactions' side and the computation; the shared
 * state, the prepared transactions' table and the file idgen_horizon are
 * horizon_file.c's, the SQL functions horizon_sql.c's.
 * Locking is in horizon_shared.h.
 */
#include "postgres.h"

#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/settings.h"
#include "horizon_shared.h"
#include "marks/marks.h"

/* The mark runs this far ahead of the floor: one file write per half of it. */
#define HORIZON_STEP_MS		MARKS_STEP_MS

int64		horizon_xact_ms = PG_INT64_MAX;

static pg_atomic_uint64 *my_oldest = NULL;

/* The transaction has ended (or become a prepared one): it holds nothing now. */
static void
horizon_leave(void)
{
	pg_memory_barrier();
	pg_atomic_write_u64(my_oldest, HORIZON_NONE);
	horizon_xact_ms = PG_INT64_MAX;
}

static void
horizon_xact_callback(XactEvent event, void *arg)
{
	if (horizon_xact_ms == PG_INT64_MAX)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			horizon_remember_prepared(GetTopTransactionId(), horizon_xact_ms);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			horizon_leave();
			break;
		default:
			break;
	}
}

static void
horizon_backend_exit(int code, Datum arg)
{
	if (my_oldest != NULL)
		pg_atomic_write_u64(my_oldest, HORIZON_NONE);
}

static void
horizon_attach(void)
{
	int			index = idgen_backend_number();

	if (index < 0 || index >= hz->nbackends)
		elog(ERROR, "idgen: backend number %d out of range", index);
	RegisterXactCallback(horizon_xact_callback, NULL);
	on_shmem_exit(horizon_backend_exit, (Datum) 0);
	my_oldest = &hz->oldest[index];
}

/*
 * The transaction's first ID, about to be made from clock reading now:
 * publish now, then read the floor.  Returns Q, the least reading its steps
 * may be given; the caller moves the state past Q when now is below it.
 * Later calls return Q at once.
 */
int64
horizon_enter(int64 now)
{
	int64		floor;

	if (horizon_xact_ms != PG_INT64_MAX)
		return horizon_xact_ms;
	if (my_oldest == NULL)
		horizon_attach();
	now = Max(now, 0);
	pg_atomic_write_u64(my_oldest, (uint64) now);
	pg_memory_barrier();
	floor = (int64) pg_atomic_read_u64(&hz->floor);
	horizon_xact_ms = Max(now, floor);
	/*
	 * Publish Q, not P, once known: a horizon that reads P is merely lower.
	 * After a restart the floor is the mark, above every horizon returned
	 * before, while a clock set back gives P below them: a horizon taken
	 * from P would go backwards and a poller would read rows twice.
	 */
	if (horizon_xact_ms > now)
		pg_atomic_write_u64(my_oldest, (uint64) horizon_xact_ms);
	return horizon_xact_ms;
}

/* The floor's mark must stay ahead of it, durably.  Under lock. */
static void
horizon_keep_mark(int64 floor)
{
	if (floor + HORIZON_STEP_MS / 2 >= hz->mark)
		horizon_write_file(floor + HORIZON_STEP_MS, NULL);
}

void
horizon_require(void)
{
	settings_require_preloaded(hz != NULL);
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot compute the idgen horizon during recovery"),
				 errdetail("A standby cannot see which transactions on the primary still hold IDs."),
				 errhint("Call idgen_horizon() on the primary.")));
	marks_require_readable();
	if (hz->broken)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen horizon file \"%s\" is unreadable", HORIZON_FILE),
				 errdetail("It holds the prepared transactions that hold IDs; without it the horizon could pass them."),
				 errhint("Restore the file (or raise %s if it was lowered), or, with no prepared transactions left, remove it and restart the server.",
						 "max_prepared_transactions")));
}

/* The horizon in Unix ms: every transaction whose IDs end below it has ended. */
int64
horizon_compute(void)
{
	int64		now = clock_now_ms();
	uint64		floor = pg_atomic_read_u64(&hz->floor);
	uint64		h;
	uint64		returned;

	horizon_require();
	/* Always a store, even of the same value: the Dekker pair needs one. */
	while (!pg_atomic_compare_exchange_u64(&hz->floor, &floor, Max(floor, (uint64) Max(now, 0))))
		;
	floor = Max(floor, (uint64) Max(now, 0));
	pg_memory_barrier();
	h = floor;
	for (int i = 0; i < hz->nbackends; i++)
		h = Min(h, pg_atomic_read_u64(&hz->oldest[i]));
	LWLockAcquire(hz->lock, LW_EXCLUSIVE);
	horizon_prune_prepared();
	for (int i = 0; i < hz->nprepared; i++)
		h = Min(h, (uint64) hz->prepared[i].ms);
	horizon_keep_mark((int64) floor);
	LWLockRelease(hz->lock);

	returned = pg_atomic_read_u64(&hz->returned);
	while (returned < h &&
		   !pg_atomic_compare_exchange_u64(&hz->returned, &returned, h))
		;
	return (int64) Max(h, returned);
}
