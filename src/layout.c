/*
 * layout.c
 *		Packing and unpacking ID fields, and the settings of the default layout.
 *
 * Every field is masked to its width before it is shifted into place, so a
 * field that overflows can never spill into its neighbour.
 */
#include "postgres.h"

#include "utils/datetime.h"

#include "layout.h"

char	   *idgen_epoch_setting = NULL;
int			idgen_node_bits_setting = IDGEN_DEFAULT_NODE_BITS;

static IdgenLayout default_layout;

/*
 * Accepts a UTC date "YYYY-MM-DD" from 1970-01-01 on; a date keeps the
 * setting readable and the epoch unambiguous whatever the server's TimeZone.
 */
bool
layout_parse_epoch(const char *text, int64 *epoch_ms)
{
	int			year,
				month,
				day,
				end = 0;
	int			y2,
				m2,
				d2;
	int			julian;

	if (text == NULL ||
		sscanf(text, "%4d-%2d-%2d%n", &year, &month, &day, &end) != 3 ||
		end != 10 || text[end] != '\0')
		return false;
	if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31)
		return false;
	julian = date2j(year, month, day);
	j2date(julian, &y2, &m2, &d2);
	if (y2 != year || m2 != month || d2 != day)
		return false;			/* e.g. February 30 */
	*epoch_ms = (int64) (julian - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	return true;
}

bool
layout_check_epoch(char **newval, void **extra, GucSource source)
{
	int64		ms;

	if (layout_parse_epoch(*newval, &ms))
		return true;
	GUC_check_errdetail("The epoch must be a date written as YYYY-MM-DD, from 1970-01-01 to 2200-12-31.");
	return false;
}

/* Builds the default layout from idgen.epoch and idgen.node_bits. */
void
layout_configure(void)
{
	int64		epoch_ms;

	if (!layout_parse_epoch(idgen_epoch_setting, &epoch_ms))
		(void) layout_parse_epoch(IDGEN_DEFAULT_EPOCH, &epoch_ms);
	default_layout.epoch_ms = epoch_ms;
	default_layout.tick_ms = 1;
	default_layout.time_bits = IDGEN_TIME_BITS;
	default_layout.node_bits = idgen_node_bits_setting;
	default_layout.worker_bits = IDGEN_MACHINE_BITS - idgen_node_bits_setting;
	default_layout.seq_bits = IDGEN_SEQ_BITS;
}

const IdgenLayout *
layout_default(void)
{
	return &default_layout;
}

int64
layout_pack(const IdgenLayout *layout, const IdgenFields *fields)
{
	int64		id = fields->ticks & LAYOUT_MASK(layout->time_bits);

	id = (id << layout->node_bits) | (fields->node & LAYOUT_MASK(layout->node_bits));
	id = (id << layout->worker_bits) | (fields->worker & LAYOUT_MASK(layout->worker_bits));
	id = (id << layout->seq_bits) | (fields->seq & LAYOUT_MASK(layout->seq_bits));
	return id;
}

void
layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields)
{
	fields->seq = id & LAYOUT_MASK(layout->seq_bits);
	id >>= layout->seq_bits;
	fields->worker = id & LAYOUT_MASK(layout->worker_bits);
	id >>= layout->worker_bits;
	fields->node = id & LAYOUT_MASK(layout->node_bits);
	id >>= layout->node_bits;
	fields->ticks = id & LAYOUT_MASK(layout->time_bits);
}

/* The last Unix millisecond the layout's time field can hold. */
int64
layout_last_ms(const IdgenLayout *layout)
{
	return layout->epoch_ms + LAYOUT_MASK(layout->time_bits) * layout->tick_ms;
}
