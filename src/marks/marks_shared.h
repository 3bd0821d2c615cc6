/*
 * marks_shared.h
 *		The shared table of high-water marks, for the files that keep it:
 *		marks.c (the table and its entries), marks_load.c (the file at startup),
 *		marks_reserve.c (reserving and raising marks), marks_xlog.c (their WAL
 *		records) and marks_writer.c (the mark writer).  Everyone else goes
 *		through marks.h.
 */
#ifndef IDGEN_MARKS_SHARED_H
#define IDGEN_MARKS_SHARED_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "marks.h"
#include "marks_file.h"

/*
 * Entries that marks of other node ids and layouts leave free: those this
 * server's node id may need whatever the table holds, the default layout's
 * and the overflow mark's of its node id, and the default layout's of
 * every node id (marks.c).
 */
#define MARKS_RESERVED	3

/*
 * A layout's mark for one node id (or every node id).  Locking, field by
 * field (mark_table->lock is the table's LWLock):
 *
 *	name, node, node_bits: set under the lock when the entry is added, and
 *	  never changed while the server runs (the folds of old marks into
 *	  shared ones run at startup and at the first attach after recovery,
 *	  before any backend holds an entry); read under the lock.
 *	epoch_ms, floor, shared_floor, epoch_later: written under the lock (at
 *	  startup, by marks_attach() and by redo).  Backends read floor,
 *	  shared_floor and epoch_later without it, through the entry that
 *	  marks_attach() returned under the lock: that orders their reads after
 *	  every write made before, and a later write only raises a floor by
 *	  bounds the reader already had (another attach), or, in an overflow
 *	  mark that layouts share, by another layout's bounds, which only makes
 *	  the reader start later, or happens during recovery, when nothing
 *	  generates.  floor and shared_floor are atomics, so that they are read
 *	  whole on platforms without 8-byte loads too; epoch_later is a bool.
 *	mark: atomic.  Raised under the lock, only after the new value is
 *	  durable (file fsynced, WAL flushed); read without it on the hot path,
 *	  where a stale value is merely lower and sends the reader to the lock.
 *	requested: atomic, raised by compare-and-swap without the lock; the
 *	  raiser reads it under the lock.  A request read stale is served by the
 *	  next raise, or by the backend itself when it reaches the mark.
 *	retired: atomic, raised by compare-and-swap without the lock (slots.c
 *	  holds a layout state's lock then); read when a fresh shared state
 *	  starts, after the slots' lock that ordered the giving up.
 *	confirmed: atomic, raised by compare-and-swap by the writer after the
 *	  synchronous standbys confirmed; read without the lock, where a stale
 *	  value is lower and only makes the reader wait.
 */
struct MarkEntry
{
	char		name[NAMEDATALEN];	/* "" when unused */
	int32		node;			/* node id, or MARKS_ANY_NODE */
	int32		node_bits;		/* node_bits with node */
	pg_atomic_uint64 shared_floor;	/* the part of floor other node ids' marks set */
	int64		epoch_ms;		/* the epoch mark and floor are counted in */
	pg_atomic_uint64 floor;		/* the mark when generation (re)started */
	bool		epoch_later;	/* the epoch moved later since the floor's IDs */
	pg_atomic_uint64 mark;		/* every used tick start is below it */
	pg_atomic_uint64 requested; /* newest tick start a backend asked for */
	pg_atomic_uint64 retired;	/* newest tick start of a given-up shared state */
	pg_atomic_uint64 confirmed; /* a mark the synchronous standbys have */
};

/*
 * The table.  lock also serialises raising marks and writing the file;
 * corrupt and corrupt_detail are set at startup, before any backend;
 * writer_latch is set and cleared by the writer alone and read once by
 * whoever wakes it; restore_warned, full_warned, replayed, used, end,
 * overflows and last_overflow are written under the lock.  capacity and
 * default_epoch_read are fixed at startup.
 * end only grows while the server runs, so a reader without the lock that
 * reads it once scans every entry in use then, and maybe some unused ones.
 */
typedef struct MarkShared
{
	LWLock	   *lock;
	bool		corrupt;		/* the file could not be read */
	char		corrupt_detail[256];
	Latch	   *writer_latch;	/* the mark writer, when running */
	ConditionVariable confirmed_cv; /* broadcast when marks are confirmed */
	bool		restore_warned;
	bool		full_warned;	/* the table was found full this run */
	bool		replayed;		/* recovery added marks, not yet folded */
	int			capacity;		/* entries[] */
	int			used;			/* entries in use, the overflow mark's included */
	int			end;			/* every entry in use is below it */
	int64		overflows;		/* marks that found no entry of their own */
	TimestampTz last_overflow;
	int64		default_epoch_read; /* the default layout's epoch in the file */
	pg_atomic_uint64 logged_lsn;	/* end of the newest MARK record this run */
	MarkEntry	entries[FLEXIBLE_ARRAY_MEMBER]; /* [0]: overflow mark of every node id */
} MarkShared;

extern MarkShared *mark_table;

/* An entry's floor or shared floor (int64 kept in an atomic). */
static inline int64
marks_read(const pg_atomic_uint64 *value)
{
	return (int64) pg_atomic_read_u64(unconstify(pg_atomic_uint64 *, value));
}

/* Under the lock, or at startup. */
static inline void
marks_set(pg_atomic_uint64 *value, int64 v)
{
	pg_atomic_write_u64(value, (uint64) v);
}

/* A mark counted from one epoch, moved to count the same IDs from another. */
static inline int64
marks_convert(int64 mark, int64 from_epoch, int64 to_epoch)
{
	return Max(mark + (to_epoch - from_epoch), 0);
}

/* The overflow mark of every layout and node id. */
static inline MarkEntry *
marks_overflow(void)
{
	return &mark_table->entries[0];
}

/* An overflow mark, of every node id or of one: it keeps Unix ms as they are. */
static inline bool
marks_is_overflow(const MarkEntry *e)
{
	return strcmp(e->name, MARKS_OVERFLOW) == 0;
}

/* marks.c: the entries; the table attached under AddinShmemInitLock */
extern bool marks_attach_table(void *at, bool found);
extern bool marks_is_default(const char *name);
extern MarkEntry *marks_find(const char *name, int node, int node_bits);
extern MarkEntry *marks_find_or_add(const char *name, int64 epoch_ms, int node,
									int node_bits, bool anywhere);
extern void marks_remove(MarkEntry *e);
extern void marks_merge(MarkEntry *e, int64 epoch_ms, int64 mark);
extern MarkEntry *marks_entry(const char *name, int64 epoch_ms, int node,
							  int node_bits, bool anywhere);
extern MarkEntry *marks_entry_named(const char *name, int64 epoch_ms, int node,
									int node_bits, bool anywhere);
extern bool marks_binds(const MarkEntry *other, const char *name, int node, int node_bits);

/* marks_load.c: the file */
extern void marks_write(const int64 *marks);
extern void marks_move_epoch(MarkEntry *e);
extern void marks_fold_replayed(void);

/* marks_xlog.c: the records */
extern XLogRecPtr marks_log_mark(const MarkEntry *e, int64 mark_ms);
extern void marks_logged(XLogRecPtr end);
extern XLogRecPtr marks_confirmable_lsn(void);

/* marks_reserve.c, for the writer */
extern void marks_raise(MarkEntry *target, int64 ms);
extern bool marks_sync_wanted(void);

#endif							/* IDGEN_MARKS_SHARED_H */
