/*
 * idgen.c
 *		Module entry point: settings and layouts at load time, and the
 *		shared memory hooks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "base/compat.h"
#include "base/layout.h"
#include "base/settings.h"
#include "gen/gen.h"
#include "horizon/horizon.h"
#include "lease/lease.h"
#include "marks/marks.h"
#include "provenance/provenance.h"
#include "rmgr.h"

IDGEN_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * idgen's shared memory is one segment, "idgen" in pg_shmem_allocations:
 * each module owns its struct and says how big it is, and is handed its
 * part, each on a cache line of its own.  Parts are made in this order,
 * under AddinShmemInitLock, in the postmaster at startup and after every
 * crash reinitialisation (and attached in every process under
 * EXEC_BACKEND).  Provenance comes before the marks, whose load hands it its
 * line of idgen_hwm; the clone check after them, as idgen_node says "marks"
 * once idgen_hwm is written; the horizon after them, as its load binds the
 * marks of the default layout.
 */
typedef struct ShmemPart
{
	Size		(*size) (void);
	void		(*init) (void *at, bool found);
} ShmemPart;

static const ShmemPart shmem_parts[] = {
	{slots_shmem_size, slots_shmem_init},
	{provenance_shmem_size, provenance_shmem_init},
	{marks_shmem_size, marks_shmem_init},
	{clone_shmem_size, clone_shmem_init},
	{horizon_shmem_size, horizon_shmem_init},
	{stats_shmem_size, stats_shmem_init},
	{lease_shmem_size, lease_shmem_init},
};

static Size
idgen_shmem_size(void)
{
	Size		size = 0;

	for (size_t i = 0; i < lengthof(shmem_parts); i++)
		size = add_size(size, CACHELINEALIGN(shmem_parts[i].size()));
	return size;
}

static void
idgen_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(idgen_shmem_size());
	/* each module's locks, in a tranche of its own name, as wait events show */
	slots_shmem_request();
	marks_shmem_request();
	provenance_shmem_request();
	horizon_shmem_request();
	stats_shmem_request();
}

static void
idgen_shmem_startup(void)
{
	Size		size = idgen_shmem_size();
	char	   *at;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	at = ShmemInitStruct("idgen", size, &found);
	for (size_t i = 0; i < lengthof(shmem_parts); i++)
	{
		shmem_parts[i].init(at, found);
		at += CACHELINEALIGN(shmem_parts[i].size());
	}
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	settings_define();
	layout_configure(idgen_epoch, idgen_node_bits);
	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = idgen_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = idgen_shmem_startup;
	rmgr_register();
	provenance_utility_register();
	marks_writer_register();
	lease_configure();
	/* a server that cannot generate must not hold a node id another could use */
	if (lease_on && settings_all_valid())
		lease_worker_register();
}
