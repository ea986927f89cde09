/* pprof input: a saved profile.proto message (github.com/google/pprof, proto/profile.proto),
 * gzipped or not, read back into the profile model for `ebprof report` and `ebprof diff`.
 *
 * It reads what src/output/pprof.c writes and any other valid pprof: a small protobuf decoder
 * (all four wire types a proto3 message can use, unknown fields skipped, repeated scalars packed
 * or not) fills raw tables first, because in a protobuf message the string table, the samples
 * and the tables they refer to may come in any order. Then every id and string index is checked
 * and the profile is built through the ordinary profile API, in id order, so that a profile
 * ebprof wrote comes back with the indices it had and writes out again byte for byte the same.
 *
 * Input is untrusted: every length is checked against what is left, every id against its table,
 * and reading and inflation stop at MAX_INFLATED, so a corrupt or hostile file is an error, never
 * a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile/profile.h"
#include "profile/pprof_proto.h"
#include "util/util.h"

/* Far above any real profile, far below what a gzip bomb would make of memory. */
#define MAX_INFLATED (1ull << 30)

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* A cursor over one message. */
struct rd {
	const uint8_t *p, *end;
};

struct field {
	uint32_t num;
	unsigned int wire;
	uint64_t v;		/* VARINT, I64 and I32 */
	struct rd sub;		/* LEN */
};

/* The raw tables: ids and string indices as in the file, checked when the profile is built. All
 * raw records with an id have it first, so one binary search serves them all. */
struct raw_function {
	uint64_t id;
	int64_t name, system_name, filename;
};

struct raw_mapping {
	uint64_t id, start, limit, offset;
	int64_t file, build_id;
	uint64_t elf_start;	/* the ELF address of start: offset, or what a comment says */
};

struct raw_line {
	uint64_t function_id;
	int64_t line;
};

struct raw_location {
	uint64_t id, mapping_id, address;
	size_t first_line, nlines;
};

struct raw_sample {
	size_t first_loc, nlocs;	/* into loader.sample_locs */
	size_t first_val, nvals;	/* into loader.sample_vals */
	uint32_t pid;
	bool has_pid;
	int64_t comm;			/* string index, 0 = none */
	bool suppressed;		/* label suppressed = "true" (ebprof mem --suppressions) */
};

struct value_type {
	int64_t type, unit;
};

/* A comment of ours: FILE's mappings at file offset `offset` start at ELF address `elf`. */
struct elf_comment {
	uint64_t elf, offset;
	const char *file;
};

struct loader {
	const uint8_t *base;		/* the decoded message, for offsets in messages */
	char *why;
	size_t why_len;

	char **strs;			/* NUL-terminated copies, in strbuf */
	char *strbuf;
	size_t nstrs;

	struct value_type *types;
	size_t ntypes, types_cap;
	struct raw_function *funcs;
	size_t nfuncs, funcs_cap;
	struct raw_mapping *maps;
	size_t nmaps, maps_cap;
	struct raw_location *locs;
	size_t nlocs, locs_cap;
	struct raw_line *lines;
	size_t nlines, lines_cap;
	struct raw_sample *samples;
	size_t nsamples, samples_cap;
	uint64_t *sample_locs;
	size_t nsample_locs, sample_locs_cap;
	int64_t *sample_vals;
	size_t nsample_vals, sample_vals_cap;
	int64_t *comments;
	size_t ncomments, comments_cap;
	struct elf_comment *elfs;
	size_t nelfs, elfs_cap;

	int64_t time_nanos, duration_nanos, period, default_type;
	struct value_type period_type;
	bool any_pid;
};

/* Make room for one more element: 0 or -ENOMEM (the array untouched). */
#define RESERVE(arr, n, cap)                                                                 \
	({                                                                                   \
		int _e = 0;                                                                  \
		if ((n) == (cap)) {                                                          \
			size_t _c = (cap) ? (cap) * 2 : 16;                                  \
			void *_q = _c <= SIZE_MAX / sizeof(*(arr)) ?                          \
					   realloc((arr), _c * sizeof(*(arr))) : NULL;       \
			if (_q) {                                                            \
				(arr) = _q;                                                  \
				(cap) = _c;                                                  \
			} else {                                                             \
				_e = -ENOMEM;                                                \
			}                                                                    \
		}                                                                            \
		_e;                                                                          \
	})

