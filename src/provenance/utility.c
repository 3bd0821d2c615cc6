/*
 * utility.c
 *		Rows of idgen_system that arrive past its trigger, told by the
 *		utility statements around them.
 *
 * The table's trigger makes the server refuse as a restore's rows arrive,
 * before anyone generates, also in databases that never read this one.
 * Two ways bring rows without it:
 *
 *	- pg_upgrade copies the table's files.  It restores the schema first,
 *	  in binary-upgrade mode, where an extension's objects arrive one by
 *	  one through ALTER EXTENSION ... ADD, which nothing else runs there
 *	  (the old cluster, started so too, is only read).  The first of
 *	  idgen's makes the marks cover nothing (provenance_state.c), so the new
 *	  server refuses from its first start, in every database, also one made
 *	  after the upgrade, until README's step (the old idgen_hwm copied over
 *	  this one) or idgen_resume_after().
 *	- A data-only restore with triggers disabled (pg_restore --data-only
 *	  --disable-triggers) enables them again after the table's data: the
 *	  table is checked then.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"

#include "provenance.h"
#include "provenance_shared.h"

static ProcessUtility_hook_type prev_process_utility = NULL;

/* This backend has told the server of the upgrade already. */
static bool told_upgrade = false;

static bool
adds_to_idgen(const Node *stmt)
{
	return IsA(stmt, AlterExtensionContentsStmt) &&
		((const AlterExtensionContentsStmt *) stmt)->action > 0 &&
		strcmp(((const AlterExtensionContentsStmt *) stmt)->extname, "idgen") == 0;
}

/* ALTER TABLE idgen_system ENABLE ... TRIGGER, in any schema */
static bool
enables_system_triggers(const Node *stmt)
{
	const AlterTableStmt *alter = (const AlterTableStmt *) stmt;
	ListCell   *lc;

	if (!IsA(stmt, AlterTableStmt) || alter->relation == NULL ||
		strcmp(alter->relation->relname, "idgen_system") != 0)
		return false;
	foreach(lc, alter->cmds)
	{
		AlterTableType type = lfirst_node(AlterTableCmd, lc)->subtype;

		if (type == AT_EnableTrig || type == AT_EnableAlwaysTrig ||
			type == AT_EnableReplicaTrig || type == AT_EnableTrigAll ||
			type == AT_EnableTrigUser)
			return true;
	}
	return false;
}

/*
 * The upgrade is told before the statement runs, so that no database
 * arrives untold; the table is checked once its triggers are on.
 */
static void
provenance_process_utility(PlannedStmt *pstmt, const char *queryString,
						   bool readOnlyTree, ProcessUtilityContext context,
						   ParamListInfo params, QueryEnvironment *queryEnv,
						   DestReceiver *dest, QueryCompletion *qc)
{
	if (IsBinaryUpgrade && !told_upgrade && adds_to_idgen(pstmt->utilityStmt))
	{
		provenance_mark_upgraded();
		told_upgrade = true;
	}
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
	if (enables_system_triggers(pstmt->utilityStmt))
		provenance_check_arrived();
}

/* _PG_init, while shared_preload_libraries load: prov is set in every backend. */
void
provenance_utility_register(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = provenance_process_utility;
}
