/*
 * provenance.h
 *		Whether this server's high-water marks cover the IDs its databases
 *		hold: marks lost with their file, or IDs brought from another cluster
 *		by pg_upgrade or a restored dump, make generation refuse until told;
 *		and a server started from a base backup as a primary with its
 *		source's node id warned (clone.c).
 */
#ifndef IDGEN_PROVENANCE_H
#define IDGEN_PROVENANCE_H

#include "base/compat.h"
#include "datatype/timestamp.h"

extern Size provenance_shmem_size(void);
extern void provenance_shmem_request(void);
/* before marks_shmem_init(): registers its line of idgen_hwm with marks.c */
extern void provenance_shmem_init(void *at, bool found);

/* _PG_init: utility.c's watch on rows of idgen's tables past their triggers */
extern void provenance_utility_register(void);

/* generator.c, before a backend first generates */
extern void provenance_require(void);
extern void provenance_set_recheck_hook(void (*hook) (void));

/* provenance_trigger.c, when a row arrives in idgen_system */
extern void provenance_arrived(uint64 system, TimestampTz recorded_at);

/* rmgr.c, replaying a cluster found uncovered on the primary */
extern void provenance_redo_note(uint64 system, Oid db);

/* The server's refusal, in shared memory: set once, never cleared. */
extern const bool *provenance_refusing;
pg_noreturn extern void provenance_refuse(void);

/*
 * Where a tick starts (generator.c), never per ID: once the server refuses,
 * every backend does, whatever it generated before, until a restart.
 */
static inline void
provenance_check_tick(void)
{
	if (unlikely(*(volatile const bool *) provenance_refusing))
		provenance_refuse();
}

/* clone.c: the warning for a clone, and whether the directory kept marks */
extern Size clone_shmem_size(void);
extern void clone_shmem_init(void *at, bool found);
extern void clone_warn_once(void);
extern bool clone_kept_marks(void);

#endif							/* IDGEN_PROVENANCE_H */