static int bad(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The data is not a valid pprof profile: say why (the first reason only), return -EINVAL. */
static int bad(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	if (l->why && l->why_len && !l->why[0]) {
		va_start(ap, fmt);
		vsnprintf(l->why, l->why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static size_t off(const struct loader *l, const struct rd *r)
{
	return (size_t)(r->p - l->base);
}

/* ---- protobuf decoding ------------------------------------------------------------------ */

static bool rd_varint(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int shift;

	/* at most ten bytes; the tenth holds only the top bit */
	for (shift = 0; shift <= 63; shift += 7) {
		uint8_t c;

		if (r->p == r->end)
			return false;
		c = *r->p++;
		if (shift == 63 && c > 1)
			return false;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static bool rd_fixed(struct rd *r, unsigned int n, uint64_t *v)
{
	unsigned int i;

	if ((size_t)(r->end - r->p) < n)
		return false;
	*v = 0;
	for (i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);	/* little endian */
	r->p += n;
	return true;
}

/* The next field of the message in *f: 1, or 0 at its end, or -EINVAL. Every field is consumed
 * whole, so a caller skips an unknown one by doing nothing. */
static int rd_field(struct loader *l, struct rd *r, struct field *f)
{
	uint64_t key, len;
	size_t at = off(l, r);

	if (r->p == r->end)
		return 0;
	if (!rd_varint(r, &key))
		return bad(l, "malformed or truncated field key at byte %zu", at);
	if (key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return bad(l, "invalid field number %" PRIu64 " at byte %zu", key >> 3, at);
	f->num = (uint32_t)(key >> 3);
	f->wire = key & 7;
	switch (f->wire) {
	case WIRE_VARINT:
		if (!rd_varint(r, &f->v))
			return bad(l, "malformed or truncated varint at byte %zu", at);
		return 1;
	case WIRE_I64:
		if (!rd_fixed(r, 8, &f->v))
			return bad(l, "truncated 64-bit field at byte %zu", at);
		return 1;
	case WIRE_I32:
		if (!rd_fixed(r, 4, &f->v))
			return bad(l, "truncated 32-bit field at byte %zu", at);
		return 1;
	case WIRE_LEN:
		if (!rd_varint(r, &len) || len > (uint64_t)(r->end - r->p))
			return bad(l, "field %" PRIu32 " at byte %zu is longer than the data left "
				   "(truncated?)", f->num, at);
		f->sub = (struct rd){ r->p, r->p + len };
		r->p += len;
		return 1;
	default:
		/* 3 and 4 are proto2 groups, which profile.proto has none of; 6, 7 do not exist */
		return bad(l, "field %" PRIu32 " at byte %zu has wire type %u, which no pprof "
			   "field has", f->num, at, f->wire);
	}
}

/* A known field with the wrong wire type is not the message we think it is. */
static int want(struct loader *l, const struct field *f, unsigned int wire, const char *what)
{
	if (f->wire == wire)
		return 0;
	return bad(l, "%s (field %" PRIu32 ") has wire type %u instead of %u", what, f->num,
		   f->wire, wire);
}

/* A scalar varint field (int64, uint64 or bool). */
static int scalar(struct loader *l, const struct field *f, const char *what, uint64_t *v)
{
	int err = want(l, f, WIRE_VARINT, what);

	if (!err)
		*v = f->v;
	return err;
}

static int scalar_i64(struct loader *l, const struct field *f, const char *what, int64_t *v)
{
	uint64_t u = 0;
	int err = scalar(l, f, what, &u);

	/* int64 is a two's complement varint */
	*v = (int64_t)u;
	return err;
}

/*
 * A repeated varint field: packed (one LEN field holding varints, what proto3 writes) or not
 * (one VARINT field per element, what proto2 writers may do). Appends to a u64 or i64 array.
 */
#define REPEATED(l, f, what, arr, n, cap)                                                   \
	({                                                                                   \
		int _err = 0;                                                                \
		if ((f)->wire == WIRE_VARINT) {                                              \
			_err = RESERVE(arr, n, cap);                                         \
			if (!_err)                                                           \
				(arr)[(n)++] = (__typeof__(*(arr)))(f)->v;                   \
		} else if ((f)->wire == WIRE_LEN) {                                          \
			struct rd _r = (f)->sub;                                             \
			uint64_t _v;                                                         \
			while (!_err && _r.p < _r.end) {                                     \
				if (!rd_varint(&_r, &_v))                                    \
					_err = bad(l, "malformed packed %s at byte %zu",     \
						   what, off(l, &_r));                       \
				else if (!(_err = RESERVE(arr, n, cap)))                     \
					(arr)[(n)++] = (__typeof__(*(arr)))_v;               \
			}                                                                    \
		} else {                                                                     \
			_err = bad(l, "%s (field %" PRIu32 ") has wire type %u", what,        \
				   (f)->num, (f)->wire);                                     \
		}                                                                            \
		_err;                                                                        \
	})

/* ---- messages --------------------------------------------------------------------------- */

static int read_value_type(struct loader *l, struct rd r, struct value_type *vt)
{
	struct field f;
	int rc;

	*vt = (struct value_type){};
	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == VALUE_TYPE_TYPE)
			rc = scalar_i64(l, &f, "value type's type", &vt->type);
		else if (f.num == VALUE_TYPE_UNIT)
			rc = scalar_i64(l, &f, "value type's unit", &vt->unit);
		if (rc < 0)
			return rc;
	}
	return rc;
}

/* "pid", "comm" and "suppressed" labels; others (Go's "bytes", "thread id", ...) are of no use
 * here. */
static int read_label(struct loader *l, struct rd r, struct raw_sample *s)
{
	int64_t key = 0, str = 0, num = 0;
	const char *k, *v;
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == LABEL_KEY)
			rc = scalar_i64(l, &f, "label key", &key);
		else if (f.num == LABEL_STR)
			rc = scalar_i64(l, &f, "label string", &str);
		else if (f.num == LABEL_NUM)
			rc = scalar_i64(l, &f, "label number", &num);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	if (key < 0 || (uint64_t)key >= l->nstrs || str < 0 || (uint64_t)str >= l->nstrs)
		return bad(l, "a label refers to string %" PRId64 ", past the string table's %zu",
			   key < 0 || (uint64_t)key >= l->nstrs ? key : str, l->nstrs);
	k = l->strs[key];
	v = l->strs[str];
	if (strcmp(k, "pid") == 0) {
		/* ours is numeric; a tool that wrote it as a string is understood too */
		if (str) {
			char *end;

			errno = 0;
			num = strtoll(v, &end, 10);
			if (errno || end == v || *end)
				return 0;
		}
		if (num < 0 || num > UINT32_MAX)
			return 0;	/* not a pid as we know them: leave it */
		s->pid = (uint32_t)num;
		s->has_pid = true;
		l->any_pid = true;
	} else if (strcmp(k, "comm") == 0 && str) {
		s->comm = str;
	} else if (strcmp(k, "suppressed") == 0 && str && strcmp(v, "true") == 0) {
		s->suppressed = true;
	}
	return 0;
}

static int read_sample(struct loader *l, struct rd r)
{
	struct raw_sample s = { .first_loc = l->nsample_locs, .first_val = l->nsample_vals };
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == SAMPLE_LOCATION_ID)
			rc = REPEATED(l, &f, "location ids", l->sample_locs, l->nsample_locs,
				      l->sample_locs_cap);
		else if (f.num == SAMPLE_VALUE)
			rc = REPEATED(l, &f, "values", l->sample_vals, l->nsample_vals,
				      l->sample_vals_cap);
		else if (f.num == SAMPLE_LABEL)
			rc = want(l, &f, WIRE_LEN, "label") ?: read_label(l, f.sub, &s);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	s.nlocs = l->nsample_locs - s.first_loc;
	s.nvals = l->nsample_vals - s.first_val;
	rc = RESERVE(l->samples, l->nsamples, l->samples_cap);
	if (!rc)
		l->samples[l->nsamples++] = s;
	return rc;
}

static int read_mapping(struct loader *l, struct rd r)
{
	struct raw_mapping m = {};
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		switch (f.num) {
		case MAPPING_ID:
			rc = scalar(l, &f, "mapping id", &m.id);
			break;
		case MAPPING_MEMORY_START:
			rc = scalar(l, &f, "mapping start", &m.start);
			break;
		case MAPPING_MEMORY_LIMIT:
			rc = scalar(l, &f, "mapping limit", &m.limit);
			break;
		case MAPPING_FILE_OFFSET:
			rc = scalar(l, &f, "mapping offset", &m.offset);
			break;
		case MAPPING_FILENAME:
			rc = scalar_i64(l, &f, "mapping file name", &m.file);
			break;
		case MAPPING_BUILD_ID:
			rc = scalar_i64(l, &f, "mapping build id", &m.build_id);
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	rc = RESERVE(l->maps, l->nmaps, l->maps_cap);
	if (!rc)
		l->maps[l->nmaps++] = m;
	return rc;
}

static int read_line(struct loader *l, struct rd r)
{
	struct raw_line ln = {};
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == LINE_FUNCTION_ID)
			rc = scalar(l, &f, "line's function id", &ln.function_id);
		else if (f.num == LINE_LINE)
			rc = scalar_i64(l, &f, "line number", &ln.line);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	rc = RESERVE(l->lines, l->nlines, l->lines_cap);
	if (!rc)
		l->lines[l->nlines++] = ln;
	return rc;
}

static int read_location(struct loader *l, struct rd r)
{
	struct raw_location loc = { .first_line = l->nlines };
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == LOCATION_ID)
			rc = scalar(l, &f, "location id", &loc.id);
		else if (f.num == LOCATION_MAPPING_ID)
			rc = scalar(l, &f, "location's mapping id", &loc.mapping_id);
		else if (f.num == LOCATION_ADDRESS)
			rc = scalar(l, &f, "location address", &loc.address);
		else if (f.num == LOCATION_LINE)
			rc = want(l, &f, WIRE_LEN, "line") ?: read_line(l, f.sub);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	loc.nlines = l->nlines - loc.first_line;
	rc = RESERVE(l->locs, l->nlocs, l->locs_cap);
	if (!rc)
		l->locs[l->nlocs++] = loc;
	return rc;
}

static int read_function(struct loader *l, struct rd r)
{
	struct raw_function fn = {};
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num == FUNCTION_ID)
			rc = scalar(l, &f, "function id", &fn.id);
		else if (f.num == FUNCTION_NAME)
			rc = scalar_i64(l, &f, "function name", &fn.name);
		else if (f.num == FUNCTION_SYSTEM_NAME)
			rc = scalar_i64(l, &f, "function system name", &fn.system_name);
		else if (f.num == FUNCTION_FILENAME)
			rc = scalar_i64(l, &f, "function file name", &fn.filename);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	rc = RESERVE(l->funcs, l->nfuncs, l->funcs_cap);
	if (!rc)
		l->funcs[l->nfuncs++] = fn;
	return rc;
}

/*
 * First pass over the top level: the string table, which the other messages index and which
 * may come anywhere (ours comes last). Strings are bytes; each gets a NUL-terminated copy (a NUL
 * inside one ends it early, as C strings must).
 */
static int read_strings(struct loader *l, struct rd r)
{
	size_t n = 0, bytes = 0, i = 0;
	struct rd r2 = r;
	struct field f;
	char *w;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		if (f.num != PROFILE_STRING_TABLE)
			continue;
		rc = want(l, &f, WIRE_LEN, "string table entry");
		if (rc < 0)
			return rc;
		n++;
		bytes += (size_t)(f.sub.end - f.sub.p) + 1;
	}
	if (rc < 0)
		return rc;
	if (!n)
		return bad(l, "it has no string table");
	l->strs = malloc(n * sizeof(*l->strs));
	l->strbuf = malloc(bytes);
	if (!l->strs || !l->strbuf)
		return -ENOMEM;
	w = l->strbuf;
	while (rd_field(l, &r2, &f) > 0) {
		size_t len = (size_t)(f.sub.end - f.sub.p);

		if (f.num != PROFILE_STRING_TABLE)
			continue;
		memcpy(w, f.sub.p, len);
		w[len] = '\0';
		l->strs[i++] = w;
		w += len + 1;
	}
	l->nstrs = n;
	if (l->strs[0][0])
		return bad(l, "its string table does not start with the empty string");
	return 0;
}

