/* HTML report (".html"): one self-contained page to open in a browser, no network needed. It
 * holds what the text report holds, as tables that sort and filter, plus what a terminal cannot
 * show: the series sampled during the run as a chart, and the flame graph of every sample type.
 *
 * The page is static HTML for everything a reader checks numbers in (run header, processes and
 * calls, top sites, outstanding allocations, drops, notes), and one JSON document in a script
 * element for what the script draws or opens on demand: the stacks of the rows, size and
 * lifetime histograms, temporary counts and the series. The flame graphs are the SVGs of the
 * .svg renderer, rendered in memory and kept verbatim (end tags' slashes escaped) in script
 * elements; the page's script shows the selected one in an iframe, so there is one flame graph
 * implementation.
 *
 * Limits that keep a 200,000-site profile to about 10 MB: the tables show the first SITES_MAX
 * sites (and say so), only their stacks go into the JSON, the series are thinned to at most
 * two points per SERIES_BUCKETS bucket, and flame graphs past FLAME_BUDGET bytes are left out
 * (and say so); the SVG renderer itself merges frames narrower than 0.1%.
 *
 * Everything from the profile is escaped for where it goes: HTML text and attributes as
 * entities (invalid UTF-8 as U+FFFD), the JSON with '<', '>', '&', U+2028 and U+2029 as \u
 * escapes, so no string can end a script element or break the script that parses it.
 */
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
#include "util/util.h"

#define SITES_MAX 5000			/* rows of the sites, outstanding, summary, processes tables */
#define PAGE_ROWS 500			/* of them shown until the reader asks for all */
#define FLAME_BUDGET (12 * 1000 * 1000)	/* bytes of embedded flame graph SVGs */
#define SERIES_BUCKETS 1000		/* a series keeps its min and max per bucket */
#define NONE UINT32_MAX
#define PEAK_SITES 10			/* sites listed at each process's peak */

struct strtab {
	char **s;
	uint32_t n, cap;
	uint32_t *hash;		/* open addressing, index + 1 (0 = free) */
	uint32_t hcap;
};

struct html {
	const struct profile *p;
	const struct output_opts *o;
	FILE *f;
	int alloc_space, inuse_objects;	/* memory types, -1 when absent */
	int count_type;		/* the type counted in allocations (render__count_type) */
	bool temps;		/* the sites table has a Temporary column */
	bool growth;		/* ... and a Growth column */
	/* a comparison (`ebprof diff`): its stacks are the two profiles', of no process and no
	 * run; its first type, max(base, new), only weighs the differential flame graph */
	bool diff;
	/* off-CPU time (offcpu, cpu --offcpu): its rows are named past the scheduler's frames */
	bool offcpu;
	uint8_t *want;		/* per sample: its stack and histogram go into the data */
	uint32_t *loc_id;	/* per profile location: its index in the data's locs, or NONE */
	uint32_t *locs;		/* profile location of each data loc */
	uint32_t nlocs;
	struct strtab strs;
};

/* ---- escaping --------------------------------------------------------------------------- */

/* Length of the valid UTF-8 character at s (n bytes left), 0 if it is not one: names are bytes
 * (a comm is cut at 15 bytes, maybe inside a character). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t l, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		l = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		l = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		l = 4, c = s[0] & 0x07;
	else
		return 0;
	if (l > n)
		return 0;
	for (i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((l == 3 && c < 0x800) || (l == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	return l;
}

/* U+2028 and U+2029 end a line in JavaScript before ES2019: never written raw. */
static bool is_js_newline(const unsigned char *s, size_t l)
{
	return l == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9);
}

/* s as HTML text or attribute value (both quotes escaped). */
static void esc(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len, i = 0, l;

	if (!s)
		return;
	len = strlen(s);
	while (i < len) {
		l = utf8_len(u + i, len - i);
		if (!l) {
			fputs("\xef\xbf\xbd", f);
			l = 1;
		} else if (is_js_newline(u + i, l)) {
			fprintf(f, "&#x%s;", u[i + 2] == 0xa8 ? "2028" : "2029");
		} else if (l > 1) {
			fwrite(u + i, 1, l, f);
		} else {
			switch (u[i]) {
			case '&':
				fputs("&amp;", f);
				break;
			case '<':
				fputs("&lt;", f);
				break;
			case '>':
				fputs("&gt;", f);
				break;
			case '"':
				fputs("&quot;", f);
				break;
			case '\'':
				fputs("&#39;", f);
				break;
			default:
				/* control characters are not allowed in HTML text */
				fputc(u[i] < 0x20 || u[i] == 0x7f ? ' ' : u[i], f);
			}
		}
		i += l;
	}
}

/*
 * A document made to be read by a script (JSON, or SVG markup the script unescapes), put
 * inside a script element: nothing in it may end the element or open a comment that keeps the
 * end tag from ending it. For JSON (json true), '<', '>' and '&' appear only inside strings,
 * where \u escapes mean the same. For SVG, "</" becomes "<\/" and "<!--" becomes "<\!--",
 * which the page's script turns back; markup has no other '<' (text is escaped as &lt;).
 */
