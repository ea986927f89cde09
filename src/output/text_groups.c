/* The text report's summary of a profile's groups (struct prof_group: io's disks and
 * operations): one table, a row per group with its labels and the numbers that have a column,
 * then each group's histograms as log2 bars. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output/render.h"

#define CELL 48

static void heading(FILE *f, bool color, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void heading(FILE *f, bool color, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render__text_vheading(f, color, fmt, ap);
	va_end(ap);
}

/* The columns are those of the first group: its labels (but a note: under the row), then its
 * stats that have one. */
static uint32_t ncols(const struct prof_group *g)
{
	uint32_t n = prof_group__nnames(g);

	for (uint32_t i = 0; i < g->nstats; i++)
		n += g->stats[i].label != NULL;
	return n;
}

/* Column c of a group: its header and its cell (NULL: the group lacks it). */
static const char *cell(const struct prof_group *first, const struct prof_group *g, uint32_t c,
			char *hdr, char *buf)
{
	uint32_t i;

	if (c < prof_group__nnames(first)) {
		const char *k = first->labels[c].key, *v = prof_group__label(g, k);

		for (i = 0; k[i] && i + 1 < CELL; i++)
			hdr[i] = toupper((unsigned char)k[i]);
		hdr[i] = 0;
		return v ? v : "-";
	}
	c -= prof_group__nnames(first);
	for (i = 0; i < first->nstats; i++) {
		const struct prof_group_stat *st = &first->stats[i];

		if (!st->label || c--)
			continue;
		snprintf(hdr, CELL, "%s", st->label);
		for (uint32_t j = 0; j < g->nstats; j++) {
			const struct prof_group_stat *v = &g->stats[j];

			if (!strcmp(v->name, st->name))
				return render__amount(v->value, v->unit, buf, CELL);
		}
		return "-";
	}
	return "-";
}

static void group_name(const struct prof_group *g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < prof_group__nnames(g) && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", g->labels[i].value);
}

static void count_label(uint32_t b, uint32_t n, char *buf, size_t len)
{
	uint64_t min, max;

	if (!render__bucket(b, n, &min, &max))
		snprintf(buf, len, ">= %" PRIu64, min);
	else if (min == max)
		snprintf(buf, len, "%" PRIu64, min);
	else
		snprintf(buf, len, "[%" PRIu64 ", %" PRIu64 "]", min, max);
}

void render__hist_text(FILE *f, const char *indent, const char *title,
		       const struct prof_hist *hi)
{
	uint64_t b[66];
	uint32_t nb = prof_hist__log2(hi, b, 66);

	render__text_buckets(f, indent, title, b, nb,
			     !strcmp(hi->unit, "nanoseconds") ? render__life_bucket_label :
			     !strcmp(hi->unit, "bytes") ? render__size_bucket_label : count_label);
}

int render__text_groups(FILE *f, const struct profile *p, bool color, uint32_t top)
{
	const struct prof_group *first;
	uint32_t nc, nl, *w, shown;
	char more[64] = "";
	char hdr[CELL], buf[CELL], name[256];

	if (!p->ngroups && p->from_pprof) {
		/* a mode's summary has no place in pprof: said so, not left out without a word */
		static const char *const lost[][2] = {
			{ "io", "By device and op" },
			{ "lock", "By lock, class, process and address" },
			{ "offcpu", "Run-queue latency" },
		};

		for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
			if (strcmp(p->mode, lost[i][0]))
				continue;
			fputc('\n', f);
			heading(f, color, "%s: not in a saved profile", lost[i][1]);
		}
	}
	if (!p->ngroups)
		return 0;
	/* as every table of the report: the first --top (the modes order their groups, the
	 * most first); offcpu -a's run-queue table had a row and a histogram for each of
	 * 32,035 processes, 190,000 lines */
	shown = top && top < p->ngroups ? top : p->ngroups;
	if (shown < p->ngroups)
		snprintf(more, sizeof(more), " (the top %u of %u)", shown, p->ngroups);
	first = &p->groups[0];
	nl = prof_group__nnames(first);
	nc = ncols(first);
	w = calloc(nc + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (uint32_t c = 0; c < nc; c++) {
		for (uint32_t g = 0; g < shown; g++) {
			/* in columns: a label of UTF-8 is fewer than its bytes */
			uint32_t l = render__width(cell(first, &p->groups[g], c, hdr, buf));

			w[c] = l > w[c] ? l : w[c];
		}
		w[c] = (uint32_t)render__width(hdr) > w[c] ? (uint32_t)render__width(hdr) : w[c];
	}
	/* "By device and op": the labels name the rows */
	name[0] = 0;
	for (uint32_t i = 0, n = 0; i < nl && n < sizeof(name); i++)
		n += snprintf(name + n, sizeof(name) - n, "%s%s",
			      !i ? "" : i + 1 == nl ? " and " : ", ",
			      first->labels[i].key);
	fputc('\n', f);
	/* what the numbers are: the first histogram's name ("run-queue latency": offcpu's table
	 * read as its off-CPU time, which it is not) */
	if (first->nhists)
		heading(f, color, "By %s: %s%s", name[0] ? name : "group", first->hists[0].name,
			more);
	else
		heading(f, color, "By %s%s", name[0] ? name : "group", more);
	fputs(" ", f);
	for (uint32_t c = 0; c < nc; c++) {
		cell(first, first, c, hdr, buf);
		/* labels left-aligned, numbers right-aligned */
		fprintf(f, c < nl ? " %-*s" : " %*s", render__pad(hdr, w[c]), hdr);
	}
	fputc('\n', f);
	for (uint32_t g = 0; g < shown; g++) {
		fputs(" ", f);
		for (uint32_t c = 0; c < nc; c++) {
			const char *s = cell(first, &p->groups[g], c, hdr, buf);

			fprintf(f, c < nl ? " %-*s" : " %*s", render__pad(s, w[c]), s);
		}
		fputc('\n', f);
		if (prof_group__nnames(&p->groups[g]) < p->groups[g].nlabels)
			fprintf(f, "    note: %s\n", prof_group__label(&p->groups[g], "note"));
	}
	free(w);

	fputc('\n', f);
	heading(f, color, "Histograms%s", more);
	for (uint32_t g = 0; g < shown; g++) {
		const struct prof_group *gr = &p->groups[g];

		group_name(gr, name, sizeof(name));
		for (uint32_t h = 0; h < gr->nhists; h++) {
			char title[320];

			snprintf(title, sizeof(title), "%s, %s", name, gr->hists[h].name);
			render__hist_text(f, "  ", title, &gr->hists[h]);
		}
	}
	return ferror(f) ? -EIO : 0;
}
