/* The differential flame graph: what svg.c draws differently when its profile is a diff
 * (profile__is_diff(), made by `ebprof diff`). The layout, the script and the file are svg.c's;
 * this file gives each frame its base and new values, a colour by how it changed, a tooltip
 * line and a legend.
 *
 * Frames are as wide as max(base, new) summed over their stacks (the diff profile's default
 * type), so code that vanished keeps a width and shows as blue instead of disappearing. Red is
 * growth, blue shrinkage, and the depth of the colour is the change relative to the larger of
 * the two values: a frame that appeared or vanished is fully coloured, one that doubled or
 * halved half way, one that moved by a percent barely tinted. Unchanged frames are grey.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame.h"
#include "output/render.h"

#define RGB_SAME 0xd8d8d8	/* unchanged: neutral grey */
#define RGB_GROW 0xd7301f	/* fully grown (appeared): red */
#define RGB_SHRINK 0x2c6fcf	/* fully shrunk (vanished): blue */
#define RGB_FAINT_GROW 0xfbe3de	/* the faintest change: barely tinted */
#define RGB_FAINT_SHRINK 0xdfe8f7

struct flame_diff {
	const struct flame *fl;
	int64_t *base, *new;	/* per node */
};

struct flame_diff *flame_diff__new(const struct flame *fl)
{
	const struct profile *p = fl->p;
	struct flame_diff *fd;
	uint32_t i;

	if (!profile__is_diff(p)) {
		errno = EINVAL;
		return NULL;
	}
	fd = calloc(1, sizeof(*fd));
	if (!fd)
		goto nomem;
	fd->fl = fl;
	fd->base = calloc(fl->nnodes + 1, sizeof(*fd->base));
	fd->new = calloc(fl->nnodes + 1, sizeof(*fd->new));
	if (!fd->base || !fd->new)
		goto nomem;
	for (i = 0; i < p->nsamples; i++) {
		uint32_t n = fl->leaf[i];

		if (n == FLAME_NONE)
			continue;
		fd->base[n] = prof_add(fd->base[n], p->samples[i].values[PROF_DIFF_BASE]);
		fd->new[n] = prof_add(fd->new[n], p->samples[i].values[PROF_DIFF_NEW]);
	}
	/* children come after their parents: one pass from the end sums them up */
	for (i = fl->nnodes; i-- > 1;) {
		uint32_t up = fl->nodes[i].parent;

		fd->base[up] = prof_add(fd->base[up], fd->base[i]);
		fd->new[up] = prof_add(fd->new[up], fd->new[i]);
	}
	return fd;
nomem:
	flame_diff__free(fd);
	errno = ENOMEM;
	return NULL;
}

void flame_diff__free(struct flame_diff *fd)
{
	if (!fd)
		return;
	free(fd->base);
	free(fd->new);
	free(fd);
}

static uint32_t mix(uint32_t from, uint32_t to, double t)
{
	uint32_t rgb = 0;
	int shift;

	for (shift = 16; shift >= 0; shift -= 8) {
		double a = (from >> shift) & 0xff, b = (to >> shift) & 0xff;

		rgb |= (uint32_t)(a + (b - a) * t + 0.5) << shift;
	}
	return rgb;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

uint32_t flame_diff__rgb(const struct flame_diff *fd, uint32_t n)
{
	int64_t b = fd->base[n], w = fd->new[n];
	uint64_t big = mag(b) > mag(w) ? mag(b) : mag(w);
	double rel = (double)w - (double)b;	/* w - b can overflow */

	if (b == w)
		return RGB_SAME;
	rel = (rel < 0 ? -rel : rel) / (double)big;
	if (rel > 1)
		rel = 1;
	return w > b ? mix(RGB_FAINT_GROW, RGB_GROW, rel) : mix(RGB_FAINT_SHRINK, RGB_SHRINK, rel);
}

/* A signed amount in the compared type's unit; sign "+" for deltas. */
static const char *amount(const struct flame *fl, int64_t v, bool sign, char *buf, size_t len)
{
	char a[64];

	flame__amount(fl, mag(v), a, sizeof(a));
	snprintf(buf, len, "%s%s", v < 0 ? "-" : sign && v > 0 ? "+" : "", a);
	return buf;
}

/* The short form for the subtitle: "1.2 MiB", "12.5 ms", "1200". */
static const char *short_amount(const struct flame *fl, int64_t v, bool sign, char *buf,
				size_t len)
{
	const char *unit = fl->type >= 0 ? fl->p->types[fl->type].unit : "count";
	const char *s = v < 0 ? "-" : sign && v > 0 ? "+" : "";
	char a[32];

	if (strcmp(unit, "bytes") == 0)
		snprintf(buf, len, "%s%s", s, render__bytes(mag(v), a, sizeof(a)));
	else if (strcmp(unit, "nanoseconds") == 0)
		snprintf(buf, len, "%s%s", s, render__duration(mag(v), a, sizeof(a)));
	else
		snprintf(buf, len, "%s%" PRIu64, s, mag(v));
	return buf;
}

static const char *percent(int64_t base, int64_t new, char *buf, size_t len)
{
	if (base == new)
		snprintf(buf, len, "unchanged");
	else if (!base)
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%",
			 100.0 * ((double)new - (double)base) / (double)mag(base));
	return buf;
}

const char *flame_diff__values(const struct flame_diff *fd, uint32_t n, char *buf, size_t len)
{
	char b[80], w[80], d[80], pc[32];
	int64_t base = fd->base[n], new = fd->new[n];

	snprintf(buf, len, "base %s, new %s, delta %s (%s)", amount(fd->fl, base, false, b, 80),
		 amount(fd->fl, new, false, w, 80),
		 amount(fd->fl, prof_sub(new, base), true, d, 80),
		 percent(base, new, pc, sizeof(pc)));
	return buf;
}

const char *flame_diff__summary(const struct flame_diff *fd, char *buf, size_t len)
{
	char b[40], w[40], d[40], pc[32];
	int64_t base = fd->base[0], new = fd->new[0];

	snprintf(buf, len, "base %s, new %s, delta %s (%s); widths: max(base, new)",
		 short_amount(fd->fl, base, false, b, 40), short_amount(fd->fl, new, false, w, 40),
		 short_amount(fd->fl, prof_sub(new, base), true, d, 40),
		 percent(base, new, pc, sizeof(pc)));
	return buf;
}

const struct flame_legend *flame_diff__legend(size_t *n)
{
	static const struct flame_legend legend[] = {
		{ RGB_GROW, "appeared" },
		{ 0xe98a7f, "doubled" },	/* half way from faint to full */
		{ RGB_FAINT_GROW, "grew a little" },
		{ RGB_SAME, "unchanged" },
		{ RGB_FAINT_SHRINK, "shrank a little" },
		{ 0x86ace3, "halved" },
		{ RGB_SHRINK, "vanished" },
	};

	*n = sizeof(legend) / sizeof(legend[0]);
	return legend;
}
