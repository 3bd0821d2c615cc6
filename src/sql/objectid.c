/*
 * objectid.c
 *		The objectid type: MongoDB's 12-byte ObjectId, its text and binary
 *		forms, comparison, hashing, casts, and the objectid() generator.
 *
 * An ObjectId is a 4-byte big-endian count of seconds since 1970, a 5-byte
 * value unique to the generating process, and a 3-byte big-endian counter.
 * Values compare as unsigned bytes, so they sort by time first.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/sortsupport.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/compat.h"
#include "base/random.h"

#define OBJECTID_LEN		12
#define OBJECTID_HEX_LEN	(2 * OBJECTID_LEN)
#define OBJECTID_MAX_SECONDS	INT64CONST(0xFFFFFFFF)
#define OBJECTID_COUNTER_MASK	0xFFFFFF

typedef struct ObjectId
{
	uint8		data[OBJECTID_LEN];
} ObjectId;

#define DatumGetObjectIdP(X)		((ObjectId *) DatumGetPointer(X))
#define PG_GETARG_OBJECTID_P(n)		DatumGetObjectIdP(PG_GETARG_DATUM(n))
#define PG_RETURN_OBJECTID_P(x)		PG_RETURN_POINTER(x)

/*
 * Generator state of this backend.  It is set up at the first objectid()
 * call, never in _PG_init: with shared_preload_libraries the postmaster
 * loads the library and every backend is its fork, so anything chosen there
 * would be shared by all of them.
 */
static bool gen_ready = false;
static uint8 gen_process[5];	/* backend number, then 3 random bytes */
static uint32 gen_counter;		/* counter of the newest value */
static int64 gen_second;		/* second of the newest value */
static uint32 gen_second_start; /* counter of the first value of that second */

PG_FUNCTION_INFO_V1(objectid_in);
PG_FUNCTION_INFO_V1(objectid_out);
PG_FUNCTION_INFO_V1(objectid_recv);
PG_FUNCTION_INFO_V1(objectid_send);
PG_FUNCTION_INFO_V1(objectid_eq);
PG_FUNCTION_INFO_V1(objectid_ne);
PG_FUNCTION_INFO_V1(objectid_lt);
PG_FUNCTION_INFO_V1(objectid_le);
PG_FUNCTION_INFO_V1(objectid_gt);
PG_FUNCTION_INFO_V1(objectid_ge);
PG_FUNCTION_INFO_V1(objectid_cmp);
PG_FUNCTION_INFO_V1(objectid_sortsupport);
PG_FUNCTION_INFO_V1(objectid_hash);
PG_FUNCTION_INFO_V1(objectid_hash_extended);
PG_FUNCTION_INFO_V1(objectid_to_bytea);
PG_FUNCTION_INFO_V1(objectid_from_bytea);
PG_FUNCTION_INFO_V1(objectid_timestamp);
PG_FUNCTION_INFO_V1(objectid_from_timestamp);
PG_FUNCTION_INFO_V1(objectid);

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 24 hex digits: no braces, separators or spaces, unlike uuid. */
Datum
objectid_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	ObjectId   *result = palloc(sizeof(ObjectId));

	if (strlen(str) != OBJECTID_HEX_LEN)
		goto bad;
	for (int i = 0; i < OBJECTID_LEN; i++)
	{
		int			hi = hex_value(str[2 * i]);
		int			lo = hex_value(str[2 * i + 1]);

		if (hi < 0 || lo < 0)
			goto bad;
		result->data[i] = (uint8) ((hi << 4) | lo);
	}
	PG_RETURN_OBJECTID_P(result);

bad:
	ereturn(fcinfo->context, (Datum) 0,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%s\"",
					"objectid", str)));
}

Datum
objectid_out(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);
	static const char digits[] = "0123456789abcdef";
	char	   *result = palloc(OBJECTID_HEX_LEN + 1);

	for (int i = 0; i < OBJECTID_LEN; i++)
	{
		result[2 * i] = digits[id->data[i] >> 4];
		result[2 * i + 1] = digits[id->data[i] & 0x0F];
	}
	result[OBJECTID_HEX_LEN] = '\0';
	PG_RETURN_CSTRING(result);
}

