/*
 * lease_token.c
 *		The node id lease's token file, $PGDATA/idgen_lease_token: one line with
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
#include "utils/timestamp.h"

#include "base/durable.h"
#include "lease_token.h"

#define LEASE_FILE		"idgen_lease_token"
#define LEASE_FILE_TMP	"idgen_lease_token.tmp"

/* Replaces the file, durably: the token and node id this server run acquired. */
void
lease_token_write(const char *token, int node)
{
	char	   *data = psprintf("%s %d %d " INT64_FORMAT "\n", token, node,
								(int) PostmasterPid, (int64) PgStartTime);

	durable_replace_file(LEASE_FILE, LEASE_FILE_TMP, data, strlen(data));
}

/* The file's line, as lease_token_write() wrote it. */
typedef struct LeaseTokenLine
{
	char		token[64];
	int			node;
	int			pid;
	int64		started;
	int			fields;			/* how many were read */
} LeaseTokenLine;

static bool
lease_token_line(char *line, bool whole, void *arg)
{
	LeaseTokenLine *t = arg;

	t->fields = sscanf(line, "%63s %d %d " INT64_FORMAT, t->token, &t->node, &t->pid, &t->started);
	return false;				/* one line: the rest is not the file's */
}

/*
 * Reads the token into token ("" when none or unreadable); returns the
 * node id when this server run acquired it (the same postmaster), else -1.
 */
int
lease_token_read(char *token, size_t size)
{
	char		buf[128];
	LeaseTokenLine t = {0};

	token[0] = '\0';
	(void) durable_read_lines(LEASE_FILE, buf, sizeof(buf), lease_token_line, &t);
	if (t.fields < 1)
		return -1;
	/* the registry would refuse every acquire that passes a token not a UUID */
	if (strlen(t.token) != 36 || strspn(t.token, "0123456789abcdefABCDEF-") != 36)
	{
		ereport(LOG,
				(errmsg("idgen: ignoring the unreadable node id lease token in file \"%s\"", LEASE_FILE),
				 errdetail("This server leases a node id as a new holder.")));
		return -1;
	}
	strlcpy(token, t.token, size);
	if (t.fields == 4 && t.pid == (int) PostmasterPid && t.started == (int64) PgStartTime)
		return t.node;
	return -1;
}
