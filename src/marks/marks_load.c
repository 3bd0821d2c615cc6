/*
 * marks_load.c
 *		High-water marks at startup: the file idgen_hwm loaded into the table
 *		and written from it, marks moved with their layouts' epochs, and the
 *		default layout bound for the horizon (horizon_file.c).
 *
 * At startup, marks the clock has passed are folded, the default layout's
 * into its mark of every node id and the others' into "*", so the table
 * holds only marks that matter.  The file's comment lines belong to its
 * client (provenance.c), which registered before the table was made.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "storage/ipc.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout.h"
#include "marks_shared.h"

/* The owner of the file's comment lines (provenance.c), in every process. */
static const MarkFileClient *marks_client = NULL;

void
marks_set_file_client(const MarkFileClient *client)
{
	marks_client = client;
}

static void
marks_set_corrupt(const char *detail)
{
	mark_table->corrupt = true;
	strlcpy(mark_table->corrupt_detail, detail, sizeof(mark_table->corrupt_detail));
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen high-water mark file \"%s\" is unreadable; generating IDs is refused",
					MARKS_FILE),
			 errdetail_internal("%s", detail),
			 errhint("Restore the file, or replace it with the line \"* 0 N\", N being a Unix time in milliseconds later than any issued ID, and restart the server.")));
}

/* A line of the file, at startup. */
static void
marks_load_mark(const char *name, int64 epoch_ms, int64 mark, int node, int node_bits)
{
	marks_merge(marks_entry_named(name, epoch_ms, node, node_bits, true), epoch_ms, mark);
}

StaticAssertDecl(MARKS_ANY_NODE == MARKS_FILE_ANY_NODE, "marks of every node id are written as such");

/*
 * Loads the file's marks, and hands its comment lines to their owner;
 * false, with why in detail, when it is unreadable.
 */
static bool
marks_load_file(char *detail, Size detail_size, bool *found)
{
	MarkFileMark *marks;
	int			nmarks;

	if (!marks_file_read(&marks, &nmarks, marks_client->load_line, detail, detail_size, found))
		return false;
	for (int i = 0; i < nmarks; i++)
		marks_load_mark(marks[i].name, marks[i].epoch_ms, marks[i].mark, marks[i].node,
						marks[i].node_bits);
	pfree(marks);
	return true;
}

/*
 * Makes the marks durable in the file (marks[i] for the table's entry i,
 * or, with NULL, the entries' own), after the client's comment line.
 * Marks of 0 bind nothing and are left out, but for the overflow mark of
 * every node id, always the first line.  The caller holds mark_table->lock, or
 * runs at startup.
 */
void
marks_write(const int64 *marks)
{
	MarkFileMark *lines = palloc(Max(mark_table->end, 1) * sizeof(MarkFileMark));
	int			n = 0;
	StringInfoData comments;

	for (int i = 0; i < mark_table->end; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];
		int64		mark = marks ? marks[i] : marks_value(e);

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
	marks_client->write_line(&comments);
	marks_file_write(lines, n, comments.data);
	pfree(comments.data);
	pfree(lines);
}

/*
 * A built-in layout's epoch changed (idgen.epoch): e's marks move with it.
 * At startup over the file's marks, and at replay over every mark a record
 * adds (marks_xlog.c): a standby running another epoch than its primary's is
 * a server restarted with the epoch changed, and its promotion a startup.
 */
void
marks_move_epoch(MarkEntry *e)
{
	const IdgenLayout *layout = layout_builtin(e->name);

	if (layout == NULL)
		return;					/* a layout defined in SQL keeps its epoch */
	if (e->epoch_ms == layout->epoch_ms)
		return;
	ereport(LOG,
			(errmsg("idgen: the epoch of layout \"%s\" changed from %s to %s since its last IDs",
					layout->name,
					pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(e->epoch_ms))),
					pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout->epoch_ms)))),
			 errdetail("IDs resume above those issued before, counted from the new epoch.")));
	e->epoch_later |= layout->epoch_ms > e->epoch_ms;
	marks_set(&e->floor, marks_convert(marks_read(&e->floor), e->epoch_ms, layout->epoch_ms));
	marks_set(&e->shared_floor,
			  marks_convert(marks_read(&e->shared_floor), e->epoch_ms, layout->epoch_ms));
	pg_atomic_write_u64(&e->mark, (uint64) marks_convert((int64) pg_atomic_read_u64(&e->mark),
														 e->epoch_ms, layout->epoch_ms));
	e->epoch_ms = layout->epoch_ms;
}

