/*
 * lease_etcd.c
 *		The lease operations (lease_ops.h) on etcd, as the PostgreSQL
 *		registry's functions keep them, with etcd's primitives, under the
 *		prefix of idgen.node_registry:
 *
 *		<prefix>/node/<id>	"token node_bits epoch_ms identity", bound to an
 *							etcd lease: it exists while a server holds the
 *							node id, and is created only where absent
 *							(create_revision = 0, in one transaction);
 *		<prefix>/mark/<id>	"mark token node_bits epoch_ms", no lease: every
 *							ID made under the node id lies below the mark
 *							(20 digits, so that etcd's byte order is the
 *							numbers'); raised by compare-and-swap while the
 *							node key is the holder's, lowered only by the
 *							holder's release to the IDs it really made, as
 *							the PostgreSQL registry does; the token is the
 *							last acquirer's, as the registry's row has it;
 *		<prefix>/fence		"until_ms floor_ms": set by a server that saw
 *							etcd lose history (etcd_kv.c); no node id
 *							changes hands before until_ms, and next holders
 *							start above floor_ms.
 *
 * A renewal is a keepalive of the etcd lease, then the mark.  etcd counts
 * the lease from when its leader received the keepalive, after the worker
 * sent it, and a new leader or a restarted cluster only extends leases, so
 * the fence (lease_worker.c) passes first.  A lease that ran out while no
 * other server took the node id (the mark's token still this server's) is
 * taken again under a new etcd lease, as the PostgreSQL registry renews an
 * expired lease whose token nobody replaced; otherwise the node id is lost.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "base/clock.h"
#include "etcd_kv.h"
#include "lease.h"
#include "lease_ops.h"

/* node_bits is at most 10 */
#define ETCD_MAX_NODES 1024

/* What etcd holds of one node id. */
typedef struct EtcdNode
{
	bool		held;			/* the node key exists */
	char		holder[64];		/* its token */
	int			held_bits;
	int64		held_epoch;
	bool		marked;			/* the mark key exists */
	int64		mark;
	char		token[64];		/* the last acquirer's */
	int			bits;
	int64		epoch;
	int64		mark_rev;		/* the mark key's mod_revision; 0: none */
} EtcdNode;

/* The etcd lease the node key is bound to; 0: not known (a restarted worker). */
static int64 lease_id = 0;
/* Granted by an acquire that did not finish: revoked before the next. */
static int64 abandoned = 0;
/* The node key's layout and holder, for the values written. */
static int	held_bits = 0;
static int64 held_epoch = 0;
static char holder_identity[MAXPGPATH + 128] = "";

static char *
key_of(const char *what, int node)
{
	return node < 0 ? psprintf("%s/%s", etcd_url()->prefix, what) :
		psprintf("%s/%s/%d", etcd_url()->prefix, what, node);
}

static char *
mark_value(int64 mark, const char *token, int bits, int64 epoch)
{
	return psprintf("%020lld %s %d %lld", (long long) mark, token, bits, (long long) epoch);
}

/* ---- reading the registry ---- */

/* One key of the prefix into nodes (and the fence). */
static void
etcd_read_kv(JsonbContainer *kv, EtcdNode *nodes, int64 *fence_until, int64 *fence_floor)
{
	const char *prefix = etcd_url()->prefix;
	char	   *key = etcd_unb64(etcd_text(kv, "key"));
	char	   *value = etcd_unb64(etcd_text(kv, "value"));
	int			id = -1;
	long long	a = 0,
				b = 0;
	EtcdNode   *n;

	if (strncmp(key, prefix, strlen(prefix)) != 0)
		return;
	key += strlen(prefix);
	if (strcmp(key, "/fence") == 0 && sscanf(value, "%lld %lld", &a, &b) == 2)
	{
		*fence_until = a;
		*fence_floor = b;
	}
	if (sscanf(key, "/node/%d", &id) == 1 && id >= 0 && id < ETCD_MAX_NODES)
	{
		n = &nodes[id];
		n->held = sscanf(value, "%63s %d %lld", n->holder, &n->held_bits, &a) == 3;
		n->held_epoch = a;
	}
	else if (sscanf(key, "/mark/%d", &id) == 1 && id >= 0 && id < ETCD_MAX_NODES)
	{
		n = &nodes[id];
		n->marked = sscanf(value, "%lld %63s %d %lld", &a, n->token, &n->bits, &b) == 4;
		n->mark = a;
		n->epoch = b;
		n->mark_rev = etcd_int(kv, "mod_revision");
	}
}

