/*
 * hwm_file.h
 *		The file idgen_hwm: a codec between its lines and an array of marks.
 *		It knows the format, not the table (hwm.c) nor what its comment
 *		lines say (provenance.c has one).
 */
#ifndef IDGEN_HWM_FILE_H
#define IDGEN_HWM_FILE_H

#include "c.h"

#define HWM_FILE		"idgen_hwm"
#define HWM_OVERFLOW	"*"
#define HWM_FILE_ANY_NODE	(-1)

/* One line: a layout's mark, of a node id or of every node id. */
typedef struct HwmFileMark
{
	char		name[NAMEDATALEN];
	int64		epoch_ms;
	int64		mark;
	int			node;			/* or HWM_FILE_ANY_NODE */
	int			node_bits;
} HwmFileMark;

/* Takes a comment line the file held; false when it is not a valid one. */
typedef bool (*HwmFileComment) (const char *line);

extern int	hwm_file_lines(void);
extern bool hwm_file_read(HwmFileMark **marks, int *nmarks, HwmFileComment comment,
						  char *detail, Size detail_size, bool *found);
extern void hwm_file_write(const HwmFileMark *marks, int nmarks, const char *comments);

#endif							/* IDGEN_HWM_FILE_H */
