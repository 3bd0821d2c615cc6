/*
 * durable.h
 *		Small state files in the data directory, replaced whole and durably.
 */
#ifndef IDGEN_DURABLE_H
#define IDGEN_DURABLE_H

extern void durable_replace_file(const char *path, const char *tmp_path,
								 const char *data, int len);

#endif							/* IDGEN_DURABLE_H */
