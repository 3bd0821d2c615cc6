/*
 * provenance.c
 *		Whether this server's high-water marks cover the IDs its databases
 *		hold.
 *
 * Marks live in the data directory, and two ways of moving data leave them
 * behind: pg_upgrade copies tables but not idgen_hwm, and a dump restored
 * into a new cluster brings only rows.  A server that then generates with
 * the old node id from a clock behind the old IDs repeats them; so does a
 * server whose idgen_hwm was deleted once a checkpoint had removed the WAL
 * copy of its marks.  Nothing at startup can tell such a server from a new
 * one, so the evidence travels with the data and the marks:
 *
 *	- the extension's configuration table idgen_system holds the system
 *	  identifier of every cluster where the extension was created, updated
 *	  or, after pg_upgrade, first generated in the database, with the epoch
 *	  of its default layout (provenance_table.c); pg_dump and pg_upgrade
 *	  carry its rows;
 *	- idgen_hwm holds, in a comment line older versions skip, the system
 *	  identifiers of the clusters whose IDs its marks cover: the server's
 *	  own, and those of the clusters the file was copied from (README's way
 *	  of moving it on, which keeps working);
 *	- idgen_node says, since 1.5, that the directory kept idgen_hwm (written
 *	  at every start from then on), so a missing file is a lost one.
 *
 * Before a backend first generates, it compares its database's rows with
 * the marks.  A cluster the marks do not cover, or marks lost, make the
 * whole server refuse, as IDs of every database share the layouts'
 * definitions, until idgen_resume_after() raises every mark past the old
 * IDs, records the clusters, and the server restarts (backends that
 * generated before the refusal hold states below the new marks).  The
 * refusal is sticky and reaches every backend, also one that passed its
 * own check long ago: each looks at it where a tick starts
 * (provenance_check_tick()), never per ID.  It outlives a restart and a
 * failover too: the cluster found is noted in the file and in WAL
 * (provenance_state.c), as backends of other databases may generate first.
 *
 * Locking: lock guards systems, nsystems, lost, foreign (the cluster
 * named, the one recorded last among those found) and the notes; refusing
 * is set once, under it, and read without it by backends about to refuse (a
 * stale read only delays the refusal to the backend's next tick, which
 * reads the reason under the lock).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/clock.h"
#include "base/layout.h"
#include "base/settings.h"
#include "marks/marks.h"
#include "provenance.h"
#include "provenance_shared.h"
#include "provenance_table.h"

/* Until shared memory is attached, a refusal that is never set. */
static const bool never_refusing = false;
const bool *provenance_refusing = &never_refusing;

/* This backend's database was found covered. */
static bool checked = false;

/* This cluster has its row in the database's idgen_system. */
static bool self_recorded = false;

/* Makes the backend call provenance_require() again (generator.c). */
static void (*recheck_hook) (void) = NULL;

PG_FUNCTION_INFO_V1(idgen_resume_after);

Size
provenance_shmem_size(void)
{
	return sizeof(ProvenanceShared);
}

void
provenance_shmem_request(void)
{
	RequestNamedLWLockTranche("idgen provenance", 1);
}

static bool provenance_settle(bool file_found);

/*
 * The systems line of idgen_hwm is ours; marks_load.c reads and writes the
 * file and hands the line here, without knowing this module: provenance.c
 * calls the marks (marks_raise_all), never the other way round.
 */
static const MarkFileClient provenance_client = {
	.load_line = provenance_load_line,
	.write_line = provenance_write_line,
	.settle = provenance_settle,
};

/*
 * Before marks_load.c loads the file, whose systems line comes here; in every
 * process, as marks_load.c writes the file in backends too.
 */
void
provenance_shmem_init(void *at, bool found)
{
	marks_set_file_client(&provenance_client);
	prov = at;
	if (!found)
	{
		memset(prov, 0, sizeof(ProvenanceShared));
		prov->lock = &(GetNamedLWLockTranche("idgen provenance"))[0].lock;
		prov->epoch_ms = PG_INT64_MAX;
	}
	provenance_refusing = &prov->refusing;
}

