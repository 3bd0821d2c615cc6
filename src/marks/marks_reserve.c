/*
 * marks_reserve.c
 *		High-water marks as backends use them: attaching a layout to its
 *		mark, reserving a tick below it, raising marks durably, and waiting
 *		for synchronous standbys to confirm them.
 *
 * Marks run MARKS_STEP_MS ahead of the newest tick asked for.  When a backend's
 * time comes within half a step of its mark, the backend wakes the "idgen
 * mark writer" background worker, which raises the mark, so the hot path
 * does no I/O; only a backend that reaches the mark itself (an idle server's
 * first ID, or a burst that outruns the writer) raises it synchronously.
 *
 * With synchronous standbys configured, a session whose synchronous_commit
 * waits for them (remote_write, on, remote_apply) uses only ticks below a
 * mark they have confirmed, as a commit would: its record is flushed on them,
 * so a standby promoted after the primary died resumes above every ID the
 * primary handed out, even one no row holds.  The writer confirms marks
 * ahead of need, so in steady state nobody waits; while the standbys are
 * away, such sessions wait (cancellably, holding no lock) for the writer.
 * Sessions with synchronous_commit = local or off use the flushed marks.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "storage/condition_variable.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/node.h"
#include "base/settings.h"
#include "marks_shared.h"

/*
 * The mark of a layout, for as long as the server runs: its own entry for
 * this node id, or the overflow mark of the node id when the table is
 * full, raised above every mark that binds the layout here.  A layout
 * defined in SQL and defined again with another epoch keeps the mark of
 * the old one, in Unix milliseconds (README: redefining a layout starts a
 * new numbering).
 */
MarkEntry *
marks_attach(const IdgenLayout *layout)
{
	MarkEntry   *e;

	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	marks_fold_replayed();
	e = marks_entry(layout->name, layout->epoch_ms, node_id(), idgen_node_bits, false);
	for (int i = 0; i < mark_table->end; i++)
	{
		MarkEntry   *other = &mark_table->entries[i];
		int64		bound;

		if (other == e || !marks_binds(other, layout->name, node_id(), idgen_node_bits))
			continue;
		bound = Max(marks_read(&other->floor), marks_value(other));
		/* what holds back a node id new to the layout too */
		if (other->node == MARKS_ANY_NODE || other->node_bits != idgen_node_bits)
			marks_set(&e->shared_floor, Max(marks_read(&e->shared_floor), bound));
		e->epoch_later |= other->epoch_later;
		marks_merge(e, e->epoch_ms, bound);
	}
	LWLockRelease(mark_table->lock);
	return e;
}

/*
 * The floor of the layout for a node id that never generated in it: marks
 * written without a node id, or with other node_bits, bind every node id.
 */
int64
marks_shared_floor(const MarkEntry *e)
{
	return marks_read(e->node == MARKS_ANY_NODE ? &e->floor : &e->shared_floor);
}

int64
marks_floor(const MarkEntry *e)
{
	return marks_read(&e->floor);
}

/*
 * Keeps, for slots.c's rule on recycled states, the newest tick of the
 * layout's shared states given up; the mark may be well above it.
 */
void
marks_retire(MarkEntry *e, int64 tick_start_ms)
{
	uint64		retired = pg_atomic_read_u64(&e->retired);

	while (retired < (uint64) tick_start_ms &&
		   !pg_atomic_compare_exchange_u64(&e->retired, &retired, (uint64) tick_start_ms))
		;
}

int64
marks_retired(MarkEntry *e)
{
	return (int64) pg_atomic_read_u64(&e->retired);
}

/*
 * When the epoch moved later at startup, the clock reaches the IDs issued
 * before at the floor: until then, the move is why IDs wait.  PG_INT64_MIN
 * when it did not move later.
 */
int64
marks_epoch_later_until(const MarkEntry *e)
{
	return e->epoch_later ? marks_read(&e->floor) : PG_INT64_MIN;
}

/*
 * Raises every mark that a request has come near, and e's to cover ms
 * (ms < 0: none), making them durable before publishing them.  The caller
 * holds the lock.
 */
