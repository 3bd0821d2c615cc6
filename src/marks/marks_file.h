/*
 * marks_file.h
 *		The file idgen_hwm: a codec between its lines and an array of marks.
 *		It knows the format, not the table (marks.c) nor what its comment
 *		lines say (provenance.c has one).
 */
#ifndef IDGEN_MARKS_FILE_H
#define IDGEN_MARKS_FILE_H

#include "c.h"

#define MARKS_FILE		"idgen_hwm"
#define MARKS_OVERFLOW	"*"
#define MARKS_FILE_ANY_NODE	(-1)

/* One line: a layout's mark, of a node id or of every node id. */
typedef struct MarkFileMark
{
	char		name[NAMEDATALEN];
	int64		epoch_ms;
	int64		mark;
	int			node;			/* or MARKS_FILE_ANY_NODE */
	int			node_bits;
} MarkFileMark;

/* Takes a comment line the file held; false when it is not a valid one. */
typedef bool (*MarkFileComment) (const char *line);

extern int	marks_file_lines(void);
extern bool marks_file_read(MarkFileMark **marks, int *nmarks, MarkFileComment comment,
							char *detail, Size detail_size, bool *found);
extern void marks_file_write(const MarkFileMark *marks, int nmarks, const char *comments);

#endif							/* IDGEN_MARKS_FILE_H */
