/* A run of several modes (ebprof profile: profile.h parts) in the renderers that show every
 * part in one document: text (findings, then each mode's own report), JSON (the findings and
 * each mode's own JSON report) and HTML (findings and a tab per mode, each tab the mode's own
 * page). The other formats are written once per part (session__write_outputs). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "output/assets.h"
#include "output/json_writer.h"
#include "output/output.h"
#include "output/render.h"

static const char *modes_list(const struct profile *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < p->nparts && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? ", " : "", p->parts[i]->mode);
	return buf;
}

/* ---- the processes across the parts ------------------------------------------------- */

/* The columns of the combined process table: a counter of a part's processes each. */
static const struct column {
	const char *mode, *stat, *label, *unit;
} columns[] = {
	{ "cpu", "cpu_ns", "CPU", "nanoseconds" },
	{ "offcpu", "offcpu_ns", "OFF-CPU", "nanoseconds" },
	{ "lock", "delay_ns", "LOCK WAIT", "nanoseconds" },
	{ "mem", "alloc_bytes", "ALLOCATED", "bytes" },
	{ "mem", "live_bytes", "LIVE", "bytes" },
	{ "io", "requests", "I/O REQS", "count" },
	{ "io", "io_bytes", "I/O BYTES", "bytes" },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

struct row {
	uint32_t pid;
	const char *comm;
	bool has[NCOLUMNS];
	uint64_t v[NCOLUMNS];
};

static const struct profile *part_of(const struct profile *p, const char *mode)
{
	for (uint32_t i = 0; i < p->nparts; i++)
		if (!strcmp(p->parts[i]->mode, mode))
			return p->parts[i];
	return NULL;
}

/* Every process of any part, one row each, the most CPU first (then by pid); *used: the
 * columns some part has. NULL with *n 0 when there is none (or no memory). */
static struct row *process_rows(const struct profile *p, uint32_t *n, bool used[NCOLUMNS])
{
	struct row *rows = NULL;
	uint32_t cap = 0;

	*n = 0;
	memset(used, 0, sizeof(bool) * NCOLUMNS);
	for (uint32_t k = 0; k < p->nparts; k++) {
		const struct profile *part = p->parts[k];

		for (uint32_t i = 0; i < part->nprocesses; i++) {
			const struct prof_process *pp = &part->processes[i];
			uint32_t r;

			for (r = 0; r < *n && rows[r].pid != pp->pid; r++)
				;
			if (r == *n) {
				if (*n == cap) {
					struct row *g = realloc(rows, sizeof(*rows) * (cap ? cap * 2 : 16));

					if (!g) {
						free(rows);
						*n = 0;
						return NULL;
					}
					rows = g;
					cap = cap ? cap * 2 : 16;
				}
				memset(&rows[r], 0, sizeof(rows[r]));
				rows[r].pid = pp->pid;
				(*n)++;
			}
			if (!rows[r].comm && pp->comm)
				rows[r].comm = pp->comm;
		}
	}
	for (size_t c = 0; c < NCOLUMNS; c++) {
		const struct profile *part = part_of(p, columns[c].mode);

		for (uint32_t r = 0; part && r < *n; r++) {
			const struct prof_process *pp = profile__find_process(part, rows[r].pid);

			if (pp && prof_process__stat(pp, columns[c].stat, &rows[r].v[c]))
				rows[r].has[c] = used[c] = true;
		}
	}
	/* the most CPU first, then the most allocated, then by pid */
	for (uint32_t i = 1; i < *n; i++) {
		struct row t = rows[i];
		uint32_t j = i;

		while (j > 0 && (rows[j - 1].v[0] < t.v[0] ||
				 (rows[j - 1].v[0] == t.v[0] && (rows[j - 1].v[3] < t.v[3] ||
				  (rows[j - 1].v[3] == t.v[3] && rows[j - 1].pid > t.pid))))) {
			rows[j] = rows[j - 1];
			j--;
		}
		rows[j] = t;
	}
	return rows;
}

static const char *cell(const struct column *c, uint64_t v, char *buf, size_t len)
{
	if (!strcmp(c->unit, "nanoseconds"))
		return render__duration(v, buf, len);
	if (!strcmp(c->unit, "bytes"))
		return render__bytes(v, buf, len);
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* ---- text --------------------------------------------------------------------------- */

static void text_processes(FILE *f, const struct profile *p, const struct output_opts *o)
{
	bool used[NCOLUMNS];
	uint32_t n, shown;
	struct row *rows = process_rows(p, &n, used);
	char b[32];

	fputs("\nProcesses (every mode's numbers)\n", f);
	if (!n) {
		fputs("  none\n", f);
		return;
	}
	shown = o && o->top && o->top < n ? o->top : n;
	fprintf(f, "  %8s  %-16s", "PID", "NAME");
	for (size_t c = 0; c < NCOLUMNS; c++)
		if (used[c])
			fprintf(f, " %10s", columns[c].label);
	fputc('\n', f);
	for (uint32_t r = 0; r < shown; r++) {
		const char *comm = rows[r].comm ? rows[r].comm : "?";

		/* padded in columns: a name of UTF-8 is fewer than its bytes */
		fprintf(f, "  %8u  %-*s", rows[r].pid, render__pad(comm, 16), comm);
		for (size_t c = 0; c < NCOLUMNS; c++)
			if (used[c])
				fprintf(f, " %10s", rows[r].has[c] ? cell(&columns[c], rows[r].v[c], b,
									     sizeof(b)) : "-");
		fputc('\n', f);
	}
	if (shown < n)
		fprintf(f, "  ... %u more (--top 0 shows all)\n", n - shown);
	free(rows);
}

int render__set_text(const struct profile *p, const struct output_opts *o, FILE *f)
{
	char d[32], modes[128];
	int err = 0;

	fprintf(f, "ebprof profile%s%s\n", p->command ? ": " : "", p->command ? p->command : "");
	fprintf(f, "  Modes:     %s\n", modes_list(p, modes, sizeof(modes)));
	fprintf(f, "  Duration:  %s\n", render__run_duration(p, d, sizeof(d)));
	fputs("\nFindings (thresholds: docs/FINDINGS.md)\n", f);
	if (!p->nfindings)
		fputs("  none: no number this run measured crossed a threshold\n", f);
	for (uint32_t i = 0; i < p->nfindings; i++) {
		const struct prof_finding *fi = &p->findings[i];

		fprintf(f, "  %u. [%s] %s\n", i + 1, fi->mode, fi->fact);
		fprintf(f, "     threshold: %s\n", fi->threshold);
		fprintf(f, "     next: %s\n", fi->action);
	}
	text_processes(f, p, o);
	for (uint32_t i = 0; i < p->nparts && !err; i++) {
		fprintf(f, "\n======== %s ========\n\n", p->parts[i]->mode);
		err = output_text.write(p->parts[i], o, f);
	}
	return err ? err : ferror(f) ? -EIO : 0;
}

/* ---- JSON --------------------------------------------------------------------------- */

static void findings_json(struct json_writer *w, const struct profile *p)
{
	jsonw_name(w, "findings");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < p->nfindings; i++) {
		const struct prof_finding *fi = &p->findings[i];

		jsonw_start_object(w);
		jsonw_string_field(w, "mode", fi->mode);
		jsonw_string_field(w, "kind", fi->kind);
		jsonw_string_field(w, "subject", fi->subject);
		jsonw_string_field(w, "fact", fi->fact);
		jsonw_string_field(w, "threshold", fi->threshold);
		jsonw_string_field(w, "action", fi->action);
		/* rounded to a whole number of its unit (percent, ns, bytes/s) */
		jsonw_int_field(w, "value", (int64_t)(fi->value + 0.5));
		jsonw_string_field(w, "unit", fi->unit);
		if (fi->pid)
			jsonw_uint_field(w, "pid", fi->pid);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

int render__set_json(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct json_writer *w = jsonw__new(f, true);
	int err;

	if (!w)
		return -ENOMEM;
	/* the set's own fields, then "parts": each mode's own JSON report, as `ebprof MODE`
	 * writes it (docs/JSON.md) */
	jsonw_start_object(w);
	jsonw_string_field(w, "mode", p->mode);
	jsonw_string_field(w, "command", p->command);
	jsonw_string_field(w, "kernel", p->kernel);
	jsonw_int_field(w, "time_nanos", p->time_nanos);
	jsonw_int_field(w, "duration_ns", p->duration_nanos);
	findings_json(w, p);
	err = jsonw__error(w);
	jsonw__free(w);
	if (err)
		return err;
	fputs(",\n  \"parts\": [\n", f);
	for (uint32_t i = 0; i < p->nparts && !err; i++) {
		if (i)
			fputs(",\n", f);
		err = output_json.write(p->parts[i], o, f);
	}
	fputs("]\n}\n", f);
	return err ? err : ferror(f) ? -EIO : 0;
}

/* ---- HTML --------------------------------------------------------------------------- */

/* Text in an element or a double-quoted attribute. */
static void html_esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(s[i], f);
		}
	}
}

