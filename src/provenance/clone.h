/*
 * clone.h
 *		The warning for a server started from a base backup as a primary
 *		with its source's node id.
 */
#ifndef IDGEN_CLONE_H
#define IDGEN_CLONE_H

extern void clone_shmem_request(void);
extern void clone_shmem_startup(void);
extern void clone_warn_once(void);
extern bool clone_kept_marks(void);

#endif							/* IDGEN_CLONE_H */
