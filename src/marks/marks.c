/*
 * marks.c
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
 * room for them (MARKS_RESERVED).  Overflow marks never hold the default
 * layout's marks, so they need not move with an epoch.  An overflow mark
 * that layouts generate in starts above every mark that binds any of them,
 * as their own entries would.
 *
 * This file keeps the table and its entries.  Loading and writing the
 * file at startup and moving marks with their epochs are marks_load.c's,
 * reserving and raising marks marks_reserve.c's, their WAL records and redo
 * marks_xlog.c's; the file format is marks_file.c's, the writer marks_writer.c's,
 * the dispatch of redo rmgr.c's.
 * Locking, field by field, is in marks_shared.h.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "base/layout.h"
#include "base/node.h"
#include "base/settings.h"
#include "marks_shared.h"

MarkShared  *mark_table = NULL;

/* Entries of the table, fixed when the postmaster first asks for it. */
static int	marks_nentries = 0;

/*
 * idgen.max_marks, or room for every line of the file and the marks this
 * server's node id may need, when the file has more lines (the setting was
 * lowered, or the file comes from a server that kept more), up to the
 * setting's maximum: a file of garbage must not take the memory.
 */
static int
marks_entries(void)
{
	if (marks_nentries == 0)
		marks_nentries = Max(idgen_max_marks,
							 Min(marks_file_lines() + 1 + MARKS_RESERVED, SETTINGS_MAX_MAX_MARKS));
	return marks_nentries;
}

Size
marks_shmem_size(void)
{
	return MAXALIGN(add_size(offsetof(MarkShared, entries),
							 mul_size(marks_entries(), sizeof(MarkEntry))));
}

void
marks_shmem_request(void)
{
	RequestNamedLWLockTranche("idgen mark", 1);
}

int64
marks_value(MarkEntry *e)
{
	return (int64) pg_atomic_read_u64(&e->mark);
}

bool
marks_is_default(const char *name)
{
	return layout_builtin(name) == layout_default();
}

MarkEntry *
marks_find(const char *name, int node, int node_bits)
{
	for (int i = 0; i < mark_table->end; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];

		if (strcmp(e->name, name) == 0 && e->node == node &&
			(node == MARKS_ANY_NODE || e->node_bits == node_bits))
			return e;
	}
	return NULL;
}

/* Is this one of the marks other marks leave room for (MARKS_RESERVED)? */
static bool
marks_reserved(const char *name, int node, int node_bits)
{
	if (marks_is_default(name) && node == MARKS_ANY_NODE)
		return true;
	return node == node_id() && node_bits == idgen_node_bits &&
		(marks_is_default(name) || strcmp(name, MARKS_OVERFLOW) == 0);
}

/*
 * A new entry starting at the overflow floor, or NULL when the table is
 * full.  At startup (anywhere) a mark may take any free entry, as the table
 * has room for the whole file; later, marks that are not reserved leave
 * MARKS_RESERVED entries free.
 */
static MarkEntry *
marks_add(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	MarkEntry   *overflow = marks_overflow();

	if (mark_table->used >= mark_table->capacity ||
		(!anywhere && mark_table->used >= mark_table->capacity - MARKS_RESERVED &&
		 !marks_reserved(name, node, node_bits)))
		return NULL;
	for (int i = 1; i < mark_table->capacity; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];

		if (e->name[0] != '\0')
			continue;
		strlcpy(e->name, name, NAMEDATALEN);
		e->node = node;
		e->node_bits = node == MARKS_ANY_NODE ? 0 : node_bits;
		e->epoch_ms = strcmp(name, MARKS_OVERFLOW) == 0 ? 0 : epoch_ms;
		marks_set(&e->floor, marks_read(&overflow->floor));
		marks_set(&e->shared_floor, marks_read(&overflow->floor));
		e->epoch_later = false;
		pg_atomic_write_u64(&e->mark, (uint64) marks_read(&overflow->floor));
		pg_atomic_write_u64(&e->requested, 0);
		pg_atomic_write_u64(&e->retired, 0);
		pg_atomic_write_u64(&e->confirmed, 0);
		mark_table->used++;
		mark_table->end = Max(mark_table->end, i + 1);
		return e;
	}
	return NULL;
}

/*
 * Frees an entry whose mark another one now holds: only at startup.  Its
 * marks are cleared, so that the writer, which reads them without the
 * lock, finds nothing to confirm there.
 */
void
marks_remove(MarkEntry *e)
{
	memset(e->name, 0, NAMEDATALEN);
	pg_atomic_write_u64(&e->mark, 0);
	pg_atomic_write_u64(&e->requested, 0);
	pg_atomic_write_u64(&e->retired, 0);
	pg_atomic_write_u64(&e->confirmed, 0);
	mark_table->used--;
}

MarkEntry *
marks_find_or_add(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	MarkEntry   *e = marks_find(name, node, node_bits);

	return e ? e : marks_add(name, epoch_ms, node, node_bits, anywhere);
}

/*
 * Raises e's mark and floor to at least mark, counted from epoch_ms.  The
 * overflow marks serve layouts of any epoch, so they keep Unix milliseconds
 * as they are.
 */
