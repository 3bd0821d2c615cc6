/*
 * etcd_http.c
 *		The lease worker's calls to etcd's v3 HTTP/JSON gateway
 *		(grpc-gateway, /v3/...), through libcurl: one POST per call, each
 *		with a deadline (CURLOPT_TIMEOUT_MS), the endpoints of
 *		idgen.node_registry tried in turn from the last one that answered,
 *		each given an equal share of the time left, so one frozen member
 *		cannot use it all.  Keys and values travel as base64; answers are
 *		parsed as jsonb, whose int64 fields etcd writes as strings and
 *		whose zero values (false, 0, empty) it leaves out.
 *
 * With user= and passfile=, the worker authenticates (/v3/auth/
 * authenticate) and sends etcd's token with each call; a refused token is
 * dropped, and the next call authenticates again.
 */
#include "postgres.h"

#include <curl/curl.h>

#include "common/base64.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/pmsignal.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "base/compat.h"
#include "etcd_http.h"
#include "lease.h"
#include "base/settings.h"

static CURL *curl = NULL;
static EtcdUrl url;
static bool url_parsed = false;
static int	current = 0;		/* the endpoint that answered last */
static char *auth_token = NULL; /* TopMemoryContext */
/* the release at shutdown, with its own short deadline, is not cut short */
static bool finishing = false;

/* The registry's endpoints and options, parsed once per worker. */
const EtcdUrl *
etcd_url(void)
{
	if (!url_parsed)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		char	   *err;

		/* the setting's check hook parsed it already */
		if (!etcd_url_parse(idgen_node_registry, &url, &err))
			elog(ERROR, "invalid idgen.node_registry: %s", err);
		MemoryContextSwitchTo(old);
		url_parsed = true;
	}
	return &url;
}

static size_t
etcd_write(char *data, size_t size, size_t n, void *buf)
{
	appendBinaryStringInfo((StringInfo) buf, data, (int) (size * n));
	return size * n;
}

/* Ends a transfer when the server shuts down or the postmaster died. */
static int
etcd_progress(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	return ((ShutdownRequestPending && !finishing) || !PostmasterIsAlive()) ? 1 : 0;
}

/*
 * The calls left are the release's, at shutdown: a shutdown request that
 * arrives meanwhile does not end them, their deadline does.
 */
void
etcd_finishing(void)
{
	finishing = true;
}

/* The text as jsonb, or NULL when it is not JSON. */
static JsonbContainer *
etcd_parse(const char *text)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile j = NULL;

	PG_TRY();
	{
		j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
	}
	PG_END_TRY();
	return j && JB_ROOT_IS_OBJECT(j) ? &j->root : NULL;
}

/* One POST to one endpoint; the HTTP status (0: no answer) and the body. */
static long
etcd_post(const char *endpoint, const char *path, const char *body, int64 timeout_ms,
		  StringInfo answer, char **err)
{
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
	char		errbuf[CURL_ERROR_SIZE] = "";
	long		status = 0;
	CURLcode	rc;

	if (auth_token)
		headers = curl_slist_append(headers, psprintf("Authorization: %s", auth_token));
	resetStringInfo(answer);
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL,
					 psprintf("%s://%s%s", url.tls ? "https" : "http", endpoint, path));
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long) Max(timeout_ms, 1));
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, etcd_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, etcd_progress);
	if (url.cacert)
		curl_easy_setopt(curl, CURLOPT_CAINFO, url.cacert);
	if (url.cert)
		curl_easy_setopt(curl, CURLOPT_SSLCERT, url.cert);
	if (url.key)
		curl_easy_setopt(curl, CURLOPT_SSLKEY, url.key);
	rc = curl_easy_perform(curl);
	curl_slist_free_all(headers);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		*err = psprintf("etcd at %s did not answer within %lld ms.", endpoint, (long long) timeout_ms);
	else if (rc != CURLE_OK)
		*err = psprintf("Could not reach etcd at %s: %s", endpoint,
						errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	return rc == CURLE_OK ? status : 0;
}

/* A password from the passfile option: its first line. */
static char *
etcd_password(void)
{
	FILE	   *f = url.passfile ? AllocateFile(url.passfile, "r") : NULL;
	char		line[1024] = "";

	if (f == NULL)
		return NULL;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	FreeFile(f);
	line[strcspn(line, "\r\n")] = '\0';
	return pstrdup(line);
}

/* Authenticates on one endpoint when user= is set; false with *err. */
static bool
etcd_authenticate(const char *endpoint, int64 timeout_ms, char **err)
{
	StringInfoData body,
				answer;
	JsonbContainer *c;
	char	   *password = etcd_password();
	char	   *token;

	if (url.user == NULL || auth_token != NULL)
		return true;
	if (password == NULL)
	{
		*err = psprintf("Could not read the etcd password from passfile \"%s\".",
						url.passfile ? url.passfile : "");
		return false;
	}
	initStringInfo(&body);
	initStringInfo(&answer);
	appendStringInfoString(&body, "{\"name\":");
	escape_json(&body, url.user);
	appendStringInfoString(&body, ",\"password\":");
	escape_json(&body, password);
	appendStringInfoChar(&body, '}');
	if (etcd_post(endpoint, "/v3/auth/authenticate", body.data, timeout_ms, &answer, err) != 200)
	{
		if (answer.len)
			*err = psprintf("etcd at %s refused user \"%s\": %s", endpoint, url.user, answer.data);
		return false;
	}
	c = etcd_parse(answer.data);
	token = c ? etcd_text(c, "token") : NULL;
	if (token == NULL)
	{
		*err = psprintf("etcd at %s gave user \"%s\" no token.", endpoint, url.user);
		return false;
	}
	auth_token = MemoryContextStrdup(TopMemoryContext, token);
	return true;
}

