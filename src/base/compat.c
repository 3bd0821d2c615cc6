/*
 * compat.c
 *		The bodies of compat.h's shims: functions an older PostgreSQL lacks,
 *		and ones that keep state.
 */
#include "postgres.h"

#include "compat.h"

#if PG_VERSION_NUM < 160000
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

/* The schema of an extension, as PG 16's get_extension_schema() gives it. */
Oid
get_extension_schema(Oid ext_oid)
{
	Oid			result = InvalidOid;
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext_oid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		result = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}
#endif

#if PG_VERSION_NUM >= 170000
/* Registered on first use, once per backend. */
uint32
idgen_wait_event_sync_rep(void)
{
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("IdgenMarkSyncRep");
	return event;
}
#endif