static void
marks_raise_locked(MarkEntry *target, int64 ms)
{
	int			n = mark_table->end;
	int64	   *marks;
	bool	   *raised;
	int64		now = clock_now_ms();
	bool		any = false;
	XLogRecPtr	end = InvalidXLogRecPtr;

	if (mark_table->corrupt)
		return;					/* keep the evidence; marks_reserve refuses */
	marks = palloc(n * sizeof(int64));
	raised = palloc0(n * sizeof(bool));
	for (int i = 0; i < n; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];
		int64		want = (int64) pg_atomic_read_u64(&e->requested);

		marks[i] = (int64) pg_atomic_read_u64(&e->mark);
		if (e == target)
			want = Max(want, ms);
		if (e->name[0] == '\0' || want <= 0 || want + MARKS_STEP_MS / 2 < marks[i])
			continue;
		marks[i] = Max(want, now) + MARKS_STEP_MS;
		raised[i] = any = true;
	}
	if (any)
	{
		marks_write(marks);
		for (int i = 0; i < n; i++)
		{
			MarkEntry   *e = &mark_table->entries[i];

			if (raised[i])
				end = marks_log_mark(e, marks[i]);
		}
		XLogFlush(end);
		marks_logged(end);
		for (int i = 0; i < n; i++)
			if (raised[i])
				pg_atomic_write_u64(&mark_table->entries[i].mark, (uint64) marks[i]);
	}
	pfree(marks);
	pfree(raised);
}

/* Raises marks as marks_raise_locked() does, taking the lock. */
void
marks_raise(MarkEntry *target, int64 ms)
{
	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	marks_raise_locked(target, ms);
	LWLockRelease(mark_table->lock);
}

/* Asks for e's mark to cover ms, at the next raise. */
static void
marks_request(MarkEntry *e, int64 ms)
{
	uint64		requested = pg_atomic_read_u64(&e->requested);

	while (requested < (uint64) ms &&
		   !pg_atomic_compare_exchange_u64(&e->requested, &requested, (uint64) ms))
		;
}

/*
 * Raises every mark, the overflow mark too, past ms, and the default
 * layout's of every node id past default_ms (IDs made under an earlier
 * epoch: refused, naming the epoch, until the clock passes it); writes the
 * file even when none moved, with what the file's client puts in it.
 */
void
marks_raise_all(int64 ms, int64 default_ms)
{
	marks_require_readable();
	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	if (default_ms > ms)
	{
		const IdgenLayout *def = layout_default();
		MarkEntry   *e = marks_entry(def->name, def->epoch_ms, MARKS_ANY_NODE, 0, false);

		marks_request(e, default_ms);
		e->epoch_later = true;
	}
	for (int i = 0; i < mark_table->end; i++)
		if (mark_table->entries[i].name[0] != '\0')
			marks_request(&mark_table->entries[i], ms);
	marks_raise_locked(NULL, -1);
	marks_write(NULL);
	LWLockRelease(mark_table->lock);
}

/*
 * Writes the file again, its marks as they are, for its client whose line
 * changed.  Not while the file is unreadable: generation refuses for it
 * anyway, and the file is what the DBA has to mend.
 */
void
marks_rewrite(void)
{
	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	if (!mark_table->corrupt)
		marks_write(NULL);
	LWLockRelease(mark_table->lock);
}

/*
 * The highest mark that binds a node id under node_bits, in any layout:
 * every tick this server used under the node id starts below it
 * (lease_worker.c reports it to the registry).  -1 when the file was
 * unreadable: the marks then say nothing of the IDs made before.
 */
int64
marks_node_highest(int node, int node_bits)
{
	int64		high = 0;

	LWLockAcquire(mark_table->lock, LW_SHARED);
	if (mark_table->corrupt)
	{
		LWLockRelease(mark_table->lock);
		return -1;
	}
	for (int i = 0; i < mark_table->end; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];

		if (e->name[0] != '\0' &&
			(e->node == MARKS_ANY_NODE || e->node == node || e->node_bits != node_bits))
			high = Max(high, Max(marks_read(&e->floor), marks_value(e)));
	}
	LWLockRelease(mark_table->lock);
	return high;
}