static int read_profile(struct loader *l, struct rd r)
{
	struct value_type vt;
	struct field f;
	int rc;

	while ((rc = rd_field(l, &r, &f)) > 0) {
		switch (f.num) {
		case PROFILE_SAMPLE_TYPE:
			rc = want(l, &f, WIRE_LEN, "sample type") ?: read_value_type(l, f.sub, &vt);
			if (!rc)
				rc = RESERVE(l->types, l->ntypes, l->types_cap);
			if (!rc)
				l->types[l->ntypes++] = vt;
			break;
		case PROFILE_SAMPLE:
			rc = want(l, &f, WIRE_LEN, "sample") ?: read_sample(l, f.sub);
			break;
		case PROFILE_MAPPING:
			rc = want(l, &f, WIRE_LEN, "mapping") ?: read_mapping(l, f.sub);
			break;
		case PROFILE_LOCATION:
			rc = want(l, &f, WIRE_LEN, "location") ?: read_location(l, f.sub);
			break;
		case PROFILE_FUNCTION:
			rc = want(l, &f, WIRE_LEN, "function") ?: read_function(l, f.sub);
			break;
		case PROFILE_TIME_NANOS:
			rc = scalar_i64(l, &f, "time_nanos", &l->time_nanos);
			break;
		case PROFILE_DURATION_NANOS:
			rc = scalar_i64(l, &f, "duration_nanos", &l->duration_nanos);
			break;
		case PROFILE_PERIOD_TYPE:
			rc = want(l, &f, WIRE_LEN, "period type") ?:
			     read_value_type(l, f.sub, &l->period_type);
			break;
		case PROFILE_PERIOD:
			rc = scalar_i64(l, &f, "period", &l->period);
			break;
		case PROFILE_COMMENT:
			rc = REPEATED(l, &f, "comments", l->comments, l->ncomments,
				      l->comments_cap);
			break;
		case PROFILE_DEFAULT_SAMPLE_TYPE:
			rc = scalar_i64(l, &f, "default_sample_type", &l->default_type);
			break;
		}
		if (rc < 0)
			return rc;
	}
	return rc;
}

