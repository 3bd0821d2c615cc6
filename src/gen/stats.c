/*
 * stats.c
 *		The idgen_stats view: what the generator did, per layout definition
 *		(layout.h's LayoutKey, as slots.c keeps shared states by).
 *
 * Counting costs the hot path nothing: idgen_next() already counts issued
 * IDs in its own state; waits, regressions and new ticks are counted where
 * they happen, off the per-ID path.  A backend adds its counts to a shared
 * entry at transaction end and at exit, so counts are exact once the
 * sessions that generated have ended or finished their transactions.
 *
 * The shared table holds STATS_MAX_ENTRIES definitions.  When it is full, a
 * definition new to it takes the place of the one published least recently,
 * whose counts are lost; the new entry's stats_reset says since when it
 * counts.  Entries live until the server restarts (or crash reinitialises
 * shared memory).
 *
 * Locking: stats->lock guards which definition each entry holds: exclusive
 * to give an entry to a definition and to reset, shared to read and to
 * publish, which adds to the counters atomically.  A backend remembers its
 * entry and incarnation, so publishing takes the lock shared, with no
 * search, while the entry stays its definition's.  It is taken alone.
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout_table.h"
#include "base/settings.h"
#include "stats.h"

#define STATS_MAX_ENTRIES 1024

/* StatsCounters' fields, in order, as the shared entry's atomic counters. */
#define STATS_NCOUNTERS 7
#define STATS_MAX_LEAD 6		/* the one kept as a maximum */

typedef struct StatsEntry
{
	LayoutTableEntry head;		/* which definition; first, for layout_table.c */
	MarkEntry   *mark_entry;	/* the layout's mark on this server */
	int64		end_ms;			/* last Unix ms the time field holds */
	pg_atomic_uint64 counts[STATS_NCOUNTERS];
	pg_atomic_uint64 published; /* TimestampTz last added to */
	TimestampTz reset;			/* counting since */
} StatsEntry;

typedef struct StatsShared
{
	LWLock	   *lock;
	uint64		incarnations;
	int64		dropped;		/* definitions whose counts were dropped */
	TimestampTz dropped_at;
	StatsEntry	entries[STATS_MAX_ENTRIES];
} StatsShared;

struct StatsLocal
{
	LayoutKey	key;
	uint32		hash;
	MarkEntry   *mark_entry;
	int64		end_ms;
	pg_atomic_uint64 *own;		/* its state's issued counter */
	uint64		own_base;		/* *own already counted */
	int			entry;			/* where its counts were last published */
	uint64		entry_incarnation;
	StatsCounters pending;
	StatsLocal *next;
};

static StatsShared *stats = NULL;
static StatsLocal *my_locals = NULL;

PG_FUNCTION_INFO_V1(idgen_stats);
PG_FUNCTION_INFO_V1(idgen_stats_reset);

Size
stats_shmem_size(void)
{
	return sizeof(StatsShared);
}

void
stats_shmem_request(void)
{
	RequestNamedLWLockTranche("idgen stats", 1);
}

void
stats_shmem_init(void *at, bool found)
{
	stats = at;
	if (!found)
	{
		memset(stats, 0, stats_shmem_size());
		stats->lock = &(GetNamedLWLockTranche("idgen stats"))[0].lock;
		for (int i = 0; i < STATS_MAX_ENTRIES; i++)
		{
			for (int c = 0; c < STATS_NCOUNTERS; c++)
				pg_atomic_init_u64(&stats->entries[i].counts[c], 0);
			pg_atomic_init_u64(&stats->entries[i].published, 0);
		}
	}
}

/* Takes own's IDs not counted yet into pending. */
static void
stats_collect(StatsLocal *l)
{
	uint64		issued;

	if (l->own == NULL)
		return;
	issued = pg_atomic_read_u64(l->own);
	l->pending.ids += issued - l->own_base;
	l->own_base = issued;
}

static bool
stats_nothing(const StatsCounters *c)
{
	return c->ids == 0 && c->clock_waits == 0 && c->regressions == 0 &&
		c->confirm_waits == 0 && c->max_lead_ms == 0;
}

/*
 * Counts a definition whose counts are dropped for another's, and logs the
 * first.  The caller holds the lock exclusively.
 */
static void
stats_note_dropped(const StatsEntry *e)
{
	if (stats->dropped++ == 0)
		ereport(LOG,
				(errmsg("idgen: idgen_stats holds %d layout definitions; the counts of the one published least recently are dropped",
						STATS_MAX_ENTRIES),
				 errdetail("The counts of layout \"%s\" are dropped. The column stats_reset says since when each row counts.",
						   e->head.key.name)));
	stats->dropped_at = GetCurrentTimestamp();
}

