/* Helpers shared by the renderers; see render.h. */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "output/render.h"

struct sort_ctx {
	const struct profile *p;
	int key;
};

static int64_t key_of(const struct profile *p, const struct prof_sample *s, int key)
{
	int64_t d;

	if (key == RENDER_KEY_OUTSTANDING)
		return s->out.bytes > INT64_MAX ? INT64_MAX : (int64_t)s->out.bytes;
	if (key == RENDER_KEY_CHANGE) {
		/* |delta| in the high bits, its sign as the lowest: growth first among equals */
		d = s->values[PROF_DIFF_DELTA];
		d = d < 0 ? (d < -(INT64_MAX >> 1) ? INT64_MAX >> 1 : -d) * 2 :
			    (d > INT64_MAX >> 1 ? INT64_MAX >> 1 : d) * 2 + 1;
		return d;
	}
	return s->values[key];
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

static int cmp_location(const struct profile *p, uint32_t ia, uint32_t ib)
{
	const struct prof_location *a = &p->locations[ia], *b = &p->locations[ib];
	uint32_t j, n = a->nlines < b->nlines ? a->nlines : b->nlines;
	char ba[256], bb[256];
	int c;

	if (ia == ib)
		return 0;
	/* by names first, so the order does not depend on the order of interning */
	for (j = 0; j < n; j++) {
		const struct prof_function *fa = &p->functions[a->lines[j].function];
		const struct prof_function *fb = &p->functions[b->lines[j].function];

		c = cmp_str(fa->name, fb->name);
		if (!c)
			c = cmp_str(fa->filename, fb->filename);
		if (!c && a->lines[j].line != b->lines[j].line)
			c = a->lines[j].line < b->lines[j].line ? -1 : 1;
		if (c)
			return c;
	}
	if (a->nlines != b->nlines)
		return a->nlines < b->nlines ? -1 : 1;
	if (!n) {
		c = strcmp(profile__frame_name(p, a, 0, ba, sizeof(ba)),
			   profile__frame_name(p, b, 0, bb, sizeof(bb)));
		if (c)
			return c;
	}
	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return 0;
}

static int cmp_samples(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *ctx = arg;
	const struct profile *p = ctx->p;
	uint32_t ix = *(const uint32_t *)x, iy = *(const uint32_t *)y;
	const struct prof_sample *a = &p->samples[ix], *b = &p->samples[iy];
	int64_t ka = key_of(p, a, ctx->key), kb = key_of(p, b, ctx->key);
	uint32_t i, n;
	int c;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	n = a->nlocs < b->nlocs ? a->nlocs : b->nlocs;
	for (i = 0; i < n; i++) {
		c = cmp_location(p, a->locs[i], b->locs[i]);
		if (c)
			return c;
	}
	if (a->nlocs != b->nlocs)
		return a->nlocs < b->nlocs ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	/* a total order keeps qsort's output deterministic */
	return ix < iy ? -1 : ix > iy;
}

uint32_t *render__sorted_samples(const struct profile *p, int key, bool nonzero, uint32_t *n)
{
	struct sort_ctx ctx = { .p = p, .key = key };
	uint32_t *idx, i, k = 0;

	if (key == RENDER_KEY_CHANGE && !profile__is_diff(p))
		key = -2;
	if (key != RENDER_KEY_OUTSTANDING && key != RENDER_KEY_CHANGE &&
	    (key < 0 || (uint32_t)key >= p->ntypes)) {
		/* nothing to rank by: keep the order of the profile */
		key = -2;
	}
	idx = malloc(sizeof(*idx) * (p->nsamples ? p->nsamples : 1));
	if (!idx)
		return NULL;
	for (i = 0; i < p->nsamples; i++) {
		if (key == -2) {
			idx[k++] = i;
			continue;
		}
		if (nonzero && key_of(p, &p->samples[i], key) == 0)
			continue;
		idx[k++] = i;
	}
	if (key != -2)
		qsort_r(idx, k, sizeof(*idx), cmp_samples, &ctx);
	*n = k;
	return idx;
}

uint32_t render__own_leaf(const struct profile *p, const struct prof_sample *s)
{
	for (uint32_t k = 0; k < s->nlocs; k++) {
		const struct prof_location *l = &p->locations[s->locs[k]];

		if (l->mapping == PROF_NONE && l->nlines == 1 &&
		    !strcmp(p->functions[l->lines[0].function].name, "--"))
			return k + 1 < s->nlocs ? k + 1 : 0;
	}
	return 0;
}

int render__count_type(const struct profile *p)
{
	uint32_t i;
	size_t l;

	for (i = 0; i < p->ntypes; i++) {
		l = strlen(p->types[i].type);
		if (l >= 8 && strcmp(p->types[i].type + l - 8, "_objects") == 0)
			return (int)i;
	}
	for (i = 0; i < p->ntypes; i++) {
		if (strcmp(p->types[i].unit, "count") == 0)
			return (int)i;
	}
	return (int)p->default_type;
}

const char *render__bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = (double)v / 1024;
	unsigned int u = 0;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return buf;
	}
	/* 1023.96 KiB would print as "1024.0 KiB" */
	while (d >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", d, units[u]);
	return buf;
}

