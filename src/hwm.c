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
 * The table of marks holds idgen.max_marks entries, or more when the file
 * has more lines at server start, so that every mark the file keeps gets an
 * entry of its own.  A mark that finds the table full is kept in a mark it
 * shares with others, which binds in every way each of them did; the first
 * such mark of a server run is logged, and idgen_capacity counts them:
 *
 *	- a mark of the default layout, whose epoch may move (idgen.epoch), goes
 *	  to the layout's mark of every node id, which moves with the epoch;
 *	- another layout's mark of a node id goes to the overflow mark of the
 *	  node id ("*" with the node id and node_bits), which binds every layout
 *	  of that node id, and of every node id under other node_bits; a node
 *	  id that never generated is not bound by it, so after a clock jump it
 *	  still starts from the clock;
 *	- a mark that finds no room even there (another node id's, replayed or
 *	  read), or of every node id, goes to "*" alone, which binds every
 *	  layout and node id, in Unix milliseconds.
 *
 * The default layout's marks of this node id and of every node id, and the
 * overflow mark of this node id, never lack an entry: other marks leave
 * room for them (HWM_RESERVED).  Overflow marks never hold the default
 * layout's marks, so they need not move with an epoch.  An overflow mark
 * that layouts generate in starts above every mark that binds any of them,
 * as their own entries would.
 *
 * At startup, marks the clock has passed are folded, the default layout's
 * into its mark of every node id and the others' into "*", so the table
 * holds only marks that matter.
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
 * is hwm_file.c's, the writer hwm_writer.c's, the redo of its WAL records
 * rmgr.c's.
 * Locking, field by field, is in hwm_shared.h.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlog_internal.h"
#include "lib/stringinfo.h"
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
#include "idgen_xlog.h"
#include "settings.h"

HwmShared  *hwm = NULL;

/* The owner of the file's comment lines (provenance.c), in every process. */
static const HwmFileClient *hwm_client = NULL;

/* Entries of the table, fixed when the postmaster first asks for it. */
static int	hwm_nentries = 0;

/*
 * idgen.max_marks, or room for every line of the file and the marks this
 * server's node id may need, when the file has more lines (the setting was
 * lowered, or the file comes from a server that kept more), up to the
 * setting's maximum: a file of garbage must not take the memory.
 */
static int
hwm_entries(void)
{
	if (hwm_nentries == 0)
		hwm_nentries = Max(idgen_max_marks,
						   Min(hwm_file_lines() + 1 + HWM_RESERVED, SETTINGS_MAX_MAX_MARKS));
	return hwm_nentries;
}

void
hwm_set_file_client(const HwmFileClient *client)
{
	hwm_client = client;
}

static Size
hwm_shmem_size(void)
{
	return MAXALIGN(add_size(offsetof(HwmShared, entries),
							 mul_size(hwm_entries(), sizeof(HwmEntry))));
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

/* The overflow mark of every layout and node id. */
static HwmEntry *
hwm_overflow(void)
{
	return &hwm->entries[0];
}

/* An overflow mark, of every node id or of one: it keeps Unix ms as they are. */
static bool
hwm_is_overflow(const HwmEntry *e)
{
	return strcmp(e->name, HWM_OVERFLOW) == 0;
}

static bool
hwm_is_default(const char *name)
{
	return layout_builtin(name) == layout_default();
}

static HwmEntry *
hwm_find(const char *name, int node, int node_bits)
{
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (strcmp(e->name, name) == 0 && e->node == node &&
			(node == HWM_ANY_NODE || e->node_bits == node_bits))
			return e;
	}
	return NULL;
}

/* Is this one of the marks other marks leave room for (HWM_RESERVED)? */
static bool
hwm_reserved(const char *name, int node, int node_bits)
{
	if (hwm_is_default(name) && node == HWM_ANY_NODE)
		return true;
	return node == idgen_node_id && node_bits == idgen_node_bits &&
		(hwm_is_default(name) || strcmp(name, HWM_OVERFLOW) == 0);
}

