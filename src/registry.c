/*
 * registry.c
 *		Shared memory registry of worker ids.
 *
 * A backend claims a slot the first time it generates an ID and gives it back
 * when it exits.  Claims and releases take the registry lock; generating does
 * not, because a dedicated slot has a single writer.  The last slot is shared
 * by every backend that finds no dedicated slot free, under its own lock, so
 * running out of slots slows generation down but never fails it.  Layouts
 * whose IDs have no room for a backend's worker id generate in a state per
 * layout, under one more lock.  The idgen_workers view reports the slots.
 *
 * Locking:
 *	- claim_lock guards who holds each slot (pid, userid, claimed_at):
 *	  exclusive to claim or release, shared to report.  It is taken alone.
 *	- A dedicated slot's generator state and last_ms are written only
 *	  by its holder, without a lock.  The next holder reads them after a
 *	  release and a claim under claim_lock, which order the accesses.  The
 *	  view reads another holder's counters without its lock: they are
 *	  statistics, aligned 64-bit words that are never used for a decision,
 *	  and may be a moment old.
 *	- shared_slot_lock guards the shared slot's state, layout_lock the table
 *	  of layout states; each is held for one step of the generator only.
 *	- Lock order: a registry lock, then hwm.c's mark lock (a step may raise a
 *	  mark: file write, fsync and WAL flush under both), then WAL's own.
 *	  hwm.c never takes a registry lock.  Nobody sleeps holding any of them:
 *	  waits for the clock and for synchronous standbys happen after release.
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "hwm.h"
#include "layout.h"
#include "registry.h"
#include "settings.h"

/* Each slot on cache lines of its own: its holder writes it on every call. */
typedef union RegistrySlotPadded
{
	RegistrySlot slot;
	char		pad[TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(RegistrySlot))];
} RegistrySlotPadded;

/*
 * Generator state of a layout other than the default, for backends that
 * generate in it without a worker id of their own; kept for the server's
 * lifetime, as the shared slot's is.
 */
typedef struct LayoutState
{
	char		name[NAMEDATALEN];	/* "" when unused */
	uint64		last_used;		/* layout_uses when last locked */
	HwmEntry   *hwm;			/* the layout's mark, told of the state's end */
	GenState	gen;
} LayoutState;

/*
 * States kept at once; when all are in use, the least recently used is
 * given up, and its layout later starts a fresh one after the newest tick
 * of the one given up (hwm_retire).
 */
#define REGISTRY_MAX_LAYOUTS 64

typedef struct RegistryShared
{
	LWLock	   *claim_lock;		/* slot ownership */
	LWLock	   *shared_slot_lock;	/* generation in the shared slot */
	LWLock	   *layout_lock;	/* generation in layout states */
	uint64		layout_uses;	/* locks of layout states so far */
	LayoutState layouts[REGISTRY_MAX_LAYOUTS];
	int			nslots;
	RegistrySlotPadded slots[FLEXIBLE_ARRAY_MEMBER];
} RegistryShared;

#define REGISTRY_TRANCHE "idgen"

static RegistryShared *registry = NULL;

PG_FUNCTION_INFO_V1(idgen_workers);
static int	my_slot_index = -1;

static int
registry_nslots(void)
{
	return 1 << (IDGEN_MACHINE_BITS - idgen_node_bits);
}

Size
registry_shmem_size(void)
{
	return add_size(offsetof(RegistryShared, slots),
					mul_size(registry_nslots(), sizeof(RegistrySlotPadded)));
}

void
registry_shmem_request(void)
{
	RequestAddinShmemSpace(registry_shmem_size());
	RequestNamedLWLockTranche(REGISTRY_TRANCHE, 3);
}

/* Runs in the postmaster at startup and after every crash reinitialisation. */
void
registry_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	registry = ShmemInitStruct("idgen registry", registry_shmem_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(REGISTRY_TRANCHE);

		memset(registry, 0, registry_shmem_size());
		registry->claim_lock = &locks[0].lock;
		registry->shared_slot_lock = &locks[1].lock;
		registry->layout_lock = &locks[2].lock;
		registry->nslots = registry_nslots();
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Reading or claiming needs the shared memory of a preloaded idgen. */
void
registry_require(void)
{
	if (registry == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via shared_preload_libraries"),
				 errhint("Add idgen to shared_preload_libraries in postgresql.conf and restart the server.")));
}

int
registry_shared_index(void)
{
	return registry->nslots - 1;
}

static void
registry_release_slot(int code, Datum arg)
{
	if (my_slot_index < 0)
		return;
	LWLockAcquire(registry->claim_lock, LW_EXCLUSIVE);
	registry->slots[my_slot_index].slot.pid = 0;
	LWLockRelease(registry->claim_lock);
	my_slot_index = -1;
}

/*
 * Claims the first free dedicated slot, or returns NULL when all are taken.
 * The slot keeps its generator state and newest millisecond, from which the
 * new holder starts (generator.c); only the holder's counters start over.
 */