static void script_data(FILE *f, const char *s, size_t len, bool json)
{
	size_t i, run = 0;

	for (i = 0; i < len; i++) {
		const unsigned char c = s[i];
		const char *rep = NULL;
		size_t skip = 0;

		if (json && (c == '<' || c == '>' || c == '&')) {
			rep = c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026";
		} else if (!json && c == '<' && i + 1 < len && s[i + 1] == '/') {
			rep = "<\\/";
			skip = 1;
		} else if (!json && c == '<' && i + 3 < len && !memcmp(s + i, "<!--", 4)) {
			rep = "<\\!--";
			skip = 3;
		} else if (c == 0xe2 && is_js_newline((const unsigned char *)s + i, len - i < 3 ?
						      0 : 3)) {
			rep = json ? (s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029")
				   : (s[i + 2] == '\xa8' ? "&#x2028;" : "&#x2029;");
			skip = 2;
		}
		if (!rep)
			continue;
		fwrite(s + run, 1, i - run, f);
		fputs(rep, f);
		i += skip;
		run = i + 1;
	}
	fwrite(s + run, 1, len - run, f);
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* A table cell with a value in its unit: human units and the exact number; data-v sorts. */
static void value_cell(FILE *f, int64_t v, const char *unit)
{
	char buf[64];

	fprintf(f, "<td class=\"num%s\" data-v=\"%" PRId64 "\">", v ? "" : " zero", v);
	if (unit && strcmp(unit, "bytes") == 0 && v >= 1024)
		fprintf(f, "%s<span class=\"x\">%" PRId64 "</span>",
			render__bytes((uint64_t)v, buf, sizeof(buf)), v);
	else if (unit && strcmp(unit, "bytes") == 0)
		fprintf(f, "%" PRId64 " B", v);
	else if (unit && strcmp(unit, "nanoseconds") == 0 && v >= 1000)
		fprintf(f, "%s<span class=\"x\">%" PRId64 " ns</span>",
			render__duration((uint64_t)v, buf, sizeof(buf)), v);
	else if (unit && strcmp(unit, "nanoseconds") == 0)
		fprintf(f, "%" PRId64 " ns", v);
	else
		fprintf(f, "%" PRId64, v);
	fputs("</td>", f);
}

static void u64_cell(FILE *f, uint64_t v, const char *unit)
{
	value_cell(f, v > INT64_MAX ? INT64_MAX : (int64_t)v, unit);
}

/* "3.1 MiB (3276800 bytes)" in text. */
static void amount(FILE *f, int64_t v, const char *unit)
{
	char buf[64];

	if (strcmp(unit, "bytes") == 0 && v >= 1024) {
		fprintf(f, "%s (%" PRId64 " bytes)", render__bytes(v, buf, sizeof(buf)), v);
	} else if (strcmp(unit, "bytes") == 0) {
		fprintf(f, "%" PRId64 " B", v);
	} else if (strcmp(unit, "nanoseconds") == 0 && v >= 0) {
		fprintf(f, "%s (%" PRId64 " ns)", render__duration(v, buf, sizeof(buf)), v);
	} else {
		fprintf(f, "%" PRId64, v);
		if (strcmp(unit, "count")) {
			fputc(' ', f);
			esc(f, unit);
		}
	}
}

/* ---- the page's head and run header ----------------------------------------------------- */

static const char *comm_of(const struct profile *p, uint32_t pid)
{
	const struct prof_process *proc = profile__find_process(p, pid);

	return proc && proc->comm ? proc->comm : NULL;
}

/* Drops that left events out of the numbers. The unwinder's (unwind_*) only cut stacks
 * short: each such stack ends in [truncated] and its event is counted. */
static bool any_drops(const struct profile *p, bool losses)
{
	uint32_t i;

	for (i = 0; i < p->ndrops; i++) {
		if (p->drops[i].value && losses == !!strncmp(p->drops[i].key, "unwind_", 7))
			return true;
	}
	return false;
}

static bool tracks_outstanding(const struct html *h)
{
	uint32_t i;

	/* another tool's inuse values are its snapshot's (a Go heap profile), not what was
	 * left at an exit */
	if (h->inuse_objects >= 0 && strcmp(h->p->mode, "pprof"))
		return true;
	for (i = 0; i < h->p->nsamples; i++) {
		if (h->p->samples[i].out.count)
			return true;
	}
	return false;
}

/* Did the run scan any process for leaks (and keep the classes per site)? A pprof read back
 * has the types but no scans, and no suppressions: its lost blocks are left to the flame
 * graphs. */
static bool has_leaks(const struct html *h)
{
	uint32_t i;

	if (profile__leak_type(h->p, PROF_LEAK_DEFINITE, true) < 0)
		return false;
	for (i = 0; i < h->p->nprocesses; i++) {
		if (h->p->processes[i].scan.done)
			return true;
	}
	return false;
}

static void write_head(const struct html *h)
{
	const struct profile *p = h->p;
	FILE *f = h->f;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"ebprof\">\n<title>ebprof ", f);
	esc(f, p->mode);
	fputs(" report", f);
	if (p->command) {
		fputs(": ", f);
		esc(f, p->command);
	}
	/* before the body is laid out: the rows past a table's first page start hidden */
	fprintf(f, "</title>\n<style>\n%s</style>\n<script>document.documentElement.className "
		"= 'js';</script>\n</head>\n<body>\n<div class=\"page\">\n", asset_report_css);
}

/* What a row of the stack tables is: an allocation site in an allocation profile, a stack in
 * any other (cpu time, events). */
static const char *row_word(const struct html *h)
{
	return h->alloc_space >= 0 ? "site" : "stack";
}

/* A comparison's header after what it compares: its stacks and the two totals with their
 * change (the runs' own details are in the notes: "base FILE: MODE profile of CMD"). */
static void diff_totals(const struct html *h)
{
	const struct profile *p = h->p;
	const char *unit = p->types[PROF_DIFF_BASE].unit;
	int64_t base = 0, new = 0;
	FILE *f = h->f;

	for (uint32_t j = 0; j < p->nsamples; j++) {
		base = prof_add(base, p->samples[j].values[PROF_DIFF_BASE]);
		new = prof_add(new, p->samples[j].values[PROF_DIFF_NEW]);
	}
	fprintf(f, "<tr><th>Stacks</th><td>%" PRIu32 " distinct stack%s in the two profiles"
		"</td></tr>\n<tr><th>Compared type</th><td>", p->nsamples,
		p->nsamples == 1 ? "" : "s");
	esc(f, p->types[PROF_DIFF_MAX].type);
	fputs(" (", f);
	esc(f, unit);
	fputs(")</td></tr>\n<tr><th>Total base</th><td>", f);
	amount(f, base, unit);
	fputs("</td></tr>\n<tr><th>Total new</th><td>", f);
	amount(f, new, unit);
	fputs("</td></tr>\n<tr><th>Change</th><td>", f);
	fputc(new >= base ? '+' : '-', f);
	amount(f, new >= base ? prof_sub(new, base) : prof_sub(base, new), unit);
	if (base)
		fprintf(f, " (%+.1f%%)", 100.0 * ((double)new - (double)base) / (double)base);
	fputs("</td></tr>\n</table></div>\n", f);
	if (any_drops(p, true))
		fputs("<p class=\"drops-bad\">Some events were dropped in the profiles compared: "
		      "the numbers below are incomplete. See <a href=\"#drops\">Drops</a>.</p>\n", f);
}

static void write_header(const struct html *h)
{
	const struct profile *p = h->p;
	FILE *f = h->f;
	char buf[64];
	uint32_t i, j;

	fputs("<h1 id=\"top\">ebprof <span class=\"mode\">", f);
	esc(f, p->mode);
	fputs("</span> report</h1>\n<div class=\"nav\">", f);
	if (!h->diff)
		fputs("<a href=\"#processes\">Processes</a>", f);
	if (p->ngroups)
		fputs("<a href=\"#groups\">Summary</a>", f);
	if (!h->diff)
		fputs("<a href=\"#timeline\">Over time</a>", f);
	fprintf(f, "<a href=\"#sites\">Top %s</a><a href=\"#flame\">Flame graph</a>",
		h->diff ? "changes" : h->alloc_space >= 0 ? "sites" : "stacks");
	if (tracks_outstanding(h))
		fputs("<a href=\"#outstanding\">Outstanding</a>", f);
	if (has_leaks(h))
		fputs("<a href=\"#leaks\">Leaks</a>", f);
	fputs("<a href=\"#drops\">Drops</a>", f);
	if (p->nnotes)
		fputs("<a href=\"#notes\">Notes</a>", f);
	fputs("</div>\n<div class=\"card\"><table class=\"meta\">\n", f);

	fputs("<tr><th>Mode</th><td>", f);
	esc(f, p->mode);
	fprintf(f, "</td></tr>\n<tr><th>%s</th><td>", h->diff ? "Compared" : "Command");
	if (p->command) {
		fputs("<code>", f);
		esc(f, p->command);
		fputs("</code>", f);
	} else if (!strcmp(p->mode, "pprof")) {
		fputs("<span class=\"empty\">not recorded (a profile of another tool)</span>", f);
	} else {
		fputs("<span class=\"empty\">none (attached to running processes)</span>", f);
	}
	fputs("</td></tr>\n", f);
	if (h->diff) {
		diff_totals(h);
		return;
	}
	if (p->time_nanos > 0) {
		time_t sec = p->time_nanos / 1000000000;
		struct tm tm;

		/* UTC, as the text report: reports compare across machines */
		if (gmtime_r(&sec, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
			fprintf(f, "<tr><th>Started</th><td>%s</td></tr>\n", buf);
	}
	fprintf(f, "<tr><th>Duration</th><td>%s", render__run_duration(p, buf, sizeof(buf)));
	if (p->duration_nanos > 0)
		fprintf(f, " <span class=\"note\">(%" PRId64 " ns)</span>", p->duration_nanos);
	fputs("</td></tr>\n", f);
	fputs("<tr><th>Kernel</th><td>", f);
	esc(f, p->kernel ? p->kernel : "unknown");
	fputs("</td></tr>\n", f);
	for (i = 0; i < p->ninfo; i++) {
		fputs("<tr><th>", f);
		esc(f, p->info[i].key);
		fputs("</th><td>", f);
		esc(f, p->info[i].value);
		fputs("</td></tr>\n", f);
	}
	fputs("<tr><th>ebprof options</th><td>", f);
	if (p->options) {
		fputs("<code>", f);
		esc(f, p->options);
		fputs("</code>", f);
	} else {
		fputs("<span class=\"empty\">not recorded</span>", f);
	}
	fprintf(f, "</td></tr>\n<tr><th>%s</th><td>%" PRIu32 " distinct stack%s in %" PRIu32
		" process%s</td></tr>\n", h->alloc_space >= 0 ? "Sites" : "Stacks", p->nsamples,
		p->nsamples == 1 ? "" : "s",
		p->nprocesses, p->nprocesses == 1 ? "" : "es");
	for (i = 0; i < p->ntypes; i++) {
		int64_t sum = 0;

		for (j = 0; j < p->nsamples; j++)
			sum = prof_add(sum, p->samples[j].values[i]);
		fputs("<tr><th>Total ", f);
		esc(f, p->types[i].type);
		fputs("</th><td>", f);
		amount(f, sum, p->types[i].unit);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
	if (any_drops(p, true))
		fputs("<p class=\"drops-bad\">Some events were dropped: the numbers below are "
		      "incomplete. See <a href=\"#drops\">Drops</a>.</p>\n", f);
	else if (any_drops(p, false))
		fputs("<p class=\"drops-bad\">Some stacks are incomplete: they end in "
		      "[truncated], their events counted. See <a href=\"#drops\">Drops</a>.</p>\n",
		      f);
}

/* ---- processes -------------------------------------------------------------------------- */

struct stat_col {
	const char *key, *header;
	bool bytes;
};

/* The text report's columns, in its order; other stats follow in order of appearance. */
static const struct stat_col stat_cols[] = {
	{ "alloc_count", "Allocations", false },
	{ "alloc_bytes", "Allocated", true },
	{ "free_count", "Frees", false },
	{ "free_bytes", "Freed", true },
	{ "live_count", "Live", false },
	{ "live_bytes", "Live bytes", true },
	{ "peak_live_bytes", "Peak live", true },
	{ "max_request", "Largest request", true },
	{ "unknown_frees", "Unknown frees", false },
	{ "inherited_frees", "Inherited frees", false },	/* of the unknown ones */
	{ "inherited_bytes", "Inherited bytes", true },
};

#define NSTAT_COLS (sizeof(stat_cols) / sizeof(stat_cols[0]))

/* Keys of the stats (or calls) of all processes, known ones first, each once. With nonzero,
 * only keys that are non-zero somewhere. Returns a malloc'd array or NULL (and *n 0). */
static const char **collect_keys(const struct profile *p, bool calls, bool nonzero, uint32_t *n)
{
	uint32_t cap = NSTAT_COLS, i, j, k;
	const char **keys = malloc(sizeof(*keys) * cap);

	*n = 0;
	if (!keys)
		return NULL;
	for (i = 0; !calls && i < NSTAT_COLS; i++) {
		for (j = 0; j < p->nprocesses; j++) {
			if (prof_process__stat(&p->processes[j], stat_cols[i].key, NULL)) {
				keys[(*n)++] = stat_cols[i].key;
				break;
			}
		}
	}
	for (j = 0; j < p->nprocesses; j++) {
		const struct prof_process *proc = &p->processes[j];
		const struct prof_kv *kv = calls ? proc->calls : proc->stats;
		uint32_t nkv = calls ? proc->ncalls : proc->nstats;

		for (i = 0; i < nkv; i++) {
			if (nonzero && !kv[i].value)
				continue;
			for (k = 0; k < *n && strcmp(keys[k], kv[i].key); k++)
				;
			if (k < *n)
				continue;
			if (*n == cap) {
				const char **a = realloc(keys, sizeof(*keys) * cap * 2);

				if (!a) {
					free(keys);
					*n = 0;
					return NULL;
				}
				keys = a;
				cap *= 2;
			}
			keys[(*n)++] = kv[i].key;
		}
	}
	return keys;
}

static const struct stat_col *known_stat(const char *key)
{
	size_t i;

	for (i = 0; i < NSTAT_COLS; i++) {
		if (strcmp(stat_cols[i].key, key) == 0)
			return &stat_cols[i];
	}
	return NULL;
}

static void proc_cells(FILE *f, const struct prof_process *proc)
{
	fprintf(f, "<td class=\"num\" data-v=\"%" PRIu32 "\">%" PRIu32 "</td><td>", proc->pid,
		proc->pid);
	esc(f, proc->comm ? proc->comm : "?");
	fputs("</td>", f);
}

/* Any process with a known parent (a process tree): the table gets PPID and namespace PIDs. */
static bool have_ppids(const struct profile *p)
{
	for (uint32_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].ppid || p->processes[i].ns_pid)
			return true;
	return false;
}

static void site_cell(const struct html *h, const struct prof_sample *s);

/* "Peak 7.8 MiB (8192000 bytes) at 22.2 ms", then the sites of the snapshot nearest it. */
static void write_process_peak(const struct html *h, const struct prof_process *proc)
{
	const struct prof_peak *pk = &proc->peak;
	FILE *f = h->f;
	char b1[32], b2[32];
	uint32_t i;

	if (!pk->known)
		return;
	fprintf(f, "<br>Peak live %s (%" PRIu64 " bytes)", render__bytes(pk->bytes, b1, sizeof(b1)),
		pk->bytes);
	if (pk->t_ns >= 0)
		fprintf(f, " at %s", render__duration(pk->t_ns, b2, sizeof(b2)));
	if (!pk->bytes || pk->snapshot_t_ns < 0) {
		fputs(".", f);
		return;
	}
	fprintf(f, "; at the peak, per the snapshot of the sites at %s, which holds %s (%.1f%% of "
		"the peak)%s", render__duration(pk->snapshot_t_ns, b1, sizeof(b1)),
		render__bytes(pk->snapshot_bytes, b2, sizeof(b2)),
		100.0 * pk->snapshot_bytes / pk->bytes, pk->nsites ? ":" : ".");
	if (!pk->nsites)
		return;
	fputs("<table class=\"data narrow peak-sites\">\n<thead><tr><th>Site</th>"
	      "<th class=\"num\">Live bytes</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < pk->nsites && i < PEAK_SITES; i++) {
		fputs("<tr>", f);
		site_cell(h, &h->p->samples[pk->sites[i].sample]);
		u64_cell(f, pk->sites[i].bytes, "bytes");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>", f);
	if (pk->nsites > PEAK_SITES)
		fprintf(f, "<span class=\"note\">%" PRIu32 " more site%s in the .json report."
			"</span>", pk->nsites - PEAK_SITES, pk->nsites - PEAK_SITES == 1 ? "" : "s");
}

/* "Largest request 97.7 KiB (100000 bytes) at 12.3 ms", its site and its stack. */
static void write_process_largest(const struct html *h, const struct prof_process *proc)
{
	const struct prof_largest *lg = &proc->largest;
	const struct profile *p = h->p;
	const struct prof_sample *s;
	FILE *f = h->f;
	char b1[32], name[512];

	if (!lg->known)
		return;
	fprintf(f, "<br>Largest request %s (%" PRIu64 " bytes)",
		render__bytes(lg->bytes, b1, sizeof(b1)), lg->bytes);
	if (lg->t_ns >= 0)
		fprintf(f, " at %s", render__duration(lg->t_ns, b1, sizeof(b1)));
	if (lg->sample == PROF_NONE) {
		fputs("; its site was not kept (see the drops).", f);
		return;
	}
	s = &p->samples[lg->sample];
	fputs(":<table class=\"data narrow largest\">\n<tbody><tr>", f);
	site_cell(h, s);
	/* a plain list, not <details>: the page stays valid HTML 4 for libxml2's parser too */
	fputs("</tr></tbody></table>\n<div class=\"largest-stack\">Its stack:<ol>", f);
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *loc = &p->locations[s->locs[i]];

		for (uint32_t j = 0; j < (loc->nlines ? loc->nlines : 1); j++) {
			fputs("<li><code>", f);
			esc(f, profile__frame_name(p, loc, j, name, sizeof(name)));
			fputs("</code>", f);
			if (j < loc->nlines) {
				const struct prof_function *fn = &p->functions[loc->lines[j].function];

				if (fn->filename) {
					fputs(" <span class=\"src\">", f);
					esc(f, render__basename(fn->filename));
					if (loc->lines[j].line > 0)
						fprintf(f, ":%" PRId64, loc->lines[j].line);
					fputs("</span>", f);
				}
			}
			fputs("</li>", f);
		}
	}
	fputs("</ol></div>", f);
}

struct proc_rank {
	uint32_t i;	/* index into the profile's processes */
	uint32_t pid;
	int64_t v;	/* its samples' sum of the default type */
};

static int rank_by_pid(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int pid_only(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int rank_by_value(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The processes the page lists, in *idx (*shown of them): every one in the profile's order, or
 * with more than SITES_MAX the SITES_MAX with the most of the default type in their samples,
 * the most first (offcpu -a over 2 minutes had a row for each of 20,697 processes). */
static uint32_t *process_rows(const struct profile *p, uint32_t *shown)
{
	uint32_t n = p->nprocesses, *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct proc_rank *r;

	*shown = n;
	if (!idx)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	if (n <= SITES_MAX)
		return idx;
	r = malloc(n * sizeof(*r));
	if (!r) {
		free(idx);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		r[i] = (struct proc_rank){ i, p->processes[i].pid, 0 };
	qsort(r, n, sizeof(*r), rank_by_pid);
	for (uint32_t s = 0; p->ntypes && s < p->nsamples; s++) {
		struct proc_rank key = { 0, p->samples[s].pid, 0 }, *at;

		at = bsearch(&key, r, n, sizeof(*r), pid_only);
		if (at)
			at->v += p->samples[s].values[p->default_type];
	}
	qsort(r, n, sizeof(*r), rank_by_value);
	for (uint32_t i = 0; i < SITES_MAX; i++)
		idx[i] = r[i].i;
	free(r);
	*shown = SITES_MAX;
	return idx;
}

/* A saved profile's processes (pprof keeps no statistics, calls or command lines): each one's
 * samples summed per type, as the text report's table of a saved profile. */
static int write_process_sums(const struct html *h, const uint32_t *rows, uint32_t shown)
{
	const struct profile *p = h->p;
	int64_t *sums = profile__process_sums(p), total;
	FILE *f = h->f;
	uint32_t i, k;

	if (!sums)
		return -ENOMEM;
	fputs("<table class=\"data sortable\" id=\"procs\">\n<thead><tr>"
	      "<th class=\"num\" data-sort=\"num\">PID</th><th data-sort=\"text\">Name</th>", f);
	for (k = 0; k < p->ntypes; k++) {
		fputs("<th class=\"num\" data-sort=\"num\" title=\"its samples' sum\">", f);
		esc(f, p->types[k].type);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < shown; i++) {
		fputs("<tr>", f);
		proc_cells(f, &p->processes[rows[i]]);
		for (k = 0; k < p->ntypes; k++)
			value_cell(f, sums[(size_t)rows[i] * p->ntypes + k], p->types[k].unit);
		fputs("</tr>\n", f);
	}
	fputs("</tbody>", f);
	if (p->nprocesses > 1) {
		fprintf(f, "<tfoot><tr><td>Total</td><td>%" PRIu32 " processes</td>",
			p->nprocesses);
		for (k = 0; k < p->ntypes; k++) {
			total = 0;
			for (i = 0; i < p->nprocesses; i++)
				total = prof_add(total, sums[(size_t)i * p->ntypes + k]);
			value_cell(f, total, p->types[k].unit);
		}
		fputs("</tr></tfoot>", f);
	}
	fputs("</table>\n", f);
	if (render__traces_calls(p))
		fputs("<h3>Calls</h3>\n<p class=\"empty\">Not in a saved profile: pprof keeps no "
		      "calls.</p>\n", f);
	free(sums);
	return 0;
}

static int write_processes(const struct html *h)
{
	const struct profile *p = h->p;
	const char **keys = NULL;
	FILE *f = h->f;
	uint32_t nkeys, i, k, shown, *rows;
	uint64_t v;

	if (h->diff)
		return 0;	/* stacks of two runs, matched by their names: no process */
	fputs("<h2 id=\"processes\">Processes</h2>\n", f);
	if (!p->nprocesses) {
		fputs("<p class=\"empty\">No processes were traced.</p>\n", f);
		return 0;
	}
	keys = collect_keys(p, false, false, &nkeys);
	rows = keys ? process_rows(p, &shown) : NULL;
	if (!rows) {
		free(keys);
		return -ENOMEM;
	}
	if (p->from_pprof) {
		int err = write_process_sums(h, rows, shown);

		free(keys);
		free(rows);
		return err;
	}
	if (shown < p->nprocesses) {
		fprintf(f, "<p class=\"hint\">%" PRIu32 " rows; the first %" PRIu32 " are shown "
			"here, the ones with the most ", p->nprocesses, shown);
		esc(f, p->ntypes ? p->types[p->default_type].type : "samples");
		fputs(" (the total is all of them; every one is in the .json and .txt --top 0 "
		      "reports).</p>\n", f);
	}
	fputs("<table class=\"data sortable\" id=\"procs\">\n<thead><tr>"
	      "<th class=\"num\" data-sort=\"num\">PID</th><th data-sort=\"text\">Name</th>", f);
	if (have_ppids(p))
		fputs("<th class=\"num\" data-sort=\"num\">PPID</th>"
		      "<th class=\"num\" data-sort=\"num\" title=\"PID in its own PID namespace\">"
		      "NS PID</th>", f);
	for (k = 0; k < nkeys; k++) {
		const struct stat_col *sc = known_stat(keys[k]);

		fputs("<th class=\"num\" data-sort=\"num\" title=\"", f);
		esc(f, keys[k]);
		fputs("\">", f);
		esc(f, sc ? sc->header : keys[k]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < shown; i++) {
		const struct prof_process *proc = &p->processes[rows[i]];

		fputs("<tr>", f);
		proc_cells(f, proc);
		if (have_ppids(p)) {
			if (proc->ppid)
				u64_cell(f, proc->ppid, "count");
			else
				fputs("<td class=\"num zero\">-</td>", f);
			if (proc->ns_pid)
				u64_cell(f, proc->ns_pid, "count");
			else
				fputs("<td class=\"num zero\">-</td>", f);
		}
		for (k = 0; k < nkeys; k++) {
			const struct stat_col *sc = known_stat(keys[k]);

			if (!prof_process__stat(proc, keys[k], &v))
				fputs("<td class=\"num zero\">-</td>", f);
			else
				u64_cell(f, v, sc && sc->bytes ? "bytes" : "count");
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody>", f);
	/* several processes: their total (peaks are per process: none; the largest request) */
	if (p->nprocesses > 1) {
		fprintf(f, "<tfoot><tr><td>Total</td><td>%" PRIu32 " processes</td>%s",
			p->nprocesses, have_ppids(p) ? "<td></td><td></td>" : "");
		for (k = 0; k < nkeys; k++) {
			const struct stat_col *sc = known_stat(keys[k]);
			bool any = false, max = !strcmp(keys[k], "max_request");
			uint64_t sum = 0;

			for (i = 0; strcmp(keys[k], "peak_live_bytes") && i < p->nprocesses; i++) {
				if (!prof_process__stat(&p->processes[i], keys[k], &v))
					continue;
				any = true;
				sum = max ? (v > sum ? v : sum) : sum + v;
			}
			if (!any)
				fputs("<td class=\"num zero\">-</td>", f);
			else
				u64_cell(f, sum, sc && sc->bytes ? "bytes" : "count");
		}
		fputs("</tr></tfoot>", f);
	}
	fputs("</table>\n", f);
	free(keys);

	/* calls per traced function: only those some process made, the others named */
	keys = collect_keys(p, true, true, &nkeys);
	if (!keys && nkeys) {
		free(rows);
		return -ENOMEM;
	}
	/* a mode that traces no functions (cpu, stacks, kmem) has no calls to speak of */
	if (!nkeys && !render__traces_calls(p)) {
		free(keys);
		free(rows);
		return 0;
	}
	fputs("<h3>Calls</h3>\n", f);
	if (!nkeys) {
		fputs("<p class=\"empty\">No calls to the traced functions.</p>\n", f);
	} else {
		fputs("<table class=\"data sortable\" id=\"calls\">\n<thead><tr>"
		      "<th class=\"num\" data-sort=\"num\">PID</th>"
		      "<th data-sort=\"text\">Name</th>", f);
		for (k = 0; k < nkeys; k++) {
			fputs("<th class=\"num\" data-sort=\"num\">", f);
			esc(f, keys[k]);
			fputs("</th>", f);
		}
		fputs("</tr></thead>\n<tbody>\n", f);
		for (i = 0; i < shown; i++) {
			const struct prof_process *proc = &p->processes[rows[i]];

			fputs("<tr>", f);
			proc_cells(f, proc);
			for (k = 0; k < nkeys; k++) {
				if (!prof_process__call(proc, keys[k], &v))
					v = 0;
				u64_cell(f, v, "count");
			}
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	free(keys);
	keys = collect_keys(p, true, false, &nkeys);
	if (keys) {
		uint32_t n = 0;

		for (k = 0; k < nkeys; k++) {
			for (i = 0; i < p->nprocesses; i++) {
				if (prof_process__call(&p->processes[i], keys[k], &v) && v)
					break;
			}
			if (i < p->nprocesses)
				continue;
			fputs(n++ ? ", " : "<p class=\"note\">Traced but not called: ", f);
			esc(f, keys[k]);
		}
		if (n)
			fputs(".</p>\n", f);
	}
	free(keys);

	fputs("<ul class=\"notes\">\n", f);
	for (i = 0; i < shown; i++) {
		const struct prof_process *proc = &p->processes[rows[i]];

		fprintf(f, "<li><b>%" PRIu32 "</b> ", proc->pid);
		esc(f, proc->comm ? proc->comm : "?");
		if (proc->cmdline) {
			fputs(": <code>", f);
			esc(f, proc->cmdline);
			fputs("</code>", f);
		}
		if (proc->note) {
			fputs("<br><span class=\"note\">", f);
			esc(f, proc->note);
			fputs("</span>", f);
		}
		write_process_peak(h, proc);
		write_process_largest(h, proc);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
	free(rows);
	return 0;
}

/* ---- series ----------------------------------------------------------------------------- */

/* Headings of the series the collectors sample; others go by their name. */
static const char *series_title(const char *name)
{
	if (strcmp(name, "live_bytes") == 0)
		return "Live bytes";
	if (strcmp(name, "live_count") == 0)
		return "Live allocations";
	if (strcmp(name, "cpu_percent") == 0)
		return "CPU use (percent of one CPU)";
	if (strcmp(name, "io_requests") == 0)
		return "Block requests per second";
	return name;
}

static void write_series(const struct html *h)
{
	const struct profile *p = h->p;
	FILE *f = h->f;
	uint32_t i, j, k;

	if (h->diff)
		return;
	fputs("<h2 id=\"timeline\">Over time</h2>\n", f);
	if (!p->nseries && p->from_pprof) {
		fputs("<p class=\"empty\">Not in a saved profile: pprof keeps no series.</p>\n", f);
		return;
	}
	if (!p->nseries) {
		fputs("<p class=\"empty\">No samples: nothing was sampled during the run (it may "
		      "have been too short, or this mode samples nothing over time).</p>\n", f);
		return;
	}
	/* one chart per quantity, in order of first appearance; one line per process */
	for (i = 0; i < p->nseries; i++) {
		const struct prof_series *s = &p->series[i];

		for (k = 0; k < i && strcmp(p->series[k].name, s->name); k++)
			;
		if (k < i)
			continue;
		fputs("<h3>", f);
		esc(f, series_title(s->name));
		fputs(" <span class=\"note\">(", f);
		esc(f, s->name);
		/* pid 0: one series for every traced process together (cpu, io) */
		fputs(s->pid ? ", per process)" : ", every traced process)", f);
		fputs("</span></h3>\n<div class=\"chart\" data-series=\"", f);
		esc(f, s->name);
		fputs("\"><p class=\"empty nojs\">The chart is drawn by the page's script; the "
		      "table below has its numbers.</p></div>\n", f);
		fprintf(f, "<table class=\"data sortable narrow\" id=\"series-%" PRIu32 "\">\n"
			"<thead><tr><th class=\"num\" data-sort=\"num\">PID</th>"
			"<th data-sort=\"text\">Name</th>"
			"<th class=\"num\" data-sort=\"num\">Samples</th><th class=\"num\" "
			"data-sort=\"num\">Peak</th><th class=\"num\" data-sort=\"num\">At the end"
			"</th></tr></thead>\n<tbody>\n", i);
		for (j = i; j < p->nseries; j++) {
			const struct prof_series *t = &p->series[j];
			int64_t peak = INT64_MIN;
			uint32_t n;

			if (strcmp(t->name, s->name))
				continue;
			for (n = 0; n < t->n; n++)
				peak = t->v[n] > peak ? t->v[n] : peak;
			fprintf(f, "<tr><td class=\"num\" data-v=\"%" PRIu32 "\">%" PRIu32
				"</td><td>", t->pid, t->pid);
			esc(f, comm_of(p, t->pid) ? comm_of(p, t->pid) :
			       t->pid ? "?" : "all processes");
			fprintf(f, "</td><td class=\"num\" data-v=\"%" PRIu32 "\">%" PRIu32 "</td>",
				t->n, t->n);
			value_cell(f, t->n ? peak : 0, t->unit);
			value_cell(f, t->n ? t->v[t->n - 1] : 0, t->unit);
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
}

/* ---- sites ------------------------------------------------------------------------------ */

static bool allocator_at(const struct profile *p, const struct prof_location *loc, uint32_t j)
{
	return j < loc->nlines && render__is_allocator(p->functions[loc->lines[j].function].name);
}

/* The site's cell: where the program asked (the first frame, leaf first, that is not an
 * allocator function), with file:line and module, and the allocator it called; and a badge
 * (e.g. "suppressed") when given. */
/* The scheduler's own kernel frames, which every off-CPU stack starts with (__schedule,
 * schedule, schedule_timeout, io_schedule, preempt_schedule...): a row named by them says
 * nothing (offcpu's table read "__schedule [kernel.kallsyms]" on every row); the kernel
 * function that waited (do_nanosleep, futex_do_wait, anon_pipe_read) does. */
static bool scheduler_at(const struct profile *p, const struct prof_location *loc, uint32_t j)
{
	const char *n;

	if (j >= loc->nlines || !profile__location_is_kernel(p, loc))
		return false;
	n = p->functions[loc->lines[j].function].name;
	while (*n == '_')
		n++;
	return !strncmp(n, "schedule", 8) || !strncmp(n, "preempt_schedule", 16) ||
	       !strncmp(n, "io_schedule", 11);
}

static void site_cell_badge(const struct html *h, const struct prof_sample *s, const char *badge)
{
	const struct profile *p = h->p;
	const struct prof_location *loc = NULL, *leaf;
	uint32_t i, j = 0;
	char name[512];

	fputs("<td class=\"site\">", h->f);
	if (!s->nlocs) {
		fputs("<span class=\"fn\">[no stack]</span>", h->f);
		goto out;
	}
	/* the sample's own frames: past a waker's (offcpu --wakers), the allocator's and the
	 * scheduler's */
	for (i = render__own_leaf(p, s); i < s->nlocs && !loc; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		for (j = 0; j < (l->nlines ? l->nlines : 1); j++) {
			if (!allocator_at(p, l, j) && !(h->offcpu && scheduler_at(p, l, j))) {
				loc = l;
				break;
			}
		}
	}
	if (!loc) {
		/* nothing but allocator frames: show the leaf */
		loc = &p->locations[s->locs[0]];
		j = 0;
	}
	fputs("<span class=\"fn\">", h->f);
	esc(h->f, profile__frame_name(p, loc, j, name, sizeof(name)));
	fputs("</span>", h->f);
	if (j < loc->nlines) {
		const struct prof_function *fn = &p->functions[loc->lines[j].function];

		if (fn->filename) {
			fputs(" <span class=\"src\">", h->f);
			esc(h->f, render__basename(fn->filename));
			if (loc->lines[j].line > 0)
				fprintf(h->f, ":%" PRId64, loc->lines[j].line);
			fputs("</span>", h->f);
		}
		if (loc->mapping != PROF_NONE) {
			const char *file = p->mappings[loc->mapping].file;
			/* "[kernel.kallsyms]", "[vdso]" are in brackets already */
			bool br = file[0] != '[';

			fputs(br ? " <span class=\"mod\">[" : " <span class=\"mod\">", h->f);
			esc(h->f, render__basename(file));
			fputs(br ? "]</span>" : "</span>", h->f);
		}
	}
	leaf = &p->locations[s->locs[0]];
	if (leaf != loc && allocator_at(p, leaf, 0)) {
		fputs(" <span class=\"via\">via ", h->f);
		esc(h->f, p->functions[leaf->lines[0].function].name);
		fputs("</span>", h->f);
	}
out:
	if (badge)
		fprintf(h->f, " <span class=\"badge\">%s</span>", badge);
	fputs("</td>", h->f);
}

static void site_cell(const struct html *h, const struct prof_sample *s)
{
	site_cell_badge(h, s, NULL);
}

static void pid_cell(const struct html *h, uint32_t pid)
{
	const char *comm = comm_of(h->p, pid);

	fprintf(h->f, "<td class=\"num pidc\" data-v=\"%" PRIu32 "\">%" PRIu32, pid, pid);
	if (comm) {
		fputs("<span class=\"comm\">", h->f);
		esc(h->f, comm);
		fputs("</span>", h->f);
	}
	fputs("</td>", h->f);
}

/* Does the profile say which allocations were temporary: a memory profile, or any site with
 * temporaries or lifetimes (a profile read back from ebprof's own output)? */
static bool has_temporaries(const struct html *h)
{
	uint32_t i;

	/* a saved profile has none: pprof has no field for them */
	if (h->alloc_space >= 0 && !h->p->from_pprof)
		return true;
	for (i = 0; i < h->p->nsamples; i++) {
		if (h->p->samples[i].temporary || h->p->samples[i].life)
			return true;
	}
	return false;
}

/* The site's allocations, for the share of them that were temporary; 0 when unknown. */
static int64_t allocations(const struct html *h, const struct prof_sample *s)
{
	return h->count_type >= 0 && s->values[h->count_type] > 0 ? s->values[h->count_type] : 0;
}

/* The Temporary cell: the count, sorted by; the share of the site's allocations in its title
 * (none on a 0: a page of 5,000 rows does not need 5,000 "0 of N"). */
static void temp_cell(const struct html *h, const struct prof_sample *s)
{
	int64_t allocs = allocations(h, s);
	uint64_t t = s->temporary;

	if (!t) {
		fputs("<td class=\"num zero\" data-v=\"0\">0</td>", h->f);
		return;
	}
	fprintf(h->f, "<td class=\"num\" data-v=\"%" PRIu64 "\" title=\"%" PRIu64, t, t);
	if (allocs)
		fprintf(h->f, " of %" PRId64 " allocations (%.1f%%)", allocs, 100.0 * t / allocs);
	else
		fprintf(h->f, " allocation%s", t == 1 ? "" : "s");
	fprintf(h->f, " freed before their thread allocated again\">%" PRIu64 "</td>", t);
}

/* The Growth cell: the rate, sorted by, and the trend; the numbers behind it in its title. */
static void growth_cell(const struct html *h, const struct prof_sample *s)
{
	const struct prof_growth *g = &s->growth;
	char buf[32];

	if (g->trend == PROF_TREND_NONE) {
		fputs("<td class=\"num zero\" data-v=\"0\">-</td>", h->f);
		return;
	}
	fprintf(h->f, "<td class=\"num%s\" data-v=\"%.0f\" title=\"from %" PRId64 " to %" PRId64
		" bytes over the later half of the run, max %" PRId64 "\">%s <span class=\"x\">%s"
		"</span></td>", g->max_bytes ? "" : " zero", g->bytes_per_sec, g->first_bytes,
		g->last_bytes, g->max_bytes, render__rate(g->bytes_per_sec, buf, sizeof(buf)),
		prof_trend__name(g->trend));
}

/* Column headers of the memory types, in the order a reader compares them. */
static const struct {
	const char *type, *header;
} type_cols[] = {
	{ "alloc_space", "Bytes" },
	{ "alloc_objects", "Count" },
	{ "inuse_space", "Live bytes" },
	{ "inuse_objects", "Live count" },
};

#define NTYPE_COLS (sizeof(type_cols) / sizeof(type_cols[0]))

/* Is type t one of the leak classes' "<class>_objects" or "<class>_space"? */
static bool is_leak_type(const struct profile *p, uint32_t t)
{
	for (int c = 0; c < PROF_LEAK__COUNT; c++)
		if (profile__leak_type(p, c, false) == (int)t ||
		    profile__leak_type(p, c, true) == (int)t)
			return true;
	return false;
}

/* Sample type indices in column order: the memory types first, then the others but the leak
 * classes. */
static uint32_t column_types(const struct profile *p, int *cols, const char **headers)
{
	uint32_t n = 0, i;
	size_t k;

	for (k = 0; k < NTYPE_COLS; k++) {
		int t = profile__type_index(p, type_cols[k].type);

		if (t >= 0) {
			headers[n] = type_cols[k].header;
			cols[n++] = t;
		}
	}
	for (i = 0; i < p->ntypes; i++) {
		for (k = 0; k < n && cols[k] != (int)i; k++)
			;
		/* the leak classes have a section of their own, suppressions applied */
		if (k == n && !is_leak_type(p, i)) {
			headers[n] = p->types[i].type;
			cols[n++] = (int)i;
		}
	}
	return n;
}

/* The filter box of table `id`: the script finds it as "<id>-filter". */
static void table_tools(FILE *f, const char *id, const char *what)
{
	fprintf(f, "<div class=\"tools\"><input type=\"search\" id=\"%s-filter\" placeholder=\""
		"Filter %s by function, file, module, process\" aria-label=\"Filter %s\">"
		"<span class=\"count\" id=\"%s-count\"></span></div>\n", id, what, what, id);
}

/* A table of sites: sortable, rows that open on their stack, PAGE_ROWS shown at first. */
static void table_start(const struct html *h, const char *id)
{
	fprintf(h->f, "<table class=\"data sortable fixed\" id=\"%s\" data-expand=\"1\" "
		"data-page=\"%d\">\n<thead><tr><th class=\"num rank\" data-sort=\"rank\">#</th>"
		"<th data-sort=\"text\">%s</th>", id, PAGE_ROWS,
		h->alloc_space >= 0 ? "Site" : "Stack");
}

/* Row `rank` (0-based) of sample `si`: its key into the data and its rank cell; cls, if not
 * NULL, another class of the row. */
static void row_start_class(const struct html *h, uint32_t si, uint32_t rank, const char *cls)
{
	fprintf(h->f, "<tr class=\"row%s%s%s\" tabindex=\"0\" aria-expanded=\"false\" data-s=\"%"
		PRIu32 "\"><td class=\"num\" data-v=\"%" PRIu32 "\">%" PRIu32 "</td>",
		rank < PAGE_ROWS ? "" : " more", cls ? " " : "", cls ? cls : "", si, rank + 1,
		rank + 1);
}

static void row_start(const struct html *h, uint32_t si, uint32_t rank)
{
	row_start_class(h, si, rank, NULL);
}

static int write_sites(struct html *h)
{
	const struct profile *p = h->p;
	int *cols = NULL, key = (int)p->default_type;
	const char **headers = NULL;
	uint32_t *idx, n, shown, i, ncols, c;
	FILE *f = h->f;
	int err = -ENOMEM;

	idx = render__sorted_samples(p, h->diff ? RENDER_KEY_CHANGE : key, false, &n);
	if (!idx)
		return -errno;
	cols = malloc(sizeof(*cols) * (p->ntypes + 1));
	headers = malloc(sizeof(*headers) * (p->ntypes + 1));
	if (!cols || !headers)
		goto out;
	ncols = column_types(p, cols, headers);
	if (h->diff) {
		/* base, new, delta: max(base, new) is the flame graph's width, no number to read */
		for (c = i = 0; i < ncols; i++)
			if (cols[i] != PROF_DIFF_MAX) {
				headers[c] = headers[i];
				cols[c++] = cols[i];
			}
		ncols = c;
	}
	shown = n < SITES_MAX ? n : SITES_MAX;

	fprintf(f, "<h2 id=\"sites\">Top %s</h2>\n", h->diff ? "changes" :
		h->alloc_space >= 0 ? "allocation sites" : "stacks");
	if (!n) {
		fputs("<p class=\"empty\">No samples.</p>\n", f);
		err = 0;
		goto out;
	}
	fprintf(f, "<p class=\"hint\">%" PRIu32 " %s%s", n, row_word(h), n == 1 ? "" : "s");
	if (h->diff) {
		fputs(" by the size of their change in ", f);
		esc(f, p->types[PROF_DIFF_MAX].type);
	} else if (p->ntypes) {
		fputs(" by ", f);
		esc(f, p->types[key].type);
	}
	if (shown < n)
		fprintf(f, "; the first %" PRIu32 " are shown here (every one is in the .json, "
			".txt --top 0 and .pb.gz reports)", shown);
	fputs(". Click a column header to sort, a row to see its whole stack.</p>\n", f);
	table_tools(f, "sites-table", h->alloc_space >= 0 ? "sites" : "stacks");
	table_start(h, "sites-table");
	for (c = 0; c < ncols; c++) {
		fputs("<th class=\"num\" data-sort=\"num\" title=\"", f);
		esc(f, p->types[cols[c]].type);
		fputs(" (", f);
		esc(f, p->types[cols[c]].unit);
		fputs(")\">", f);
		esc(f, headers[c]);
		fputs("</th>", f);
	}
	if (h->temps)
		fputs("<th class=\"num\" data-sort=\"num\" title=\"allocations freed before their "
		      "thread allocated again\">Temporary</th>", f);
	if (h->growth)
		fputs("<th class=\"num\" data-sort=\"num\" title=\"live bytes per second over the "
		      "later half of the run (least squares), and the trend\">Growth</th>", f);
	if (!h->diff)
		fputs("<th class=\"num\" data-sort=\"num\">PID</th>", f);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		h->want[idx[i]] = 1;
		row_start(h, idx[i], i);
		site_cell(h, s);
		for (c = 0; c < ncols; c++)
			value_cell(f, s->values[cols[c]], p->types[cols[c]].unit);
		if (h->temps)
			temp_cell(h, s);
		if (h->growth)
			growth_cell(h, s);
		if (!h->diff)
			pid_cell(h, s->pid);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	err = 0;
out:
	free(headers);
	free(cols);
	free(idx);
	return err;
}

/* ---- outstanding ------------------------------------------------------------------------ */

static int write_outstanding(struct html *h)
{
	const struct profile *p = h->p;
	uint32_t *idx, n, shown, i;
	uint64_t count = 0, bytes = 0;
	FILE *f = h->f;
	char buf[32];

	if (!tracks_outstanding(h))
		return 0;
	idx = render__sorted_samples(p, RENDER_KEY_OUTSTANDING, false, &n);
	if (!idx)
		return -errno;
	/* sites whose outstanding bytes are 0 may still hold objects (malloc(0)); mappings
	 * (--mmap) are no allocations */
	for (i = shown = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		if (!s->out.count || render__is_map_sample(p, s))
			continue;
		idx[shown++] = idx[i];
		count += s->out.count;
		bytes += s->out.bytes;
	}
	n = shown;
	fputs("<h2 id=\"outstanding\">Outstanding allocations at exit</h2>\n", f);
	if (!n) {
		fputs("<p class=\"empty\">None: everything allocated was freed (or the run ended "
		      "before any allocation was seen).</p>\n", f);
		free(idx);
		return 0;
	}
	fprintf(f, "<p class=\"hint\">%" PRIu64 " object%s, %s (%" PRIu64 " bytes) not freed "
		"when the run ended, at %" PRIu32 " site%s", count, count == 1 ? "" : "s",
		render__bytes(bytes, buf, sizeof(buf)), bytes, n, n == 1 ? "" : "s");
	shown = n < SITES_MAX ? n : SITES_MAX;
	if (shown < n)
		fprintf(f, "; the first %" PRIu32 " are shown", shown);
	fputs(". Ages are from allocation to the end of the run.</p>\n", f);
	table_tools(f, "outstanding-table", "sites");
	table_start(h, "outstanding-table");
	fputs("<th class=\"num\" data-sort=\"num\">Objects</th>"
	      "<th class=\"num\" data-sort=\"num\">Bytes</th>"
	      "<th class=\"num\" data-sort=\"num\">PID</th>"
	      "<th class=\"num\" data-sort=\"num\">Oldest</th>"
	      "<th class=\"num\" data-sort=\"num\">Youngest</th>"
	      "<th class=\"num\" data-sort=\"num\">Mean age</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		h->want[idx[i]] = 1;
		row_start(h, idx[i], i);
		site_cell(h, s);
		u64_cell(f, s->out.count, "count");
		u64_cell(f, s->out.bytes, "bytes");
		pid_cell(h, s->pid);
		u64_cell(f, s->out.max_age_ns, "nanoseconds");
		u64_cell(f, s->out.min_age_ns, "nanoseconds");
		u64_cell(f, s->out.sum_age_ns / s->out.count, "nanoseconds");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(idx);
	return 0;
}

/* ---- leaks ------------------------------------------------------------------------------ */

static uint64_t leak_value(const struct profile *p, const struct prof_sample *s, int c, bool b)
{
	int t = profile__leak_type(p, c, b);

	return t >= 0 && s->values[t] > 0 ? (uint64_t)s->values[t] : 0;
}

/* One row of a leak summary: blocks and bytes; cls names the class for styling and tests. */
static void leak_sum_row(FILE *f, const char *cls, const char *title, uint64_t count,
			 uint64_t bytes)
{
	fprintf(f, "<tr class=\"%s\"><td>", cls);
	esc(f, title);
	fputs("</td>", f);
	u64_cell(f, count, "count");
	u64_cell(f, bytes, "bytes");
	fputs("</tr>\n", f);
}

/* valgrind's LEAK SUMMARY of one process, as the text report's: the classes without the
 * suppressed blocks, which get a row of their own, and the heuristics under still reachable. */
static void leak_summary(const struct html *h, const struct prof_process *proc)
{
	const struct prof_scan *sc = &proc->scan;
	uint64_t sup_n = 0, sup_b = 0;
	char b1[32], b2[32], b3[32];
	FILE *f = h->f;

	fprintf(f, "<h3 id=\"leaks-%" PRIu32 "\">pid %" PRIu32 " (", proc->pid, proc->pid);
	esc(f, proc->comm ? proc->comm : "?");
	fprintf(f, ")</h3>\n<p class=\"note scan\">Scanned %s, %s into the run; the process was "
		"stopped for %s; %s (%" PRIu64 " bytes) of roots and blocks read",
		sc->at_exit ? "at its exit" : "while it ran",
		render__duration(sc->t_ns > 0 ? sc->t_ns : 0, b1, sizeof(b1)),
		render__duration(sc->stopped_ns, b2, sizeof(b2)),
		render__bytes(sc->scanned_bytes, b3, sizeof(b3)), sc->scanned_bytes);
	if (sc->unreadable_bytes)
		fprintf(f, ", %" PRIu64 " bytes unreadable", sc->unreadable_bytes);
	fprintf(f, "; %" PRIu32 " thread%s", sc->threads, sc->threads == 1 ? "" : "s");
	/* threads counts those whose registers were read; the others are apart */
	if (sc->threads_unknown)
		fprintf(f, " and %" PRIu32 " more without registers (whose whole stacks were "
			"scanned)", sc->threads_unknown);
	fprintf(f, ".</p>\n<table class=\"data narrow leak-sum\" id=\"leak-sum-%" PRIu32 "\">\n"
		"<thead><tr><th>Class</th><th class=\"num\">Blocks</th><th class=\"num\">Bytes"
		"</th></tr></thead>\n<tbody>\n", proc->pid);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		char cls[32];

		snprintf(cls, sizeof(cls), "leak-%s", prof_leak_class_names[c]);
		leak_sum_row(f, cls, prof_leak_class_titles[c], sc->count[c] - sc->suppressed_count[c],
			     sc->bytes[c] - sc->suppressed_bytes[c]);
		sup_n += sc->suppressed_count[c];
		sup_b += sc->suppressed_bytes[c];
	}
	for (int k = 1; k < PROF_LEAK_HEURISTICS; k++) {
		char title[64];

		if (!sc->heur_count[k])
			continue;
		snprintf(title, sizeof(title), "of which reachable via heuristic %s",
			 prof_leak_heuristic_names[k]);
		leak_sum_row(f, "leak-heuristic", title, sc->heur_count[k], sc->heur_bytes[k]);
	}
	leak_sum_row(f, "leak-suppressed", "suppressed", sup_n, sup_b);
	fputs("</tbody></table>\n", f);
}

struct lost_row {
	uint64_t bytes;
	uint32_t idx;
	bool suppressed;
};

/* Suppressed sites last, then by lost bytes, largest first, then in profile order: the text
 * report's order for the others. */
static int lost_row_cmp(const void *a, const void *b)
{
	const struct lost_row *x = a, *y = b;

	if (x->suppressed != y->suppressed)
		return x->suppressed ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A lost class's cell: its bytes (sorted by), and its blocks under them. */
static void lost_cell(FILE *f, uint64_t count, uint64_t bytes)
{
	char buf[32];

	if (!count) {
		fputs("<td class=\"num zero\" data-v=\"0\" data-n=\"0\">-</td>", f);
		return;
	}
	fprintf(f, "<td class=\"num\" data-v=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\">", bytes,
		count);
	if (bytes >= 1024)
		fprintf(f, "%s<span class=\"x\">%" PRIu64 " bytes in ",
			render__bytes(bytes, buf, sizeof(buf)), bytes);
	else
		fprintf(f, "%" PRIu64 " B<span class=\"x\">", bytes);
	fprintf(f, "%" PRIu64 " block%s</span></td>", count, count == 1 ? "" : "s");
}

static int write_leaks(struct html *h)
{
	const struct profile *p = h->p;
	uint64_t nsupp = 0;
	struct lost_row *rows;
	uint32_t i, n = 0, shown;
	FILE *f = h->f;

	if (!has_leaks(h))
		return 0;
	fputs("<h2 id=\"leaks\">Leaks</h2>\n<p class=\"hint\">The blocks still allocated when a "
	      "process was scanned, by reachability as valgrind's memcheck classifies them: "
	      "<b>definitely lost</b>, no pointer to the block is left; <b>indirectly lost</b>, "
	      "only lost blocks point to it; <b>possibly lost</b>, only pointers into its middle; "
	      "<b>still reachable</b>, a pointer to its start is left. Blocks of sites that match "
	      "a suppression are counted as suppressed, not in their class.</p>\n", f);
	for (i = 0; i < p->nprocesses; i++) {
		if (p->processes[i].scan.done)
			leak_summary(h, &p->processes[i]);
	}

	rows = calloc(p->nsamples + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t count = 0, bytes = 0;

		for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++) {
			count += leak_value(p, s, c, false);
			bytes += leak_value(p, s, c, true);
		}
		if (!count)
			continue;
		rows[n++] = (struct lost_row){ bytes, i, s->suppressed };
		nsupp += s->suppressed;
	}
	qsort(rows, n, sizeof(*rows), lost_row_cmp);
	fputs("<h3 id=\"lost-sites\">Sites with lost blocks</h3>\n", f);
	if (!n) {
		fputs("<p class=\"empty\">None: no block was definitely, indirectly or possibly "
		      "lost.</p>\n", f);
		free(rows);
		return 0;
	}
	shown = n < SITES_MAX ? n : SITES_MAX;
	fprintf(f, "<p class=\"hint\">%" PRIu32 " site%s lost blocks", n, n == 1 ? "" : "s");
	if (nsupp)
		fprintf(f, ", %" PRIu64 " of them suppressed (marked, and listed last)", nsupp);
	if (shown < n)
		fprintf(f, "; the first %" PRIu32 " are shown", shown);
	fputs(". Each cell is the bytes of the class, and its blocks; <i>Lost</i> is the three "
	      "together. Click a row to see its whole stack.</p>\n", f);
	table_tools(f, "leaks-table", "sites");
	table_start(h, "leaks-table");
	fputs("<th class=\"num\" data-sort=\"num\">Lost</th>"
	      "<th class=\"num\" data-sort=\"num\" title=\"no pointer to the block is left\">"
	      "Definitely lost</th>"
	      "<th class=\"num\" data-sort=\"num\" title=\"only lost blocks point to it\">"
	      "Indirectly lost</th>"
	      "<th class=\"num\" data-sort=\"num\" title=\"only pointers into its middle\">"
	      "Possibly lost</th>"
	      "<th class=\"num\" data-sort=\"num\">PID</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[rows[i].idx];
		uint64_t count = 0;

		h->want[rows[i].idx] = 1;
		row_start_class(h, rows[i].idx, i, s->suppressed ? "suppressed" : NULL);
		site_cell_badge(h, s, s->suppressed ? "suppressed" : NULL);
		for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++)
			count += leak_value(p, s, c, false);
		lost_cell(f, count, rows[i].bytes);
		for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++)
			lost_cell(f, leak_value(p, s, c, false), leak_value(p, s, c, true));
		pid_cell(h, s->pid);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(rows);
	return 0;
}

/* ---- flame graphs ----------------------------------------------------------------------- */

struct flame_svg {
	char *buf;
	size_t len;
	bool omitted;		/* over the budget */
};

static int write_flames(const struct html *h)
{
	const struct profile *p = h->p;
	struct output_opts so = *h->o;
	struct flame_svg *svg;
	size_t total = 0;
	uint32_t k, i, sel = p->default_type, nomit = 0;
	FILE *f = h->f;
	int err = 0;

	fputs("<h2 id=\"flame\">Flame graph</h2>\n", f);
	if (!p->ntypes) {
		fputs("<p class=\"empty\">No sample types: nothing to draw.</p>\n", f);
		return 0;
	}
	if (h->o->value_type) {
		int t = profile__type_index(p, h->o->value_type);

		if (t < 0)
			return -EINVAL;
		sel = t;
	}
	if (h->diff && sel == PROF_DIFF_DELTA)
		sel = PROF_DIFF_MAX;
	svg = calloc(p->ntypes, sizeof(*svg));
	if (!svg)
		return -ENOMEM;
	/* the selected type first, so it is the one kept when the budget runs out */
	for (k = 0; k < p->ntypes; k++) {
		FILE *m;

		i = k == 0 ? sel : (k <= sel ? k - 1 : k);
		if (h->diff && i == PROF_DIFF_DELTA)
			continue;	/* a change can be negative: no width */
		so.value_type = p->types[i].type;
		m = open_memstream(&svg[i].buf, &svg[i].len);
		if (!m) {
			err = -errno;
			goto out;
		}
		err = output_svg.write(p, &so, m);
		if (fclose(m) && !err)
			err = -EIO;
		if (err)
			goto out;
		if (k && total + svg[i].len > FLAME_BUDGET) {
			free(svg[i].buf);
			svg[i].buf = NULL;
			svg[i].omitted = true;
			nomit++;
			continue;
		}
		total += svg[i].len;
	}

	if (h->diff)
		fputs("<p class=\"hint\">Differential: a frame is as wide as the larger of its base "
		      "and new values (the first type), red where the new profile has more, blue where "
		      "it has less, grey where nothing changed; base and new draw either profile "
		      "alone, coloured the same way.</p>\n", f);
	fputs("<p class=\"hint\">The width of a frame is its share of the selected sample type. "
	      "Click a frame to zoom in, <i>all</i> or <i>Reset Zoom</i> to zoom out; the search "
	      "takes a regular expression.</p>\n<div class=\"tools\"><label>Sample type "
	      "<select id=\"flame-type\">", f);
	for (i = 0; i < p->ntypes; i++) {
		if (h->diff && i == PROF_DIFF_DELTA)
			continue;
		fprintf(f, "<option value=\"%" PRIu32 "\"%s%s>", i, i == sel ? " selected" : "",
			svg[i].omitted ? " disabled" : "");
		esc(f, p->types[i].type);
		fputs(" (", f);
		esc(f, p->types[i].unit);
		fputc(')', f);
		if (h->diff && i == PROF_DIFF_MAX)
			fputs(": the larger of base and new", f);
		for (int c = 0; c < PROF_LEAK__COUNT; c++) {
			/* which blocks it weighs; suppressed sites are in it, pprof's way */
			if (profile__leak_type(p, c, false) == (int)i)
				fprintf(f, ": %s, blocks", prof_leak_class_titles[c]);
			else if (profile__leak_type(p, c, true) == (int)i)
				fprintf(f, ": %s, bytes", prof_leak_class_titles[c]);
		}
		fprintf(f, "%s</option>", svg[i].omitted ? ", left out: too large" : "");
	}
	fputs("</select></label><input type=\"search\" id=\"flame-search\" placeholder=\""
	      "Search frames (regular expression)\" aria-label=\"Search the flame graph\">"
	      "<span id=\"flame-matched\"></span></div>\n", f);
	if (nomit)
		fprintf(f, "<p class=\"warn\">%" PRIu32 " flame graph%s left out to keep this page "
			"small; write one with <code>-o flame.svg --value TYPE</code>.</p>\n",
			nomit, nomit == 1 ? " was" : "s were");
	fputs("<div id=\"flame-box\"><noscript><p class=\"empty\">The flame graphs need "
	      "JavaScript; <code>-o flame.svg</code> writes one as a file.</p></noscript></div>\n",
	      f);
	for (i = 0; i < p->ntypes; i++) {
		if (!svg[i].buf)
			continue;
		fprintf(f, "<script type=\"text/x-ebprof-svg\" id=\"flame-svg-%" PRIu32 "\" "
			"data-type=\"", i);
		esc(f, p->types[i].type);
		fputs("\">", f);
		script_data(f, svg[i].buf, svg[i].len, false);
		fputs("</script>\n", f);
	}
out:
	for (i = 0; i < p->ntypes; i++)
		free(svg[i].buf);
	free(svg);
	return err;
}

/* ---- drops and notes -------------------------------------------------------------------- */

/* A mode's summary rows (struct prof_group: io's disks, lock's locks, offcpu's processes): one
 * sortable table of their labels and the numbers that have a column (the first group's, as the
 * text report), then each group's histograms as the text report draws them, one collapsible
 * block each. At most SITES_MAX of them, as the sites tables (the modes order their groups,
 * the most first), and the page says so: offcpu -a's table had a row and a histogram for each
 * of 32,035 processes. */
static int write_groups(const struct html *h)
{
	const struct profile *p = h->p;
	const struct prof_group *first;
	uint32_t shown, nl;
	FILE *f = h->f;

	if (!p->ngroups)
		return 0;
	shown = p->ngroups < SITES_MAX ? p->ngroups : SITES_MAX;
	first = &p->groups[0];
	nl = prof_group__nnames(first);
	fputs("<h2 id=\"groups\">By ", f);
	for (uint32_t i = 0; i < nl; i++) {
		fputs(!i ? "" : i + 1 == nl ? " and " : ", ", f);
		esc(f, first->labels[i].key);
	}
	/* what the numbers are, as the text report says */
	if (first->nhists) {
		fputs(": ", f);
		esc(f, first->hists[0].name);
	}
	fputs("</h2>\n", f);
	if (shown < p->ngroups)
		fprintf(f, "<p class=\"hint\">%" PRIu32 " rows; the first %" PRIu32 " are shown "
			"here, with their histograms (every one is in the .json and .txt --top 0 "
			"reports).</p>\n", p->ngroups, shown);
	fputs("<table class=\"data sortable\" id=\"groups-table\">\n<thead><tr>", f);
	for (uint32_t i = 0; i < nl; i++) {
		fputs("<th data-sort=\"text\">", f);
		esc(f, first->labels[i].key);
		fputs("</th>", f);
	}
	for (uint32_t i = 0; i < first->nstats; i++) {
		if (!first->stats[i].label)
			continue;
		fputs("<th class=\"num\" data-sort=\"num\">", f);
		esc(f, first->stats[i].label);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (uint32_t g = 0; g < shown; g++) {
		const struct prof_group *gr = &p->groups[g];

		fputs("<tr>", f);
		for (uint32_t i = 0; i < nl; i++) {
			const char *v = prof_group__label(gr, first->labels[i].key);

			fputs("<td>", f);
			esc(f, v ? v : "-");
			/* a note under the row's name, as the text report's */
			if (!i && prof_group__nnames(gr) < gr->nlabels) {
				fputs("<br><span class=\"hint\">note: ", f);
				esc(f, prof_group__label(gr, "note"));
				fputs("</span>", f);
			}
			fputs("</td>", f);
		}
		for (uint32_t i = 0; i < first->nstats; i++) {
			const struct prof_group_stat *st = &first->stats[i];
			bool found = false;

			if (!st->label)
				continue;
			for (uint32_t j = 0; j < gr->nstats && !found; j++) {
				if (strcmp(gr->stats[j].name, st->name))
					continue;
				value_cell(f, gr->stats[j].value, gr->stats[j].unit);
				found = true;
			}
			if (!found)
				fputs("<td class=\"num zero\">-</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	for (uint32_t g = 0; g < shown; g++) {
		const struct prof_group *gr = &p->groups[g];

		for (uint32_t i = 0; i < gr->nhists; i++) {
			char *buf = NULL, title[320];
			size_t len = 0, n = 0;
			FILE *m;

			for (uint32_t j = 0; j < prof_group__nnames(gr) && n < sizeof(title); j++)
				n += snprintf(title + n, sizeof(title) - n, "%s%s", j ? " " : "",
					      gr->labels[j].value);
			if (n < sizeof(title))
				snprintf(title + n, sizeof(title) - n, ", %s", gr->hists[i].name);
			m = open_memstream(&buf, &len);
			if (!m)
				return -ENOMEM;
			render__hist_text(m, "", title, &gr->hists[i]);
			if (fclose(m)) {
				free(buf);
				return -ENOMEM;
			}
			fputs("<details class=\"hist\"><summary>", f);
			esc(f, title);
			fputs("</summary><pre>", f);
			/* the title line is the summary's */
			esc(f, strchr(buf, '\n') ? strchr(buf, '\n') + 1 : buf);
			fputs("</pre></details>\n", f);
			free(buf);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static void write_drops(const struct html *h)
{
	const struct profile *p = h->p;
	FILE *f = h->f;
	uint32_t i;

	fputs("<h2 id=\"drops\">Drops</h2>\n", f);
	if (any_drops(p, true))
		fputs("<p class=\"drops-bad\">Events were dropped: these were not fully accounted, "
		      "and the numbers above are short by them.</p>\n", f);
	else if (any_drops(p, false))
		fputs("<p class=\"drops-bad\">Every event was counted; the unwinder's drops "
		      "(unwind_*) are stacks it cut short, each ending in [truncated].</p>\n", f);
	else
		fputs("<p class=\"drops-ok\">No events were dropped.</p>\n", f);
	if (!p->ndrops)
		return;
	fputs("<table class=\"data narrow\" id=\"drop-table\">\n<thead><tr>"
	      "<th>Reason</th><th class=\"num\">Events</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < p->ndrops; i++) {
		fputs("<tr><td><code>", f);
		esc(f, p->drops[i].key);
		fputs("</code></td>", f);
		u64_cell(f, p->drops[i].value, "count");
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void write_notes(const struct html *h)
{
	char buf[PROF_NOTE_MAX];
	uint32_t i;

	if (!h->p->nnotes)
		return;
	fputs("<h2 id=\"notes\">Notes</h2>\n<ul class=\"notes\">\n", h->f);
	for (i = 0; i < h->p->nnotes; i++) {
		fputs("<li>", h->f);
		esc(h->f, profile__note(h->p, i, buf, sizeof(buf)));
		fputs("</li>\n", h->f);
	}
	fputs("</ul>\n", h->f);
}

/* ---- the data --------------------------------------------------------------------------- */

/* Index of s in the data's string table, added if new; -1 for NULL, -2 when out of memory. */
static int64_t str_index(struct strtab *t, const char *s)
{
	uint32_t h, i;

	if (!s)
		return -1;
	if ((t->n + 1) * 2 > t->hcap) {
		uint32_t cap = t->hcap ? t->hcap * 2 : 1024;
		uint32_t *nh = calloc(cap, sizeof(*nh));

		if (!nh)
			return -2;
		for (i = 0; i < t->n; i++) {
			h = (uint32_t)util_hash_str(t->s[i]) & (cap - 1);
			while (nh[h])
				h = (h + 1) & (cap - 1);
			nh[h] = i + 1;
		}
		free(t->hash);
		t->hash = nh;
		t->hcap = cap;
	}
	h = (uint32_t)util_hash_str(s) & (t->hcap - 1);
	while (t->hash[h]) {
		if (strcmp(t->s[t->hash[h] - 1], s) == 0)
			return t->hash[h] - 1;
		h = (h + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **a = realloc(t->s, sizeof(*a) * cap);

		if (!a)
			return -2;
		t->s = a;
		t->cap = cap;
	}
	t->s[t->n] = strdup(s);
	if (!t->s[t->n])
		return -2;
	t->hash[h] = ++t->n;
	return t->n - 1;
}

static void strtab_free(struct strtab *t)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->hash);
}

/* A string member of a loc, by index; false when out of memory. */
static bool str_ref(struct html *h, struct json_writer *w, const char *s)
{
	int64_t i = str_index(&h->strs, s);

	if (i == -2)
		return false;
	jsonw_int(w, i);
	return true;
}

/* "stk": {"<sample>": [loc, ...]} leaf first, with loc indices of the data's own "locs". */
static void write_stacks(struct html *h, struct json_writer *w)
{
	const struct profile *p = h->p;
	char key[16];
	uint32_t i, j;

	jsonw_name(w, "stk");
	jsonw_start_object(w);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!h->want[i])
			continue;
		snprintf(key, sizeof(key), "%" PRIu32, i);
		jsonw_name(w, key);
		jsonw_start_array_flat(w);
		for (j = 0; j < s->nlocs; j++) {
			uint32_t l = s->locs[j];

			if (h->loc_id[l] == NONE) {
				h->loc_id[l] = h->nlocs;
				h->locs[h->nlocs++] = l;
			}
			jsonw_uint(w, h->loc_id[l]);
		}
		jsonw_end_array(w);
	}
	jsonw_end_object(w);
}

/* name: {"<sample>": [[label, count], ...]} for the non-empty buckets of the wanted samples'
 * sizes ("hist") or lifetimes ("life"). */
static void write_buckets(const struct html *h, struct json_writer *w, const char *name,
			  bool life)
{
	const struct profile *p = h->p;
	char key[16], label[96];
	const uint64_t *c;
	uint32_t i, b, n;

	jsonw_name(w, name);
	jsonw_start_object(w);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		c = life ? s->life : s->hist;
		n = life ? s->nlife : s->nhist;
		if (!h->want[i] || !c || !n)
			continue;
		snprintf(key, sizeof(key), "%" PRIu32, i);
		jsonw_name(w, key);
		jsonw_start_array_flat(w);
		/* buckets past 64 cannot hold a 64-bit value */
		for (b = 0; b < n && b <= 64; b++) {
			if (!c[b])
				continue;
			(life ? render__life_bucket_label : render__size_bucket_label)(b, n, label,
									   sizeof(label));
			jsonw_start_array(w);
			jsonw_string(w, label);
			jsonw_uint(w, c[b]);
			jsonw_end_array(w);
		}
		jsonw_end_array(w);
	}
	jsonw_end_object(w);
}

/* "temp": {"<sample>": [temporary, allocations (0: unknown)]} for the wanted samples that
 * have temporaries or lifetimes. */
static void write_temps(const struct html *h, struct json_writer *w)
{
	const struct profile *p = h->p;
	char key[16];
	uint32_t i;

	jsonw_name(w, "temp");
	jsonw_start_object(w);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!h->want[i] || (!s->temporary && !s->life))
			continue;
		snprintf(key, sizeof(key), "%" PRIu32, i);
		jsonw_name(w, key);
		jsonw_start_array_flat(w);
		jsonw_uint(w, s->temporary);
		jsonw_int(w, allocations(h, s));
		jsonw_end_array(w);
	}
	jsonw_end_object(w);
}

/* "locs": [[module, address, [function, file, line, flags], ...], ...], lines innermost
 * first; strings as indices into "strs" (-1: none); flags 1 allocator, 2 not symbolized,
 * 4 synthetic (no code: a thread, a lock, an event, [truncated], as the flame graph says). */
static int write_locs(struct html *h, struct json_writer *w)
{
	const struct profile *p = h->p;
	char name[512], addr[24];
	uint32_t i, j;

	jsonw_name(w, "locs");
	jsonw_start_array(w);
	for (i = 0; i < h->nlocs; i++) {
		const struct prof_location *loc = &p->locations[h->locs[i]];
		const char *mod = loc->mapping != PROF_NONE ?
			render__basename(p->mappings[loc->mapping].file) : NULL;

		jsonw_start_array_flat(w);
		if (!str_ref(h, w, mod))
			return -ENOMEM;
		/* a synthetic frame has no address (its tooltip none) */
		if (profile__location_is_synthetic(loc))
			addr[0] = 0;
		else
			snprintf(addr, sizeof(addr), "0x%" PRIx64, loc->address);
		jsonw_string(w, addr);
		for (j = 0; j < (loc->nlines ? loc->nlines : 1); j++) {
			const struct prof_function *fn = j < loc->nlines ?
				&p->functions[loc->lines[j].function] : NULL;

			jsonw_start_array(w);
			if (!str_ref(h, w, profile__frame_name(p, loc, j, name, sizeof(name))) ||
			    !str_ref(h, w, fn ? fn->filename : NULL))
				return -ENOMEM;
			jsonw_int(w, fn ? loc->lines[j].line : 0);
			jsonw_uint(w, !fn ? 2 : profile__location_is_synthetic(loc) ? 4 :
				   render__is_allocator(fn->name) ? 1 : 0);
			jsonw_end_array(w);
		}
		jsonw_end_array(w);
	}
	jsonw_end_array(w);
	return 0;
}

/*
 * Indices of the points of a series to draw: all of them when few, else the first, the last,
 * and per bucket of consecutive points its lowest and highest in time order, so that peaks
 * survive the thinning. out has room for 2 * SERIES_BUCKETS + 2; returns the count.
 */
static uint32_t thin_series(const struct prof_series *s, uint32_t *out)
{
	uint32_t per = (s->n + SERIES_BUCKETS - 1) / SERIES_BUCKETS, a, i, n = 0;

	if (s->n <= 2 * SERIES_BUCKETS) {
		for (i = 0; i < s->n; i++)
			out[n++] = i;
		return n;
	}
	out[n++] = 0;
	for (a = 0; a < s->n; a += per) {
		uint32_t end = a + per < s->n ? a + per : s->n, lo = a, hi = a;

		for (i = a; i < end; i++) {
			lo = s->v[i] < s->v[lo] ? i : lo;
			hi = s->v[i] > s->v[hi] ? i : hi;
		}
		if (hi < lo) {
			i = lo;
			lo = hi;
			hi = i;
		}
		if (lo != out[n - 1])
			out[n++] = lo;
		if (hi != out[n - 1])
			out[n++] = hi;
	}
	if (out[n - 1] != s->n - 1)
		out[n++] = s->n - 1;
	return n;
}

/* "series": [{"name", "unit", "pid", "label", "t": [ns...], "v": [...]}, ...] */
static int write_series_data(const struct html *h, struct json_writer *w)
{
	const struct profile *p = h->p;
	uint32_t *pts, i, j, n;
	char label[128];

	pts = malloc(sizeof(*pts) * (2 * SERIES_BUCKETS + 2));
	if (!pts)
		return -ENOMEM;
	jsonw_name(w, "series");
	jsonw_start_array(w);
	for (i = 0; i < p->nseries; i++) {
		const struct prof_series *s = &p->series[i];
		const char *comm = comm_of(p, s->pid);

		jsonw_start_object_flat(w);
		jsonw_string_field(w, "name", s->name);
		jsonw_string_field(w, "unit", s->unit);
		jsonw_uint_field(w, "pid", s->pid);
		/* pid 0: every traced process together (it read "? (0)") */
		if (!s->pid && !comm)
			snprintf(label, sizeof(label), "all processes");
		else
			snprintf(label, sizeof(label), "%s (%" PRIu32 ")", comm ? comm : "?", s->pid);
		jsonw_string_field(w, "label", label);
		n = thin_series(s, pts);
		jsonw_name(w, "t");
		jsonw_start_array(w);
		for (j = 0; j < n; j++)
			jsonw_int(w, s->t_ns[pts[j]]);
		jsonw_end_array(w);
		jsonw_name(w, "v");
		jsonw_start_array(w);
		for (j = 0; j < n; j++)
			jsonw_int(w, s->v[pts[j]]);
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	free(pts);
	return 0;
}

/* "peaks": [{"pid", "t", "v"}] the exact peak of each process that has a time for it, for the
 * live-bytes chart's markers. */
static void write_peaks_data(const struct html *h, struct json_writer *w)
{
	const struct profile *p = h->p;
	uint32_t i;

	jsonw_name(w, "peaks");
	jsonw_start_array(w);
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_peak *pk = &p->processes[i].peak;

		if (!pk->known || pk->t_ns < 0)
			continue;
		jsonw_start_object_flat(w);
		jsonw_uint_field(w, "pid", p->processes[i].pid);
		jsonw_int_field(w, "t", pk->t_ns);
		jsonw_uint_field(w, "v", pk->bytes);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* The data the script reads, as one JSON document in a script element. */
static int write_data(struct html *h)
{
	const struct profile *p = h->p;
	struct json_writer *w;
	char *buf = NULL;
	size_t len = 0;
	uint32_t i;
	FILE *m;
	int err;

	m = open_memstream(&buf, &len);
	if (!m)
		return -errno;
	w = jsonw__new(m, false);
	if (!w) {
		fclose(m);
		free(buf);
		return -ENOMEM;
	}
	jsonw_start_object(w);
	jsonw_int_field(w, "duration", p->duration_nanos);
	write_peaks_data(h, w);
	err = write_series_data(h, w);
	if (!err) {
		write_stacks(h, w);
		write_buckets(h, w, "hist", false);
		write_buckets(h, w, "life", true);
		write_temps(h, w);
		err = write_locs(h, w);
	}
	if (!err) {
		/* last: the locs above add to it */
		jsonw_name(w, "strs");
		jsonw_start_array(w);
		for (i = 0; i < h->strs.n; i++)
			jsonw_string(w, h->strs.s[i]);
		jsonw_end_array(w);
		jsonw_end_object(w);
		err = jsonw__error(w);
	}
	jsonw__free(w);
	if (fclose(m) && !err)
		err = -EIO;
	if (!err) {
		fputs("<script type=\"application/json\" id=\"ebprof-data\">", h->f);
		script_data(h->f, buf, len, true);
		fputs("</script>\n", h->f);
	}
	free(buf);
	return err;
}

static int html_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	static const struct output_opts defaults;
	struct html h = {
		.p = p, .o = o ? o : &defaults, .f = f,
		.alloc_space = profile__type_index(p, "alloc_space"),
		.inuse_objects = profile__type_index(p, "inuse_objects"),
		.count_type = p->ntypes ? render__count_type(p) : -1,
		.diff = profile__is_diff(p),
		.offcpu = profile__type_index(p, "offcpu") >= 0,
	};
	int err = -ENOMEM;

	if (p->nparts)
		return render__set_html(p, o, f);
	if (h.o->value_type && profile__type_index(p, h.o->value_type) < 0)
		return -EINVAL;
	h.want = calloc(p->nsamples + 1, sizeof(*h.want));
	h.loc_id = malloc(sizeof(*h.loc_id) * (p->nlocations + 1));
	h.locs = malloc(sizeof(*h.locs) * (p->nlocations + 1));
	if (!h.want || !h.loc_id || !h.locs)
		goto out;
	memset(h.loc_id, 0xff, sizeof(*h.loc_id) * (p->nlocations + 1));
	/* a comparison's stacks carry its four numbers alone */
	h.temps = !h.diff && has_temporaries(&h);
	for (uint32_t i = 0; i < p->nsamples && !h.growth && !h.diff; i++)
		h.growth = p->samples[i].growth.trend != PROF_TREND_NONE;

	write_head(&h);
	write_header(&h);
	err = write_processes(&h);
	if (!err)
		err = write_groups(&h);
	if (err)
		goto out;
	write_series(&h);
	err = write_sites(&h);
	if (!err)
		err = write_flames(&h);
	if (!err)
		err = write_outstanding(&h);
	if (!err)
		err = write_leaks(&h);
	if (err)
		goto out;
	write_drops(&h);
	write_notes(&h);
	fputs("</div>\n", f);
	err = write_data(&h);
	if (err)
		goto out;
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", asset_report_js);
	err = ferror(f) ? -EIO : 0;
out:
	strtab_free(&h.strs);
	free(h.locs);
	free(h.loc_id);
	free(h.want);
	return err;
}

const struct output_ops output_html = {
	.name = "html",
	.ext = ".html",
	.write = html_write,
};
