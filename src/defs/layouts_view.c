/*
 * layouts_view.c
 *		idgen_builtin_layouts(): the built-in layouts as rows of the view
 *		idgen_layouts, in the columns of the table idgen_layout, so that the
 *		list lives in one place (layout.c) and no comment or page repeats it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout.h"

PG_FUNCTION_INFO_V1(idgen_builtin_layouts);

static void
put_layout(ReturnSetInfo *rsinfo, const IdgenLayout *layout)
{
	Datum		names[IDGEN_NFIELDS];
	Datum		widths[IDGEN_NFIELDS];
	Interval   *unit = palloc0(sizeof(Interval));
	Datum		values[6];
	bool		nulls[6] = {0};

	for (int i = 0; i < layout->nfields; i++)
	{
		names[i] = CStringGetTextDatum(layout_field_name(layout->order[i]));
		widths[i] = Int32GetDatum(layout->width[layout->order[i]]);
	}
	unit->time = (int64) layout->tick_ms * 1000;

	values[0] = CStringGetTextDatum(layout->name);
	values[1] = TimestampTzGetDatum(clock_ms_to_timestamptz(layout->epoch_ms));
	values[2] = PointerGetDatum(construct_array(names, layout->nfields, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(widths, layout->nfields, INT4OID,
												sizeof(int32), true, TYPALIGN_INT));
	values[4] = IntervalPGetDatum(unit);
	values[5] = Int32GetDatum(layout->radix);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The default layout first, as "idgen": it follows idgen.epoch and
 * idgen.node_bits, fixed until the server restarts.
 */
Datum
idgen_builtin_layouts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const IdgenLayout *layout;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int i = 0; (layout = layout_builtin_at(i)) != NULL; i++)
		put_layout(rsinfo, layout);
	return (Datum) 0;
}
