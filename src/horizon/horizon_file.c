/*
 * horizon_file.c
 *		The horizon's shared and durable state: its part of shared
 *		memory, the prepared transactions that hold IDs, the mark the floor
 *		stays below and the default layout's epoch and floor, in the file
 *		idgen_horizon, and the WAL record of a prepared transaction's entry
 *		with its redo (rmgr.c dispatches it).
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "base/compat.h"
#include "base/durable.h"
#include "base/idgen_xlog.h"
#include "base/layout.h"
#include "base/settings.h"
#include "horizon_shared.h"
#include "marks/marks.h"

#define HORIZON_TMP_FILE	"idgen_horizon.tmp"

HorizonShared *hz = NULL;

/*
 * The reader's line buffer.  A longer line comes in pieces, the second of
 * which is no line of the file's and makes the horizon refuse.
 */
#define HORIZON_LINE_SIZE	128
#define HORIZON_FILE_HEADER \
	"# idgen horizon: mark in Unix ms; the default layout's epoch and floor; prepared: xid, ms, epoch, default layout's ms\n"

StaticAssertDecl(sizeof(HORIZON_FILE_HEADER) <= HORIZON_LINE_SIZE,
				 "the file's header is read as one line");

/* One line of the file (see below); false when the file is refused. */
static bool
horizon_read_line(char *line, bool whole, void *arg)
{
	int64	   *epoch = arg;
	long long	a,
				b,
				c = PG_INT64_MIN,
				d = PG_INT64_MIN;
	unsigned int xid;

	if (line[0] == '#')
		return true;
	if (sscanf(line, "epoch %lld", &a) == 1)
		*epoch = a;
	else if (sscanf(line, "mark %lld", &a) == 1 && a >= 0)
		hz->mark = Max(hz->mark, a);
	else if (sscanf(line, "floor %lld", &a) == 1 && a >= 0)
		hz->file_floor = Max(hz->file_floor, a);
	else if (sscanf(line, "prepared %u %lld %lld %lld", &xid, &b, &c, &d) >= 2)
	{
		/* more than fit (max_prepared_transactions lowered): refuse */
		if (hz->nprepared >= hz->max_prepared)
		{
			hz->broken = true;
			return false;
		}
		hz->prepared[hz->nprepared].xid = xid;
		hz->prepared[hz->nprepared].ms = b;
		hz->prepared[hz->nprepared].default_ms = Max(b, d);
		hz->prepared[hz->nprepared].epoch_ms = c;
		hz->prepared[hz->nprepared].earlier_run = true;
		hz->nprepared++;
	}
	else
		hz->broken = true;
	return true;
}

/*
 * Reads the file: "epoch <ms>", "mark <ms>", "floor <ms>" and "prepared
 * <xid> <ms> <epoch> <ms in the default layout>" lines (the last left out
 * by earlier versions), the epochs being the default layout's when the
 * line was written, the floor counted from the file's epoch.  Returns the
 * file's epoch, PG_INT64_MIN when it names none (files of idgen 1.4).  A
 * file that cannot be read leaves the horizon refusing: guessing could skip
 * rows.
 */
static int64
horizon_load_file(void)
{
	char		line[HORIZON_LINE_SIZE];
	int64		epoch = PG_INT64_MIN;
	DurableRead result = durable_read_lines(HORIZON_FILE, line, sizeof(line),
											horizon_read_line, &epoch);

	if (result == DURABLE_UNOPENED || result == DURABLE_FAILED)
		hz->broken = true;
	return epoch;
}

/*
 * After the file: the default layout's epoch may have moved since it was
 * written (idgen.epoch changed between restarts).  Prepared transactions'
 * IDs keep the epoch they were made under.  When it moved later, horizons
 * returned up to the file's mark are IDs of the old epoch, above what the
 * same times give in the new one: IDs of the default layout, of every node
 * id, must then start above that mark in the old epoch's numbers, which
 * marks_load.c makes durable before anything generates.  The file keeps that
 * floor too, so that it is bound again when idgen_hwm was lost since.
 */