/*
 * At startup, once the file is read: a missing file is a new directory's,
 * or a lost one's if the directory kept it before (idgen_node); a file
 * without the line (before 1.5) covers this cluster.  The marks cover this
 * cluster from now on unless they were lost.  Clusters found uncovered
 * before the restart still make the server refuse.
 */
static bool
provenance_settle(bool file_found)
{
	uint64		self = GetSystemIdentifier();
	int			before = prov->nsystems;
	int64		epoch_before = prov->epoch_ms;

	if (!file_found && clone_kept_marks())
	{
		prov->lost = true;
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("idgen high-water mark file \"%s\" is missing from a data directory that kept it",
						"idgen_hwm"),
				 errdetail("Without it idgen cannot tell which IDs this server issued before; generation refuses until told."),
				 errhint("Stop the server and put the file back from a backup of this data directory, or see idgen_resume_after() in the troubleshooting guide.")));
	}
	if (prov->lost)
		prov->refusing = true;
	else
		provenance_add(self);
	prov->epoch_ms = Min(prov->epoch_ms, layout_default()->epoch_ms);
	return provenance_notes_settle() || !file_found || prov->nsystems != before ||
		prov->epoch_ms != epoch_before;
}

/*
 * The system identifier in idgen_system that the marks do not cover, or 0:
 * of those, the one recorded last, whose marks (copied by pg_upgrade from
 * the ones before, or raised above theirs) cover the others.  0 too where
 * the table does not exist.  Notes whether this cluster has its row.
 */
static uint64
provenance_uncovered(TimestampTz *recorded_at)
{
	ProvenanceRow *rows;
	int			n = provenance_table_read(&rows);
	uint64		uncovered = 0;
	TimestampTz newest = DT_NOBEGIN;

	self_recorded = false;
	LWLockAcquire(prov->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		self_recorded |= provenance_table_is_self(&rows[i], prov->epoch_ms);
		if (!provenance_covers(rows[i].system) &&
			(uncovered == 0 || rows[i].recorded_at >= newest))
		{
			uncovered = rows[i].system;
			newest = rows[i].recorded_at;
		}
	}
	LWLockRelease(prov->lock);
	if (rows != NULL)
		pfree(rows);
	*recorded_at = newest;
	return uncovered;
}

/*
 * Why the server refuses, read under the lock, as provenance_check_tick()
 * read the refusal without it.
 */
pg_noinline void
provenance_refuse(void)
{
	ProvenanceShared why;
	char	   *db;

	LWLockAcquire(prov->lock, LW_SHARED);
	why.resumed = prov->resumed;
	why.lost = prov->lost;
	why.upgraded = prov->upgraded;
	why.foreign = prov->foreign;
	why.foreign_db = prov->foreign_db;
	LWLockRelease(prov->lock);
	if (why.resumed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen generation resumes after a restart"),
				 errdetail("idgen_resume_after() raised the high-water marks; backends that generated before hold states below them."),
				 errhint("Restart the server.")));
	if (why.upgraded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen high-water marks were left behind by pg_upgrade: \"%s\" is still in the old cluster's data directory",
						"idgen_hwm"),
				 errdetail("pg_upgrade brought databases holding the old cluster's IDs; IDs made here, in any database, could repeat them."),
				 errhint("Stop this server, copy \"%s\" from the old cluster's data directory into this one, and start it; or, as a superuser, run SELECT idgen_resume_after(t), t being a time after every ID the old cluster issued (the only way on a standby promoted since), and restart the server.",
						 "idgen_hwm")));
	if (why.lost)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen high-water marks were lost: \"%s\" is missing from a data directory that kept it",
						"idgen_hwm"),
				 errdetail("IDs this server issued before could be issued again."),
				 errhint("Stop the server and put \"%s\" back from a backup of this data directory; or, as a superuser, run SELECT idgen_resume_after(t), t being a time after every ID this server issued, and restart the server.",
						 "idgen_hwm")));
	db = get_database_name(why.foreign_db);
	if (db == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a dropped database (OID %u) held idgen IDs of another cluster (system identifier " UINT64_FORMAT "), whose high-water marks this server does not have",
						why.foreign_db, why.foreign),
				 errdetail("IDs made here could repeat the old cluster's, wherever they are now."),
				 errhint("Stop this server and copy \"%s\" from the data directory of the cluster with system identifier " UINT64_FORMAT " (pg_controldata shows it) into this one; or, as a superuser, run SELECT idgen_resume_after(t) in any database, t being a time after every ID that cluster issued, and restart the server.",
						 "idgen_hwm", why.foreign)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("database \"%s\" holds idgen IDs of another cluster (system identifier " UINT64_FORMAT "), whose high-water marks this server does not have",
					db, why.foreign),
			 errdetail("The database was moved here by pg_upgrade or a restored dump; IDs made here could repeat the old cluster's."),
			 errhint("Stop this server and copy \"%s\" from the data directory of the cluster with system identifier " UINT64_FORMAT " (pg_controldata shows it) into this one; or, as a superuser, run SELECT idgen_resume_after(t) in database \"%s\", t being a time after every ID that cluster issued, and restart the server.",
					 "idgen_hwm", why.foreign, db)));
}

