/*
 * marks_file.c
 *		The file idgen_hwm in the data directory, which keeps the high-water
 *		marks across restarts: one line per mark, "<layout> <epoch ms>
 *		<mark ms> [<node id> <node bits>]", replaced whole and durably.
 *		Marks written without a node id (idgen 1.2, and the overflow mark
 *		"*") bind every node id.  The layout "*" with a node id (idgen 1.5)
 *		is the overflow mark of that node id, which binds every layout;
 *		idgen 1.4 and earlier refuse such a line, and so the whole file,
 *		rather than read it as something that binds less.
 */
#include "postgres.h"

#include <limits.h>

#include "lib/stringinfo.h"

#include "base/durable.h"
#include "base/layout.h"
#include "marks.h"
#include "marks_file.h"

#define MARKS_TMP_FILE	"idgen_hwm.tmp"

/*
 * One line of the file.  Values outside the range a layout can have are
 * refused, not clamped: such a file was not written by idgen.
 */
static bool
marks_parse_line(const char *line, MarkFileMark *m)
{
	long long	epoch;
	long long	value;
	int			end = -1;
	int			more = -1;

	if (sscanf(line, "%63s %lld %lld%n", m->name, &epoch, &value, &end) != 3)
		return false;
	m->node = MARKS_FILE_ANY_NODE;
	m->node_bits = 0;
	if (line[end] != '\0' &&
		(sscanf(line + end, " %d %d%n", &m->node, &m->node_bits, &more) != 2 ||
		 line[end + more] != '\0' || m->node < 0 || m->node >= (1 << IDGEN_MACHINE_BITS) ||
		 m->node_bits < 0 || m->node_bits > IDGEN_MACHINE_BITS))
		return false;
	if (strcmp(m->name, MARKS_OVERFLOW) != 0 && !layout_valid_name(m->name))
		return false;
	if (epoch < LAYOUT_MIN_EPOCH_MS || epoch > LAYOUT_MAX_EPOCH_MS ||
		value < 0 || value > LAYOUT_MAX_END_MS)
		return false;
	m->epoch_ms = epoch;
	m->mark = value;
	return true;
}

/*
 * How many lines the file has, at most the marks it holds; 0 when it
 * cannot be read (marks_file_load says why).  Runs in the postmaster before
 * shared memory exists, so it reads with plain stdio.
 */
int
marks_file_lines(void)
{
	FILE	   *f = fopen(MARKS_FILE, "r");
	int			lines = 0;
	int			c;

	if (f == NULL)
		return 0;
	while ((c = getc(f)) != EOF)
		if (c == '\n' && lines < INT_MAX / 2)
			lines++;
	fclose(f);
	return lines;
}

/* The reading of the file, line by line. */
typedef struct MarkFileReading
{
	MarkFileMark *marks;
	int			nmarks;
	int			room;
	int			lineno;
	MarkFileComment comment;
} MarkFileReading;

/* One line: a mark or a comment; false when it is neither. */
static bool
marks_read_line(char *line, bool whole, void *arg)
{
	MarkFileReading *r = arg;

	r->lineno++;
	if (!whole)
		return false;
	if (line[0] == '#')
		return r->comment(line);
	if (r->nmarks == r->room)
		r->marks = repalloc(r->marks, (r->room *= 2) * sizeof(MarkFileMark));
	if (!marks_parse_line(line, &r->marks[r->nmarks]))
		return false;
	r->nmarks++;
	return true;
}

/*
 * Reads the file's marks into *marks (palloc'd, *nmarks of them), and hands
 * its comment lines to comment; false, with why in detail, when it is
 * unreadable.  *found says whether there was a file.
 */
bool
marks_file_read(MarkFileMark **marks, int *nmarks, MarkFileComment comment,
				char *detail, Size detail_size, bool *found)
{
	char		line[MARKS_FILE_LINE_MAX];
	MarkFileReading r = {palloc(16 * sizeof(MarkFileMark)), 0, 16, 0, comment};
	DurableRead result = durable_read_lines(MARKS_FILE, line, sizeof(line), marks_read_line, &r);

	*marks = r.marks;
	*nmarks = r.nmarks;
	*found = result != DURABLE_MISSING && result != DURABLE_UNOPENED;
	if (result == DURABLE_UNOPENED)
	{
		snprintf(detail, detail_size, "It could not be opened: %s.", strerror(errno));
		return false;
	}
	if (result == DURABLE_MISSING)
	{
		ereport(LOG,
				(errmsg("idgen high-water mark file \"%s\" is missing; IDs start from the clock", MARKS_FILE),
				 errdetail("This is expected on a new cluster; it is written now.")));
		return true;
	}
	if (result != DURABLE_READ)
	{
		snprintf(detail, detail_size,
				 "Line %d is not of the form \"<layout> <epoch in Unix ms> <mark in Unix ms> [<node id> <node bits>]\", a comment, or \"# systems @<epoch in Unix ms> <system identifier>...\".",
				 r.lineno);
		return false;
	}
	return true;
}

static void
marks_write_line(StringInfo buf, const MarkFileMark *m)
{
	appendStringInfo(buf, "%s %lld %lld", m->name, (long long) m->epoch_ms, (long long) m->mark);
	if (m->node != MARKS_FILE_ANY_NODE)
		appendStringInfo(buf, " %d %d", m->node, m->node_bits);
	appendStringInfoChar(buf, '\n');
}

/*
 * Makes the marks durable in the file, after the comment lines (each ending
 * in a newline): write, fsync, rename into place.
 */
void
marks_file_write(const MarkFileMark *marks, int nmarks, const char *comments)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "# idgen high-water marks: layout, epoch and mark in Unix milliseconds, node id and node bits\n");
	appendStringInfoString(&buf, comments);
	for (int i = 0; i < nmarks; i++)
		marks_write_line(&buf, &marks[i]);
	durable_replace_file(MARKS_FILE, MARKS_TMP_FILE, buf.data, buf.len);
	pfree(buf.data);
}
