/*
 * upgrade.c
 *		pg_upgrade told apart from a new cluster: a database it brings with
 *		the extension holds the old cluster's IDs, whose marks stay behind in
 *		the old idgen_hwm.
 *
 * The rows of idgen_system name the old cluster, but only to a backend of
 * that database; a database without them (made after the upgrade, or
 * brought with idgen before 1.5) could generate first, below the old IDs.
 * So the server learns it at the upgrade itself.  pg_upgrade restores the
 * schema in binary-upgrade mode, where an extension's objects arrive one by
 * one through ALTER EXTENSION ... ADD, which nothing else runs there (the
 * old cluster, started so too, is only read).  The first of idgen's makes
 * the marks cover nothing (provenance_state.c), so the new server refuses
 * from its first start until README's step, the old idgen_hwm copied over
 * this one, or idgen_resume_after().
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"

#include "provenance.h"
#include "provenance_shared.h"

static ProcessUtility_hook_type prev_process_utility = NULL;

/* This backend has told the server already. */
static bool told = false;

static bool
adds_to_idgen(const Node *stmt)
{
	return IsA(stmt, AlterExtensionContentsStmt) &&
		((const AlterExtensionContentsStmt *) stmt)->action > 0 &&
		strcmp(((const AlterExtensionContentsStmt *) stmt)->extname, "idgen") == 0;
}

/* Told before the statement runs: no database arrives untold. */
static void
upgrade_process_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	if (!told && prov != NULL && adds_to_idgen(pstmt->utilityStmt))
	{
		provenance_mark_upgraded();
		told = true;
	}
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/* Only a server pg_upgrade started (-b) watches: no cost anywhere else. */
void
provenance_upgrade_register(void)
{
	if (!IsBinaryUpgrade)
		return;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = upgrade_process_utility;
}
