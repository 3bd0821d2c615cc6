/*
 * layout_table.h
 *		A table of fixed size in shared memory, keyed by layout definition
 *		(layout_table.c): slots.c's layout states, stats.c's counts.
 */
#ifndef IDGEN_LAYOUT_TABLE_H
#define IDGEN_LAYOUT_TABLE_H

#include "layout.h"

/*
 * What each entry of such a table starts with.  An entry given to another
 * definition gets a new incarnation, so that a backend that remembers an
 * entry and its incarnation knows, under the entry's lock, whether it is
 * still its definition's.
 */
typedef struct LayoutTableEntry
{
	uint64		incarnation;	/* 0 when unused; new for each definition */
	uint32		hash;			/* of key, to skip most comparisons */
	LayoutKey	key;
} LayoutTableEntry;

/* When an entry was last used, in any unit: the least is given up first. */
typedef int64 (*LayoutTableLastUsed) (const LayoutTableEntry *entry);

/* The entries: n of them, stride bytes apart from base. */
typedef struct LayoutTable
{
	void	   *base;
	Size		stride;
	int			n;
	uint64	   *incarnations;	/* entries given to a definition so far */
	LayoutTableLastUsed last_used;
} LayoutTable;

extern LayoutTableEntry *layout_table_find(const LayoutTable *table, const LayoutKey *key,
										   uint32 hash, bool *found);
extern void layout_table_give(const LayoutTable *table, LayoutTableEntry *entry,
							  const LayoutKey *key, uint32 hash);

#endif							/* IDGEN_LAYOUT_TABLE_H */
