/*
 * generator.c
 *		idgen_next() and idgen_next_batch(): unique, time-ordered IDs from
 *		per-backend state.
 *
 * Each backend generates in the worker slot it claimed from the registry, so
 * the hot path reads the clock, bumps a counter in memory only it writes, and
 * packs the fields: no lock, no I/O.  Uniqueness rests on three rules:
 *
 *	- logical time never goes back: it is the larger of the clock and the
 *	  newest millisecond used, so a clock step back keeps counting in the
 *	  newest millisecond instead of reusing an older one;
 *	- a millisecond whose sequence is used up is left for the next one,
 *	  borrowed ahead of the clock up to idgen.max_lead_ms;
 *	- a slot's new holder starts after its previous holder's newest millisecond.
 *
 * The sequence of each new millisecond starts at a random value in the lower
 * half of its range, so the low bits of IDs spread evenly (id % N) even at one
 * ID per millisecond, and every millisecond still holds at least half its range.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"

#include "clock.h"
#include "compat.h"
#include "generator.h"
#include "hwm.h"
#include "idgen.h"
#include "layout.h"
#include "registry.h"

int			idgen_node_id = 0;
int			idgen_max_lead_ms = 1000;
int			idgen_max_clock_regression_ms = 10000;

#define SEQ_MAX			LAYOUT_MASK(IDGEN_SEQ_BITS)
#define SEQ_START_SPAN	(((int64) 1) << (IDGEN_SEQ_BITS - 1))

/* Most IDs idgen_next_batch() makes in one call; they are kept in memory. */
#define BATCH_MAX		1000000

/* How often a backend in the shared slot looks for a dedicated one. */
#define RECLAIM_INTERVAL_MS 1000

static GenState *my_gen = NULL;	/* dedicated slot; NULL while unattached or shared */
static bool my_attached = false;
static int64 my_worker;
static int64 last_claim_attempt_ms;
static uint64 rng_state;

PG_FUNCTION_INFO_V1(idgen_next);
PG_FUNCTION_INFO_V1(idgen_next_batch);

/* splitmix64: seeded in this backend, never inherited from the postmaster */
static inline uint64
next_random(void)
{
	uint64		z = (rng_state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * After a crash, restart or promotion, a slot's memory of its newest
 * millisecond is gone or stale; the high-water mark is a floor above every
 * millisecond used before.  Starting there may run ahead of the clock, so
 * the clock is trusted to have reached the floor less the allowed lead.
 */
static void
generator_apply_floor(GenState *st)
{
	int64		floor = hwm_floor();

	if (st->last_ms >= floor - 1)
		return;
	st->last_ms = floor - 1;
	st->seq = SEQ_MAX;
	st->clock_high = Max(st->clock_high, floor - idgen_max_lead_ms);
}

static void
generator_claim(void)
{
	RegistrySlot *slot;
	int			index;

	slot = registry_claim_slot(&index);
	if (slot != NULL)
	{
		generator_apply_floor(&slot->gen);
		my_gen = &slot->gen;
		my_worker = index;
	}
	else
		my_worker = registry_shared_index();
}

static void
generator_attach(void)
{
	idgen_require_generator();
	if (!pg_strong_random(&rng_state, sizeof(rng_state)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random seed for idgen")));
	generator_claim();
	last_claim_attempt_ms = clock_now_ms();
	my_attached = true;
}

static void
generator_refuse_clock(int64 behind)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("system clock is %lld ms behind the time of the newest idgen ID",
					(long long) behind),
			 errdetail("%s allows the clock to fall behind by at most %d ms.",
					   "idgen.max_clock_regression_ms", idgen_max_clock_regression_ms),
			 errhint("Check the server's time synchronization. IDs resume once the clock catches up.")));
}

/*
 * The clock reads earlier than a reading this slot already trusted.  Within
 * idgen.max_clock_regression_ms we keep going on logical time and log the
 * incident once; past it we refuse rather than run ahead of the clock for
 * that long.
 */
static void
generator_clock_behind(GenState *st, int64 now)
{
	int64		behind = st->clock_high - now;

	if (behind > idgen_max_clock_regression_ms)
		generator_refuse_clock(behind);
	if (!st->clock_behind)
	{
		st->clock_behind = true;
		st->regressions++;
		ereport(LOG,
				(errmsg("idgen: system clock is %lld ms behind the time of the newest ID",
						(long long) behind),
				 errdetail("IDs continue from idgen's logical time until the clock catches up.")));
	}
}

/*
 * Sleeps until the clock reaches target_ms, holding no lock, so borrowing
 * stays within bounds.  A clock too far behind is refused instead: no
 * unbounded sleep.
 */
static void
generator_sleep_until(int64 target_ms)
{
	for (;;)
	{
		int64		now = clock_now_ms();

		if (now >= target_ms)
			return;
		if (target_ms - now > idgen_max_clock_regression_ms)
			generator_refuse_clock(target_ms - now);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(target_ms - now, 10), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Every new millisecond passes here, whichever path chose it, so the range
 * check cannot be skipped.  The fields other than the sequence are packed
 * once per millisecond, not once per ID.
 */
static void
generator_start_ms(GenState *st, int64 ms)
{
	const IdgenLayout *layout = layout_default();
	IdgenFields fields;

	if (unlikely(ms < layout->epoch_ms))
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("system clock is before %s", "idgen.epoch"),
				 errhint("Check the server's clock, or set %s to an earlier date.", "idgen.epoch")));
	if (unlikely(ms > layout_last_ms(layout)))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("idgen time field is exhausted"),
				 errdetail("The default layout holds times up to %lld ms after %s.",
						   (long long) LAYOUT_MASK(IDGEN_TIME_BITS), "idgen.epoch")));
	hwm_reserve(ms);
	fields.value[IDGEN_FIELD_TIME] = ms - layout->epoch_ms;
	fields.value[IDGEN_FIELD_NODE] = idgen_node_id;
	fields.value[IDGEN_FIELD_WORKER] = my_worker;
	fields.value[IDGEN_FIELD_SEQ] = 0;
	st->ms_base = layout_pack(layout, &fields);
	st->last_ms = ms;
	st->seq = next_random() % SEQ_START_SPAN;
}

