/*
 * hwm_load.c
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
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout.h"
#include "hwm_shared.h"

/* The owner of the file's comment lines (provenance.c), in every process. */
static const HwmFileClient *hwm_client = NULL;

void
hwm_set_file_client(const HwmFileClient *client)
{
	hwm_client = client;
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
			 errdetail_internal("%s", detail),
			 errhint("Restore the file, or replace it with the line \"* 0 N\", N being a Unix time in milliseconds later than any issued ID, and restart the server.")));
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
 * or, with NULL, the entries' own), after the client's comment line.
 * Marks of 0 bind nothing and are left out, but for the overflow mark of
 * every node id, always the first line.  The caller holds hwm->lock, or
 * runs at startup.
 */
void
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

/*
 * A built-in layout's epoch changed (idgen.epoch): e's marks move with it.
 * At startup over the file's marks, and at replay over every mark a record
 * adds (hwm_xlog.c): a standby running another epoch than its primary's is
 * a server restarted with the epoch changed, and its promotion a startup.
 */
void
hwm_move_epoch(HwmEntry *e)
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
	hwm_set(&e->floor, hwm_convert(hwm_read(&e->floor), e->epoch_ms, layout->epoch_ms));
	hwm_set(&e->shared_floor,
			hwm_convert(hwm_read(&e->shared_floor), e->epoch_ms, layout->epoch_ms));
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

		if (e->name[0] == '\0')
			continue;
		if (hwm_is_default(e->name) && e->epoch_ms != def->epoch_ms)
			hwm->default_epoch_read = e->epoch_ms;
		hwm_move_epoch(e);
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
 * At startup, once the table is made: the file's marks loaded, arranged
 * and, when the client asks, written back.  The file is written at once
 * when it was missing, so that a directory that ran idgen always has one
 * (provenance.c tells a lost file by that).
 */
static void
hwm_load(void)
{
	bool		file_found;
	char		detail[sizeof(hwm->corrupt_detail)];

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

/*
 * Runs in the postmaster at startup and after every crash reinitialisation,
 * and in every process that attaches (EXEC_BACKEND).  The file's client
 * registered before (idgen.c calls it first).
 */
void
hwm_shmem_startup(void)
{
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	if (hwm_attach_table())
		hwm_load();
	LWLockRelease(AddinShmemInitLock);
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
 * At startup, after the file: every node id's IDs of the default layout stay
 * above mark, counted from epoch_ms.  horizon_file.c passes the mark under
 * which it returned its horizons when idgen.epoch has moved later since, so
 * that they still hold in the new epoch's numbers, and the floor this returned
 * before, which a lost idgen_hwm would otherwise forget.  Returns the floor the
 * default layout's IDs of every node id start above, in Unix ms counted from
 * the current epoch: the horizon may stand there.
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
		if (hwm_convert(mark, epoch_ms, e->epoch_ms) > hwm_read(&e->floor))
		{
			hwm_merge(e, epoch_ms, mark);
			/* refused until the clock passes it, with the reason; else led */
			if (epoch_ms < def->epoch_ms)
				e->epoch_later = true;
			hwm_write(NULL);
		}
	}
	return e ? hwm_read(&e->floor) : 0;
}
