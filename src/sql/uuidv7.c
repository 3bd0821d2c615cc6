/*
 * uuidv7.c
 *		RFC 9562 UUIDv7, monotonic within a backend, for servers without
 *		PostgreSQL 18's uuidv7().
 *
 * 48-bit Unix milliseconds | version 7 | 12 bits of sub-millisecond time
 * (RFC 9562 section 6.2, method 3, as PostgreSQL 18 does) | variant 10 |
 * 62 random bits.  The 60 time bits never repeat or go back within a
 * backend: when the clock has not moved on, or moved back, they count up
 * from the previous value.
 *
 * The random bits are strong ones (random.c), never shared between
 * backends.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "base/clock.h"
#include "base/random.h"

PG_FUNCTION_INFO_V1(idgen_uuidv7);
PG_FUNCTION_INFO_V1(idgen_uuid_timestamp);

#define SUBMS_BITS	12
#define NS_PER_MS	1000000

/* Milliseconds << 12 | sub-millisecond fraction of the newest UUID. */
static int64 last_time60 = 0;


Datum
idgen_uuidv7(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *uuid = palloc(UUID_LEN);
	int64		ns = clock_now_ns();
	int64		ms = ns / NS_PER_MS;
	int64		time60 = (ms << SUBMS_BITS) |
		(((ns % NS_PER_MS) << SUBMS_BITS) / NS_PER_MS);

	if (ms < 0 || ms >= (INT64CONST(1) << 48))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("system clock is outside the range of UUIDv7")));
	if (time60 <= last_time60)
		time60 = last_time60 + 1;
	last_time60 = time60;

	memcpy(uuid->data + 8, random_strong(8), 8);
	ms = time60 >> SUBMS_BITS;
	for (int i = 0; i < 6; i++)
		uuid->data[i] = (uint8) (ms >> (40 - 8 * i));
	uuid->data[6] = 0x70 | (uint8) ((time60 >> 8) & 0x0F);
	uuid->data[7] = (uint8) (time60 & 0xFF);
	uuid->data[8] = 0x80 | (uuid->data[8] & 0x3F);
	PG_RETURN_UUID_P(uuid);
}

/* The millisecond of a version 7 UUID; NULL for other versions, as core does. */
Datum
idgen_uuid_timestamp(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *uuid = PG_GETARG_UUID_P(0);
	int64		ms = 0;

	if ((uuid->data[6] >> 4) != 7 || (uuid->data[8] & 0xC0) != 0x80)
		PG_RETURN_NULL();
	for (int i = 0; i < 6; i++)
		ms = (ms << 8) | uuid->data[i];
	PG_RETURN_TIMESTAMPTZ(clock_ms_to_timestamptz(ms));
}