/* Every key under the prefix; false with *err. */
static bool
etcd_read_all(EtcdNode *nodes, int64 *fence_until, int64 *fence_floor, int64 deadline_us,
			  char **err)
{
	JsonbContainer *c = etcd_range_prefix(etcd_url()->prefix, deadline_us, err);

	if (c == NULL)
		return false;
	*fence_until = *fence_floor = 0;
	for (int i = 0; i < etcd_count(c, "kvs"); i++)
		etcd_read_kv(etcd_item(c, "kvs", i), nodes, fence_until, fence_floor);
	return true;
}

/*
 * Refuses, as the PostgreSQL registry does, a server whose node_bits or
 * epoch differs from a live lease's.
 */
static bool
etcd_same_layout(const EtcdNode *nodes, const LeaseAsk *ask, char **err)
{
	for (int i = 0; i < ETCD_MAX_NODES; i++)
	{
		if (!nodes[i].held)
			continue;
		if (nodes[i].held_bits != ask->node_bits)
			*err = psprintf("The registry answered: registry has node id leases under another idgen.node_bits. This server has idgen.node_bits = %d; node id %d is leased with %d.",
							ask->node_bits, i, nodes[i].held_bits);
		else if (nodes[i].held_epoch != ask->epoch_ms)
			*err = psprintf("The registry answered: registry has node id leases under another idgen.epoch. This server has idgen.epoch = %lld ms; node id %d is leased with %lld ms.",
							(long long) ask->epoch_ms, i, (long long) nodes[i].held_epoch);
		else
			continue;
		return false;
	}
	return true;
}

/*
 * The node id to take: the one this data directory's token last acquired,
 * if free; else one never leased; else the free one with the lowest mark.
 */
static int
etcd_choose(const EtcdNode *nodes, const LeaseAsk *ask)
{
	int			count = 1 << ask->node_bits;
	int			best = -1;

	for (int i = 0; i < count; i++)
		if (!nodes[i].held && nodes[i].marked && ask->token[0] &&
			strcmp(nodes[i].token, ask->token) == 0)
			return i;
	for (int i = 0; i < count; i++)
		if (!nodes[i].held && !nodes[i].marked)
			return i;
	for (int i = 0; i < count; i++)
		if (!nodes[i].held && (best < 0 || nodes[i].mark < nodes[best].mark))
			best = i;
	return best;
}

/*
 * The mark the new holder of node starts above: its previous holders',
 * and those of every node id under other node_bits, whose machine fields
 * overlap; a mark made under an earlier epoch raised by the difference.
 */
static int64
etcd_previous_mark(const EtcdNode *nodes, int node, const LeaseAsk *ask, int64 floor)
{
	int64		mark = floor;

	for (int i = 0; i < ETCD_MAX_NODES; i++)
		if (nodes[i].marked && ((i == node && nodes[i].bits == ask->node_bits) ||
								nodes[i].bits != ask->node_bits))
			mark = Max(mark, nodes[i].mark + Max(ask->epoch_ms - nodes[i].epoch, 0));
	return mark;
}

