/*
 * encode.c
 *		Fixed-width text forms of IDs that sort like the IDs themselves:
 *		Crockford base32 (13 characters) and base62 (11 characters).
 *
 * Both alphabets are in ascending ASCII order and every value is padded to
 * the full width, so comparing the strings byte by byte (COLLATE "C")
 * orders them as the numbers.
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(idgen_encode);
PG_FUNCTION_INFO_V1(idgen_parse);

typedef struct Encoding
{
	const char *name;
	const char *alphabet;
	int			base;
	int			width;			/* digits of the largest bigint */
} Encoding;

static const Encoding encodings[] = {
	{"base32", "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 32, 13},
	{"base62", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 62, 11},
};

static const Encoding *
encoding_lookup(text *name)
{
	char	   *s = text_to_cstring(name);

	for (int i = 0; i < (int) lengthof(encodings); i++)
		if (strcmp(s, encodings[i].name) == 0)
			return &encodings[i];
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown idgen encoding \"%s\"", s),
			 errhint("Use \"base32\" or \"base62\".")));
	return NULL;				/* keep compiler quiet */
}

/*
 * The digit value of c, or -1.  Crockford base32 reads lowercase too, and
 * I, L as 1 and O as 0, as its specification asks.
 */
static int
encoding_digit(const Encoding *enc, char c)
{
	const char *p;

	if (enc->base == 32)
	{
		c = pg_ascii_toupper((unsigned char) c);
		if (c == 'I' || c == 'L')
			c = '1';
		else if (c == 'O')
			c = '0';
	}
	p = c ? strchr(enc->alphabet, c) : NULL;
	return p ? (int) (p - enc->alphabet) : -1;
}

Datum
idgen_encode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const Encoding *enc = encoding_lookup(PG_GETARG_TEXT_PP(1));
	char		buf[16];
	uint64		v = (uint64) id;

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot encode negative ID %lld", (long long) id),
				 errdetail("Only IDs from 0 up sort correctly as text.")));
	buf[enc->width] = '\0';
	for (int i = enc->width - 1; i >= 0; i--)
	{
		buf[i] = enc->alphabet[v % enc->base];
		v /= enc->base;
	}
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/* Lengths and positions count characters, not bytes, whatever the encoding. */
Datum
idgen_parse(PG_FUNCTION_ARGS)
{
	text	   *in = PG_GETARG_TEXT_PP(0);
	const Encoding *enc = encoding_lookup(PG_GETARG_TEXT_PP(1));
	char	   *s = text_to_cstring(in);
	int			len = strlen(s);
	uint64		v = 0;

	if (pg_mbstrlen_with_len(s, len) != enc->width)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid %s idgen ID: \"%s\"", enc->name, s),
				 errdetail("A %s idgen ID has exactly %d characters.", enc->name, enc->width)));
	for (int i = 0; i < len; i += pg_mblen(s + i))
	{
		int			d = pg_mblen(s + i) == 1 ? encoding_digit(enc, s[i]) : -1;

		if (d < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid %s idgen ID: \"%s\"", enc->name, s),
					 errdetail("Character \"%.*s\" is not a %s digit.", pg_mblen(s + i), s + i,
							   enc->name)));
		if (v > (uint64) ((PG_INT64_MAX - d) / enc->base))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s idgen ID \"%s\" is out of range for type bigint", enc->name, s)));
		v = v * enc->base + d;
	}
	PG_RETURN_INT64((int64) v);
}