/* ---- building the profile --------------------------------------------------------------- */

/* A string by index, or NULL (having said why) when the index is out of the table. */
static const char *str_at(struct loader *l, int64_t idx, const char *what)
{
	if (idx < 0 || (uint64_t)idx >= l->nstrs) {
		bad(l, "%s refers to string %" PRId64 ", past the string table's %zu", what, idx,
		    l->nstrs);
		return NULL;
	}
	return l->strs[idx];
}

/* Optional strings: "" (index 0) is "not known". */
static const char *opt_str(struct loader *l, int64_t idx, const char *what, bool *ok)
{
	const char *s = str_at(l, idx, what);

	*ok = s != NULL;
	return s && *s ? s : NULL;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort a raw table by id; ids must be non-zero and distinct. */
static int sort_ids(struct loader *l, void *arr, size_t n, size_t elem, const char *what)
{
	size_t i;

	if (n)
		qsort(arr, n, elem, cmp_id);
	for (i = 0; i < n; i++) {
		uint64_t id = *(const uint64_t *)((const char *)arr + i * elem);

		if (!id)
			return bad(l, "a %s has id 0", what);
		if (i && id == *(const uint64_t *)((const char *)arr + (i - 1) * elem))
			return bad(l, "two %ss have id %" PRIu64, what, id);
	}
	return 0;
}

/* Index of id in a table sorted by sort_ids, or SIZE_MAX. */
static size_t find_id(const void *arr, size_t n, size_t elem, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = *(const uint64_t *)((const char *)arr + mid * elem);

		if (v == id)
			return mid;
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* "ebprof MODE profile", the first comment ebprof writes: the mode, or NULL for another tool's
 * profile. */
static char *ebprof_mode(const char *c)
{
	static const char pre[] = "ebprof ", post[] = " profile";
	size_t len = strlen(c);

	if (len <= sizeof(pre) - 1 + sizeof(post) - 1 || strncmp(c, pre, sizeof(pre) - 1) ||
	    strcmp(c + len - (sizeof(post) - 1), post))
		return NULL;
	return strndup(c + sizeof(pre) - 1, len - (sizeof(pre) - 1) - (sizeof(post) - 1));
}

/* "MODE PERIOD" of a "sampling: " comment (pprof.c) into p: 0, or -EINVAL when it is not one
 * of ours (then it stays a note). The modes are profile.h's static strings. */
static int read_sampling(struct profile *p, const char *s)
{
	static const char *const modes[] = { "bytes", "every", "alloc-only" };
	const char *sp = strchr(s, ' ');
	unsigned long long n;
	char *end;

	if (!sp)
		return -EINVAL;
	errno = 0;
	n = strtoull(sp + 1, &end, 10);
	if (errno || end == sp + 1 || *end)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strlen(modes[i]) == (size_t)(sp - s) && !strncmp(s, modes[i], sp - s)) {
			p->sampling = modes[i];
			p->sample_period = n;
			return 0;
		}
	}
	return -EINVAL;
}

/* "elf address: 0xE at offset 0xO of FILE" (pprof.c) into *e: whether c is one. */
static bool read_elf_comment(const char *c, struct elf_comment *e)
{
	static const char pre[] = "elf address: 0x", mid[] = " at offset 0x", post[] = " of ";
	char *end;

	if (strncmp(c, pre, sizeof(pre) - 1))
		return false;
	c += sizeof(pre) - 1;
	errno = 0;
	e->elf = strtoull(c, &end, 16);
	if (errno || end == c || strncmp(end, mid, sizeof(mid) - 1))
		return false;
	c = end + sizeof(mid) - 1;
	e->offset = strtoull(c, &end, 16);
	if (errno || end == c || strncmp(end, post, sizeof(post) - 1) || !end[sizeof(post) - 1])
		return false;
	e->file = end + sizeof(post) - 1;
	return true;
}

/*
 * ebprof's comments go back where they came from: the run's command and kernel, mem's
 * sampling, its facts ("info: KEY: VALUE"), then the drops that were not 0 ("dropped
 * (REASON): N"), where mappings lie in their files ("elf address: ...", for the locations'
 * module offsets: so this comes before build_mappings), in the order the writer puts them;
 * anything after (and every comment of another tool) is a note.
 */