static char *
new_token(void)
{
	uint8		b[16];

	if (!pg_strong_random(b, sizeof(b)))
		elog(ERROR, "could not generate a random token");
	return psprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
					b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * Creates node's key under a new etcd lease, if still absent and its mark
 * unchanged since read (mark_rev), with the mark's token made token; true
 * when created.  The mark is never lowered: it is at least the one read.
 */
static bool
etcd_claim(int node, const char *token, const char *identity, int bits, int64 epoch,
		   int64 mark, int64 mark_rev, int lease_s, int64 deadline_us, char **err)
{
	char	   *node_key = key_of("node", node);
	char	   *mark_key = key_of("mark", node);
	int64		id;
	bool		ok = false;
	char	   *cmp[3],
			   *then[3];

	etcd_revoke(abandoned, deadline_us);
	abandoned = 0;
	id = etcd_grant(lease_s, deadline_us, err);
	if (id == 0)
		return false;
	abandoned = id;
	cmp[0] = etcd_cmp(node_key, "CREATE", "EQUAL", "create_revision", "0");
	cmp[1] = etcd_cmp(mark_key, "MOD", "EQUAL", "mod_revision", psprintf(INT64_FORMAT, mark_rev));
	cmp[2] = NULL;
	then[0] = etcd_put(node_key, psprintf("%s %d %lld %s", token, bits, (long long) epoch, identity), id);
	then[1] = etcd_put(mark_key, mark_value(mark, token, bits, epoch), 0);
	then[2] = NULL;
	if (etcd_txn(cmp, then, NULL, deadline_us, &ok, err) == NULL)
		return false;
	if (!ok)
	{
		*err = psprintf("Another server took node id %d first; trying again.", node);
		return false;
	}
	abandoned = 0;
	lease_id = id;
	held_bits = bits;
	held_epoch = epoch;
	return true;
}

static int
etcd_acquire(const LeaseAsk *ask, char *token, size_t token_size, int64 *previous_mark,
			 int64 deadline_us, char **err)
{
	EtcdNode   *nodes = palloc0(sizeof(EtcdNode) * ETCD_MAX_NODES);
	int64		until,
				floor;
	int			node;
	char	   *tok = new_token();

	if (!etcd_read_all(nodes, &until, &floor, deadline_us, err) ||
		!etcd_same_layout(nodes, ask, err))
		return -1;
	if (until > clock_now_ms())
	{
		*err = psprintf("The registry answered: registry leases no node id before %s. etcd lost history (restored from a snapshot): a server may hold any node id until then.",
						timestamptz_to_str(clock_ms_to_timestamptz(until)));
		return -1;
	}
	node = etcd_choose(nodes, ask);
	if (node < 0)
	{
		*err = psprintf("The registry answered: all %d node ids of idgen.node_bits = %d are leased.",
						1 << ask->node_bits, ask->node_bits);
		return -1;
	}
	*previous_mark = etcd_previous_mark(nodes, node, ask, floor);
	if (!etcd_claim(node, tok, ask->identity, ask->node_bits, ask->epoch_ms, *previous_mark,
					nodes[node].mark_rev, ask->lease_s, deadline_us, err))
		return -1;
	strlcpy(token, tok, token_size);
	strlcpy(holder_identity, ask->identity, sizeof(holder_identity));
	etcd_history_save();
	return node;
}

/*
 * Renewing without the etcd lease (it ran out, or this worker restarted):
 * the node key is this server's still (a restarted worker takes its
 * lease), or, when absent and nobody acquired the node id since (the
 * mark's token is this server's), taken again; otherwise lost.
 */
static LeaseCall
etcd_retake(int node, const char *token, int lease_s, int64 deadline_us, char **err)
{
	char	   *then[] = {etcd_get(key_of("node", node)), etcd_get(key_of("mark", node)), NULL};
	bool		ok;
	JsonbContainer *c = etcd_txn(NULL, then, NULL, deadline_us, &ok, err);
	JsonbContainer *nk,
			   *mk;
	char		holder[64] = "",
				last[64] = "";
	long long	mark = 0,
				epoch = 0;
	int			bits = 0;

	if (c == NULL)
		return LEASE_CALL_FAILED;
	nk = etcd_txn_kv(c, 0);
	mk = etcd_txn_kv(c, 1);
	if (nk)
		(void) sscanf(etcd_unb64(etcd_text(nk, "value")), "%63s", holder);
	if (mk)
		(void) sscanf(etcd_unb64(etcd_text(mk, "value")), "%lld %63s %d %lld", &mark, last, &bits, &epoch);
	held_bits = bits;
	held_epoch = epoch;
	if (nk && strcmp(holder, token) == 0)
	{
		lease_id = etcd_int(nk, "lease");
		return etcd_keepalive(lease_id, deadline_us, err) > 0 ? LEASE_CALL_OK : LEASE_CALL_FAILED;
	}
	if (nk || strcmp(last, token) != 0)
	{
		*err = psprintf("The registry answered: node id %d is no longer leased to this server. %s",
						node, nk ? "Another server holds it now." : "Another server leased it since.");
		return LEASE_CALL_LOST;
	}
	if (!etcd_claim(node, token, holder_identity, bits, epoch, mark, etcd_int(mk, "mod_revision"),
					lease_s, deadline_us, err))
		return LEASE_CALL_FAILED;
	return LEASE_CALL_OK;
}

/*
 * Raises the mark to mark while the node key is bound to this server's
 * etcd lease; *ceiling is the mark kept, never below the one reported.
 */
static LeaseCall
etcd_report(int node, const char *token, int64 mark, int64 deadline_us, int64 *ceiling,
			char **err)
{
	char	   *node_key = key_of("node", node);
	char	   *mark_key = key_of("mark", node);
	char	   *cmp[] = {etcd_cmp(node_key, "LEASE", "EQUAL", "lease", psprintf(INT64_FORMAT, lease_id)),
		etcd_cmp(mark_key, "VALUE", "LESS", "value", etcd_b64(psprintf("%020lld", (long long) mark))), NULL};
	char	   *then[] = {etcd_put(mark_key, mark_value(mark, token, held_bits, held_epoch), 0), NULL};
	char	   *otherwise[] = {etcd_get(node_key), etcd_get(mark_key), NULL};
	bool		ok;
	JsonbContainer *c = etcd_txn(cmp, then, otherwise, deadline_us, &ok, err);
	JsonbContainer *nk,
			   *mk;
	long long	kept = -1;

	if (c == NULL)
		return LEASE_CALL_FAILED;
	*ceiling = mark;
	if (ok)
		return LEASE_CALL_OK;
	nk = etcd_txn_kv(c, 0);
	mk = etcd_txn_kv(c, 1);
	if (mk)
		(void) sscanf(etcd_unb64(etcd_text(mk, "value")), "%lld", &kept);
	if (nk && etcd_int(nk, "lease") == lease_id && kept >= mark)
	{
		*ceiling = kept;
		return LEASE_CALL_OK;
	}
	/* the next renewal finds out whether the node id is still this server's */
	lease_id = 0;
	*err = psprintf("The registry answered: the key of node id %d is no longer bound to this server's etcd lease.", node);
	return LEASE_CALL_FAILED;
}

/* A keepalive of the etcd lease, then the mark. */
static LeaseCall
etcd_renew(int node, const char *token, int lease_s, int64 mark, int64 deadline_us,
		   int64 *ceiling, char **err)
{
	int64		ttl = 0;
	LeaseCall	call;

	if (lease_id != 0)
	{
		ttl = etcd_keepalive(lease_id, deadline_us, err);
		if (ttl < 0)
			return LEASE_CALL_FAILED;
	}
	if (ttl == 0)
	{
		call = etcd_retake(node, token, lease_s, deadline_us, err);
		if (call != LEASE_CALL_OK)
			return call;
	}
	call = etcd_report(node, token, mark, deadline_us, ceiling, err);
	if (call == LEASE_CALL_OK)
		etcd_history_save();
	return call;
}

/*
 * At shutdown: the mark becomes the highest of the IDs made, and the node
 * key goes, in one transaction while the key is this server's.
 */
static bool
etcd_release(int node, const char *token, int64 mark, int64 deadline_us, char **err)
{
	char	   *node_key = key_of("node", node);
	char	   *cmp[] = {etcd_cmp(node_key, "LEASE", "EQUAL", "lease", psprintf(INT64_FORMAT, lease_id)), NULL};
	char	   *then[] = {etcd_put(key_of("mark", node), mark_value(mark, token, held_bits, held_epoch), 0),
		etcd_del(node_key), NULL};
	bool		ok;

	etcd_finishing();
	if (lease_id == 0)
	{
		*err = pstrdup("This server does not know its etcd lease: the node id is leased again once the lease expires.");
		return false;
	}
	if (etcd_txn(cmp, then, NULL, deadline_us, &ok, err) == NULL)
		return false;
	etcd_revoke(lease_id, deadline_us);
	if (!ok)
		*err = psprintf("The key of node id %d was no longer bound to this server's etcd lease.", node);
	return ok;
}

const LeaseOps lease_etcd_ops = {
	.acquire = etcd_acquire,
	.renew = etcd_renew,
	.release = etcd_release,
	.close = etcd_close,
};