/*
 * Makes the next ID of st into *id.  When that needs the clock to move on
 * first, it changes nothing that matters, sets *wait_until and returns
 * false: the caller sleeps, holding no lock, and tries again.
 */
static inline bool
generator_try_step(GenState *st, int64 now, int64 *id, int64 *wait_until)
{
	if (likely(now >= st->clock_high))
	{
		st->clock_high = now;
		if (unlikely(st->clock_behind))
			st->clock_behind = false;
	}
	else
		generator_clock_behind(st, now);

	/* Check the clock against logical time before touching the sequence. */
	if (now > st->last_ms)
		generator_start_ms(st, now);
	else if (st->seq < SEQ_MAX)
		st->seq++;
	else
	{
		int64		next = st->last_ms + 1;

		if (next > st->clock_high + idgen_max_lead_ms)
		{
			st->waits++;
			*wait_until = next - idgen_max_lead_ms;
			return false;
		}
		generator_start_ms(st, next);
	}
	st->issued++;
	*id = st->ms_base | st->seq;
	return true;
}

static int64
generator_next_dedicated(void)
{
	int64		id;
	int64		wait_until;

	while (!generator_try_step(my_gen, clock_now_ms(), &id, &wait_until))
		generator_sleep_until(wait_until);
	return id;
}

/* The clock is read under the lock: another holder may have just moved on. */
static int64
generator_next_shared(void)
{
	int64		id;
	int64		wait_until;
	int64		now = clock_now_ms();

	if (now - last_claim_attempt_ms >= RECLAIM_INTERVAL_MS)
	{
		last_claim_attempt_ms = now;
		generator_claim();
		if (my_gen != NULL)
			return generator_next_dedicated();
	}
	for (;;)
	{
		GenState   *st = registry_lock_shared_slot();
		bool		done;

		generator_apply_floor(st);
		done = generator_try_step(st, clock_now_ms(), &id, &wait_until);
		registry_unlock_shared_slot();
		if (done)
			return id;
		generator_sleep_until(wait_until);
	}
}

/* Kept out of line so that idgen_next's common path stays a small leaf. */
static pg_noinline int64
generator_next_slow(void)
{
	if (!my_attached)
	{
		generator_attach();
		if (my_gen != NULL)
			return generator_next_dedicated();
	}
	return generator_next_shared();
}

static inline int64
generator_next(void)
{
	if (likely(my_gen != NULL))
		return generator_next_dedicated();
	return generator_next_slow();
}

Datum
idgen_next(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(generator_next());
}

/*
 * n IDs in one call, made one by one as idgen_next() makes them, so they
 * obey the same rules; only the per-call overhead is saved.
 */
Datum
idgen_next_batch(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		isnull = false;

	if (n < 1 || n > BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of IDs must be between 1 and %d: %d", BATCH_MAX, n),
				 errhint("Ask for at least one ID, and call the function again for more than %d.",
						 BATCH_MAX)));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (int32 i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(generator_next());

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
		CHECK_FOR_INTERRUPTS();
	}
	return (Datum) 0;
}