/*
 * A new entry starting at the overflow floor, or NULL when the table is
 * full.  At startup (anywhere) a mark may take any free entry, as the table
 * has room for the whole file; later, marks that are not reserved leave
 * HWM_RESERVED entries free.
 */
static HwmEntry *
hwm_add(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	HwmEntry   *overflow = hwm_overflow();

	if (hwm->used >= hwm->capacity ||
		(!anywhere && hwm->used >= hwm->capacity - HWM_RESERVED &&
		 !hwm_reserved(name, node, node_bits)))
		return NULL;
	for (int i = 1; i < hwm->capacity; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (e->name[0] != '\0')
			continue;
		strlcpy(e->name, name, NAMEDATALEN);
		e->node = node;
		e->node_bits = node == HWM_ANY_NODE ? 0 : node_bits;
		e->epoch_ms = strcmp(name, HWM_OVERFLOW) == 0 ? 0 : epoch_ms;
		e->floor = overflow->floor;
		e->shared_floor = overflow->floor;
		e->epoch_later = false;
		pg_atomic_write_u64(&e->mark, (uint64) overflow->floor);
		pg_atomic_write_u64(&e->requested, 0);
		pg_atomic_write_u64(&e->retired, 0);
		pg_atomic_write_u64(&e->confirmed, 0);
		hwm->used++;
		hwm->end = Max(hwm->end, i + 1);
		return e;
	}
	return NULL;
}

/*
 * Frees an entry whose mark another one now holds: only at startup.  Its
 * marks are cleared, so that the writer, which reads them without the
 * lock, finds nothing to confirm there.
 */
static void
hwm_remove(HwmEntry *e)
{
	memset(e->name, 0, NAMEDATALEN);
	pg_atomic_write_u64(&e->mark, 0);
	pg_atomic_write_u64(&e->requested, 0);
	pg_atomic_write_u64(&e->retired, 0);
	pg_atomic_write_u64(&e->confirmed, 0);
	hwm->used--;
}

static HwmEntry *
hwm_find_or_add(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	HwmEntry   *e = hwm_find(name, node, node_bits);

	return e ? e : hwm_add(name, epoch_ms, node, node_bits, anywhere);
}

/*
 * Raises e's mark and floor to at least mark, counted from epoch_ms.  The
 * overflow marks serve layouts of any epoch, so they keep Unix milliseconds
 * as they are.
 */
static void
hwm_merge(HwmEntry *e, int64 epoch_ms, int64 mark)
{
	if (!hwm_is_overflow(e))
		mark = hwm_convert(mark, epoch_ms, e->epoch_ms);
	e->floor = Max(e->floor, mark);
	if (mark > (int64) pg_atomic_read_u64(&e->mark))
		pg_atomic_write_u64(&e->mark, (uint64) mark);
}

/* Counts a mark that found no entry of its own, and logs the first one. */
static void
hwm_note_full(const char *name, int node, const HwmEntry *shared)
{
	hwm->overflows++;
	hwm->last_overflow = GetCurrentTimestamp();
	if (hwm->full_warned)
		return;
	hwm->full_warned = true;
	ereport(WARNING,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("table of idgen high-water marks is full"),
			 errdetail("The mark of layout \"%s\" for %s is kept in a mark it shares (\"%s\" for %s), which holds back every layout it binds until the clock passes it; IDs stay unique.",
					   name,
					   node == HWM_ANY_NODE ? "every node id" : psprintf("node id %d", node),
					   shared->name,
					   shared->node == HWM_ANY_NODE ? "every node id" : psprintf("node id %d", shared->node)),
			 errhint("Raise %s and restart the server; the table has %d entries.",
					 "idgen.max_marks", hwm->capacity)));
}

/*
 * Where a mark that found the table full is kept, binding every layout,
 * node id, node_bits and epoch it did (the header comment says which).
 */
