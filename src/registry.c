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
 * layout, under one more lock.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "layout.h"
#include "registry.h"

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
	GenState	gen;
} LayoutState;

/* Layouts that can be generated in without a worker id, per server run */
#define REGISTRY_MAX_LAYOUTS 64

typedef struct RegistryShared
{
	LWLock	   *claim_lock;		/* slot ownership */
	LWLock	   *shared_slot_lock;	/* generation in the shared slot */
	LWLock	   *layout_lock;	/* generation in layout states */
	LayoutState layouts[REGISTRY_MAX_LAYOUTS];
	int			nslots;
	RegistrySlotPadded slots[FLEXIBLE_ARRAY_MEMBER];
} RegistryShared;

#define REGISTRY_TRANCHE "idgen"

static RegistryShared *registry = NULL;
static int	my_slot = -1;

static int
registry_nslots(void)
{
	return 1 << (IDGEN_MACHINE_BITS - idgen_node_bits_setting);
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

bool
registry_available(void)
{
	return registry != NULL;
}

int
registry_slot_count(void)
{
	return registry->nslots;
}

int
registry_shared_index(void)
{
	return registry->nslots - 1;
}

static void
registry_release_slot(int code, Datum arg)
{
	if (my_slot < 0)
		return;
	LWLockAcquire(registry->claim_lock, LW_EXCLUSIVE);
	registry->slots[my_slot].slot.pid = 0;
	LWLockRelease(registry->claim_lock);
	my_slot = -1;
}

/*
 * Claims the first free dedicated slot, or returns NULL when all are taken.
 * The slot keeps its generator state, marked as having used up its newest
 * millisecond, so the new holder's first ID falls in a later millisecond
 * than any ID the previous holder made.
 */
RegistrySlot *
registry_claim_slot(int *index)
{
	static bool release_registered = false;
	RegistrySlot *slot = NULL;
	int			i;

	Assert(my_slot < 0);
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
		slot->gen.seq = LAYOUT_MASK(IDGEN_SEQ_BITS);
		slot->gen.clock_behind = false;
		slot->gen.issued = 0;
		slot->gen.regressions = 0;
		slot->gen.waits = 0;
		my_slot = i;
		break;
	}
	LWLockRelease(registry->claim_lock);

	if (slot == NULL)
		return NULL;
	*index = my_slot;
	return slot;
}

GenState *
registry_lock_shared_slot(void)
{
	LWLockAcquire(registry->shared_slot_lock, LW_EXCLUSIVE);
	return &registry->slots[registry_shared_index()].slot.gen;
}

void
registry_unlock_shared_slot(void)
{
	LWLockRelease(registry->shared_slot_lock);
}

/* A consistent copy of a slot's ownership, for reporting. */
void
registry_read_slot(int index, RegistrySlot *copy)
{
	LWLockAcquire(registry->claim_lock, LW_SHARED);
	*copy = registry->slots[index].slot;
	LWLockRelease(registry->claim_lock);
}

/*
 * Locks the layout states and returns the named layout's, starting one on
 * first use.  The caller unlocks with registry_unlock_layout_state().
 */
GenState *
registry_lock_layout_state(const char *layout_name)
{
	LayoutState *free_state = NULL;

	LWLockAcquire(registry->layout_lock, LW_EXCLUSIVE);
	for (int i = 0; i < REGISTRY_MAX_LAYOUTS; i++)
	{
		LayoutState *state = &registry->layouts[i];

		if (strcmp(state->name, layout_name) == 0)
			return &state->gen;
		if (state->name[0] == '\0' && free_state == NULL)
			free_state = state;
	}
	if (free_state == NULL)
	{
		LWLockRelease(registry->layout_lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many idgen layouts generated in on this server"),
				 errdetail("Up to %d layouts can be generated in without a worker id between restarts.",
						   REGISTRY_MAX_LAYOUTS),
				 errhint("Restart the server to forget layouts no longer used.")));
	}
	strlcpy(free_state->name, layout_name, NAMEDATALEN);
	return &free_state->gen;
}

void
registry_unlock_layout_state(void)
{
	LWLockRelease(registry->layout_lock);
}
