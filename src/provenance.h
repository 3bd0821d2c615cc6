/*
 * provenance.h
 *		Whether this server's high-water marks cover the IDs its databases
 *		hold: marks lost with their file, or IDs brought from another cluster
 *		by pg_upgrade or a restored dump, make generation refuse until told.
 */
#ifndef IDGEN_PROVENANCE_H
#define IDGEN_PROVENANCE_H

extern void provenance_shmem_request(void);
/* before hwm_shmem_startup(): registers its line of idgen_hwm with hwm.c */
extern void provenance_shmem_startup(void);

/* generator.c, before a backend first generates */
extern void provenance_require(void);

#endif							/* IDGEN_PROVENANCE_H */