static HwmEntry *
hwm_entry_shared(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	HwmEntry   *e;

	if (hwm_is_default(name))
	{
		e = hwm_find_or_add(name, epoch_ms, HWM_ANY_NODE, 0, anywhere);
		/* HWM_RESERVED keeps room for it. */
		if (e == NULL)
			elog(ERROR, "idgen: no room for the mark of layout \"%s\" of every node id", name);
	}
	else
	{
		e = NULL;
		if (node != HWM_ANY_NODE)
			e = hwm_find_or_add(HWM_OVERFLOW, 0, node, node_bits, anywhere);
		if (e == NULL)
			e = hwm_overflow();
	}
	hwm_note_full(name, node, e);
	return e;
}

/*
 * The entry of a layout and node id, added if need be; a shared one when
 * the table is full.
 */
static HwmEntry *
hwm_entry(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	HwmEntry   *e = hwm_find_or_add(name, epoch_ms, node, node_bits, anywhere);

	return e ? e : hwm_entry_shared(name, epoch_ms, node, node_bits, anywhere);
}

/*
 * Can IDs below other's mark equal IDs that a node id, under node_bits,
 * makes in layout name?  Overflow marks stand for every layout.
 */
static bool
hwm_binds(const HwmEntry *other, const char *name, int node, int node_bits)
{
	return other->name[0] != '\0' &&
		(hwm_is_overflow(other) || strcmp(other->name, name) == 0) &&
		(other->node == HWM_ANY_NODE || other->node == node || other->node_bits != node_bits);
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
hwm_entry_named(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	if (strcmp(name, HWM_OVERFLOW) == 0 && node == HWM_ANY_NODE)
		return hwm_overflow();
	return hwm_entry(name, epoch_ms, node, node_bits, anywhere);
}

/* A line of the file, at startup. */
static void
hwm_load_mark(const char *name, int64 epoch_ms, int64 mark, int node, int node_bits)
{
	hwm_merge(hwm_entry_named(name, epoch_ms, node, node_bits, true), epoch_ms, mark);
}

StaticAssertDecl(HWM_ANY_NODE == HWM_FILE_ANY_NODE, "marks of every node id are written as such");

/*
 * Loads the file's marks, and hands its comment lines to their owner;
 * false, with why in detail, when it is unreadable.
 */
static bool
hwm_load_file(char *detail, Size detail_size, bool *found)
{
	HwmFileMark *marks;
	int			nmarks;

	if (!hwm_file_read(&marks, &nmarks, hwm_client->load_line, detail, detail_size, found))
		return false;
	for (int i = 0; i < nmarks; i++)
		hwm_load_mark(marks[i].name, marks[i].epoch_ms, marks[i].mark, marks[i].node,
					  marks[i].node_bits);
	pfree(marks);
	return true;
}

/*
 * Makes the marks durable in the file (marks[i] for the table's entry i,
 * or, with NULL, the entries' own), after the client's comment line.  Marks of 0
 * bind nothing and are left out, but for the overflow mark of every node
 * id, always the first line.  The caller holds hwm->lock, or runs at
 * startup.
 */
static void
hwm_write(const int64 *marks)
{
	HwmFileMark *lines = palloc(Max(hwm->end, 1) * sizeof(HwmFileMark));
	int			n = 0;
	StringInfoData comments;

	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		int64		mark = marks ? marks[i] : hwm_mark(e);

		if (e->name[0] == '\0' || (i > 0 && mark <= 0))
			continue;
		strlcpy(lines[n].name, e->name, NAMEDATALEN);
		lines[n].epoch_ms = e->epoch_ms;
		lines[n].mark = mark;
		lines[n].node = e->node;
		lines[n].node_bits = e->node_bits;
		n++;
	}
	initStringInfo(&comments);
	hwm_client->write_line(&comments);
	hwm_file_write(lines, n, comments.data);
	pfree(comments.data);
	pfree(lines);
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
	if (layout == layout_default())
		hwm->default_epoch_read = e->epoch_ms;
	e->floor = hwm_convert(e->floor, e->epoch_ms, layout->epoch_ms);
	e->shared_floor = hwm_convert(e->shared_floor, e->epoch_ms, layout->epoch_ms);
	pg_atomic_write_u64(&e->mark, (uint64) hwm_convert((int64) pg_atomic_read_u64(&e->mark),
													   e->epoch_ms, layout->epoch_ms));
	e->epoch_ms = layout->epoch_ms;
}

