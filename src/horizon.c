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
 * Locking: lock guards prepared, nprepared, mark and the file.  floor,
 * returned and oldest[] are atomics, read and written without it.
 */
#include "postgres.h"


#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "compat.h"
#include "durable.h"
#include "horizon.h"
#include "hwm.h"
#include "layout.h"
#include "idgen_xlog.h"
#include "settings.h"

#define HORIZON_FILE		"idgen_horizon"
#define HORIZON_TMP_FILE	"idgen_horizon.tmp"
#define HORIZON_NONE		PG_UINT64_MAX
/* The mark runs this far ahead of the floor: one file write per half of it. */
#define HORIZON_STEP_MS		HWM_STEP_MS

typedef struct HorizonPrepared
{
	TransactionId xid;
	int64		ms;				/* Q: every ID of it ends at or after this */
	int64		epoch_ms;		/* the default layout's epoch then */
	bool		earlier_run;	/* read from the file at startup */
} HorizonPrepared;

typedef struct HorizonShared
{
	LWLock	   *lock;
	pg_atomic_uint64 floor;
	pg_atomic_uint64 returned;	/* the largest horizon returned this run */
	int64		mark;			/* durable; floor stays below it */
	int64		default_epoch;	/* the default layout's epoch (idgen.epoch) */
	int64		default_floor;	/* its IDs of every node id start above it */
	int64		file_floor;		/* default_floor as the file recorded it */
	bool		broken;			/* the file could not be read */
	int			nbackends;
	int			max_prepared;
	int			nprepared;
	int			nearlier;		/* entries of earlier runs; never rises */
	int64		refused;		/* entries that found the table full */
	TimestampTz refused_at;
	HorizonPrepared *prepared;	/* [max_prepared], after oldest[] */
	pg_atomic_uint64 oldest[FLEXIBLE_ARRAY_MEMBER];
} HorizonShared;

int64		horizon_xact_ms = PG_INT64_MAX;

static HorizonShared *hz = NULL;
static pg_atomic_uint64 *my_oldest = NULL;

PG_FUNCTION_INFO_V1(idgen_horizon);
PG_FUNCTION_INFO_V1(idgen_horizon_layout);
PG_FUNCTION_INFO_V1(idgen_horizon_holders);

static int
horizon_nbackends(void)
{
	return MaxBackends + 1;		/* backend ids count from 1 before PG 17 */
}

static int
horizon_max_prepared(void)
{
	return max_prepared_xacts + 8;	/* room for PREPAREs that will fail */
}

static Size
horizon_prepared_offset(void)
{
	return MAXALIGN(add_size(offsetof(HorizonShared, oldest),
							 mul_size(horizon_nbackends(), sizeof(pg_atomic_uint64))));
}

static Size
horizon_shmem_size(void)
{
	return add_size(horizon_prepared_offset(),
					mul_size(horizon_max_prepared(), sizeof(HorizonPrepared)));
}

void
horizon_shmem_request(void)
{
	RequestAddinShmemSpace(horizon_shmem_size());
	RequestNamedLWLockTranche("idgen horizon", 1);
}

/*
 * Reads the file: "epoch <ms>", "mark <ms>", "floor <ms>" and "prepared
 * <xid> <ms> <epoch>" lines, the epochs being the default layout's when the
 * line was written, the floor counted from the file's epoch.  Returns the
 * file's epoch, PG_INT64_MIN when it names none (files of idgen 1.4).  A
 * file that cannot be read leaves the horizon refusing: guessing could skip
 * rows.
 */