static int apply_comments(struct loader *l, struct profile *p, bool ours)
{
	const char *command = NULL, *kernel = NULL;
	size_t i = ours ? 1 : 0;
	int err = 0;

	if (ours && i < l->ncomments && !strncmp(l->strs[l->comments[i]], "command: ", 9))
		command = l->strs[l->comments[i++]] + 9;
	if (ours && i < l->ncomments && !strncmp(l->strs[l->comments[i]], "kernel: ", 8))
		kernel = l->strs[l->comments[i++]] + 8;
	if (ours && i < l->ncomments && !strncmp(l->strs[l->comments[i]], "sampling: ", 10) &&
	    !read_sampling(p, l->strs[l->comments[i]] + 10))
		i++;
	for (; ours && i < l->ncomments; i++) {
		const char *c = l->strs[l->comments[i]], *sep;
		char key[128];

		if (strncmp(c, "info: ", 6) || !(sep = strstr(c + 6, ": ")) || sep == c + 6 ||
		    (size_t)(sep - c - 6) >= sizeof(key))
			break;
		memcpy(key, c + 6, sep - c - 6);
		key[sep - c - 6] = '\0';
		err = profile__add_info(p, key, "%s", sep + 2);
		if (err)
			return err;
	}
	for (; ours && i < l->ncomments; i++) {
		const char *c = l->strs[l->comments[i]], *close;
		char reason[256], *end;
		unsigned long long n;

		if (strncmp(c, "dropped (", 9) || !(close = strstr(c + 9, "): ")) ||
		    (size_t)(close - c - 9) >= sizeof(reason))
			break;
		errno = 0;
		n = strtoull(close + 3, &end, 10);
		if (errno || end == close + 3 || *end)
			break;
		memcpy(reason, c + 9, close - c - 9);
		reason[close - c - 9] = '\0';
		err = profile__add_drop(p, reason, n);
		if (err)
			return err;
	}
	for (; ours && i < l->ncomments; i++) {
		struct elf_comment e;

		if (!read_elf_comment(l->strs[l->comments[i]], &e))
			break;
		err = RESERVE(l->elfs, l->nelfs, l->elfs_cap);
		if (err)
			return err;
		l->elfs[l->nelfs++] = e;
	}
	for (; !err && i < l->ncomments; i++)
		err = profile__add_note(p, "%s", l->strs[l->comments[i]]);
	if (!err)
		err = profile__set_meta(p, command, kernel, NULL, l->time_nanos,
					l->duration_nanos);
	return err;
}

/*
 * pprof has no pid per mapping, ebprof's model has: a mapping belongs to the process of the first
 * sample that goes through it, or else to the process of the mapping before it (a process's
 * mappings are written together), so two processes' mappings of one file stay apart.
 */
static int mapping_pids(struct loader *l, uint32_t *mpid)
{
	size_t i, j;
	uint32_t prev;

	for (i = 0; i < l->nmaps; i++)
		mpid[i] = UINT32_MAX;
	for (i = 0; i < l->nsamples; i++) {
		const struct raw_sample *s = &l->samples[i];

		for (j = 0; j < s->nlocs; j++) {
			size_t li = find_id(l->locs, l->nlocs, sizeof(*l->locs),
					    l->sample_locs[s->first_loc + j]), mi;

			if (li == SIZE_MAX)
				return bad(l, "sample %zu refers to location %" PRIu64 ", which is "
					   "not in the profile", i + 1,
					   l->sample_locs[s->first_loc + j]);
			if (!l->locs[li].mapping_id)
				continue;
			mi = find_id(l->maps, l->nmaps, sizeof(*l->maps), l->locs[li].mapping_id);
			if (mi != SIZE_MAX && mpid[mi] == UINT32_MAX)
				mpid[mi] = s->pid;
		}
	}
	prev = l->nsamples ? l->samples[0].pid : 0;
	for (i = 0; i < l->nmaps; i++) {
		if (mpid[i] == UINT32_MAX)
			mpid[i] = prev;
		prev = mpid[i];
	}
	return 0;
}

static int build_types(struct loader *l, struct profile *p)
{
	const char *def = NULL;
	size_t i;
	int err;

	for (i = 0; i < l->ntypes; i++) {
		const char *t = str_at(l, l->types[i].type, "a sample type");
		const char *u = t ? str_at(l, l->types[i].unit, "a sample unit") : NULL;

		if (!u)
			return -EINVAL;
		err = profile__add_type(p, t, u);
		if (err)
			return err;
	}
	if (l->default_type && !(def = str_at(l, l->default_type, "default_sample_type")))
		return -EINVAL;
	/* pprof's rule: without a default, the last type is the one to show */
	if (p->ntypes && (!def || profile__set_default_type(p, def)))
		p->default_type = p->ntypes - 1;
	if (l->period_type.type || l->period_type.unit) {
		if (!str_at(l, l->period_type.type, "the period type") ||
		    !str_at(l, l->period_type.unit, "the period unit"))
			return -EINVAL;
	}
	return 0;
}

static int build_functions(struct loader *l, struct profile *p, uint32_t *fidx)
{
	size_t i;
	int err = sort_ids(l, l->funcs, l->nfuncs, sizeof(*l->funcs), "function");

	for (i = 0; !err && i < l->nfuncs; i++) {
		const struct raw_function *f = &l->funcs[i];
		const char *name = str_at(l, f->name, "a function name");
		bool ok1, ok2;
		const char *sys = opt_str(l, f->system_name, "a function's system name", &ok1);
		const char *file = opt_str(l, f->filename, "a function's file name", &ok2);

		if (!name || !ok1 || !ok2)
			return -EINVAL;
		/* named by its call frame information's range when written (pprof has no
		 * field to say so): known by that name's shape, its system name the same and
		 * no file */
		if (profile__is_cfi_name(name) && (!sys || !strcmp(sys, name)) &&
		    (!file || !*file))
			fidx[i] = profile__function_cfi(p, name);
		else
			fidx[i] = profile__function(p, name, sys, file);
		if (fidx[i] == PROF_NONE)
			err = -errno;
	}
	return err;
}

/* The ELF address at the start of a mapping of file at offset: the file offset (as pprof
 * takes it) unless one of our comments says otherwise. */
static uint64_t mapping_elf_start(const struct loader *l, uint64_t offset, const char *file)
{
	for (size_t i = 0; i < l->nelfs; i++) {
		if (l->elfs[i].offset == offset && !strcmp(l->elfs[i].file, file))
			return l->elfs[i].elf;
	}
	return offset;
}

