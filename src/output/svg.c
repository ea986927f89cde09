/* Flame graph (".svg"): a standalone interactive SVG drawn by ebprof itself from the call tree of
 * flame.c. One box per frame, as wide as its share of one sample type (the profile's default,
 * or output_opts.value_type), root at the bottom (or at the top with output_opts.inverted, an
 * icicle graph), siblings in name order. Boxes are coloured by what they are: user code warm
 * with a hue per module, inlined frames paler, allocator entry points green, kernel blue,
 * unsymbolized grey. Every box has a tooltip with its full name, value and share. A diff profile
 * (`ebprof diff`) becomes a differential flame graph: colours by change, base and new values in
 * the tooltips and its own legend, all from diff_svg.c.
 *
 * Frames narrower than MIN_FRACTION of the whole are not drawn; the narrow children of one
 * frame are drawn as one grey "[N narrow frames]" box when together they are wide enough. This
 * bounds the number of boxes per level, so a profile of 100k stacks stays a few MB.
 *
 * A small inline script (src/output/assets/flame.js: plain ES5, no network) adds click-to-zoom,
 * reset, regex search with the matched share, and fits the names to the boxes. Without it the
 * file is still a picture.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/assets.h"
#include "output/flame.h"
#include "output/output.h"
#include "output/render.h"
#include "util/util.h"

#define WIDTH 1200		/* px; what flame graph readers are used to */
#define XPAD 10
#define FRAME_H 16		/* px per level, 1 px of it a gap */
#define TOP 56			/* title, subtitle and buttons */
#define BOTTOM 48		/* details line and legend */
#define FONT_PX 12
#define CHAR_W 7.2		/* monospace advance at FONT_PX (0.6 em); the script measures it */
#define MIN_FRACTION 0.001	/* 1.2 px at WIDTH */
#define SUB_MAX_CHARS 110	/* of the command in the subtitle, to leave room for the total */
#define HIGHLIGHT "#e600e6"

struct svg {
	const struct flame *fl;
	FILE *f;
	bool inverted;
	double scale;		/* px per unit of value */
	double min_value;	/* narrower frames are not drawn */
	uint64_t total;
	uint32_t *rgb;		/* per frame */
	struct flame_diff *diff;	/* a diff profile: colours and values by change */
	uint32_t depth;		/* deepest level drawn */
	uint32_t nframes;	/* boxes drawn */
	uint32_t nmerged;	/* frames not drawn on their own */
	int bottom;		/* y below the frames */
};

struct item {
	uint32_t node, depth;
	double x;
};

/* ---- XML text --------------------------------------------------------------------------- */

/* Length of the UTF-8 character at s (n bytes left), or 0 if it is not valid UTF-8 or not a
 * character XML allows: symbol names are bytes, and one bad byte makes the SVG unreadable. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t l, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		l = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		l = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		l = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (l > n)
		return 0;
	for (i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((l == 3 && c < 0x800) || (l == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff || c == 0xfffe || c == 0xffff)
		return 0;
	return l;
}

static size_t utf8_count(const char *s, size_t len)
{
	size_t i = 0, n = 0, l;

	while (i < len) {
		l = utf8_len((const unsigned char *)s + i, len - i);
		i += l ? l : 1;
		n++;
	}
	return n;
}

/* Write at most max characters of s as XML character data. Invalid bytes become U+FFFD, as in
 * the JSON report (a comm cut at 15 bytes may end inside a character). */
static void xml_chars(FILE *f, const char *s, size_t len, size_t max)
{
	size_t i = 0, n = 0, l;

	while (i < len && n++ < max) {
		unsigned char c = s[i];

		l = utf8_len((const unsigned char *)s + i, len - i);
		if (!l) {
			fputs("\xef\xbf\xbd", f);
			l = 1;
		} else if (c == '&') {
			fputs("&amp;", f);
		} else if (c == '<') {
			fputs("&lt;", f);
		} else if (c == '>') {
			fputs("&gt;", f);
		} else if (c < 0x20 || c == 0x7f) {
			fputc(' ', f);
		} else {
			fwrite(s + i, 1, l, f);
		}
		i += l;
	}
}

static void xml_str(FILE *f, const char *s)
{
	xml_chars(f, s, strlen(s), SIZE_MAX);
}

/* ---- colours ---------------------------------------------------------------------------- */


/* No libm: the build does not link it, and this needs nothing of it. */
static double absd(double d)
{
	return d < 0 ? -d : d;
}

static uint32_t byte(double d)
{
	return d <= 0 ? 0 : d >= 1 ? 255 : (uint32_t)(d * 255 + 0.5);
}

