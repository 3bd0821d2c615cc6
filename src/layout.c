/*
 * layout.c
 *		Packing and unpacking ID fields: the default layout, set by idgen's
 *		settings, and the fixed layouts of other systems' IDs.
 *
 * Every field is masked to its width before it is shifted into place, so a
 * field that overflows can never spill into its neighbour.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/datetime.h"

#include "layout.h"

char	   *idgen_epoch_setting = NULL;
int			idgen_node_bits_setting = IDGEN_DEFAULT_NODE_BITS;

static IdgenLayout default_layout;

#define DEFAULT_LAYOUT_NAME "idgen"

/*
 * Other systems' IDs, for decoding them and for range scans on them.  Each
 * follows its own published description; node and worker are the higher and
 * the lower machine field.
 */
static const IdgenLayout builtin_layouts[] = {
	/* Twitter (2010): 41-bit ms | 5-bit datacenter | 5-bit worker | 12-bit sequence */
	{
		.name = "twitter",
		.epoch_ms = INT64CONST(1288834974657),
		.tick_ms = 1,
		.nfields = 4,
		.order = {IDGEN_FIELD_TIME, IDGEN_FIELD_NODE, IDGEN_FIELD_WORKER, IDGEN_FIELD_SEQ},
		.bits = {[IDGEN_FIELD_TIME] = 41, [IDGEN_FIELD_NODE] = 5,
		[IDGEN_FIELD_WORKER] = 5, [IDGEN_FIELD_SEQ] = 12},
	},
	/* Discord: 41-bit ms | 5-bit worker | 5-bit process | 12-bit increment */
	{
		.name = "discord",
		.epoch_ms = INT64CONST(1420070400000),
		.tick_ms = 1,
		.nfields = 4,
		.order = {IDGEN_FIELD_TIME, IDGEN_FIELD_NODE, IDGEN_FIELD_WORKER, IDGEN_FIELD_SEQ},
		.bits = {[IDGEN_FIELD_TIME] = 41, [IDGEN_FIELD_NODE] = 5,
		[IDGEN_FIELD_WORKER] = 5, [IDGEN_FIELD_SEQ] = 12},
	},
	/*
	 * Sonyflake: 39-bit 10 ms units since 2014-09-01 | 8-bit sequence |
	 * 16-bit machine id; one machine field, reported as the worker.
	 */
	{
		.name = "sonyflake",
		.epoch_ms = INT64CONST(1409529600000),
		.tick_ms = 10,
		.nfields = 3,
		.order = {IDGEN_FIELD_TIME, IDGEN_FIELD_SEQ, IDGEN_FIELD_WORKER},
		.bits = {[IDGEN_FIELD_TIME] = 39, [IDGEN_FIELD_WORKER] = 16,
		[IDGEN_FIELD_SEQ] = 8},
	},
	/*
	 * Instagram: 41-bit ms | 13-bit shard | 10-bit sequence, 64 bits in all.
	 * The time field's top bit is the sign bit of a bigint, and negative IDs
	 * are not decoded, so 40 bits of time are usable: up to 2046.
	 */
	{
		.name = "instagram",
		.epoch_ms = INT64CONST(1314220021721),
		.tick_ms = 1,
		.nfields = 3,
		.order = {IDGEN_FIELD_TIME, IDGEN_FIELD_NODE, IDGEN_FIELD_SEQ},
		.bits = {[IDGEN_FIELD_TIME] = 40, [IDGEN_FIELD_NODE] = 13,
		[IDGEN_FIELD_SEQ] = 10},
	},
};

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
	default_layout.name = DEFAULT_LAYOUT_NAME;
	default_layout.epoch_ms = epoch_ms;
	default_layout.tick_ms = 1;
	default_layout.nfields = 4;
	default_layout.order[0] = IDGEN_FIELD_TIME;
	default_layout.order[1] = IDGEN_FIELD_NODE;
	default_layout.order[2] = IDGEN_FIELD_WORKER;
	default_layout.order[3] = IDGEN_FIELD_SEQ;
	default_layout.bits[IDGEN_FIELD_TIME] = IDGEN_TIME_BITS;
	default_layout.bits[IDGEN_FIELD_NODE] = idgen_node_bits_setting;
	default_layout.bits[IDGEN_FIELD_WORKER] = IDGEN_MACHINE_BITS - idgen_node_bits_setting;
	default_layout.bits[IDGEN_FIELD_SEQ] = IDGEN_SEQ_BITS;
}

const IdgenLayout *
layout_default(void)
{
	return &default_layout;
}

/*
 * "idgen" names the default layout, so that it reads as one of the layouts;
 * it is the only one that depends on settings.
 */
const IdgenLayout *
layout_lookup(const char *name)
{
	StringInfoData names;

	if (strcmp(name, DEFAULT_LAYOUT_NAME) == 0)
		return &default_layout;
	for (int i = 0; i < (int) lengthof(builtin_layouts); i++)
		if (strcmp(name, builtin_layouts[i].name) == 0)
			return &builtin_layouts[i];

	initStringInfo(&names);
	appendStringInfoString(&names, DEFAULT_LAYOUT_NAME);
	for (int i = 0; i < (int) lengthof(builtin_layouts); i++)
		appendStringInfo(&names, ", %s", builtin_layouts[i].name);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown idgen layout \"%s\"", name),
			 errhint("The known layouts are %s.", names.data)));
	return NULL;				/* keep compiler quiet */
}

bool
layout_has_field(const IdgenLayout *layout, IdgenField field)
{
	for (int i = 0; i < layout->nfields; i++)
		if (layout->order[i] == field)
			return true;
	return false;
}

int64
layout_pack(const IdgenLayout *layout, const IdgenFields *fields)
{
	int64		id = 0;

	for (int i = 0; i < layout->nfields; i++)
	{
		int			bits = layout->bits[layout->order[i]];

		id = (id << bits) | (fields->value[layout->order[i]] & LAYOUT_MASK(bits));
	}
	return id;
}

void
layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields)
{
	memset(fields, 0, sizeof(*fields));
	for (int i = layout->nfields - 1; i >= 0; i--)
	{
		int			bits = layout->bits[layout->order[i]];

		fields->value[layout->order[i]] = id & LAYOUT_MASK(bits);
		id >>= bits;
	}
}

/*
 * The last Unix millisecond the layout's time field can hold: the end of its
 * last tick.
 */
int64
layout_last_ms(const IdgenLayout *layout)
{
	return layout->epoch_ms +
		(LAYOUT_MASK(layout->bits[IDGEN_FIELD_TIME]) + 1) * layout->tick_ms - 1;
}