/* The entry published least recently is given up first. */
static int64
stats_last_published(const LayoutTableEntry *entry)
{
	return (int64) pg_atomic_read_u64(&((StatsEntry *) entry)->published);
}

/*
 * The entry of l's definition, or the one to give it: unused, else the one
 * published least recently.  The caller holds the lock exclusively.
 */
static StatsEntry *
stats_entry(const StatsLocal *l)
{
	LayoutTable table = {
		.base = stats->entries,
		.stride = sizeof(StatsEntry),
		.n = STATS_MAX_ENTRIES,
		.incarnations = &stats->incarnations,
		.last_used = stats_last_published,
	};
	bool		found;
	StatsEntry *victim;

	victim = (StatsEntry *) layout_table_find(&table, &l->key, l->hash, &found);
	if (found)
		return victim;
	if (victim->head.incarnation != 0)
		stats_note_dropped(victim);
	for (int c = 0; c < STATS_NCOUNTERS; c++)
		pg_atomic_write_u64(&victim->counts[c], 0);
	layout_table_give(&table, &victim->head, &l->key, l->hash);
	victim->mark_entry = l->mark_entry;
	victim->end_ms = l->end_ms;
	victim->reset = GetCurrentTimestamp();
	return victim;
}

static void
stats_to_array(const StatsCounters *c, uint64 *a)
{
	a[0] = c->ids;
	a[1] = c->shared_ids;
	a[2] = c->clock_waits;
	a[3] = c->clock_wait_us;
	a[4] = c->regressions;
	a[5] = c->confirm_waits;
	a[STATS_MAX_LEAD] = (uint64) c->max_lead_ms;
}

/* Adds c to e's counters; the caller holds the lock, shared or exclusive. */
static void
stats_add(StatsEntry *e, const StatsCounters *c, TimestampTz now)
{
	uint64		a[STATS_NCOUNTERS];
	uint64		lead;

	stats_to_array(c, a);
	for (int i = 0; i < STATS_NCOUNTERS; i++)
		if (i != STATS_MAX_LEAD && a[i] != 0)
			pg_atomic_fetch_add_u64(&e->counts[i], a[i]);
	lead = pg_atomic_read_u64(&e->counts[STATS_MAX_LEAD]);
	while (lead < a[STATS_MAX_LEAD] &&
		   !pg_atomic_compare_exchange_u64(&e->counts[STATS_MAX_LEAD], &lead, a[STATS_MAX_LEAD]))
		;
	pg_atomic_write_u64(&e->published, (uint64) now);
}

/*
 * Publishes l's pending counts into its definition's entry: under the lock
 * shared when the entry it used last is still its definition's, else under
 * the lock exclusive, finding or giving it one.
 */
static void
stats_publish_one(StatsLocal *l, TimestampTz now)
{
	StatsEntry *e;

	LWLockAcquire(stats->lock, LW_SHARED);
	e = &stats->entries[l->entry];
	if (l->entry_incarnation == 0 || e->head.incarnation != l->entry_incarnation)
	{
		LWLockRelease(stats->lock);
		LWLockAcquire(stats->lock, LW_EXCLUSIVE);
		e = stats_entry(l);
		l->entry = e - stats->entries;
		l->entry_incarnation = e->head.incarnation;
	}
	stats_add(e, &l->pending, now);
	LWLockRelease(stats->lock);
	memset(&l->pending, 0, sizeof(l->pending));
}

/* Publishes this backend's counts; takes the lock only when there are some. */
static void
stats_publish(void)
{
	TimestampTz now = 0;

	for (StatsLocal *l = my_locals; l != NULL; l = l->next)
	{
		stats_collect(l);
		if (stats_nothing(&l->pending))
			continue;
		if (now == 0)
			now = GetCurrentTimestamp();
		stats_publish_one(l, now);
	}
}

static void
stats_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			stats_publish();
			break;
		default:
			break;
	}
}

static void
stats_backend_exit(int code, Datum arg)
{
	stats_publish();
}

/*
 * This backend's counts of layout's definition, set up on first use; the
 * generator keeps the pointer in its plan.
 */
StatsLocal *
stats_local(const IdgenLayout *layout, MarkEntry *mark_entry)
{
	LayoutKey	key;
	uint32		hash;
	StatsLocal *l;

	if (stats == NULL)
		return NULL;
	hash = layout_key(&key, layout);
	for (l = my_locals; l != NULL; l = l->next)
		if (l->hash == hash && memcmp(&l->key, &key, sizeof(key)) == 0)
			return l;
	if (my_locals == NULL)
	{
		RegisterXactCallback(stats_xact_callback, NULL);
		/* before slots.c gives the worker slot, whose count we read, back */
		before_shmem_exit(stats_backend_exit, (Datum) 0);
	}
	l = MemoryContextAllocZero(TopMemoryContext, sizeof(StatsLocal));
	l->key = key;
	l->hash = hash;
	l->mark_entry = mark_entry;
	l->end_ms = layout_last_ms(layout);
	l->next = my_locals;
	my_locals = l;
	return l;
}

