/*
 * constraint.c
 *		Refuses CHECK constraints that read layouts defined in SQL, unless
 *		they are NOT VALID: the event trigger of the SQL of 1.3 and 1.4.
 *
 * From 1.5 the layouts reach a restore before any table's data
 * (src/restore.c), whatever reads them, and the update drops this event
 * trigger; the library keeps the function for databases not yet updated.
 *
 * A layout defined in SQL is a row of idgen_layout.  A table's or domain's
 * validated CHECK constraint is restored with the table's definition, before
 * any data, and pg_dump loads the data of tables in name order, not in the
 * order that what a CHECK reads needs: a constraint that calls
 * idgen_decode(id, 'orders') finds no layout "orders" while the table's data
 * loads, and the restore loses the table's rows.  PostgreSQL does not support
 * CHECK constraints that read other tables (ddl.sgml); a NOT VALID constraint
 * still checks every new and updated row, and pg_dump adds it after the data.
 * So an event trigger refuses, at the end of the command that makes one
 * valid, a CHECK constraint that passes anything but a built-in layout's name
 * to a function of idgen with an argument "layout".  Restores of dumps, which
 * set check_function_bodies off as PostgreSQL's own checks expect, get a
 * warning instead: a dump made before 1.3 must still restore its tables.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_proc.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/layout.h"

PG_FUNCTION_INFO_V1(idgen_constraint_check);

typedef struct ConstraintWalk
{
	Oid			extension;		/* idgen's */
	Oid			culprit;		/* the function given such a layout */
} ConstraintWalk;

/* The position of the function's input argument "layout", or -1. */
static int
constraint_layout_argno(Oid funcid)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	char	  **names = NULL;
	int			n = 0;
	int			pos = -1;
	bool		isnull;
	Datum		argnames;

	if (!HeapTupleIsValid(tuple))
		return -1;
	argnames = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_proargnames, &isnull);
	if (!isnull)
		n = get_func_input_arg_names(argnames,
									 SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_proargmodes, &isnull),
									 &names);
	for (int i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(names[i], "layout") == 0)
			pos = i;
	ReleaseSysCache(tuple);
	return pos;
}

/* The argument at that position, named or not; NULL when the default is used. */
static Node *
constraint_arg(List *args, int pos)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, args)
	{
		Node	   *arg = lfirst(lc);

		if (IsA(arg, NamedArgExpr))
		{
			if (((NamedArgExpr *) arg)->argnumber == pos)
				return (Node *) ((NamedArgExpr *) arg)->arg;
		}
		else if (i == pos)
			return arg;
		i++;
	}
	return NULL;
}

/* A constant naming a built-in layout, whose definition no table holds. */
static bool
constraint_builtin(Node *arg)
{
	Const	   *c = (Const *) arg;

	/* every layout argument's default, 'idgen', is built in */
	if (arg == NULL)
		return true;
	return IsA(arg, Const) && !c->constisnull &&
		layout_builtin(TextDatumGetCString(c->constvalue)) != NULL;
}

static bool
constraint_walker(Node *node, ConstraintWalk *walk)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;
		int			pos;

		if (getExtensionOfObject(ProcedureRelationId, f->funcid) == walk->extension &&
			(pos = constraint_layout_argno(f->funcid)) >= 0 &&
			!constraint_builtin(constraint_arg(f->args, pos)))
		{
			walk->culprit = f->funcid;
			return true;
		}
	}
	return expression_tree_walker(node, constraint_walker, (void *) walk);
}

/* Refuses the constraint if it is valid, made so by this transaction, and reads layouts. */
static void
constraint_check_one(Oid conoid, Oid extension)
{
	HeapTuple	tuple = SearchSysCache1(CONSTROID, ObjectIdGetDatum(conoid));
	Form_pg_constraint con;
	ConstraintWalk walk = {extension, InvalidOid};
	bool		isnull;
	Datum		conbin;

	if (!HeapTupleIsValid(tuple))
		return;
	con = (Form_pg_constraint) GETSTRUCT(tuple);
	conbin = SysCacheGetAttr(CONSTROID, tuple, Anum_pg_constraint_conbin, &isnull);
	/* constraints made valid before, when this was allowed, are left alone */
	if (con->contype == CONSTRAINT_CHECK && con->convalidated && !isnull &&
		TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tuple->t_data)) &&
		constraint_walker(stringToNode(TextDatumGetCString(conbin)), &walk))
		ereport(check_function_bodies ? ERROR : WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("check constraint \"%s\" of %s \"%s\" reads an idgen layout defined in SQL",
						NameStr(con->conname),
						OidIsValid(con->conrelid) ? "relation" : "domain",
						OidIsValid(con->conrelid) ? get_rel_name(con->conrelid) :
						format_type_be(con->contypid)),
				 errdetail("%s() is given a layout other than a built-in one. pg_dump restores a valid check constraint with its table, which may be before the rows of table idgen_layout: restoring the checked rows would fail.",
						   get_func_name(walk.culprit)),
				 con->conislocal ?
				 errhint("Add the constraint with NOT VALID: it still checks every new and updated row, and pg_dump adds it after the data.") :
				 errhint("The constraint is inherited, and valid in a new table. Create the table on its own, add the constraint with NOT VALID, then attach the table.")));
	ReleaseSysCache(tuple);
}

/*
 * Event trigger at ddl_command_end of CREATE and ALTER of tables and
 * domains: checks the CHECK constraints of the objects the command touched.
 */
Datum
idgen_constraint_check(PG_FUNCTION_ARGS)
{
	Oid			extension = get_extension_oid("idgen", true);
	Oid		   *conoids;
	uint64		n;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s can only be called as an event trigger", "idgen_constraint_check()")));
	if (!OidIsValid(extension))
		PG_RETURN_VOID();

	SPI_connect();
	if (SPI_execute("SELECT DISTINCT c.oid FROM pg_catalog.pg_event_trigger_ddl_commands() d"
					" JOIN pg_catalog.pg_constraint c"
					" ON (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
					"     AND c.conrelid OPERATOR(pg_catalog.=) d.objid)"
					" OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass"
					"     AND c.contypid OPERATOR(pg_catalog.=) d.objid)"
					" WHERE c.contype OPERATOR(pg_catalog.=) 'c' AND c.convalidated",
					false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of the command's objects");
	n = SPI_processed;
	conoids = SPI_palloc(sizeof(Oid) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		conoids[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
													SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();

	for (uint64 i = 0; i < n; i++)
		constraint_check_one(conoids[i], extension);
	PG_RETURN_VOID();
}
