/*
 * registry.h
 *		The worker registry in shared memory: one slot per generating backend,
 *		plus one shared, lock-protected slot for backends that find none free,
 *		and the shared generator states of layouts generated without a worker.
 */
#ifndef IDGEN_REGISTRY_H
#define IDGEN_REGISTRY_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#include "hwm.h"

/*
 * Generator state of one worker id.  Only the slot's holder writes it (the
 * shared slot's holders under its lock); it outlives the holder, so the
 * next holder of the worker id starts after the newest millisecond used.
 */
typedef struct GenState
{
	int64		last_ms;		/* Unix ms of the newest ID made here */
	int64		clock_high;		/* highest clock reading trusted here */
	int64		ms_base;		/* the ID of last_ms with sequence 0 */
	int64		seq;			/* sequence of the newest ID in last_ms */
	bool		clock_behind;	/* riding out a clock regression */
	uint64		issued;			/* IDs made by the current holder */
	uint64		regressions;	/* clock regressions seen by the holder */
	uint64		waits;			/* times the holder slept for the clock */
} GenState;

typedef struct RegistrySlot
{
	GenState	gen;			/* in the default layout */
	int64		other_last_ms;	/* newest ms used here in any other layout */
	pid_t		pid;			/* holder, 0 when free */
	Oid			userid;			/* holder's user */
	TimestampTz claimed_at;
} RegistrySlot;

extern Size registry_shmem_size(void);
extern void registry_shmem_request(void);
extern void registry_shmem_startup(void);

extern void registry_require(void);
extern int	registry_shared_index(void);
extern RegistrySlot *registry_claim_slot(int *index);
extern GenState *registry_lock_shared_slot(void);
extern void registry_unlock_shared_slot(void);
extern GenState *registry_lock_layout_state(const char *layout_name, HwmEntry *hwm, bool *fresh);
extern void registry_unlock_layout_state(void);

#endif							/* IDGEN_REGISTRY_H */