/* Both binary ways in, COPY/drivers and the bytea cast, check the length here. */
static ObjectId *
objectid_from_bytes(const char *bytes, int len)
{
	ObjectId   *result;

	if (len != OBJECTID_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid length for type %s: %d bytes", "objectid", len),
				 errdetail("An objectid is exactly %d bytes long.", OBJECTID_LEN)));
	result = palloc(sizeof(ObjectId));
	memcpy(result->data, bytes, OBJECTID_LEN);
	return result;
}

Datum
objectid_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;

	PG_RETURN_OBJECTID_P(objectid_from_bytes(pq_getmsgbytes(buf, len), len));
}

Datum
objectid_send(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (char *) id->data, OBJECTID_LEN);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* The one comparison: unsigned bytes, so earlier seconds sort first. */
static inline int
objectid_internal_cmp(const ObjectId *a, const ObjectId *b)
{
	return memcmp(a->data, b->data, OBJECTID_LEN);
}

#define OBJECTID_CMP(fcinfo) \
	objectid_internal_cmp(PG_GETARG_OBJECTID_P(0), PG_GETARG_OBJECTID_P(1))

Datum
objectid_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) == 0);
}

Datum
objectid_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) != 0);
}

Datum
objectid_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) < 0);
}

Datum
objectid_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) <= 0);
}

Datum
objectid_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) > 0);
}

Datum
objectid_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(OBJECTID_CMP(fcinfo) >= 0);
}

Datum
objectid_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(OBJECTID_CMP(fcinfo));
}

/* Sorting calls the comparison directly, without the fmgr round trip. */
static int
objectid_fast_cmp(Datum x, Datum y, SortSupport ssup)
{
	return objectid_internal_cmp(DatumGetObjectIdP(x), DatumGetObjectIdP(y));
}

Datum
objectid_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = objectid_fast_cmp;
	PG_RETURN_VOID();
}

Datum
objectid_hash(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);

	return hash_any(id->data, OBJECTID_LEN);
}

Datum
objectid_hash_extended(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);

	return hash_any_extended(id->data, OBJECTID_LEN, PG_GETARG_INT64(1));
}

Datum
objectid_to_bytea(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);
	bytea	   *result = palloc(VARHDRSZ + OBJECTID_LEN);

	SET_VARSIZE(result, VARHDRSZ + OBJECTID_LEN);
	memcpy(VARDATA(result), id->data, OBJECTID_LEN);
	PG_RETURN_BYTEA_P(result);
}

Datum
objectid_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_OBJECTID_P(objectid_from_bytes(VARDATA_ANY(b),
											 VARSIZE_ANY_EXHDR(b)));
}

static uint32
objectid_get_seconds(const ObjectId *id)
{
	return ((uint32) id->data[0] << 24) | ((uint32) id->data[1] << 16) |
		((uint32) id->data[2] << 8) | (uint32) id->data[3];
}

static void
objectid_set_seconds(ObjectId *id, int64 seconds)
{
	id->data[0] = (uint8) (seconds >> 24);
	id->data[1] = (uint8) (seconds >> 16);
	id->data[2] = (uint8) (seconds >> 8);
	id->data[3] = (uint8) seconds;
}

/* Seconds before 1970 are negative: round them down too. */
static int64
floor_seconds(int64 unix_ms)
{
	if (unix_ms < 0 && unix_ms % 1000 != 0)
		return unix_ms / 1000 - 1;
	return unix_ms / 1000;
}

Datum
objectid_timestamp(PG_FUNCTION_ARGS)
{
	ObjectId   *id = PG_GETARG_OBJECTID_P(0);

	PG_RETURN_TIMESTAMPTZ(clock_ms_to_timestamptz((int64) objectid_get_seconds(id) * 1000));
}

