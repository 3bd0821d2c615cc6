/*
 * gen.h
 *		What the rest of idgen asks of the generator (gen/): its shared
 *		memory, and its rows of idgen_capacity.  Generating is reached
 *		through SQL only: idgen_next() (generator.c), next.c's entry points
 *		and the idgen_workers view are in gen/ too.
 */
#ifndef IDGEN_GEN_H
#define IDGEN_GEN_H

#include "base/capacity.h"

/* slots.c: the worker slots and the layouts' shared states */
extern Size slots_shmem_size(void);
extern void slots_shmem_request(void);
extern void slots_shmem_init(void *at, bool found);
extern void slots_capacity(IdgenCapacity *slots, IdgenCapacity *states);

/* stats.c: the counts behind idgen_stats */
extern Size stats_shmem_size(void);
extern void stats_shmem_request(void);
extern void stats_shmem_init(void *at, bool found);
extern void stats_capacity(IdgenCapacity *row);

#endif							/* IDGEN_GEN_H */
