/*
 * utility.c
 *		Utility statements that would bring rows of idgen's tables past
 *		their triggers.
 *
 * The trigger of idgen_system makes the server refuse as a restore's rows
 * arrive, before anyone generates, also in databases that never read this
 * one; those of idgen_layout check each layout, skip a restore's rows equal
 * to those the schema defined first (restore.c), and keep the saved copy.
 * Two ways would bring rows without them:
 *
 *	- pg_upgrade copies the tables' files.  It restores the schema first,
 *	  in binary-upgrade mode, where an extension's objects arrive one by
 *	  one through ALTER EXTENSION ... ADD, which nothing else runs there
 *	  (the old cluster, started so too, is only read).  The first of
 *	  idgen's makes the marks cover nothing (provenance_state.c), so the new
 *	  server refuses from its first start, in every database, also one made
 *	  after the upgrade, until README's step (the old idgen_hwm copied over
 *	  this one) or idgen_resume_after().
 *	- ALTER TABLE ... DISABLE TRIGGER, which a data-only restore runs
 *	  before each table's data (pg_restore --data-only --disable-triggers).
 *	  idgen's own triggers on its tables are enabled again at once, with a
 *	  warning: the restore's rows pass them as any restore's do.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/rel.h"

#include "base/compat.h"

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

/* ALTER TABLE ... DISABLE TRIGGER, or ENABLE REPLICA TRIGGER */
static bool
disables_triggers(const Node *stmt)
{
	const AlterTableStmt *alter = (const AlterTableStmt *) stmt;
	ListCell   *lc;

	if (!IsA(stmt, AlterTableStmt) || alter->relation == NULL)
		return false;
	foreach(lc, alter->cmds)
	{
		AlterTableType type = lfirst_node(AlterTableCmd, lc)->subtype;

		if (type == AT_DisableTrig || type == AT_DisableTrigAll ||
			type == AT_DisableTrigUser || type == AT_EnableReplicaTrig)
			return true;
	}
	return false;
}

/*
 * Names the triggers of rel, disabled or firing on replicas only, that call
 * extension ext's functions: copied, as enabling them changes rel's list.
 */
static List *
idgen_triggers_off(Relation rel, Oid ext)
{
	List	   *names = NIL;

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++)
	{
		Trigger    *trigger = &rel->trigdesc->triggers[i];

		if ((trigger->tgenabled == TRIGGER_DISABLED ||
			 trigger->tgenabled == TRIGGER_FIRES_ON_REPLICA) &&
			getExtensionOfObject(ProcedureRelationId, trigger->tgfoid) == ext)
			names = lappend(names, pstrdup(trigger->tgname));
	}
	return names;
}

/*
 * Enables again the triggers of a table of idgen's that call idgen's
 * functions; the statement that disabled them holds the table's lock.
 */
static void
keep_idgen_triggers(const RangeVar *relation)
{
	Oid			ext = get_extension_oid("idgen", true);
	Oid			relid = RangeVarGetRelid(relation, NoLock, true);
	Relation	rel;
	List	   *names;
	ListCell   *lc;

	if (!OidIsValid(ext) || !OidIsValid(relid) ||
		getExtensionOfObject(RelationRelationId, relid) != ext)
		return;
	rel = table_open(relid, ShareRowExclusiveLock);
	names = idgen_triggers_off(rel, ext);
	foreach(lc, names)
		idgen_enable_trigger(rel, lfirst(lc), ShareRowExclusiveLock);
	if (names != NIL)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("triggers of extension \"%s\" on table \"%s\" were enabled again",
						"idgen", RelationGetRelationName(rel)),
				 errdetail("They check every row written to the table, also the rows of a data-only restore.")));
	table_close(rel, NoLock);
	CommandCounterIncrement();
}

/*
 * The upgrade is told before the statement runs, so that no database
 * arrives untold; triggers are enabled again once it has run.
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
	/* an update script of idgen's own may turn them off for a while */
	if (disables_triggers(pstmt->utilityStmt) && !creating_extension)
		keep_idgen_triggers(((AlterTableStmt *) pstmt->utilityStmt)->relation);
}

/* _PG_init, while shared_preload_libraries load: prov is set in every backend. */
void
provenance_utility_register(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = provenance_process_utility;
}
