/* Names of JIT-compiled code from the process's perf map (/tmp/perf-PID.map): the text file
 * JITs write for profilers (V8's --perf-basic-prof, the JVM's perf-map-agent, .NET's
 * DOTNET_PerfMapEnabled, Python 3.12's -X perf, LuaJIT), one line per piece of code:
 * "START SIZE NAME", START and SIZE in hex (with or without 0x), NAME the rest of the line.
 * perf, bcc and bpftrace read the same file. PID is the process's own in its PID namespace,
 * the file in its mount namespace's /tmp. A JIT appends as it compiles: the file is read
 * again when it has grown since (at a miss); code compiled again at an address has its later
 * line. A file older than the process is an earlier process's with its PID: not used. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/sym_internal.h"
#include "util/util.h"

struct perfmap_entry {
	uint64_t start, end;
	uint32_t line;		/* the later line wins where two overlap */
	const char *name;	/* interned */
};

struct sym_perfmap {
	char *path;
	uid_t uid;		/* the process's: the file is used only if it or root owns it */
	time_t start;		/* when the process started (wall clock, s; 0: not known): a file
				 * last written before is an earlier process's with the same PID */
	off_t size;		/* of the file when read; -1: not read yet */
	struct perfmap_entry *e;
	size_t n;
};

/* The PID a process has in its own namespace (NSpid's last field), pid when not known; *uid
 * its real user (root when not known) */
static pid_t own_pid(pid_t pid, uid_t *uid)
{
	char path[64], *st, *l;
	long v = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = util_read_file(path, NULL);
	*uid = 0;
	l = st ? strstr(st, "\nUid:") : NULL;
	if (l)
		*uid = (uid_t)strtoul(l + 5, NULL, 10);
	l = st ? strstr(st, "\nNSpid:") : NULL;
	if (l) {
		char *end = strchr(l + 1, '\n'), *q = l + 7;

		while (q && (!end || q < end)) {
			char *next;
			long x = strtol(q, &next, 10);

			if (next == q)
				break;
			v = x;
			q = next;
		}
	}
	free(st);
	return (pid_t)v;
}

/* When pid started, in wall-clock seconds: boot time (/proc/stat's btime) plus its start in
 * clock ticks after boot (/proc/PID/stat's 22nd field). 0 when not known. */
static time_t start_time(pid_t pid)
{
	char path[64], *st = util_read_file("/proc/stat", NULL), *ps, *f;
	unsigned long long btime = 0, ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int field;

	f = st ? strstr(st, "\nbtime ") : NULL;
	if (f)
		btime = strtoull(f + 7, NULL, 10);
	free(st);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ps = util_read_file(path, NULL);
	/* after the command's name (which may hold blanks and parentheses): field 3 on */
	f = ps ? strrchr(ps, ')') : NULL;
	for (field = 2; f && *f && field < 22; f++)
		if (*f == ' ')
			field++;
	if (f && field == 22)
		ticks = strtoull(f, NULL, 10);
	free(ps);
	return btime && ticks && hz > 0 ? (time_t)(btime + ticks / (unsigned long long)hz) : 0;
}

struct sym_perfmap *sym_perfmap__new(pid_t pid, const char *root)
{
	struct sym_perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->size = -1;
	m->start = start_time(pid);
	if (asprintf(&m->path, "%s/tmp/perf-%d.map", root ? root : "",
		     (int)own_pid(pid, &m->uid)) < 0) {
		free(m);
		return NULL;
	}
	return m;
}

void sym_perfmap__free(struct sym_perfmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m->path);
	free(m);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* One line into *e; false for a line that is no entry */
static bool parse_line(struct strpool *pool, char *l, uint32_t line, struct perfmap_entry *e)
{
	char *p, *q;
	uint64_t start, size;
	size_t len;

	errno = 0;
	start = strtoull(l, &p, 16);
	if (p == l || errno || (*p != ' ' && *p != '\t'))
		return false;
	size = strtoull(p, &q, 16);
	if (q == p || errno || !size || start + size < start || (*q != ' ' && *q != '\t'))
		return false;
	while (*q == ' ' || *q == '\t')
		q++;
	len = strcspn(q, "\r\n");
	if (!len)
		return false;
	*e = (struct perfmap_entry){ .start = start, .end = start + size, .line = line,
				     .name = strpool__intern_n(pool, q, len) };
	return e->name != NULL;
}

/* Read the file again if it changed size since; 0, or -errno (missing: -ENOENT) */
static int load(struct sym_perfmap *m, struct strpool *pool)
{
	struct perfmap_entry *e = NULL;
	size_t n = 0, cap = 0, len;
	struct stat st;
	uint32_t line = 0;
	char *text, *l, *next;

	if (stat(m->path, &st))
		return -errno;
	/* as perf: a regular file of the process's user or root (another user's in /tmp could
	 * name its code anything) */
	if (!S_ISREG(st.st_mode) || (st.st_uid != m->uid && st.st_uid != 0))
		return -EPERM;
	/* perf maps stay in /tmp after their process: one last written before this process
	 * started (a second of slack for the clocks' rounding) is another's that had its PID,
	 * whose names would be wrong here */
	if (m->start && st.st_mtime + 1 < m->start)
		return -ESTALE;
	if (st.st_size == m->size)
		return 0;
	text = util_read_file(m->path, &len);
	if (!text)
		return -errno;
	for (l = text; l < text + len; l = next) {
		next = strchr(l, '\n');
		next = next ? next + 1 : text + len;
		line++;
		if (n == cap) {
			struct perfmap_entry *g;

			cap = cap ? cap * 2 : 256;
			g = realloc(e, cap * sizeof(*e));
			if (!g) {
				free(e);
				free(text);
				return -ENOMEM;
			}
			e = g;
		}
		if (parse_line(pool, l, line, &e[n]))
			n++;
	}
	free(text);
	qsort(e, n, sizeof(*e), entry_cmp);
	free(m->e);
	m->e = e;
	m->n = n;
	m->size = st.st_size;
	return 0;
}

static const char *find(const struct sym_perfmap *m, uint64_t addr)
{
	const struct perfmap_entry *best = NULL;
	size_t lo = util_upper_bound_u64(m->e, m->n, sizeof(*m->e),
					 offsetof(struct perfmap_entry, start), addr);

	/* entries starting at or before addr, nearest first: the latest line holding it (a
	 * few back: one nested in a longer one, code compiled again over older code) */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct perfmap_entry *x = &m->e[i - 1];

		if (addr < x->end && (!best || x->line > best->line))
			best = x;
	}
	return best ? best->name : NULL;
}

const char *sym_perfmap__find(struct sym_perfmap *m, struct strpool *pool, uint64_t addr)
{
	const char *name;

	if (!m)
		return NULL;
	if (m->size < 0 && load(m, pool))
		return NULL;
	name = find(m, addr);
	/* a miss: the JIT may have written the code's line since the file was read */
	if (!name && !load(m, pool))
		name = find(m, addr);
	return name;
}
