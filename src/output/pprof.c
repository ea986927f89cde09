/* pprof output: the profile as a gzipped profile.proto message (github.com/google/pprof,
 * proto/profile.proto), loadable by `go tool pprof` and every pprof-speaking tool.
 *
 * The model is pprof-shaped, so this is a transcription: indices become 1-based ids, strings
 * go through one string table (entry 0 is ""), and each sample gets a numeric `pid` label plus
 * a `comm` label when the process has a name, and `suppressed` = "true" when its leaks matched a
 * suppression. What pprof has no field for (histograms, ages,
 * per-process summaries) is left to the JSON and text reports; the run's facts, drops and notes
 * become comments, and so does where a mapping lies in its ELF file when that is not at its
 * file offset (a program built without PIE), so that its frames' module offsets come back.
 * A profile with a period type (cpu/nanoseconds) writes it and its period.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "output/pb.h"
#include "profile/pprof_proto.h"

/* The string table: strings by content to their index, in order of first use. */
struct strtab {
	const char **strs;
	uint32_t n, cap;
	uint32_t *slots;	/* index + 1, 0 = empty */
	uint32_t nslots;
	int err;
};

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static bool strtab_rehash(struct strtab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024, i, j;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	for (i = 0; i < t->n; i++) {
		for (j = str_hash(t->strs[i]) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return true;
}

/* Index of s in the table, adding it if new; NULL is "". 0 after an error. */
static int64_t str(struct strtab *t, const char *s)
{
	uint32_t j;

	if (!s)
		s = "";
	if (t->err)
		return 0;
	if ((uint64_t)(t->n + 1) * 2 > t->nslots && !strtab_rehash(t))
		goto nomem;
	for (j = str_hash(s) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		if (strcmp(t->strs[t->slots[j] - 1], s) == 0)
			return t->slots[j] - 1;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		const char **q = realloc(t->strs, sizeof(*q) * cap);

		if (!q)
			goto nomem;
		t->strs = q;
		t->cap = cap;
	}
	t->strs[t->n] = s;
	t->slots[j] = ++t->n;
	return t->n - 1;
nomem:
	t->err = -ENOMEM;
	return 0;
}

struct pprof {
	const struct profile *p;
	struct pb pb;
	struct strtab st;
	char **owned;		/* formatted strings the table points to */
	uint32_t nowned;
	uint64_t *elf_start;	/* per mapping: the ELF address of its start */
};

static void value_type(struct pprof *w, uint32_t field, const struct prof_value_type *vt)
{
	size_t m = pb_open(&w->pb);

	pb_int64(&w->pb, VALUE_TYPE_TYPE, str(&w->st, vt->type));
	pb_int64(&w->pb, VALUE_TYPE_UNIT, str(&w->st, vt->unit));
	pb_close(&w->pb, field, m);
}

static void write_sample(struct pprof *w, const struct prof_sample *s)
{
	const struct prof_process *proc = profile__find_process(w->p, s->pid);
	struct pb *b = &w->pb;
	size_t m = pb_open(b), f;
	uint32_t i;

	if (s->nlocs) {
		f = pb_open(b);
		for (i = 0; i < s->nlocs; i++)
			pb_varint(b, (uint64_t)s->locs[i] + 1);
		pb_close(b, SAMPLE_LOCATION_ID, f);
	}
	if (w->p->ntypes) {
		f = pb_open(b);
		for (i = 0; i < w->p->ntypes; i++)
			pb_varint(b, (uint64_t)s->values[i]);
		pb_close(b, SAMPLE_VALUE, f);
	}

	f = pb_open(b);
	pb_int64(b, LABEL_KEY, str(&w->st, "pid"));
	pb_int64(b, LABEL_NUM, s->pid);
	pb_close(b, SAMPLE_LABEL, f);
	/* an empty string label would read back as a numeric one */
	if (proc && proc->comm && *proc->comm) {
		f = pb_open(b);
		pb_int64(b, LABEL_KEY, str(&w->st, "comm"));
		pb_int64(b, LABEL_STR, str(&w->st, proc->comm));
		pb_close(b, SAMPLE_LABEL, f);
	}
	/* leaks a suppression matched: pprof -tagignore=suppressed=true leaves them out */
	if (s->suppressed) {
		f = pb_open(b);
		pb_int64(b, LABEL_KEY, str(&w->st, "suppressed"));
		pb_int64(b, LABEL_STR, str(&w->st, "true"));
		pb_close(b, SAMPLE_LABEL, f);
	}
	pb_close(b, PROFILE_SAMPLE, m);
}

/*
 * The main executable, as well as we can tell: of the first process's file mappings the lowest
 * one (executables load below the libraries, PIE or not). pprof names the profile after it.
 */
static uint32_t main_mapping(const struct profile *p)
{
	uint32_t pid, i, best = 0;
	bool found = false;

	if (!p->nmappings)
		return 0;
	pid = p->nprocesses ? p->processes[0].pid : p->nsamples ? p->samples[0].pid : 0;
	for (i = 0; i < p->nmappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];

		if (m->pid != pid || m->file[0] != '/')
			continue;
		if (!found || m->start < p->mappings[best].start)
			best = i;
		found = true;
	}
	return best;
}

static int write_mappings(struct pprof *w)
{
	const struct profile *p = w->p;
	uint32_t first, k;
	/* bit 0 functions, 1 filenames, 2 line numbers, 3 inline frames */
	uint8_t *has = calloc(p->nmappings ? p->nmappings : 1, 1);
	uint32_t i, j;

	if (!has)
		return -ENOMEM;
	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *loc = &p->locations[i];

		if (loc->mapping == PROF_NONE || !loc->nlines)
			continue;
		has[loc->mapping] |= 1;
		if (loc->nlines > 1)
			has[loc->mapping] |= 8;
		for (j = 0; j < loc->nlines; j++) {
			if (p->functions[loc->lines[j].function].filename)
				has[loc->mapping] |= 2;
			if (loc->lines[j].line > 0)
				has[loc->mapping] |= 4;
		}
	}
	first = main_mapping(p);
	for (k = 0; k < p->nmappings; k++) {
		/* pprof takes the first mapping for the main binary: put it first */
		uint32_t mi = k == 0 ? first : k <= first ? k - 1 : k;
		const struct prof_mapping *mp = &p->mappings[mi];
		size_t m = pb_open(&w->pb);

		pb_uint64(&w->pb, MAPPING_ID, (uint64_t)mi + 1);
		pb_uint64(&w->pb, MAPPING_MEMORY_START, mp->start);
		pb_uint64(&w->pb, MAPPING_MEMORY_LIMIT, mp->limit);
		pb_uint64(&w->pb, MAPPING_FILE_OFFSET, mp->offset);
		pb_int64(&w->pb, MAPPING_FILENAME, str(&w->st, mp->file));
		pb_int64(&w->pb, MAPPING_BUILD_ID, str(&w->st, mp->build_id));
		pb_bool(&w->pb, MAPPING_HAS_FUNCTIONS, has[mi] & 1);
		pb_bool(&w->pb, MAPPING_HAS_FILENAMES, has[mi] & 2);
		pb_bool(&w->pb, MAPPING_HAS_LINE_NUMBERS, has[mi] & 4);
		pb_bool(&w->pb, MAPPING_HAS_INLINE_FRAMES, has[mi] & 8);
		pb_close(&w->pb, PROFILE_MAPPING, m);
	}
	free(has);
	return 0;
}