static int64
horizon_load_file(void)
{
	FILE	   *f = AllocateFile(HORIZON_FILE, "r");
	char		line[128];
	int64		epoch = PG_INT64_MIN;

	if (f == NULL)
	{
		hz->broken = errno != ENOENT;
		return epoch;
	}
	while (fgets(line, sizeof(line), f) != NULL)
	{
		long long	a,
					b,
					c = PG_INT64_MIN;
		unsigned int xid;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "epoch %lld", &a) == 1)
			epoch = a;
		else if (sscanf(line, "mark %lld", &a) == 1 && a >= 0)
			hz->mark = Max(hz->mark, a);
		else if (sscanf(line, "floor %lld", &a) == 1 && a >= 0)
			hz->file_floor = Max(hz->file_floor, a);
		else if (sscanf(line, "prepared %u %lld %lld", &xid, &b, &c) >= 2)
		{
			/* more than fit (max_prepared_transactions lowered): refuse */
			if (hz->nprepared >= hz->max_prepared)
			{
				hz->broken = true;
				break;
			}
			hz->prepared[hz->nprepared].xid = xid;
			hz->prepared[hz->nprepared].ms = b;
			hz->prepared[hz->nprepared].epoch_ms = c;
			hz->prepared[hz->nprepared].earlier_run = true;
			hz->nprepared++;
		}
		else
			hz->broken = true;
	}
	if (ferror(f))
		hz->broken = true;
	FreeFile(f);
	return epoch;
}

/*
 * After the file: the default layout's epoch may have moved since it was
 * written (idgen.epoch changed between restarts).  Prepared transactions'
 * IDs keep the epoch they were made under.  When it moved later, horizons
 * returned up to the file's mark are IDs of the old epoch, above what the
 * same times give in the new one: IDs of the default layout, of every node
 * id, must then start above that mark in the old epoch's numbers, which
 * hwm.c makes durable before anything generates.  The file keeps that
 * floor too, so that it is bound again when idgen_hwm was lost since.
 */
static void
horizon_settle_epoch(int64 file_epoch)
{
	int64		current = layout_default()->epoch_ms;

	if (file_epoch == PG_INT64_MIN)
		file_epoch = hwm_default_epoch_read();
	if (file_epoch == PG_INT64_MIN || !settings_all_valid())
		file_epoch = current;
	hz->default_epoch = settings_all_valid() ? current : file_epoch;
	for (int i = 0; i < hz->nprepared; i++)
		if (hz->prepared[i].epoch_ms == PG_INT64_MIN)
			hz->prepared[i].epoch_ms = file_epoch;
	hz->nearlier = hz->nprepared;
	if (hz->broken)
		return;
	if (file_epoch < current)
		hz->default_floor = hwm_bind_default_layout(file_epoch, Max(hz->mark, hz->file_floor));
	else
		hz->default_floor = hwm_bind_default_layout(file_epoch, hz->file_floor);
}

