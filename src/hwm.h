/*
 * hwm.h
 *		The high-water mark: a time no ID has reached yet, kept durable in a
 *		file and carried to standbys in WAL, so crashes, restarts and failover
 *		never reissue an ID.
 */
#ifndef IDGEN_HWM_H
#define IDGEN_HWM_H

extern Size hwm_shmem_size(void);
extern void hwm_shmem_request(void);
extern void hwm_shmem_startup(void);
extern void hwm_register(void);

extern int64 hwm_floor(void);
extern void hwm_reserve(int64 ms);

#endif							/* IDGEN_HWM_H */
