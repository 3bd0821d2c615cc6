/*
 * workers_view.c
 *		The idgen_workers view: one row per claimed worker id, and one for
 *		the shared one (slots.c).
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "slots.h"

PG_FUNCTION_INFO_V1(idgen_workers);

#define WORKERS_COLS 10

static void
workers_add_row(Tuplestorestate *store, TupleDesc tupdesc, int index,
				WorkerSlot *slot, bool is_shared, bool privileged)
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
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->gen.issued));
	values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->gen.regressions));
	values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->gen.waits));
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

	slots_require();
	InitMaterializedSRF(fcinfo, 0);
	shared = slots_shared_index();
	for (int i = 0; i < slots_slot_count(); i++)
	{
		WorkerSlot slot;

		slots_read_slot(i, &slot);
		if (i != shared && slot.pid == 0)
			continue;
		workers_add_row(rsinfo->setResult, rsinfo->setDesc, i, &slot,
						i == shared, privileged);
	}
	return (Datum) 0;
}
