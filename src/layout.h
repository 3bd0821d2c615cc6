/*
 * layout.h
 *		How the fields of an idgen ID are packed into a positive int64.
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include "utils/guc.h"

/*
 * The fields an ID can carry.  idgen_decode() reports node as node_id (the
 * higher machine field of layouts that have two) and worker as worker_id.
 */
typedef enum IdgenField
{
	IDGEN_FIELD_TIME,
	IDGEN_FIELD_NODE,
	IDGEN_FIELD_WORKER,
	IDGEN_FIELD_SEQ,
	IDGEN_NFIELDS
} IdgenField;

/*
 * Fields packed from the most significant bit down, below a sign bit that is
 * always 0.  Layouts differ in order (Sonyflake puts the sequence above the
 * machine id), so the order is listed; a field not listed is absent from the
 * layout, which differs from a field of width 0.  time counts tick_ms-
 * millisecond units since epoch_ms.
 */
typedef struct IdgenLayout
{
	const char *name;
	int64		epoch_ms;		/* Unix milliseconds of tick 0 */
	int			tick_ms;
	int			nfields;
	IdgenField	order[IDGEN_NFIELDS];	/* most significant first */
	int			bits[IDGEN_NFIELDS];	/* width of each field, by IdgenField */
} IdgenLayout;

/* Field values by IdgenField; an absent field is 0. */
typedef struct IdgenFields
{
	int64		value[IDGEN_NFIELDS];
} IdgenFields;

/* The default layout: 41-bit milliseconds | 10-bit node+worker | 12-bit sequence */
#define IDGEN_TIME_BITS		41
#define IDGEN_MACHINE_BITS	10
#define IDGEN_SEQ_BITS		12
#define IDGEN_DEFAULT_EPOCH	"2024-01-01"
#define IDGEN_DEFAULT_NODE_BITS	4

extern char *idgen_epoch_setting;
extern int	idgen_node_bits_setting;

extern void layout_configure(void);
extern const IdgenLayout *layout_default(void);
extern const IdgenLayout *layout_lookup(const char *name);
extern bool layout_has_field(const IdgenLayout *layout, IdgenField field);
extern bool layout_check_epoch(char **newval, void **extra, GucSource source);
extern bool layout_parse_epoch(const char *text, int64 *epoch_ms);
extern int64 layout_pack(const IdgenLayout *layout, const IdgenFields *fields);
extern void layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields);
extern int64 layout_last_ms(const IdgenLayout *layout);

#define LAYOUT_MASK(bits) ((((int64) 1) << (bits)) - 1)

#endif							/* IDGEN_LAYOUT_H */