/*
 * Where each mapping lies in its ELF file: the ELF address of its start, from which a reader
 * gets a location's module offset back (address - start + it). pprof keeps only the file
 * offset, which is that address in a PIE or a shared library as GNU ld links them, but not in
 * a program built without PIE (linked where it runs, at 0x400000: its ELF addresses are its
 * runtime addresses) nor where lld leaves a page between the two. The locations say it: a
 * module offset is the ELF address of the location's address or, for a caller, of its call
 * (address - 1); a mapping starts on a page in memory, in the file and so in the ELF
 * addresses, so the page at or right after what a location implies is the one. A mapping
 * without a location that says keeps its file offset.
 */
static int mapping_elf_starts(struct pprof *w)
{
	const struct profile *p = w->p;
	bool *known = calloc(p->nmappings ? p->nmappings : 1, sizeof(*known));
	uint32_t i;

	w->elf_start = malloc((p->nmappings ? p->nmappings : 1) * sizeof(*w->elf_start));
	if (!known || !w->elf_start) {
		free(known);
		return -ENOMEM;
	}
	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *loc = &p->locations[i];
		const struct prof_mapping *m;
		uint64_t e;

		if (loc->mapping == PROF_NONE || known[loc->mapping])
			continue;
		m = &p->mappings[loc->mapping];
		if (loc->address < m->start || loc->address > m->limit)
			continue;
		e = loc->module_offset - (loc->address - m->start);
		if ((e + 1) % 4096 > 1)
			continue;
		w->elf_start[loc->mapping] = (e + 1) & ~(uint64_t)4095;
		known[loc->mapping] = true;
	}
	for (i = 0; i < p->nmappings; i++) {
		if (!known[i])
			w->elf_start[i] = p->mappings[i].offset;
	}
	free(known);
	return 0;
}

/* A location's address as pprof keeps it, from which a reader gets its module offset back
 * (address - start + the ELF address of the start): a caller's module offset is its call's
 * (address - 1), so that address is written, "in the middle of a call instruction" as pprof's
 * format allows for callers. Everything else as it is. */
