/*
 * layout_defs.c
 *		Layouts defined in SQL: kept as rows of the extension's table
 *		idgen_layout, so that pg_dump keeps them (the table is a configuration
 *		table), checked by a trigger on every change however it is made
 *		(layout_defs_change.c), and cached in each backend until the table
 *		changes.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "common/int.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/layout.h"
#include "layout_defs.h"

typedef struct LayoutDefEntry
{
	char		name[NAMEDATALEN];	/* hash key */
	bool		valid;			/* false once the table has changed */
	IdgenLayout layout;
} LayoutDefEntry;

/*
 * Layouts that exist, by name; names that do not are not kept.  Entries are
 * never removed, so a layout pointer handed out stays valid.
 */
static HTAB *layout_defs_cache = NULL;
static Oid	layout_defs_relid = InvalidOid;
static void (*layout_defs_change_hook) (void) = NULL;

static void
layout_defs_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	LayoutDefEntry *entry;

	if (relid != InvalidOid && relid != layout_defs_relid)
		return;
	layout_defs_relid = InvalidOid; /* the extension may have been dropped */
	hash_seq_init(&status, layout_defs_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->valid = false;
	if (layout_defs_change_hook != NULL)
		layout_defs_change_hook();
}

/*
 * hook runs whenever this backend sees the table change, so that what was
 * made from a definition (layout_gen.c's plans, with fields packed under
 * it) is made again.  Its owner sits above this file and registers here, so
 * that calls go one way.
 */
void
layout_defs_set_change_hook(void (*hook) (void))
{
	layout_defs_change_hook = hook;
}

static void
layout_defs_init_cache(void)
{
	HASHCTL		ctl;

	if (layout_defs_cache != NULL)
		return;
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(LayoutDefEntry);
	layout_defs_cache = hash_create("idgen layouts", 16, &ctl, HASH_ELEM | HASH_STRINGS);
	CacheRegisterRelcacheCallback(layout_defs_invalidate, (Datum) 0);
}

/*
 * The table in the extension's schema, without SQL, so that nothing in the
 * caller's search_path takes part; InvalidOid when this version of idgen
 * has none.
 */
Oid
layout_defs_table(void)
{
	Oid			ext;

	layout_defs_init_cache();
	if (OidIsValid(layout_defs_relid))
		return layout_defs_relid;
	ext = get_extension_oid("idgen", true);
	if (OidIsValid(ext))
		layout_defs_relid = get_relname_relid(LAYOUT_DEFS_TABLE, get_extension_schema(ext));
	return layout_defs_relid;
}

static void
layout_defs_altered(const char *column)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table %s of extension idgen has been altered", LAYOUT_DEFS_TABLE),
			 errdetail("Its column \"%s\" is missing or of another type.", column),
			 errhint("Recreate the extension's objects with DROP EXTENSION and CREATE EXTENSION after saving the layouts.")));
}

/* A column by name, checked to be of the type idgen created it with. */
static AttrNumber
layout_defs_attnum(TupleDesc desc, const char *column, Oid type)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), column) == 0)
		{
			if (att->atttypid != type)
				layout_defs_altered(column);
			return att->attnum;
		}
	}
	layout_defs_altered(column);
	return InvalidAttrNumber;	/* keep compiler quiet */
}

static Datum
layout_defs_column(HeapTuple tuple, TupleDesc desc, const char *column, Oid type, bool *isnull)
{
	return heap_getattr(tuple, layout_defs_attnum(desc, column, type), desc, isnull);
}

static int64
layout_defs_interval_ms(const char *name, Interval *unit)
{
	int64		usecs;

	if (unit->month != 0 ||
		pg_mul_s64_overflow(unit->day, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, unit->time, &usecs) ||
		usecs % 1000 != 0)
		layout_invalid(name, "The time unit must be a whole number of milliseconds from 1 millisecond to 1 second, without months.", NULL);
	return usecs / 1000;
}

