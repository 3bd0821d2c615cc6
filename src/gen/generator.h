/*
 * generator.h
 *		How this backend is attached to a worker id, and the loop that drives
 *		the step in a state (generator.c).
 */
#ifndef IDGEN_GENERATOR_H
#define IDGEN_GENERATOR_H

#include "plan.h"
#include "slots.h"

/*
 * How this backend is attached to a worker id.  The invariant, by mode:
 *
 *	UNATTACHED: it has not generated yet; nothing else here is meaningful.
 *	DEDICATED: it holds worker slot number worker, slot; gen is &slot->gen,
 *	  which only this backend writes; the slot is given back at exit.
 *	SHARED: every dedicated slot was taken; worker is the shared slot's
 *	  number, slot and gen are NULL, and it generates in the shared slot
 *	  under its lock, trying for a dedicated slot every RECLAIM_INTERVAL_MS.
 *
 * In both attached modes default_target packs worker.  gen != NULL is the
 * hot path's one test: it holds exactly in DEDICATED.  Claiming a slot
 * (UNATTACHED or SHARED to DEDICATED; DEDICATED lasts until exit) runs the
 * claim hook, so that a layout's plan made before is made again
 * (layout_gen.c).
 */
typedef enum AttachMode
{
	ATTACH_UNATTACHED,
	ATTACH_DEDICATED,
	ATTACH_SHARED,
} AttachMode;

typedef struct Attachment
{
	GenState   *gen;			/* &slot->gen when DEDICATED and checked, else NULL */
	GenTarget	default_target;
	AttachMode	mode;
	WorkerSlot *slot;			/* when DEDICATED */
	int64		worker;			/* worker slot number, when attached */
	int64		last_claim_attempt_ms;
	int64		shared_last_ms; /* when SHARED: end of the newest tick it used */
	bool		release_set;	/* the exit callback that gives slot back is set */
	bool		recheck;		/* provenance_require() again before the next ID */
} Attachment;

extern const Attachment *generator_attachment(void);
extern void generator_set_claim_hook(void (*hook) (void));
extern void generator_enter(void);
extern void generator_start_as_holder(GenState *st, const GenTarget *t);
extern int64 generator_next_default(int64 n);
extern int64 generator_next_target(GenState *own, LayoutStateRef *shared,
								   const GenTarget *t, int64 n);

#endif							/* IDGEN_GENERATOR_H */