/*
 * Raises the overflow mark of a node id, which binds its every layout, to
 * ms, durably: a node id leased from a registry starts above the mark its
 * previous holders reported.  Called before any backend generates under
 * the node id, so no backend holds a floor of it yet.
 */
void
marks_raise_node_floor(int node, int node_bits, int64 ms)
{
	MarkEntry   *e;
	XLogRecPtr	end;

	LWLockAcquire(mark_table->lock, LW_EXCLUSIVE);
	if (mark_table->corrupt)
	{
		/* generation refuses for the file anyway */
		LWLockRelease(mark_table->lock);
		return;
	}
	e = marks_find_or_add(MARKS_OVERFLOW, 0, node, node_bits, false);
	if (e == NULL)
		e = marks_overflow();
	if (ms > marks_value(e) || ms > marks_read(&e->floor))
	{
		marks_merge(e, 0, ms);
		marks_write(NULL);
		end = marks_log_mark(e, marks_value(e));
		XLogFlush(end);
		marks_logged(end);
	}
	LWLockRelease(mark_table->lock);
}

/* Does this session wait for synchronous standbys, as its commits would? */
bool
marks_sync_wanted(void)
{
	return SyncRepRequested() && SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0';
}

static void
marks_wake_writer(void)
{
	Latch	   *writer = mark_table->writer_latch; /* read once: it may be exiting */

	if (writer != NULL)
		SetLatch(writer);
}

/* False when the mark file could not be read at startup. */
bool
marks_readable(void)
{
	return !mark_table->corrupt;
}

/*
 * Refuses, naming the file, when the mark file could not be read at
 * startup.  Generation, the horizon and idgen_resume_after() check it once
 * preloading, settings and recovery are: before a refusal for the clock,
 * say, which would have the DBA wait only to be refused for the file.  The
 * flag is set when shared memory is made, before any backend, so no lock.
 */
void
marks_require_readable(void)
{
	if (unlikely(!marks_readable()))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen high-water mark file \"%s\" is unreadable", MARKS_FILE),
				 errdetail("%s Without it idgen cannot tell which IDs were issued before the last restart.",
						   mark_table->corrupt_detail),
				 errhint("Restore the file, or replace it with the line \"* 0 N\", N being a Unix time in milliseconds later than any issued ID, and restart the server.")));
}

/*
 * Called for every tick start before an ID of it is handed out.  Below the
 * mark it returns at once; near the mark it wakes the writer; at the mark it
 * raises the mark itself.  Returns false when the tick must wait for
 * synchronous standbys to confirm its mark: the caller, holding no lock,
 * waits with marks_wait_confirmed() and tries again.
 */
bool
marks_reserve(MarkEntry *e, int64 ms)
{
	bool		sync = marks_sync_wanted();
	int64		limit = (int64) pg_atomic_read_u64(sync ? &e->confirmed : &e->mark);

	if (likely(ms + MARKS_STEP_MS / 2 < limit))
		return true;
	marks_require_readable();
	if (ms >= marks_value(e))
		marks_raise(e, ms);
	else
		marks_request(e, ms);
	if (sync || ms + MARKS_STEP_MS / 2 >= marks_value(e))
		marks_wake_writer();
	return !sync || ms < (int64) pg_atomic_read_u64(&e->confirmed);
}

/*
 * Waits until the synchronous standbys have a mark above the tick starting
 * at ms, or this session no longer waits for them.  Cancellable, like a
 * commit's wait; it takes no lock.
 */
void
marks_wait_confirmed(MarkEntry *e, int64 ms)
{
	ConditionVariablePrepareToSleep(&mark_table->confirmed_cv);
	while (marks_sync_wanted() && (int64) pg_atomic_read_u64(&e->confirmed) <= ms)
	{
		marks_wake_writer();
		(void) ConditionVariableTimedSleep(&mark_table->confirmed_cv, 1000,
										   idgen_wait_event_sync_rep());
	}
	ConditionVariableCancelSleep();
}