const char *render__duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 999950)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 999950000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else if (ns < 59995000000ULL)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns < 3600000000000ULL)
		snprintf(buf, len, "%um %02us", (unsigned int)(ns / 60000000000ULL),
			 (unsigned int)(ns / 1000000000ULL % 60));
	else
		snprintf(buf, len, "%" PRIu64 "h %02um", ns / UINT64_C(3600000000000),
			 (unsigned int)(ns / 60000000000ULL % 60));
	return buf;
}

const char *render__run_duration(const struct profile *p, char *buf, size_t len)
{
	if (p->duration_nanos <= 0) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	return render__duration((uint64_t)p->duration_nanos, buf, len);
}

bool render__bucket(uint32_t b, uint32_t n, uint64_t *min, uint64_t *max)
{
	if (b == 0) {
		*min = *max = 0;
		return n > 1;
	}
	*min = b > 64 ? UINT64_MAX : 1ULL << (b - 1);
	*max = b >= 64 ? UINT64_MAX : (1ULL << b) - 1;
	return b + 1 < n && b < 64;
}

bool render__is_map_sample(const struct profile *p, const struct prof_sample *s)
{
	int t = profile__type_index(p, "mmap_objects");

	return t >= 0 && s->values[t] > 0;
}

bool render__is_allocator(const char *name)
{
	static const char *const exact[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc",
		"memalign", "posix_memalign", "valloc", "pvalloc", "cfree", "strdup", "strndup",
		"__strdup", "__strndup", "__libc_malloc", "__libc_calloc", "__libc_realloc",
		"__libc_free", "__libc_memalign", "__libc_valloc", "__libc_pvalloc",
		"__libc_reallocarray",
		/* the usual never-fail wrappers: the caller of xmalloc is the allocation site */
		"xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup", "xmemdup",
		/* --mmap: the mapping category's leaves and glibc's wrappers around them */
		"mmap", "mmap64", "__mmap", "__mmap64", "mremap", "__mremap", "brk", "__brk",
		"sbrk", "__sbrk",
	};
	/* glibc internals, C++ operators, jemalloc/tcmalloc entry points, sanitizer wrappers */
	static const char *const prefix[] = {
		/* not "__libc_": __libc_start_main and __libc_start_call_main are no allocators */
		"operator new", "__GI___libc_", "_int_", "je_", "tc_",
		"__interceptor_", "__posix_memalign",
	};
	size_t i;

	if (!name)
		return false;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (strcmp(name, exact[i]) == 0)
			return true;
	}
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return true;
	}
	return false;
}

