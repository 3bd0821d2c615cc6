/*
 * layout.h
 *		How the fields of an idgen ID are packed into a positive int64.
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include "utils/guc.h"

/*
 * From the most significant bit down: sign (always 0) | time | node | worker
 * | sequence.  time counts tick_ms-millisecond units since epoch_ms.
 */
typedef struct IdgenLayout
{
	int64		epoch_ms;		/* Unix milliseconds of tick 0 */
	int			tick_ms;
	int			time_bits;
	int			node_bits;
	int			worker_bits;
	int			seq_bits;
} IdgenLayout;

typedef struct IdgenFields
{
	int64		ticks;
	int64		node;
	int64		worker;
	int64		seq;
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
extern bool layout_check_epoch(char **newval, void **extra, GucSource source);
extern bool layout_parse_epoch(const char *text, int64 *epoch_ms);
extern int64 layout_pack(const IdgenLayout *layout, const IdgenFields *fields);
extern void layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields);
extern int64 layout_last_ms(const IdgenLayout *layout);

#define LAYOUT_MASK(bits) ((((int64) 1) << (bits)) - 1)

#endif							/* IDGEN_LAYOUT_H */
