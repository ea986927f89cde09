/* The text report of a comparison (`ebprof diff`, a profile__is_diff() profile), for humans:
 * what was compared, the totals before and after, how many stacks grew, shrank, appeared or
 * vanished, and a table of the stacks whose value changed most, by absolute change.
 *
 * A stack is shown by its top frames, leaf first, from the first that tells stacks apart (see
 * stack_text): for an allocation the leaf is the allocator (malloc, operator new, ...), the same
 * for most stacks, so the allocator frames are left out and the one the program called is named
 * in brackets at the end instead; so is another mode's synthetic leaf (the event, the lock).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"

#define TOP_FRAMES 4
#define CELL 64

struct change {
	uint32_t sample;
	int64_t base, new, delta;
	char *stack;		/* the STACK column */
};

/* An amount in the compared unit, short: "1.2 MiB", "12.5 ms", "1200", "17 widgets". */
static const char *amount(const char *unit, int64_t v, bool sign, char *buf, size_t len)
{
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
	const char *s = v < 0 ? "-" : sign && v > 0 ? "+" : "";
	char a[32];

	if (strcmp(unit, "bytes") == 0)
		snprintf(buf, len, "%s%s", s, render__bytes(m, a, sizeof(a)));
	else if (strcmp(unit, "nanoseconds") == 0)
		snprintf(buf, len, "%s%s", s, render__duration(m, a, sizeof(a)));
	else if (strcmp(unit, "count") == 0)
		snprintf(buf, len, "%s%" PRIu64, s, m);
	else
		snprintf(buf, len, "%s%" PRIu64 " %s", s, m, unit);
	return buf;
}

/* ... with the exact number too where the short form rounds: "1.2 MiB (1258291 bytes)". */
static const char *exact(const char *unit, int64_t v, bool sign, char *buf, size_t len)
{
	char a[48];

	amount(unit, v, sign, a, sizeof(a));
	if (strcmp(unit, "bytes") == 0 && (v >= 1024 || v <= -1024))
		snprintf(buf, len, "%s (%s%" PRId64 " bytes)", a, sign && v > 0 ? "+" : "", v);
	else if (strcmp(unit, "nanoseconds") == 0 && (v >= 1000 || v <= -1000))
		snprintf(buf, len, "%s (%s%" PRId64 " ns)", a, sign && v > 0 ? "+" : "", v);
	else
		snprintf(buf, len, "%s", a);
	return buf;
}

static const char *percent(int64_t base, int64_t new, char *buf, size_t len)
{
	uint64_t mag = base < 0 ? -(uint64_t)base : (uint64_t)base;

	if (base == new)
		snprintf(buf, len, "0.0%%");
	else if (!base)
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%", 100.0 * ((double)new - (double)base) / (double)mag);
	return buf;
}

static bool is_alloc(const struct profile *p, const struct prof_location *loc)
{
	return loc->nlines && render__is_allocator(p->functions[loc->lines[0].function].name);
}

/* A frame a mode names (an event, a lock, a disk, a thread, a waker): no mapping, no source. */
static bool is_synthetic(const struct profile *p, const struct prof_location *loc)
{
	const char *file = loc->nlines ? p->functions[loc->lines[0].function].filename : NULL;

	return loc->mapping == PROF_NONE && loc->nlines == 1 && (!file || !*file);
}

/* A frame of the program: neither the kernel's nor one a mode named. */
static bool is_user(const struct profile *p, const struct prof_location *loc)
{
	return !profile__location_is_kernel(p, loc) && !is_synthetic(p, loc);
}

static void bracket(FILE *f, const struct profile *p, uint32_t loc)
{
	char name[512];

	fprintf(f, " [%s]", profile__frame_name(p, &p->locations[loc], 0, name, sizeof(name)));
}

/*
 * "site <- caller <- caller <- ... [what]" of a diff sample (one frame per location): its top
 * frames from the first one that tells stacks apart. Leading frames that most stacks share are
 * left out: the allocator frames (the one the program called in brackets), a mode's synthetic
 * leaf (the event, lock or disk, in brackets), and kernel frames when the program's own follow
 * (in a non-mem mode every stack starts with the event's, the scheduler's or a syscall's); the
 * frames past offcpu's "--" are the blocked stack, the waker's name in brackets.
 */
