/*
 * layout_defs.h
 *		Finding layouts by name: the built-in ones, and those defined in SQL,
 *		kept in the extension's table idgen_layout.
 */
#ifndef IDGEN_LAYOUT_DEFS_H
#define IDGEN_LAYOUT_DEFS_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "base/layout.h"

#define LAYOUT_DEFS_TABLE "idgen_layout"

extern const IdgenLayout *layout_defs_resolve(const char *name);
extern void layout_defs_set_change_hook(void (*hook) (void));
extern Oid layout_defs_table(void);
extern bool layout_defs_row_to_layout(HeapTuple tuple, TupleDesc desc, IdgenLayout *layout,
									  char **name);

#endif							/* IDGEN_LAYOUT_DEFS_H */
