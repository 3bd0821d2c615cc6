/*
 * layout.c
 *		Packing and unpacking ID fields: the default layout, set by idgen's
 *		settings, the built-in layouts of other systems' IDs, and the checks
 *		every layout passes, including those defined in SQL (layout_defs.c).
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "layout.h"

static IdgenLayout default_layout;

#define DEFAULT_LAYOUT_NAME "idgen"

static const char *const field_names[IDGEN_NFIELDS] = {
	[IDGEN_FIELD_TIME] = "time",
	[IDGEN_FIELD_NODE] = "node",
	[IDGEN_FIELD_WORKER] = "worker",
	[IDGEN_FIELD_SEQ] = "sequence",
	[IDGEN_FIELD_SHARD] = "shard",
	[IDGEN_FIELD_RANDOM] = "random",
};

typedef struct LayoutSpec
{
	const char *name;
	int64		epoch_ms;
	int			tick_ms;
	int			radix;
	int			nfields;
	const char *fields[IDGEN_NFIELDS];
	int			widths[IDGEN_NFIELDS];
} LayoutSpec;

/*
 * Other systems' layouts, each as its own description gives it, and js53.
 * Their machine fields map onto node and worker (the higher and the lower),
 * or shard where the caller picks the value.
 */
static const LayoutSpec builtin_specs[] = {
	/* Twitter (2010): datacenter and worker */
	{"twitter", INT64CONST(1288834974657), 1, 2, 4,
	{"time", "node", "worker", "sequence"}, {41, 5, 5, 12}},
	/* Discord: internal worker and process */
	{"discord", INT64CONST(1420070400000), 1, 2, 4,
	{"time", "node", "worker", "sequence"}, {41, 5, 5, 12}},
	/* Sonyflake: 10 ms units since 2014-09-01, sequence above the machine id */
	{"sonyflake", INT64CONST(1409529600000), 10, 2, 3,
	{"time", "sequence", "worker"}, {39, 8, 16}},

	/*
	 * Instagram: the 41-bit time field's top bit is a bigint's sign bit and
	 * negative IDs are not decoded, so 40 bits of time are usable: to 2046.
	 */
	{"instagram", INT64CONST(1314220021721), 1, 2, 3,
	{"time", "shard", "sequence"}, {40, 13, 10}},

	/*
	 * The Redis ID server: the shard range counts IDs within a millisecond.
	 * Its epoch is not published; 2015-01-01 UTC dates its published
	 * examples to the day they were published.
	 */
	{"redis-borrow", INT64CONST(1420070400000), 1, 2, 4,
	{"time", "node", "sequence", "random"}, {42, 2, 9, 10}},
	/* 19 decimal digits: milliseconds + 136040000000 | sequence | machine | table */
	{"decimal19", INT64CONST(-136040000000), 1, 10, 4,
	{"time", "sequence", "node", "shard"}, {13, 1, 2, 3}},

	/*
	 * At most 2^53 - 1, exact as a JavaScript Number: milliseconds since
	 * 2024-01-01 until 2058-11 | 16 nodes | 8 workers | 64 IDs per ms.
	 */
	{"js53", INT64CONST(1704067200000), 1, 2, 4,
	{"time", "node", "worker", "sequence"}, {40, 4, 3, 6}},

	/*
	 * pgEdge's snowflake extension: milliseconds since 2023-01-01 UTC
	 * (SNOWFLAKE_EPOCH_OFFSET 1672531200 s) << 22 | node (1 to 1023) << 12 |
	 * counter.  No worker field: it generates in one state per server.
	 */
	{"pgedge", INT64CONST(1672531200000), 1, 2, 3,
	{"time", "node", "sequence"}, {41, 10, 12}},
};

static IdgenLayout builtin_layouts[lengthof(builtin_specs)];

/*
 * Accepts a UTC date "YYYY-MM-DD" in the range of epochs; a date keeps the
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
	if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31)
		return false;
	julian = date2j(year, month, day);
	j2date(julian, &y2, &m2, &d2);
	if (y2 != year || m2 != month || d2 != day)
		return false;			/* e.g. February 30 */
	*epoch_ms = (int64) (julian - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	return *epoch_ms >= LAYOUT_MIN_EPOCH_MS && *epoch_ms <= LAYOUT_MAX_EPOCH_MS;
}

/*
 * Lowercase letters, digits, "_" and "-", starting with a letter: a name
 * that needs no quoting anywhere, the high-water mark file included.
 */
bool
layout_valid_name(const char *name)
{
	size_t		len = strlen(name);

	return len > 0 && len < NAMEDATALEN &&
		strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len &&
		name[0] >= 'a' && name[0] <= 'z';
}

