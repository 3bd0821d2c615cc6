/*
 * provenance_state.c
 *		The provenance module's shared state and its line of idgen_hwm: the
 *		clusters whose IDs the marks cover, and those found uncovered.
 *
 * A cluster found uncovered makes the server refuse (provenance.c); the
 * note of it in the file keeps the refusal across a restart, after which
 * backends of other databases would otherwise generate first and never
 * look at the database holding the old IDs.  A note goes once its cluster
 * is covered: idgen_resume_after() in that database, or in any database
 * once that one is dropped.  WAL carries each note to standbys, whose
 * promotion is a start as well.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "commands/dbcommands.h"

#include "base/idgen_xlog.h"
#include "marks/marks.h"
#include "provenance.h"
#include "provenance_shared.h"

#define PROVENANCE_LINE			"# systems"

/* The line at its longest: its epoch, every cluster covered, every note. */
#define PROVENANCE_LINE_LONGEST \
	(sizeof(PROVENANCE_LINE " @-9223372036854775808 -\n") + \
	 PROVENANCE_MAX_SYSTEMS * (sizeof(" 18446744073709551615") - 1) + \
	 PROVENANCE_MAX_NOTES * (sizeof(" !18446744073709551615:4294967295") - 1))
StaticAssertDecl(PROVENANCE_LINE_LONGEST <= MARKS_FILE_LINE_MAX,
				 "idgen_hwm's reader must have room for the systems line");

ProvenanceShared *prov = NULL;

/* The caller holds prov->lock. */
bool
provenance_covers(uint64 system)
{
	for (int i = 0; i < prov->nsystems; i++)
		if (prov->systems[i] == system)
			return true;
	return false;
}

/*
 * The marks cover system from now on.  With the table full, the one added
 * first (never this cluster) goes: at worst a database still holding its
 * IDs refuses again, until told where to resume.  The caller holds
 * prov->lock exclusively.
 */
void
provenance_add(uint64 system)
{
	if (provenance_covers(system))
		return;
	if (prov->nsystems == PROVENANCE_MAX_SYSTEMS)
	{
		int			oldest = prov->systems[0] == GetSystemIdentifier() ? 1 : 0;

		memmove(&prov->systems[oldest], &prov->systems[oldest + 1],
				(PROVENANCE_MAX_SYSTEMS - oldest - 1) * sizeof(uint64));
		prov->nsystems--;
	}
	prov->systems[prov->nsystems++] = system;
}

/*
 * The server refuses for system, found in database db (its row recorded at
 * recorded_at), naming the cluster recorded last among those found.  The
 * caller holds prov->lock exclusively.
 */
void
provenance_refuse_for(uint64 system, Oid db, TimestampTz recorded_at)
{
	prov->refusing = true;
	if (prov->foreign == 0 || recorded_at >= prov->foreign_recorded_at)
	{
		prov->foreign = system;
		prov->foreign_recorded_at = recorded_at;
		prov->foreign_db = db;
	}
}

/*
 * Notes that database db holds IDs of system, which the marks do not cover;
 * *added when the note is new, for the caller to write the file.  False
 * when the notes are full.  The caller holds prov->lock exclusively.
 */
bool
provenance_note(uint64 system, Oid db, bool *added)
{
	*added = false;
	for (int i = 0; i < prov->nnotes; i++)
		if (prov->notes[i].system == system && prov->notes[i].db == db)
			return true;
	if (prov->nnotes >= PROVENANCE_MAX_NOTES)
		return false;
	prov->notes[prov->nnotes].system = system;
	prov->notes[prov->nnotes].db = db;
	prov->nnotes++;
	*added = true;
	return true;
}

/* A new note, for standbys to replay (provenance_redo_note()). */
void
provenance_log_note(uint64 system, Oid db)
{
	xl_idgen_foreign rec = {.system = system, .db = db};

	XLogBeginInsert();
	XLogRegisterData((char *) &rec, SizeOfIdgenForeign);
	(void) XLogInsert(IDGEN_RMGR_ID, XLOG_IDGEN_FOREIGN);
}

/*
 * Redo of a note: the standby refuses from now on, once promoted too, and
 * keeps the note in its file.  With the notes full, the refusal stays in
 * memory only: redo must not fail.
 */
void
provenance_redo_note(uint64 system, Oid db)
{
	bool		added = false;

	LWLockAcquire(prov->lock, LW_EXCLUSIVE);
	if (!provenance_covers(system))
	{
		(void) provenance_note(system, db, &added);
		provenance_refuse_for(system, db, DT_NOBEGIN);
	}
	LWLockRelease(prov->lock);
	if (added)
		marks_rewrite();
}

/*
 * At startup, once the file is read: notes of clusters covered since go;
 * any other makes the server refuse, naming it.  True when one went.
 */
