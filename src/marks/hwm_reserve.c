/*
 * hwm_reserve.c
 *		High-water marks as backends use them: attaching a layout to its
 *		mark, reserving a tick below it, raising marks durably, and waiting
 *		for synchronous standbys to confirm them.
 *
 * Marks run HWM_STEP_MS ahead of the newest tick asked for.  When a backend's
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
#include "hwm_shared.h"

/*
 * The mark of a layout, for as long as the server runs: its own entry for
 * this node id, or the overflow mark of the node id when the table is
 * full, raised above every mark that binds the layout here.  A layout
 * defined in SQL and defined again with another epoch keeps the mark of
 * the old one, in Unix milliseconds (README: redefining a layout starts a
 * new numbering).
 */
HwmEntry *
hwm_attach(const IdgenLayout *layout)
{
	HwmEntry   *e;

	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	e = hwm_entry(layout->name, layout->epoch_ms, node_id(), idgen_node_bits, false);
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *other = &hwm->entries[i];
		int64		bound;

		if (other == e || !hwm_binds(other, layout->name, node_id(), idgen_node_bits))
			continue;
		bound = Max(hwm_read(&other->floor), hwm_mark(other));
		/* what holds back a node id new to the layout too */
		if (other->node == HWM_ANY_NODE || other->node_bits != idgen_node_bits)
			hwm_set(&e->shared_floor, Max(hwm_read(&e->shared_floor), bound));
		e->epoch_later |= other->epoch_later;
		hwm_merge(e, e->epoch_ms, bound);
	}
	LWLockRelease(hwm->lock);
	return e;
}

/*
 * The floor of the layout for a node id that never generated in it: marks
 * written without a node id, or with other node_bits, bind every node id.
 */
int64
hwm_shared_floor(const HwmEntry *e)
{
	return hwm_read(e->node == HWM_ANY_NODE ? &e->floor : &e->shared_floor);
}

int64
hwm_floor(const HwmEntry *e)
{
	return hwm_read(&e->floor);
}

/*
 * Keeps, for slots.c's rule on recycled states, the newest tick of the
 * layout's shared states given up; the mark may be well above it.
 */
void
hwm_retire(HwmEntry *e, int64 tick_start_ms)
{
	uint64		retired = pg_atomic_read_u64(&e->retired);

	while (retired < (uint64) tick_start_ms &&
		   !pg_atomic_compare_exchange_u64(&e->retired, &retired, (uint64) tick_start_ms))
		;
}

int64
hwm_retired(HwmEntry *e)
{
	return (int64) pg_atomic_read_u64(&e->retired);
}

/*
 * When the epoch moved later at startup, the clock reaches the IDs issued
 * before at the floor: until then, the move is why IDs wait.  PG_INT64_MIN
 * when it did not move later.
 */
int64
hwm_epoch_later_until(const HwmEntry *e)
{
	return e->epoch_later ? hwm_read(&e->floor) : PG_INT64_MIN;
}

/*
 * Raises every mark that a request has come near, and e's to cover ms
 * (ms < 0: none), making them durable before publishing them.  The caller
 * holds the lock.
 */
static void
hwm_raise_locked(HwmEntry *target, int64 ms)
{
	int			n = hwm->end;
	int64	   *marks;
	bool	   *raised;
	int64		now = clock_now_ms();
	bool		any = false;
	XLogRecPtr	end = InvalidXLogRecPtr;

	if (hwm->corrupt)
		return;					/* keep the evidence; hwm_reserve refuses */
	marks = palloc(n * sizeof(int64));
	raised = palloc0(n * sizeof(bool));
	for (int i = 0; i < n; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		int64		want = (int64) pg_atomic_read_u64(&e->requested);

		marks[i] = (int64) pg_atomic_read_u64(&e->mark);
		if (e == target)
			want = Max(want, ms);
		if (e->name[0] == '\0' || want <= 0 || want + HWM_STEP_MS / 2 < marks[i])
			continue;
		marks[i] = Max(want, now) + HWM_STEP_MS;
		raised[i] = any = true;
	}
	if (any)
	{
		hwm_write(marks);
		for (int i = 0; i < n; i++)
		{
			HwmEntry   *e = &hwm->entries[i];

			if (raised[i])
				end = hwm_log_mark(e, marks[i]);
		}
		XLogFlush(end);
		hwm_logged(end);
		for (int i = 0; i < n; i++)
			if (raised[i])
				pg_atomic_write_u64(&hwm->entries[i].mark, (uint64) marks[i]);
	}
	pfree(marks);
	pfree(raised);
}

/* Raises marks as hwm_raise_locked() does, taking the lock. */
void
hwm_raise(HwmEntry *target, int64 ms)
{
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	hwm_raise_locked(target, ms);
	LWLockRelease(hwm->lock);
}

