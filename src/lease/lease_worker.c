/*
 * lease_worker.c
 *		The "idgen node lease" background worker: leases this server's node
 *		id from the registry (idgen.node_registry), renews it
 *		every third of idgen.node_lease_s, and publishes it in shared memory
 *		(lease.h), where backends check it.
 *
 * Acquiring: the registry function idgen_lease_acquire() hands out a node
 * id that no live lease holds and returns the mark its previous holders
 * reported; the worker raises this server's marks of the node id above
 * that mark and above its own marks of every node id (durably, in
 * idgen_hwm and WAL), keeps the new holder token in
 * $PGDATA/idgen_lease_token, and only then renews and publishes the lease.
 *
 * Renewing: idgen_lease_renew() takes the token and a mark above every tick
 * this server may start before its next renewal; the registry keeps the
 * mark, and the worker publishes it as the ceiling, and the renewal's send
 * time plus the lease less a margin as the fence (lease.c).  A renewal that
 * fails for want of the registry leaves the lease to run out on the fence;
 * one refused because another server holds the node id now loses it for
 * the rest of the server run.
 *
 * Releasing, at shutdown: the fence is closed first, then the release
 * reports this server's highest mark of the node id, so that a restart,
 * which gets the node id back with the token, starts near the clock.
 *
 * The token file (lease_token.c) also names the postmaster that acquired
 * the lease: a worker restarted within the same server run (after it or a
 * backend crashed) renews the lease it finds there, while a copy of the
 * data directory, started by another postmaster, must acquire.
 *
 * The conversation with the registry goes through a table of operations
 * (lease_ops.h), one per kind of registry: a PostgreSQL database
 * (lease_pg.c, over lease_conn.c's libpq) or etcd (lease_etcd.c).  Every
 * call has a deadline, so a registry that hangs never keeps the worker
 * from shutting down; backends never wait for the worker, as the fence
 * runs out by itself.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/etcd_url.h"
#include "base/layout.h"
#include "base/node.h"
#include "base/settings.h"
#include "lease.h"
#include "lease_ops.h"
#include "lease_state.h"
#include "lease_token.h"
#include "marks/marks.h"

/* How long to wait before trying the registry again. */
#define LEASE_RETRY_MS	1000

PGDLLEXPORT void lease_worker_main(Datum arg);

/* The worker's own view of the lease. */
typedef struct Holder
{
	int			node_id;		/* -1: none */
	char		token[64];		/* "" when none */
	bool		lost;
	bool		held;			/* the last renewal succeeded */
	int64		next_renew_us;	/* monotonic */
	char		identity[MAXPGPATH + 128];	/* what the registry shows */
} Holder;

static Holder me = {.node_id = -1};
/* the registry's kind, chosen at start */
static const LeaseOps *ops = &lease_pg_ops;

static int64
lease_ms(void)
{
	return (int64) idgen_node_lease_s * 1000;
}

/*
 * The fence's margin: the registry counts from when it received the
 * renewal, after it was sent, so the margin covers only the two clocks'
 * rates differing; a tenth of the lease, at least half a second.
 */
static int64
lease_margin_us(void)
{
	return Max(lease_ms() * 100, 500000);
}

/* ---- the protocol ---- */

/*
 * The mark to report: above every tick this server may start before its
 * next renewal succeeds, as its fence stops it by then; and above every
 * mark it has of the node id.
 */
static int64
lease_report_mark(void)
{
	int64		base = Max(clock_now_ms(), marks_node_highest(me.node_id, idgen_node_bits));

	return base + lease_ms() + idgen_limits.max_lead_ms + LAYOUT_MAX_TICK_MS;
}

/* Renews the lease; false when it failed (the fence then runs out). */
static bool
lease_renew(void)
{
	TimestampTz sent_at = GetCurrentTimestamp();
	int64		sent_us = lease_monotonic_us();
	char	   *err = NULL;
	int64		ceiling = 0;
	LeaseCall	call;

	call = ops->renew(me.node_id, me.token, idgen_node_lease_s, lease_report_mark(),
					  sent_us + lease_ms() * 1000 / 3, &ceiling, &err);
	if (call != LEASE_CALL_OK)
	{
		me.held = false;
		if (call == LEASE_CALL_LOST)
		{
			me.lost = true;
			lease_state_lost(me.node_id, err);
		}
		else
			lease_state_renew_failed(me.node_id, err);
		return false;
	}
	lease_state_renewed(me.node_id, ceiling, sent_us + lease_ms() * 1000 - lease_margin_us(),
						sent_at + lease_ms() * 1000 - lease_margin_us());
	me.held = true;
	me.next_renew_us = sent_us + lease_ms() * 1000 / 3;
	return true;
}

/*
 * The highest mark this server has of any node id: every ID it made, under
 * whichever node id, lies below it.  -1 when the marks are unreadable.
 */
static int64
lease_own_highest(void)
{
	int64		high = 0;

	for (int node = 0; node < (1 << idgen_node_bits); node++)
	{
		int64		h = marks_node_highest(node, idgen_node_bits);

		if (h < 0)
			return -1;
		high = Max(high, h);
	}
	return high;
}

/*
 * Makes IDs under a newly acquired node id start above the mark of its
 * previous holders, so that they never repeat theirs, and above every
 * mark this server has of any node id: a server whose node id changed (a
 * promoted standby, a server that lost its lease) continues above every
 * ID it made, so that an outbox cursor over its rows (idgen_horizon())
 * never has to go back.  Durable before any backend generates under it.
 */
