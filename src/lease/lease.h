/*
 * lease.h
 *		Node ids leased from a registry (idgen.node_registry: a database, or
 *		etcd): the lease as shared memory publishes it, what backends check
 *		before they generate and where a tick starts, and the "idgen node
 *		lease" worker that acquires and renews it (lease_worker.c, which talks
 *		to the registry through lease_ops.h and keeps its token in
 *		lease_token.c).
 */
#ifndef IDGEN_LEASE_H
#define IDGEN_LEASE_H

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/spin.h"

/* Where the lease is. */
typedef enum LeaseState
{
	LEASE_ACQUIRING,			/* no node id yet */
	LEASE_HELD,					/* renewed in time */
	LEASE_RENEWING,				/* held, but the last renewal failed */
	LEASE_EXPIRED,				/* the fence passed before a renewal succeeded */
	LEASE_LOST,					/* another server holds the node id now */
} LeaseState;

/*
 * The lease, written by the worker alone.  valid_until_us and ceiling_ms
 * are atomics that backends read where a tick starts; the rest is read and
 * written under mutex.  node_id is set once per server run: a server that
 * lost its node id does not generate again until restarted, as its
 * backends' states were made under the old lease.
 */
typedef struct LeaseShared
{
	pg_atomic_uint64 valid_until_us;	/* lease_monotonic_us(); 0: not valid */
	pg_atomic_uint64 ceiling_ms;	/* ticks must end at or below it */
	slock_t		mutex;
	int			node_id;		/* -1 until first leased */
	LeaseState	state;
	TimestampTz acquired_at;
	TimestampTz renewed_at;
	TimestampTz valid_until;	/* the fence, by the wall clock */
	int64		previous_mark_ms;	/* the previous holder's, at acquire */
	char		error[1024];	/* why not held, or the last renewal's failure */
} LeaseShared;

extern LeaseShared *lease;
/* idgen.node_registry is set in this server: every tick start is checked */
extern bool lease_on;
extern bool lease_fence_off;	/* idgen.lease_test_unsafe = fence */
extern bool lease_ceiling_off;	/* idgen.lease_test_unsafe = ceiling */
extern bool lease_floor_off;	/* idgen.lease_test_unsafe = floor */
extern bool lease_history_off;	/* idgen.lease_test_unsafe = history */

extern void lease_configure(void);
extern Size lease_shmem_size(void);
extern void lease_shmem_init(void *at, bool found);
extern void lease_require(void);
extern void lease_check_tick_slow(int64 tick_ms, int64 tick_len);
extern int64 lease_monotonic_us(void);
extern int64 lease_previous_mark(void);
extern const char *lease_registry_display(void);
extern void lease_worker_register(void);

/*
 * Where a tick starts (generator.c), never per ID: the lease must still be
 * valid on this server's monotonic clock, and the tick must end below the
 * mark the registry holds for this lease.
 */
static inline void
lease_check_tick(int64 tick_ms, int64 tick_len)
{
	if (unlikely(lease_on))
		lease_check_tick_slow(tick_ms, tick_len);
}

#endif							/* IDGEN_LEASE_H */
