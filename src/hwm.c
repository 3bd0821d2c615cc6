/*
 * hwm.c
 *		High-water marks that make ID uniqueness survive crashes, restarts and
 *		standby promotion.
 *
 * Each layout has a mark: every tick of it that idgen has used starts below
 * the mark, and the mark is durable before any tick below it is used.  It is
 * written to the file idgen_hwm in the data directory (fsynced, renamed into
 * place) and logged in WAL through a custom resource manager, flushed.  After
 * a crash or restart the file gives each layout the floor where generation
 * resumes, whatever the clock says; a standby replays the WAL records, so
 * when it is promoted it resumes above every ID the old primary made before
 * the WAL it received.
 *
 * A mark is Unix milliseconds together with the epoch of the layout when it
 * was written.  If the epoch has changed since (idgen.epoch, for the default
 * layout), the mark is moved with it, so that it still bounds the time field
 * values already used: moving the epoch can never repeat an ID.  Marks are
 * per layout, so that one layout that borrowed far ahead of the clock does
 * not hold back the others after a restart, and per node id (with
 * idgen.node_bits), as IDs of another node id never equal this one's: after
 * the clock jumped far ahead and back, a server moved to a node id that
 * never generated resumes from the clock at once.  A mark of another node
 * id binds this one when node_bits differ (the machine fields may overlap);
 * marks written without a node id (by idgen 1.2, and the overflow mark)
 * bind every node id.
 *
 * The table of marks has room for every built-in layout and some defined in
 * SQL; layouts that find it full share one overflow mark, named "*", which
 * is also the floor of any layout that gets a mark of its own later.  At
 * startup, marks of layouts defined in SQL that the clock has passed are
 * folded into the overflow mark, so the table holds only marks that matter.
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
 *
 * This file keeps the table and reserves and raises marks; the file format
 * is hwm_file.c's, the writer hwm_writer.c's, the WAL records rmgr.c's.
 * Locking, field by field, is in hwm_shared.h.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "compat.h"
#include "hwm_shared.h"
#include "layout.h"
#include "provenance.h"
#include "rmgr.h"
#include "settings.h"

HwmShared  *hwm = NULL;

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

/* A mark counted from one epoch, moved to count the same IDs from another. */
static int64
hwm_convert(int64 mark, int64 from_epoch, int64 to_epoch)
{
	return Max(mark + (to_epoch - from_epoch), 0);
}

int64
hwm_mark(HwmEntry *e)
{
	return (int64) pg_atomic_read_u64(&e->mark);
}

static HwmEntry *
hwm_overflow(void)
{
	return &hwm->entries[0];
}

static HwmEntry *
hwm_find(const char *name, int node, int node_bits)
{
	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (strcmp(e->name, name) == 0 && e->node == node &&
			(node == HWM_ANY_NODE || e->node_bits == node_bits))
			return e;
	}
	return NULL;
}

/* A new entry starting at the overflow floor, or NULL when the table is full. */
static HwmEntry *
hwm_add(const char *name, int64 epoch_ms, int node, int node_bits)
{
	HwmEntry   *overflow = hwm_overflow();

	for (int i = 1; i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (e->name[0] != '\0')
			continue;
		strlcpy(e->name, name, NAMEDATALEN);
		e->node = node;
		e->node_bits = node == HWM_ANY_NODE ? 0 : node_bits;
		e->epoch_ms = epoch_ms;
		e->floor = overflow->floor;
		e->shared_floor = overflow->floor;
		pg_atomic_write_u64(&e->mark, (uint64) overflow->floor);
		pg_atomic_write_u64(&e->requested, 0);
		pg_atomic_write_u64(&e->retired, 0);
		pg_atomic_write_u64(&e->confirmed, 0);
		return e;
	}
	return NULL;
}

/*
 * Raises e's mark and floor to at least mark, counted from epoch_ms.  The
 * overflow mark serves layouts of any epoch, so it keeps Unix milliseconds
 * as they are.
 */
static void
hwm_merge(HwmEntry *e, int64 epoch_ms, int64 mark)
{
	if (e != hwm_overflow())
		mark = hwm_convert(mark, epoch_ms, e->epoch_ms);
	e->floor = Max(e->floor, mark);
	if (mark > (int64) pg_atomic_read_u64(&e->mark))
		pg_atomic_write_u64(&e->mark, (uint64) mark);
}

/* The entry of a layout and node id, added if need be; the overflow entry when full. */
static HwmEntry *
hwm_entry(const char *name, int64 epoch_ms, int node, int node_bits)
{
	HwmEntry   *e = hwm_find(name, node, node_bits);

	if (e == NULL)
		e = hwm_add(name, epoch_ms, node, node_bits);
	return e ? e : hwm_overflow();
}

