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

#include "base/capacity.h"
#include "marks/hwm.h"
#include "step.h"

/*
 * A worker id.  Its holder writes gen and last_ms (the shared slot's holders
 * under its lock); they outlive the holder, so that the next holder of the
 * worker id starts, in every layout, after the newest tick used under it.
 */
typedef struct RegistrySlot
{
	GenState	gen;			/* the default layout's state */
	int64		last_ms;		/* newest Unix ms used here in any layout */
	pid_t		pid;			/* holder, 0 when free */
	Oid			userid;			/* holder's user */
	TimestampTz claimed_at;
} RegistrySlot;

extern void registry_shmem_request(void);
extern void registry_shmem_startup(void);

extern void registry_require(void);
extern int	registry_shared_index(void);
extern RegistrySlot *registry_claim_slot(int *index, bool again);
extern void registry_release_slot(int index);
extern int	registry_slot_count(void);
extern void registry_read_slot(int index, RegistrySlot *copy);
/*
 * A backend's memory of where a layout definition's shared state is: its
 * index and the incarnation it had, so that finding it again needs no
 * search while nobody has given it up for another definition.
 */
typedef struct LayoutStateRef
{
	int			index;			/* -1 until looked up */
	uint64		incarnation;
} LayoutStateRef;

#define LAYOUT_STATE_REF_INIT {-1, 0}

extern GenState *registry_lock_state(const IdgenLayout *layout, HwmEntry *mark_entry,
									 LayoutStateRef *ref, int64 *floor);
extern void registry_unlock_state(const LayoutStateRef *ref);
extern void registry_capacity(IdgenCapacity *slots, IdgenCapacity *states);

#endif							/* IDGEN_REGISTRY_H */
