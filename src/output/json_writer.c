/* Streaming JSON writer; see json_writer.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"

#define JSONW_MAX_DEPTH 32

/* The writer is a report's one writer of its stream: stdio's unlocked calls, and numbers
 * formatted here rather than by fprintf (a machine-wide report is hundreds of MB: the locked
 * calls and the format parsing were most of its writing time, see docs/PERFORMANCE.md). */
static inline void put_c(FILE *f, char c)
{
	fputc_unlocked(c, f);
}

static inline void put_n(FILE *f, const char *s, size_t n)
{
	fwrite_unlocked(s, 1, n, f);
}

static inline void put_s(FILE *f, const char *s)
{
	put_n(f, s, strlen(s));
}

/* v in decimal (base 10) or lowercase hex (base 16) */
static void put_u64(FILE *f, uint64_t v, unsigned base)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	put_n(f, p, (size_t)(buf + sizeof(buf) - p));
}

struct jsonw_level {
	bool object;
	bool flat;
	uint32_t count;		/* members/elements written so far */
};

struct json_writer {
	FILE *f;
	bool pretty;
	bool named;		/* a name was written and awaits its value */
	bool top_done;		/* the single top-level value is complete */
	int err;
	uint32_t depth;
	struct jsonw_level lv[JSONW_MAX_DEPTH];
};

struct json_writer *jsonw__new(FILE *f, bool pretty)
{
	struct json_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->pretty = pretty;
	return w;
}

void jsonw__free(struct json_writer *w)
{
	free(w);
}

int jsonw__error(const struct json_writer *w)
{
	if (w->err)
		return w->err;
	if (ferror(w->f))
		return -EIO;
	return 0;
}

void jsonw__end_line(struct json_writer *w)
{
	if (!w->top_done && !w->err)
		w->err = -EINVAL;
	put_c(w->f, '\n');
	w->top_done = false;
}

static void newline_indent(struct json_writer *w, uint32_t depth)
{
	uint32_t i;

	put_c(w->f, '\n');
	for (i = 0; i < depth; i++)
		put_s(w->f, "  ");
}

static bool flat(const struct json_writer *w)
{
	return !w->pretty || (w->depth && w->lv[w->depth - 1].flat);
}

/* Separator and layout before a value or a name. */
static bool begin_item(struct json_writer *w, bool is_name)
{
	struct jsonw_level *l;

	if (w->err)
		return false;
	if (!w->depth) {
		if (w->top_done || is_name)
			goto misuse;
		return true;
	}
	l = &w->lv[w->depth - 1];
	if (!is_name && w->named) {
		/* the value of a member: the name already placed it */
		w->named = false;
		return true;
	}
	if (l->object != is_name || w->named)
		goto misuse;
	if (l->count++)
		put_c(w->f, ',');
	if (!flat(w))
		newline_indent(w, w->depth);
	else if (l->count > 1 && w->pretty)
		put_c(w->f, ' ');
	return true;
misuse:
	w->err = -EINVAL;
	return false;
}

static void end_item(struct json_writer *w)
{
	if (!w->depth)
		w->top_done = true;
}

static void start(struct json_writer *w, bool object, bool want_flat)
{
	bool parent_flat;

	if (!begin_item(w, false))
		return;
	if (w->depth == JSONW_MAX_DEPTH) {
		w->err = -EINVAL;
		return;
	}
	parent_flat = w->depth && w->lv[w->depth - 1].flat;
	put_c(w->f, object ? '{' : '[');
	w->lv[w->depth++] = (struct jsonw_level){
		.object = object, .flat = want_flat || parent_flat,
	};
}

static void end(struct json_writer *w, bool object)
{
	struct jsonw_level *l;

	if (w->err)
		return;
	if (!w->depth || w->named || w->lv[w->depth - 1].object != object) {
		w->err = -EINVAL;
		return;
	}
	l = &w->lv[w->depth - 1];
	if (l->count && !flat(w))
		newline_indent(w, w->depth - 1);
	w->depth--;
	put_c(w->f, object ? '}' : ']');
	end_item(w);
}

void jsonw_start_object(struct json_writer *w)
{
	start(w, true, false);
}