/* Can IDs below other's mark equal IDs e's node id makes in e's layout? */
static bool
hwm_binds(const HwmEntry *other, const HwmEntry *e)
{
	return other != e && strcmp(other->name, e->name) == 0 &&
		(other->node == HWM_ANY_NODE || other->node == e->node ||
		 other->node_bits != e->node_bits);
}

static void
hwm_set_corrupt(const char *detail)
{
	hwm->corrupt = true;
	strlcpy(hwm->corrupt_detail, detail, sizeof(hwm->corrupt_detail));
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen high-water mark file \"%s\" is unreadable; generating IDs is refused",
					HWM_FILE),
			 errdetail_internal("%s", detail)));
}

/* The entry a mark read from the file or the WAL belongs to. */
static HwmEntry *
hwm_entry_named(const char *name, int64 epoch_ms, int node, int node_bits)
{
	if (strcmp(name, HWM_OVERFLOW) == 0)
		return hwm_overflow();
	return hwm_entry(name, epoch_ms, node, node_bits);
}

/* A line of the file, at startup (hwm_file_load). */
void
hwm_load_mark(const char *name, int64 epoch_ms, int64 mark, int node, int node_bits)
{
	hwm_merge(hwm_entry_named(name, epoch_ms, node, node_bits), epoch_ms, mark);
}

/* A built-in layout's epoch changed (idgen.epoch): its marks move with it. */
static void
hwm_move_epoch(HwmEntry *e, const IdgenLayout *layout)
{
	if (e->epoch_ms == layout->epoch_ms)
		return;
	ereport(LOG,
			(errmsg("idgen: the epoch of layout \"%s\" changed from %s to %s since its last IDs",
					layout->name,
					pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(e->epoch_ms))),
					pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout->epoch_ms)))),
			 errdetail("IDs resume above those issued before, counted from the new epoch.")));
	e->epoch_later = layout->epoch_ms > e->epoch_ms;
	e->floor = hwm_convert(e->floor, e->epoch_ms, layout->epoch_ms);
	e->shared_floor = hwm_convert(e->shared_floor, e->epoch_ms, layout->epoch_ms);
	pg_atomic_write_u64(&e->mark, (uint64) hwm_convert((int64) pg_atomic_read_u64(&e->mark),
													   e->epoch_ms, layout->epoch_ms));
	e->epoch_ms = layout->epoch_ms;
}

/*
 * Built-in layouts always have marks of their own, of every node id, as
 * their epoch may move (idgen.epoch) and the overflow mark does not move
 * with it; marks of layouts defined in SQL that the clock has passed
 * protect nothing the overflow mark cannot, so they are folded into it,
 * keeping the table for the marks that matter.
 */
static void
hwm_arrange_entries(void)
{
	int64		now = clock_now_ms();
	const IdgenLayout *layout;

	for (int i = 1; i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (e->name[0] == '\0' || layout_builtin(e->name) != NULL ||
			(int64) pg_atomic_read_u64(&e->mark) > now)
			continue;
		hwm_merge(hwm_overflow(), 0, (int64) pg_atomic_read_u64(&e->mark));
		memset(e->name, 0, NAMEDATALEN);
	}
	for (int i = 0; (layout = layout_builtin_at(i)) != NULL; i++)
		for (int j = 1; j < HWM_MAX_ENTRIES; j++)
			if (strcmp(hwm->entries[j].name, layout->name) == 0)
				hwm_move_epoch(&hwm->entries[j], layout);
}

/* The marks as they are, into the file.  The caller holds the lock. */
static void
hwm_write_current(void)
{
	int64		marks[HWM_MAX_ENTRIES];

	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
		marks[i] = (int64) pg_atomic_read_u64(&hwm->entries[i].mark);
	hwm_file_write(marks);
}

/*
 * Runs in the postmaster at startup and after every crash reinitialisation.
 * The file is written at once when it was missing, so that a directory that
 * ran idgen always has one (provenance.c tells a lost file by that).
 */