/* The smallest ObjectId of the second containing ts. */
Datum
objectid_from_timestamp(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	ObjectId   *result;
	int64		seconds;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for objectid: infinite timestamps cannot be encoded"),
				 errhint("Pass a finite timestamp from 1970-01-01 00:00:00 to 2106-02-07 06:28:15 UTC.")));
	seconds = floor_seconds(clock_timestamptz_to_ms(ts));
	if (seconds < 0 || seconds > OBJECTID_MAX_SECONDS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for objectid: \"%s\"", timestamptz_to_str(ts)),
				 errdetail("An objectid holds whole seconds from 1970-01-01 00:00:00 to 2106-02-07 06:28:15 UTC."),
				 errhint("Pass a timestamp within that range.")));
	result = palloc0(sizeof(ObjectId));
	objectid_set_seconds(result, seconds);
	PG_RETURN_OBJECTID_P(result);
}

/*
 * Two of the five process bytes are the backend number, unique among live
 * backends, so no two sessions of this server share the field, whatever the
 * random bytes; the three random bytes tell apart servers and successive
 * holders of a backend number.
 */
static void
objectid_generator_init(void)
{
	int			backend = idgen_backend_number();
	const uint8 *random;

	if (backend < 0 || backend > 0xFFFF)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("objectid() cannot run in a process with backend number %d", backend),
				 errdetail("The process field of an objectid holds backend numbers from 0 to 65535.")));
	random = random_strong(6);
	gen_process[0] = (uint8) (backend >> 8);
	gen_process[1] = (uint8) backend;
	memcpy(&gen_process[2], random, 3);
	/* The first value gets the random start itself. */
	gen_counter = (((uint32) random[3] << 16) | ((uint32) random[4] << 8) |
				   (uint32) random[5]) - 1;
	gen_second = -1;
	gen_ready = true;
}

/* The counter came round in gen_second, which the clock may not have left. */
static void
objectid_refuse_exhausted(int64 clock_seconds)
{
	if (clock_seconds < gen_second)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("objectid counter exhausted for the current second"),
				 errdetail("The system clock is %lld s behind this backend's newest ObjectId, so values stay in that second, and all 16777216 of its values are used.",
						   (long long) (gen_second - clock_seconds)),
				 errhint("Check the server's time synchronization; objectid() resumes once the clock passes that second.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("objectid counter exhausted for the current second"),
			 errdetail("This backend made 16777216 ObjectIds in one second; another would repeat one of them."),
			 errhint("Retry in the next second.")));
}

/*
 * objectid(): the time field is the clock's second, as MongoDB drivers
 * write it, but never earlier than the newest second this backend used: the
 * counters used in an earlier second are not known any more, so going back
 * to it could repeat a value.  While the clock is behind, values stay in the
 * newest second; a new session starts from the clock again.
 *
 * Within a second the counter runs on from where it was, wrapping from
 * 0xFFFFFF to 0 as the specification says.  Should it come round to the
 * first counter of the second, the next value would repeat one made in that
 * second.  We raise an error rather than sleep until the next second: 2^24
 * values a second is far beyond what one backend makes, so reaching it
 * means something is wrong.
 */
Datum
objectid(PG_FUNCTION_ARGS)
{
	ObjectId   *result;
	int64		seconds;
	uint32		counter;

	if (unlikely(!gen_ready))
		objectid_generator_init();

	seconds = floor_seconds(clock_now_ms());
	if (unlikely(seconds < 0 || seconds > OBJECTID_MAX_SECONDS))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("system clock is outside the time range of objectid"),
				 errdetail("An objectid holds whole seconds from 1970-01-01 00:00:00 to 2106-02-07 06:28:15 UTC."),
				 errhint("Check the server's clock and %s.", "idgen.clock_offset_ms")));

	counter = (gen_counter + 1) & OBJECTID_COUNTER_MASK;
	if (seconds > gen_second)
	{
		gen_second = seconds;
		gen_second_start = counter;
	}
	else if (unlikely(counter == gen_second_start))
		objectid_refuse_exhausted(seconds);
	gen_counter = counter;

	result = palloc(sizeof(ObjectId));
	objectid_set_seconds(result, gen_second);
	memcpy(&result->data[4], gen_process, sizeof(gen_process));
	result->data[9] = (uint8) (counter >> 16);
	result->data[10] = (uint8) (counter >> 8);
	result->data[11] = (uint8) counter;
	PG_RETURN_OBJECTID_P(result);
}
