/*
 * slots.c
 *		The worker slots in shared memory: a worker id per generating backend.
 *
 * A backend claims a slot the first time it generates an ID and gives it back
 * when it exits.  Claims and releases take the claim lock; generating does
 * not, because a dedicated slot has a single writer.  The last slot is shared
 * by every backend that finds no dedicated slot free, under its own lock, so
 * running out of slots slows generation down but never fails it.  Layouts
 * whose IDs have no room for a backend's worker id generate in a state per
 * layout definition, each under a lock of its own.  The idgen_workers view
 * (workers_view.c) reports the slots.
 *
 * A layout's shared state belongs to one definition: its name, epoch, time
 * unit, radix, fields and widths.  The same definition in several databases
 * of the server is one state, since no field of its IDs tells the databases
 * apart; a definition changed or dropped and defined again with other values
 * gets another state, so that nothing packed under one definition is handed
 * out under another.
 *
 * Locking:
 *	- claim_lock guards who holds each slot (pid, userid, claimed_at):
 *	  exclusive to claim or release, shared to report.  It is taken alone.
 *	- A dedicated slot's generator state and last_ms are written only
 *	  by its holder, without a lock.  The next holder reads them after a
 *	  release and a claim under claim_lock, which order the accesses.  The
 *	  view copies another holder's state without its lock
 *	  (slots_read_slot): the counters are atomics, each read whole;
 *	  gen.last_ms and gen.clock_high are plain int64, whole on 64-bit
 *	  platforms only, and the two may come from different steps.  The view
 *	  shows them and never decides anything by them, so a value a moment
 *	  old, or torn where loads are 32-bit, costs a wrong row, not an ID.
 *	- shared_slot_lock guards the shared slot's state.  Each layout state's
 *	  own lock guards its generator state; each is held for one step of the
 *	  generator only, so a step that raises a mark (file write and fsync)
 *	  holds up only the backends of that state.
 *	- layout_lock (exclusive) guards which definition each layout state
 *	  holds (key, incarnation, mark entry): it is taken to look a definition up and
 *	  to give a state to another one, and then the state's lock is taken
 *	  under it.  A backend that knows its state's incarnation takes the
 *	  state's lock alone and checks the incarnation under it: a state is
 *	  given to another definition only under its own lock too.  Choosing the
 *	  state to give up reads other states' last_ms without their locks: a
 *	  heuristic, never a decision about IDs.
 *	- Lock order: layout_lock, then a state's lock or shared_slot_lock,
 *	  then marks.c's mark lock (a step may raise a mark: file write, fsync and
 *	  WAL flush under both), then WAL's own.  marks.c never takes a lock
 *	  of these.  Nobody sleeps holding any of them: waits for the clock and for
 *	  synchronous standbys happen after release.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "base/layout.h"
#include "base/layout_table.h"
#include "base/settings.h"
#include "marks/marks.h"
#include "slots.h"

/* Each slot on cache lines of its own: its holder writes it on every call. */
typedef union WorkerSlotPadded
{
	WorkerSlot slot;
	char		pad[TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(WorkerSlot))];
} WorkerSlotPadded;

/*
 * Generator state of a layout definition other than the default, for
 * backends that generate in it without a worker id of their own; kept until
 * another definition needs its place.
 */
typedef struct LayoutState
{
	LayoutTableEntry head;		/* which definition; first, for layout_table.c */
	LWLock	   *lock;			/* guards gen */
	MarkEntry   *mark_entry;	/* the layout's mark, told of the state's end */
	GenState	gen;
} LayoutState;

/* Each state on cache lines of its own: its users write it on every call. */
typedef union LayoutStatePadded
{
	LayoutState state;
	char		pad[TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(LayoutState))];
} LayoutStatePadded;

/*
 * States kept at once.  When all are in use, the one whose newest tick is
 * oldest is given up, and its definition later starts a fresh one after
 * that tick (slots_state_floor), in the next tick at the earliest: a
 * server that keeps more definitions than this busy at once makes at most
 * one ID per tick of each in turn.
 */
#define SLOTS_MAX_LAYOUTS 1024

