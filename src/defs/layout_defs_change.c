/*
 * layout_defs_change.c
 *		Changes to the table idgen_layout: the trigger that checks every one,
 *		however it is made, and idgen_define_layout(), idgen_drop_layout(),
 *		which change the table through SQL.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "layout_defs.h"

PG_FUNCTION_INFO_V1(idgen_layout_check);
PG_FUNCTION_INFO_V1(idgen_define_layout);
PG_FUNCTION_INFO_V1(idgen_drop_layout);

/*
 * Set while idgen_define_layout() inserts its row: a layout defined now must
 * have time for IDs made now.  Rows that arrive otherwise (a restore, a copy
 * of the table) are definitions made before, whose IDs tables hold: they are
 * taken as they are, as their IDs must decode; generating in them refuses
 * before the epoch and past the end.
 */
static bool defining_now = false;

/* Lowercase, so it needs no quoting anywhere; a built-in name stays built in. */
static void
layout_defs_check_name(const char *name)
{
	if (!layout_valid_name(name))
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
 * Whether the table holds a row equal to this one: a restore defines the
 * layouts before it loads the table's rows (src/restore.c).
 */
static bool
layout_defs_row_exists(Relation rel, HeapTuple tuple)
{
	Oid			argtypes[1] = {RelationGetForm(rel)->reltype};
	Datum		args[1] = {heap_copy_tuple_as_datum(tuple, RelationGetDescr(rel))};
	bool		exists;

	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT FROM %s l WHERE l OPERATOR(pg_catalog.=) $1",
									   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
																  RelationGetRelationName(rel))),
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read table %s", LAYOUT_DEFS_TABLE);
	exists = SPI_processed > 0;
	SPI_finish();
	return exists;
}

static void
layout_defs_trigger_misused(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg("%s can only be fired by the triggers of table %s",
					"idgen_layout_check()", LAYOUT_DEFS_TABLE),
			 errdetail_internal("%s", detail),
			 errhint("Do not use %s in triggers of other tables.", "idgen_layout_check()")));
}

/*
 * BEFORE ROW (INSERT, UPDATE, DELETE) and BEFORE TRUNCATE on idgen_layout:
 * a new row must describe a valid layout (one idgen_define_layout() makes,
 * a layout with time for IDs made now), and every backend must forget its
 * cached layouts when the transaction commits.  A row inserted equal to one
 * the table holds is skipped.  Fired any other way it refuses, before it
 * reads anything of the trigger's data.
 */
Datum
idgen_layout_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TriggerEvent event;
	HeapTuple	tuple;
	IdgenLayout layout;
	char	   *name;

	if (!CALLED_AS_TRIGGER(fcinfo))
		layout_defs_trigger_misused("It was called as a plain function.");
	event = trigdata->tg_event;
	if (RelationGetRelid(trigdata->tg_relation) != layout_defs_table())
		layout_defs_trigger_misused(psprintf("It was fired on table \"%s\".",
											 RelationGetRelationName(trigdata->tg_relation)));
	if (!TRIGGER_FIRED_BEFORE(event))
		layout_defs_trigger_misused("It was fired after or instead of the change.");
	if (TRIGGER_FIRED_BY_TRUNCATE(event))
	{
		CacheInvalidateRelcache(trigdata->tg_relation);
		return PointerGetDatum(NULL);
	}
	if (!TRIGGER_FIRED_FOR_ROW(event))
		layout_defs_trigger_misused("It was fired for a statement, not for each row.");
	CacheInvalidateRelcache(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_DELETE(event))
		return PointerGetDatum(trigdata->tg_trigtuple);
	tuple = TRIGGER_FIRED_BY_UPDATE(event) ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
	if (TRIGGER_FIRED_BY_INSERT(event) && layout_defs_row_exists(trigdata->tg_relation, tuple))
		return PointerGetDatum(NULL);
	if (layout_defs_row_to_layout(tuple, RelationGetDescr(trigdata->tg_relation), &layout, &name))
	{
		int64		now;

		layout_defs_check_name(name);
		if (!defining_now)
			return PointerGetDatum(tuple);
		now = clock_now_ms();
		if (layout.epoch_ms > now)
			layout_invalid(name, "The epoch is in the future, so the layout has no time for IDs made now.", NULL);
		if (layout_last_ms(&layout) < now)
			layout_invalid(name, psprintf("Its time field ended at %s.",
										  timestamptz_to_str(clock_ms_to_timestamptz(layout_last_ms(&layout)))),
						   "Widen the time field, lengthen the time unit or move the epoch later.");
	}
	return PointerGetDatum(tuple);
}

/* Changes the table through SQL, so that its triggers and privileges apply. */
static void
layout_defs_modify(const char *sql, int nargs, Oid *argtypes, Datum *args, const char *name,
				   bool define)
{
	Oid			relid = layout_defs_table();
	char	   *table;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s of extension idgen does not exist", LAYOUT_DEFS_TABLE),
				 errhint("Update the extension with ALTER EXTENSION idgen UPDATE.")));
	table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									   LAYOUT_DEFS_TABLE);
	SPI_connect();
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
	defining_now = true;
	PG_TRY();
	{
		layout_defs_modify("INSERT INTO %s (name, epoch, fields, widths, time_unit, radix)"
						   " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
						   6, argtypes, args, text_to_cstring(PG_GETARG_TEXT_PP(0)), true);
	}
	PG_FINALLY();
	{
		defining_now = false;
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}

Datum
idgen_drop_layout(PG_FUNCTION_ARGS)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {PG_GETARG_DATUM(0)};

	layout_defs_modify("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1", 1, argtypes, args,
					   text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	PG_RETURN_VOID();
}
