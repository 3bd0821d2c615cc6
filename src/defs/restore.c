/*
 * restore.c
 *		Layouts defined in SQL, restored before any table's data.
 *
 * pg_dump restores the rows of idgen_layout, a configuration table, among
 * the data of the other tables: in name order, or at the same time with
 * --jobs.  Whatever reads a layout while a table's rows load, directly or
 * through any function (a CHECK constraint of the table or of a domain, a
 * generated column, a partition key, an index in a parallel restore), found
 * none, and the restore lost the rows.  No check of constraints can see
 * through functions, so the layouts travel ahead of the data instead: a
 * function, idgen_layouts_saved(), returns a copy of the table's rows.  It
 * is no member of the extension, so pg_dump dumps it with the schema, which
 * every restore loads before any data, and an event trigger defines the
 * layouts it holds when it is created.  A trigger rewrites it after every
 * statement that changes the table.  The rows of idgen_layout restored later
 * are the same, and its row trigger skips them (src/layout_defs.c).
 *
 * The function is read, never run: whoever may create functions in idgen's
 * schema could otherwise have a restore, run by a superuser, run theirs.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "base/compat.h"
#include "layout_defs.h"

#define SAVED_FUNCTION "idgen_layouts_saved"

PG_FUNCTION_INFO_V1(idgen_layout_save);
PG_FUNCTION_INFO_V1(idgen_layout_restore);

/* This backend is rewriting the function: its own creation defines nothing. */
static bool restore_saving = false;

/* The function in the extension's schema, or InvalidOid. */
static Oid
restore_function(Oid nsp)
{
	return GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
						   CStringGetDatum(SAVED_FUNCTION),
						   PointerGetDatum(buildoidvector(NULL, 0)),
						   ObjectIdGetDatum(nsp));
}

static char *
restore_qualified(Oid nsp, const char *name)
{
	return quote_qualified_identifier(get_namespace_name(nsp), name);
}

/*
 * The same text whatever the session's settings, which the text forms of
 * timestamps and intervals follow, and names resolved in pg_catalog only:
 * the rewrite runs as the table's owner.  Returns the level to restore.
 */
static int
restore_fixed_settings(void)
{
	int			level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("TimeZone", "UTC", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("IntervalStyle", "postgres", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/* the body is a literal made here: parsing it again is wasted */
	(void) set_config_option("check_function_bodies", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);

	/*
	 * Each node of a Citus cluster keeps the copy of its own table: Citus
	 * would otherwise send the function to the workers, and a worker may
	 * not change a function Citus sent.
	 */
	if (GetConfigOption("citus.enable_ddl_propagation", true, false) != NULL)
		(void) set_config_option("citus.enable_ddl_propagation", "off", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return level;
}

/*
 * The table's rows as a jsonb array in name order, or NULL when there are
 * none.  Read with a snapshot taken now, not the transaction's: under
 * REPEATABLE READ a statement that waited for another's rewrite must still
 * see the other's layouts, or its copy would drop them.
 */
static char *
restore_rows(Oid relid)
{
	char	   *json = NULL;

	CommandCounterIncrement();
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_execute(psprintf("SELECT pg_catalog.jsonb_agg(l ORDER BY l.name COLLATE pg_catalog.\"C\")::pg_catalog.text"
							 " FROM %s l",
							 restore_qualified(get_rel_namespace(relid), get_rel_name(relid))),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read table idgen_layout");
	if (SPI_processed == 1)
		json = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	PopActiveSnapshot();
	return json;
}

/* The function's body now, or NULL when there is none. */
static char *
restore_current_body(Oid funcoid)
{
	HeapTuple	tuple;
	Datum		src;
	bool		isnull;
	char	   *body = NULL;

	if (!OidIsValid(funcoid))
		return NULL;
	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcoid));
	if (!HeapTupleIsValid(tuple))
		return NULL;
	src = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_prosrc, &isnull);
	if (!isnull)
		body = TextDatumGetCString(src);
	ReleaseSysCache(tuple);
	return body;
}

static Form_pg_proc
restore_proc(Oid funcoid, HeapTuple *tuple)
{
	*tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcoid));
	if (!HeapTupleIsValid(*tuple))
		elog(ERROR, "cache lookup failed for function %u", funcoid);
	return (Form_pg_proc) GETSTRUCT(*tuple);
}

static Oid
restore_function_owner(Oid funcoid)
{
	HeapTuple	tuple;
	Oid			owner = restore_proc(funcoid, &tuple)->proowner;

	ReleaseSysCache(tuple);
	return owner;
}

static Oid
restore_table_owner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

static void
restore_execute(const char *sql)
{
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
}