void
provenance_set_recheck_hook(void (*hook) (void))
{
	recheck_hook = hook;
}

/*
 * The row of this cluster that this backend added was rolled back with
 * its transaction: the backend checks again, and adds it again, before its
 * next ID (provenance_table.c calls this).
 */
static void
provenance_row_lost(void)
{
	checked = false;
	if (recheck_hook != NULL)
		recheck_hook();
}

/*
 * Makes the whole server refuse when system, a cluster whose IDs this
 * database holds (its row recorded at recorded_at), is one the marks do
 * not cover; true then.  The refusal names the cluster recorded last,
 * whose marks cover those before it.
 */
static bool
provenance_note_system(uint64 system, TimestampTz recorded_at)
{
	bool		covered;
	bool		noted = true;
	bool		added = false;

	if (prov == NULL)
		return false;			/* not preloaded: nothing generates */
	LWLockAcquire(prov->lock, LW_EXCLUSIVE);
	/* this cluster's own row: with its marks lost, the server refuses already */
	covered = system == GetSystemIdentifier() || provenance_covers(system);
	if (!covered)
	{
		noted = provenance_note(system, MyDatabaseId, &added);
		if (noted)
			provenance_refuse_for(system, MyDatabaseId, recorded_at);
		else
			prov->refusing = true;	/* unnamed: the error below undoes its row */
	}
	LWLockRelease(prov->lock);
	if (!noted)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("idgen keeps %d notes of databases holding IDs of clusters it does not cover already", PROVENANCE_MAX_NOTES),
				 errdetail("The refusal for cluster " UINT64_FORMAT " could not be kept across a restart.", system),
				 errhint("Run SELECT idgen_resume_after(t) in the databases the refusal names, restart the server, and try again.")));
	/*
	 * The refusal outlives a restart and a failover, after which this
	 * database may be the last to look.
	 */
	if (added)
	{
		marks_rewrite();
		provenance_log_note(system, MyDatabaseId);
	}
	return !covered;
}

/*
 * A row of cluster system arrived in this database's idgen_system (its
 * trigger): the server refuses when the marks do not cover that cluster,
 * and says so.
 */
void
provenance_arrived(uint64 system, TimestampTz recorded_at)
{
	if (provenance_note_system(system, recorded_at))
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("database \"%s\" now holds idgen IDs of another cluster (system identifier " UINT64_FORMAT "), whose high-water marks this server does not have",
						get_database_name(MyDatabaseId), system),
				 errdetail("Generation refuses in every database of this server until it is told where to resume."),
				 errhint("Copy \"%s\" from that cluster's data directory, or run SELECT idgen_resume_after(t), t being a time after every ID it issued; then restart the server.",
						 "idgen_hwm")));
}

