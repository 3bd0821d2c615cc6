/*
 * compat.h
 *		Every PostgreSQL version difference idgen cares about, in one place:
 *		macros here, shims with bodies in compat.c.
 *
 * idgen supports PostgreSQL 15 and later.
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#include "postgres.h"
#include "utils/guc.h"

/*
 * The high-water mark reaches standbys through a custom WAL resource
 * manager, which PostgreSQL has had since 15; without it a promoted standby
 * could repeat IDs of its old primary.
 */
#if PG_VERSION_NUM < 150000
#error "idgen requires PostgreSQL 15 or later: failover safety needs custom WAL resource managers"
#endif

/* PG 18 replaced the pg_attribute_noreturn() suffix with a pg_noreturn prefix. */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* PG 18 lets a module report its name and version. */
#if PG_VERSION_NUM >= 180000
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "idgen", .version = IDGEN_VERSION)
#else
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * PG 17 replaced backend ids with proc numbers; both are unique among live
 * backends, and lead to the backend's PGPROC.
 */
#include "storage/proc.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define idgen_backend_number() ((int) MyProcNumber)
#define idgen_backend_proc(n) GetPGProcByNumber(n)
#else
#include "storage/backendid.h"
#include "storage/sinvaladt.h"
#define idgen_backend_number() ((int) MyBackendId)
#define idgen_backend_proc(n) BackendIdGetProc(n)
#endif

/* PG 17 renamed ShmemVariableCache to TransamVariables. */
#include "access/transam.h"
#if PG_VERSION_NUM >= 170000
#define idgen_oldest_xid() (TransamVariables->oldestXid)
#else
#define idgen_oldest_xid() (ShmemVariableCache->oldestXid)
#endif

/*
 * PG 16 let EnableDisableTrigger() name a parent trigger and recurse (15
 * got that later as EnableDisableTriggerNew2(), not in its every minor).
 */
#include "commands/trigger.h"
#if PG_VERSION_NUM >= 160000
#define idgen_enable_trigger(rel, name, lockmode) \
	EnableDisableTrigger(rel, name, InvalidOid, TRIGGER_FIRES_ON_ORIGIN, false, false, lockmode)
#else
#define idgen_enable_trigger(rel, name, lockmode) \
	EnableDisableTrigger(rel, name, TRIGGER_FIRES_ON_ORIGIN, false, lockmode)
#endif

/* PG 16 added soft input errors; before it they are plain errors. */
#if PG_VERSION_NUM < 160000
#define ereturn(context, dummy_value, ...) ereport(ERROR, __VA_ARGS__)
#endif

/* PG 16 exported get_extension_schema(); before it, compat.c reads pg_extension. */
#if PG_VERSION_NUM < 160000
extern Oid	get_extension_schema(Oid ext_oid);
#else
#include "commands/extension.h"
#endif

/*
 * The wait event of a session waiting for synchronous standbys to confirm a
 * high-water mark: named on PG 17 and later (compat.c), "Extension" before.
 */
#include "utils/wait_event.h"
#if PG_VERSION_NUM >= 170000
extern uint32 idgen_wait_event_sync_rep(void);
#else
#define idgen_wait_event_sync_rep() PG_WAIT_EXTENSION
#endif

/* PG 18 made base64's binary side uint8 (the etcd registry's keys and values). */
#if PG_VERSION_NUM >= 180000
#define idgen_b64_encode(src, len, dst, dstlen) pg_b64_encode((const uint8 *) (src), len, dst, dstlen)
#define idgen_b64_decode(src, len, dst, dstlen) pg_b64_decode(src, len, (uint8 *) (dst), dstlen)
#else
#define idgen_b64_encode(src, len, dst, dstlen) pg_b64_encode(src, len, dst, dstlen)
#define idgen_b64_decode(src, len, dst, dstlen) pg_b64_decode(src, len, dst, dstlen)
#endif

#endif							/* IDGEN_COMPAT_H */