static uint64_t location_address(const struct pprof *w, const struct prof_location *loc)
{
	const struct prof_mapping *m;
	uint64_t a;

	if (loc->mapping == PROF_NONE)
		return loc->address;
	m = &w->p->mappings[loc->mapping];
	a = m->start + (loc->module_offset - w->elf_start[loc->mapping]);
	return a >= m->start && a < m->limit && a + 1 == loc->address ? a : loc->address;
}

static void write_locations(struct pprof *w)
{
	const struct profile *p = w->p;
	uint32_t i, j;

	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *loc = &p->locations[i];
		size_t m = pb_open(&w->pb);

		pb_uint64(&w->pb, LOCATION_ID, (uint64_t)i + 1);
		if (loc->mapping != PROF_NONE)
			pb_uint64(&w->pb, LOCATION_MAPPING_ID, (uint64_t)loc->mapping + 1);
		pb_uint64(&w->pb, LOCATION_ADDRESS, location_address(w, loc));
		/* innermost first: pprof takes the last line for the caller the rest inline into */
		for (j = 0; j < loc->nlines; j++) {
			size_t l = pb_open(&w->pb);

			pb_uint64(&w->pb, LINE_FUNCTION_ID, (uint64_t)loc->lines[j].function + 1);
			pb_int64(&w->pb, LINE_LINE, loc->lines[j].line);
			pb_close(&w->pb, LOCATION_LINE, l);
		}
		pb_close(&w->pb, PROFILE_LOCATION, m);
	}
}

/*
 * A synthetic frame's function (a lock, a thread, an event: profile__location_is_synthetic)
 * is no symbol, so it has no system name. Written as its name, Go's pprof took it for a
 * demangled C++ name ("[" or "]" and a "(...)" in it) and cut its "parameters": lock's
 * "futex 0x7f8a46031990 in [stack] of a thread (futex_wait_bitset)" lost its class in
 * `go tool pprof -top`, offcpu's "waker: ping [1778] of pingpong (1776)" its pid. pprof
 * leaves a name alone whose system name differs from it.
 */
static int write_functions(struct pprof *w)
{
	const struct profile *p = w->p;
	bool *synthetic = calloc(p->nfunctions ? p->nfunctions : 1, sizeof(*synthetic));
	uint32_t i;

	if (!synthetic)
		return -ENOMEM;
	for (i = 0; i < p->nlocations; i++)
		if (profile__location_is_synthetic(&p->locations[i]))
			synthetic[p->locations[i].lines[0].function] = true;
	for (i = 0; i < p->nfunctions; i++) {
		const struct prof_function *fn = &p->functions[i];
		size_t m = pb_open(&w->pb);

		pb_uint64(&w->pb, FUNCTION_ID, (uint64_t)i + 1);
		pb_int64(&w->pb, FUNCTION_NAME, str(&w->st, fn->name));
		pb_int64(&w->pb, FUNCTION_SYSTEM_NAME,
			 str(&w->st, synthetic[i] ? "" : fn->system_name ? fn->system_name
								   : fn->name));
		pb_int64(&w->pb, FUNCTION_FILENAME, str(&w->st, fn->filename));
		pb_close(&w->pb, PROFILE_FUNCTION, m);
	}
	free(synthetic);
	return 0;
}

static int commentf(struct pprof *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int commentf(struct pprof *w, const char *fmt, ...)
{
	char *s, **q;
	va_list ap;
	int n;

	q = realloc(w->owned, sizeof(*q) * (w->nowned + 1));
	if (!q)
		return -ENOMEM;
	w->owned = q;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	w->owned[w->nowned++] = s;
	pb_int64(&w->pb, PROFILE_COMMENT, str(&w->st, s));
	return 0;
}

/* Comments carry what pprof has no field for but a reader of the profile should know. */
static int write_comments(struct pprof *w)
{
	const struct profile *p = w->p;
	uint32_t i;
	int err;

	err = commentf(w, "ebprof %s profile", p->mode);
	if (!err && p->command)
		err = commentf(w, "command: %s", p->command);
	if (!err && p->kernel)
		err = commentf(w, "kernel: %s", p->kernel);
	/* how mem's values were recorded, which its period alone does not say ("every" has
	 * period 1): read back by pprof_read.c, so a reloaded profile is still estimates */
	if (!err && p->sampling)
		err = commentf(w, "sampling: %s %" PRIu64, p->sampling, p->sample_period);
	/* the run's facts, each "info: KEY: VALUE" (keys hold no ':'), read back by pprof_read.c */
	for (i = 0; !err && i < p->ninfo; i++)
		err = commentf(w, "info: %s: %s", p->info[i].key, p->info[i].value);
	for (i = 0; !err && i < p->ndrops; i++) {
		if (p->drops[i].value)
			err = commentf(w, "dropped (%s): %" PRIu64, p->drops[i].key,
				       p->drops[i].value);
	}
	/* where a mapping lies in its file when that is not at its file offset, once per file
	 * and offset (as pprof may merge one file's mappings), read back by pprof_read.c */
	for (i = 0; !err && i < p->nmappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];
		uint32_t j;

		if (w->elf_start[i] == m->offset)
			continue;
		for (j = 0; j < i; j++) {
			const struct prof_mapping *o = &p->mappings[j];

			if (w->elf_start[j] != o->offset && o->offset == m->offset &&
			    !strcmp(o->file, m->file))
				break;
		}
		if (j == i)
			err = commentf(w, "elf address: 0x%" PRIx64 " at offset 0x%" PRIx64
				       " of %s", w->elf_start[i], m->offset, m->file);
	}
	for (i = 0; !err && i < p->nnotes; i++) {
		char buf[PROF_NOTE_MAX];

		/* the string table keeps pointers: commentf keeps its own copy of the text */
		if (p->note_counts && p->note_counts[i] > 1)
			err = commentf(w, "%s", profile__note(p, i, buf, sizeof(buf)));
		else
			pb_int64(&w->pb, PROFILE_COMMENT, str(&w->st, p->notes[i]));
	}
	return err;
}