static void
horizon_settle_epoch(int64 file_epoch)
{
	int64		current = layout_default()->epoch_ms;

	if (file_epoch == PG_INT64_MIN)
		file_epoch = marks_default_epoch_read();
	/*
	 * A bad node id leaves the layout, and idgen_horizon(), working: only a
	 * bad layout setting makes the epoch unknown.
	 */
	if (file_epoch == PG_INT64_MIN || !settings_layout_valid())
		file_epoch = current;
	hz->default_epoch = settings_layout_valid() ? current : file_epoch;
	for (int i = 0; i < hz->nprepared; i++)
		if (hz->prepared[i].epoch_ms == PG_INT64_MIN)
			hz->prepared[i].epoch_ms = file_epoch;
	hz->nearlier = hz->nprepared;
	if (hz->broken)
		return;
	/*
	 * Without the marks no floor can be bound: the file keeps the epoch and
	 * floor it was read with, for the run after the repair, while replayed
	 * prepared transactions are still written to it (the horizon refuses
	 * for the marks meanwhile).
	 */
	if (!marks_readable())
	{
		hz->default_epoch = file_epoch;
		hz->default_floor = hz->file_floor;
		return;
	}
	if (file_epoch < current)
		hz->default_floor = marks_bind_default_layout(file_epoch, Max(hz->mark, hz->file_floor));
	else
		hz->default_floor = marks_bind_default_layout(file_epoch, hz->file_floor);
}

/* At startup, before the floor is set: the file, and the epoch settled. */
static void
horizon_load(void)
{
	horizon_settle_epoch(horizon_load_file());
}

/* One "prepared" line of the file (horizon_read_line). */
static void
horizon_append_prepared(StringInfo buf, const HorizonPrepared *p)
{
	appendStringInfo(buf, "prepared %u %lld %lld %lld\n", p->xid, (long long) p->ms,
					 (long long) p->epoch_ms, (long long) p->default_ms);
}

/*
 * Writes the mark and the prepared entries, and extra when not NULL (an
 * entry that found the table full: the file then holds more than fit, and
 * is refused when read, as the table is now): write, fsync, rename.  Under
 * lock.  An unreadable file is left as it is, for whoever repairs it.
 */
void
horizon_write_file(int64 mark, const HorizonPrepared *extra)
{
	StringInfoData buf;

	if (hz->broken)
		return;
	initStringInfo(&buf);
	appendStringInfoString(&buf, HORIZON_FILE_HEADER);
	appendStringInfo(&buf, "epoch %lld\n", (long long) hz->default_epoch);
	appendStringInfo(&buf, "mark %lld\n", (long long) mark);
	if (hz->default_floor > 0)
		appendStringInfo(&buf, "floor %lld\n", (long long) hz->default_floor);
	for (int i = 0; i < hz->nprepared; i++)
		horizon_append_prepared(&buf, &hz->prepared[i]);
	if (extra != NULL)
		horizon_append_prepared(&buf, extra);
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
void
horizon_prune_prepared(void)
{
	horizon_keep_prepared(TransactionIdIsInProgress);
}

/*
 * Adds an entry, or returns false when the table is full, counting it for
 * idgen_capacity.  Under lock.
 */
static bool
horizon_add_prepared(const HorizonPrepared *entry)
{
	for (int i = 0; i < hz->nprepared; i++)
		if (hz->prepared[i].xid == entry->xid)
		{
			hz->prepared[i].ms = Min(hz->prepared[i].ms, entry->ms);
			hz->prepared[i].default_ms = Min(hz->prepared[i].default_ms, entry->default_ms);
			return true;
		}
	if (hz->nprepared >= hz->max_prepared)
	{
		hz->refused++;
		hz->refused_at = GetCurrentTimestamp();
		return false;
	}
	hz->prepared[hz->nprepared++] = *entry;
	hz->nearlier += entry->earlier_run;
	return true;
}

static void
horizon_log_prepared(const HorizonPrepared *entry)
{
	xl_idgen_horizon_prepared_default rec = {entry->xid, entry->ms, entry->default_ms,
	entry->epoch_ms};

	XLogBeginInsert();
	XLogRegisterData((char *) &rec, SizeOfIdgenHorizonPreparedDefault);
	(void) XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_HORIZON_PREPARED_DEFAULT);
}

