/*
 * plan.h
 *		Planning how this backend fills a layout's fields (plan.c).
 */
#ifndef IDGEN_PLAN_H
#define IDGEN_PLAN_H

#include "marks/marks.h"
#include "step.h"

/*
 * How this backend generates in a layout: the step's plan, and what the step
 * does not know: the layout's high-water mark, and, in a dedicated slot, the
 * slot's newest millisecond, which its next holder starts after.
 */
typedef struct GenTarget
{
	GenPlan		plan;
	MarkEntry   *mark_entry;
	int64	   *holder_last_ms; /* NULL unless in a dedicated slot */
} GenTarget;

extern void plan_target(GenTarget *t, const IdgenLayout *layout, int64 *workers);

#endif							/* IDGEN_PLAN_H */