/* Runs in the postmaster at startup and after every crash reinitialisation. */
void
horizon_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	hz = ShmemInitStruct("idgen horizon", horizon_shmem_size(), &found);
	if (!found)
	{
		memset(hz, 0, offsetof(HorizonShared, oldest));
		hz->lock = &(GetNamedLWLockTranche("idgen horizon"))[0].lock;
		hz->nbackends = horizon_nbackends();
		hz->max_prepared = horizon_max_prepared();
		hz->prepared = (HorizonPrepared *) ((char *) hz + horizon_prepared_offset());
		for (int i = 0; i < hz->nbackends; i++)
			pg_atomic_init_u64(&hz->oldest[i], HORIZON_NONE);
		horizon_settle_epoch(horizon_load_file());
		/* Every horizon returned before is at or below the mark. */
		pg_atomic_init_u64(&hz->floor, (uint64) hz->mark);
		pg_atomic_init_u64(&hz->returned, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Writes the mark and the prepared entries, and extra when not NULL (an
 * entry that found the table full: the file then holds more than fit, and
 * is refused when read, as the table is now): write, fsync, rename.  Under
 * lock.  An unreadable file is left as it is, for whoever repairs it.
 */
static void
horizon_write_file(int64 mark, const HorizonPrepared *extra)
{
	StringInfoData buf;

	if (hz->broken)
		return;
	initStringInfo(&buf);
	appendStringInfoString(&buf, "# idgen horizon: mark in Unix ms; the default layout's epoch and floor; prepared transactions' xid, ms and epoch\n");
	appendStringInfo(&buf, "epoch %lld\n", (long long) hz->default_epoch);
	appendStringInfo(&buf, "mark %lld\n", (long long) mark);
	if (hz->default_floor > 0)
		appendStringInfo(&buf, "floor %lld\n", (long long) hz->default_floor);
	for (int i = 0; i < hz->nprepared; i++)
		appendStringInfo(&buf, "prepared %u %lld %lld\n", hz->prepared[i].xid,
						 (long long) hz->prepared[i].ms, (long long) hz->prepared[i].epoch_ms);
	if (extra != NULL)
		appendStringInfo(&buf, "prepared %u %lld %lld\n", extra->xid, (long long) extra->ms,
						 (long long) extra->epoch_ms);
	durable_replace_file(HORIZON_FILE, HORIZON_TMP_FILE, buf.data, buf.len);
	hz->mark = mark;
	pfree(buf.data);
}

/* Keeps the entries keep() says are in progress.  Under lock. */
static void
horizon_keep_prepared(bool (*keep) (TransactionId xid))
{
	int			kept = 0;
	int			earlier = 0;

	for (int i = 0; i < hz->nprepared; i++)
		if (keep(hz->prepared[i].xid))
		{
			earlier += hz->prepared[i].earlier_run;
			hz->prepared[kept++] = hz->prepared[i];
		}
	hz->nprepared = kept;
	hz->nearlier = earlier;
}

/* Drops entries of transactions that have ended.  Under lock. */
static void
horizon_prune_prepared(void)
{
	horizon_keep_prepared(TransactionIdIsInProgress);
}

/*
 * Adds an entry, or returns false when the table is full, counting it for
 * idgen_capacity.  Under lock.
 */
static bool
horizon_add_prepared(TransactionId xid, int64 ms)
{
	for (int i = 0; i < hz->nprepared; i++)
		if (hz->prepared[i].xid == xid)
		{
			hz->prepared[i].ms = Min(hz->prepared[i].ms, ms);
			return true;
		}
	if (hz->nprepared >= hz->max_prepared)
	{
		hz->refused++;
		hz->refused_at = GetCurrentTimestamp();
		return false;
	}
	hz->prepared[hz->nprepared].xid = xid;
	hz->prepared[hz->nprepared].ms = ms;
	hz->prepared[hz->nprepared].epoch_ms = hz->default_epoch;
	hz->prepared[hz->nprepared].earlier_run = false;
	hz->nprepared++;
	return true;
}

static void
horizon_log_prepared(TransactionId xid, int64 ms)
{
	xl_idgen_horizon_prepared rec = {xid, ms};

	XLogBeginInsert();
	XLogRegisterData((char *) &rec, SizeOfIdgenHorizonPrepared);
	(void) XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_HORIZON_PREPARED);
}

/*
 * At PREPARE, before its WAL record: the entry is durable in the file, and
 * its WAL record precedes PREPARE's, so a standby that has the prepared
 * transaction has the entry too.
 */
static void
horizon_remember_prepared(TransactionId xid, int64 ms)
{
	LWLockAcquire(hz->lock, LW_EXCLUSIVE);
	horizon_prune_prepared();
	if (!horizon_add_prepared(xid, ms))
	{
		LWLockRelease(hz->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many prepared transactions hold idgen IDs"),
				 errhint("Commit or roll back prepared transactions, or increase %s.",
						 "max_prepared_transactions")));
	}
	horizon_write_file(hz->mark, NULL);
	LWLockRelease(hz->lock);
	horizon_log_prepared(xid, ms);
}

/*
 * Replay of a prepared transaction's entry.  Entries of transactions that
 * the replayed WAL has committed or aborted are dropped (the proc array
 * does not track transactions outside hot standby); the file keeps the rest
 * across a restart of the standby.  A full table makes the horizon refuse,
 * and so does the file, which gets the entry all the same: a restart must
 * not forget that an entry is missing.
 */
