/*
 * random.h
 *		idgen's one source of random numbers: strong bytes, and fast values
 *		seeded from them, never shared between processes.
 */
#ifndef IDGEN_RANDOM_H
#define IDGEN_RANDOM_H

#include "c.h"

extern const uint8 *random_strong(int n);
extern uint64 random_u64(void);

#endif							/* IDGEN_RANDOM_H */
