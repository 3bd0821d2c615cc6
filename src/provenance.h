/*
 * provenance.h
 *		Whether this server's high-water marks cover the IDs its databases
 *		hold: marks lost with their file, or IDs brought from another cluster
 *		by pg_upgrade or a restored dump, make generation refuse until told.
 */
#ifndef IDGEN_PROVENANCE_H
#define IDGEN_PROVENANCE_H

#include "lib/stringinfo.h"

extern void provenance_shmem_request(void);
extern void provenance_shmem_startup(void);

/* hwm_file.c: its line of idgen_hwm, read and written with the marks */
extern bool provenance_load_line(const char *line);
extern void provenance_write_line(StringInfo buf);
/* hwm.c, once the file is loaded: true when the file must be rewritten */
extern bool provenance_settle(bool file_found);

/* generator.c, before a backend first generates */
extern void provenance_require(void);

#endif							/* IDGEN_PROVENANCE_H */
