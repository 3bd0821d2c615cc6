/*
 * decode.c
 *		SQL entry points that read IDs: idgen_decode() and
 *		idgen_from_timestamp(), in the default or a named layout.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout.h"
#include "base/settings.h"
#include "defs/layout_defs.h"

PG_FUNCTION_INFO_V1(idgen_decode);
PG_FUNCTION_INFO_V1(idgen_decode_layout);
PG_FUNCTION_INFO_V1(idgen_from_timestamp);
PG_FUNCTION_INFO_V1(idgen_from_timestamp_layout);

/* Only the default layout depends on settings that may be broken. */
static const IdgenLayout *
decode_layout(text *name)
{
	const IdgenLayout *layout = layout_defs_resolve(text_to_cstring(name));

	if (layout == layout_default())
		settings_require_layout();
	return layout;
}

/*
 * The field idgen_decode() reports as node_id, worker_id or sequence: a
 * shard field takes the place of whichever machine field the layout lacks,
 * node first.  -1 when the layout has no such field.
 */
static int
decode_column_field(const IdgenLayout *layout, IdgenField column)
{
	if (layout_has_field(layout, column))
		return column;
	if (!layout_has_field(layout, IDGEN_FIELD_SHARD))
		return -1;
	if (column == IDGEN_FIELD_NODE ||
		(column == IDGEN_FIELD_WORKER && layout_has_field(layout, IDGEN_FIELD_NODE)))
		return IDGEN_FIELD_SHARD;
	return -1;
}

/* A field the layout does not have is NULL, not 0. */
static Datum
decode_id(FunctionCallInfo fcinfo, const IdgenLayout *layout, int64 id)
{
	static const IdgenField columns[] = {IDGEN_FIELD_NODE, IDGEN_FIELD_WORKER, IDGEN_FIELD_SEQ};
	IdgenFields fields;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false};

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID must not be negative: %lld", (long long) id),
				 errdetail("IDs of layout \"%s\" keep the sign bit zero, so a negative value is not one of them.",
						   layout->name)));
	if (id > layout->max_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID is too large for idgen layout \"%s\": %lld", layout->name, (long long) id),
				 errdetail("IDs of layout \"%s\" are at most %lld.", layout->name,
						   (long long) layout->max_id)));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	layout_unpack(layout, id, &fields);
	values[0] = TimestampTzGetDatum(clock_ms_to_timestamptz(layout->epoch_ms +
															fields.value[IDGEN_FIELD_TIME] * layout->tick_ms));
	for (int i = 0; i < (int) lengthof(columns); i++)
	{
		int			field = decode_column_field(layout, columns[i]);

		nulls[i + 1] = field < 0;
		values[i + 1] = Int32GetDatum(field < 0 ? 0 : (int32) fields.value[field]);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	settings_require_layout();
	return decode_id(fcinfo, layout_default(), PG_GETARG_INT64(0));
}

Datum
idgen_decode_layout(PG_FUNCTION_ARGS)
{
	return decode_id(fcinfo, decode_layout(PG_GETARG_TEXT_PP(1)), PG_GETARG_INT64(0));
}

/* The smallest ID whose time is the tick containing ts. */
static int64
from_timestamp(const IdgenLayout *layout, TimestampTz ts)
{
	int64		ms;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for idgen layout \"%s\": infinite timestamps cannot be encoded",
						layout->name),
				 errhint("Pass a finite timestamp within the layout's time range.")));
	ms = clock_timestamptz_to_ms(ts);
	if (ms < layout->epoch_ms || ms > layout_last_ms(layout))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for idgen layout \"%s\": \"%s\"",
						layout->name, timestamptz_to_str(ts)),
				 errdetail("IDs of layout \"%s\" carry times from %s to %s.", layout->name,
						   pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout->epoch_ms))),
						   pstrdup(timestamptz_to_str(clock_ms_to_timestamptz(layout_last_ms(layout))))),
				 errhint("Pass a timestamp within that range.")));
	return layout_tick_id(layout, ms);
}

Datum
idgen_from_timestamp(PG_FUNCTION_ARGS)
{
	settings_require_layout();
	PG_RETURN_INT64(from_timestamp(layout_default(), PG_GETARG_TIMESTAMPTZ(0)));
}

Datum
idgen_from_timestamp_layout(PG_FUNCTION_ARGS)
{
	const IdgenLayout *layout = decode_layout(PG_GETARG_TEXT_PP(1));

	PG_RETURN_INT64(from_timestamp(layout, PG_GETARG_TIMESTAMPTZ(0)));
}
