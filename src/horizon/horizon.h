/*
 * horizon.h
 *		idgen_horizon(): an ID below which every transaction that took, or
 *		will take, an ID from this server has ended.  The one hook into
 *		generation is in step_try(): a compare per call with a backend-local
 *		value, which is PG_INT64_MAX until the transaction's first ID.
 */
#ifndef IDGEN_HORIZON_H
#define IDGEN_HORIZON_H

#include "c.h"

#include "base/capacity.h"

/*
 * The least clock reading (Unix ms) at which this transaction may take an ID
 * without a check: its horizon floor once it took one, PG_INT64_MAX before.
 */
extern int64 horizon_xact_ms;

extern Size horizon_shmem_size(void);
extern void horizon_shmem_request(void);
extern void horizon_shmem_init(void *at, bool found);

extern int64 horizon_enter(int64 now);
extern void horizon_redo_prepared(TransactionId xid, int64 ms, int64 default_ms,
								  int64 epoch_ms);
extern void horizon_capacity(IdgenCapacity *row);

#endif							/* IDGEN_HORIZON_H */
