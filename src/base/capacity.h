/*
 * capacity.h
 *		The shared tables of fixed size and how full they are, for the view
 *		idgen_capacity (capacity.c): each module fills the rows of its own.
 */
#ifndef IDGEN_CAPACITY_H
#define IDGEN_CAPACITY_H

#include "datatype/timestamp.h"

/*
 * A table: its entries, those in use, and how often one was wanted when
 * none was free (what then happens is the table's own way, documented with
 * it: sharing, recycling, refusing).
 */
typedef struct IdgenCapacity
{
	const char *name;
	const char *setting;		/* what sizes it; NULL when fixed */
	int64		capacity;
	int64		in_use;
	int64		overflows;
	TimestampTz last_overflow;	/* 0 when never */
} IdgenCapacity;

#endif							/* IDGEN_CAPACITY_H */
