/*
 * node.h
 *		This server's node id now: idgen.node_id, or the node id the lease
 *		took from the registry (lease/).  Planning, the marks and messages
 *		ask here; the lease tells it where the node id changes, and no one
 *		writes the setting's variable.
 */
#ifndef IDGEN_NODE_H
#define IDGEN_NODE_H

extern int	node_id(void);
extern void node_id_leased(int node_id);

#endif							/* IDGEN_NODE_H */
