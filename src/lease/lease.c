/*
 * lease.c
 *		A node id leased from a registry database, as backends see it: the
 *		lease in shared memory, the checks before generating and where a
 *		tick starts, and the idgen_node_lease view.  The worker that
 *		acquires and renews the lease is lease_worker.c; the protocol is in
 *		docs/design.md ("Node-id leases").
 *
 * Two bounds keep a holder within its lease, both checked where a tick
 * starts, never per ID:
 *
 *	- the fence: valid_until_us, on this server's monotonic clock, is the
 *	  renewal's send time plus the lease less a margin, so it passes before
 *	  the registry, which counts from when it received the renewal, can
 *	  give the node id to another server;
 *	- the ceiling: every tick ends at or below the mark the registry holds
 *	  for the lease, and the registry makes the node id's next holder start
 *	  above that mark, whatever the two servers' clocks say.
 *
 * A tick started before the fence passed may be finished: its IDs are
 * below the ceiling, so they cannot repeat the next holder's.
 */
#include "postgres.h"

#include <time.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/conninfo.h"
#include "base/etcd_url.h"
#include "base/node.h"
#include "base/settings.h"
#include "lease.h"

LeaseShared *lease = NULL;
bool		lease_on = false;
bool		lease_fence_off = false;
bool		lease_ceiling_off = false;
bool		lease_floor_off = false;
bool		lease_history_off = false;

/* Where the registry is, without its password: set in _PG_init. */
static char *registry_display = NULL;
/* Loaded by shared_preload_libraries: only then is the node id known. */
static bool lease_preloaded = false;

PG_FUNCTION_INFO_V1(idgen_node_lease);

/*
 * The fence's clock: monotonic, and on Linux counting time suspended too,
 * so that a host that slept past the lease wakes fenced.
 */
#ifdef CLOCK_BOOTTIME
#define LEASE_CLOCK CLOCK_BOOTTIME
#else
#define LEASE_CLOCK CLOCK_MONOTONIC
#endif

int64
lease_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(LEASE_CLOCK, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* At load time, after the settings: whether this server leases. */
void
lease_configure(void)
{
	int			unsafe;

	lease_preloaded = process_shared_preload_libraries_in_progress;
	lease_on = process_shared_preload_libraries_in_progress &&
		idgen_node_registry != NULL && idgen_node_registry[0] != '\0';
	if (!lease_on)
		return;
	registry_display = MemoryContextStrdup(TopMemoryContext,
										   conninfo_describe(idgen_node_registry));
	unsafe = settings_lease_unsafe();
	lease_fence_off = (unsafe & SETTINGS_UNSAFE_FENCE) != 0;
	lease_ceiling_off = (unsafe & SETTINGS_UNSAFE_CEILING) != 0;
	lease_floor_off = (unsafe & SETTINGS_UNSAFE_FLOOR) != 0;
	lease_history_off = (unsafe & SETTINGS_UNSAFE_HISTORY) != 0;
	if (unsafe != 0)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("idgen: node id leases run without their %s, for tests",
						idgen_lease_test_unsafe),
				 errdetail("This server may repeat IDs another server makes, or start a node id below the IDs it made under another."),
				 errhint("Remove %s from postgresql.conf.", "idgen.lease_test_unsafe")));
}

const char *
lease_registry_display(void)
{
	return registry_display;
}

Size
lease_shmem_size(void)
{
	return lease_on ? sizeof(LeaseShared) : 0;
}

/*
 * Made at startup and after every crash reinitialisation: the lease is
 * acquired again, so nothing generates until the worker has it.
 */
void
lease_shmem_init(void *at, bool found)
{
	if (!lease_on)
		return;
	lease = at;
	if (!found)
	{
		memset(lease, 0, sizeof(LeaseShared));
		pg_atomic_init_u64(&lease->valid_until_us, 0);
		pg_atomic_init_u64(&lease->ceiling_ms, 0);
		SpinLockInit(&lease->mutex);
		lease->node_id = -1;
		lease->state = LEASE_ACQUIRING;
		strlcpy(lease->error, settings_all_valid() ?
				"The lease worker has not reached the registry yet." :
				"No node id is leased while idgen's settings are invalid.",
				sizeof(lease->error));
	}
}

typedef struct LeaseView
{
	int			node_id;
	LeaseState	state;
	TimestampTz acquired_at;
	TimestampTz renewed_at;
	TimestampTz valid_until;
	int64		previous_mark_ms;
	char		error[sizeof(((LeaseShared *) 0)->error)];
} LeaseView;

static void
lease_read(LeaseView *v)
{
	SpinLockAcquire(&lease->mutex);
	v->node_id = lease->node_id;
	v->state = lease->state;
	v->acquired_at = lease->acquired_at;
	v->renewed_at = lease->renewed_at;
	v->valid_until = lease->valid_until;
	v->previous_mark_ms = lease->previous_mark_ms;
	memcpy(v->error, lease->error, sizeof(v->error));
	SpinLockRelease(&lease->mutex);
}

/* Microseconds the lease has left on the monotonic clock; <= 0: none. */
static int64
lease_left_us(void)
{
	uint64		until = pg_atomic_read_u64(&lease->valid_until_us);

	return until == 0 ? 0 : (int64) until - lease_monotonic_us();
}