static void
lease_start(int64 previous_mark)
{
	int64		own = lease_floor_off ? -1 : lease_own_highest();
	int64		start = Max(previous_mark, own);

	marks_raise_node_floor(me.node_id, idgen_node_bits, start);
	ereport(LOG,
			(errmsg("idgen: leased node id %d from registry \"%s\"", me.node_id,
					lease_registry_display()),
			 own > previous_mark ?
			 errdetail("IDs start after %s, the highest mark of this server's IDs.",
					   timestamptz_to_str(clock_ms_to_timestamptz(start))) :
			 errdetail("IDs start after %s, the mark of its previous holders.",
					   timestamptz_to_str(clock_ms_to_timestamptz(start)))));
}

/*
 * Acquires a node id: the registry's, then this server's marks of it above
 * its previous holders', then the first renewal.
 */
static void
lease_acquire(void)
{
	LeaseAsk	ask = {
		.node_bits = idgen_node_bits,
		.identity = me.identity,
		.system_identifier = (int64) GetSystemIdentifier(),
		.token = me.token,
		.lease_s = idgen_node_lease_s,
		/* marks made under an earlier epoch are raised by the difference */
		.epoch_ms = layout_default()->epoch_ms,
	};
	char		token[sizeof(me.token)];
	char	   *err = NULL;
	int64		previous_mark = 0;
	int			node;

	node = ops->acquire(&ask, token, sizeof(token), &previous_mark,
						lease_monotonic_us() + lease_ms() * 1000 / 3, &err);
	if (node < 0)
	{
		lease_state_publish(me.node_id, LEASE_ACQUIRING, err);
		return;
	}
	me.node_id = node;
	strlcpy(me.token, token, sizeof(me.token));
	/* the marks marks.c keeps free room for are this node id's */
	node_id_leased(me.node_id);
	lease_start(previous_mark);
	/*
	 * Only now: a worker restarted in this server run renews the lease the
	 * file names without raising the marks again.
	 */
	lease_token_write(me.token, me.node_id);
	SpinLockAcquire(&lease->mutex);
	lease->acquired_at = GetCurrentTimestamp();
	lease->previous_mark_ms = previous_mark;
	SpinLockRelease(&lease->mutex);
	(void) lease_renew();
}

/*
 * At shutdown: close the fence, then report the highest mark of the node
 * id, which every tick started before the fence closed lies below.
 */
static void
lease_release(void)
{
	char	   *err = NULL;
	int64		highest;

	lease_state_fence_now();
	if (me.node_id < 0 || me.lost)
		return;
	/*
	 * Unreadable marks cannot bound the IDs made before: the lease runs
	 * out instead, keeping the mark its renewals reported.
	 */
	highest = marks_node_highest(me.node_id, idgen_node_bits);
	if (highest < 0)
	{
		ereport(LOG,
				(errmsg("idgen: not releasing the lease of node id %d", me.node_id),
				 errdetail("The high-water mark file was unreadable, so this server cannot report how high its IDs went."),
				 errhint("The node id is leased again once its lease expires.")));
		return;
	}
	/* ShutdownRequestPending would end the wait at once */
	ShutdownRequestPending = false;
	if (!ops->release(me.node_id, me.token, highest, lease_monotonic_us() + 2000000, &err))
		ereport(LOG,
				(errmsg("idgen: could not release the lease of node id %d", me.node_id),
				 errdetail_internal("%s", err)));
}

static void
lease_identity(void)
{
	char		host[256];

	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "?", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(me.identity, sizeof(me.identity), "%s:%d %s", host, PostPortNumber, DataDir);
}

void
lease_worker_main(Datum arg)
{
	MemoryContext cxt;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	cxt = AllocSetContextCreate(TopMemoryContext, "idgen node lease", ALLOCSET_DEFAULT_SIZES);
	lease_identity();
	if (etcd_url_is(idgen_node_registry))
		ops = &lease_etcd_ops;
	me.node_id = lease_token_read(me.token, sizeof(me.token));
	if (me.node_id >= 0)
	{
		/* restarted within the server run that acquired it: renew it */
		node_id_leased(me.node_id);
		me.next_renew_us = 0;
	}

	while (!ShutdownRequestPending)
	{
		int64		wait_ms = LEASE_RETRY_MS;

		MemoryContextReset(cxt);
		MemoryContextSwitchTo(cxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (me.lost)
			;
		else if (me.node_id < 0)
			lease_acquire();
		else if (lease_monotonic_us() >= me.next_renew_us)
			(void) lease_renew();
		if (!me.lost && !me.held)
			lease_state_watch_expiry(me.node_id);
		if (!me.lost && me.held)
			wait_ms = Max((me.next_renew_us - lease_monotonic_us()) / 1000, 1);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(wait_ms, lease_ms()), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	MemoryContextSwitchTo(cxt);
	lease_release();
	ops->close();
	proc_exit(0);
}

/* During preload, when idgen.node_registry is set. */
void
lease_worker_register(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	/* a standby generates nothing, and leases nothing until promoted */
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "idgen");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "lease_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "idgen node lease");
	snprintf(worker.bgw_type, BGW_MAXLEN, "idgen node lease");
	RegisterBackgroundWorker(&worker);
}
