/*
 * clone.c
 *		Warns when the server was started as a primary straight from a base
 *		backup with the node id of the server it was copied from.
 *
 * Such a clone generates with its source's idgen.node_id, so the two can
 * make the same IDs, and nothing says so until someone runs
 * idgen_check_nodes().  PostgreSQL (15 and later, which have no exclusive
 * backups) finds a backup_label in the data directory only in a copy made by
 * a base backup, and renames it to backup_label.old early in the first
 * startup; with standby.signal the copy is a standby (which cannot generate,
 * and resumes above its primary's marks when promoted), with recovery.signal
 * a point-in-time restore.  With neither, the copy is starting as a primary.
 *
 * The file idgen_node in the data directory holds the node id the directory
 * last ran with, so a clone given a node id of its own is not warned about,
 * and since 1.5 a second line, "marks": the directory keeps idgen_hwm
 * (provenance.c).
 * The warning goes to the server log at startup, and once to the client of
 * the first session that generates.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"

#include "base/durable.h"
#include "base/node.h"
#include "base/settings.h"
#include "lease/lease.h"
#include "provenance.h"

#define CLONE_NODE_FILE		"idgen_node"
#define CLONE_NODE_TMP_FILE "idgen_node.tmp"

typedef struct CloneShared
{
	pg_atomic_uint32 pending;	/* the first generating session is to be warned */
	int			source_node;	/* the node id of the copied server, -1 unknown */
} CloneShared;

static CloneShared *clone = NULL;

Size
clone_shmem_size(void)
{
	return sizeof(CloneShared);
}

static bool
clone_file_exists(const char *name)
{
	struct stat st;

	return stat(name, &st) == 0;
}

/* The first line with something on it: the node id, or -1 if it is none. */
static bool
clone_read_node_line(char *line, bool whole, void *arg)
{
	int		   *node = arg;

	if (strspn(line, " \t\r\n\v\f") == strlen(line))
		return true;
	if (sscanf(line, "%d", node) != 1)
		*node = -1;
	return false;
}

/* The node id the data directory last ran with, or -1. */
static int
clone_read_node(void)
{
	char		line[32];
	int			node = -1;

	(void) durable_read_lines(CLONE_NODE_FILE, line, sizeof(line), clone_read_node_line, &node);
	return node;
}

static bool
clone_marks_line(char *line, bool whole, void *arg)
{
	*(bool *) arg |= whole && strcmp(line, "marks") == 0;
	return true;
}

/*
 * Whether the data directory kept idgen_hwm when it last ran: read before
 * this start rewrites idgen_node.
 */
bool
clone_kept_marks(void)
{
	char		line[32];
	bool		kept = false;

	(void) durable_read_lines(CLONE_NODE_FILE, line, sizeof(line), clone_marks_line, &kept);
	return kept;
}

static void
clone_write_node(void)
{
	/* marks_load.c writes idgen_hwm at every start, before this */
	/* a leased node id is not this directory's: -1, unknown */
	char	   *data = psprintf("%d\nmarks\n", lease_on ? -1 : node_id());

	(void) durable_write_file(CLONE_NODE_FILE, CLONE_NODE_TMP_FILE, data, strlen(data), LOG);
	pfree(data);
}

static void
clone_report(int elevel)
{
	ereport(elevel,
			(errmsg("idgen: this server was started from a base backup as a primary with idgen.node_id %d",
					node_id()),
			 clone->source_node == node_id() ?
			 errdetail("The server it was copied from generated IDs with the same node id; if it still does, or does again, both can make the same IDs.") :
			 errdetail("The server it was copied from may have the same node id; if so, and it still generates, both can make the same IDs."),
			 errhint("Give this server an idgen.node_id of its own and restart it, or check the servers with idgen_check_nodes().")));
}

/* At postmaster start, before the startup process renames backup_label. */
void
clone_shmem_init(void *at, bool found)
{
	clone = at;
	if (!found)
	{
		pg_atomic_init_u32(&clone->pending, 0);
		clone->source_node = clone_read_node();
		/* a copy that leases is another holder to the registry */
		if (!lease_on && clone_file_exists("backup_label") &&
			!clone_file_exists("standby.signal") && !clone_file_exists("recovery.signal"))
		{
			if (clone->source_node == -1 || clone->source_node == node_id())
			{
				pg_atomic_write_u32(&clone->pending, 1);
				clone_report(WARNING);
			}
			else
				ereport(LOG,
						(errmsg("idgen: this server was started from a base backup as a primary with idgen.node_id %d, the copied server's was %d",
								node_id(), clone->source_node)));
		}
		clone_write_node();
	}
}

/* Once per server: the first session that generates sees the warning. */
void
clone_warn_once(void)
{
	if (unlikely(pg_atomic_read_u32(&clone->pending) != 0) &&
		pg_atomic_exchange_u32(&clone->pending, 0) != 0)
		clone_report(WARNING);
}
