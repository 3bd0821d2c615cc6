/*
 * catalog.c
 *		Layouts defined in SQL: kept as rows of the extension's table
 *		idgen_layout, so that pg_dump keeps them (the table is a configuration
 *		table), checked by a trigger on every change however it is made, and
 *		cached in each backend until the table changes.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "layout.h"

#define CATALOG_TABLE "idgen_layout"

typedef struct CatalogEntry
{
	char		name[NAMEDATALEN];	/* hash key */
	bool		valid;			/* false once the table has changed */
	bool		exists;
	IdgenLayout layout;
} CatalogEntry;

/* Entries are never removed, so a layout pointer handed out stays valid. */
static HTAB *catalog_cache = NULL;
static Oid	catalog_relid = InvalidOid;
static uint64 catalog_changes = 0;

PG_FUNCTION_INFO_V1(idgen_layout_check);
PG_FUNCTION_INFO_V1(idgen_define_layout);
PG_FUNCTION_INFO_V1(idgen_drop_layout);

static void
catalog_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	CatalogEntry *entry;

	if (relid != InvalidOid && relid != catalog_relid)
		return;
	catalog_changes++;
	hash_seq_init(&status, catalog_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->valid = false;
}

/*
 * Counts changes to the table seen by this backend, so that a generator
 * holding fields packed under an older definition can tell.
 */
uint64
catalog_generation(void)
{
	return catalog_changes;
}

static void
catalog_init_cache(void)
{
	HASHCTL		ctl;

	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(CatalogEntry);
	catalog_cache = hash_create("idgen layouts", 16, &ctl, HASH_ELEM | HASH_STRINGS);
	CacheRegisterRelcacheCallback(catalog_invalidate, (Datum) 0);
}

static Datum
catalog_column(HeapTuple tuple, TupleDesc desc, const char *column, bool *isnull)
{
	int			attno = SPI_fnumber(desc, column);

	if (attno <= 0)
		elog(ERROR, "column \"%s\" of table %s is missing", column, CATALOG_TABLE);
	return heap_getattr(tuple, attno, desc, isnull);
}

static int64
catalog_interval_ms(const char *name, Interval *unit)
{
	int64		usecs = unit->day * USECS_PER_DAY + unit->time;

	if (unit->month != 0 || usecs % 1000 != 0)
		layout_invalid(name, "The time unit must be a whole number of milliseconds, without months.", NULL);
	return usecs / 1000;
}

/*
 * A row as a layout, checked by layout_build().  Returns false when a column
 * is NULL: the table's NOT NULL constraints report that.
 */
static bool
catalog_row_to_layout(HeapTuple tuple, TupleDesc desc, IdgenLayout *layout, char **name)
{
	bool		nulls[6];
	Datum		name_d = catalog_column(tuple, desc, "name", &nulls[0]);
	Datum		epoch_d = catalog_column(tuple, desc, "epoch", &nulls[1]);
	Datum		unit_d = catalog_column(tuple, desc, "time_unit", &nulls[2]);
	Datum		radix_d = catalog_column(tuple, desc, "radix", &nulls[3]);
	Datum		fields_d = catalog_column(tuple, desc, "fields", &nulls[4]);
	Datum		widths_d = catalog_column(tuple, desc, "widths", &nulls[5]);
	Datum	   *field_elems;
	Datum	   *width_elems;
	bool	   *field_nulls;
	bool	   *width_nulls;
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
	deconstruct_array(DatumGetArrayTypeP(fields_d), TEXTOID, -1, false, TYPALIGN_INT,
					  &field_elems, &field_nulls, &nfields);
	deconstruct_array(DatumGetArrayTypeP(widths_d), INT4OID, 4, true, TYPALIGN_INT,
					  &width_elems, &width_nulls, &nwidths);
	if (nfields != nwidths || nfields > IDGEN_NFIELDS)
		layout_invalid(*name, psprintf("It lists %d fields and %d widths; give one width per field, at most %d fields.",
									   nfields, nwidths, IDGEN_NFIELDS), NULL);
	for (int i = 0; i < nfields; i++)
	{
		if (field_nulls[i] || width_nulls[i])
			layout_invalid(*name, "Its fields and widths must not contain NULL.", NULL);
		field_names[i] = TextDatumGetCString(field_elems[i]);
		widths[i] = DatumGetInt32(width_elems[i]);
	}
	layout_build(layout, *name, clock_timestamptz_to_ms(epoch),
				 catalog_interval_ms(*name, DatumGetIntervalP(unit_d)),
				 DatumGetInt32(radix_d), nfields, field_names, widths);
	return true;
}

