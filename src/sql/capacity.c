/*
 * capacity.c
 *		The view idgen_capacity: each shared table of fixed size, how many
 *		entries it has and uses, and how often one was wanted when none was
 *		free.  What a full table does is its own module's: marks share a
 *		mark (marks.c), layout states are recycled and worker ids shared
 *		(slots.c), prepared transactions refused (horizon.c), counts
 *		dropped (stats.c); none loses a protection.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/capacity.h"
#include "gen/gen.h"
#include "horizon/horizon.h"
#include "marks/marks.h"

PG_FUNCTION_INFO_V1(idgen_capacity);

#define CAPACITY_COLS 6

static void
capacity_add_row(ReturnSetInfo *rsinfo, const IdgenCapacity *row)
{
	Datum		values[CAPACITY_COLS];
	bool		nulls[CAPACITY_COLS] = {false};

	values[0] = CStringGetTextDatum(row->name);
	values[1] = Int64GetDatum(row->capacity);
	values[2] = Int64GetDatum(row->in_use);
	values[3] = Int64GetDatum(row->overflows);
	values[4] = TimestampTzGetDatum(row->last_overflow);
	nulls[4] = row->last_overflow == 0;
	values[5] = row->setting ? CStringGetTextDatum(row->setting) : (Datum) 0;
	nulls[5] = row->setting == NULL;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* One row per table. */
Datum
idgen_capacity(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IdgenCapacity rows[5] = {{0}};

	marks_capacity(&rows[0]);
	slots_capacity(&rows[1], &rows[2]);
	horizon_capacity(&rows[3]);
	stats_capacity(&rows[4]);
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < (int) lengthof(rows); i++)
		capacity_add_row(rsinfo, &rows[i]);
	return (Datum) 0;
}