/*
 * Creates, replaces or drops the function, as the table's owner, so that
 * whoever may change layouts need not own it.  It is made outside any
 * CREATE or ALTER EXTENSION running: a member of the extension would not be
 * dumped.
 */
static void
restore_rewrite(Oid relid, Oid nsp, Oid funcoid, const char *body)
{
	char	   *func = restore_qualified(nsp, SAVED_FUNCTION);
	Oid			owner = restore_table_owner(relid);
	bool		foreign = OidIsValid(funcoid) && restore_function_owner(funcoid) != owner;
	Oid			save_userid;
	int			save_sec;
	bool		save_creating = creating_extension;
	Oid			save_extension = CurrentExtensionObject;

	/* a function of another role's would stay theirs to change, if replaced */
	if (foreign && !has_privs_of_role(owner, restore_function_owner(funcoid)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("function %s() is owned by role \"%s\", not by the owner of table %s",
						func, GetUserNameFromId(restore_function_owner(funcoid), false), "idgen_layout"),
				 errdetail("idgen keeps a copy of the table's rows in this function, as the table's owner."),
				 errhint("Drop function %s(), then change the layouts again.", func)));
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	restore_saving = true;
	creating_extension = false;
	CurrentExtensionObject = InvalidOid;
	PG_TRY();
	{
		if (body == NULL || foreign)
			restore_execute(psprintf("DROP FUNCTION %s()", func));
		if (body != NULL)
		{
			restore_execute(psprintf("CREATE OR REPLACE FUNCTION %s() RETURNS pg_catalog.jsonb"
									 " LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %s",
									 func, quote_literal_cstr(body)));
			/* dropped with the extension; replacing forgets that */
			restore_execute(psprintf("ALTER FUNCTION %s() DEPENDS ON EXTENSION idgen", func));
			if (!OidIsValid(funcoid) || foreign)
				restore_execute(psprintf("COMMENT ON FUNCTION %s() IS %s", func,
										 quote_literal_cstr("the layouts of table idgen_layout, kept by idgen: pg_dump restores this function before any table's data, and creating it defines the layouts it holds")));
		}
	}
	PG_FINALLY();
	{
		restore_saving = false;
		creating_extension = save_creating;
		CurrentExtensionObject = save_extension;
		SetUserIdAndSecContext(save_userid, save_sec);
	}
	PG_END_TRY();
}

/*
 * AFTER INSERT, UPDATE, DELETE or TRUNCATE on idgen_layout, for each
 * statement: the function holds the table's rows, and exists while there
 * are any.
 */
Datum
idgen_layout_save(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Oid			relid = layout_defs_table();
	Oid			ext;
	Oid			nsp;
	Oid			funcoid;
	char	   *json;
	char	   *body;
	char	   *current;
	int			level;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		RelationGetRelid(trigdata->tg_relation) != relid ||
		!TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s can only be fired after each statement on table %s",
						"idgen_layout_save()", "idgen_layout"),
				 errhint("Do not use %s in triggers of other tables.", "idgen_layout_save()")));

	ext = get_extension_oid("idgen", false);
	nsp = get_extension_schema(ext);
	/* one rewrite at a time; the lock also reads the catalogs' changes */
	LockDatabaseObject(ExtensionRelationId, ext, 0, ShareUpdateExclusiveLock);

	level = restore_fixed_settings();
	SPI_connect();
	json = restore_rows(relid);
	body = json == NULL ? NULL :
		psprintf("SELECT %s::pg_catalog.jsonb", quote_literal_cstr(json));
	funcoid = restore_function(nsp);
	current = restore_current_body(funcoid);
	if (body == NULL ? current != NULL :
		current == NULL || strcmp(body, current) != 0)
		restore_rewrite(relid, nsp, funcoid, body);
	SPI_finish();
	AtEOXact_GUC(true, level);
	return PointerGetDatum(NULL);
}

/* Whether this command created or replaced the function. */
static bool
restore_command_made(Oid funcoid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(funcoid)};

	if (SPI_execute_with_args("SELECT FROM pg_catalog.pg_event_trigger_ddl_commands()"
							  " WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
							  " AND objid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the objects of the command");
	return SPI_processed > 0;
}

/* Whether a cast's type is jsonb, as idgen writes it or plainly. */
static bool
restore_is_jsonb(const TypeName *type)
{
	int			n = list_length(type->names);

	return type->arrayBounds == NIL && type->typmods == NIL && !type->setof &&
		(n == 1 || (n == 2 && strcmp(strVal(linitial(type->names)), "pg_catalog") == 0)) &&
		strcmp(strVal(llast(type->names)), "jsonb") == 0;
}

