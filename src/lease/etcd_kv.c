/*
 * etcd_kv.c
 *		The key-value and lease calls the etcd registry (lease_etcd.c)
 *		makes through etcd's gateway (etcd_http.c), and the history this
 *		data directory saw of etcd, in $PGDATA/idgen_etcd: the cluster id
 *		and the highest revision of its answers.
 *
 * etcd loses no acknowledged write while a majority of its members lives;
 * a cluster restored from a snapshot (etcdctl snapshot restore) has lost
 * every write since, leases and marks included, as a PostgreSQL registry
 * restored from a dump has.  Its answers tell: a revision below one seen
 * before, or another cluster id.  Such an answer is refused, and this
 * server fences the registry as the PostgreSQL registry fences itself
 * (idgen_lease_fence_history()): the key <prefix>/fence says that no node
 * id changes hands for a lease, so every live holder's fence passes first,
 * and that next holders start above this server's clock plus the lease
 * plus a minute, for a holder's clock ahead of this one's.  Then the new
 * history is this server's, and its next call goes on.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/durable.h"
#include "etcd_kv.h"
#include "lease.h"
#include "base/settings.h"

#define ETCD_HISTORY_FILE		"idgen_etcd"
#define ETCD_HISTORY_FILE_TMP	"idgen_etcd.tmp"
/* How far a holder's clock may run ahead of the one that fences. */
#define ETCD_SKEW_MS			60000

static char seen_cluster[32] = "";
static int64 seen_rev = 0;
static bool history_loaded = false;

char *
etcd_cmp(const char *key, const char *target, const char *result, const char *field,
		 const char *value)
{
	return psprintf("{\"key\":\"%s\",\"target\":\"%s\",\"result\":\"%s\",\"%s\":\"%s\"}",
					etcd_b64(key), target, result, field, value);
}

char *
etcd_put(const char *key, const char *value, int64 lease)
{
	return psprintf("{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"" INT64_FORMAT "\"}}",
					etcd_b64(key), etcd_b64(value), lease);
}

char *
etcd_get(const char *key)
{
	return psprintf("{\"request_range\":{\"key\":\"%s\"}}", etcd_b64(key));
}

char *
etcd_del(const char *key)
{
	return psprintf("{\"request_delete_range\":{\"key\":\"%s\"}}", etcd_b64(key));
}

static void
history_load(void)
{
	FILE	   *f;
	long long	rev = 0;

	if (history_loaded)
		return;
	history_loaded = true;
	f = AllocateFile(ETCD_HISTORY_FILE, "r");
	if (f == NULL)
		return;
	if (fscanf(f, "%31s %lld", seen_cluster, &rev) != 2)
		seen_cluster[0] = '\0';
	seen_rev = rev;
	FreeFile(f);
}

/* Durably: called after each acquire and renewal, not per answer. */
void
etcd_history_save(void)
{
	char	   *data;

	if (seen_cluster[0] == '\0')
		return;
	data = psprintf("%s " INT64_FORMAT "\n", seen_cluster, seen_rev);
	durable_replace_file(ETCD_HISTORY_FILE, ETCD_HISTORY_FILE_TMP, data, strlen(data));
}

/*
 * The answer's header against the history seen; false with *err when etcd
 * lost history, after fencing it.
 */
static bool
history_check(JsonbContainer *c, int64 deadline_us, char **err)
{
	JsonbContainer *h = etcd_obj(c, "header") ? etcd_obj(c, "header") :
		etcd_obj(etcd_obj(c, "result"), "header");
	char	   *cluster = etcd_text(h, "cluster_id");
	int64		rev = etcd_int(h, "revision");
	int64		now = clock_now_ms();
	int64		lease_ms = (int64) idgen_node_lease_s * 1000;

	if (cluster == NULL || lease_history_off)
		return true;
	history_load();
	if (seen_cluster[0] == '\0' || (strcmp(cluster, seen_cluster) == 0 && rev >= seen_rev))
	{
		strlcpy(seen_cluster, cluster, sizeof(seen_cluster));
		seen_rev = Max(seen_rev, rev);
		return true;
	}
	ereport(LOG,
			(errmsg("idgen: the etcd node id registry lost history: no node id is leased before %s",
					timestamptz_to_str(clock_ms_to_timestamptz(now + lease_ms))),
			 errdetail("It answered as cluster %s at revision %lld; this server saw cluster %s at revision %lld (restored from a snapshot?).",
					   cluster, (long long) rev, seen_cluster, (long long) seen_rev)));
	if (!etcd_fence_history(now + lease_ms, now + lease_ms + ETCD_SKEW_MS, deadline_us, err))
		return false;
	*err = psprintf("etcd lost history (cluster %s at revision %lld, below revision %lld seen): no node id is leased before %s.",
					cluster, (long long) rev, (long long) seen_rev,
					timestamptz_to_str(clock_ms_to_timestamptz(now + lease_ms)));
	strlcpy(seen_cluster, cluster, sizeof(seen_cluster));
	seen_rev = rev;
	etcd_history_save();
	return false;
}