StatsCounters *
stats_pending(StatsLocal *l)
{
	return &l->pending;
}

/*
 * Makes own the issued counter of the state whose IDs count for l from now
 * on, after counting the previous one's.
 */
void
stats_track(StatsLocal *l, pg_atomic_uint64 *own)
{
	if (l == NULL)
		return;
	stats_collect(l);
	l->own = own;
	l->own_base = pg_atomic_read_u64(own);
}

/*
 * own no longer counts for l, after its IDs so far are counted; a no-op when
 * l counts another state, so that only the state tracked can give l up.
 */
void
stats_untrack(StatsLocal *l, pg_atomic_uint64 *own)
{
	if (l == NULL || l->own != own)
		return;
	stats_collect(l);
	l->own = NULL;
	l->own_base = 0;
}

#define STATS_COLS 12

static void
stats_add_row(ReturnSetInfo *rsinfo, StatsEntry *e, int64 now)
{
	Datum		values[STATS_COLS];
	bool		nulls[STATS_COLS] = {false};
	int64		mark = e->mark_entry ? marks_value(e->mark_entry) : 0;
	uint64		c[STATS_NCOUNTERS];
	Interval   *left = palloc0(sizeof(Interval));

	for (int i = 0; i < STATS_NCOUNTERS; i++)
		c[i] = pg_atomic_read_u64(&e->counts[i]);
	values[0] = CStringGetTextDatum(e->head.key.name);
	values[1] = Int64GetDatum((int64) c[0]);
	values[2] = Int64GetDatum((int64) c[1]);
	values[3] = Int64GetDatum((int64) c[2]);
	values[4] = Float8GetDatum(c[3] / 1000.0);
	values[5] = Int64GetDatum((int64) c[4]);
	values[6] = Int64GetDatum((int64) c[STATS_MAX_LEAD]);
	values[7] = Int64GetDatum((int64) c[5]);
	values[8] = TimestampTzGetDatum(clock_ms_to_timestamptz(mark));
	nulls[8] = mark <= 0;
	values[9] = Int64GetDatum(mark - now);
	nulls[9] = mark <= 0;
	/* Days and a time of day, whole seconds: hours in the 100,000s are hard to read. */
	left->day = (int32) ((e->end_ms - now) / (SECS_PER_DAY * 1000));
	left->time = (e->end_ms - now) / 1000 % SECS_PER_DAY * USECS_PER_SEC;
	values[10] = IntervalPGetDatum(left);
	values[11] = TimestampTzGetDatum(e->reset);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* One row per layout definition with published counts. */
Datum
idgen_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		now = clock_now_ms();

	settings_require_preloaded(stats != NULL);
	InitMaterializedSRF(fcinfo, 0);
	LWLockAcquire(stats->lock, LW_SHARED);
	for (int i = 0; i < STATS_MAX_ENTRIES; i++)
		if (stats->entries[i].head.incarnation != 0)
			stats_add_row(rsinfo, &stats->entries[i], now);
	LWLockRelease(stats->lock);
	return (Datum) 0;
}

/* The row of idgen_capacity for this table. */
void
stats_capacity(IdgenCapacity *row)
{
	settings_require_preloaded(stats != NULL);
	row->name = "stats";
	row->setting = NULL;
	row->capacity = STATS_MAX_ENTRIES;
	row->in_use = 0;
	LWLockAcquire(stats->lock, LW_SHARED);
	for (int i = 0; i < STATS_MAX_ENTRIES; i++)
		if (stats->entries[i].head.incarnation != 0)
			row->in_use++;
	row->overflows = stats->dropped;
	row->last_overflow = stats->dropped_at;
	LWLockRelease(stats->lock);
}

/* Zeroes every layout's counts. */
Datum
idgen_stats_reset(PG_FUNCTION_ARGS)
{
	TimestampTz now = GetCurrentTimestamp();

	settings_require_preloaded(stats != NULL);
	LWLockAcquire(stats->lock, LW_EXCLUSIVE);
	for (int i = 0; i < STATS_MAX_ENTRIES; i++)
	{
		for (int c = 0; c < STATS_NCOUNTERS; c++)
			pg_atomic_write_u64(&stats->entries[i].counts[c], 0);
		stats->entries[i].reset = now;
	}
	LWLockRelease(stats->lock);
	PG_RETURN_VOID();
}
