/*
 * catalog.h
 *		Finding layouts by name: the built-in ones, and those defined in SQL,
 *		kept in the extension's table idgen_layout.
 */
#ifndef IDGEN_CATALOG_H
#define IDGEN_CATALOG_H

#include "layout.h"

extern const IdgenLayout *catalog_resolve(const char *name);
extern uint64 catalog_generation(void);
extern Oid catalog_table(void);

#endif							/* IDGEN_CATALOG_H */