/*
 * Marks of built-in layouts move with their epochs (only the default
 * layout's can change).  Then marks the clock has passed protect nothing
 * that a mark of every node id cannot, so they are folded: the default
 * layout's into its mark of every node id, which moves with the epoch, the
 * others' into the overflow mark, keeping the table for the marks that
 * matter.
 */
static void
hwm_arrange_entries(void)
{
	int64		now = clock_now_ms();
	const IdgenLayout *def = layout_default();

	for (int i = 1; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		const IdgenLayout *builtin = layout_builtin(e->name);

		if (e->name[0] != '\0' && builtin != NULL)
			hwm_move_epoch(e, builtin);
	}
	for (int i = 1; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		HwmEntry   *into;

		if (e->name[0] == '\0' || (int64) pg_atomic_read_u64(&e->mark) > now)
			continue;
		if (!hwm_is_default(e->name))
			into = hwm_overflow();
		else if (e->node == HWM_ANY_NODE)
			continue;
		else
			into = hwm_find_or_add(def->name, def->epoch_ms, HWM_ANY_NODE, 0, true);
		hwm_merge(into, e->epoch_ms, (int64) pg_atomic_read_u64(&e->mark));
		into->epoch_later |= e->epoch_later;
		hwm_remove(e);
	}
}

/*
 * Runs in the postmaster at startup and after every crash reinitialisation.
 * The file is written at once when it was missing, so that a directory that
 * ran idgen always has one (provenance.c tells a lost file by that).
 * The file's client registered before (idgen.c calls it first).
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
		memset(hwm, 0, hwm_shmem_size());
		hwm->lock = &(GetNamedLWLockTranche("idgen mark"))[0].lock;
		hwm->capacity = hwm_entries();
		for (int i = 0; i < hwm->capacity; i++)
		{
			pg_atomic_init_u64(&hwm->entries[i].mark, 0);
			pg_atomic_init_u64(&hwm->entries[i].requested, 0);
			pg_atomic_init_u64(&hwm->entries[i].retired, 0);
			pg_atomic_init_u64(&hwm->entries[i].confirmed, 0);
		}
		ConditionVariableInit(&hwm->confirmed_cv);
		strlcpy(hwm_overflow()->name, HWM_OVERFLOW, NAMEDATALEN);
		hwm_overflow()->node = HWM_ANY_NODE;
		hwm->used = hwm->end = 1;
		hwm->default_epoch_read = PG_INT64_MIN;
		pg_atomic_init_u64(&hwm->logged_lsn, 0);
		if (hwm_load_file(detail, sizeof(detail), &file_found))
		{
			hwm_arrange_entries();
			if (hwm_client->settle(file_found))
				hwm_write(NULL);
		}
		else
		{
			/* generation refuses for the file, which is left as it is */
			hwm_set_corrupt(detail);
			(void) hwm_client->settle(true);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

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
	e = hwm_entry(layout->name, layout->epoch_ms, idgen_node_id, idgen_node_bits, false);
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *other = &hwm->entries[i];
		int64		bound;

		if (other == e || !hwm_binds(other, layout->name, idgen_node_id, idgen_node_bits))
			continue;
		bound = Max(other->floor, hwm_mark(other));
		/* what holds back a node id new to the layout too */
		if (other->node == HWM_ANY_NODE || other->node_bits != idgen_node_bits)
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
	return e->node == HWM_ANY_NODE ? e->floor : e->shared_floor;
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
 * The epoch the file counted the default layout's marks from, when
 * idgen.epoch has changed since; PG_INT64_MIN otherwise.
 */
int64
hwm_default_epoch_read(void)
{
	return hwm->default_epoch_read;
}

