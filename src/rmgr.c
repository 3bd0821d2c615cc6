/*
 * rmgr.c
 *		idgen's custom WAL resource manager: the records, their sizes, and
 *		redo, desc and identify, as test_custom_rmgrs has them.
 *
 * Two kinds of record: a layout's high-water mark (hwm.c), so that a
 * promoted standby resumes above its old primary's IDs, and a prepared
 * transaction's horizon entry (horizon.c), so that a standby holds it after
 * promotion.  Redo hands each record's contents to its owner.
 *
 * The resource manager id is IDGEN_RMGR_ID, 171 unless the build says
 * otherwise (make IDGEN_RMGR_ID=N).  It is in PostgreSQL's range for custom
 * resource managers (128 to 255) but not reserved on the project's list of
 * them.  Records carry the id, so a cluster's WAL must be replayed by an
 * idgen built with the id it was written with.
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "horizon.h"
#include "hwm.h"
#include "rmgr.h"

#ifndef IDGEN_RMGR_ID
#define IDGEN_RMGR_ID	171
#endif

#define XLOG_IDGEN_MARK 0x10		/* a mark of every node id */
#define XLOG_IDGEN_MARK_NODE 0x20	/* a mark of one node id */
#define XLOG_IDGEN_HORIZON_PREPARED 0x30	/* a prepared transaction's entry */

/* A layout's mark, as the WAL carries it. */
typedef struct xl_idgen_mark
{
	int64		epoch_ms;		/* the layout's epoch, Unix ms */
	int64		mark_ms;		/* the mark, Unix ms */
	char		layout[NAMEDATALEN];
} xl_idgen_mark;

#define SizeOfIdgenMark (offsetof(xl_idgen_mark, layout) + NAMEDATALEN)

/* A layout's mark for one node id, as the WAL carries it. */
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
 * Logs a layout's mark, of one node id or, with HWM_ANY_NODE, of every node
 * id; returns the record's end for the caller to flush.
 */
XLogRecPtr
rmgr_log_mark(const char *layout, int64 epoch_ms, int64 mark_ms, int node, int node_bits)
{
	xl_idgen_mark rec = {0};
	xl_idgen_mark_node nrec = {0};

	XLogBeginInsert();
	if (node != HWM_ANY_NODE)
	{
		nrec.epoch_ms = epoch_ms;
		nrec.mark_ms = mark_ms;
		nrec.node = node;
		nrec.node_bits = node_bits;
		strlcpy(nrec.layout, layout, NAMEDATALEN);
		XLogRegisterData((char *) &nrec, SizeOfIdgenMarkNode);
		return XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_MARK_NODE);
	}
	rec.epoch_ms = epoch_ms;
	rec.mark_ms = mark_ms;
	strlcpy(rec.layout, layout, NAMEDATALEN);
	XLogRegisterData((char *) &rec, SizeOfIdgenMark);
	return XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_MARK);
}

void
rmgr_log_horizon_prepared(TransactionId xid, int64 ms)
{
	xl_idgen_horizon_prepared rec = {xid, ms};

	XLogBeginInsert();
	XLogRegisterData((char *) &rec, SizeOfIdgenHorizonPrepared);
	(void) XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_HORIZON_PREPARED);
}

/* Either mark record, as a mark of a node id (HWM_ANY_NODE for the older one). */
static bool
rmgr_read_mark(XLogReaderState *record, xl_idgen_mark_node *rec)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_idgen_mark old;

	if (info == XLOG_IDGEN_MARK_NODE && XLogRecGetDataLen(record) == SizeOfIdgenMarkNode)
		memcpy(rec, XLogRecGetData(record), SizeOfIdgenMarkNode);
	else if (info == XLOG_IDGEN_MARK && XLogRecGetDataLen(record) == SizeOfIdgenMark)
	{
		memcpy(&old, XLogRecGetData(record), SizeOfIdgenMark);
		rec->epoch_ms = old.epoch_ms;
		rec->mark_ms = old.mark_ms;
		rec->node = HWM_ANY_NODE;
		rec->node_bits = 0;
		memcpy(rec->layout, old.layout, NAMEDATALEN);
	}
	else
		return false;
	rec->layout[NAMEDATALEN - 1] = '\0';
	return true;
}

/* A prepared transaction's horizon entry; false when the record is not one. */
static bool
rmgr_read_horizon_prepared(XLogReaderState *record, xl_idgen_horizon_prepared *rec)
{
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != XLOG_IDGEN_HORIZON_PREPARED ||
		XLogRecGetDataLen(record) != SizeOfIdgenHorizonPrepared)
		return false;
	memcpy(rec, XLogRecGetData(record), SizeOfIdgenHorizonPrepared);
	return true;
}

static void
rmgr_redo(XLogReaderState *record)
{
	xl_idgen_mark_node rec;
	xl_idgen_horizon_prepared hrec;

	if (rmgr_read_horizon_prepared(record, &hrec))
		horizon_redo_prepared(hrec.xid, hrec.ms);
	else if (rmgr_read_mark(record, &rec))
		hwm_redo_mark(rec.layout, rec.epoch_ms, rec.mark_ms, rec.node, rec.node_bits);
	else
		elog(PANIC, "idgen_redo: unknown op code %u or length %u",
			 XLogRecGetInfo(record) & ~XLR_INFO_MASK, (unsigned) XLogRecGetDataLen(record));
}

static void
rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	xl_idgen_mark_node rec;
	xl_idgen_horizon_prepared hrec;

	if (rmgr_read_horizon_prepared(record, &hrec))
		appendStringInfo(buf, "xid %u horizon %lld (Unix ms)", hrec.xid, (long long) hrec.ms);
	else if (rmgr_read_mark(record, &rec))
	{
		appendStringInfo(buf, "layout \"%s\" mark %lld epoch %lld (Unix ms)", rec.layout,
						 (long long) rec.mark_ms, (long long) rec.epoch_ms);
		if (rec.node != HWM_ANY_NODE)
			appendStringInfo(buf, " node %d node_bits %d", rec.node, rec.node_bits);
	}
}

static const char *
rmgr_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_IDGEN_MARK:
		case XLOG_IDGEN_MARK_NODE:	/* the same mark, of one node id */
			return "MARK";
		case XLOG_IDGEN_HORIZON_PREPARED:
			return "HORIZON_PREPARED";
	}
	return NULL;
}

static RmgrData idgen_rmgr = {
	.rm_name = "idgen",
	.rm_redo = rmgr_redo,
	.rm_desc = rmgr_desc,
	.rm_identify = rmgr_identify,
};

/* During preload. */
void
rmgr_register(void)
{
	RegisterCustomRmgr(IDGEN_RMGR_ID, &idgen_rmgr);
}