static char *stack_text(const struct profile *p, const struct prof_sample *s)
{
	uint32_t own = render__own_leaf(p, s), i = own, j, shown = 0, what = UINT32_MAX;
	char name[512], *buf = NULL;
	size_t n = 0;
	FILE *f;

	if (!s->nlocs)
		return strdup("(no stack)");
	f = open_memstream(&buf, &n);
	if (!f)
		return NULL;
	/* a stack of nothing but allocator frames is shown whole */
	while (i < s->nlocs && is_alloc(p, &p->locations[s->locs[i]]))
		i++;
	if (i < s->nlocs && i > own)
		what = s->locs[i - 1];
	else
		i = own;
	if (what == UINT32_MAX && i + 1 < s->nlocs && is_synthetic(p, &p->locations[s->locs[i]]))
		what = s->locs[i++];
	for (j = i; j < s->nlocs && profile__location_is_kernel(p, &p->locations[s->locs[j]]); j++)
		;
	if (j < s->nlocs && is_user(p, &p->locations[s->locs[j]]))
		i = j;
	for (; i < s->nlocs; i++) {
		if (shown == TOP_FRAMES) {
			fputs(" <- ...", f);
			break;
		}
		profile__frame_name(p, &p->locations[s->locs[i]], 0, name, sizeof(name));
		fprintf(f, "%s%s", shown++ ? " <- " : "", name);
	}
	if (what != UINT32_MAX)
		bracket(f, p, what);
	if (own && is_synthetic(p, &p->locations[s->locs[0]]))
		bracket(f, p, s->locs[0]);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int cmp_changes(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	uint64_t mx = x->delta < 0 ? -(uint64_t)x->delta : (uint64_t)x->delta;
	uint64_t my = y->delta < 0 ? -(uint64_t)y->delta : (uint64_t)y->delta;
	int c;

	if (mx != my)
		return mx > my ? -1 : 1;
	/* growth before shrinkage of the same size, then by what the column shows */
	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	c = strcmp(x->stack, y->stack);
	if (c)
		return c;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

static void print_header(const struct profile *p, FILE *f, int64_t base, int64_t new,
			 const uint32_t count[5])
{
	const char *unit = p->types[PROF_DIFF_MAX].unit;
	char b[96], w[96], d[96], pc[32];

	fprintf(f, "ebprof diff: %s (%s)\n", p->types[PROF_DIFF_MAX].type, unit);
	if (p->command)
		fprintf(f, "  Compared:  %s\n", p->command);
	fprintf(f, "  Total:     %s -> %s\n", exact(unit, base, false, b, sizeof(b)),
		exact(unit, new, false, w, sizeof(w)));
	fprintf(f, "  Change:    %s, %s\n", exact(unit, prof_sub(new, base), true, d, sizeof(d)),
		percent(base, new, pc, sizeof(pc)));
	fprintf(f, "  Stacks:    %" PRIu32 ": %" PRIu32 " grew, %" PRIu32 " shrank, %" PRIu32
		" appeared, %" PRIu32 " vanished, %" PRIu32 " unchanged\n",
		count[0] + count[1] + count[2] + count[3] + count[4], count[0], count[1], count[2],
		count[3], count[4]);
}

static void print_table(const struct profile *p, FILE *f, const struct change *c, uint32_t n)
{
	static const char *const head[] = { "DELTA", "DELTA%", "BASE", "NEW" };
	const char *unit = p->types[PROF_DIFF_MAX].unit;
	unsigned int width[4], l;
	char cell[4][CELL];
	uint32_t i;
	int k, pass;

	for (k = 0; k < 4; k++)
		width[k] = strlen(head[k]);
	/* pass 0 measures, pass 1 prints */
	for (pass = 0; pass < 2; pass++) {
		if (pass) {
			fputs("  ", f);
			for (k = 0; k < 4; k++)
				fprintf(f, "%*s  ", (int)width[k], head[k]);
			fputs("STACK (leaf first)\n", f);
		}
		for (i = 0; i < n; i++) {
			amount(unit, c[i].delta, true, cell[0], CELL);
			percent(c[i].base, c[i].new, cell[1], CELL);
			amount(unit, c[i].base, false, cell[2], CELL);
			amount(unit, c[i].new, false, cell[3], CELL);
			for (k = 0; k < 4; k++) {
				l = strlen(cell[k]);
				if (!pass && l > width[k])
					width[k] = l;
			}
			if (!pass)
				continue;
			fputs("  ", f);
			for (k = 0; k < 4; k++)
				fprintf(f, "%*s  ", (int)width[k], cell[k]);
			fprintf(f, "%s\n", c[i].stack);
		}
	}
}

static int diff_text_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	uint32_t count[5] = { 0 }, n = 0, shown, i;	/* grew, shrank, appeared, vanished, same */
	int64_t base = 0, new = 0;
	struct change *c;
	int err = 0;

	if (!profile__is_diff(p))
		return -EINVAL;
	c = calloc(p->nsamples + 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++) {
		const int64_t *v = p->samples[i].values;

		base = prof_add(base, v[PROF_DIFF_BASE]);
		new = prof_add(new, v[PROF_DIFF_NEW]);
		if (v[PROF_DIFF_BASE] == v[PROF_DIFF_NEW]) {
			count[4]++;
			continue;
		}
		if (!v[PROF_DIFF_BASE])
			count[2]++;
		else if (!v[PROF_DIFF_NEW])
			count[3]++;
		else if (v[PROF_DIFF_NEW] > v[PROF_DIFF_BASE])
			count[0]++;
		else
			count[1]++;
		c[n] = (struct change){ .sample = i, .base = v[PROF_DIFF_BASE],
					.new = v[PROF_DIFF_NEW],
					.delta = prof_sub(v[PROF_DIFF_NEW], v[PROF_DIFF_BASE]) };
		c[n].stack = stack_text(p, &p->samples[i]);
		if (!c[n++].stack) {
			err = -ENOMEM;
			goto out;
		}
	}
	qsort(c, n, sizeof(*c), cmp_changes);

	print_header(p, f, base, new, count);
	fputc('\n', f);
	shown = o && o->top && o->top < n ? o->top : n;
	if (!n)
		fprintf(f, "No changes: every stack has the same %s in both profiles.\n",
			p->types[PROF_DIFF_MAX].type);
	else if (shown < n)
		fprintf(f, "Top %" PRIu32 " change%s by size (of %" PRIu32 ")\n\n", shown,
			shown == 1 ? "" : "s", n);
	else
		fprintf(f, "%" PRIu32 " change%s by size\n\n", n, n == 1 ? "" : "s");
	if (n)
		print_table(p, f, c, shown);
	if (p->nnotes) {
		char buf[PROF_NOTE_MAX];

		fputs("\nNotes\n", f);
		for (i = 0; i < p->nnotes; i++)
			fprintf(f, "  - %s\n", profile__note(p, i, buf, sizeof(buf)));
	}
	err = ferror(f) ? -EIO : 0;
out:
	for (i = 0; i < n; i++)
		free(c[i].stack);
	free(c);
	return err;
}

const struct output_ops output_diff_text = {
	.name = "diff text",
	.ext = ".txt",
	.write = diff_text_write,
};