/* h in degrees [0, 360), s and l in [0, 1] -> 0xrrggbb */
static uint32_t hsl(double h, double s, double l)
{
	double c = (1 - absd(2 * l - 1)) * s, hp = h / 60;
	double x = c * (1 - absd(hp - 2 * (int)(hp / 2) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;

	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	return byte(r + m) << 16 | byte(g + m) << 8 | byte(b + m);
}

#define USER_HUE(h) (((h) % 10) * 5.0)	/* red to orange: 10 hues, one per module */

static uint32_t frame_rgb(const struct flame_frame *fr)
{
	/* a little lightness per name, so neighbours of one colour stay apart */
	double j = ((uint32_t)util_hash_bytes(fr->name, fr->len) % 1000) / 1000.0;

	switch (fr->kind) {
	case FLAME_ROOT:
		return hsl(270, 0.12, 0.82);
	case FLAME_PROCESS:
		return hsl(270, 0.30, 0.76 + 0.04 * j);
	case FLAME_UNKNOWN:
	case FLAME_LOST:
		return hsl(0, 0, 0.68 + 0.10 * j);
	case FLAME_ALLOC:
		return hsl(150, 0.45, 0.52 + 0.10 * j);
	case FLAME_SYNTHETIC:
		return hsl(45, 0.35, 0.72 + 0.06 * j);
	case FLAME_USER:
		break;
	}
	if (fr->kernel)
		return hsl(205, 0.55, 0.60 + 0.10 * j);
	if (fr->inlined)
		return hsl(USER_HUE((uint32_t)util_hash_bytes(fr->module ? fr->module : "", fr->module ?
				    strlen(fr->module) : 0)), 0.60, 0.76 + 0.06 * j);
	return hsl(USER_HUE((uint32_t)util_hash_bytes(fr->module ? fr->module : "", fr->module ?
			    strlen(fr->module) : 0)), 0.80, 0.54 + 0.12 * j);
}

/* ---- frames ----------------------------------------------------------------------------- */

static int level_y(const struct svg *sv, uint32_t depth)
{
	return sv->inverted ? TOP + (int)depth * FRAME_H : sv->bottom - ((int)depth + 1) * FRAME_H;
}

static void describe(const struct flame_frame *fr, char *buf, size_t len)
{
	const char *mod = fr->module ? fr->module : "";
	const char *in = fr->module ? ", in " : "";

	switch (fr->kind) {
	case FLAME_ROOT:
		snprintf(buf, len, "all samples");
		break;
	case FLAME_PROCESS:
		snprintf(buf, len, "process");
		break;
	case FLAME_UNKNOWN:
		snprintf(buf, len, "not symbolized%s", fr->kernel ? ", kernel" : "");
		break;
	case FLAME_LOST:
		snprintf(buf, len, "the stack was not recorded");
		break;
	case FLAME_SYNTHETIC:
		snprintf(buf, len, "no code: named by ebprof (a thread, lock, event, or where the "
			 "stack was cut)");
		break;
	case FLAME_ALLOC:
		snprintf(buf, len, "allocator%s%s", in, mod);
		break;
	case FLAME_USER:
		snprintf(buf, len, "%s%s%s%s", fr->inlined ? "inlined" : "function",
			 fr->kernel ? ", kernel" : "", in, mod);
		break;
	}
}

/* values: the tooltip's second line; NULL for the value and its share */
static void draw(struct svg *sv, const char *name, size_t len, const char *desc, uint64_t value,
		 const char *values, uint32_t depth, double x, double w, uint32_t rgb)
{
	FILE *f = sv->f;
	int y = level_y(sv, depth);
	long fit = w > 6 ? (long)((w - 6) / CHAR_W) : 0;
	size_t chars = utf8_count(name, len);
	char amount[64];

	fputs("<g><title>", f);
	xml_chars(f, name, len, SIZE_MAX);
	if (values) {
		fputc('\n', f);
		xml_str(f, values);
		fputc('\n', f);
	} else {
		fprintf(f, "\n%s, %.2f%%\n", flame__amount(sv->fl, value, amount, sizeof(amount)),
			100.0 * value / sv->total);
	}
	xml_str(f, desc);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"#%06" PRIx32 "\"/>", x, y, w, FRAME_H - 1, rgb);
	/* the same fitting as the script's, so the picture reads without it */
	if (fit >= 3) {
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FONT_PX - 1);
		if (chars <= (size_t)fit) {
			xml_chars(f, name, len, SIZE_MAX);
		} else {
			xml_chars(f, name, len, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
	sv->nframes++;
}

static void draw_node(struct svg *sv, uint32_t ni, uint32_t depth, double x)
{
	const struct flame_node *n = &sv->fl->nodes[ni];
	const struct flame_frame *fr = &sv->fl->frames[n->frame];
	char desc[256], values[256];

	describe(fr, desc, sizeof(desc));
	if (sv->diff)
		draw(sv, fr->name, fr->len, desc, n->total,
		     flame_diff__values(sv->diff, ni, values, sizeof(values)), depth, x,
		     n->total * sv->scale, flame_diff__rgb(sv->diff, ni));
	else
		draw(sv, fr->name, fr->len, desc, n->total, NULL, depth, x, n->total * sv->scale,
		     sv->rgb[n->frame]);
}

static void draw_merged(struct svg *sv, uint32_t n, uint64_t value, uint32_t depth, double x)
{
	char name[64], desc[128];

	snprintf(name, sizeof(name), "[%" PRIu32 " narrow frames]", n);
	snprintf(desc, sizeof(desc), "%" PRIu32 " sibling frames, each under %.1f%%, merged", n,
		 MIN_FRACTION * 100);
	draw(sv, name, strlen(name), desc, value, NULL, depth, x, value * sv->scale, 0xe4e4e4);
}

static int push(struct item **st, uint32_t *n, uint32_t *cap, struct item it)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 256;
		struct item *a = realloc(*st, c * sizeof(*a));

		if (!a)
			return -ENOMEM;
		*st = a;
		*cap = c;
	}
	(*st)[(*n)++] = it;
	return 0;
}

/*
 * Depth first from the root, children left to right in name order. With draw false only
 * measure (the deepest level and what is merged) so the header can be written first.
 */
static int walk(struct svg *sv, bool do_draw)
{
	const struct flame *fl = sv->fl;
	struct item *st = NULL, it;
	uint32_t n = 0, cap = 0;
	int err = 0;

	sv->depth = 0;
	sv->nmerged = 0;
	if (push(&st, &n, &cap, (struct item){ 0, 0, XPAD }))
		return -ENOMEM;
	while (n) {
		const struct flame_node *node;
		uint32_t c, mark, nsmall = 0, i;
		uint64_t small = 0;
		double cx;

		it = st[--n];
		node = &fl->nodes[it.node];
		if (do_draw)
			draw_node(sv, it.node, it.depth, it.x);
		if (it.depth > sv->depth)
			sv->depth = it.depth;
		mark = n;
		cx = it.x;
		for (c = node->child; c != FLAME_NONE; c = fl->nodes[c].next) {
			if ((double)fl->nodes[c].total < sv->min_value) {
				small += fl->nodes[c].total;
				nsmall++;
				continue;
			}
			err = push(&st, &n, &cap, (struct item){ c, it.depth + 1, cx });
			if (err)
				goto out;
			cx += fl->nodes[c].total * sv->scale;
		}
		/* pushed left to right: reverse so they pop (and are written) in that order */
		for (i = 0; i < (n - mark) / 2; i++) {
			struct item t = st[mark + i];

			st[mark + i] = st[n - 1 - i];
			st[n - 1 - i] = t;
		}
		sv->nmerged += nsmall;
		if (nsmall && (double)small >= sv->min_value) {
			if (do_draw)
				draw_merged(sv, nsmall, small, it.depth + 1, cx);
			if (it.depth + 1 > sv->depth)
				sv->depth = it.depth + 1;
		}
	}
out:
	free(st);
	return err;
}

/* ---- the document ----------------------------------------------------------------------- */

static void write_legend(struct svg *sv, int y)
{
	static const struct flame_frame samples[] = {
		{ .name = "main", .len = 4, .kind = FLAME_USER, .module = "a.out" },
		{ .name = "main", .len = 4, .kind = FLAME_USER, .inlined = true,
		  .module = "a.out" },
		{ .name = "malloc", .len = 6, .kind = FLAME_ALLOC },
		{ .name = "x", .len = 1, .kind = FLAME_USER, .kernel = true },
		{ .name = "?", .len = 1, .kind = FLAME_UNKNOWN },
		{ .name = "p", .len = 1, .kind = FLAME_PROCESS },
		{ .name = "s", .len = 1, .kind = FLAME_SYNTHETIC },
	};
	static const char *const labels[] = {
		"function (hue by module)", "inlined", "allocator", "kernel", "not symbolized",
		"process", "no code (thread, lock, event, cut)",
	};
	const struct flame_legend *dl = NULL;
	size_t i, n = sizeof(labels) / sizeof(labels[0]);
	double x = XPAD;

	if (sv->diff)
		dl = flame_diff__legend(&n);
	fputs("<g id=\"legend\">\n", sv->f);
	for (i = 0; i < n; i++) {
		const char *label = dl ? dl[i].label : labels[i];

		fprintf(sv->f, "<rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" "
			"fill=\"#%06" PRIx32 "\"/><text x=\"%.0f\" y=\"%d\">%s</text>\n", x, y - 9,
			dl ? dl[i].rgb : frame_rgb(&samples[i]), x + 14, y, label);
		x += 14 + strlen(label) * 6.6 + 18;
	}
	fputs("</g>\n", sv->f);
}

static void write_head(struct svg *sv, int height)
{
	const struct flame *fl = sv->fl;
	const struct profile *p = fl->p;
	FILE *f = sv->f;
	char amount[64];

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n", WIDTH, height, WIDTH, height);
	fprintf(f, "<!-- written by ebprof; open it in a web browser: click a frame to zoom, "
		"Search (or Ctrl-F) to highlight frames by regular expression -->\n");
	fprintf(f, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", asset_flame_css);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfbf6\"/>\n");

	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">ebprof ", WIDTH / 2);
	xml_str(f, p->mode ? p->mode : "profile");
	if (fl->type >= 0) {
		fputs(": ", f);
		xml_str(f, p->types[fl->type].type);
		fputs(" (", f);
		xml_str(f, p->types[fl->type].unit);
		fputc(')', f);
	}
	fprintf(f, "</text>\n<text id=\"sub\" x=\"%d\" y=\"44\">", WIDTH / 2);
	if (p->command) {
		size_t len = strlen(p->command);

		/* the whole line must fit the width: a long command is cut */
		if (utf8_count(p->command, len) > SUB_MAX_CHARS) {
			xml_chars(f, p->command, len, SUB_MAX_CHARS - 3);
			fputs("...", f);
		} else {
			xml_chars(f, p->command, len, SIZE_MAX);
		}
		fputs(" - ", f);
	}
	if (sv->diff) {
		char sum[256];

		xml_str(f, flame_diff__summary(sv->diff, sum, sizeof(sum)));
	} else if (sv->total) {
		fprintf(f, "total %s in %" PRIu32 " stack%s", flame__amount(fl, sv->total, amount,
			sizeof(amount)), fl->nstacks, fl->nstacks == 1 ? "" : "s");
	} else if (fl->type >= 0) {
		fputs("no samples with a positive ", f);
		xml_str(f, p->types[fl->type].type);
	} else {
		fputs("no samples", f);
	}
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"24\" style=\"display:none\">"
		"Reset Zoom</text>\n", XPAD);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" text-anchor=\"end\">"
		"Search</text>\n", WIDTH - XPAD);
}

