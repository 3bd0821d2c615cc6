/*
 * rmgr.h
 *		idgen's WAL resource manager: its records, written by hwm.c (marks)
 *		and horizon.c (prepared transactions) and replayed into them.
 */
#ifndef IDGEN_RMGR_H
#define IDGEN_RMGR_H

#include "access/xlogdefs.h"

extern void rmgr_register(void);
extern XLogRecPtr rmgr_log_mark(const char *layout, int64 epoch_ms, int64 mark_ms,
								int node, int node_bits);
extern void rmgr_log_horizon_prepared(TransactionId xid, int64 ms);

#endif							/* IDGEN_RMGR_H */
