/*
 * layout.h
 *		How the fields of an ID are packed into a non-negative int64: the
 *		default layout, other systems' layouts and layouts defined in SQL.
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include "utils/guc.h"

#include "compat.h"

/*
 * The kinds of field an ID can carry.  When generating, node holds
 * idgen.node_id, worker the backend's worker id, shard a value the caller
 * gives (or a random one), random fresh random bits.
 */
typedef enum IdgenField
{
	IDGEN_FIELD_TIME,
	IDGEN_FIELD_NODE,
	IDGEN_FIELD_WORKER,
	IDGEN_FIELD_SEQ,
	IDGEN_FIELD_SHARD,
	IDGEN_FIELD_RANDOM,
	IDGEN_NFIELDS
} IdgenField;

/*
 * Fields from the most significant down, time first.  A binary layout (radix
 * 2) gives widths in bits below a sign bit that is always 0; a decimal one
 * (radix 10) in digits, so each field is a run of decimal digits.  A field
 * not listed is absent, which differs from a field of width 0.  time counts
 * tick_ms-millisecond units since epoch_ms.  size and scale are derived:
 * the number of values a field holds and its place value in the ID.
 */
typedef struct IdgenLayout
{
	const char *name;
	int64		epoch_ms;		/* Unix milliseconds of tick 0 */
	int			tick_ms;
	int			radix;
	int			nfields;
	IdgenField	order[IDGEN_NFIELDS];	/* most significant first */
	int			width[IDGEN_NFIELDS];	/* by IdgenField */
	int64		size[IDGEN_NFIELDS];
	int64		scale[IDGEN_NFIELDS];
	int64		max_id;			/* the largest ID the fields can make */
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

/* Limits on layouts defined in SQL */
#define LAYOUT_MAX_BITS		63
#define LAYOUT_MAX_DIGITS	19

/* Epochs of every layout, idgen.epoch's included, and the end of time fields */
#define LAYOUT_MIN_EPOCH_MS	INT64CONST(-2208988800000)	/* 1900-01-01 */
#define LAYOUT_MAX_EPOCH_MS	INT64CONST(7258118400000)	/* 2200-01-01 */
#define LAYOUT_EPOCH_RANGE	"from 1900-01-01 to 2200-01-01"
#define LAYOUT_MAX_END_MS	INT64CONST(253402300799999) /* 9999-12-31 */

/*
 * The longest tick a layout may have.  After a restart a layout resumes in
 * the tick after the high-water mark's, which may be up to a tick ahead of
 * the clock: this keeps that wait short, and bounds how far past a lease's
 * ceiling a tick could reach (lease_worker.c).
 */
#define LAYOUT_MAX_TICK_MS	1000

extern void layout_configure(const char *epoch, int node_bits);
extern const IdgenLayout *layout_default(void);
extern const IdgenLayout *layout_builtin(const char *name);
extern const IdgenLayout *layout_builtin_at(int i);
extern bool layout_valid_name(const char *name);
extern void layout_build(IdgenLayout *layout, const char *name, int64 epoch_ms,
						 int64 tick_ms, int radix, int nfields,
						 const char *const *field_names, const int *widths);
pg_noreturn extern void layout_invalid(const char *name, const char *detail, const char *hint);
extern bool layout_has_field(const IdgenLayout *layout, IdgenField field);
extern const char *layout_field_name(IdgenField field);
extern bool layout_parse_epoch(const char *text, int64 *epoch_ms);
extern int64 layout_pack(const IdgenLayout *layout, const IdgenFields *fields);
extern void layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields);
extern int64 layout_last_ms(const IdgenLayout *layout);
extern void layout_check_end(const IdgenLayout *layout, int64 ms);
extern int64 layout_tick_id(const IdgenLayout *layout, int64 ms);

/*
 * What a layout state or its counts belong to: a layout definition, whole.
 * The same definition in several databases is one key, since no field of
 * its IDs tells the databases apart.
 */
typedef struct LayoutKey
{
	char		name[NAMEDATALEN];
	int64		epoch_ms;
	int32		tick_ms;
	int32		radix;
	int32		nfields;
	int32		order[IDGEN_NFIELDS];
	int32		width[IDGEN_NFIELDS];
} LayoutKey;

extern uint32 layout_key(LayoutKey *key, const IdgenLayout *layout);

/*
 * The tick arithmetic, inline for the step: the start of the tick holding
 * ms (ms before the epoch is left alone), and the time field of IDs made
 * in it.
 */
static inline int64
layout_tick_start(const IdgenLayout *layout, int64 ms)
{
	int64		epoch = layout->epoch_ms;

	if (ms < epoch)
		return ms;
	return ms - (ms - epoch) % layout->tick_ms;
}

static inline int64
layout_tick_number(const IdgenLayout *layout, int64 ms)
{
	return (ms - layout->epoch_ms) / layout->tick_ms;
}

#define LAYOUT_MASK(bits) ((((int64) 1) << (bits)) - 1)

#endif							/* IDGEN_LAYOUT_H */
