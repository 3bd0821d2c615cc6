/*
 * horizon_shared.h
 *		The horizon's shared state, for the files that keep it: horizon.c
 *		(the transactions' side and the computation), horizon_file.c
 *		(the shared memory, the prepared transactions and the file
 *		idgen_horizon) and horizon_sql.c (the SQL functions).  Everyone else
 *		goes through horizon.h.
 *
 * Locking: lock guards prepared, nprepared, mark and the file.  floor,
 * returned and oldest[] are atomics, read and written without it.
 */
#ifndef IDGEN_HORIZON_SHARED_H
#define IDGEN_HORIZON_SHARED_H

#include "port/atomics.h"
#include "storage/lwlock.h"

#include "horizon.h"

#define HORIZON_FILE		"idgen_horizon"
#define HORIZON_NONE		PG_UINT64_MAX

typedef struct HorizonPrepared
{
	TransactionId xid;
	int64		ms;				/* Q: every ID of it ends at or after this */
	int64		default_ms;		/* and every ID of the default layout here */
	int64		epoch_ms;		/* the default layout's epoch then */
	bool		earlier_run;	/* read from the file at startup, or replayed */
} HorizonPrepared;

typedef struct HorizonShared
{
	LWLock	   *lock;
	pg_atomic_uint64 floor;
	pg_atomic_uint64 returned;	/* the largest horizon returned this run */
	int64		mark;			/* durable; floor stays below it */
	int64		default_epoch;	/* the default layout's epoch (idgen.epoch) */
	int64		default_floor;	/* its IDs of every node id start above it */
	int64		file_floor;		/* default_floor as the file recorded it */
	bool		broken;			/* the file could not be read */
	int			nbackends;
	int			max_prepared;
	int			nprepared;
	int			nearlier;		/* entries of earlier runs; rises only in recovery */
	int64		refused;		/* entries that found the table full */
	TimestampTz refused_at;
	HorizonPrepared *prepared;	/* [max_prepared], after oldest[] */
	pg_atomic_uint64 oldest[FLEXIBLE_ARRAY_MEMBER];
} HorizonShared;

extern HorizonShared *hz;

/* horizon.c */
extern void horizon_require(void);
extern int64 horizon_compute(void);

/* horizon_file.c; horizon_write_file and horizon_prune_prepared under lock */
extern void horizon_write_file(int64 mark, const HorizonPrepared *extra);
extern void horizon_prune_prepared(void);
extern void horizon_remember_prepared(TransactionId xid, int64 ms);

#endif							/* IDGEN_HORIZON_SHARED_H */
