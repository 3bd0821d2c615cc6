/*
 * settings.h
 *		idgen's configuration parameters, read by the other modules.
 */
#ifndef IDGEN_SETTINGS_H
#define IDGEN_SETTINGS_H

#define SETTINGS_MAX_LEAD_MS				60000
#define SETTINGS_MAX_CLOCK_REGRESSION_MS	3600000

extern int	idgen_node_id;
extern int	idgen_node_bits;
extern char *idgen_epoch;
extern int	idgen_max_lead_ms;
extern int	idgen_max_clock_regression_ms;
extern int	idgen_clock_offset_ms;

extern void settings_define(void);
extern void settings_require_layout(void);
extern void settings_require_all(void);

#endif							/* IDGEN_SETTINGS_H */