/*
 * At startup, after the file: every node id's IDs of the default layout
 * stay above mark, counted from epoch_ms.  horizon.c passes the mark under
 * which it returned its horizons when idgen.epoch has moved later since, so
 * that they still hold in the new epoch's numbers, and the floor this
 * returned before, which a lost idgen_hwm would otherwise forget.  Returns
 * the floor the default layout's IDs of every node id start above, in Unix
 * ms counted from the current epoch: the horizon may stand there.
 */
int64
hwm_bind_default_layout(int64 epoch_ms, int64 mark)
{
	const IdgenLayout *def = layout_default();
	HwmEntry   *e;

	if (hwm->corrupt)
		return 0;
	e = hwm_find(def->name, HWM_ANY_NODE, 0);
	if (mark > 0)
	{
		if (e == NULL)
			e = hwm_entry(def->name, def->epoch_ms, HWM_ANY_NODE, 0, true);
		if (hwm_convert(mark, epoch_ms, e->epoch_ms) > e->floor)
		{
			hwm_merge(e, epoch_ms, mark);
			e->epoch_later = true;
			hwm_write(NULL);
		}
	}
	return e ? e->floor : 0;
}

/*
 * Logs e's mark: a mark of every node id in the record standbys of every
 * version read, one of a node id in the record of 1.3 and later.  Returns
 * the record's end for the caller to flush.
 */
static XLogRecPtr
hwm_log_mark(const HwmEntry *e, int64 mark_ms)
{
	xl_idgen_mark rec = {0};
	xl_idgen_mark_node nrec = {0};

	XLogBeginInsert();
	if (e->node != HWM_ANY_NODE)
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
static void
hwm_logged(XLogRecPtr end)
{
	pg_atomic_write_u64(&hwm->logged_lsn, (uint64) end);
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
hwm_confirmable_lsn(void)
{
	XLogRecPtr	end = InvalidXLogRecPtr;

	pg_read_barrier();
	if (pg_atomic_read_u64(&hwm->logged_lsn) != 0 || hwm->corrupt)
		return (XLogRecPtr) pg_atomic_read_u64(&hwm->logged_lsn);
	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	for (int i = 0; i < hwm->end && pg_atomic_read_u64(&hwm->logged_lsn) == 0; i++)
	{
		HwmEntry   *e = &hwm->entries[i];

		if (e->name[0] != '\0' && hwm_mark(e) > 0)
			end = hwm_log_mark(e, hwm_mark(e));
	}
	if (end != InvalidXLogRecPtr)
	{
		XLogFlush(end);
		hwm_logged(end);
	}
	LWLockRelease(hwm->lock);
	return (XLogRecPtr) pg_atomic_read_u64(&hwm->logged_lsn);
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

/*
 * Raises every mark, the overflow mark too, past ms, and writes the file
 * even when none moved, with what the file's client puts in it.
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
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		uint64		requested = pg_atomic_read_u64(&e->requested);

		while (e->name[0] != '\0' && requested < (uint64) ms &&
			   !pg_atomic_compare_exchange_u64(&e->requested, &requested, (uint64) ms))
			;
	}
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
			high = Max(high, Max(e->floor, hwm_mark(e)));
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
	if (ms > hwm_mark(e) || ms > e->floor)
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

/* The table's row of idgen_capacity. */
void
hwm_capacity(IdgenCapacity *row)
{
	settings_require_preloaded(hwm != NULL);
	row->name = "marks";
	row->setting = "idgen.max_marks";
	LWLockAcquire(hwm->lock, LW_SHARED);
	row->capacity = hwm->capacity;
	row->in_use = hwm->used;
	row->overflows = hwm->overflows;
	row->last_overflow = hwm->last_overflow;
	LWLockRelease(hwm->lock);
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

	LWLockAcquire(hwm->lock, LW_EXCLUSIVE);
	e = hwm_entry_named(layout, epoch_ms, node, node_bits, false);
	if (!hwm_is_overflow(e))
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
		hwm_write(NULL);
	}
	LWLockRelease(hwm->lock);
}
