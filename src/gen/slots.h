/*
 * slots.h
 *		The worker slots in shared memory: one per generating backend, plus
 *		one shared, lock-protected slot for backends that find none free,
 *		and the shared generator states of layouts generated without a
 *		worker.  ("registry" is the lease database's word, lease/.)
 */
#ifndef IDGEN_SLOTS_H
#define IDGEN_SLOTS_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#include "gen.h"
#include "marks/marks.h"
#include "step.h"

/*
 * A worker id.  Its holder writes gen and last_ms (the shared slot's holders
 * under its lock); they outlive the holder, so that the next holder of the
 * worker id starts, in every layout, after the newest tick used under it.
 */
typedef struct WorkerSlot
{
	GenState	gen;			/* the default layout's state */
	int64		last_ms;		/* newest Unix ms used here in any layout */
	pid_t		pid;			/* holder, 0 when free */
	Oid			userid;			/* holder's user */
	TimestampTz claimed_at;
} WorkerSlot;

extern void slots_require(void);
extern int	slots_shared_index(void);
extern WorkerSlot *slots_claim_slot(int *index, bool again);
extern void slots_release_slot(int index);
extern int	slots_slot_count(void);
extern void slots_read_slot(int index, WorkerSlot *copy);
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

extern GenState *slots_lock_state(const IdgenLayout *layout, MarkEntry *mark_entry,
								  LayoutStateRef *ref, int64 *floor);
extern void slots_unlock_state(const LayoutStateRef *ref);

#endif							/* IDGEN_SLOTS_H */
