/*
 * provenance_table.c
 *		A database's table idgen_system: the clusters whose IDs the database
 *		may hold, with the epoch of their default layout, read without SQL
 *		(the session's role needs no privilege on idgen's own table); and
 *		this cluster's row, added when it is missing.
 *
 * The extension's scripts add the row of the cluster they run in, so a
 * restored dump has it.  pg_upgrade runs no script: it copies the old rows,
 * and the new cluster would be known nowhere, so that its IDs, dumped and
 * restored into the old cluster (a rollback), would be taken for the old
 * cluster's own.  The first backend to generate in such a database adds
 * the row, in its transaction; if that is rolled back, the backend is told
 * (row_lost), so that it adds the row again before its next ID.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "base/clock.h"
#include "base/layout.h"
#include "provenance_table.h"

#define PROVENANCE_TABLE		"idgen_system"
#define PROVENANCE_COLUMNS		3	/* system_identifier, recorded_at, epoch */

/* The (sub)transaction that added this cluster's row, until it commits. */
static SubTransactionId self_added_in = InvalidSubTransactionId;
static void (*row_lost) (void) = NULL;

/*
 * The table of this database, or InvalidOid where there is none (the
 * extension is older than 1.5, or not created in this database).
 */
Oid
provenance_table_oid(void)
{
	Oid			ext = get_extension_oid("idgen", true);

	if (!OidIsValid(ext))
		return InvalidOid;
	return get_relname_relid(PROVENANCE_TABLE, get_extension_schema(ext));
}

static void
provenance_table_row(Relation rel, HeapTuple tuple, ProvenanceRow *row)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;
	Datum		d;

	row->system = (uint64) DatumGetInt64(heap_getattr(tuple, 1, desc, &isnull));
	if (isnull)
		row->system = 0;
	d = heap_getattr(tuple, 2, desc, &isnull);
	row->recorded_at = isnull ? DT_NOBEGIN : DatumGetTimestampTz(d);
	row->epoch_ms = PG_INT64_MIN;
	if (desc->natts >= PROVENANCE_COLUMNS)
	{
		d = heap_getattr(tuple, PROVENANCE_COLUMNS, desc, &isnull);
		if (!isnull)
			row->epoch_ms = clock_timestamptz_to_ms(DatumGetTimestampTz(d));
	}
}

/* The rows of rel, as the latest snapshot sees them (palloc'd). */
static int
provenance_table_scan(Relation rel, ProvenanceRow **rows)
{
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tuple;
	int			n = 0;
	int			size = 4;

	*rows = palloc(size * sizeof(ProvenanceRow));
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		if (n == size)
		{
			size *= 2;
			*rows = repalloc(*rows, size * sizeof(ProvenanceRow));
		}
		provenance_table_row(rel, tuple, &(*rows)[n]);
		if ((*rows)[n].system != 0)
			n++;
	}
	systable_endscan(scan);
	return n;
}

/* The rows of this database's idgen_system; none where there is none. */
int
provenance_table_read(ProvenanceRow **rows)
{
	Oid			relid = provenance_table_oid();
	Relation	rel;
	int			n;

	*rows = NULL;
	if (!OidIsValid(relid))
		return 0;
	rel = table_open(relid, AccessShareLock);
	n = provenance_table_scan(rel, rows);
	table_close(rel, AccessShareLock);
	return n;
}

/*
 * How much later the default layout's epoch is here than the earliest
 * this database's clusters made IDs under (0 when no row says an earlier
 * one): the same time gives their IDs a larger time field by as much.
 */
int64
provenance_table_epoch_lead(void)
{
	ProvenanceRow *rows;
	int			n = provenance_table_read(&rows);
	int64		lead = 0;

	for (int i = 0; i < n; i++)
		if (rows[i].epoch_ms != PG_INT64_MIN)
			lead = Max(lead, layout_default()->epoch_ms - rows[i].epoch_ms);
	if (rows != NULL)
		pfree(rows);
	return lead;
}

/*
 * A prepared transaction counts as committed: waiting for it at the next
 * check would hold generation up behind it.
 */
static void
provenance_table_xact(XactEvent event, void *arg)
{
	if (self_added_in == InvalidSubTransactionId)
		return;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
		self_added_in = InvalidSubTransactionId;
	else if (event == XACT_EVENT_ABORT)
	{
		self_added_in = InvalidSubTransactionId;
		row_lost();
	}
}

static void
provenance_table_subxact(SubXactEvent event, SubTransactionId sub,
						 SubTransactionId parent, void *arg)
{
	if (self_added_in != sub)
		return;
	if (event == SUBXACT_EVENT_COMMIT_SUB)
		self_added_in = parent;
	else if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		self_added_in = InvalidSubTransactionId;
		row_lost();
	}
}

/* Adds this cluster's row to rel, with epoch_ms. */
static void
provenance_table_insert_self(Relation rel, int64 epoch_ms)
{
	Datum		values[PROVENANCE_COLUMNS];
	bool		nulls[PROVENANCE_COLUMNS] = {false};

	values[0] = Int64GetDatum((int64) GetSystemIdentifier());
	values[1] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	values[2] = TimestampTzGetDatum(clock_ms_to_timestamptz(epoch_ms));
	/* idgen's own table: no index, no trigger */
	simple_heap_insert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
	CommandCounterIncrement();
}

/*
 * Whether row records this cluster under epoch_ms, the earliest idgen.epoch
 * of IDs its marks cover (its own under every epoch it ran with, and those
 * it resumed above), or an earlier one.  A row of a later epoch says less
 * than the IDs are, and idgen_resume_after() in a cluster they move to,
 * with this database or without, would resume short of them.
 */
bool
provenance_table_is_self(const ProvenanceRow *row, int64 epoch_ms)
{
	return row->system == GetSystemIdentifier() && row->epoch_ms != PG_INT64_MIN &&
		row->epoch_ms <= epoch_ms;
}

/*
 * Adds this cluster's row unless the table has one (above); lost runs if
 * the transaction that added it is rolled back.  The lock, which conflicts
 * with itself and not with readers, is held to the end of the
 * transaction, so that backends generating at once add one row.
 */
void
provenance_table_record_self(void (*lost) (void), int64 epoch_ms)
{
	static bool callbacks_set = false;
	Oid			relid = provenance_table_oid();
	Relation	rel;
	ProvenanceRow *rows;
	int			n;
	bool		found = false;

	if (!OidIsValid(relid))
		return;
	rel = table_open(relid, ShareRowExclusiveLock);
	n = provenance_table_scan(rel, &rows);
	for (int i = 0; i < n && !found; i++)
		found = provenance_table_is_self(&rows[i], epoch_ms);
	pfree(rows);
	if (!found && RelationGetDescr(rel)->natts >= PROVENANCE_COLUMNS)
	{
		provenance_table_insert_self(rel, epoch_ms);
		if (!callbacks_set)
		{
			RegisterXactCallback(provenance_table_xact, NULL);
			RegisterSubXactCallback(provenance_table_subxact, NULL);
			callbacks_set = true;
		}
		row_lost = lost;
		self_added_in = GetCurrentSubTransactionId();
	}
	table_close(rel, NoLock);
}
