/*
 * stats.h
 *		What the generator does, per layout definition: counts each backend
 *		keeps in its own memory and publishes at transaction end and exit
 *		into a shared table that the idgen_stats view reads.
 */
#ifndef IDGEN_STATS_H
#define IDGEN_STATS_H

#include "port/atomics.h"

#include "base/layout.h"
#include "gen.h"
#include "marks/marks.h"

/* Counts of one layout definition; max_lead_ms is a maximum, not a sum. */
typedef struct StatsCounters
{
	uint64		ids;			/* IDs handed out */
	uint64		shared_ids;		/* of those, made in a shared state */
	uint64		clock_waits;	/* waits for the clock */
	uint64		clock_wait_us;	/* time spent in them */
	uint64		regressions;	/* clock regressions seen */
	uint64		confirm_waits;	/* waits for synchronous standbys */
	int64		max_lead_ms;	/* largest lead of a tick over the clock */
} StatsCounters;

/*
 * A backend's counts for one layout definition, not yet published.  own is
 * the issued counter of the state only this backend writes for the
 * definition (a dedicated slot's or layout's), read at publication: the hot
 * path counts there and nowhere else.
 */
typedef struct StatsLocal StatsLocal;

extern StatsLocal *stats_local(const IdgenLayout *layout, MarkEntry *mark_entry);
extern StatsCounters *stats_pending(StatsLocal *local);
extern void stats_track(StatsLocal *local, pg_atomic_uint64 *own);
extern void stats_untrack(StatsLocal *local, pg_atomic_uint64 *own);

#endif							/* IDGEN_STATS_H */