static int build_mappings(struct loader *l, struct profile *p, uint32_t *midx)
{
	uint32_t *mpid = calloc(l->nmaps ? l->nmaps : 1, sizeof(*mpid));
	size_t i;
	int err = mpid ? 0 : -ENOMEM;

	if (!err)
		err = mapping_pids(l, mpid);
	for (i = 0; !err && i < l->nmaps; i++) {
		const struct raw_mapping *m = &l->maps[i];
		const char *file = str_at(l, m->file, "a mapping's file name");
		bool ok;
		const char *bid = opt_str(l, m->build_id, "a mapping's build id", &ok);

		if (!file || !ok) {
			err = -EINVAL;
			break;
		}
		midx[i] = profile__mapping(p, mpid[i], m->start, m->limit, m->offset, file, bid);
		if (midx[i] == PROF_NONE)
			err = -errno;
		l->maps[i].elf_start = mapping_elf_start(l, m->offset, file);
	}
	free(mpid);
	return err;
}

static int build_locations(struct loader *l, struct profile *p, const uint32_t *fidx,
			   const uint32_t *midx, uint32_t *lidx)
{
	struct prof_line *lines = NULL;
	size_t i, j, cap = 0;
	int err = 0;

	for (i = 0; !err && i < l->nlocs; i++) {
		const struct raw_location *loc = &l->locs[i];
		uint32_t mapping = PROF_NONE, n = 0;
		uint64_t module_offset = 0;

		if (loc->mapping_id) {
			size_t mi = find_id(l->maps, l->nmaps, sizeof(*l->maps), loc->mapping_id);
			const struct raw_mapping *m;

			if (mi == SIZE_MAX) {
				err = bad(l, "location %" PRIu64 " refers to mapping %" PRIu64 ", "
					  "which is not in the profile", loc->id, loc->mapping_id);
				break;
			}
			m = &l->maps[mi];
			mapping = midx[mi];
			/* pprof keeps no module offset: the address in the mapping from its
			 * start's ELF address (pprof.c writes a caller's at its call) */
			module_offset = loc->address >= m->start ?
					loc->address - m->start + m->elf_start : loc->address;
		}
		if (loc->nlines > cap) {
			struct prof_line *q = realloc(lines, loc->nlines * sizeof(*q));

			if (!q) {
				err = -ENOMEM;
				break;
			}
			lines = q;
			cap = loc->nlines;
		}
		for (j = 0; j < loc->nlines; j++) {
			const struct raw_line *ln = &l->lines[loc->first_line + j];
			size_t fi;

			/* function id 0: a line with no function, which the model cannot hold */
			if (!ln->function_id)
				continue;
			fi = find_id(l->funcs, l->nfuncs, sizeof(*l->funcs), ln->function_id);
			if (fi == SIZE_MAX) {
				err = bad(l, "location %" PRIu64 " refers to function %" PRIu64 ", "
					  "which is not in the profile", loc->id, ln->function_id);
				break;
			}
			lines[n++] = (struct prof_line){ .function = fidx[fi], .line = ln->line };
		}
		if (err)
			break;
		lidx[i] = profile__location(p, mapping, loc->address, module_offset, lines, n);
		if (lidx[i] == PROF_NONE)
			err = -errno;
	}
	free(lines);
	return err;
}

/*
 * In ebprof's mem and kmem profiles inuse_objects and inuse_space are the allocations
 * outstanding at the end, which the reports list as such; pprof keeps their counts but not
 * their ages, which stay 0 (a kmem profile's said "none" outstanding, its sites 159 inuse).
 */
static void outstanding(const struct profile *p, struct prof_sample *s, int objects, int space)
{
	if (objects < 0 || space < 0 || s->values[objects] <= 0)
		return;
	s->out.count = (uint64_t)s->values[objects];
	s->out.bytes = s->values[space] > 0 ? (uint64_t)s->values[space] : 0;
}

static int build_samples(struct loader *l, struct profile *p, const uint32_t *lidx)
{
	bool mem = !strcmp(p->mode, "mem") || !strcmp(p->mode, "kmem");
	/* a diff's stacks are two runs' with no process: its samples are pid 0 */
	bool procs = !profile__is_diff(p);
	int objects = mem ? profile__type_index(p, "inuse_objects") : -1;
	int space = mem ? profile__type_index(p, "inuse_space") : -1;
	struct prof_sample *ps;
	uint32_t *locs = NULL;
	size_t i, j, cap = 0;
	int err = 0;

	for (i = 0; !err && i < l->nsamples; i++) {
		const struct raw_sample *s = &l->samples[i];
		const char *comm = NULL;

		if (s->nvals != p->ntypes) {
			err = bad(l, "sample %zu has %zu values for %" PRIu32 " sample types",
				  i + 1, s->nvals, p->ntypes);
			break;
		}
		if (s->nlocs > UINT32_MAX) {
			err = bad(l, "sample %zu has too many locations", i + 1);
			break;
		}
		if (s->nlocs > cap) {
			uint32_t *q = realloc(locs, s->nlocs * sizeof(*q));

			if (!q) {
				err = -ENOMEM;
				break;
			}
			locs = q;
			cap = s->nlocs;
		}
		for (j = 0; j < s->nlocs; j++) {
			/* every id was found by mapping_pids() already */
			size_t li = find_id(l->locs, l->nlocs, sizeof(*l->locs),
					    l->sample_locs[s->first_loc + j]);

			locs[j] = lidx[li];
		}
		ps = profile__add_sample(p, locs, (uint32_t)s->nlocs, l->sample_vals + s->first_val,
					 s->pid);
		if (!ps) {
			err = -errno;
			break;
		}
		outstanding(p, ps, objects, space);
		ps->suppressed = s->suppressed;
		if (s->comm)
			comm = l->strs[s->comm];	/* checked by read_label() */
		if (procs && (comm || !profile__find_process(p, s->pid)) &&
		    !profile__add_process(p, s->pid, comm, NULL))
			err = -errno;
	}
	free(locs);
	return err;
}

/*
 * A profile without pid labels (Go's, most tools') is one process as far as we can tell: pid 0,
 * named after its main binary, pprof's first mapping, so flame graphs and reports have a name to
 * show.
 */
