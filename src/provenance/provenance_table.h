/*
 * provenance_table.h
 *		A database's table idgen_system, read and written without SQL, for
 *		provenance.c.
 */
#ifndef IDGEN_PROVENANCE_TABLE_H
#define IDGEN_PROVENANCE_TABLE_H

#include "datatype/timestamp.h"

typedef struct ProvenanceRow
{
	uint64		system;			/* a cluster's system identifier */
	TimestampTz recorded_at;
	int64		epoch_ms;		/* its default layout's epoch; PG_INT64_MIN: not said */
} ProvenanceRow;

extern Oid	provenance_table_oid(void);
extern int	provenance_table_read(ProvenanceRow **rows);
extern int64 provenance_table_epoch_lead(void);
extern bool provenance_table_is_self(const ProvenanceRow *row, int64 epoch_ms);
extern void provenance_table_record_self(void (*lost) (void), int64 epoch_ms);

#endif							/* IDGEN_PROVENANCE_TABLE_H */
