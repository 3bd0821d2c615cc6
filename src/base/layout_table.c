/*
 * layout_table.c
 *		Finding a layout definition's entry in a table of fixed size in
 *		shared memory, or the entry to give it: an unused one, else the one
 *		used least recently.  The caller holds the lock that guards which
 *		definition each entry holds, exclusively.
 */
#include "postgres.h"

#include "layout_table.h"

static inline LayoutTableEntry *
layout_table_at(const LayoutTable *table, int i)
{
	return (LayoutTableEntry *) ((char *) table->base + i * table->stride);
}

/*
 * The entry of key's definition (*found), or, when it has none, the one to
 * give it with layout_table_give().
 */
LayoutTableEntry *
layout_table_find(const LayoutTable *table, const LayoutKey *key, uint32 hash, bool *found)
{
	LayoutTableEntry *victim = NULL;

	for (int i = 0; i < table->n; i++)
	{
		LayoutTableEntry *e = layout_table_at(table, i);

		if (e->incarnation != 0 && e->hash == hash &&
			memcmp(&e->key, key, sizeof(*key)) == 0)
		{
			*found = true;
			return e;
		}
		if (victim == NULL ||
			(victim->incarnation != 0 &&
			 (e->incarnation == 0 || table->last_used(e) < table->last_used(victim))))
			victim = e;
	}
	*found = false;
	return victim;
}

/* Gives entry to key's definition, in a new incarnation. */
void
layout_table_give(const LayoutTable *table, LayoutTableEntry *entry,
				  const LayoutKey *key, uint32 hash)
{
	entry->key = *key;
	entry->hash = hash;
	entry->incarnation = ++*table->incarnations;
}
