/*
 * marks.h
 *		High-water marks: per layout, a time no ID has reached yet, kept
 *		durable in a file and carried to standbys in WAL, so crashes, restarts
 *		and failover never reissue an ID.
 */
#ifndef IDGEN_MARKS_H
#define IDGEN_MARKS_H

#include "base/capacity.h"
#include "base/layout.h"
#include "lib/stringinfo.h"

/*
 * Marks run this far ahead of the newest tick asked for, so a mark read
 * after a restart may be up to this much above the IDs issued before.
 */
#define MARKS_STEP_MS		1000

/*
 * The longest line of idgen_hwm that can be read back, newline included:
 * room for the provenance module's systems line, the longest it writes.
 */
#define MARKS_FILE_LINE_MAX	8192

/* The node id of a mark that binds every node id. */
#define MARKS_ANY_NODE	(-1)

typedef struct MarkEntry MarkEntry;

/*
 * What idgen_hwm holds besides the marks: its comment lines, whose owner
 * (provenance.c) registers here before marks_shmem_init() reads the file.
 * Calls go one way, from that owner down to the marks: marks_load.c knows
 * only these callbacks, never their owner.
 */
typedef struct MarkFileClient
{
	bool		(*load_line) (const char *line);	/* false: malformed */
	void		(*write_line) (StringInfo buf);
	bool		(*settle) (bool file_found);	/* true: write the file */
} MarkFileClient;

extern void marks_set_file_client(const MarkFileClient *client);

extern Size marks_shmem_size(void);
extern void marks_shmem_request(void);
extern void marks_shmem_init(void *at, bool found);
extern void marks_writer_register(void);

extern MarkEntry *marks_attach(const IdgenLayout *layout);
extern int64 marks_floor(const MarkEntry *entry);
extern int64 marks_value(MarkEntry *entry);
extern int64 marks_shared_floor(const MarkEntry *entry);
extern void marks_retire(MarkEntry *entry, int64 tick_start_ms);
extern int64 marks_retired(MarkEntry *entry);
extern int64 marks_epoch_later_until(const MarkEntry *entry);
extern bool marks_readable(void);
extern void marks_require_readable(void);
extern bool marks_reserve(MarkEntry *entry, int64 tick_start_ms);
extern void marks_raise_all(int64 ms, int64 default_ms);
extern void marks_rewrite(void);
extern int64 marks_default_epoch_read(void);
extern int64 marks_bind_default_layout(int64 epoch_ms, int64 mark);
extern int64 marks_node_highest(int node, int node_bits);
extern void marks_raise_node_floor(int node, int node_bits, int64 ms);
extern void marks_wait_confirmed(MarkEntry *entry, int64 tick_start_ms);
extern void marks_capacity(IdgenCapacity *row);
extern void marks_redo_mark(const char *layout, int64 epoch_ms, int64 mark_ms,
							int node, int node_bits);

#endif							/* IDGEN_MARKS_H */
