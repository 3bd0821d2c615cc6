/*
 * settings.h
 *		idgen's configuration parameters, read by the other modules.
 */
#ifndef IDGEN_SETTINGS_H
#define IDGEN_SETTINGS_H

#define SETTINGS_MAX_LEAD_MS				60000
#define SETTINGS_MAX_CLOCK_REGRESSION_MS	3600000

/*
 * Entries of the table of high-water marks: by default room for a mark of
 * each of the server's 1024 layout states (slots.c) under four node ids
 * or node_bits, and for the built-in layouts' under many more; each takes
 * about 140 bytes of shared memory.
 */
#define SETTINGS_DEFAULT_MAX_MARKS	4096
#define SETTINGS_MIN_MAX_MARKS		64
#define SETTINGS_MAX_MAX_MARKS		65536

/* idgen.node_lease_s */
#define SETTINGS_DEFAULT_NODE_LEASE_S	30
#define SETTINGS_MIN_NODE_LEASE_S		5
#define SETTINGS_MAX_NODE_LEASE_S		3600

extern int	idgen_node_id;
extern char *idgen_node_registry;
extern int	idgen_node_lease_s;
extern char *idgen_lease_test_unsafe;

/* The protections of leases idgen.lease_test_unsafe disables, for tests. */
#define SETTINGS_UNSAFE_FENCE	0x01
#define SETTINGS_UNSAFE_CEILING	0x02
#define SETTINGS_UNSAFE_FLOOR	0x04
#define SETTINGS_UNSAFE_HISTORY	0x08
extern int	settings_lease_unsafe(void);
extern int	idgen_node_bits;
extern char *idgen_epoch;
extern int	idgen_max_marks;
/*
 * How far generation may run ahead of the clock, and the clock fall behind
 * it: the step reads them through its plan (step.h), as a reload may
 * change them at any time.
 */
typedef struct IdgenLimits
{
	int			max_lead_ms;	/* idgen.max_lead_ms */
	int			max_clock_regression_ms;	/* idgen.max_clock_regression_ms */
} IdgenLimits;

extern IdgenLimits idgen_limits;
extern int	idgen_clock_offset_ms;

extern void settings_define(void);
extern void settings_require_layout(void);
extern void settings_require_all(void);
extern void settings_require_preloaded(bool attached);
extern bool settings_all_valid(void);
extern bool settings_layout_valid(void);

#endif							/* IDGEN_SETTINGS_H */
