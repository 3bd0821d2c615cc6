/*
 * hwm_file.c
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
#include "storage/fd.h"

#include "durable.h"
#include "hwm_shared.h"
#include "layout.h"
#include "provenance.h"

#define HWM_TMP_FILE	"idgen_hwm.tmp"
#define HWM_LINE_MAX	(NAMEDATALEN + 64)

/*
 * One line of the file.  Values outside the range a layout can have are
 * refused, not clamped: such a file was not written by idgen.
 */
static bool
hwm_parse_line(const char *line, char *name, int64 *epoch_ms, int64 *mark,
			   int *node, int *node_bits)
{
	long long	epoch;
	long long	value;
	int			end = -1;
	int			more = -1;

	if (sscanf(line, "%63s %lld %lld%n", name, &epoch, &value, &end) != 3)
		return false;
	*node = HWM_ANY_NODE;
	*node_bits = 0;
	if (line[end] != '\0' &&
		(sscanf(line + end, " %d %d%n", node, node_bits, &more) != 2 ||
		 line[end + more] != '\0' || *node < 0 || *node >= (1 << IDGEN_MACHINE_BITS) ||
		 *node_bits < 0 || *node_bits > IDGEN_MACHINE_BITS))
		return false;
	if (strcmp(name, HWM_OVERFLOW) != 0 && !layout_valid_name(name))
		return false;
	if (epoch < LAYOUT_MIN_EPOCH_MS || epoch > LAYOUT_MAX_EPOCH_MS ||
		value < 0 || value > LAYOUT_MAX_END_MS)
		return false;
	*epoch_ms = epoch;
	*mark = value;
	return true;
}

/*
 * How many lines the file has, at most the marks it holds; 0 when it
 * cannot be read (hwm_file_load says why).  Runs in the postmaster before
 * shared memory exists, so it reads with plain stdio.
 */
int
hwm_file_lines(void)
{
	FILE	   *f = fopen(HWM_FILE, "r");
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

/*
 * Loads the file's marks into the table (hwm_load_mark), and its systems
 * line into provenance.c; false, with why in detail, when it is unreadable.
 * *found says whether there was a file.
 */
bool
hwm_file_load(char *detail, Size detail_size, bool *found)
{
	FILE	   *f = AllocateFile(HWM_FILE, "r");
	char		line[HWM_LINE_MAX];
	int			lineno = 0;
	bool		bad = false;

	*found = f != NULL;
	if (f == NULL)
	{
		if (errno != ENOENT)
		{
			snprintf(detail, detail_size, "It could not be opened: %s.", strerror(errno));
			return false;
		}
		ereport(LOG,
				(errmsg("idgen high-water mark file \"%s\" is missing; IDs start from the clock", HWM_FILE),
				 errdetail("This is expected on a new cluster; it is written now.")));
		return true;
	}
	while (!bad && fgets(line, sizeof(line), f) != NULL)
	{
		char		name[NAMEDATALEN];
		int64		epoch_ms;
		int64		mark;
		int			node;
		int			node_bits;
		size_t		len = strlen(line);

		lineno++;
		bad = len == 0 || line[len - 1] != '\n';
		if (bad)
			continue;
		line[len - 1] = '\0';
		if (line[0] == '#')
		{
			bad = !provenance_load_line(line);
			continue;
		}
		bad = !hwm_parse_line(line, name, &epoch_ms, &mark, &node, &node_bits);
		if (!bad)
			hwm_load_mark(name, epoch_ms, mark, node, node_bits);
	}
	if (bad || ferror(f))
	{
		FreeFile(f);
		snprintf(detail, detail_size,
				 "Line %d is not of the form \"<layout> <epoch in Unix ms> <mark in Unix ms> [<node id> <node bits>]\", a comment, or \"# systems <system identifier>...\".",
				 lineno);
		return false;
	}
	FreeFile(f);
	return true;
}

static void
hwm_write_line(StringInfo buf, const HwmEntry *e, int64 mark)
{
	appendStringInfo(buf, "%s %lld %lld", e->name, (long long) e->epoch_ms, (long long) mark);
	if (e->node != HWM_ANY_NODE)
		appendStringInfo(buf, " %d %d", e->node, e->node_bits);
	appendStringInfoChar(buf, '\n');
}

/*
 * Makes the marks durable in the file (marks[i] for the table's entry i,
 * or, with NULL, the entries' own): write, fsync, rename into place.
 * Marks of 0 bind nothing and are left out, but for the overflow mark of
 * every node id, always the first line.  The caller holds hwm->lock.
 */
void
hwm_file_write(const int64 *marks)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "# idgen high-water marks: layout, epoch and mark in Unix milliseconds, node id and node bits\n");
	provenance_write_line(&buf);
	for (int i = 0; i < hwm->end; i++)
	{
		HwmEntry   *e = &hwm->entries[i];
		int64		mark = marks ? marks[i] : hwm_mark(e);

		if (e->name[0] != '\0' && (i == 0 || mark > 0))
			hwm_write_line(&buf, e, mark);
	}

	durable_replace_file(HWM_FILE, HWM_TMP_FILE, buf.data, buf.len);
	pfree(buf.data);
}
