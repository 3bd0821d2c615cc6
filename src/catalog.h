/*
 * catalog.h
 *		Finding layouts by name: the built-in ones, and those defined in SQL,
 *		kept in the extension's table idgen_layout.
 */
#ifndef IDGEN_CATALOG_H
#define IDGEN_CATALOG_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "layout.h"

#define CATALOG_TABLE "idgen_layout"

extern const IdgenLayout *catalog_resolve(const char *name);
extern uint64 catalog_generation(void);
extern Oid catalog_table(void);
extern bool catalog_row_to_layout(HeapTuple tuple, TupleDesc desc, IdgenLayout *layout,
								  char **name);

#endif							/* IDGEN_CATALOG_H */