/* Reports a layout description that cannot be used, saying why. */
void
layout_invalid(const char *name, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid idgen layout \"%s\"", name),
			 errdetail_internal("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

static IdgenField
layout_parse_field(const char *name, const char *field)
{
	for (int f = 0; f < IDGEN_NFIELDS; f++)
		if (strcmp(field, field_names[f]) == 0)
			return (IdgenField) f;
	layout_invalid(name, psprintf("Field \"%s\" is not a kind of field idgen knows.", field),
				   "Name each field time, node, worker, sequence, shard or random.");
	return IDGEN_FIELD_TIME;	/* keep compiler quiet */
}

/* Place values from the least significant field up; time takes what is left. */
static void
layout_derive(IdgenLayout *layout)
{
	int64		scale = 1;

	for (int i = layout->nfields - 1; i > 0; i--)
	{
		IdgenField	f = layout->order[i];
		int64		size = 1;

		for (int d = 0; d < layout->width[f]; d++)
			size *= layout->radix;
		layout->size[f] = size;
		layout->scale[f] = scale;
		scale *= size;
	}
	/*
	 * Time holds what its width allows, up to the largest time whose IDs all
	 * fit below 2^63; a decimal layout's IDs end within the next one.
	 */
	layout->scale[IDGEN_FIELD_TIME] = scale;
	layout->size[IDGEN_FIELD_TIME] = (int64) ((UINT64CONST(1) << 63) / (uint64) scale);
	layout->max_id = PG_INT64_MAX;
	if (layout->width[IDGEN_FIELD_TIME] < 63)
	{
		int64		declared = 1;

		for (int d = 0; d < layout->width[IDGEN_FIELD_TIME] &&
			 declared <= layout->size[IDGEN_FIELD_TIME]; d++)
			declared *= layout->radix;
		if (declared <= layout->size[IDGEN_FIELD_TIME])
		{
			layout->size[IDGEN_FIELD_TIME] = declared;
			layout->max_id = declared * scale - 1;
		}
	}
}

/*
 * Fills *layout from a description, or fails with an error saying what is
 * wrong with it: the one check for built-in and SQL-defined layouts alike.
 * The name and field names are not kept.
 */
void
layout_build(IdgenLayout *layout, const char *name, int64 epoch_ms, int64 tick_ms,
			 int radix, int nfields, const char *const *names, const int *widths)
{
	int			total = 0;
	int			limit = (radix == 10) ? LAYOUT_MAX_DIGITS : LAYOUT_MAX_BITS;
	int			field_limit = (radix == 10) ? 9 : 31;

	memset(layout, 0, sizeof(*layout));
	layout->name = name;
	if (radix != 2 && radix != 10)
		layout_invalid(name, psprintf("The radix is %d.", radix),
					   "Use radix 2 for widths in bits or 10 for widths in decimal digits.");
	if (tick_ms < 1 || tick_ms > LAYOUT_MAX_TICK_MS)
		layout_invalid(name, "The time unit must be a whole number of milliseconds from 1 millisecond to 1 second.", NULL);
	if (epoch_ms < LAYOUT_MIN_EPOCH_MS || epoch_ms > LAYOUT_MAX_EPOCH_MS)
		layout_invalid(name, psprintf("The epoch must be %s.", LAYOUT_EPOCH_RANGE), NULL);
	if (nfields < 2 || nfields > IDGEN_NFIELDS)
		layout_invalid(name, psprintf("It has %d fields.", nfields),
					   "Give a time field and one to five others, each kind at most once.");
	for (int i = 0; i < nfields; i++)
	{
		IdgenField	f = layout_parse_field(name, names[i]);

		if ((i == 0) != (f == IDGEN_FIELD_TIME))
			layout_invalid(name, "The time field must come first, and only once.",
						   "List the fields from the most significant down, starting with time.");
		if (layout_has_field(layout, f))
			layout_invalid(name, psprintf("Field \"%s\" appears twice.", names[i]), NULL);
		if (f == IDGEN_FIELD_TIME ? (widths[i] < 1 || widths[i] > limit) :
			(widths[i] < 0 || widths[i] > field_limit))
			layout_invalid(name, psprintf("Field \"%s\" has width %d.", names[i], widths[i]),
						   psprintf("Give time a width from 1 to %d and the other fields at most %d, so that they fit an int.",
									limit, field_limit));
		layout->order[i] = f;
		layout->width[f] = widths[i];
		layout->nfields = i + 1;
		total += widths[i];
	}
	if (total > limit)
		layout_invalid(name,
					   psprintf("Its fields take %d %s; a bigint holds %d.", total,
								radix == 10 ? "digits" : "bits", limit),
					   "Narrow the fields.");
	layout->epoch_ms = epoch_ms;
	layout->tick_ms = (int) tick_ms;
	layout->radix = radix;
	layout_derive(layout);
	if (layout->size[IDGEN_FIELD_TIME] > (LAYOUT_MAX_END_MS - epoch_ms) / tick_ms)
		layout_invalid(name, "Its time field reaches past the year 9999.",
					   "Narrow the time field or shorten the time unit.");
}

static void
layout_build_spec(IdgenLayout *layout, const LayoutSpec *spec)
{
	layout_build(layout, spec->name, spec->epoch_ms, spec->tick_ms, spec->radix,
				 spec->nfields, spec->fields, spec->widths);
}

/*
 * Builds the layouts; the default one from idgen.epoch and idgen.node_bits,
 * which settings.c has checked (an invalid epoch falls back to the default,
 * and generating and decoding are refused).
 */
void
layout_configure(const char *epoch, int node_bits)
{
	LayoutSpec	spec = {DEFAULT_LAYOUT_NAME, 0, 1, 2, 4,
	{"time", "node", "worker", "sequence"},
	{IDGEN_TIME_BITS, node_bits, IDGEN_MACHINE_BITS - node_bits, IDGEN_SEQ_BITS}};

	if (!layout_parse_epoch(epoch, &spec.epoch_ms))
		(void) layout_parse_epoch(IDGEN_DEFAULT_EPOCH, &spec.epoch_ms);
	layout_build_spec(&default_layout, &spec);
	for (int i = 0; i < (int) lengthof(builtin_specs); i++)
		layout_build_spec(&builtin_layouts[i], &builtin_specs[i]);
}

const IdgenLayout *
layout_default(void)
{
	return &default_layout;
}

/*
 * "idgen" names the default layout, so that it reads as one of the layouts;
 * it is the only built-in one that depends on settings.
 */
const IdgenLayout *
layout_builtin(const char *name)
{
	if (strcmp(name, DEFAULT_LAYOUT_NAME) == 0)
		return &default_layout;
	for (int i = 0; i < (int) lengthof(builtin_layouts); i++)
		if (strcmp(name, builtin_layouts[i].name) == 0)
			return &builtin_layouts[i];
	return NULL;
}

/* The i-th built-in layout, the default first; NULL past the last. */
const IdgenLayout *
layout_builtin_at(int i)
{
	if (i == 0)
		return &default_layout;
	if (i <= (int) lengthof(builtin_layouts))
		return &builtin_layouts[i - 1];
	return NULL;
}

bool
layout_has_field(const IdgenLayout *layout, IdgenField field)
{
	for (int i = 0; i < layout->nfields; i++)
		if (layout->order[i] == field)
			return true;
	return false;
}

/* The name idgen_define_layout() takes for a kind of field. */
const char *
layout_field_name(IdgenField field)
{
	return field_names[field];
}

/* Each value is reduced to its field's range, so it cannot spill over. */
int64
layout_pack(const IdgenLayout *layout, const IdgenFields *fields)
{
	int64		id = 0;

	for (int i = 0; i < layout->nfields; i++)
	{
		IdgenField	f = layout->order[i];

		id += (fields->value[f] % layout->size[f]) * layout->scale[f];
	}
	return id;
}

void
layout_unpack(const IdgenLayout *layout, int64 id, IdgenFields *fields)
{
	memset(fields, 0, sizeof(*fields));
	for (int i = 0; i < layout->nfields; i++)
	{
		IdgenField	f = layout->order[i];

		fields->value[f] = id / layout->scale[f];
		/* time keeps what is left: up to max_id, a decimal layout's last partial tick */
		if (f != IDGEN_FIELD_TIME)
			fields->value[f] %= layout->size[f];
	}
}

/*
 * The last Unix millisecond the layout's time field can hold: the end of its
 * last tick.
 */
int64
layout_last_ms(const IdgenLayout *layout)
{
	return layout->epoch_ms + layout->size[IDGEN_FIELD_TIME] * layout->tick_ms - 1;
}

/*
 * Refuses a tick starting at ms past the end of the layout's time field:
 * its IDs would wrap to the layout's first ticks.
 */
void
layout_check_end(const IdgenLayout *layout, int64 ms)
{
	int64		last = layout_last_ms(layout);

	/* last as a timestamptz, by layout_parse_epoch's arithmetic */
	if (unlikely(ms > last))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("time field of idgen layout \"%s\" is exhausted", layout->name),
				 errdetail("The layout holds times up to %s.",
						   timestamptz_to_str((last - (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
											   SECS_PER_DAY * 1000) * 1000)),
				 errhint("Move to a layout with a later end.")));
}

/*
 * The smallest ID of the tick holding ms, at or after the epoch: IDs below
 * it end before the tick.
 */
int64
layout_tick_id(const IdgenLayout *layout, int64 ms)
{
	IdgenFields fields = {0};

	layout_check_end(layout, ms);
	fields.value[IDGEN_FIELD_TIME] = layout_tick_number(layout, ms);
	return layout_pack(layout, &fields);
}

/* Fills key with layout's definition, and returns key's hash. */
uint32
layout_key(LayoutKey *key, const IdgenLayout *layout)
{
	memset(key, 0, sizeof(*key));
	strlcpy(key->name, layout->name, NAMEDATALEN);
	key->epoch_ms = layout->epoch_ms;
	key->tick_ms = layout->tick_ms;
	key->radix = layout->radix;
	key->nfields = layout->nfields;
	for (int i = 0; i < layout->nfields; i++)
	{
		key->order[i] = layout->order[i];
		key->width[layout->order[i]] = layout->width[layout->order[i]];
	}
	return hash_bytes((const unsigned char *) key, sizeof(*key));
}
