/*
 * idgen_xlog.h
 *		The records of idgen's WAL resource manager, as heapam_xlog.h has
 *		heap's: each owner inserts its own (marks_xlog.c a layout's mark,
 *		horizon_file.c a prepared transaction's entry, provenance_state.c a
 *		cluster found uncovered); rmgr.c replays and describes them.
 *
 * The resource manager id is IDGEN_RMGR_ID, 171 unless the build says
 * otherwise (make IDGEN_RMGR_ID=N).  It is in PostgreSQL's range for custom
 * resource managers (128 to 255) but not reserved on the project's list of
 * them.  Records carry the id, so a cluster's WAL must be replayed by an
 * idgen built with the id it was written with.
 */
#ifndef IDGEN_XLOG_H
#define IDGEN_XLOG_H

#include "c.h"

#ifndef IDGEN_RMGR_ID
#define IDGEN_RMGR_ID	171
#endif

#define XLOG_IDGEN_MARK 0x10		/* a mark of every node id */
#define XLOG_IDGEN_MARK_NODE 0x20	/* a mark of one node id */
#define XLOG_IDGEN_HORIZON_PREPARED 0x30	/* a prepared transaction's entry */
#define XLOG_IDGEN_HORIZON_PREPARED_DEFAULT 0x40	/* the same, with its default layout's start */
#define XLOG_IDGEN_FOREIGN 0x50		/* a cluster found uncovered in a database */

/* A layout's mark of every node id, as the WAL carries it. */
typedef struct xl_idgen_mark
{
	int64		epoch_ms;		/* the layout's epoch, Unix ms */
	int64		mark_ms;		/* the mark, Unix ms */
	char		layout[NAMEDATALEN];
} xl_idgen_mark;

#define SizeOfIdgenMark (offsetof(xl_idgen_mark, layout) + NAMEDATALEN)

/* A layout's mark for one node id (idgen 1.3 and later). */
typedef struct xl_idgen_mark_node
{
	int64		epoch_ms;
	int64		mark_ms;
	int32		node;			/* idgen.node_id of the IDs below the mark */
	int32		node_bits;		/* idgen.node_bits then */
	char		layout[NAMEDATALEN];
} xl_idgen_mark_node;

#define SizeOfIdgenMarkNode (offsetof(xl_idgen_mark_node, layout) + NAMEDATALEN)

/* A prepared transaction that took IDs, and its horizon floor. */
typedef struct xl_idgen_horizon_prepared
{
	TransactionId xid;
	int64		ms;				/* every ID of it ends at or after this */
} xl_idgen_horizon_prepared;

/* The whole struct, padding included, as records were always written. */
#define SizeOfIdgenHorizonPrepared sizeof(xl_idgen_horizon_prepared)

/*
 * The same entry with where its IDs of the default layout start, which may
 * be above ms while that layout's floor stands above the clock, counted
 * from the primary's epoch (a standby may run another).
 */
typedef struct xl_idgen_horizon_prepared_default
{
	TransactionId xid;
	int64		ms;
	int64		default_ms;		/* every ID of it in the default layout is here or after */
	int64		epoch_ms;		/* the default layout's epoch on the primary */
} xl_idgen_horizon_prepared_default;

#define SizeOfIdgenHorizonPreparedDefault sizeof(xl_idgen_horizon_prepared_default)

/*
 * A cluster whose IDs a database holds and the marks do not cover, as the
 * primary found it: a standby keeps the refusal, also once promoted.
 */
typedef struct xl_idgen_foreign
{
	uint64		system;
	Oid			db;
} xl_idgen_foreign;

#define SizeOfIdgenForeign (offsetof(xl_idgen_foreign, db) + sizeof(Oid))

#endif							/* IDGEN_XLOG_H */