void
hwm_shmem_startup(void)
{
	bool		found;
	bool		file_found;
	char		detail[sizeof(hwm->corrupt_detail)];

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	hwm = ShmemInitStruct("idgen high-water marks", hwm_shmem_size(), &found);
	if (!found)
	{
		memset(hwm, 0, sizeof(HwmShared));
		hwm->lock = &(GetNamedLWLockTranche("idgen mark"))[0].lock;
		for (int i = 0; i < HWM_MAX_ENTRIES; i++)
		{
			pg_atomic_init_u64(&hwm->entries[i].mark, 0);
			pg_atomic_init_u64(&hwm->entries[i].requested, 0);
			pg_atomic_init_u64(&hwm->entries[i].retired, 0);
			pg_atomic_init_u64(&hwm->entries[i].confirmed, 0);
		}
		ConditionVariableInit(&hwm->confirmed_cv);
		strlcpy(hwm_overflow()->name, HWM_OVERFLOW, NAMEDATALEN);
		hwm_overflow()->node = HWM_ANY_NODE;
		if (hwm_file_load(detail, sizeof(detail), &file_found))
		{
			hwm_arrange_entries();
			if (provenance_settle(file_found))
				hwm_write_current();
		}
		else
		{
			/* generation refuses for the file, which is left as it is */
			hwm_set_corrupt(detail);
			(void) provenance_settle(true);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * The mark of a layout, for as long as the server runs.  A layout defined in
 * SQL and defined again with another epoch keeps the mark of the old one, in
 * Unix milliseconds (README: redefining a layout starts a new numbering).
 */
HwmEntry *
hwm_attach(const IdgenLayout *layout)
{
	HwmEntry   *e;

	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	e = hwm_entry(layout->name, layout->epoch_ms, idgen_node_id, idgen_node_bits);
	for (int i = 1; e != hwm_overflow() && i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *other = &hwm->entries[i];
		int64		bound;

		if (!hwm_binds(other, e))
			continue;
		bound = Max(other->floor, hwm_mark(other));
		e->shared_floor = Max(e->shared_floor, bound);
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
	return e == hwm_overflow() ? e->floor : e->shared_floor;
}

int64
hwm_floor(const HwmEntry *e)
{
	return e->floor;
}

/*
 * Keeps, for registry.c's rule on recycled states, the newest tick of the
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
	return e->epoch_later ? e->floor : PG_INT64_MIN;
}

/*
 * Raises every mark that a request has come near, and e's to cover ms
 * (ms < 0: none), making them durable before publishing them.  The caller
 * holds the lock.
 */
static void
hwm_raise_locked(HwmEntry *target, int64 ms)
{
	int64		marks[HWM_MAX_ENTRIES];
	int64		now = clock_now_ms();
	bool		raised[HWM_MAX_ENTRIES] = {false};
	bool		any = false;
	XLogRecPtr	end = InvalidXLogRecPtr;

	if (hwm->corrupt)
		return;					/* keep the evidence; hwm_reserve refuses */
	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
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
	if (!any)
		return;
	hwm_file_write(marks);
	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (raised[i])
			end = rmgr_log_mark(e->name, e->epoch_ms, marks[i], e->node, e->node_bits);
	}
	XLogFlush(end);
	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
		if (raised[i])
			pg_atomic_write_u64(&hwm->entries[i].mark, (uint64) marks[i]);
}

/* Raises marks as hwm_raise_locked() does, taking the lock. */
void
hwm_raise(HwmEntry *target, int64 ms)
{
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	hwm_raise_locked(target, ms);
	LWLockRelease(hwm->lock);
}

/*
 * Raises every mark, the overflow mark too, past ms, and writes the file
 * even when none moved, with what provenance.c puts in it.
 */
void
hwm_raise_all(int64 ms)
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
	for (int i = 0; i < HWM_MAX_ENTRIES; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		uint64		requested = pg_atomic_read_u64(&e->requested);

		while (e->name[0] != '\0' && requested < (uint64) ms &&
			   !pg_atomic_compare_exchange_u64(&e->requested, &requested, (uint64) ms))
			;
	}
	hwm_raise_locked(NULL, -1);
	hwm_write_current();
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
	uint64		requested;

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
	{
		requested = pg_atomic_read_u64(&e->requested);
		while (requested < (uint64) ms &&
			   !pg_atomic_compare_exchange_u64(&e->requested, &requested, (uint64) ms))
			;
	}
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

/*
 * Replay of a mark (rmgr.c), on a standby or in crash recovery: nothing is
 * generated during recovery, so the floor follows the mark, and the file
 * keeps it across a restart of the standby.  In crash recovery the file is
 * written before the WAL record, so a record above the file means the file
 * was put back from an older copy.
 */
void
hwm_redo_mark(const char *layout, int64 epoch_ms, int64 mark_ms, int node, int node_bits)
{
	HwmEntry   *e;
	int64		marks[HWM_MAX_ENTRIES];

	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	e = hwm_entry_named(layout, epoch_ms, node, node_bits);
	if (e != hwm_overflow())
		mark_ms = hwm_convert(mark_ms, epoch_ms, e->epoch_ms);
	if (mark_ms > hwm_mark(e))
	{
		if (!ArchiveRecoveryRequested && !hwm->restore_warned)
		{
			hwm->restore_warned = true;
			ereport(WARNING,
					(errmsg("idgen high-water mark file \"%s\" was behind the WAL", HWM_FILE),
					 errdetail("It may have been put back from an older copy. The WAL's marks are used."),
					 errhint("Do not restore \"%s\" on its own; it belongs with the data directory it was taken from.",
							 HWM_FILE)));
		}
		hwm_merge(e, e->epoch_ms, mark_ms);
		for (int i = 0; i < HWM_MAX_ENTRIES; i++)
			marks[i] = hwm_mark(&hwm->entries[i]);
		hwm_file_write(marks);
	}
	LWLockRelease(hwm->lock);
}