/* Writes <prefix>/fence: no node id changes hands before until_ms. */
bool
etcd_fence_history(int64 until_ms, int64 floor_ms, int64 deadline_us, char **err)
{
	char	   *key = psprintf("%s/fence", etcd_url()->prefix);
	char	   *value = psprintf("%020lld %020lld", (long long) until_ms, (long long) floor_ms);

	return etcd_call("/v3/kv/put",
					 psprintf("{\"key\":\"%s\",\"value\":\"%s\"}", etcd_b64(key), etcd_b64(value)),
					 deadline_us, err) != NULL;
}

/* etcd_call(), its answer checked against the history. */
static JsonbContainer *
etcd_checked(const char *path, const char *body, int64 deadline_us, char **err)
{
	JsonbContainer *c = etcd_call(path, body, deadline_us, err);

	return c && history_check(c, deadline_us, err) ? c : NULL;
}

/*
 * A transaction of compares and operations each way (NULL ends a list,
 * and a NULL list is empty); the answer, or NULL with *err.  *succeeded
 * says which way it went.
 */
JsonbContainer *
etcd_txn(char *const *cmp, char *const *then, char *const *otherwise, int64 deadline_us,
		 bool *succeeded, char **err)
{
	StringInfoData b;
	JsonbContainer *c;
	char	   *const *lists[] = {cmp, then, otherwise};
	const char *names[] = {"compare", "success", "failure"};
	char	   *s;

	initStringInfo(&b);
	appendStringInfoChar(&b, '{');
	for (int l = 0; l < 3; l++)
	{
		appendStringInfo(&b, "%s\"%s\":[", l ? "," : "", names[l]);
		for (int i = 0; lists[l] && lists[l][i]; i++)
			appendStringInfo(&b, "%s%s", i ? "," : "", lists[l][i]);
		appendStringInfoChar(&b, ']');
	}
	appendStringInfoChar(&b, '}');
	c = etcd_checked("/v3/kv/txn", b.data, deadline_us, err);
	s = c ? etcd_text(c, "succeeded") : NULL;
	*succeeded = s && strcmp(s, "true") == 0;
	return c;
}

/* The first key of a transaction's i-th answer, a range; NULL when none. */
JsonbContainer *
etcd_txn_kv(JsonbContainer *answer, int i)
{
	JsonbContainer *r = etcd_obj(etcd_item(answer, "responses", i), "response_range");

	return etcd_count(r, "kvs") > 0 ? etcd_item(r, "kvs", 0) : NULL;
}

/* Every key below prefix + "/" ("/" + 1 is "0"). */
JsonbContainer *
etcd_range_prefix(const char *prefix, int64 deadline_us, char **err)
{
	char	   *from = psprintf("%s/", prefix);
	char	   *to = psprintf("%s0", prefix);

	return etcd_checked("/v3/kv/range",
						psprintf("{\"key\":\"%s\",\"range_end\":\"%s\"}", etcd_b64(from), etcd_b64(to)),
						deadline_us, err);
}

/* A new etcd lease of lease_s; its id, or 0 with *err. */
int64
etcd_grant(int lease_s, int64 deadline_us, char **err)
{
	JsonbContainer *c = etcd_checked("/v3/lease/grant", psprintf("{\"TTL\":\"%d\"}", lease_s),
									 deadline_us, err);
	int64		id = c ? etcd_int(c, "ID") : 0;

	if (c && id == 0)
		*err = psprintf("etcd granted no lease: %s",
						etcd_text(c, "error") ? etcd_text(c, "error") : "no ID");
	return id;
}

/*
 * Keeps an etcd lease alive: its new TTL, 0 when etcd has it no more
 * (expired or revoked), -1 with *err when etcd did not answer.
 */
int64
etcd_keepalive(int64 id, int64 deadline_us, char **err)
{
	JsonbContainer *c = etcd_checked("/v3/lease/keepalive",
									 psprintf("{\"ID\":\"" INT64_FORMAT "\"}", id), deadline_us, err);

	if (c == NULL)
		return -1;
	if (etcd_obj(c, "error") || (etcd_obj(c, "result") == NULL && etcd_text(c, "error")))
	{
		*err = psprintf("etcd refused the keepalive: %s", etcd_text(c, "error"));
		return -1;
	}
	return etcd_int(etcd_obj(c, "result"), "TTL");
}

/* Best effort: a lease nobody renews runs out by itself. */
void
etcd_revoke(int64 id, int64 deadline_us)
{
	char	   *err;

	if (id != 0)
		(void) etcd_call("/v3/lease/revoke", psprintf("{\"ID\":\"" INT64_FORMAT "\"}", id),
						 deadline_us, &err);
}