static void esc(FILE *f, const char *s)
{
	if (s)
		html_esc(f, s, strlen(s));
}

/* One chart of a part's series `name` (one line per process), drawn here: the page needs no
 * script for it. x: the run's time; y: 0 to the largest value. */
#define TL_W 1200
#define TL_H 90
#define TL_PAD 70

static const char *amount(int64_t v, const char *unit, char *buf, size_t len)
{
	if (!strcmp(unit, "bytes"))
		return render__bytes(v < 0 ? 0 : (uint64_t)v, buf, len);
	snprintf(buf, len, "%" PRId64 " %s", v, unit);
	return buf;
}

static void chart(FILE *f, const struct profile *set, const struct profile *part,
		  const struct prof_series *first)
{
	static const char *const colours[] = { "#1f6fb2", "#c2571a", "#2e8b57", "#8a3b12",
					       "#6a3d9a" };
	double span = set->duration_nanos > 0 ? (double)set->duration_nanos : 1;
	int64_t max = 0;
	uint32_t lines = 0;
	char a[32], d[32];

	for (uint32_t i = 0; i < part->nseries; i++)
		for (uint32_t j = 0; !strcmp(part->series[i].name, first->name) &&
				     j < part->series[i].n; j++)
			if (part->series[i].v[j] > max)
				max = part->series[i].v[j];
	fprintf(f, "<figure class=\"tl\" data-mode=\"%s\" data-series=\"%s\">"
		"<figcaption>%s: %s <span class=\"none\">(highest %s)</span></figcaption>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n", part->mode, first->name, part->mode, first->name,
		amount(max, first->unit, a, sizeof(a)), TL_W, TL_H + 16, TL_W, TL_H + 16);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n",
		TL_PAD, TL_H, TL_W, TL_H);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text>"
		"<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
		TL_PAD, TL_H + 13, TL_W, TL_H + 13,
		render__duration((uint64_t)set->duration_nanos, d, sizeof(d)));
	for (uint32_t i = 0; i < part->nseries && lines < 5; i++) {
		const struct prof_series *s = &part->series[i];

		if (strcmp(s->name, first->name))
			continue;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
			"data-pid=\"%u\" points=\"", colours[lines++], s->pid);
		for (uint32_t j = 0; j < s->n; j++)
			fprintf(f, "%s%.1f,%.1f", j ? " " : "",
				TL_PAD + (TL_W - TL_PAD) * (double)s->t_ns[j] / span,
				TL_H - (max ? (TL_H - 4) * (double)s->v[j] / (double)max : 0));
		fputs("\"/>\n", f);
	}
	fputs("</svg></figure>\n", f);
}

