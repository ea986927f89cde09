/* The CSV table (".csv"), documented in docs/OUTPUTS.md: one row per site, in the order of the
 * JSON report's "sites", for spreadsheets, pandas, sqlite's .import and the like.
 *
 * RFC 4180: records end in CRLF; a field holding a comma, a double quote, CR or LF is quoted and
 * its double quotes doubled. Names are written as they are (a comm or a C++ name may hold any of
 * those); only ';' in a frame name becomes ':', since ';' separates the frames of the stack. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"


static const char *const tail_columns[] = {
	"temporary_count", "outstanding_count", "outstanding_bytes", "min_age_ns", "max_age_ns",
};

/* Write a field, quoted only when it has to be, so plain numbers and names stay plain. */
static void put_field(FILE *f, const char *s)
{
	const char *c;

	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (c = s; *c; c++) {
		if (*c == '"')
			fputc('"', f);
		fputc(*c, f);
	}
	fputc('"', f);
}

/* Append to a growing string; false when out of memory. */
static bool append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 256;
		char *b;

		while (*len + n + 1 > c)
			c *= 2;
		b = realloc(*buf, c);
		if (!b)
			return false;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return true;
}

/*
 * The stack root first, frames joined by ';' and named as in the folded file: inline frames
 * expanded outermost first with "_[i]", kernel frames with "_[k]". Empty when the stack was not
 * recorded. Built in *buf (reused from row to row).
 */
static int stack_field(const struct profile *p, const struct prof_sample *s, char **buf,
		       size_t *cap)
{
	char name[4096];
	size_t len = 0;
	uint32_t i, j;

	if (!append(buf, &len, cap, "", 0))
		return -ENOMEM;
	for (i = s->nlocs; i-- > 0;) {
		const struct prof_location *loc = &p->locations[s->locs[i]];
		bool kernel = profile__location_is_kernel(p, loc);
		uint32_t nl = loc->nlines ? loc->nlines : 1;
		char *c;

		/* lines are innermost first: the root side is the last */
		for (j = nl; j-- > 0;) {
			const char *suffix = j + 1 < loc->nlines ? "_[i]" :
					     kernel ? "_[k]" : "";

			profile__frame_name(p, loc, j, name, sizeof(name));
			for (c = name; (c = strchr(c, ';')); c++)
				*c = ':';
			if ((len && !append(buf, &len, cap, ";", 1)) ||
			    !append(buf, &len, cap, name, strlen(name)) ||
			    !append(buf, &len, cap, suffix, strlen(suffix)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int csv_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	uint32_t *idx, n, i, t;
	char *stack = NULL;
	size_t cap = 0, c;
	bool leaks, alloc = render__is_alloc_profile(p);
	int err = 0;

	idx = render__sorted_samples(p, p->ntypes ? (int)p->default_type : 0, false, &n);
	if (!idx)
		return errno ? -errno : -ENOMEM;
	/* the leak classes are sample types, so columns of their own; which sites a suppression
	 * matched is not, and without it their lost blocks could not be told from real ones */
	leaks = profile__leak_type(p, PROF_LEAK_DEFINITE, false) >= 0;

	fputs("pid,comm", f);
	for (t = 0; t < p->ntypes; t++) {
		fputc(',', f);
		put_field(f, p->types[t].type);
	}
	/* temporaries and outstanding blocks are allocations' only */
	for (c = 0; alloc && c < sizeof(tail_columns) / sizeof(tail_columns[0]); c++)
		fprintf(f, ",%s", tail_columns[c]);
	fputs(leaks ? ",suppressed,stack\r\n" : ",stack\r\n", f);

	for (i = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];
		const struct prof_process *proc = profile__find_process(p, s->pid);

		err = stack_field(p, s, &stack, &cap);
		if (err)
			break;
		fprintf(f, "%" PRIu32 ",", s->pid);
		put_field(f, proc ? proc->comm : NULL);
		for (t = 0; t < p->ntypes; t++)
			fprintf(f, ",%" PRId64, s->values[t]);
		fputc(',', f);
		/* what a saved profile does not carry is empty, not a 0 that says "none":
		 * temporaries and ages; outstanding blocks but in mem's and kmem's (inuse) */
		if (alloc && p->from_pprof)
			fputc(',', f);
		else if (alloc)
			fprintf(f, "%" PRIu64 ",", s->temporary);
		if (alloc && !render__outstanding_known(p))
			fputs(",,", f);
		else if (alloc)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",", s->out.count, s->out.bytes);
		/* ages of nothing are no ages: empty rather than a misleading 0 */
		if (alloc && s->out.count && !p->from_pprof)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",", s->out.min_age_ns,
				s->out.max_age_ns);
		else if (alloc)
			fputs(",,", f);
		if (leaks)
			fputs(s->suppressed ? "1," : "0,", f);
		put_field(f, stack);
		fputs("\r\n", f);
	}
	if (!err && ferror(f))
		err = -EIO;
	free(stack);
	free(idx);
	return err;
}

const struct output_ops output_csv = {
	.name = "csv",
	.ext = ".csv",
	.write = csv_write,
};
