/*
 * lease_ops.h
 *		What the lease worker (lease_worker.c) asks of a registry, whatever
 *		kind: a PostgreSQL database (lease_pg.c) or etcd (lease_etcd.c).
 *		Every call has a deadline on the monotonic clock, and says why it
 *		failed in *err.
 */
#ifndef IDGEN_LEASE_OPS_H
#define IDGEN_LEASE_OPS_H

/* What a renewal came to. */
typedef enum LeaseCall
{
	LEASE_CALL_OK,
	LEASE_CALL_FAILED,			/* for want of the registry: try again */
	LEASE_CALL_LOST,			/* another server holds the node id now */
} LeaseCall;

/* Who asks for a node id, and how. */
typedef struct LeaseAsk
{
	int			node_bits;
	const char *identity;		/* host:port data directory, for people */
	int64		system_identifier;
	const char *token;			/* the data directory's, "" when none */
	int			lease_s;
	int64		epoch_ms;
} LeaseAsk;

typedef struct LeaseOps
{
	/*
	 * A node id no live lease holds, with the new token into token and the
	 * mark of its previous holders; -1 with *err when none this time.
	 */
	int			(*acquire) (const LeaseAsk *ask, char *token, size_t token_size,
							int64 *previous_mark, int64 deadline_us, char **err);
	/* Renews the lease and reports mark; *ceiling is the mark kept. */
	LeaseCall	(*renew) (int node, const char *token, int lease_s, int64 mark,
						  int64 deadline_us, int64 *ceiling, char **err);
	/* At shutdown, with the highest mark of the IDs made. */
	bool		(*release) (int node, const char *token, int64 mark, int64 deadline_us,
							char **err);
	void		(*close) (void);
} LeaseOps;

extern const LeaseOps lease_pg_ops;
extern const LeaseOps lease_etcd_ops;

#endif							/* IDGEN_LEASE_OPS_H */
