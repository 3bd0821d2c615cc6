/*
 * decode.c
 *		SQL entry points that read IDs and the registry: idgen_decode(),
 *		idgen_from_timestamp() and the rows of the idgen_workers view.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "compat.h"
#include "generator.h"
#include "idgen.h"
#include "layout.h"
#include "registry.h"

PG_FUNCTION_INFO_V1(idgen_decode);
PG_FUNCTION_INFO_V1(idgen_from_timestamp);
PG_FUNCTION_INFO_V1(idgen_workers);

Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const IdgenLayout *layout;
	IdgenFields fields;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false};

	idgen_require_layout();
	layout = layout_default();
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen ID must not be negative: %lld", (long long) id),
				 errdetail("idgen IDs keep the sign bit zero, so a negative value was not made by idgen.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	layout_unpack(layout, id, &fields);
	values[0] = TimestampTzGetDatum(clock_ms_to_timestamptz(layout->epoch_ms +
															fields.ticks * layout->tick_ms));
	values[1] = Int32GetDatum((int32) fields.node);
	values[2] = Int32GetDatum((int32) fields.worker);
	values[3] = Int32GetDatum((int32) fields.seq);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* The smallest ID whose time is the millisecond containing ts. */
Datum
idgen_from_timestamp(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	const IdgenLayout *layout;
	IdgenFields fields = {0};
	int64		ms;

	idgen_require_layout();
	layout = layout_default();
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for idgen: infinite timestamps cannot be encoded"),
				 errhint("Pass a finite timestamp between idgen.epoch and the end of the layout's time range.")));
	ms = clock_timestamptz_to_ms(ts);
	if (ms < layout->epoch_ms || ms > layout_last_ms(layout))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for idgen: \"%s\"", timestamptz_to_str(ts)),
				 errdetail("idgen IDs carry times from %s to %s.",
						   pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout->epoch_ms))),
						   pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout_last_ms(layout))))),
				 errhint("Pass a timestamp within that range.")));
	fields.ticks = (ms - layout->epoch_ms) / layout->tick_ms;
	PG_RETURN_INT64(layout_pack(layout, &fields));
}

#define WORKERS_COLS 10

static void
workers_add_row(Tuplestorestate *store, TupleDesc tupdesc, int index,
				const RegistrySlot *slot, bool is_shared, bool privileged)
{
	Datum		values[WORKERS_COLS];
	bool		nulls[WORKERS_COLS] = {false};
	bool		visible = privileged || (!is_shared && slot->userid == GetUserId());

	values[0] = Int32GetDatum(index);
	values[1] = BoolGetDatum(is_shared);
	values[2] = Int32GetDatum(slot->pid);
	nulls[2] = is_shared || !visible;
	values[3] = TimestampTzGetDatum(slot->claimed_at);
	nulls[3] = is_shared || !visible;
	values[4] = TimestampTzGetDatum(clock_ms_to_timestamptz(slot->gen.last_ms));
	nulls[4] = !visible || slot->gen.last_ms == 0;
	values[5] = Int64GetDatum(Max(slot->gen.last_ms - slot->gen.clock_high, 0));
	nulls[5] = !visible || slot->gen.last_ms == 0;
	values[6] = Int64GetDatum((int64) slot->gen.issued);
	values[7] = Int64GetDatum((int64) slot->gen.regressions);
	values[8] = Int64GetDatum((int64) slot->gen.waits);
	values[9] = BoolGetDatum(slot->gen.clock_behind);
	for (int i = 6; i < WORKERS_COLS; i++)
		nulls[i] = !visible;
	tuplestore_putvalues(store, tupdesc, values, nulls);
}

/* One row per claimed slot, and one for the shared slot. */
Datum
idgen_workers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		privileged = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	int			shared = -1;

	idgen_require_registry();
	InitMaterializedSRF(fcinfo, 0);
	shared = registry_shared_index();
	for (int i = 0; i < registry_slot_count(); i++)
	{
		RegistrySlot slot;

		registry_read_slot(i, &slot);
		if (i != shared && slot.pid == 0)
			continue;
		workers_add_row(rsinfo->setResult, rsinfo->setDesc, i, &slot,
						i == shared, privileged);
	}
	return (Datum) 0;
}
