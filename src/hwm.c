/*
 * hwm.c
 *		The high-water mark that makes ID uniqueness survive crashes,
 *		restarts and standby promotion.
 *
 * Every millisecond idgen has used is below the mark, and the mark is durable
 * before any millisecond below it is used: it is written to the file
 * idgen_hwm in the data directory (fsynced, renamed into place) and logged in
 * WAL through a custom resource manager, flushed.  Both hold it in
 * milliseconds since idgen.epoch, the unit of the IDs' time field, so a
 * server restarted or promoted with another epoch still resumes above every
 * time field used before.  After a crash or restart the file
 * gives the floor where generation resumes, whatever the clock says; a
 * standby replays the WAL records, so when it is promoted it resumes above
 * every ID the old primary made before the WAL it received.
 *
 * The mark runs HWM_STEP_MS plus idgen.max_lead_ms ahead of the clock.  When
 * a backend's time comes within half a step of it, the backend wakes the
 * "idgen mark writer" background worker, which raises the mark, so the hot
 * path does no I/O; only a backend that reaches the mark itself (an idle
 * server's first ID, or a worker that fell behind) raises it synchronously.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "compat.h"
#include "generator.h"
#include "hwm.h"
#include "layout.h"

#define HWM_FILE		"idgen_hwm"
#define HWM_TMP_FILE	"idgen_hwm.tmp"
#define HWM_STEP_MS		1000

/*
 * WAL resource manager id.  Custom ids are coordinated on the PostgreSQL
 * wiki; this one is idgen's until it is listed there.
 */
#define IDGEN_RMGR_ID	171
#define XLOG_IDGEN_MARK	0x00

typedef struct HwmShared
{
	LWLock	   *lock;			/* serialises raising the mark */
	pg_atomic_uint64 mark;		/* every used millisecond is below this */
	pg_atomic_uint64 requested;	/* highest millisecond a backend asked for */
	int64		floor;			/* the mark when generation (re)started */
	bool		corrupt;		/* the file could not be read */
	Latch	   *writer_latch;	/* the mark writer, when running */
} HwmShared;

static HwmShared *hwm = NULL;

PGDLLEXPORT void hwm_writer_main(Datum arg);

Size
hwm_shmem_size(void)
{
	return MAXALIGN(sizeof(HwmShared));
}

void
hwm_shmem_request(void)
{
	RequestAddinShmemSpace(hwm_shmem_size());
	RequestNamedLWLockTranche("idgen mark", 1);
}

/* Reads the mark (since the epoch) from the file: 0 when there is none, -1 when unreadable. */
static int64
hwm_read_file(void)
{
	char		buf[64];
	char	   *end;
	int64		mark;
	ssize_t		len;
	int			fd = open(HWM_FILE, O_RDONLY | PG_BINARY, 0);

	if (fd < 0)
	{
		if (errno != ENOENT)
			return -1;
		ereport(LOG,
				(errmsg("idgen: no high-water mark file \"%s\"; IDs start from the clock", HWM_FILE),
				 errdetail("This is expected on a new cluster. After pg_upgrade or a restore, copy the file from the old data directory.")));
		return 0;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	errno = 0;
	mark = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || strcmp(end, "\n") != 0 || mark < 0)
		return -1;
	return mark;
}

/* Runs in the postmaster at startup and after every crash reinitialisation. */
void
hwm_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	hwm = ShmemInitStruct("idgen high-water mark", hwm_shmem_size(), &found);
	if (!found)
	{
		int64		mark = hwm_read_file();

		memset(hwm, 0, sizeof(HwmShared));
		hwm->lock = &(GetNamedLWLockTranche("idgen mark"))[0].lock;
		hwm->corrupt = mark < 0;
		if (hwm->corrupt)
			ereport(LOG,
					(errmsg("idgen: could not read \"%s\"; generating IDs is refused",
							HWM_FILE)));
		hwm->floor = Max(mark, 0) + layout_default()->epoch_ms;
		pg_atomic_init_u64(&hwm->mark, (uint64) hwm->floor);
		pg_atomic_init_u64(&hwm->requested, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Makes the mark durable in the file: write, fsync, rename into place. */
static void
hwm_write_file(int64 mark)
{
	char		buf[64];
	int			len = snprintf(buf, sizeof(buf), "%lld\n",
							   (long long) (mark - layout_default()->epoch_ms));
	int			fd = OpenTransientFile(HWM_TMP_FILE, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", HWM_TMP_FILE)));
	errno = 0;
	if (write(fd, buf, len) != len || pg_fsync(fd) != 0)
	{
		int			save_errno = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", HWM_TMP_FILE)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", HWM_TMP_FILE)));
	(void) durable_rename(HWM_TMP_FILE, HWM_FILE, ERROR);
}

/* Raises the mark to cover ms; the caller holds the lock. */
static void
hwm_raise_locked(int64 ms)
{
	int64		mark;

	if (hwm->corrupt)
		return;					/* keep the evidence; hwm_reserve refuses */
	if (ms + HWM_STEP_MS / 2 < (int64) pg_atomic_read_u64(&hwm->mark))
		return;					/* someone else raised it meanwhile */
	mark = Max(ms, clock_now_ms()) + idgen_max_lead_ms + HWM_STEP_MS;
	hwm_write_file(mark);
	{
		int64		since_epoch = mark - layout_default()->epoch_ms;

		XLogBeginInsert();
		XLogRegisterData((char *) &since_epoch, sizeof(since_epoch));
		XLogFlush(XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_MARK));
	}
	pg_atomic_write_u64(&hwm->mark, (uint64) mark);
}

