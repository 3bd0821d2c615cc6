/*
 * generator.h
 *		Settings of idgen_next() that idgen.c defines.
 */
#ifndef IDGEN_GENERATOR_H
#define IDGEN_GENERATOR_H

extern int	idgen_node_id;
extern int	idgen_max_lead_ms;
extern int	idgen_max_clock_regression_ms;

#endif							/* IDGEN_GENERATOR_H */
