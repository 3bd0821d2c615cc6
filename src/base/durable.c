/*-------------------------------------------------------------------------
 *
 * durable.c
 *		Small state files in the data directory (the high-water marks, the
 *		horizon, the node id, the lease token), read line by line and
 *		replaced whole: write a temporary file, fsync it, rename it into
 *		place durably, so a crash leaves the old file or the new one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"

#include "durable.h"

/*
 * Hands each line of path to each(), read into buf as fgets() reads it.
 * On DURABLE_UNOPENED errno says why.
 */
DurableRead
durable_read_lines(const char *path, char *buf, int buf_size, DurableLine each, void *arg)
{
	FILE	   *f = AllocateFile(path, "r");
	DurableRead result = DURABLE_READ;

	if (f == NULL)
		return errno == ENOENT ? DURABLE_MISSING : DURABLE_UNOPENED;
	while (fgets(buf, buf_size, f) != NULL)
	{
		size_t		len = strlen(buf);
		bool		whole = len > 0 && buf[len - 1] == '\n';

		if (whole)
			buf[len - 1] = '\0';
		if (!each(buf, whole, arg))
		{
			result = DURABLE_STOPPED;
			break;
		}
	}
	if (result == DURABLE_READ && ferror(f))
		result = DURABLE_FAILED;
	FreeFile(f);
	return result;
}

/*
 * Replaces path with the len bytes of data; on failure, reports at elevel
 * and, when that returns, returns false.
 */
bool
durable_write_file(const char *path, const char *tmp_path,
				   const char *data, int len, int elevel)
{
	int			fd;

	fd = OpenTransientFile(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp_path)));
		return false;
	}
	errno = 0;
	if (write(fd, data, len) != len || pg_fsync(fd) != 0)
	{
		int			save_errno = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp_path)));
		return false;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp_path)));
		return false;
	}
	return durable_rename(tmp_path, path, elevel) == 0;
}

/* Replaces path with the len bytes of data; raises an ERROR on failure. */
void
durable_replace_file(const char *path, const char *tmp_path,
					 const char *data, int len)
{
	(void) durable_write_file(path, tmp_path, data, len, ERROR);
}