bool
provenance_notes_settle(void)
{
	int			kept = 0;
	bool		dropped;

	for (int i = 0; i < prov->nnotes; i++)
	{
		if (provenance_covers(prov->notes[i].system))
			continue;
		prov->notes[kept++] = prov->notes[i];
		provenance_refuse_for(prov->notes[i].system, prov->notes[i].db, DT_NOBEGIN);
	}
	dropped = kept != prov->nnotes;
	prov->nnotes = kept;
	return dropped;
}

/*
 * For idgen_resume_after() in database db: the clusters noted in it, and in
 * databases dropped since, whose IDs the time given is after, into systems
 * (room for PROVENANCE_MAX_NOTES); returns how many.
 */
int
provenance_notes_of(Oid db, uint64 *systems)
{
	ProvenanceNote notes[PROVENANCE_MAX_NOTES];
	int			n;
	int			found = 0;

	LWLockAcquire(prov->lock, LW_SHARED);
	n = prov->nnotes;
	memcpy(notes, prov->notes, n * sizeof(ProvenanceNote));
	LWLockRelease(prov->lock);
	for (int i = 0; i < n; i++)
		if (notes[i].db == db || get_database_name(notes[i].db) == NULL)
			systems[found++] = notes[i].system;
	return found;
}

/*
 * pg_upgrade is bringing a database with the extension (utility.c): it
 * holds the old cluster's IDs, whose marks stayed in the old idgen_hwm, so
 * these marks cover no cluster until that file is copied over this one or
 * idgen_resume_after() runs.  In the file at once: the new server's first
 * start must refuse, in every database.
 */
void
provenance_mark_upgraded(void)
{
	bool		changed;

	LWLockAcquire(prov->lock, LW_EXCLUSIVE);
	changed = !prov->upgraded;
	prov->upgraded = prov->lost = prov->refusing = true;
	LWLockRelease(prov->lock);
	if (changed)
		marks_rewrite();
}

/* A note's token after its "!": "<system>:<db oid>". */
static bool
provenance_load_note(const char *p, char **end)
{
	uint64		system = strtoull(p, end, 10);
	const char *db = *end + 1;
	bool		added;

	if (*end == p || **end != ':')
		return false;
	return provenance_note(system, (Oid) strtoul(db, end, 10), &added) && *end != db;
}

/* One token of the line: false when malformed. */
static bool
provenance_load_token(const char *p, char **end)
{
	const char *digits = p + (*p == '@' || *p == '!');
	bool		ok = true;

	errno = 0;
	*end = (char *) p + 1;
	if (*p == '-')
		prov->lost = true;
	else if (*p == '^')
		prov->lost = prov->upgraded = true;
	else if (*p == '@')
		prov->epoch_ms = strtoll(digits, end, 10);
	else if (*p == '!')
		ok = provenance_load_note(digits, end);
	else
		provenance_add(strtoull(p, end, 10));
	return ok && *end != digits && errno == 0 && (**end == ' ' || **end == '\0');
}

/*
 * A comment line of idgen_hwm: "# systems @<epoch ms> <id>... !<id>:<db oid>..."
 * ("-" for the ids: marks lost; "^": left in the cluster pg_upgrade came
 * from; "!" for a cluster found uncovered in a database) is ours; other
 * comments are not.  False when ours is malformed.
 */
bool
provenance_load_line(const char *line)
{
	const char *p = line + strlen(PROVENANCE_LINE);

	if (strncmp(line, PROVENANCE_LINE, strlen(PROVENANCE_LINE)) != 0 || (*p != ' ' && *p != '\0'))
		return true;
	p += strspn(p, " ");
	while (*p != '\0')
	{
		char	   *end;

		if (!provenance_load_token(p, &end))
			return false;
		p = end + strspn(end, " ");
	}
	return true;
}

/* The line, for marks_load.c writing the file under its lock. */
void
provenance_write_line(StringInfo buf)
{
	LWLockAcquire(prov->lock, LW_SHARED);
	appendStringInfoString(buf, PROVENANCE_LINE);
	appendStringInfo(buf, " @" INT64_FORMAT, prov->epoch_ms);
	if (prov->upgraded)
		appendStringInfoString(buf, " ^");
	else if (prov->lost)
		appendStringInfoString(buf, " -");
	else
		for (int i = 0; i < prov->nsystems; i++)
			appendStringInfo(buf, " " UINT64_FORMAT, prov->systems[i]);
	for (int i = 0; i < prov->nnotes; i++)
		if (!provenance_covers(prov->notes[i].system))
			appendStringInfo(buf, " !" UINT64_FORMAT ":%u", prov->notes[i].system, prov->notes[i].db);
	appendStringInfoChar(buf, '\n');
	LWLockRelease(prov->lock);
}
