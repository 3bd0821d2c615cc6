/*
 * idgen.c
 *		Module entry point: settings and layouts at load time, and the
 *		shared memory hooks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"

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

static void
idgen_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	slots_shmem_request();
	marks_shmem_request();
	clone_shmem_request();
	provenance_shmem_request();
	horizon_shmem_request();
	stats_shmem_request();
	lease_shmem_request();
}

static void
idgen_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	slots_shmem_startup();
	provenance_shmem_startup();	/* before marks_load.c reads its line of idgen_hwm */
	marks_shmem_startup();
	clone_shmem_startup();
	horizon_shmem_startup();
	stats_shmem_startup();
	lease_shmem_startup();
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
	marks_writer_register();
	lease_configure();
	/* a server that cannot generate must not hold a node id another could use */
	if (lease_on && settings_all_valid())
		lease_worker_register();
}
