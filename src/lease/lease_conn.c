/*
 * lease_conn.c
 *		The lease worker's libpq conversation with the registry
 *		(idgen.node_registry): connecting, finding idgen's schema there, and
 *		running the lease functions, as contrib/dblink and postgres_fdw talk
 *		to another server.
 *
 * Every libpq call waits on the latch with a deadline, so a registry that
 * hangs never keeps the worker from shutting down.  A call that failed for
 * want of the registry drops the connection, and the next call connects
 * again; one the registry answered with an error keeps it.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"

#include "base/settings.h"
#include "lease.h"
#include "lease_conn.h"

static PGconn *conn = NULL;
/* conn's search_path is idgen's schema */
static bool path_set = false;

/* What a failed call says it waited for: a third of the lease. */
static int64
conn_timeout_ms(void)
{
	return (int64) idgen_node_lease_s * 1000 / 3;
}

/* Waits for the socket; false at the deadline or when shutting down. */
static bool
conn_wait_socket(PGconn *c, int io_flag, int64 deadline_us)
{
	for (;;)
	{
		int64		left_ms = (deadline_us - lease_monotonic_us()) / 1000;
		int			rc;

		if (left_ms <= 0 || ShutdownRequestPending)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | io_flag,
							   PQsocket(c), left_ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
			ResetLatch(MyLatch);
		if (rc & io_flag)
			return true;
	}
}

/* Drops the connection, if any: the next call connects again. */
void
lease_conn_close(void)
{
	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
	path_set = false;
}

/* Connects to the registry unless connected; false with *err set. */
static bool
conn_connect(int64 deadline_us, char **err)
{
	const char *keys[] = {"application_name", "dbname", NULL};
	const char *vals[] = {"idgen node lease", idgen_node_registry, NULL};
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
		return true;
	lease_conn_close();
	conn = PQconnectStartParams(keys, vals, 1);
	if (conn == NULL || PQstatus(conn) == CONNECTION_BAD)
		status = PGRES_POLLING_FAILED;
	while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		int			io_flag = status == PGRES_POLLING_READING ?
			WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;

		if (!conn_wait_socket(conn, io_flag, deadline_us))
		{
			*err = psprintf("Could not connect to the registry within %lld ms.",
							(long long) conn_timeout_ms());
			lease_conn_close();
			return false;
		}
		status = PQconnectPoll(conn);
	}
	if (status == PGRES_POLLING_FAILED)
	{
		*err = psprintf("Could not connect to the registry: %s",
						conn ? pchomp(PQerrorMessage(conn)) : "out of memory");
		lease_conn_close();
		return false;
	}
	return true;
}

/*
 * The registry answered with an error: *err and *sqlstate say which.  A
 * lost connection reports no SQLSTATE, or class 08: it is dropped.
 */
static void
conn_answered_error(PGresult *res, char **err, char *sqlstate)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

	strlcpy(sqlstate, state ? state : "", 6);
	*err = psprintf("The registry answered: %s.%s%s",
					primary ? primary : pchomp(PQresultErrorMessage(res)),
					detail ? " " : "", detail ? detail : "");
	PQclear(res);
	if (sqlstate[0] == '\0' || strncmp(sqlstate, "08", 2) == 0)
		lease_conn_close();
}

/*
 * Runs a query with text parameters; the result, or NULL with *err set.
 * A failed call drops the connection, unless the registry answered with
 * an error (*sqlstate then says which).
 */
static PGresult *
conn_query(const char *sql, int nparams, const char *const *params, int64 deadline_us,
		   char **err, char *sqlstate)
{
	PGresult   *last = NULL;
	PGresult   *r;

	sqlstate[0] = '\0';
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
		goto broken;
	while (PQflush(conn) == 1)
		if (!conn_wait_socket(conn, WL_SOCKET_WRITEABLE, deadline_us))
			goto timeout;
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!conn_wait_socket(conn, WL_SOCKET_READABLE, deadline_us))
				goto timeout;
			if (!PQconsumeInput(conn))
				goto broken;
		}
		r = PQgetResult(conn);
		if (r == NULL)
			break;
		if (last)
			PQclear(last);
		last = r;
	}
	if (last == NULL)
		goto broken;
	if (PQresultStatus(last) == PGRES_TUPLES_OK)
		return last;
	conn_answered_error(last, err, sqlstate);
	return NULL;
timeout:
	*err = psprintf("The registry did not answer within %lld ms.", (long long) conn_timeout_ms());
	if (last)
		PQclear(last);
	lease_conn_close();
	return NULL;
broken:
	*err = psprintf("The connection to the registry failed: %s", pchomp(PQerrorMessage(conn)));
	if (last)
		PQclear(last);
	lease_conn_close();
	return NULL;
}

/*
 * Makes the session find idgen's functions in the schema the registry
 * installed it in, and nowhere else: a function of the same name in a
 * schema earlier in the role's search_path must not answer for the
 * registry.  And it reads committed rows: under a default of REPEATABLE
 * READ, the functions' snapshot would predate the lock that orders them.
 * And the registry cancels a call (statement_timeout, lock_timeout) within
 * half the time the worker waits for it: a call the worker gave up on, as
 * one queued behind a lock on the registry's table, must not commit later,
 * renewing a lease nobody counts on or handing out a node id nobody takes.
 * false with *err set.
 */
static bool
conn_set_session(int64 deadline_us, char **err, char *sqlstate)
{
	PGresult   *r;
	bool		found;

	char		timeout[32];
	const char *params[] = {timeout};

	snprintf(timeout, sizeof(timeout), "%lld", (long long) conn_timeout_ms() / 2);
	r = conn_query("SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(n.nspname), false), "
					"pg_catalog.set_config('default_transaction_isolation', 'read committed', false), "
					"pg_catalog.set_config('statement_timeout', $1, false), "
					"pg_catalog.set_config('lock_timeout', $1, false) "
					"FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
					"ON n.oid OPERATOR(pg_catalog.=) e.extnamespace "
					"WHERE e.extname OPERATOR(pg_catalog.=) 'idgen'",
					1, params, deadline_us, err, sqlstate);
	if (r == NULL)
	{
		lease_conn_close();
		return false;
	}
	found = PQntuples(r) == 1;
	PQclear(r);
	if (!found)
	{
		*err = pstrdup("The registry database does not have the extension idgen.");
		lease_conn_close();
	}
	path_set = found;
	return found;
}

/*
 * Runs a query on the registry, connecting first if need be; the result,
 * or NULL with *err set (conn_query).
 */
PGresult *
lease_conn_exec(const char *sql, int nparams, const char *const *params, int64 deadline_us,
				char **err, char *sqlstate)
{
	PGresult   *r;

	sqlstate[0] = '\0';
	if (!conn_connect(deadline_us, err))
		return NULL;
	if (!path_set && !conn_set_session(deadline_us, err, sqlstate))
		return NULL;
	r = conn_query(sql, nparams, params, deadline_us, err, sqlstate);
	/* an idgen older than 1.5, or a schema the role cannot use */
	if (r == NULL && strcmp(sqlstate, "42883") == 0)
		*err = psprintf("%s Update idgen on the registry (ALTER EXTENSION idgen UPDATE), and grant the registry's role USAGE on idgen's schema there.",
						*err);
	return r;
}