static pg_noreturn void
lease_refuse(const LeaseView *v, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("idgen holds no node id lease from registry \"%s\"", registry_display),
			 errdetail_internal("%s%s%s", why, v->error[0] ? " " : "", v->error),
			 v->state == LEASE_LOST ?
			 errhint("Restart the server to lease another node id.") :
			 errhint("IDs are generated once the registry grants or renews the lease; the view idgen_node_lease shows its state.")));
}

/*
 * Before a backend first generates: the lease must be valid, and its node
 * id becomes this backend's node id (node.h), for every plan and mark.
 */
void
lease_require(void)
{
	LeaseView	v;

	if (!lease_on)
		return;
	settings_require_preloaded(lease != NULL);
	lease_read(&v);
	if (v.node_id < 0)
		lease_refuse(&v, "No node id has been leased yet.");
	if (v.state == LEASE_LOST)
		lease_refuse(&v, psprintf("Node id %d was leased to another server.", v.node_id));
	if (!lease_fence_off && lease_left_us() <= 0)
		lease_refuse(&v, psprintf("The lease of node id %d ran out before it could be renewed.",
								  v.node_id));
	node_id_leased(v.node_id);
}

/* lease_check_tick(), when this server leases. */
void
lease_check_tick_slow(int64 tick_ms, int64 tick_len)
{
	LeaseView	v;

	/* the fence after the mark the caller reserved, on any CPU */
	pg_read_barrier();

	if ((lease_fence_off || lease_left_us() > 0) &&
		(lease_ceiling_off ||
		 tick_ms + tick_len <= (int64) pg_atomic_read_u64(&lease->ceiling_ms)))
		return;
	lease_read(&v);
	if (v.state == LEASE_LOST)
		lease_refuse(&v, psprintf("Node id %d was leased to another server.", v.node_id));
	if (!lease_fence_off && lease_left_us() <= 0)
		lease_refuse(&v, psprintf("The lease of node id %d ran out before it could be renewed.",
								  v.node_id));
	lease_refuse(&v, psprintf("The tick at %s is beyond the mark the registry holds for the lease of node id %d.",
							  timestamptz_to_str(clock_ms_to_timestamptz(tick_ms)), v.node_id));
}

/*
 * The mark the previous holders of the leased node id reported (Unix ms),
 * which IDs under it start above; -1 when this server holds no lease.
 */
int64
lease_previous_mark(void)
{
	LeaseView	v;

	if (!lease_on || lease == NULL)
		return -1;
	lease_read(&v);
	return v.node_id < 0 || v.acquired_at == 0 ? -1 : v.previous_mark_ms;
}

static const char *
lease_state_name(LeaseState s)
{
	switch (s)
	{
		case LEASE_ACQUIRING:
			return "acquiring";
		case LEASE_HELD:
			return "held";
		case LEASE_RENEWING:
			return "renewing";
		case LEASE_EXPIRED:
			return "expired";
		case LEASE_LOST:
			return "lost";
	}
	return "unknown";
}

/*
 * idgen_node_lease(): where this server's node id comes from, and, when
 * leased, the lease.
 */
Datum
idgen_node_lease(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11] = {0};
	bool		nulls[11] = {0};
	LeaseView	v;
	int64		left;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	for (int i = 0; i < (int) lengthof(nulls); i++)
		nulls[i] = true;
	nulls[0] = nulls[2] = false;
	values[2] = Int32GetDatum(idgen_node_bits);
	if (!lease_on)
	{
		values[0] = CStringGetTextDatum("setting");
		values[1] = Int32GetDatum(node_id());
		nulls[1] = !lease_preloaded || !settings_all_valid();
		return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
	}
	settings_require_preloaded(lease != NULL);
	lease_read(&v);
	left = lease_left_us();
	values[0] = CStringGetTextDatum(etcd_url_is(idgen_node_registry) ? "etcd" : "lease");
	nulls[1] = v.node_id < 0;
	values[1] = Int32GetDatum(v.node_id);
	nulls[3] = nulls[4] = false;
	values[3] = CStringGetTextDatum(registry_display);
	/* the fence passed, whether or not the worker has noticed */
	if ((v.state == LEASE_HELD || v.state == LEASE_RENEWING) && left <= 0)
		v.state = LEASE_EXPIRED;
	values[4] = CStringGetTextDatum(lease_state_name(v.state));
	if (v.node_id >= 0 && v.state != LEASE_LOST && v.valid_until != 0)
	{
		nulls[5] = nulls[6] = false;
		values[5] = TimestampTzGetDatum(v.valid_until);
		values[6] = Float8GetDatum(Max(left, 0) / 1000000.0);
	}
	if (v.acquired_at != 0)
	{
		nulls[7] = nulls[8] = nulls[9] = false;
		values[7] = TimestampTzGetDatum(v.acquired_at);
		values[8] = TimestampTzGetDatum(v.renewed_at);
		values[9] = TimestampTzGetDatum(clock_ms_to_timestamptz(v.previous_mark_ms));
	}
	if (v.error[0] != '\0')
	{
		nulls[10] = false;
		values[10] = CStringGetTextDatum(v.error);
	}
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}