/*
 * The header, then the layout states and the slots, each array starting on
 * a cache line boundary of its own so that padding each element keeps it
 * off its neighbours' lines (slots_shmem_init() places them).
 */
typedef struct SlotsShared
{
	LWLock	   *claim_lock;		/* slot ownership */
	LWLock	   *shared_slot_lock;	/* generation in the shared slot */
	LWLock	   *layout_lock;	/* which definition each layout state holds */
	uint64		incarnations;	/* layout states given to a definition so far */
	/* idgen_capacity: under claim_lock */
	int64		slots_full;		/* backends that found every slot taken */
	TimestampTz slots_full_at;
	/* idgen_capacity: under layout_lock */
	int64		states_recycled;	/* states given up while in use */
	TimestampTz states_recycled_at;
	int			nslots;
	LayoutStatePadded *layouts; /* [SLOTS_MAX_LAYOUTS] */
	WorkerSlotPadded *slots;	/* [nslots] */
} SlotsShared;

#define SLOTS_TRANCHE "idgen"

static SlotsShared *slots_shm = NULL;

static int
slots_nslots(void)
{
	return 1 << (IDGEN_MACHINE_BITS - idgen_node_bits);
}

/* One spare cache line lets the arrays start on a boundary wherever the block does. */
Size
slots_shmem_size(void)
{
	Size		size = CACHELINEALIGN(sizeof(SlotsShared)) + PG_CACHE_LINE_SIZE;

	size = add_size(size, mul_size(SLOTS_MAX_LAYOUTS, sizeof(LayoutStatePadded)));
	return add_size(size, mul_size(slots_nslots(), sizeof(WorkerSlotPadded)));
}

void
slots_shmem_request(void)
{
	RequestNamedLWLockTranche(SLOTS_TRANCHE, 3 + SLOTS_MAX_LAYOUTS);
}

/* idgen.c's shared memory hook: this module's part of the segment, at. */
void
slots_shmem_init(void *at, bool found)
{
	slots_shm = at;
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(SLOTS_TRANCHE);

		memset(slots_shm, 0, slots_shmem_size());
		slots_shm->layouts = (LayoutStatePadded *)
			CACHELINEALIGN((char *) slots_shm + sizeof(SlotsShared));
		slots_shm->slots = (WorkerSlotPadded *) (slots_shm->layouts + SLOTS_MAX_LAYOUTS);
		slots_shm->claim_lock = &locks[0].lock;
		slots_shm->shared_slot_lock = &locks[1].lock;
		slots_shm->layout_lock = &locks[2].lock;
		for (int i = 0; i < SLOTS_MAX_LAYOUTS; i++)
		{
			slots_shm->layouts[i].state.lock = &locks[3 + i].lock;
			step_state_init(&slots_shm->layouts[i].state.gen);
		}
		slots_shm->nslots = slots_nslots();
		for (int i = 0; i < slots_shm->nslots; i++)
			step_state_init(&slots_shm->slots[i].slot.gen);
	}
}

/* Reading or claiming needs the shared memory of a preloaded idgen. */
void
slots_require(void)
{
	settings_require_preloaded(slots_shm != NULL);
}

int
slots_shared_index(void)
{
	return slots_shm->nslots - 1;
}

/* Gives back a dedicated slot this backend claimed, at its exit. */
void
slots_release_slot(int index)
{
	LWLockAcquire(slots_shm->claim_lock, LW_EXCLUSIVE);
	slots_shm->slots[index].slot.pid = 0;
	LWLockRelease(slots_shm->claim_lock);
}

/*
 * Counts a backend that found every dedicated slot taken (not its tries
 * again each RECLAIM_INTERVAL_MS: again), and logs the first.  The caller
 * holds claim_lock.
 */
static void
slots_note_slots_full(bool again)
{
	if (again)
		return;
	if (slots_shm->slots_full++ == 0)
		ereport(LOG,
				(errmsg("idgen: every worker id is taken; backends without one generate in the shared worker id %d, one at a time",
						slots_shared_index()),
				 errdetail("idgen.node_bits = %d leaves %d worker ids to each node id.",
						   idgen_node_bits, slots_shm->nslots),
				 errhint("Generate IDs from fewer backends at once, for example through a connection pooler.")));
	slots_shm->slots_full_at = GetCurrentTimestamp();
}

