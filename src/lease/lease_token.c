/*
 * lease_token.c
 *		The node id lease's token file, $PGDATA/idgen_lease: one line with
 *		the holder token the registry gave at the last acquire, the node id,
 *		and the pid and start time of the postmaster that acquired it.
 *
 * The token goes with the data directory, so the same server restarting
 * presents it and gets its node id back; the registry rotates it at every
 * acquire, so an older copy of the directory presents a stale one.  The
 * postmaster's pid and start time tell a worker restarted within the same
 * server run (after it or a backend crashed), which renews the lease, from
 * a copy started by another postmaster, which must acquire.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "base/durable.h"
#include "lease_token.h"

#define LEASE_FILE		"idgen_lease"
#define LEASE_FILE_TMP	"idgen_lease.tmp"

/* Replaces the file, durably: the token and node id this server run acquired. */
void
lease_token_write(const char *token, int node)
{
	char	   *data = psprintf("%s %d %d " INT64_FORMAT "\n", token, node,
								(int) PostmasterPid, (int64) PgStartTime);

	durable_replace_file(LEASE_FILE, LEASE_FILE_TMP, data, strlen(data));
}

/*
 * Reads the token into token ("" when none or unreadable); returns the
 * node id when this server run acquired it (the same postmaster), else -1.
 */
int
lease_token_read(char *token, size_t size)
{
	FILE	   *f = AllocateFile(LEASE_FILE, "r");
	char		found[64];
	int			node;
	int			pid;
	int64		started;
	int			n;

	token[0] = '\0';
	if (f == NULL)
		return -1;
	n = fscanf(f, "%63s %d %d " INT64_FORMAT, found, &node, &pid, &started);
	FreeFile(f);
	if (n < 1)
		return -1;
	/* the registry would refuse every acquire that passes a token not a UUID */
	if (strlen(found) != 36 || strspn(found, "0123456789abcdefABCDEF-") != 36)
	{
		ereport(LOG,
				(errmsg("idgen: ignoring the unreadable node id lease token in file \"%s\"", LEASE_FILE),
				 errdetail("This server leases a node id as a new holder.")));
		return -1;
	}
	strlcpy(token, found, size);
	if (n == 4 && pid == (int) PostmasterPid && started == (int64) PgStartTime)
		return node;
	return -1;
}
