/*
 * marks_writer.c
 *		The "idgen mark writer" background worker: raises high-water marks
 *		that backends have come near, so the hot path does no I/O, and has
 *		synchronous standbys confirm them ahead of need (marks_reserve.c).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "marks_shared.h"

PGDLLEXPORT void marks_writer_main(Datum arg);

/* Set while the writer waits for synchronous standbys. */
static volatile sig_atomic_t confirming = false;

/*
 * SIGTERM: leave the main loop and exit quietly, where die() would end the
 * worker with a FATAL in every clean shutdown's log.  A wait for standbys
 * ends only on ProcDiePending, which the server's shutdown must not wait on.
 */
static void
marks_writer_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	ShutdownRequestPending = true;
	if (confirming)
		ProcDiePending = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * Has the synchronous standbys confirm every mark made durable so far.
 * Only the writer waits here, so that one wait serves every session; it
 * holds no lock meanwhile, and backends that reach a mark raise it
 * themselves.
 */
static void
marks_confirm(void)
{
	int			n = mark_table->end;	/* read once: entries above it are unused */
	int64	   *marks = palloc(n * sizeof(int64));
	XLogRecPtr	logged;

	for (int i = 0; i < n; i++)
		marks[i] = marks_value(&mark_table->entries[i]);
	logged = marks_confirmable_lsn();
	if (logged == InvalidXLogRecPtr)
	{
		pfree(marks);
		return;					/* no mark at all yet */
	}
	/* As in a commit: the wait handles termination itself. */
	HOLD_INTERRUPTS();
	confirming = true;
	if (!ShutdownRequestPending)
		SyncRepWaitForLSN(logged, false);
	confirming = false;
	RESUME_INTERRUPTS();
	/* A wait ended by shutdown confirmed nothing. */
	if (ShutdownRequestPending)
	{
		pfree(marks);
		return;
	}
	for (int i = 0; i < n; i++)
	{
		pg_atomic_uint64 *confirmed = &mark_table->entries[i].confirmed;
		uint64		old = pg_atomic_read_u64(confirmed);

		while (old < (uint64) marks[i] &&
			   !pg_atomic_compare_exchange_u64(confirmed, &old, (uint64) marks[i]))
			;
	}
	pfree(marks);
	ConditionVariableBroadcast(&mark_table->confirmed_cv);
}

static void
marks_writer_detach(int code, Datum arg)
{
	mark_table->writer_latch = NULL;
}

void
marks_writer_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, marks_writer_sigterm);
	BackgroundWorkerUnblockSignals();
	/* Confirm marks on flush, whatever the server's default. */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);

	mark_table->writer_latch = MyLatch;
	before_shmem_exit(marks_writer_detach, (Datum) 0);

	while (!ShutdownRequestPending)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		marks_raise(NULL, -1);
		if (marks_sync_wanted())
			marks_confirm();
	}

	/*
	 * Nothing is left to write: a backend at its mark raises it itself.  Exit
	 * code 1, as the logical replication launcher's, has the postmaster start
	 * the writer again if it was terminated alone (0 would unregister it, and
	 * sessions waiting for standbys would wait for good).
	 */
	proc_exit(1);
}

/* During preload. */
void
marks_writer_register(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "idgen");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "marks_writer_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "idgen mark writer");
	snprintf(worker.bgw_type, BGW_MAXLEN, "idgen mark writer");
	RegisterBackgroundWorker(&worker);
}