/*
 * Claims the first free dedicated slot, or returns NULL when all are taken.
 * The slot keeps its generator state and newest millisecond, from which the
 * new holder starts (generator.c); only the holder's counters start over.
 * The caller gives it back with slots_release_slot(), and must have made
 * sure that it will, exit included, before claiming.  again says that the
 * caller is in the shared slot already, trying for a slot of its own.
 */
WorkerSlot *
slots_claim_slot(int *index, bool again)
{
	WorkerSlot *slot = NULL;
	int			i;

	LWLockAcquire(slots_shm->claim_lock, LW_EXCLUSIVE);
	for (i = 0; i < slots_shared_index(); i++)
	{
		if (slots_shm->slots[i].slot.pid != 0)
			continue;
		slot = &slots_shm->slots[i].slot;
		slot->pid = MyProcPid;
		slot->userid = GetUserId();
		slot->claimed_at = GetCurrentTimestamp();
		step_state_hand_over(&slot->gen);
		*index = i;
		break;
	}
	if (slot == NULL)
		slots_note_slots_full(again);
	LWLockRelease(slots_shm->claim_lock);

	return slot;
}

/* A state whose newest tick is oldest is given up first. */
static int64
slots_state_last_ms(const LayoutTableEntry *entry)
{
	return ((const LayoutState *) entry)->gen.last_ms;
}

/*
 * Counts a state given up for another definition while in use, and logs the
 * first.  The caller holds layout_lock.
 */
static void
slots_note_recycled(void)
{
	if (slots_shm->states_recycled++ == 0)
		ereport(LOG,
				(errmsg("idgen: all %d layout states are in use; the one idle longest is given up for another layout",
						SLOTS_MAX_LAYOUTS),
				 errdetail("Layouts without a worker field for this server generate in a state shared by the server's backends. A layout whose state was given up starts a new one in its next tick.")));
	slots_shm->states_recycled_at = GetCurrentTimestamp();
}

/*
 * Finds or starts the state of a layout definition and returns it locked,
 * noting where it is in *ref.  A state given up for it leaves where it
 * ended with its own layout's mark (marks_retire), for slots_state_floor().
 */
static LayoutState *
slots_lookup_layout(const IdgenLayout *layout, MarkEntry *mark_entry, LayoutStateRef *ref,
					bool *fresh)
{
	LayoutTable table = {
		.base = slots_shm->layouts,
		.stride = sizeof(LayoutStatePadded),
		.n = SLOTS_MAX_LAYOUTS,
		.incarnations = &slots_shm->incarnations,
		.last_used = slots_state_last_ms,
	};
	LayoutKey	key;
	uint32		hash = layout_key(&key, layout);
	LayoutState *state;
	bool		found;

	LWLockAcquire(slots_shm->layout_lock, LW_EXCLUSIVE);
	state = (LayoutState *) layout_table_find(&table, &key, hash, &found);
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	*fresh = !found;
	if (!found)
	{
		if (state->head.incarnation != 0)
		{
			marks_retire(state->mark_entry, state->gen.last_ms);
			slots_note_recycled();
		}
		step_state_init(&state->gen);
		state->mark_entry = mark_entry;
		layout_table_give(&table, &state->head, &key, hash);
	}
	LWLockRelease(slots_shm->layout_lock);
	ref->index = (LayoutStatePadded *) state - slots_shm->layouts;
	ref->incarnation = state->head.incarnation;
	return state;
}

/*
 * Where a recycled state starts: a state just given to a definition
 * knows nothing of the IDs made before, so it starts above the layout's
 * floor and after the newest tick of every state of the layout given up
 * (slots_lookup_layout notes it); a state in use needs the floor only.
 */
static int64
slots_state_floor(MarkEntry *mark_entry, bool fresh)
{
	if (!fresh)
		return marks_floor(mark_entry);
	return Max(marks_floor(mark_entry), marks_retired(mark_entry) + 1);
}

