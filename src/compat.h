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

/* PG 15 added custom WAL resource managers. */
#if PG_VERSION_NUM >= 150000
#define IDGEN_HAVE_CUSTOM_RMGR 1
#endif

#endif							/* IDGEN_COMPAT_H */
