/*
 * provenance_trigger.c
 *		The trigger of idgen_system: a row that arrives, as a restore brings
 *		the rows of another cluster, is checked at once.
 *
 * A backend compares its database's rows with the marks before it first
 * generates (provenance.c); but a server whose backends had all generated
 * before the restore, in other databases, would not look until someone
 * generated in the restored one.  A cluster the marks do not cover makes
 * the server refuse when its row arrives, and every backend at its next
 * tick.  pg_upgrade copies the table's files and fires nothing: its new
 * cluster starts, and its backends check, after it.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/dbcommands.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "provenance.h"
#include "provenance_table.h"

PG_FUNCTION_INFO_V1(idgen_system_check);

static void
provenance_trigger_misused(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg("%s can only be fired after each row inserted into table %s",
					"idgen_system_check()", "idgen_system"),
			 errhint("Do not use %s in triggers of other tables.", "idgen_system_check()")));
}

/*
 * After each row inserted into idgen_system.  It refuses the row only
 * when the refusal the row makes could not outlive a restart (the notes
 * are full): otherwise a restore goes on, and generation refuses until
 * told where to resume.
 */
Datum
idgen_system_check(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	bool		isnull;
	bool		no_time;
	Datum		system;
	Datum		recorded_at;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		RelationGetRelid(trigdata->tg_relation) != provenance_table_oid() ||
		!TRIGGER_FIRED_AFTER(trigdata->tg_event) || !TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		provenance_trigger_misused();
	desc = RelationGetDescr(trigdata->tg_relation);
	system = heap_getattr(trigdata->tg_trigtuple, 1, desc, &isnull);
	recorded_at = heap_getattr(trigdata->tg_trigtuple, 2, desc, &no_time);
	if (!isnull)
		provenance_arrived((uint64) DatumGetInt64(system),
						   no_time ? DT_NOBEGIN : DatumGetTimestampTz(recorded_at));
	return PointerGetDatum(NULL);
}