static void
hwm_raise(int64 ms)
{
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	hwm_raise_locked(ms);
	LWLockRelease(hwm->lock);
}

int64
hwm_floor(void)
{
	return hwm->floor;
}

/*
 * Called for every millisecond before an ID of it is handed out.  Below the
 * mark it returns at once; near the mark it wakes the writer; at the mark it
 * raises the mark itself.
 */
void
hwm_reserve(int64 ms)
{
	int64		mark = (int64) pg_atomic_read_u64(&hwm->mark);
	uint64		requested;
	Latch	   *writer;

	if (likely(ms + HWM_STEP_MS / 2 < mark))
		return;
	if (unlikely(hwm->corrupt))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen high-water mark file \"%s\" is unreadable", HWM_FILE),
				 errdetail("Without it idgen cannot tell which IDs were issued before the last restart."),
				 errhint("Restore the file, or write into it a Unix time in milliseconds later than any issued ID, and restart the server.")));
	if (ms >= mark)
	{
		hwm_raise(ms);
		return;
	}
	requested = pg_atomic_read_u64(&hwm->requested);
	while (requested < (uint64) ms &&
		   !pg_atomic_compare_exchange_u64(&hwm->requested, &requested, (uint64) ms))
		;
	writer = hwm->writer_latch;	/* read once: the writer may be exiting */
	if (writer != NULL)
		SetLatch(writer);
}

static void
hwm_writer_detach(int code, Datum arg)
{
	hwm->writer_latch = NULL;
}

/* The background worker that raises the mark when backends come near it. */
void
hwm_writer_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	hwm->writer_latch = MyLatch;
	before_shmem_exit(hwm_writer_detach, (Datum) 0);

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (pg_atomic_read_u64(&hwm->requested) > 0)
			hwm_raise((int64) pg_atomic_read_u64(&hwm->requested));
	}
}

/*
 * Replay, on a standby or in crash recovery: nothing is generated during
 * recovery, so the floor follows the mark, and the file keeps it across a
 * restart of the standby.
 */
static void
hwm_redo(XLogReaderState *record)
{
	int64		mark;

	memcpy(&mark, XLogRecGetData(record), sizeof(mark));
	mark += layout_default()->epoch_ms;
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	if (mark > (int64) pg_atomic_read_u64(&hwm->mark))
	{
		hwm_write_file(mark);
		pg_atomic_write_u64(&hwm->mark, (uint64) mark);
	}
	hwm->floor = Max(hwm->floor, mark);
	LWLockRelease(hwm->lock);
}

static void
hwm_desc(StringInfo buf, XLogReaderState *record)
{
	int64		mark;

	memcpy(&mark, XLogRecGetData(record), sizeof(mark));
	appendStringInfo(buf, "mark %lld ms after the epoch", (long long) mark);
}

static const char *
hwm_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_IDGEN_MARK ? "MARK" : NULL;
}

static RmgrData hwm_rmgr = {
	.rm_name = "idgen",
	.rm_redo = hwm_redo,
	.rm_desc = hwm_desc,
	.rm_identify = hwm_identify,
};

/* During preload: the WAL resource manager and the mark writer. */
void
hwm_register(void)
{
	BackgroundWorker worker = {0};

	RegisterCustomRmgr(IDGEN_RMGR_ID, &hwm_rmgr);
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "idgen");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "hwm_writer_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "idgen mark writer");
	snprintf(worker.bgw_type, BGW_MAXLEN, "idgen mark writer");
	RegisterBackgroundWorker(&worker);
}