const char *render__basename(const char *path)
{
	const char *s;

	if (!path)
		return NULL;
	s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* A power of two in the largest binary unit that divides it exactly: "64 B", "2 KiB". */
static const char *pow2_label(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;

	while (v >= 1024 && v % 1024 == 0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", v, units[u]);
	return buf;
}

/* "[lo, hi)", the zero bucket's label, or ">= lo" for the open last bucket. */
static void bucket_label(uint32_t b, uint32_t n, char *buf, size_t len, const char *zero,
			 const char *(*fmt)(uint64_t v, char *buf, size_t len))
{
	char lo[32], hi[32];
	uint64_t min, max;

	if (!render__bucket(b, n, &min, &max))
		snprintf(buf, len, ">= %s", fmt(min, lo, sizeof(lo)));
	else if (b == 0)
		snprintf(buf, len, "%s", zero);
	else
		snprintf(buf, len, "[%s, %s)", fmt(min, lo, sizeof(lo)), fmt(max + 1, hi, sizeof(hi)));
}

void render__size_bucket_label(uint32_t b, uint32_t n, char *buf, size_t len)
{
	bucket_label(b, n, buf, len, "0 B", pow2_label);
}

void render__life_bucket_label(uint32_t b, uint32_t n, char *buf, size_t len)
{
	bucket_label(b, n, buf, len, "0 ns", render__duration);
}

const char *render__amount(int64_t v, const char *unit, char *buf, size_t len)
{
	char tmp[32];

	if (unit && !strcmp(unit, "nanoseconds") && v >= 0)
		return render__duration((uint64_t)v, buf, len);
	if (unit && !strcmp(unit, "bytes") && v >= 0)
		return render__bytes((uint64_t)v, buf, len);
	if (!unit || !strcmp(unit, "count")) {
		snprintf(buf, len, "%" PRId64, v);
		return buf;
	}
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	snprintf(buf, len, "%s %s", tmp, unit);
	return buf;
}

bool render__is_alloc_profile(const struct profile *p)
{
	if (!strcmp(p->mode, "mem") || !strcmp(p->mode, "kmem"))
		return true;
	/* a diff of allocations: mem's and kmem's types are all COUNT_objects and BYTES_space
	 * (a diff of cpu samples, waits or requests has no temporaries or outstanding blocks) */
	if (profile__is_diff(p)) {
		const char *t = p->ntypes > PROF_DIFF_MAX ? p->types[PROF_DIFF_MAX].type : "";
		size_t n = strlen(t);

		return (n > 8 && !strcmp(t + n - 8, "_objects")) ||
		       (n > 6 && !strcmp(t + n - 6, "_space"));
	}
	/* a heap profile of another tool, read back by `ebprof report` */
	return !strcmp(p->mode, "pprof") && profile__type_index(p, "alloc_objects") >= 0 &&
	       profile__type_index(p, "alloc_space") >= 0;
}

bool render__outstanding_known(const struct profile *p)
{
	return !p->from_pprof || !strcmp(p->mode, "mem") || !strcmp(p->mode, "kmem");
}

bool render__traces_calls(const struct profile *p)
{
	return render__is_alloc_profile(p) && strcmp(p->mode, "kmem");
}

void render__text_vheading(FILE *f, bool color, const char *fmt, va_list ap)
{
	if (color)
		fputs("\033[1m", f);
	vfprintf(f, fmt, ap);
	if (color)
		fputs("\033[0m", f);
	fputc('\n', f);
}

static void text_heading(FILE *f, bool color, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render__text_vheading(f, color, fmt, ap);
	va_end(ap);
}

void render__text_header(FILE *f, const struct profile *p, bool color)
{
	char buf[64];
	uint32_t i;
	int w;

	text_heading(f, color, "ebprof report");
	fprintf(f, "  Mode:      %s\n", p->mode);
	fprintf(f, "  Command:   %s\n", p->command ? p->command : "(none)");
	if (p->time_nanos > 0) {
		time_t sec = p->time_nanos / 1000000000;
		struct tm tm;

		/* UTC keeps reports comparable across machines */
		if (gmtime_r(&sec, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
			fprintf(f, "  Started:   %s\n", buf);
	}
	fprintf(f, "  Duration:  %s\n", render__run_duration(p, buf, sizeof(buf)));
	fprintf(f, "  Kernel:    %s\n", p->kernel ? p->kernel : "unknown");
	/* the run's facts (profile__add_info), their values in one column past the longest key */
	for (i = 0, w = 10; i < p->ninfo; i++)
		if ((int)strlen(p->info[i].key) + 1 > w)
			w = (int)strlen(p->info[i].key) + 1;
	for (i = 0; i < p->ninfo; i++)
		fprintf(f, "  %s:%*s %s\n", p->info[i].key, w - 1 - (int)strlen(p->info[i].key), "",
			p->info[i].value);
	if (p->sampling && !strcmp(p->sampling, "bytes"))
		fprintf(f, "  Sampling:  one allocation per %" PRIu64 " bytes on average: counts "
			"and bytes are ESTIMATES\n", p->sample_period);
	else if (p->sampling && !strcmp(p->sampling, "every"))
		fprintf(f, "  Sampling:  every %" PRIu64 "th allocation of each thread: counts "
			"and bytes are ESTIMATES\n", p->sample_period);
	else if (p->sampling)
		fprintf(f, "  Sampling:  %s: calls and requested bytes only, no frees or live "
			"blocks\n", p->sampling);
	if (p->period_type.type && p->period > 0)
		fprintf(f, "  Period:    %s of %s per sample\n",
			render__amount(p->period, p->period_type.unit, buf, sizeof(buf)),
			p->period_type.type);
}

void render__text_drops(FILE *f, const struct profile *p, bool color, const char *tail)
{
	uint32_t n = 0;

	fputc('\n', f);
	for (uint32_t i = 0; i < p->ndrops; i++) {
		if (!p->drops[i].value)
			continue;
		if (!n++) {
			if (color)
				fputs("\033[1;33m", f);
			fputs("Drops:", f);
		}
		fprintf(f, "%s %s %" PRIu64, n > 1 ? "," : "", p->drops[i].key, p->drops[i].value);
	}
	if (!n) {
		fputs("Drops: none\n", f);
		return;
	}
	fprintf(f, " (%s)", tail);
	if (color)
		fputs("\033[0m", f);
	fputc('\n', f);
}

void render__text_notes(FILE *f, const struct profile *p, bool color)
{
	char buf[PROF_NOTE_MAX];

	if (!p->nnotes)
		return;
	fputc('\n', f);
	text_heading(f, color, "Notes");
	for (uint32_t i = 0; i < p->nnotes; i++)
		fprintf(f, "  - %s\n", profile__note(p, i, buf, sizeof(buf)));
}

/* A log2 histogram as labelled bars, non-empty buckets only (sizes, lifetimes, latencies). */
void render__text_buckets(FILE *f, const char *indent, const char *title, const uint64_t *c,
			  uint32_t n, render_label_fn label_of)
{
	unsigned int lw = 0, cw = 0, l;
	uint64_t maxc = 0;
	char label[80], num[32];
	uint32_t b;

	/* buckets past 64 cannot hold a 64-bit value */
	for (b = 0; b < n && b <= 64; b++) {
		if (!c[b])
			continue;
		label_of(b, n, label, sizeof(label));
		l = strlen(label);
		lw = l > lw ? l : lw;
		l = snprintf(num, sizeof(num), "%" PRIu64, c[b]);
		cw = l > cw ? l : cw;
		maxc = c[b] > maxc ? c[b] : maxc;
	}
	if (!maxc)
		return;
	fprintf(f, "%s%s:\n", indent, title);
	for (b = 0; b < n && b <= 64; b++) {
		uint64_t bar;

		if (!c[b])
			continue;
		label_of(b, n, label, sizeof(label));
		/* round to nearest, but never hide a non-empty bucket */
		bar = (c[b] * RENDER_BAR_WIDTH + maxc / 2) / maxc;
		if (!bar)
			bar = 1;
		fprintf(f, "%s  %-*s  %*" PRIu64 " ", indent, (int)lw, label, (int)cw, c[b]);
		while (bar--)
			fputc('#', f);
		fputc('\n', f);
	}
}

void render__text_frame(FILE *f, const struct profile *p, unsigned int indent, uint32_t no,
			const struct prof_location *loc, uint32_t line)
{
	char name[512];

	profile__frame_name(p, loc, line, name, sizeof(name));
	fprintf(f, "%*s#%" PRIu32 " %s", indent, "", no, name);
	if (line < loc->nlines) {
		const struct prof_function *fn = &p->functions[loc->lines[line].function];
		int64_t ln = loc->lines[line].line;

		if (fn->filename && ln > 0)
			fprintf(f, " (%s:%" PRId64 ")", fn->filename, ln);
		else if (fn->filename)
			fprintf(f, " (%s)", fn->filename);
		/* (a function named by its call frame range has its module in its name) */
		if (loc->mapping != PROF_NONE && !fn->cfi_named) {
			const char *file = p->mappings[loc->mapping].file;

			fprintf(f, file[0] == '[' ? " %s" : " [%s]", render__basename(file));
		}
		if (line + 1 < loc->nlines)
			fputs(" [inlined]", f);
	}
	if (profile__location_is_kernel(p, loc))
		fputs(" [k]", f);
	fputc('\n', f);
}

/* The user's LC_CTYPE (from LC_ALL, LC_CTYPE, LANG), for the width of names only: the process
 * keeps the C locale, every other byte it writes unchanged. (locale_t)0: none usable. */
static locale_t user_ctype;
static pthread_once_t user_ctype_once = PTHREAD_ONCE_INIT;

static void open_user_ctype(void)
{
	user_ctype = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
}

int render__width(const char *s)
{
	size_t n = 0, points = 0;
	bool ascii = true;
	int cols = -1;

	for (const char *c = s; *c; c++, n++) {
		points += ((unsigned char)*c & 0xc0) != 0x80;
		ascii &= !((unsigned char)*c & 0x80);
	}
	if (ascii)
		return (int)n;
	pthread_once(&user_ctype_once, open_user_ctype);
	if (user_ctype) {
		locale_t old = uselocale(user_ctype);

		/* a multibyte locale (UTF-8): wide characters (CJK) take two columns */
		if (MB_CUR_MAX > 1) {
			wchar_t *w = malloc((n + 1) * sizeof(*w));
			size_t k = w ? mbstowcs(w, s, n + 1) : (size_t)-1;

			if (k != (size_t)-1)
				cols = wcswidth(w, k);
			free(w);
		}
		uselocale(old);
	}
	/* no such locale, or not text in it: one column per UTF-8 code point */
	return cols >= 0 ? cols : (int)points;
}

int render__pad(const char *s, int cols)
{
	int w = render__width(s);

	return w >= cols ? 0 : cols + (int)strlen(s) - w;
}