static void write_tail(struct svg *sv)
{
	FILE *f = sv->f;

	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, sv->bottom + 18);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		WIDTH - XPAD, sv->bottom + 18);
	write_legend(sv, sv->bottom + 38);
	/* measured by the script for fitting names; off the picture but laid out */
	fputs("<text id=\"probe\" x=\"-1000\" y=\"-1000\">MMMMMMMMMMMMMMMMMMMM</text>\n", f);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var ebprofFlame = { width: %d, xpad: %d, baseline: %d, inverted: %s, "
		"highlight: '%s' };\n%s]]></script>\n</svg>\n", WIDTH, XPAD, FONT_PX - 1,
		sv->inverted ? "true" : "false", HIGHLIGHT, asset_flame_js);
}

static int svg_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct flame *fl = flame__new(p, o);
	struct svg sv = { .fl = fl, .f = f, .inverted = o && o->inverted };
	uint32_t i;
	int err = -ENOMEM, height;

	if (!fl)
		return -errno;
	sv.total = fl->nodes[0].total;
	sv.scale = sv.total ? (double)(WIDTH - 2 * XPAD) / sv.total : 0;
	sv.min_value = MIN_FRACTION * sv.total;
	sv.rgb = malloc(sizeof(*sv.rgb) * fl->nframes);
	if (!sv.rgb)
		goto out;
	for (i = 0; i < fl->nframes; i++)
		sv.rgb[i] = frame_rgb(&fl->frames[i]);
	if (profile__is_diff(p)) {
		sv.diff = flame_diff__new(fl);
		if (!sv.diff)
			goto out;
	}

	if (sv.total) {
		err = walk(&sv, false);
		if (err)
			goto out;
	}
	sv.bottom = TOP + ((int)sv.depth + 1) * FRAME_H;
	height = sv.bottom + BOTTOM;
	write_head(&sv, height);
	fputs("<g id=\"frames\">\n", f);
	if (sv.total) {
		err = walk(&sv, true);
		if (err)
			goto out;
	}
	fputs("</g>\n", f);
	write_tail(&sv);
	err = ferror(f) ? -EIO : 0;
out:
	free(sv.rgb);
	flame_diff__free(sv.diff);
	flame__free(fl);
	return err;
}

const struct output_ops output_svg = {
	.name = "svg",
	.ext = ".svg",
	.write = svg_write,
};
