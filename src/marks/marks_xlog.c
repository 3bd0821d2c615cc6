/*
 * marks_xlog.c
 *		High-water marks in WAL: each mark raised is logged in a record of
 *		idgen's resource manager and flushed before it is published, the
 *		LSN synchronous standbys confirm, and the replay of a record
 *		(rmgr.c dispatches it here).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "miscadmin.h"

#include "base/idgen_xlog.h"
#include "marks_shared.h"

/*
 * Logs e's mark: a mark of every node id in the record standbys of every
 * version read, one of a node id in the record of 1.3 and later.  Returns
 * the record's end for the caller to flush.
 */
XLogRecPtr
marks_log_mark(const MarkEntry *e, int64 mark_ms)
{
	xl_idgen_mark rec = {0};
	xl_idgen_mark_node nrec = {0};

	XLogBeginInsert();
	if (e->node != MARKS_ANY_NODE)
	{
		nrec.epoch_ms = e->epoch_ms;
		nrec.mark_ms = mark_ms;
		nrec.node = e->node;
		nrec.node_bits = e->node_bits;
		strlcpy(nrec.layout, e->name, NAMEDATALEN);
		XLogRegisterData((char *) &nrec, SizeOfIdgenMarkNode);
		return XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_MARK_NODE);
	}
	rec.epoch_ms = e->epoch_ms;
	rec.mark_ms = mark_ms;
	strlcpy(rec.layout, e->name, NAMEDATALEN);
	XLogRegisterData((char *) &rec, SizeOfIdgenMark);
	return XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_MARK);
}

/*
 * Marks published from now on have their records at or before end: the
 * mark writer has synchronous standbys confirm that LSN.  Under the lock,
 * before the marks are published.
 */
void
marks_logged(XLogRecPtr end)
{
	pg_atomic_write_u64(&mark_table->logged_lsn, (uint64) end);
	pg_write_barrier();
}

/*
 * The LSN the mark writer waits for, covering the records of every mark
 * read before the call: the end of the newest MARK record.  Not the flush
 * pointer, which a committing backend may be waiting for at the same time:
 * PostgreSQL's queue of synchronous-replication waiters holds distinct
 * LSNs (an assertion fails otherwise).  Marks the server started with have
 * no record in this run yet: the first call logs them.
 */
XLogRecPtr
marks_confirmable_lsn(void)
{
	XLogRecPtr	end = InvalidXLogRecPtr;

	pg_read_barrier();
	if (pg_atomic_read_u64(&mark_table->logged_lsn) != 0 || mark_table->corrupt)
		return (XLogRecPtr) pg_atomic_read_u64(&mark_table->logged_lsn);
	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	for (int i = 0; i < mark_table->end && pg_atomic_read_u64(&mark_table->logged_lsn) == 0; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];

		if (e->name[0] != '\0' && marks_value(e) > 0)
			end = marks_log_mark(e, marks_value(e));
	}
	if (end != InvalidXLogRecPtr)
	{
		XLogFlush(end);
		marks_logged(end);
	}
	LWLockRelease(mark_table->lock);
	return (XLogRecPtr) pg_atomic_read_u64(&mark_table->logged_lsn);
}

/*
 * Replay of a mark (rmgr.c), on a standby or in crash recovery: nothing is
 * generated during recovery, so the floor follows the mark, and the file
 * keeps it across a restart of the standby.  A mark new to the table moves
 * with its layout's epoch as startup moves the file's, so that after
 * promotion every mark counts from this server's epoch.  In crash recovery
 * the file is written before the WAL record, so a record above the file
 * means the file was put back from an older copy.
 */
void
marks_redo_mark(const char *layout, int64 epoch_ms, int64 mark_ms, int node, int node_bits)
{
	MarkEntry   *e;

	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	e = marks_entry_named(layout, epoch_ms, node, node_bits, false);
	marks_move_epoch(e);
	mark_table->replayed = true;
	if (!marks_is_overflow(e))
		mark_ms = marks_convert(mark_ms, epoch_ms, e->epoch_ms);
	if (mark_ms > marks_value(e))
	{
		if (!ArchiveRecoveryRequested && !mark_table->restore_warned)
		{
			mark_table->restore_warned = true;
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("idgen high-water mark file \"%s\" was behind the WAL", MARKS_FILE),
					 errdetail("It may have been put back from an older copy. The WAL's marks are used."),
					 errhint("Do not restore \"%s\" on its own; it belongs with the data directory it was taken from.",
							 MARKS_FILE)));
		}
		marks_merge(e, e->epoch_ms, mark_ms);
		marks_write(NULL);
	}
	LWLockRelease(mark_table->lock);
}