static int name_lone_process(struct loader *l, struct profile *p)
{
	const char *name, *slash;

	if (l->any_pid || !p->nprocesses || !p->nmappings)
		return 0;
	name = p->mappings[0].file;
	slash = strrchr(name, '/');
	if (slash && slash[1])
		name = slash + 1;
	if (!*name)
		return 0;
	return profile__add_process(p, 0, name, NULL) ? 0 : -errno;
}

/* Is l's period pprof.c's stand-in for none: 1 of p's default type? */
static bool writers_default_period(const struct loader *l, const struct profile *p)
{
	const struct prof_value_type *t = p->ntypes ? &p->types[p->default_type] : NULL;

	return t && l->period == 1 && !strcmp(l->strs[l->period_type.type], t->type) &&
	       !strcmp(l->strs[l->period_type.unit], t->unit);
}

/* The process statistics of ebprof's modes that are one sample type summed over a process's
 * samples (docs/JSON.md), which pprof has no place for: a profile of ours loaded back gets them
 * again from its samples, so that its processes' rows and JSON `totals` are the run's. Those
 * the samples do not hold (mem's calls and frees, lock's futex and kernel split, offcpu's
 * switches in cpu --offcpu, kmem's counts by kind) stay unknown, absent. */
static const struct type_stat {
	const char *mode, *type, *stat;
} type_stats[] = {
	{ "cpu", "samples", "samples" },
	{ "cpu", "cpu", "cpu_ns" },
	{ "cpu", "offcpu", "offcpu_ns" },
	{ "cpu", "wall", "wall_ns" },
	{ "offcpu", "offcpu", "offcpu_ns" },
	{ "offcpu", "switches", "switches" },
	{ "io", "requests", "requests" },
	{ "io", "io_bytes", "io_bytes" },
	{ "io", "latency", "latency_ns" },
	{ "io", "queue", "queue_ns" },
	{ "lock", "contentions", "contentions" },
	{ "lock", "delay", "delay_ns" },
	{ "lock", "timeouts", "timeouts" },
	{ "lock", "timeout_delay", "timeout_delay_ns" },
	{ "mem", "alloc_objects", "alloc_count" },
	{ "mem", "alloc_space", "alloc_bytes" },
	{ "mem", "inuse_objects", "live_count" },
	{ "mem", "inuse_space", "live_bytes" },
	{ "kmem", "alloc_space", "kmem_bytes_alloc" },
	{ "kmem", "inuse_objects", "kmem_live_count" },
	{ "kmem", "inuse_space", "kmem_live_bytes" },
};

static int process_stats(struct profile *p)
{
	int64_t *sums = NULL;
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(type_stats) / sizeof(*type_stats); i++) {
		const struct type_stat *ts = &type_stats[i];
		int t = strcmp(ts->mode, p->mode) ? -1 : profile__type_index(p, ts->type);

		if (t < 0)
			continue;
		if (!sums && !(sums = profile__process_sums(p)))
			return -ENOMEM;
		for (uint32_t k = 0; !err && k < p->nprocesses; k++) {
			int64_t v = sums[(size_t)k * p->ntypes + (uint32_t)t];

			err = prof_process__add_stat(p, &p->processes[k], ts->stat,
						     v > 0 ? (uint64_t)v : 0);
		}
	}
	free(sums);
	return err;
}

static int build(struct loader *l, struct profile **out)
{
	uint32_t *fidx = NULL, *midx = NULL, *lidx = NULL;
	struct profile *p = NULL;
	char *mode = NULL;
	size_t i;
	int err;

	for (i = 0; i < l->ncomments; i++) {
		if (!str_at(l, l->comments[i], "a comment"))
			return -EINVAL;
	}
	if (l->ncomments)
		mode = ebprof_mode(l->strs[l->comments[0]]);
	p = profile__new(mode ? mode : "pprof");
	if (p)
		p->from_pprof = true;
	fidx = malloc((l->nfuncs + 1) * sizeof(*fidx));
	midx = malloc((l->nmaps + 1) * sizeof(*midx));
	lidx = malloc((l->nlocs + 1) * sizeof(*lidx));
	err = p && fidx && midx && lidx ? 0 : -ENOMEM;
	if (!err)
		err = build_types(l, p);
	if (!err)
		err = sort_ids(l, l->maps, l->nmaps, sizeof(*l->maps), "mapping");
	if (!err)
		err = sort_ids(l, l->locs, l->nlocs, sizeof(*l->locs), "location");
	if (!err)
		err = apply_comments(l, p, mode != NULL);
	if (!err)
		err = build_functions(l, p, fidx);
	if (!err)
		err = build_mappings(l, p, midx);
	if (!err)
		err = build_locations(l, p, fidx, midx, lidx);
	if (!err)
		err = build_samples(l, p, lidx);
	if (!err)
		err = name_lone_process(l, p);
	if (!err && mode)
		err = process_stats(p);
	/* a profile of ours that is not mem's states its period (mem's is derived from the
	 * default type and its sampling, which pprof does not carry); 1 of the default type is
	 * what the writer puts in for a profile without one (every event recorded), not a period
	 * of the run: a reloaded lock profile said "Period: 1 ns of delay per sample" */
	if (!err && mode && strcmp(mode, "mem") && l->period_type.type &&
	    !writers_default_period(l, p))
		err = profile__set_period(p, l->strs[l->period_type.type],
					  l->strs[l->period_type.unit], l->period);
	/* a sampling period is worth knowing when the values are estimates, which ours never are */
	if (!err && !mode && l->period > 1 && l->period_type.type)
		err = profile__add_note(p, "sampled every %" PRId64 " %s of %s (pprof period)",
					l->period, l->strs[l->period_type.unit],
					l->strs[l->period_type.type]);
	free(mode);
	free(fidx);
	free(midx);
	free(lidx);
	if (err) {
		profile__free(p);
		return err;
	}
	*out = p;
	return 0;
}

static void loader_free(struct loader *l)
{
	free(l->strs);
	free(l->strbuf);
	free(l->types);
	free(l->funcs);
	free(l->maps);
	free(l->locs);
	free(l->lines);
	free(l->samples);
	free(l->sample_locs);
	free(l->sample_vals);
	free(l->comments);
	free(l->elfs);
}