/* Every part's series over the run, one chart each: CPU use, I/O rate, live bytes. */
static void timeline(FILE *f, const struct profile *p)
{
	bool any = false;

	fputs("<h2 id=\"timeline\">Timeline</h2>\n", f);
	for (uint32_t k = 0; k < p->nparts; k++) {
		const struct profile *part = p->parts[k];

		for (uint32_t i = 0; i < part->nseries; i++) {
			uint32_t j;

			for (j = 0; j < i && strcmp(part->series[j].name, part->series[i].name); j++)
				;
			if (j < i)
				continue;
			chart(f, p, part, &part->series[i]);
			any = true;
		}
	}
	if (!any)
		fputs("<p class=\"none\">Nothing was sampled over time (a run shorter than a "
		      "second).</p>\n", f);
}

/* Every process with every mode's numbers, one table. */
static void html_processes(FILE *f, const struct profile *p)
{
	bool used[NCOLUMNS];
	uint32_t n;
	struct row *rows = process_rows(p, &n, used);
	char b[32];

	fputs("<h2 id=\"processes\">Processes</h2>\n", f);
	if (!n) {
		fputs("<p class=\"none\">No process was seen.</p>\n", f);
		return;
	}
	fputs("<table class=\"data\" id=\"processes-table\">\n<thead><tr><th>PID</th><th>Name"
	      "</th>", f);
	for (size_t c = 0; c < NCOLUMNS; c++)
		if (used[c])
			fprintf(f, "<th class=\"num\" title=\"%s: %s\">%s</th>", columns[c].mode,
				columns[c].stat, columns[c].label);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (uint32_t r = 0; r < n; r++) {
		fprintf(f, "<tr><td class=\"num\">%u</td><td>", rows[r].pid);
		esc(f, rows[r].comm ? rows[r].comm : "?");
		fputs("</td>", f);
		for (size_t c = 0; c < NCOLUMNS; c++) {
			if (!used[c])
				continue;
			if (rows[r].has[c])
				fprintf(f, "<td class=\"num\" data-v=\"%" PRIu64 "\">%s</td>",
					rows[r].v[c], cell(&columns[c], rows[r].v[c], b, sizeof(b)));
			else
				fputs("<td class=\"num\">-</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(rows);
}

/* Each part's own page, whole, as its iframe's srcdoc. */
static int part_frame(FILE *f, const struct profile *part, const struct output_opts *o,
		      uint32_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -errno;
	err = output_html.write(part, o, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (!err) {
		fprintf(f, "<iframe class=\"part\" id=\"part-%u\" title=\"", i);
		esc(f, part->mode);
		fputs("\" srcdoc=\"", f);
		html_esc(f, buf, len);
		fputs("\"></iframe>\n", f);
	}
	free(buf);
	return err;
}

int render__set_html(const struct profile *p, const struct output_opts *o, FILE *f)
{
	char d[32], modes[128], when[64] = "";
	time_t t = (time_t)(p->time_nanos / 1000000000);
	struct tm tm;
	int err = 0;

	if (p->time_nanos && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>ebprof profile", f);
	if (p->command) {
		fputs(": ", f);
		esc(f, p->command);
	}
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<div class=\"page\">\n",
		asset_profile_css);
	fputs("<h1>ebprof <span class=\"mode\">profile</span></h1>\n<table class=\"meta\">\n", f);
	if (p->command) {
		fputs("<tr><th>Command</th><td><code>", f);
		esc(f, p->command);
		fputs("</code></td></tr>\n", f);
	}
	fputs("<tr><th>Modes</th><td>", f);
	esc(f, modes_list(p, modes, sizeof(modes)));
	fprintf(f, "</td></tr>\n<tr><th>Started</th><td>%s</td></tr>\n", when);
	fprintf(f, "<tr><th>Duration</th><td>%s</td></tr>\n",
		render__duration((uint64_t)p->duration_nanos, d, sizeof(d)));
	if (p->kernel) {
		fputs("<tr><th>Kernel</th><td>", f);
		esc(f, p->kernel);
		fputs("</td></tr>\n", f);
	}
	if (p->options) {
		fputs("<tr><th>Options</th><td><code>", f);
		esc(f, p->options);
		fputs("</code></td></tr>\n", f);
	}
	fputs("</table>\n<h2 id=\"findings\">Findings</h2>\n", f);
	if (!p->nfindings)
		fputs("<p class=\"none\">None: no number this run measured crossed a threshold "
		      "(docs/FINDINGS.md).</p>\n", f);
	else
		fputs("<ol class=\"findings\">\n", f);
	for (uint32_t i = 0; i < p->nfindings; i++) {
		const struct prof_finding *fi = &p->findings[i];
		uint32_t part = 0;

		while (part < p->nparts && strcmp(p->parts[part]->mode, fi->mode))
			part++;
		fprintf(f, "<li data-kind=\"%s\"><a class=\"tag\" href=\"#part-%u\" "
			"data-part=\"%u\">", fi->kind, part, part);
		esc(f, fi->mode);
		fputs("</a> <span class=\"fact\">", f);
		esc(f, fi->fact);
		fputs("</span><span class=\"why\">threshold: ", f);
		esc(f, fi->threshold);
		fputs("</span><span class=\"next\">next: ", f);
		esc(f, fi->action);
		fputs("</span></li>\n", f);
	}
	if (p->nfindings)
		fputs("</ol>\n", f);
	html_processes(f, p);
	timeline(f, p);
	fputs("<div class=\"tabs\" role=\"tablist\">\n", f);
	for (uint32_t i = 0; i < p->nparts; i++) {
		fprintf(f, "<button type=\"button\" role=\"tab\" id=\"tab-%u\">", i);
		esc(f, p->parts[i]->mode);
		fputs("</button>\n", f);
	}
	fputs("</div>\n", f);
	for (uint32_t i = 0; i < p->nparts && !err; i++)
		err = part_frame(f, p->parts[i], o, i);
	fprintf(f, "</div>\n<script>\n%s</script>\n</body>\n</html>\n", asset_profile_js);
	return err ? err : ferror(f) ? -EIO : 0;
}
