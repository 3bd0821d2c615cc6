/*
 * clock.h
 *		The wall clock idgen reads, shifted by idgen.clock_offset_ms.
 */
#ifndef IDGEN_CLOCK_H
#define IDGEN_CLOCK_H

#include "datatype/timestamp.h"

extern int	idgen_clock_offset_ms;

extern int64 clock_now_ms(void);
extern int64 clock_now_ns(void);
extern TimestampTz clock_ms_to_timestamptz(int64 unix_ms);
extern int64 clock_timestamptz_to_ms(TimestampTz ts);

#endif							/* IDGEN_CLOCK_H */
