/*
 * hwm.h
 *		High-water marks: per layout, a time no ID has reached yet, kept
 *		durable in a file and carried to standbys in WAL, so crashes, restarts
 *		and failover never reissue an ID.
 */
#ifndef IDGEN_HWM_H
#define IDGEN_HWM_H

#include "base/capacity.h"
#include "base/layout.h"
#include "lib/stringinfo.h"

/*
 * Marks run this far ahead of the newest tick asked for, so a mark read
 * after a restart may be up to this much above the IDs issued before.
 */
#define HWM_STEP_MS		1000

/* The node id of a mark that binds every node id. */
#define HWM_ANY_NODE	(-1)

typedef struct HwmEntry HwmEntry;

/*
 * What idgen_hwm holds besides the marks: its comment lines, whose owner
 * (provenance.c) registers here before hwm_shmem_startup() reads the file.
 * Calls go one way, from that owner down to the marks: hwm_load.c knows
 * only these callbacks, never their owner.
 */
typedef struct HwmFileClient
{
	bool		(*load_line) (const char *line);	/* false: malformed */
	void		(*write_line) (StringInfo buf);
	bool		(*settle) (bool file_found);	/* true: write the file */
} HwmFileClient;

extern void hwm_set_file_client(const HwmFileClient *client);

extern void hwm_shmem_request(void);
extern void hwm_shmem_startup(void);
extern void hwm_writer_register(void);

extern HwmEntry *hwm_attach(const IdgenLayout *layout);
extern int64 hwm_floor(const HwmEntry *entry);
extern int64 hwm_mark(HwmEntry *entry);
extern int64 hwm_shared_floor(const HwmEntry *entry);
extern void hwm_retire(HwmEntry *entry, int64 tick_start_ms);
extern int64 hwm_retired(HwmEntry *entry);
extern int64 hwm_epoch_later_until(const HwmEntry *entry);
extern bool hwm_reserve(HwmEntry *entry, int64 tick_start_ms);
extern void hwm_raise_all(int64 ms, int64 default_ms);
extern int64 hwm_default_epoch_read(void);
extern int64 hwm_bind_default_layout(int64 epoch_ms, int64 mark);
extern int64 hwm_node_highest(int node, int node_bits);
extern void hwm_raise_node_floor(int node, int node_bits, int64 ms);
extern void hwm_wait_confirmed(HwmEntry *entry, int64 tick_start_ms);
extern void hwm_capacity(IdgenCapacity *row);
extern void hwm_redo_mark(const char *layout, int64 epoch_ms, int64 mark_ms,
						  int node, int node_bits);

#endif							/* IDGEN_HWM_H */
