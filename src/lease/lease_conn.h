/*
 * lease_conn.h
 *		The lease worker's libpq conversation with the registry
 *		(idgen.node_registry): one connection, every wait on the latch with
 *		a deadline.
 */
#ifndef IDGEN_LEASE_CONN_H
#define IDGEN_LEASE_CONN_H

#include "libpq-fe.h"

extern PGresult *lease_conn_exec(const char *sql, int nparams, const char *const *params,
								 int64 deadline_us, char **err, char *sqlstate);
extern void lease_conn_close(void);

#endif							/* IDGEN_LEASE_CONN_H */
