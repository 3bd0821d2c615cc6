/*
 * clock.h
 *		The wall clock idgen reads, shifted by idgen.clock_offset_ms.
 */
#ifndef IDGEN_CLOCK_H
#define IDGEN_CLOCK_H

#include <time.h>

#include "datatype/timestamp.h"

#include "settings.h"

/*
 * CLOCK_REALTIME straight from the vDSO: cheaper than GetCurrentTimestamp's
 * gettimeofday, and the same clock.  Inline, as the hot path's one real cost.
 */
static inline int64
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + idgen_clock_offset_ms;
}

extern int64 clock_now_ns(void);
extern TimestampTz clock_ms_to_timestamptz(int64 unix_ms);
extern int64 clock_timestamptz_to_ms(TimestampTz ts);

#endif							/* IDGEN_CLOCK_H */