RegistrySlot *
registry_claim_slot(int *index)
{
	static bool release_registered = false;
	RegistrySlot *slot = NULL;
	int			i;

	Assert(my_slot_index < 0);
	/* Before claiming: a slot must never be held without its release set up. */
	if (!release_registered)
	{
		on_shmem_exit(registry_release_slot, (Datum) 0);
		release_registered = true;
	}
	LWLockAcquire(registry->claim_lock, LW_EXCLUSIVE);
	for (i = 0; i < registry_shared_index(); i++)
	{
		if (registry->slots[i].slot.pid != 0)
			continue;
		slot = &registry->slots[i].slot;
		slot->pid = MyProcPid;
		slot->userid = GetUserId();
		slot->claimed_at = GetCurrentTimestamp();
		slot->gen.clock_behind = false;
		slot->gen.issued = 0;
		slot->gen.regressions = 0;
		slot->gen.waits = 0;
		my_slot_index = i;
		break;
	}
	LWLockRelease(registry->claim_lock);

	if (slot == NULL)
		return NULL;
	*index = my_slot_index;
	return slot;
}

/*
 * Locks a state the server's backends share and returns it: the default
 * layout's shared slot when layout_name is NULL, else the named layout's
 * state.  *fresh says that the state was started now, knowing nothing of the
 * layout's earlier IDs; a layout state given up for it tells its layout's
 * mark where it ended.  The caller unlocks with registry_unlock_state().
 */
GenState *
registry_lock_state(const char *layout_name, HwmEntry *hwm, bool *fresh)
{
	LayoutState *state = NULL;

	*fresh = false;
	if (layout_name == NULL)
	{
		LWLockAcquire(registry->shared_slot_lock, LW_EXCLUSIVE);
		return &registry->slots[registry_shared_index()].slot.gen;
	}
	LWLockAcquire(registry->layout_lock, LW_EXCLUSIVE);
	for (int i = 0; i < REGISTRY_MAX_LAYOUTS; i++)
	{
		LayoutState *candidate = &registry->layouts[i];

		if (strcmp(candidate->name, layout_name) == 0)
		{
			state = candidate;
			break;
		}
		if (state == NULL || candidate->last_used < state->last_used)
			state = candidate;	/* unused ones have last_used 0 */
	}
	*fresh = strcmp(state->name, layout_name) != 0;
	if (*fresh)
	{
		if (state->name[0] != '\0')
			hwm_retire(state->hwm, state->gen.last_ms);
		memset(state, 0, sizeof(*state));
		strlcpy(state->name, layout_name, NAMEDATALEN);
		state->hwm = hwm;
	}
	state->last_used = ++registry->layout_uses;
	return &state->gen;
}

void
registry_unlock_state(const char *layout_name)
{
	LWLockRelease(layout_name == NULL ? registry->shared_slot_lock : registry->layout_lock);
}

#define WORKERS_COLS 10

static void
workers_add_row(Tuplestorestate *store, TupleDesc tupdesc, int index,
				const RegistrySlot *slot, bool is_shared, bool privileged)
{
	Datum		values[WORKERS_COLS];
	bool		nulls[WORKERS_COLS] = {false};
	bool		visible = privileged || (!is_shared && slot->userid == GetUserId());

	values[0] = Int32GetDatum(index);
	values[1] = BoolGetDatum(is_shared);
	values[2] = Int32GetDatum(slot->pid);
	nulls[2] = is_shared || !visible;
	values[3] = TimestampTzGetDatum(slot->claimed_at);
	nulls[3] = is_shared || !visible;
	values[4] = TimestampTzGetDatum(clock_ms_to_timestamptz(slot->gen.last_ms));
	nulls[4] = !visible || slot->gen.last_ms == 0;
	values[5] = Int64GetDatum(Max(slot->gen.last_ms - slot->gen.clock_high, 0));
	nulls[5] = !visible || slot->gen.last_ms == 0;
	values[6] = Int64GetDatum((int64) slot->gen.issued);
	values[7] = Int64GetDatum((int64) slot->gen.regressions);
	values[8] = Int64GetDatum((int64) slot->gen.waits);
	values[9] = BoolGetDatum(slot->gen.clock_behind);
	for (int i = 6; i < WORKERS_COLS; i++)
		nulls[i] = !visible;
	tuplestore_putvalues(store, tupdesc, values, nulls);
}

/* One row per claimed slot, and one for the shared slot. */
Datum
idgen_workers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		privileged = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	int			shared = -1;

	registry_require();
	InitMaterializedSRF(fcinfo, 0);
	shared = registry_shared_index();
	for (int i = 0; i < registry->nslots; i++)
	{
		RegistrySlot slot;

		/* Ownership is consistent; the counters are the holder's, unlocked. */
		LWLockAcquire(registry->claim_lock, LW_SHARED);
		slot = registry->slots[i].slot;
		LWLockRelease(registry->claim_lock);
		if (i != shared && slot.pid == 0)
			continue;
		workers_add_row(rsinfo->setResult, rsinfo->setDesc, i, &slot,
						i == shared, privileged);
	}
	return (Datum) 0;
}
