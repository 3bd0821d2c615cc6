/*
 * rmgr.c
 *		idgen's custom WAL resource manager: redo, desc and identify, as
 *		test_custom_rmgrs has them.
 *
 * Three kinds of record (idgen_xlog.h): a layout's high-water mark, which
 * marks_xlog.c writes so that a promoted standby resumes above its old
 * primary's IDs; a prepared transaction's horizon entry, which
 * horizon_file.c writes so that a standby holds it after promotion; and a
 * cluster found uncovered, which provenance_state.c writes so that a
 * standby refuses as its primary does.  Redo hands each record's contents
 * to its owner.
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "base/idgen_xlog.h"
#include "horizon/horizon.h"
#include "marks/marks.h"
#include "provenance/provenance.h"
#include "rmgr.h"

/* Either mark record, as a mark of a node id (MARKS_ANY_NODE for the older one). */
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
		rec->node = MARKS_ANY_NODE;
		rec->node_bits = 0;
		memcpy(rec->layout, old.layout, NAMEDATALEN);
	}
	else
		return false;
	rec->layout[NAMEDATALEN - 1] = '\0';
	return true;
}

/*
 * Either record of a prepared transaction's horizon entry; false when the
 * record is not one.  The older says nothing of the default layout: its
 * IDs are taken to start at ms, in the standby's epoch, as before.
 */
static bool
rmgr_read_horizon_prepared(XLogReaderState *record, xl_idgen_horizon_prepared_default *rec)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_idgen_horizon_prepared old;

	if (info == XLOG_IDGEN_HORIZON_PREPARED_DEFAULT &&
		XLogRecGetDataLen(record) == SizeOfIdgenHorizonPreparedDefault)
		memcpy(rec, XLogRecGetData(record), SizeOfIdgenHorizonPreparedDefault);
	else if (info == XLOG_IDGEN_HORIZON_PREPARED &&
			 XLogRecGetDataLen(record) == SizeOfIdgenHorizonPrepared)
	{
		memcpy(&old, XLogRecGetData(record), SizeOfIdgenHorizonPrepared);
		rec->xid = old.xid;
		rec->ms = rec->default_ms = old.ms;
		rec->epoch_ms = PG_INT64_MIN;
	}
	else
		return false;
	return true;
}

/* A cluster found uncovered; false when the record is not one. */
static bool
rmgr_read_foreign(XLogReaderState *record, xl_idgen_foreign *rec)
{
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != XLOG_IDGEN_FOREIGN ||
		XLogRecGetDataLen(record) != SizeOfIdgenForeign)
		return false;
	memcpy(rec, XLogRecGetData(record), SizeOfIdgenForeign);
	return true;
}

static void
rmgr_redo(XLogReaderState *record)
{
	xl_idgen_mark_node rec;
	xl_idgen_horizon_prepared_default hrec;
	xl_idgen_foreign frec;

	if (rmgr_read_foreign(record, &frec))
		provenance_redo_note(frec.system, frec.db);
	else if (rmgr_read_horizon_prepared(record, &hrec))
		horizon_redo_prepared(hrec.xid, hrec.ms, hrec.default_ms, hrec.epoch_ms);
	else if (rmgr_read_mark(record, &rec))
		marks_redo_mark(rec.layout, rec.epoch_ms, rec.mark_ms, rec.node, rec.node_bits);
	else
		elog(PANIC, "idgen_redo: unknown op code %u or length %u",
			 XLogRecGetInfo(record) & ~XLR_INFO_MASK, (unsigned) XLogRecGetDataLen(record));
}

static void
rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	xl_idgen_mark_node rec;
	xl_idgen_horizon_prepared_default hrec;
	xl_idgen_foreign frec;

	if (rmgr_read_foreign(record, &frec))
		appendStringInfo(buf, "system " UINT64_FORMAT " database %u", frec.system, frec.db);
	else if (rmgr_read_horizon_prepared(record, &hrec))
	{
		appendStringInfo(buf, "xid %u horizon %lld (Unix ms)", hrec.xid, (long long) hrec.ms);
		if (hrec.epoch_ms != PG_INT64_MIN)
			appendStringInfo(buf, " default layout %lld epoch %lld (Unix ms)",
							 (long long) hrec.default_ms, (long long) hrec.epoch_ms);
	}
	else if (rmgr_read_mark(record, &rec))
	{
		appendStringInfo(buf, "layout \"%s\" mark %lld epoch %lld (Unix ms)", rec.layout,
						 (long long) rec.mark_ms, (long long) rec.epoch_ms);
		if (rec.node != MARKS_ANY_NODE)
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
		case XLOG_IDGEN_HORIZON_PREPARED_DEFAULT:	/* with the default layout's start */
			return "HORIZON_PREPARED";
		case XLOG_IDGEN_FOREIGN:
			return "FOREIGN";
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
