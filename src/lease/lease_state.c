/*
 * lease_state.c
 *		What the lease worker publishes in shared memory (lease.h) and tells
 *		the server log as the lease goes from state to state.
 *
 * The log has one line when renewals of a held lease start failing, one
 * when its fence passes before a renewal succeeded, and one when a renewal
 * succeeds again: a registry that stays down for an hour leaves three
 * lines, not one per attempt.  idgen_node_lease shows every attempt's
 * error.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "lease.h"
#include "lease_state.h"

/* The worker's renewals, as logged. */
static bool held = false;		/* the last renewal succeeded */
static bool failing = false;	/* renewals fail since a held lease */
static bool expired = false;	/* ... and its fence passed */
static TimestampTz held_until = 0;	/* the fence, by the wall clock */

/* Publishes the lease's state; NULL error leaves the old one. */
void
lease_state_publish(int node, LeaseState state, const char *error)
{
	SpinLockAcquire(&lease->mutex);
	lease->state = state;
	lease->node_id = node;
	if (error != NULL)
		strlcpy(lease->error, error, sizeof(lease->error));
	SpinLockRelease(&lease->mutex);
}

/* Microseconds before the fence passes; <= 0: passed. */
static int64
lease_state_left_us(void)
{
	uint64		until = pg_atomic_read_u64(&lease->valid_until_us);

	return until == 0 ? 0 : (int64) until - lease_monotonic_us();
}

void
lease_state_fence_now(void)
{
	pg_atomic_write_u64(&lease->valid_until_us, 0);
	pg_memory_barrier();
	held = false;
}

/* A renewal succeeded: the new ceiling and fence, and the log if it had failed. */
void
lease_state_renewed(int node, int64 ceiling_ms, int64 valid_until_us, TimestampTz valid_until)
{
	/* the ceiling before the fence: a backend may see the new fence only with it */
	pg_atomic_write_u64(&lease->ceiling_ms, (uint64) ceiling_ms);
	pg_write_barrier();
	pg_atomic_write_u64(&lease->valid_until_us, (uint64) valid_until_us);
	SpinLockAcquire(&lease->mutex);
	lease->renewed_at = GetCurrentTimestamp();
	lease->valid_until = valid_until;
	SpinLockRelease(&lease->mutex);
	lease_state_publish(node, LEASE_HELD, "");
	if (failing)
		ereport(LOG,
				(errmsg("idgen: renewed the lease of node id %d again", node),
				 expired ?
				 errdetail("It had expired at %s; IDs are generated again.",
						   timestamptz_to_str(held_until)) :
				 errdetail("It had not expired: IDs were generated throughout.")));
	failing = expired = false;
	held = true;
	held_until = valid_until;
}

/*
 * A renewal failed for want of the registry: the lease runs out on its
 * fence.  Logged when a held lease's renewals start failing.
 */
void
lease_state_renew_failed(int node, const char *error)
{
	lease_state_publish(node, lease_state_left_us() <= 0 ? LEASE_EXPIRED : LEASE_RENEWING, error);
	if (held)
		ereport(LOG,
				(errmsg("idgen: could not renew the lease of node id %d", node),
				 errdetail_internal("%s", error),
				 errhint("This server generates IDs until %s unless a renewal succeeds first.",
						 timestamptz_to_str(held_until))));
	failing = failing || held;
	held = false;
}

/* While renewals fail: logs the lease's end once, when the fence passes. */
void
lease_state_watch_expiry(int node)
{
	if (held || !failing || expired || lease_state_left_us() > 0)
		return;
	expired = true;
	lease_state_publish(node, LEASE_EXPIRED, NULL);
	ereport(LOG,
			(errmsg("idgen: the lease of node id %d expired", node),
			 errdetail("No renewal succeeded before %s; IDs are refused until one does.",
					   timestamptz_to_str(held_until))));
}

/* Another server holds the node id now: fenced for the rest of the server run. */
void
lease_state_lost(int node, const char *error)
{
	lease_state_fence_now();
	lease_state_publish(node, LEASE_LOST, error);
	ereport(LOG,
			(errmsg("idgen: node id %d is no longer leased to this server", node),
			 errdetail_internal("%s", error),
			 errhint("Restart the server to lease another node id.")));
}
