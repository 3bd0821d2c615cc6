/*
 * rmgr.h
 *		idgen's WAL resource manager, registered during preload.  The records
 *		are in idgen_xlog.h.
 */
#ifndef IDGEN_RMGR_H
#define IDGEN_RMGR_H

extern void rmgr_register(void);

#endif							/* IDGEN_RMGR_H */
