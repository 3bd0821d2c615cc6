/*
 * durable.h
 *		Small state files in the data directory, read line by line and
 *		replaced whole and durably.
 */
#ifndef IDGEN_DURABLE_H
#define IDGEN_DURABLE_H

/*
 * One line of a state file, without its newline; whole is false for a line
 * that had none (the last one, or one longer than the buffer, which comes
 * in pieces).  Returning false stops the reading.
 */
typedef bool (*DurableLine) (char *line, bool whole, void *arg);

typedef enum DurableRead
{
	DURABLE_READ,				/* every line was handed over */
	DURABLE_MISSING,			/* no file */
	DURABLE_UNOPENED,			/* there, but not opened: errno says why */
	DURABLE_FAILED,				/* a read failed */
	DURABLE_STOPPED,			/* a line's reader returned false */
} DurableRead;

extern DurableRead durable_read_lines(const char *path, char *buf, int buf_size,
									  DurableLine each, void *arg);
extern bool durable_write_file(const char *path, const char *tmp_path,
							   const char *data, int len, int elevel);
extern void durable_replace_file(const char *path, const char *tmp_path,
								 const char *data, int len);

#endif							/* IDGEN_DURABLE_H */