/*
 * Marks the clock has passed protect nothing that a mark of every node id
 * cannot, so they are folded: the default layout's into its mark of every
 * node id, which moves with the epoch, the others' into the overflow mark,
 * keeping the table for the marks that matter.  At startup, and under the
 * lock when recovery added marks, before the first entry is attached.
 */
static void
marks_fold_passed(void)
{
	int64		now = clock_now_ms();
	const IdgenLayout *def = layout_default();

	for (int i = 1; i < mark_table->end; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];
		MarkEntry   *into;

		if (e->name[0] == '\0' || (int64) pg_atomic_read_u64(&e->mark) > now)
			continue;
		if (!marks_is_default(e->name))
			into = marks_overflow();
		else if (e->node == MARKS_ANY_NODE)
			continue;
		else
			into = marks_find_or_add(def->name, def->epoch_ms, MARKS_ANY_NODE, 0, true);
		marks_merge(into, e->epoch_ms, (int64) pg_atomic_read_u64(&e->mark));
		into->epoch_later |= e->epoch_later;
		marks_remove(e);
	}
}

/*
 * Under the lock, where a backend attaches an entry: a promoted standby
 * holds every mark it replayed, its primary's passed ones too, so its
 * promotion folds them as a startup does, before the first ID, and a table
 * that held all the primary's marks leaves room for new ones.  Replay
 * already moved them with their epochs (marks_redo_mark).
 */
void
marks_fold_replayed(void)
{
	if (likely(!mark_table->replayed))
		return;
	marks_fold_passed();
	mark_table->replayed = false;
}

/*
 * Marks of built-in layouts move with their epochs (only the default
 * layout's can change); then passed marks are folded.
 */
static void
marks_arrange_entries(void)
{
	const IdgenLayout *def = layout_default();

	for (int i = 1; i < mark_table->end; i++)
	{
		MarkEntry   *e = &mark_table->entries[i];

		if (e->name[0] == '\0')
			continue;
		if (marks_is_default(e->name) && e->epoch_ms != def->epoch_ms)
			mark_table->default_epoch_read = e->epoch_ms;
		marks_move_epoch(e);
	}
	marks_fold_passed();
}

/*
 * At startup, once the table is made: the file's marks loaded, arranged
 * and, when the client asks, written back.  The file is written at once
 * when it was missing, so that a directory that ran idgen always has one
 * (provenance.c tells a lost file by that).
 */
static void
marks_load(void)
{
	bool		file_found;
	char		detail[sizeof(mark_table->corrupt_detail)];

	if (marks_load_file(detail, sizeof(detail), &file_found))
	{
		marks_arrange_entries();
		if (marks_client->settle(file_found))
			marks_write(NULL);
	}
	else
	{
		/* generation refuses for the file, which is left as it is */
		marks_set_corrupt(detail);
		(void) marks_client->settle(true);
	}
}

/*
 * idgen.c's shared memory hook, under AddinShmemInitLock: in the postmaster
 * at startup and after every crash reinitialisation, and in every process
 * that attaches (EXEC_BACKEND).  The file's client registered before
 * (idgen.c places provenance first).
 */
void
marks_shmem_init(void *at, bool found)
{
	if (marks_attach_table(at, found))
		marks_load();
}

/*
 * The epoch the file counted the default layout's marks from, when
 * idgen.epoch has changed since; PG_INT64_MIN otherwise.
 */
int64
marks_default_epoch_read(void)
{
	return mark_table->default_epoch_read;
}

/*
 * At startup, after the file: every node id's IDs of the default layout stay
 * above mark, counted from epoch_ms.  horizon_file.c passes the mark under
 * which it returned its horizons when idgen.epoch has moved later since, so
 * that they still hold in the new epoch's numbers, and the floor this returned
 * before, which a lost idgen_hwm would otherwise forget.  Returns the floor the
 * default layout's IDs of every node id start above, in Unix ms counted from
 * the current epoch: the horizon may stand there.
 */
int64
marks_bind_default_layout(int64 epoch_ms, int64 mark)
{
	const IdgenLayout *def = layout_default();
	MarkEntry   *e;

	if (mark_table->corrupt)
		return 0;
	e = marks_find(def->name, MARKS_ANY_NODE, 0);
	if (mark > 0)
	{
		if (e == NULL)
			e = marks_entry(def->name, def->epoch_ms, MARKS_ANY_NODE, 0, true);
		if (marks_convert(mark, epoch_ms, e->epoch_ms) > marks_read(&e->floor))
		{
			marks_merge(e, epoch_ms, mark);
			/* refused until the clock passes it, with the reason; else led */
			if (epoch_ms < def->epoch_ms)
				e->epoch_later = true;
			marks_write(NULL);
		}
	}
	return e ? marks_read(&e->floor) : 0;
}