/* The table's qualified name, or NULL when this version of idgen has none. */
static char *
catalog_table_name(void)
{
	Oid			relid;
	bool		isnull;

	if (SPI_execute("SELECT c.oid FROM pg_catalog.pg_extension e"
					" JOIN pg_catalog.pg_class c ON c.relnamespace = e.extnamespace"
					" WHERE e.extname = 'idgen' AND c.relname = '" CATALOG_TABLE "'",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up table %s", CATALOG_TABLE);
	if (SPI_processed == 0)
		return NULL;
	relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										   &isnull));
	catalog_relid = relid;
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  CATALOG_TABLE);
}

static void
catalog_load(CatalogEntry *entry)
{
	char	   *table;
	char	   *name;

	SPI_connect();
	entry->exists = false;
	table = catalog_table_name();
	if (table != NULL)
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(entry->name)};

		if (SPI_execute_with_args(psprintf("SELECT * FROM %s WHERE name = $1", table),
								  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read table %s", table);
		if (SPI_processed == 1)
			entry->exists = catalog_row_to_layout(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc,
												  &entry->layout, &name);
	}
	SPI_finish();
	entry->layout.name = entry->name;
	entry->valid = true;
}

const IdgenLayout *
catalog_lookup(const char *name)
{
	CatalogEntry *entry;
	bool		found;

	if (strlen(name) >= NAMEDATALEN)
		return NULL;
	if (catalog_cache == NULL)
		catalog_init_cache();
	entry = hash_search(catalog_cache, name, HASH_ENTER, &found);
	if (!found)
		entry->valid = false;
	if (!entry->valid)
		catalog_load(entry);
	return entry->exists ? &entry->layout : NULL;
}

/* Lowercase, so it needs no quoting anywhere; a built-in name stays built in. */
static void
catalog_check_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len >= NAMEDATALEN || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != len ||
		!(name[0] >= 'a' && name[0] <= 'z'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid idgen layout name \"%s\"", name),
				 errhint("Start with a lowercase letter and use only lowercase letters, digits, \"_\" and \"-\", at most %d characters.",
						 NAMEDATALEN - 1)));
	if (layout_builtin(name) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("idgen layout \"%s\" is built in", name),
				 errhint("Pick another name.")));
}

/*
 * BEFORE ROW (INSERT, UPDATE, DELETE) and BEFORE TRUNCATE on idgen_layout:
 * a new row must describe a valid layout, and every backend must forget its
 * cached layouts when the transaction commits.
 */
Datum
idgen_layout_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	IdgenLayout layout;
	char	   *name;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("idgen_layout_check() must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_trigtuple);
	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	if (catalog_row_to_layout(tuple, trigdata->tg_relation->rd_att, &layout, &name))
	{
		catalog_check_name(name);
		if (layout.epoch_ms > clock_timestamptz_to_ms(GetCurrentTransactionStartTimestamp()))
			layout_invalid(name, "The epoch is in the future, so the layout has no time for IDs made now.", NULL);
	}
	return PointerGetDatum(tuple);
}

static void
catalog_modify(const char *sql, int nargs, Oid *argtypes, Datum *args, const char *name,
			   bool define)
{
	char	   *table;

	SPI_connect();
	table = catalog_table_name();
	if (table == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s of extension idgen does not exist", CATALOG_TABLE),
				 errhint("Update the extension with ALTER EXTENSION idgen UPDATE.")));
	if (SPI_execute_with_args(psprintf(sql, table), nargs, argtypes, args, NULL, false, 0) < 0)
		elog(ERROR, "could not change table %s", table);
	if (SPI_processed == 0)
		ereport(ERROR,
				define ?
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("idgen layout \"%s\" already exists", name),
				 errhint("Drop it first with idgen_drop_layout(), or pick another name.")) :
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("idgen layout \"%s\" does not exist", name),
				 errhint("Built-in layouts cannot be dropped; see table %s for the others.", table)));
	SPI_finish();
}

/* idgen_define_layout(name, epoch, fields, widths, time_unit, radix) */
Datum
idgen_define_layout(PG_FUNCTION_ARGS)
{
	Oid			argtypes[6] = {TEXTOID, TIMESTAMPTZOID, TEXTARRAYOID, INT4ARRAYOID,
	INTERVALOID, INT4OID};
	Datum		args[6];

	for (int i = 0; i < 6; i++)
	{
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of idgen_define_layout() must not be NULL", i + 1)));
		args[i] = PG_GETARG_DATUM(i);
	}
	catalog_modify("INSERT INTO %s (name, epoch, fields, widths, time_unit, radix)"
				   " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
				   6, argtypes, args, text_to_cstring(PG_GETARG_TEXT_PP(0)), true);
	PG_RETURN_VOID();
}

Datum
idgen_drop_layout(PG_FUNCTION_ARGS)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {PG_GETARG_DATUM(0)};

	catalog_modify("DELETE FROM %s WHERE name = $1", 1, argtypes, args,
				   text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	PG_RETURN_VOID();
}
