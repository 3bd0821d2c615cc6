/*-------------------------------------------------------------------------
 *
 * durable.c
 *		Small state files in the data directory (the high-water marks, the
 *		horizon), replaced whole: write a temporary file, fsync it, rename it
 *		into place durably, so a crash leaves the old file or the new one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"

#include "durable.h"

/* Replaces path with the len bytes of data; raises an ERROR on failure. */
void
durable_replace_file(const char *path, const char *tmp_path,
					 const char *data, int len)
{
	int			fd;

	fd = OpenTransientFile(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp_path)));
	errno = 0;
	if (write(fd, data, len) != len || pg_fsync(fd) != 0)
	{
		int			save_errno = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp_path)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp_path)));
	(void) durable_rename(tmp_path, path, ERROR);
}