/* The literal of body "SELECT '<json>'::jsonb" and nothing else, or NULL. */
static char *
restore_body_literal(const char *body)
{
	List	   *stmts = raw_parser(body, RAW_PARSE_DEFAULT);
	SelectStmt *select;
	ResTarget  *target;
	TypeCast   *cast;
	A_Const    *literal;

	if (list_length(stmts) != 1)
		return NULL;
	select = (SelectStmt *) linitial_node(RawStmt, stmts)->stmt;
	if (!IsA(select, SelectStmt) || select->op != SETOP_NONE || select->withClause ||
		select->fromClause || select->whereClause || select->valuesLists ||
		list_length(select->targetList) != 1)
		return NULL;
	target = linitial_node(ResTarget, select->targetList);
	cast = (TypeCast *) target->val;
	if (!IsA(cast, TypeCast) || !restore_is_jsonb(cast->typeName) || !IsA(cast->arg, A_Const))
		return NULL;
	literal = (A_Const *) cast->arg;
	if (literal->isnull || !IsA(&literal->val, String))
		return NULL;
	return strVal(&literal->val);
}

/*
 * The layouts function funcoid holds, read from its body, which must be of
 * the one form idgen writes: a LANGUAGE sql function returning a literal.
 */
static char *
restore_saved_json(Oid funcoid)
{
	HeapTuple	tuple;
	Form_pg_proc proc = restore_proc(funcoid, &tuple);
	bool		sql = proc->prolang == SQLlanguageId && proc->prorettype == JSONBOID;
	char	   *json = NULL;

	ReleaseSysCache(tuple);
	if (sql)
		json = restore_body_literal(restore_current_body(funcoid));
	if (json == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
				 errmsg("function %s() does not hold idgen layouts", SAVED_FUNCTION),
				 errdetail("idgen reads the layouts a restore brings from this function's body, which must be a LANGUAGE sql function returning one jsonb literal; it never runs it."),
				 errhint("Give the function another name, or define the layouts with idgen_define_layout().")));
	return json;
}

/*
 * Defines the layouts the function holds that this database lacks; one
 * defined here otherwise is an error, before any is defined.
 */
static void
restore_define(Oid relid, const char *json)
{
	char	   *table = restore_qualified(get_rel_namespace(relid), get_rel_name(relid));
	char	   *saved = psprintf("pg_catalog.jsonb_populate_recordset(NULL::%s, $1::pg_catalog.jsonb)",
								 table);
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(json)};

	if (pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to define the idgen layouts that %s() holds", SAVED_FUNCTION),
				 errdetail("Rows whose CHECK constraint, domain or generated column reads one of them will not restore."),
				 errhint("Restore as a superuser or as the database's owner, or GRANT INSERT ON %s to the restoring role first.",
						 table)));
	if (SPI_execute_with_args(psprintf("SELECT r.name FROM %s r JOIN %s l ON l.name OPERATOR(pg_catalog.=) r.name"
									   " WHERE NOT (l OPERATOR(pg_catalog.=) r) ORDER BY 1 LIMIT 1",
									   saved, table), 1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not compare the saved layouts with table %s", table);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("idgen layout \"%s\" is defined differently in this database",
						SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
				 errdetail("Function %s(), as a restore of a dump creates it, defines the layouts of the dumped database.",
						   SAVED_FUNCTION),
				 errhint("Restore into a new database, or drop the layout here first with idgen_drop_layout().")));
	if (SPI_execute_with_args(psprintf("INSERT INTO %s SELECT r.* FROM %s r WHERE NOT EXISTS"
									   " (SELECT FROM %s l WHERE l.name OPERATOR(pg_catalog.=) r.name)",
									   table, saved, table), 1, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not define the saved layouts in table %s", table);
}

/*
 * Event trigger at ddl_command_end of CREATE FUNCTION: when the command
 * made idgen_layouts_saved(), as a restore does before any table's data,
 * defines the layouts it holds.  pg_upgrade carries the table's files
 * instead.
 */
Datum
idgen_layout_restore(PG_FUNCTION_ARGS)
{
	Oid			ext;
	Oid			relid;
	Oid			nsp;
	Oid			funcoid;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s can only be called as an event trigger", "idgen_layout_restore()")));
	if (restore_saving || IsBinaryUpgrade)
		PG_RETURN_VOID();
	ext = get_extension_oid("idgen", true);
	relid = layout_defs_table();
	if (!OidIsValid(ext) || !OidIsValid(relid))
		PG_RETURN_VOID();
	nsp = get_extension_schema(ext);
	funcoid = restore_function(nsp);
	if (!OidIsValid(funcoid))
		PG_RETURN_VOID();

	SPI_connect();
	if (restore_command_made(funcoid))
		restore_define(relid, restore_saved_json(funcoid));
	SPI_finish();
	PG_RETURN_VOID();
}
