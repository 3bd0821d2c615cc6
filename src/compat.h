/*
 * compat.h
 *		Every PostgreSQL version difference idgen cares about, in one place.
 *
 * idgen targets PostgreSQL 15 and builds on 13 to 18.
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#include "postgres.h"
#include "utils/guc.h"

/* PG 15 split the shared memory request out of the preload phase. */
#if PG_VERSION_NUM >= 150000
#define IDGEN_HAVE_SHMEM_REQUEST_HOOK 1
#endif

/* PG 15 renamed EmitWarningsOnPlaceholders and made it reserve the prefix. */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/* PG 15 added the helper that sets up a materialized set-returning function. */
#if PG_VERSION_NUM < 150000
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#define MAT_SRF_USE_EXPECTED_DESC 0x01

static inline void
InitMaterializedSRF(FunctionCallInfo fcinfo, bits32 flags)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	MemoryContext old;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize) ||
		((flags & MAT_SRF_USE_EXPECTED_DESC) && rsinfo->expectedDesc == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	if (flags & MAT_SRF_USE_EXPECTED_DESC)
		tupdesc = rsinfo->expectedDesc;
	else if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	rsinfo->setDesc = CreateTupleDescCopy(tupdesc);
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	MemoryContextSwitchTo(old);
}
#endif

/* PG 15 added custom WAL resource managers. */
#if PG_VERSION_NUM >= 150000
#define IDGEN_HAVE_CUSTOM_RMGR 1
#endif

/* PG 17 replaced backend ids with proc numbers; both are unique among live backends. */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define idgen_backend_number() ((int) MyProcNumber)
#else
#include "storage/backendid.h"
#define idgen_backend_number() ((int) MyBackendId)
#endif

/* PG 16 added soft input errors; before it they are plain errors. */
#if PG_VERSION_NUM < 160000
#define ereturn(context, dummy_value, ...) ereport(ERROR, __VA_ARGS__)
#endif

#endif							/* IDGEN_COMPAT_H */