/*
 * At PREPARE, before its WAL record: the entry is durable in the file, and
 * its WAL record precedes PREPARE's, so a standby that has the prepared
 * transaction has the entry too.  Its IDs of the default layout start above
 * this run's default_floor too, where horizons of that layout may already
 * stand: after a restart the entry must not hold it below them.
 */
void
horizon_remember_prepared(TransactionId xid, int64 ms)
{
	HorizonPrepared entry = {xid, ms, Max(ms, hz->default_floor), hz->default_epoch, false};

	LWLockAcquire(hz->lock, LW_EXCLUSIVE);
	horizon_prune_prepared();
	if (!horizon_add_prepared(&entry))
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
	horizon_log_prepared(&entry);
}

/* Older than the clog kept: ended (an open one would hold it back). */
static bool
horizon_replayed_open(TransactionId xid)
{
	return !TransactionIdPrecedes(xid, idgen_oldest_xid()) &&
		!TransactionIdDidCommit(xid) && !TransactionIdDidAbort(xid);
}

/*
 * Replay of a prepared transaction's entry.  Entries of transactions that
 * the replayed WAL has committed or aborted are dropped (the proc array
 * does not track transactions outside hot standby); the file keeps the rest
 * across a restart of the standby.  The entry is of another run, the
 * primary's, as one read from the file at startup is: promoted, restarted
 * or not, the standby holds the default layout's horizon at most where the
 * transaction's IDs of it start, counted from the primary's epoch.  A full
 * table makes the horizon refuse, and so does the file, which gets the
 * entry all the same: a restart must not forget that an entry is missing.
 */
void
horizon_redo_prepared(TransactionId xid, int64 ms, int64 default_ms, int64 epoch_ms)
{
	HorizonPrepared entry = {xid, ms, default_ms,
	epoch_ms == PG_INT64_MIN ? hz->default_epoch : epoch_ms, true};

	LWLockAcquire(hz->lock, LW_EXCLUSIVE);
	horizon_keep_prepared(horizon_replayed_open);
	if (horizon_add_prepared(&entry))
		horizon_write_file(hz->mark, NULL);
	else
	{
		horizon_write_file(hz->mark, &entry);
		hz->broken = true;
	}
	LWLockRelease(hz->lock);
}

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

Size
horizon_shmem_size(void)
{
	return add_size(horizon_prepared_offset(),
					mul_size(horizon_max_prepared(), sizeof(HorizonPrepared)));
}

void
horizon_shmem_request(void)
{
	RequestNamedLWLockTranche("idgen horizon", 1);
}

/* idgen.c's shared memory hook: at startup and after every crash reinitialisation. */
void
horizon_shmem_init(void *at, bool found)
{
	hz = at;
	if (!found)
	{
		memset(hz, 0, offsetof(HorizonShared, oldest));
		hz->lock = &(GetNamedLWLockTranche("idgen horizon"))[0].lock;
		hz->nbackends = horizon_nbackends();
		hz->max_prepared = horizon_max_prepared();
		hz->prepared = (HorizonPrepared *) ((char *) hz + horizon_prepared_offset());
		for (int i = 0; i < hz->nbackends; i++)
			pg_atomic_init_u64(&hz->oldest[i], HORIZON_NONE);
		horizon_load();
		/* Every horizon returned before is at or below the mark. */
		pg_atomic_init_u64(&hz->floor, (uint64) hz->mark);
		pg_atomic_init_u64(&hz->returned, 0);
	}
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
