/*
 * layout_gen.h
 *		This backend's generator of each layout it generated in, by name
 *		(layout_gen.c).
 */
#ifndef IDGEN_LAYOUT_GEN_H
#define IDGEN_LAYOUT_GEN_H

#include "fmgr.h"

#include "generator.h"

/* A layout's target and, when it has a worker id of its own, its state. */
typedef struct LayoutGen
{
	char		name[NAMEDATALEN];	/* hash key */
	GenTarget	target;
	GenState	gen;
	bool		dedicated;
	LayoutStateRef shared;		/* the definition's shared state, if not */
	uint64		epoch;			/* layout_gen_epoch when planned; 0: never */
} LayoutGen;

extern LayoutGen *layout_gen_for_call(FunctionCallInfo fcinfo, text *name_arg);

#endif							/* IDGEN_LAYOUT_GEN_H */
