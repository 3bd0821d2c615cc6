/*
 * clock.c
 *		The wall clock, in Unix milliseconds, plus the fault-injection offset.
 *
 * Every decision idgen takes on the time reads it here, so shifting
 * idgen.clock_offset_ms moves them all at once: that is how the tests make
 * the clock jump backwards or forwards.  Times that views only show (when a
 * slot was claimed, a table overflowed) are PostgreSQL's own.
 */
#include "postgres.h"

#include <time.h>

#include "clock.h"
#include "settings.h"

/* Milliseconds between 1970-01-01 and PostgreSQL's 2000-01-01 epoch. */
#define PG_EPOCH_UNIX_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* Nanoseconds, for UUIDv7's sub-millisecond bits; same clock and offset. */
int64
clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64) ts.tv_sec * 1000 + idgen_clock_offset_ms) * 1000000 + ts.tv_nsec;
}

TimestampTz
clock_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - PG_EPOCH_UNIX_MS) * 1000;
}

/* Rounds down, also before 2000 where the microsecond count is negative. */
int64
clock_timestamptz_to_ms(TimestampTz ts)
{
	int64		us = ts;

	if (us < 0 && us % 1000 != 0)
		return us / 1000 - 1 + PG_EPOCH_UNIX_MS;
	return us / 1000 + PG_EPOCH_UNIX_MS;
}