/*
 * POSTs the JSON body to path, trying each endpoint in turn until one
 * answers 200, before the deadline (monotonic, lease.h); the answer, or
 * NULL with *err saying what the last endpoint tried said.
 */
JsonbContainer *
etcd_call(const char *path, const char *body, int64 deadline_us, char **err)
{
	StringInfoData answer;

	(void) etcd_url();
	if (curl == NULL)
	{
		curl_global_init(CURL_GLOBAL_DEFAULT);
		curl = curl_easy_init();
		if (curl == NULL)
		{
			*err = pstrdup("Could not set up libcurl.");
			return NULL;
		}
	}
	initStringInfo(&answer);
	*err = pstrdup("No time was left to call etcd.");
	for (int tries = url.nendpoints; tries > 0; tries--)
	{
		const char *endpoint = url.endpoints[current];
		int64		share_ms = (deadline_us - lease_monotonic_us()) / 1000 / tries;
		long		status;
		JsonbContainer *c;

		if (share_ms <= 0)
			break;
		if (etcd_authenticate(endpoint, share_ms, err))
		{
			status = etcd_post(endpoint, path, body, share_ms, &answer, err);
			c = status ? etcd_parse(answer.data) : NULL;
			if (status == 200 && c != NULL)
				return c;
			if (status != 0)
				*err = psprintf("etcd at %s answered %ld: %s", endpoint, status,
								c && etcd_text(c, "error") ? etcd_text(c, "error") : answer.data);
			/* an expired token: authenticate again */
			if (auth_token && (status == 401 || (status != 0 && strstr(answer.data, "token") != NULL)))
			{
				pfree(auth_token);
				auth_token = NULL;
			}
		}
		current = (current + 1) % url.nendpoints;
	}
	return NULL;
}

/* A member of an object, if an object or array; NULL when not there. */
JsonbContainer *
etcd_obj(JsonbContainer *c, const char *key)
{
	JsonbValue *v = c ? getKeyJsonValueFromContainer(c, key, strlen(key), NULL) : NULL;

	return v && v->type == jbvBinary ? v->val.binary.data : NULL;
}

/* A scalar member as text (etcd writes int64 as strings); NULL when absent. */
char *
etcd_text(JsonbContainer *c, const char *key)
{
	JsonbValue *v = c ? getKeyJsonValueFromContainer(c, key, strlen(key), NULL) : NULL;

	if (v == NULL)
		return NULL;
	switch (v->type)
	{
		case jbvString:
			return pnstrdup(v->val.string.val, v->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return pstrdup(v->val.boolean ? "true" : "false");
		default:
			return NULL;
	}
}

/* An integer member; 0 when absent, as etcd leaves zeros out. */
int64
etcd_int(JsonbContainer *c, const char *key)
{
	char	   *t = etcd_text(c, key);

	return t ? (int64) strtoll(t, NULL, 10) : 0;
}

/* How many items an array member has; 0 when absent. */
int
etcd_count(JsonbContainer *c, const char *key)
{
	JsonbContainer *a = etcd_obj(c, key);

	return a && JsonContainerIsArray(a) ? (int) JsonContainerSize(a) : 0;
}

/* The i-th object of an array member. */
JsonbContainer *
etcd_item(JsonbContainer *c, const char *key, int i)
{
	JsonbContainer *a = etcd_obj(c, key);
	JsonbValue *v = a ? getIthJsonbValueFromContainer(a, i) : NULL;

	return v && v->type == jbvBinary ? v->val.binary.data : NULL;
}

char *
etcd_b64(const char *s)
{
	int			len = strlen(s);
	char	   *out = palloc(pg_b64_enc_len(len) + 1);
	int			n = idgen_b64_encode(s, len, out, pg_b64_enc_len(len));

	out[Max(n, 0)] = '\0';
	return out;
}

/* Decoded, NUL-terminated; "" when s is NULL or not base64. */
char *
etcd_unb64(const char *s)
{
	int			len = s ? strlen(s) : 0;
	char	   *out = palloc(pg_b64_dec_len(len) + 1);
	int			n = len ? idgen_b64_decode(s, len, out, pg_b64_dec_len(len)) : 0;

	out[Max(n, 0)] = '\0';
	return out;
}

void
etcd_close(void)
{
	if (curl)
		curl_easy_cleanup(curl);
	curl = NULL;
	if (auth_token)
		pfree(auth_token);
	auth_token = NULL;
}
