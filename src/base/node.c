/*
 * node.c
 *		This server's node id now, for every module that puts it in an ID,
 *		a mark or a message (node.h).
 *
 * idgen.node_id is PGC_POSTMASTER and stays what the configuration says,
 * as SHOW has it.  A leasing server generates under the node id its lease
 * holds instead: its lease worker once it acquires one (or finds it in the
 * token file), and each backend before it first generates (lease.c).
 */
#include "postgres.h"

#include "node.h"
#include "settings.h"

/* The node id leased, as this process last took it; -1 while none. */
static int	leased_node_id = -1;

int
node_id(void)
{
	return leased_node_id >= 0 ? leased_node_id : idgen_node_id;
}

void
node_id_leased(int node_id)
{
	leased_node_id = node_id;
}