void
marks_merge(MarkEntry *e, int64 epoch_ms, int64 mark)
{
	if (!marks_is_overflow(e))
		mark = marks_convert(mark, epoch_ms, e->epoch_ms);
	marks_set(&e->floor, Max(marks_read(&e->floor), mark));
	if (mark > (int64) pg_atomic_read_u64(&e->mark))
		pg_atomic_write_u64(&e->mark, (uint64) mark);
}

/* Counts a mark that found no entry of its own, and logs the first one. */
static void
marks_note_full(const char *name, int node, const MarkEntry *shared)
{
	mark_table->overflows++;
	mark_table->last_overflow = GetCurrentTimestamp();
	if (mark_table->full_warned)
		return;
	mark_table->full_warned = true;
	ereport(WARNING,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("table of idgen high-water marks is full"),
			 errdetail("The mark of layout \"%s\" for %s is kept in a mark it shares (\"%s\" for %s), which holds back every layout it binds until the clock passes it; IDs stay unique.",
					   name,
					   node == MARKS_ANY_NODE ? "every node id" : psprintf("node id %d", node),
					   shared->name,
					   shared->node == MARKS_ANY_NODE ? "every node id" : psprintf("node id %d", shared->node)),
			 errhint("Raise %s and restart the server; the table has %d entries.",
					 "idgen.max_marks", mark_table->capacity)));
}

/*
 * Where a mark that found the table full is kept, binding every layout,
 * node id, node_bits and epoch it did (the header comment says which).
 */
static MarkEntry *
marks_entry_shared(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	MarkEntry   *e;

	if (marks_is_default(name))
	{
		e = marks_find_or_add(name, epoch_ms, MARKS_ANY_NODE, 0, anywhere);
		/* MARKS_RESERVED keeps room for it. */
		if (e == NULL)
			elog(ERROR, "idgen: no room for the mark of layout \"%s\" of every node id", name);
	}
	else
	{
		e = NULL;
		if (node != MARKS_ANY_NODE)
			e = marks_find_or_add(MARKS_OVERFLOW, 0, node, node_bits, anywhere);
		if (e == NULL)
			e = marks_overflow();
	}
	marks_note_full(name, node, e);
	return e;
}

/*
 * The entry of a layout and node id, added if need be; a shared one when
 * the table is full.
 */
MarkEntry *
marks_entry(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	MarkEntry   *e = marks_find_or_add(name, epoch_ms, node, node_bits, anywhere);

	return e ? e : marks_entry_shared(name, epoch_ms, node, node_bits, anywhere);
}

/*
 * Can IDs below other's mark equal IDs that a node id, under node_bits,
 * makes in layout name?  Overflow marks stand for every layout.
 */
bool
marks_binds(const MarkEntry *other, const char *name, int node, int node_bits)
{
	return other->name[0] != '\0' &&
		(marks_is_overflow(other) || strcmp(other->name, name) == 0) &&
		(other->node == MARKS_ANY_NODE || other->node == node || other->node_bits != node_bits);
}

/* The entry a mark read from the file or the WAL belongs to. */
MarkEntry *
marks_entry_named(const char *name, int64 epoch_ms, int node, int node_bits, bool anywhere)
{
	if (strcmp(name, MARKS_OVERFLOW) == 0 && node == MARKS_ANY_NODE)
		return marks_overflow();
	return marks_entry(name, epoch_ms, node, node_bits, anywhere);
}

/*
 * Attaches the table at, under AddinShmemInitLock; true when this made it,
 * and the marks are still to be loaded (marks_shmem_init).
 */
bool
marks_attach_table(void *at, bool found)
{
	mark_table = at;
	if (!found)
	{
		memset(mark_table, 0, marks_shmem_size());
		mark_table->lock = &(GetNamedLWLockTranche("idgen mark"))[0].lock;
		mark_table->capacity = marks_entries();
		for (int i = 0; i < mark_table->capacity; i++)
		{
			pg_atomic_init_u64(&mark_table->entries[i].mark, 0);
			pg_atomic_init_u64(&mark_table->entries[i].requested, 0);
			pg_atomic_init_u64(&mark_table->entries[i].retired, 0);
			pg_atomic_init_u64(&mark_table->entries[i].confirmed, 0);
			pg_atomic_init_u64(&mark_table->entries[i].floor, 0);
			pg_atomic_init_u64(&mark_table->entries[i].shared_floor, 0);
		}
		ConditionVariableInit(&mark_table->confirmed_cv);
		strlcpy(marks_overflow()->name, MARKS_OVERFLOW, NAMEDATALEN);
		marks_overflow()->node = MARKS_ANY_NODE;
		mark_table->used = mark_table->end = 1;
		mark_table->default_epoch_read = PG_INT64_MIN;
		pg_atomic_init_u64(&mark_table->logged_lsn, 0);
	}
	return !found;
}

/* The table's row of idgen_capacity. */
void
marks_capacity(IdgenCapacity *row)
{
	settings_require_preloaded(mark_table != NULL);
	row->name = "marks";
	row->setting = "idgen.max_marks";
	LWLockAcquire(mark_table->lock, LW_SHARED);
	row->capacity = mark_table->capacity;
	row->in_use = mark_table->used;
	row->overflows = mark_table->overflows;
	row->last_overflow = mark_table->last_overflow;
	LWLockRelease(mark_table->lock);
}
