/* LeakSanitizer-style suppressions: `leak:PATTERN` lines naming functions, source files or
 * modules whose leaks are known and not to be reported (nor to fail --fail-on-leak). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "util/util.h"

struct prof_suppressions {
	char **pat;
	uint32_t n;
};

/* '*' matches any run of characters; everything else itself. */
static bool glob(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p && *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

bool prof_suppressions__match(const char *pattern, const char *s)
{
	size_t len = strlen(pattern);
	bool head = pattern[0] == '^', tail = len > (size_t)head && pattern[len - 1] == '$';
	char *g;
	bool m;

	if (!s)
		return false;
	/* substring unless anchored: `*pattern*` with the anchors taken off */
	g = malloc(len + 3);
	if (!g)
		return false;
	snprintf(g, len + 3, "%s%.*s%s", head ? "" : "*", (int)(len - head - tail),
		 pattern + head, tail ? "" : "*");
	m = glob(g, s);
	free(g);
	return m;
}

void prof_suppressions__free(struct prof_suppressions *sp)
{
	if (!sp)
		return;
	for (uint32_t i = 0; i < sp->n; i++)
		free(sp->pat[i]);
	free(sp->pat);
	free(sp);
}

struct prof_suppressions *prof_suppressions__load(const char *path, char *why, size_t why_len)
{
	struct prof_suppressions *sp = calloc(1, sizeof(*sp));
	char *text = util_read_file(path, NULL), *line, *save = NULL;
	unsigned lineno = 0;
	int err = 0;

	if (!sp || !text) {
		err = errno ? errno : ENOMEM;
		if (why && !text)
			snprintf(why, why_len, "cannot read suppressions file %s: %s", path,
				 strerror(err));
		goto fail;
	}
	/* strtok_r would merge empty lines and miscount them */
	for (line = text; line; line = save) {
		char *end, *p;

		save = strchr(line, '\n');
		if (save)
			*save++ = 0;
		lineno++;
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = 0;
		if (!*line || *line == '#')
			continue;
		if (strncmp(line, "leak:", 5) || !line[5]) {
			err = EINVAL;
			if (why)
				snprintf(why, why_len, "%s:%u: expected 'leak:PATTERN', got '%.60s'",
					 path, lineno, line);
			goto fail;
		}
		if (!line[5 + strspn(line + 5, "*^$")]) {
			/* it would match every stack: surely not what was meant */
			err = EINVAL;
			if (why)
				snprintf(why, why_len, "%s:%u: '%.60s' matches every stack; name a "
					 "function, source file or module", path, lineno, line);
			goto fail;
		}
		if (sp->n % 16 == 0) {
			char **np = realloc(sp->pat, (sp->n + 16) * sizeof(*np));

			if (!np) {
				err = ENOMEM;
				goto fail;
			}
			sp->pat = np;
		}
		p = strdup(line + 5);
		if (!p) {
			err = ENOMEM;
			goto fail;
		}
		sp->pat[sp->n++] = p;
	}
	free(text);
	return sp;
fail:
	free(text);
	prof_suppressions__free(sp);
	errno = err;
	return NULL;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool matches(const struct prof_suppressions *sp, const char *s)
{
	for (uint32_t i = 0; s && i < sp->n; i++)
		if (prof_suppressions__match(sp->pat[i], s))
			return true;
	return false;
}

static bool sample_matches(const struct profile *p, const struct prof_suppressions *sp,
			   const struct prof_sample *s)
{
	/* a mem stack's leaf is the allocator function itself (malloc in libc): the same in
	 * every stack, it would make `leak:malloc` or `leak:libc.so.6` hide every leak */
	uint32_t first = p->mode && !strcmp(p->mode, "mem") && s->nlocs > 1 ? 1 : 0;

	for (uint32_t i = first; i < s->nlocs; i++) {
		const struct prof_location *loc = &p->locations[s->locs[i]];

		if (loc->mapping != PROF_NONE) {
			const char *file = p->mappings[loc->mapping].file;
			const char *base = file ? strrchr(file, '/') : NULL;

			if (matches(sp, file) || matches(sp, base ? base + 1 : NULL))
				return true;
		}
		for (uint32_t k = 0; k < loc->nlines; k++) {
			const struct prof_function *f = &p->functions[loc->lines[k].function];

			if (matches(sp, f->name) || matches(sp, f->system_name) ||
			    matches(sp, f->filename))
				return true;
		}
	}
	return false;
}

uint32_t profile__suppress(struct profile *p, const struct prof_suppressions *sp)
{
	uint32_t marked = 0;

	for (uint32_t i = 0; sp && i < p->nsamples; i++) {
		struct prof_sample *s = &p->samples[i];
		struct prof_process *proc;

		if (s->suppressed || !sample_matches(p, sp, s))
			continue;
		s->suppressed = true;
		marked++;
		proc = profile__find_process(p, s->pid);
		if (!proc)
			continue;
		for (int c = 0; c < PROF_LEAK__COUNT; c++) {
			int to = profile__leak_type(p, c, false), tb = profile__leak_type(p, c, true);

			/* never more than the scan counted (a pid seen again keeps its last scan) */
			if (to >= 0)
				proc->scan.suppressed_count[c] = min_u64(proc->scan.count[c],
					proc->scan.suppressed_count[c] + s->values[to]);
			if (tb >= 0)
				proc->scan.suppressed_bytes[c] = min_u64(proc->scan.bytes[c],
					proc->scan.suppressed_bytes[c] + s->values[tb]);
		}
	}
	return marked;
}