/* Asks for e's mark to cover ms, at the next raise. */
static void
hwm_request(HwmEntry *e, int64 ms)
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
hwm_raise_all(int64 ms, int64 default_ms)
{
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	if (hwm->corrupt)
	{
		LWLockRelease(hwm->lock);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen high-water mark file \"%s\" is unreadable", HWM_FILE),
				 errhint("Restore the file, or replace it with the line \"* 0 N\", N being a Unix time in milliseconds later than any issued ID, and restart the server.")));
	}
	if (default_ms > ms)
	{
		const IdgenLayout *def = layout_default();
		HwmEntry   *e = hwm_entry(def->name, def->epoch_ms, HWM_ANY_NODE, 0, false);

		hwm_request(e, default_ms);
		e->epoch_later = true;
	}
	for (int i = 0; i < hwm->end; i++)
		if (hwm->entries[i].name[0] != '\0')
			hwm_request(&hwm->entries[i], ms);
	hwm_raise_locked(NULL, -1);
	hwm_write(NULL);
	LWLockRelease(hwm->lock);
}

/*
 * The highest mark that binds a node id under node_bits, in any layout:
 * every tick this server used under the node id starts below it
 * (lease_worker.c reports it to the registry).  -1 when the file was
 * unreadable: the marks then say nothing of the IDs made before.
 */
int64
hwm_node_highest(int node, int node_bits)
{
	int64		high = 0;

	LWLockAcquire(hwm->lock, LW_SHARED);
	if (hwm->corrupt)
	{
		LWLockRelease(hwm->lock);
		return -1;
	}
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (e->name[0] != '\0' &&
			(e->node == HWM_ANY_NODE || e->node == node || e->node_bits != node_bits))
			high = Max(high, Max(hwm_read(&e->floor), hwm_mark(e)));
	}
	LWLockRelease(hwm->lock);
	return high;
}

/*
 * Raises the overflow mark of a node id, which binds its every layout, to
 * ms, durably: a node id leased from a registry starts above the mark its
 * previous holders reported.  Called before any backend generates under
 * the node id, so no backend holds a floor of it yet.
 */
void
hwm_raise_node_floor(int node, int node_bits, int64 ms)
{
	HwmEntry   *e;
	XLogRecPtr	end;

	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	if (hwm->corrupt)
	{
		/* generation refuses for the file anyway */
		LWLockRelease(hwm->lock);
		return;
	}
	e = hwm_find_or_add(HWM_OVERFLOW, 0, node, node_bits, false);
	if (e == NULL)
		e = hwm_overflow();
	if (ms > hwm_mark(e) || ms > hwm_read(&e->floor))
	{
		hwm_merge(e, 0, ms);
		hwm_write(NULL);
		end = hwm_log_mark(e, hwm_mark(e));
		XLogFlush(end);
		hwm_logged(end);
	}
	LWLockRelease(hwm->lock);
}

/* Does this session wait for synchronous standbys, as its commits would? */
bool
hwm_sync_wanted(void)
{
	return SyncRepRequested() && SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0';
}

static void
hwm_wake_writer(void)
{
	Latch	   *writer = hwm->writer_latch; /* read once: it may be exiting */

	if (writer != NULL)
		SetLatch(writer);
}

/*
 * Called for every tick start before an ID of it is handed out.  Below the
 * mark it returns at once; near the mark it wakes the writer; at the mark it
 * raises the mark itself.  Returns false when the tick must wait for
 * synchronous standbys to confirm its mark: the caller, holding no lock,
 * waits with hwm_wait_confirmed() and tries again.
 */
bool
hwm_reserve(HwmEntry *e, int64 ms)
{
	bool		sync = hwm_sync_wanted();
	int64		limit = (int64) pg_atomic_read_u64(sync ? &e->confirmed : &e->mark);

	if (likely(ms + HWM_STEP_MS / 2 < limit))
		return true;
	if (unlikely(hwm->corrupt))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen high-water mark file \"%s\" is unreadable", HWM_FILE),
				 errdetail("%s Without it idgen cannot tell which IDs were issued before the last restart.",
						   hwm->corrupt_detail),
				 errhint("Restore the file, or replace it with the line \"* 0 N\", N being a Unix time in milliseconds later than any issued ID, and restart the server.")));
	if (ms >= hwm_mark(e))
		hwm_raise(e, ms);
	else
		hwm_request(e, ms);
	if (sync || ms + HWM_STEP_MS / 2 >= hwm_mark(e))
		hwm_wake_writer();
	return !sync || ms < (int64) pg_atomic_read_u64(&e->confirmed);
}

/*
 * Waits until the synchronous standbys have a mark above the tick starting
 * at ms, or this session no longer waits for them.  Cancellable, like a
 * commit's wait; it takes no lock.
 */
void
hwm_wait_confirmed(HwmEntry *e, int64 ms)
{
	ConditionVariablePrepareToSleep(&hwm->confirmed_cv);
	while (hwm_sync_wanted() && (int64) pg_atomic_read_u64(&e->confirmed) <= ms)
	{
		hwm_wake_writer();
		(void) ConditionVariableTimedSleep(&hwm->confirmed_cv, 1000,
										   idgen_wait_event_sync_rep());
	}
	ConditionVariableCancelSleep();
}