/* The elements of a one-dimensional array column, none NULL. */
static int
layout_defs_array(const char *name, Datum d, Oid elemtype, Datum **elems)
{
	ArrayType  *array = DatumGetArrayTypeP(d);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	bool	   *nulls;
	int			n;

	if (ARR_NDIM(array) > 1)
		layout_invalid(name, "Its fields and widths must be one-dimensional arrays.", NULL);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(array, elemtype, typlen, typbyval, typalign, elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (nulls[i])
			layout_invalid(name, "Its fields and widths must not contain NULL.", NULL);
	return n;
}

/*
 * A row as a layout, checked by layout_build().  Returns false when a column
 * is NULL: the table's NOT NULL constraints report that.
 */
bool
layout_defs_row_to_layout(HeapTuple tuple, TupleDesc desc, IdgenLayout *layout, char **name)
{
	bool		nulls[6];
	Datum		name_d = layout_defs_column(tuple, desc, "name", TEXTOID, &nulls[0]);
	Datum		epoch_d = layout_defs_column(tuple, desc, "epoch", TIMESTAMPTZOID, &nulls[1]);
	Datum		unit_d = layout_defs_column(tuple, desc, "time_unit", INTERVALOID, &nulls[2]);
	Datum		radix_d = layout_defs_column(tuple, desc, "radix", INT4OID, &nulls[3]);
	Datum		fields_d = layout_defs_column(tuple, desc, "fields", TEXTARRAYOID, &nulls[4]);
	Datum		widths_d = layout_defs_column(tuple, desc, "widths", INT4ARRAYOID, &nulls[5]);
	Datum	   *field_elems;
	Datum	   *width_elems;
	int			nfields;
	int			nwidths;
	const char *field_names[IDGEN_NFIELDS];
	int			widths[IDGEN_NFIELDS];
	TimestampTz epoch;

	for (int i = 0; i < (int) lengthof(nulls); i++)
		if (nulls[i])
			return false;
	*name = TextDatumGetCString(name_d);
	epoch = DatumGetTimestampTz(epoch_d);
	if (TIMESTAMP_NOT_FINITE(epoch) || epoch % 1000 != 0)
		layout_invalid(*name, "The epoch must be a finite timestamp in whole milliseconds.", NULL);
	nfields = layout_defs_array(*name, fields_d, TEXTOID, &field_elems);
	nwidths = layout_defs_array(*name, widths_d, INT4OID, &width_elems);
	if (nfields != nwidths || nfields > IDGEN_NFIELDS)
		layout_invalid(*name, psprintf("It lists %d fields and %d widths; give one width per field, at most %d fields.",
									   nfields, nwidths, IDGEN_NFIELDS), NULL);
	for (int i = 0; i < nfields; i++)
	{
		field_names[i] = TextDatumGetCString(field_elems[i]);
		widths[i] = DatumGetInt32(width_elems[i]);
	}
	layout_build(layout, *name, clock_timestamptz_to_ms(epoch),
				 layout_defs_interval_ms(*name, DatumGetIntervalP(unit_d)),
				 DatumGetInt32(radix_d), nfields, field_names, widths);
	return true;
}

/* Reads the named layout from the table; false when there is none. */
static bool
layout_defs_load(LayoutDefEntry *entry)
{
	Oid			relid = layout_defs_table();
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		exists = false;
	char	   *name;

	if (!OidIsValid(relid))
		return false;
	rel = table_open(relid, AccessShareLock);
	ScanKeyInit(&key, layout_defs_attnum(RelationGetDescr(rel), "name", TEXTOID),
				BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(entry->name));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		exists = layout_defs_row_to_layout(tuple, RelationGetDescr(rel), &entry->layout, &name);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	entry->layout.name = entry->name;
	entry->valid = true;
	return exists;
}

static const IdgenLayout *
layout_defs_lookup(const char *name)
{
	LayoutDefEntry *entry;
	bool		found;

	if (strlen(name) >= NAMEDATALEN)
		return NULL;
	layout_defs_init_cache();
	entry = hash_search(layout_defs_cache, name, HASH_ENTER, &found);
	if (found && entry->valid)
		return &entry->layout;
	if (!layout_defs_load(entry))
	{
		/* a pointer to it was never handed out, as it did not exist */
		if (!found)
			hash_search(layout_defs_cache, name, HASH_REMOVE, NULL);
		else
			entry->valid = false;
		return NULL;
	}
	return &entry->layout;
}

/*
 * The layout of that name: built in, else defined in SQL; an unknown name is
 * an error that lists the built-in ones.
 */
const IdgenLayout *
layout_defs_resolve(const char *name)
{
	const IdgenLayout *layout = layout_builtin(name);
	StringInfoData names;

	if (layout == NULL)
		layout = layout_defs_lookup(name);
	if (layout != NULL)
		return layout;

	initStringInfo(&names);
	for (int i = 0; (layout = layout_builtin_at(i)) != NULL; i++)
		appendStringInfo(&names, "%s%s", i > 0 ? ", " : "", layout->name);
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("idgen layout \"%s\" does not exist", name),
			 errhint("The built-in layouts are %s; define others with idgen_define_layout().",
					 names.data)));
	return NULL;				/* keep compiler quiet */
}