/* Older than the clog kept: ended (an open one would hold it back). */
static bool
horizon_replayed_open(TransactionId xid)
{
	return !TransactionIdPrecedes(xid, idgen_oldest_xid()) &&
		!TransactionIdDidCommit(xid) && !TransactionIdDidAbort(xid);
}

void
horizon_redo_prepared(TransactionId xid, int64 ms)
{
	LWLockAcquire(hz->lock, LW_EXCLUSIVE);
	horizon_keep_prepared(horizon_replayed_open);
	if (horizon_add_prepared(xid, ms))
		horizon_write_file(hz->mark, NULL);
	else
	{
		HorizonPrepared extra = {xid, ms, hz->default_epoch, false};

		horizon_write_file(hz->mark, &extra);
		hz->broken = true;
	}
	LWLockRelease(hz->lock);
}

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

static void
horizon_require(void)
{
	settings_require_preloaded(hz != NULL);
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot compute the idgen horizon during recovery"),
				 errdetail("A standby cannot see which transactions on the primary still hold IDs."),
				 errhint("Call idgen_horizon() on the primary.")));
	if (hz->broken)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen horizon file \"%s\" is unreadable", HORIZON_FILE),
				 errdetail("It holds the prepared transactions that hold IDs; without it the horizon could pass them."),
				 errhint("Restore the file (or raise %s if it was lowered), or, with no prepared transactions left, remove it and restart the server.",
						 "max_prepared_transactions")));
}

/* The horizon in Unix ms: every transaction whose IDs end below it has ended. */
static int64
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

/* The row of idgen_capacity for the prepared transactions' entries. */
void
horizon_capacity(IdgenCapacity *row)
{
	settings_require_preloaded(hz != NULL);
	row->name = "prepared_xacts";
	row->setting = "max_prepared_transactions";
	LWLockAcquire(hz->lock, LW_SHARED);
	row->capacity = hz->max_prepared;
	row->in_use = hz->nprepared;
	row->overflows = hz->refused;
	row->last_overflow = hz->refused_at;
	LWLockRelease(hz->lock);
}

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
	static HwmEntry *default_entry = NULL;
	HwmEntry   *e;

	if (!settings_all_valid())
		return;
	if (layout != layout_default())
		e = hwm_attach(layout);
	else
	{
		if (default_entry == NULL)
			default_entry = hwm_attach(layout);
		e = default_entry;
	}
	while (!hwm_reserve(e, ms))
		hwm_wait_confirmed(e, ms);
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

	/* only shrinks: entries of earlier runs are never added */
	if (hz->nearlier > 0)
	{
		LWLockAcquire(hz->lock, LW_SHARED);
		for (int i = 0; i < hz->nprepared; i++)
			if (hz->prepared[i].earlier_run)
				earlier = Min(earlier, hz->prepared[i].ms +
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
	layout = catalog_resolve(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	if (layout == layout_default())
		settings_require_layout();
	PG_RETURN_INT64(horizon_of(layout));
}

#define HOLDERS_COLS 4

static void
horizon_add_holder(ReturnSetInfo *rsinfo, int pid, TransactionId xid, int64 ms, int64 now)
{
	Datum		values[HOLDERS_COLS];
	bool		nulls[HOLDERS_COLS] = {false};
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
		horizon_add_holder(rsinfo, proc ? proc->pid : 0, InvalidTransactionId, (int64) ms, now);
	}
	LWLockAcquire(hz->lock, LW_SHARED);
	for (int i = 0; i < hz->nprepared; i++)
		if (TransactionIdIsInProgress(hz->prepared[i].xid))
			horizon_add_holder(rsinfo, 0, hz->prepared[i].xid, hz->prepared[i].ms, now);
	LWLockRelease(hz->lock);
	return (Datum) 0;
}