/* ---- gzip ------------------------------------------------------------------------------- */

static bool is_gzip(const uint8_t *d, size_t len)
{
	return len >= 2 && d[0] == 0x1f && d[1] == 0x8b;
}

/* Inflate every gzip member of in (gzip allows several back to back, as Go reads them). */
static int gunzip(struct loader *l, const uint8_t *in, size_t len, uint8_t **outp,
		  size_t *out_len)
{
	size_t cap = len < MAX_INFLATED / 8 ? len * 8 + 4096 : MAX_INFLATED, n = 0, left = len;
	uint8_t *out = malloc(cap), *q;
	z_stream zs = {};
	int zr, err = 0;

	if (!out)
		return -ENOMEM;
	/* 15 + 32: a zlib or gzip header, told apart by zlib */
	if (inflateInit2(&zs, 15 + 32) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	for (;;) {
		if (!zs.avail_in && left) {
			zs.next_in = (Bytef *)(in + (len - left));
			zs.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
			left -= zs.avail_in;
		}
		if (n == cap) {
			if (cap >= MAX_INFLATED) {
				err = -EFBIG;
				break;
			}
			cap = cap > MAX_INFLATED / 2 ? MAX_INFLATED : cap * 2;
			q = realloc(out, cap);
			if (!q) {
				err = -ENOMEM;
				break;
			}
			out = q;
		}
		zs.next_out = out + n;
		zs.avail_out = cap - n > UINT32_MAX ? UINT32_MAX : (uInt)(cap - n);
		zr = inflate(&zs, Z_NO_FLUSH);
		n = (size_t)(zs.next_out - out);
		if (zr == Z_STREAM_END) {
			size_t rest = zs.avail_in + left;
			const uint8_t *next = in + (len - rest);

			if (!rest)
				break;
			if (!is_gzip(next, rest)) {
				err = bad(l, "there is data after the end of the gzip stream");
				break;
			}
			inflateReset(&zs);
			continue;
		}
		if (zr == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		}
		if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
			err = bad(l, "its gzip data is corrupt (%s)", zs.msg ? zs.msg : "bad data");
			break;
		}
		if (zr == Z_BUF_ERROR && !zs.avail_in && !left) {
			err = bad(l, "its gzip data is truncated");
			break;
		}
	}
	inflateEnd(&zs);
	if (err) {
		free(out);
		return err;
	}
	*outp = out;
	*out_len = n;
	return 0;
}

/* ---- entry points ----------------------------------------------------------------------- */

/* Whether data starts as text does: its first 512 bytes (or fewer) printable ASCII, tabs and
 * line ends, or UTF-8's high bytes, with a line end among them. A protobuf Profile starts
 * with a field key (0x0a, 0x12 ...) and holds varints: never that. */
static bool looks_like_text(const uint8_t *d, size_t len)
{
	size_t n = len < 512 ? len : 512;
	bool eol = false;

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (d[i] == '\n')
			eol = true;
		else if (d[i] < 0x20 && d[i] != '\t' && d[i] != '\r')
			return false;
		else if (d[i] == 0x7f)
			return false;
	}
	return eol || n < 512;
}

struct profile *profile__parse_pprof(const void *data, size_t len, int *errp, char *why,
				     size_t why_len)
{
	struct loader l = { .why = why, .why_len = why_len };
	struct profile *p = NULL;
	uint8_t *raw = NULL;
	size_t raw_len = len;
	struct rd r;
	int err = 0;

	if (why && why_len)
		why[0] = '\0';
	if (!data && len) {
		err = -EINVAL;
		goto out;
	}
	if (!data)
		data = "";	/* no arithmetic on NULL below */
	if (is_gzip(data, len)) {
		err = gunzip(&l, data, len, &raw, &raw_len);
		if (err)
			goto out;
	}
	l.base = raw ? raw : data;
	r = (struct rd){ l.base, l.base + raw_len };
	if (!raw_len) {
		/* a run cut short, a copy that failed: not "no string table" */
		err = bad(&l, "%s", raw ? "its gzip data inflates to nothing: no profile in it"
					: "it is empty (0 bytes)");
		goto out;
	}
	if (looks_like_text(l.base, raw_len)) {
		/* a folded file, a JSON or text report: protobuf's reasons would only confuse */
		if (why && why_len)
			snprintf(why, why_len, "it is text (folded stacks, JSON or a report?), not "
				 "protobuf; ebprof report and diff read pprof profiles (.pb.gz, .pb), "
				 "such as ebprof -o x.pb.gz writes");
		err = -EINVAL;
		goto out;
	}
	err = read_strings(&l, r);
	if (!err)
		err = read_profile(&l, r);
	if (!err)
		err = build(&l, &p);
out:
	loader_free(&l);
	free(raw);
	if (err == -EINVAL && why && why_len && !why[0])
		snprintf(why, why_len, "it is not a pprof profile");
	if (errp)
		*errp = err;
	if (err) {
		errno = -err;
		return NULL;
	}
	return p;
}

struct profile *profile__load_pprof(const char *path, int *errp, char *why, size_t why_len)
{
	struct profile *p;
	size_t len;
	char *data;

	if (why && why_len)
		why[0] = '\0';
	/* not slurped without a limit: /dev/zero, a pipe or a huge wrong file ran the machine
	 * out of memory before the parser could refuse it */
	if (!strcmp(path, "-")) {
		data = util_read_fd(STDIN_FILENO, MAX_INFLATED, &len);
	} else {
		int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

		data = fd < 0 ? NULL : util_read_fd(fd, MAX_INFLATED, &len);
		saved = errno;
		if (fd >= 0)
			close(fd);
		errno = saved;
	}
	if (!data) {
		int err = errno ? -errno : -EIO;

		if (why && why_len)
			snprintf(why, why_len, "%s", strerror(-err));
		if (errp)
			*errp = err;
		return NULL;
	}
	p = profile__parse_pprof(data, len, errp, why, why_len);
	free(data);
	return p;
}
