/*
 * provenance_shared.h
 *		The provenance module's shared state, for the files that keep it:
 *		provenance.c (the checks, the refusal and idgen_resume_after()) and
 *		provenance_state.c (the state itself and its line of idgen_hwm).  Everyone else goes
 *		through provenance.h.
 */
#ifndef IDGEN_PROVENANCE_SHARED_H
#define IDGEN_PROVENANCE_SHARED_H

#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "storage/lwlock.h"

/*
 * Clusters covered beyond that many push out the oldest (provenance_add);
 * more than the notes, so that covering every noted one fits.
 */
#define PROVENANCE_MAX_SYSTEMS	128
#define PROVENANCE_MAX_NOTES	64

/*
 * A cluster whose IDs a database holds and the marks do not cover, as
 * found: kept in idgen_hwm, so that the refusal outlives a restart, which
 * no backend of that database may follow.
 */
typedef struct ProvenanceNote
{
	uint64		system;
	Oid			db;
} ProvenanceNote;

typedef struct ProvenanceShared
{
	LWLock	   *lock;
	bool		lost;			/* idgen_hwm is missing from a directory that kept it */
	bool		upgraded;		/* or stayed in the cluster pg_upgrade came from */
	bool		refusing;		/* lost, or a database held IDs the marks miss */
	bool		resumed;		/* idgen_resume_after() ran: restart */
	uint64		foreign;		/* the cluster whose IDs the marks miss */
	TimestampTz foreign_recorded_at;	/* its row's */
	Oid			foreign_db;		/* the database holding them */
	int			nsystems;
	uint64		systems[PROVENANCE_MAX_SYSTEMS];	/* clusters the marks cover */
	int64		epoch_ms;		/* the earliest idgen.epoch of IDs they cover */
	int			nnotes;
	ProvenanceNote notes[PROVENANCE_MAX_NOTES];	/* clusters found uncovered */
} ProvenanceShared;

extern ProvenanceShared *prov;

/* provenance_state.c; the first two with prov->lock held */
extern bool provenance_covers(uint64 system);
extern void provenance_add(uint64 system);
extern void provenance_refuse_for(uint64 system, Oid db, TimestampTz recorded_at);
extern bool provenance_load_line(const char *line);
extern void provenance_write_line(StringInfo buf);
extern bool provenance_note(uint64 system, Oid db, bool *added);
extern void provenance_log_note(uint64 system, Oid db);
extern bool provenance_notes_settle(void);
extern int	provenance_notes_of(Oid db, uint64 *systems);
extern void provenance_mark_upgraded(void);

#endif							/* IDGEN_PROVENANCE_SHARED_H */
