/*
 * lease_state.h
 *		What the lease worker publishes in shared memory (lease.h) and
 *		tells the server log as the lease goes from state to state.
 */
#ifndef IDGEN_LEASE_STATE_H
#define IDGEN_LEASE_STATE_H

#include "lease.h"

extern void lease_state_publish(int node, LeaseState state, const char *error);
extern void lease_state_fence_now(void);
extern void lease_state_renewed(int node, int64 ceiling_ms, int64 valid_until_us,
								TimestampTz valid_until);
extern void lease_state_renew_failed(int node, const char *error);
extern void lease_state_watch_expiry(int node);
extern void lease_state_lost(int node, const char *error);

#endif							/* IDGEN_LEASE_STATE_H */