/*
 * Makes the whole server refuse when this database holds IDs of a cluster
 * the marks do not cover; true then.
 */
static bool
provenance_check_database(void)
{
	uint64		uncovered;
	TimestampTz recorded_at;

	uncovered = provenance_uncovered(&recorded_at);
	return uncovered != 0 && provenance_note_system(uncovered, recorded_at);
}

/*
 * Before this backend first generates: refuses while the server does, or
 * when this database holds IDs of a cluster the marks do not cover, which
 * makes the whole server refuse.  A database that pg_upgrade brought gets
 * this cluster's row.
 */
void
provenance_require(void)
{
	if (likely(checked))
		return;
	if (prov->refusing || provenance_check_database())
		provenance_refuse();
	if (!self_recorded)
		provenance_table_record_self(provenance_row_lost, prov->epoch_ms);
	checked = true;
}

/*
 * After idgen_resume_after() raised the marks: they cover this database's
 * clusters, those of its idgen_system and those noted in it, and the marks
 * are lost no more.  Only once the raise is durable, and then in the file:
 * a crash or an error in between leaves the server refusing for them,
 * never covering them below their IDs.
 */
static void
provenance_cover_raised(int64 lead)
{
	ProvenanceRow *rows;
	int			nrows = provenance_table_read(&rows);
	uint64		noted[PROVENANCE_MAX_NOTES];
	int			nnoted = provenance_notes_of(MyDatabaseId, noted);

	LWLockAcquire(prov->lock, LW_EXCLUSIVE);
	for (int i = 0; i < nrows; i++)
		provenance_add(rows[i].system);
	for (int i = 0; i < nnoted; i++)
		provenance_add(noted[i]);
	prov->lost = prov->upgraded = false;
	provenance_add(GetSystemIdentifier());
	/* this cluster now holds IDs of that epoch: its own rows will say so */
	prov->epoch_ms = Min(prov->epoch_ms, layout_default()->epoch_ms - lead);
	LWLockRelease(prov->lock);
	marks_rewrite();
	if (rows != NULL)
		pfree(rows);
}

/*
 * idgen_resume_after(after timestamptz): the way out of a refusal, for whoever
 * knows when the old cluster (or this server, before its marks were lost)
 * issued its last ID.  Raises every mark past after, and records that the
 * marks now cover the clusters of this database's idgen_system; generation
 * resumes at the next restart.
 */
Datum
idgen_resume_after(PG_FUNCTION_ARGS)
{
	int64		after_ms = clock_timestamptz_to_ms(PG_GETARG_TIMESTAMPTZ(0));
	int64		now = clock_now_ms();
	int64		lead;

	if (prov == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via shared_preload_libraries"),
				 errhint("Add idgen to shared_preload_libraries in postgresql.conf and restart the server.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot raise idgen high-water marks during recovery"),
				 errhint("Run idgen_resume_after() on the primary.")));
	marks_require_readable();	/* before anything below changes */
	if (after_ms - now > idgen_limits.max_clock_regression_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time %s is more than idgen.max_clock_regression_ms ahead of the clock",
						timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(0))),
				 errdetail("Generation would refuse until the clock passes it."),
				 errhint("Pass the time of the newest ID issued, or wait until the clock is near it.  If idgen_decode() read that time from IDs made under an earlier idgen.epoch, set idgen.epoch to that epoch, restart the server, and run this again.")));
	lead = provenance_table_epoch_lead();
	LWLockAcquire(prov->lock, LW_EXCLUSIVE);
	prov->resumed = true;
	prov->refusing = true;
	LWLockRelease(prov->lock);
	marks_raise_all(Max(after_ms, 0) + 1, Max(after_ms, 0) + 1 + lead);
	provenance_cover_raised(lead);
	ereport(NOTICE,
			(errmsg("idgen high-water marks raised past %s",
					timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(0))),
			 errhint("Restart the server to generate again.")));
	PG_RETURN_VOID();
}