/* The locked state of a layout definition: where *ref says, or looked up. */
static LayoutState *
slots_lock_layout(const IdgenLayout *layout, MarkEntry *mark_entry, LayoutStateRef *ref,
				  bool *fresh)
{
	if (ref->index >= 0)
	{
		LayoutState *state = &slots_shm->layouts[ref->index].state;

		LWLockAcquire(state->lock, LW_EXCLUSIVE);
		if (likely(state->head.incarnation == ref->incarnation))
			return state;
		LWLockRelease(state->lock);	/* given to another definition */
	}
	return slots_lookup_layout(layout, mark_entry, ref, fresh);
}

/*
 * Locks a state the server's backends share and returns it: the default
 * layout's shared slot when layout is NULL, else the state of the layout's
 * definition, which *ref remembers for the next call.  *floor is where the
 * state must start (slots_state_floor): the caller applies it before
 * the step.  The caller unlocks with slots_unlock_state(), passing ref.
 */
GenState *
slots_lock_state(const IdgenLayout *layout, MarkEntry *mark_entry, LayoutStateRef *ref,
				 int64 *floor)
{
	GenState   *gen;
	bool		fresh = false;

	if (layout == NULL)
	{
		LWLockAcquire(slots_shm->shared_slot_lock, LW_EXCLUSIVE);
		gen = &slots_shm->slots[slots_shared_index()].slot.gen;
	}
	else
		gen = &slots_lock_layout(layout, mark_entry, ref, &fresh)->gen;
	*floor = slots_state_floor(mark_entry, fresh);
	return gen;
}

void
slots_unlock_state(const LayoutStateRef *ref)
{
	LWLockRelease(ref == NULL ? slots_shm->shared_slot_lock :
				  slots_shm->layouts[ref->index].state.lock);
}

/* The rows of idgen_capacity for the worker ids and the layout states. */
void
slots_capacity(IdgenCapacity *slots, IdgenCapacity *states)
{
	slots_require();
	slots->name = "worker_ids";
	slots->setting = "idgen.node_bits";
	slots->capacity = slots_shared_index();
	slots->in_use = 0;
	LWLockAcquire(slots_shm->claim_lock, LW_SHARED);
	for (int i = 0; i < slots_shared_index(); i++)
		if (slots_shm->slots[i].slot.pid != 0)
			slots->in_use++;
	slots->overflows = slots_shm->slots_full;
	slots->last_overflow = slots_shm->slots_full_at;
	LWLockRelease(slots_shm->claim_lock);

	states->name = "layout_states";
	states->setting = NULL;
	states->capacity = SLOTS_MAX_LAYOUTS;
	states->in_use = 0;
	LWLockAcquire(slots_shm->layout_lock, LW_SHARED);
	for (int i = 0; i < SLOTS_MAX_LAYOUTS; i++)
		if (slots_shm->layouts[i].state.head.incarnation != 0)
			states->in_use++;
	states->overflows = slots_shm->states_recycled;
	states->last_overflow = slots_shm->states_recycled_at;
	LWLockRelease(slots_shm->layout_lock);
}

int
slots_slot_count(void)
{
	return slots_shm->nslots;
}

/*
 * A copy of slot index, for the idgen_workers view: who holds it is
 * consistent; the state is the holder's, read without its lock (see
 * Locking above), the counters each whole (an atomic read).
 */
void
slots_read_slot(int index, WorkerSlot *copy)
{
	WorkerSlot *slot = &slots_shm->slots[index].slot;

	LWLockAcquire(slots_shm->claim_lock, LW_SHARED);
	*copy = *slot;
	pg_atomic_init_u64(&copy->gen.issued, pg_atomic_read_u64(&slot->gen.issued));
	pg_atomic_init_u64(&copy->gen.regressions, pg_atomic_read_u64(&slot->gen.regressions));
	pg_atomic_init_u64(&copy->gen.waits, pg_atomic_read_u64(&slot->gen.waits));
	LWLockRelease(slots_shm->claim_lock);
}
