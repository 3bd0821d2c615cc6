/*
 * lease_pg.c
 *		The lease operations (lease_ops.h) on a PostgreSQL registry: the
 *		registry's functions idgen_lease_acquire(), idgen_lease_renew() and
 *		idgen_lease_release() (sql/idgen.sql), called over lease_conn.c.
 */
#include "postgres.h"

#include "lease_conn.h"
#include "lease_ops.h"

static int
pg_acquire(const LeaseAsk *ask, char *token, size_t token_size, int64 *previous_mark,
		   int64 deadline_us, char **err)
{
	char		bits[16],
				sysid[32],
				lease_s[16],
				epoch[32];
	/* the nil UUID: no token yet */
	const char *params[] = {bits, ask->identity, sysid,
		ask->token[0] ? ask->token : "00000000-0000-0000-0000-000000000000", lease_s, epoch};
	char		sqlstate[6];
	PGresult   *r;
	int			node;

	snprintf(bits, sizeof(bits), "%d", ask->node_bits);
	snprintf(sysid, sizeof(sysid), INT64_FORMAT, ask->system_identifier);
	snprintf(lease_s, sizeof(lease_s), "%d", ask->lease_s);
	snprintf(epoch, sizeof(epoch), INT64_FORMAT, ask->epoch_ms);
	r = lease_conn_exec("SELECT node_id, new_token, previous_mark_ms FROM idgen_lease_acquire($1::integer, $2::text, $3::bigint, $4::uuid, $5::integer, $6::bigint)",
						6, params, deadline_us, err, sqlstate);
	if (r == NULL)
		return -1;
	/* the registry kept the leases it could not renew for their holders */
	if (PQgetisnull(r, 0, 0))
	{
		PQclear(r);
		*err = pstrdup("The registry answered no node id this time: it keeps its leases for their holders first, as it answered nothing for a while or lost commits.");
		return -1;
	}
	node = atoi(PQgetvalue(r, 0, 0));
	strlcpy(token, PQgetvalue(r, 0, 1), token_size);
	*previous_mark = (int64) strtoll(PQgetvalue(r, 0, 2), NULL, 10);
	PQclear(r);
	return node;
}

static LeaseCall
pg_renew(int node, const char *token, int lease_s, int64 mark, int64 deadline_us,
		 int64 *ceiling, char **err)
{
	char		node_s[16],
				lease_str[16],
				mark_s[32];
	const char *params[] = {node_s, token, lease_str, mark_s};
	char		sqlstate[6];
	PGresult   *r;

	snprintf(node_s, sizeof(node_s), "%d", node);
	snprintf(lease_str, sizeof(lease_str), "%d", lease_s);
	snprintf(mark_s, sizeof(mark_s), INT64_FORMAT, mark);
	r = lease_conn_exec("SELECT idgen_lease_renew($1::integer, $2::uuid, $3::integer, $4::bigint)", 4, params,
						deadline_us, err, sqlstate);
	if (r == NULL)
		return strcmp(sqlstate, "55000") == 0 ? LEASE_CALL_LOST : LEASE_CALL_FAILED;
	*ceiling = (int64) strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return LEASE_CALL_OK;
}

static bool
pg_release(int node, const char *token, int64 mark, int64 deadline_us, char **err)
{
	char		node_s[16],
				mark_s[32];
	const char *params[] = {node_s, token, mark_s};
	char		sqlstate[6];
	PGresult   *r;

	snprintf(node_s, sizeof(node_s), "%d", node);
	snprintf(mark_s, sizeof(mark_s), INT64_FORMAT, mark);
	r = lease_conn_exec("SELECT idgen_lease_release($1::integer, $2::uuid, $3::bigint)", 3, params,
						deadline_us, err, sqlstate);
	if (r == NULL)
		return false;
	PQclear(r);
	return true;
}

const LeaseOps lease_pg_ops = {
	.acquire = pg_acquire,
	.renew = pg_renew,
	.release = pg_release,
	.close = lease_conn_close,
};