static int encode(struct pprof *w)
{
	const struct profile *p = w->p;
	uint32_t i;
	int err;

	/* entry 0 must be "" */
	str(&w->st, "");
	for (i = 0; i < p->ntypes; i++)
		value_type(w, PROFILE_SAMPLE_TYPE, &p->types[i]);
	for (i = 0; i < p->nsamples; i++)
		write_sample(w, &p->samples[i]);
	err = write_mappings(w);
	if (!err)
		err = mapping_elf_starts(w);
	if (err)
		return err;
	write_locations(w);
	err = write_functions(w);
	if (err)
		return err;
	pb_int64(&w->pb, PROFILE_TIME_NANOS, p->time_nanos);
	pb_int64(&w->pb, PROFILE_DURATION_NANOS, p->duration_nanos);
	if (p->period_type.type) {
		/* a sampled profile that says what one event stands for (cpu: nanoseconds of CPU
		 * time between samples): pprof reads the kind of profile from it */
		value_type(w, PROFILE_PERIOD_TYPE, &p->period_type);
		pb_int64(&w->pb, PROFILE_PERIOD, p->period);
	} else if (p->ntypes) {
		/* every event is recorded, so the period is 1 of the default type */
		value_type(w, PROFILE_PERIOD_TYPE, &p->types[p->default_type]);
		/* sampled: the values are already scaled estimates; period says the rate */
		pb_int64(&w->pb, PROFILE_PERIOD,
			 p->sampling && !strcmp(p->sampling, "bytes") ? (int64_t)p->sample_period : 1);
	}
	if (p->ntypes) {
		pb_int64(&w->pb, PROFILE_DEFAULT_SAMPLE_TYPE,
			 str(&w->st, p->types[p->default_type].type));
	}
	err = write_comments(w);
	if (err)
		return err;
	/* last, once every string is known; field order does not matter in protobuf */
	for (i = 0; i < w->st.n; i++)
		pb_bytes(&w->pb, PROFILE_STRING_TABLE, w->st.strs[i], strlen(w->st.strs[i]));
	return w->st.err ? w->st.err : w->pb.err;
}

static int gzip_to(const uint8_t *data, size_t len, FILE *f)
{
	unsigned char out[64 * 1024];
	z_stream zs = {};
	int zr = Z_OK, err = 0;

	/* 15 + 16: a gzip wrapper rather than zlib's, which is what pprof files are */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* pprof files are far below 4 GiB, but feed in chunks to be safe */
	do {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		int flush;

		zs.next_in = (Bytef *)data;
		zs.avail_in = (uInt)chunk;
		data += chunk;
		len -= chunk;
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				goto out;
			}
			if (fwrite(out, 1, sizeof(out) - zs.avail_out, f) !=
			    sizeof(out) - zs.avail_out) {
				err = -EIO;
				goto out;
			}
		} while (zs.avail_out == 0);
	} while (len);
	if (zr != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&zs);
	return err;
}

static int pprof_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct pprof w = { .p = p };
	uint32_t i;
	int err;

	err = encode(&w);
	if (!err)
		err = gzip_to(w.pb.buf, w.pb.len, f);
	if (!err && ferror(f))
		err = -EIO;
	pb__free(&w.pb);
	free(w.st.strs);
	free(w.st.slots);
	for (i = 0; i < w.nowned; i++)
		free(w.owned[i]);
	free(w.owned);
	free(w.elf_start);
	return err;
}

const struct output_ops output_pprof = {
	.name = "pprof",
	.ext = ".pb.gz",
	.write = pprof_write,
};