void jsonw_start_array(struct json_writer *w)
{
	start(w, false, false);
}

void jsonw_start_object_flat(struct json_writer *w)
{
	start(w, true, true);
}

void jsonw_start_array_flat(struct json_writer *w)
{
	start(w, false, true);
}

void jsonw_end_object(struct json_writer *w)
{
	end(w, true);
}

void jsonw_end_array(struct json_writer *w)
{
	end(w, false);
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

void jsonw_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *run;

	put_c(f, '"');
	while (*s) {
		unsigned char c = *s;
		int n;

		/* a run of characters written as they are, in one call (a call a character:
		 * 7% of ebprof's CPU on a 7 MB report of 100 processes) */
		for (run = s; *s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\'; s++)
			;
		if (s > run) {
			put_n(f, (const char *)run, (size_t)(s - run));
			continue;
		}
		switch (c) {
		case '"':
			put_s(f, "\\\"");
			break;
		case '\\':
			put_s(f, "\\\\");
			break;
		case '\b':
			put_s(f, "\\b");
			break;
		case '\f':
			put_s(f, "\\f");
			break;
		case '\n':
			put_s(f, "\\n");
			break;
		case '\r':
			put_s(f, "\\r");
			break;
		case '\t':
			put_s(f, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				put_s(f, "\\u00");
				put_c(f, "0123456789abcdef"[c >> 4]);
				put_c(f, "0123456789abcdef"[c & 15]);
			} else if ((n = utf8_len(s))) {
				put_n(f, (const char *)s, (size_t)n);
				s += n;
				continue;
			} else {
				put_s(f, "\\ufffd");
			}
		}
		s++;
	}
	put_c(f, '"');
}

void jsonw_name(struct json_writer *w, const char *name)
{
	if (!begin_item(w, true))
		return;
	jsonw_escape(w->f, name ? name : "");
	put_s(w->f, w->pretty ? ": " : ":");
	w->named = true;
}

void jsonw_string(struct json_writer *w, const char *s)
{
	if (!s) {
		jsonw_null(w);
		return;
	}
	if (!begin_item(w, false))
		return;
	jsonw_escape(w->f, s);
	end_item(w);
}

void jsonw_uint(struct json_writer *w, uint64_t v)
{
	if (!begin_item(w, false))
		return;
	put_u64(w->f, v, 10);
	end_item(w);
}

void jsonw_int(struct json_writer *w, int64_t v)
{
	if (!begin_item(w, false))
		return;
	if (v < 0) {
		put_c(w->f, '-');
		put_u64(w->f, -(uint64_t)v, 10);
	} else {
		put_u64(w->f, (uint64_t)v, 10);
	}
	end_item(w);
}

void jsonw_bool(struct json_writer *w, bool v)
{
	if (!begin_item(w, false))
		return;
	put_s(w->f, v ? "true" : "false");
	end_item(w);
}

void jsonw_null(struct json_writer *w)
{
	if (!begin_item(w, false))
		return;
	put_s(w->f, "null");
	end_item(w);
}

void jsonw_hex(struct json_writer *w, uint64_t v)
{
	if (!begin_item(w, false))
		return;
	put_s(w->f, "\"0x");
	put_u64(w->f, v, 16);
	put_c(w->f, '"');
	end_item(w);
}

void jsonw_string_field(struct json_writer *w, const char *name, const char *s)
{
	jsonw_name(w, name);
	jsonw_string(w, s);
}

void jsonw_uint_field(struct json_writer *w, const char *name, uint64_t v)
{
	jsonw_name(w, name);
	jsonw_uint(w, v);
}

void jsonw_int_field(struct json_writer *w, const char *name, int64_t v)
{
	jsonw_name(w, name);
	jsonw_int(w, v);
}

void jsonw_bool_field(struct json_writer *w, const char *name, bool v)
{
	jsonw_name(w, name);
	jsonw_bool(w, v);
}

void jsonw_null_field(struct json_writer *w, const char *name)
{
	jsonw_name(w, name);
	jsonw_null(w);
}

void jsonw_hex_field(struct json_writer *w, const char *name, uint64_t v)
{
	jsonw_name(w, name);
	jsonw_hex(w, v);
}
