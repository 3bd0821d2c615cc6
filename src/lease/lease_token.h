/*
 * lease_token.h
 *		The node id lease's token file, $PGDATA/idgen_lease_token: the holder
 *		token the registry gave this data directory, and the postmaster
 *		that acquired it.
 */
#ifndef IDGEN_LEASE_TOKEN_H
#define IDGEN_LEASE_TOKEN_H

extern void lease_token_write(const char *token, int node);
extern int	lease_token_read(char *token, size_t size);

#endif							/* IDGEN_LEASE_TOKEN_H */
