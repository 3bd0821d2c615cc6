/*
 * idgen.h
 *		Checks on the server configuration that SQL entry points call first.
 */
#ifndef IDGEN_IDGEN_H
#define IDGEN_IDGEN_H

extern void idgen_require_generator(void);

#endif							/* IDGEN_IDGEN_H */
