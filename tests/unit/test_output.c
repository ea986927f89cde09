/* Renderers against a fixed profile: text and JSON byte for byte against the golden files
 * (UPDATE_GOLDEN=1 rewrites them), JSON through jq, pprof through its gzip framing, our own
 * structural decode and, when the Go toolchain is installed, `go tool pprof` itself. Also the
 * choice of renderer by file name and the atomic file write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "core/log.h"
#include "core/session.h"
#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

#define GO_BIN "/usr/lib/go-1.19/bin/go"
#define GOLDEN_TXT "tests/golden/profile.txt"
#define GOLDEN_JSON "tests/golden/profile.json"

/* ---- the fixed profile ------------------------------------------------------------------ */

/*
 * What snapshots of the sites give a 2.5 s run: a trend per site (every kind once), the fit
 * windows, and each process's peak with the sites of its peak snapshot; pid 200's peak was
 * reached after its last snapshot, which holds less than the peak.
 */
static void growth_and_peaks(struct profile *p)
{
	struct prof_process *proc;
	struct prof_peak pk;

	p->samples[0].growth = (struct prof_growth){ PROF_TREND_PLATEAU, 12.4, 1280, 1280, 1280 };
	p->samples[1].growth = (struct prof_growth){ PROF_TREND_SHRINKING, -2730666.7, 3276800, 0,
						     3276800 };
	p->samples[2].growth = (struct prof_growth){ PROF_TREND_GROWING, 61440.5, 79872, 153600,
						     153600 };
	p->samples[3].growth = (struct prof_growth){ PROF_TREND_FLAT, 0, 100, 100, 100 };

	proc = profile__find_process(p, 100);
	proc->nsnapshots = 3;
	proc->fit_from_ns = 2000000000;
	proc->fit_to_ns = 2500000000;
	pk = (struct prof_peak){
		.known = true, .bytes = 3277056, .t_ns = 1200000000,
		.snapshot_t_ns = 1000000000, .snapshot_bytes = 3200000,
		.sites = (struct prof_peak_site[]){ { 1, 3198720 }, { 0, 1280 } }, .nsites = 2,
	};
	assert_int_equal(prof_process__set_peak(p, proc, &pk), 0);

	proc = profile__find_process(p, 200);
	proc->nsnapshots = 3;
	proc->fit_from_ns = 2000000000;
	proc->fit_to_ns = 2500000000;
	pk = (struct prof_peak){
		.known = true, .bytes = 157796, .t_ns = 2400000000,
		.snapshot_t_ns = 2000000000, .snapshot_bytes = 153700,
		.sites = (struct prof_peak_site[]){ { 2, 153600 }, { 3, 100 } }, .nsites = 2,
	};
	assert_int_equal(prof_process__set_peak(p, proc, &pk), 0);
}

/*
 * Two processes. pid 100 (demo) allocates through malloc and operator new, with inline frames;
 * pid 200 (worker) has an unsymbolized library frame, a frame outside any mapping, a stack
 * lost to a full table, and outstanding memory. Two sites tie on bytes.
 */
static struct profile *fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc100, m_cxx, m_worker, m_libc200, m_foo;
	uint32_t f_malloc, f_calloc, f_new, f_push, f_parse, f_read, f_main, f_start, f_wmain;
	uint32_t f_handle;
	uint32_t l_malloc100, l_new, l_push_parse, l_parse, l_read_main, l_main100, l_start;
	uint32_t l_malloc200, l_calloc200, l_foo, l_handle, l_wmain, l_noaddr;
	struct prof_process *proc;
	struct prof_sample *s;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --iterations 3", "6.1.0-18-amd64",
					   "ebprof mem -o out.json -- ./demo --iterations 3",
					   1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  "4f1c2d3e5a6b7c8d9e0f11223344556677889900");
	m_libc100 = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_libc200 = profile__mapping(p, 200, 0x7f1000028000, 0x7f10001bd000, 0x28000, libc,
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_calloc = fn(p, "calloc", "calloc", NULL);
	f_new = fn(p, "operator new(unsigned long)", "_Znwm", NULL);
	f_push = fn(p, "std::vector<int, std::allocator<int> >::push_back(int const&)",
		    "_ZNSt6vectorIiSaIiEE9push_backERKi", "/usr/include/c++/12/bits/stl_vector.h");
	f_parse = fn(p, "parse_line", NULL, "demo.c");
	f_read = fn(p, "read_config", "read_config", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_wmain = fn(p, "main", "main", "worker.c");
	f_handle = fn(p, "handle_request", "handle_request", "worker.c");

	l_malloc100 = LOC(p, m_libc100, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_push_parse = LOC(p, m_demo, 0x555555555300, 0x1300, { f_push, 1287 }, { f_parse, 22 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main100 = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc100, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_malloc200 = LOC(p, m_libc200, 0x7f10000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc200 = LOC(p, m_libc200, 0x7f10000a5678, 0xa5678, { f_calloc, 0 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_handle = LOC(p, m_worker, 0x560000001180, 0x1180, { f_handle, 77 });
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);

	/* pid 100: malloc from parse_line <- read_config (inlined into main) */
	s = sample(p, (uint32_t[]){ l_malloc100, l_parse, l_read_main, l_start }, 4,
		   1200, 153600, 10, 1280, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [8] = 1200 }, 48), 0);
	s->out = (struct prof_outstanding){ 10, 1280, 150000000, 2100000000, 12000000000ULL };

	/* pid 100: operator new from push_back inlined into parse_line, all freed */
	s = sample(p, (uint32_t[]){ l_new, l_push_parse, l_main100, l_start }, 4,
		   50, 3276800, 0, 0, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [17] = 50 }, 48), 0);
	/* 40 of them freed before the thread allocated again: 30 within 2 us, 20 within 1 ms */
	assert_int_equal(prof_sample__set_life(p, s, (uint64_t[48]){ [11] = 30, [20] = 20 }, 48),
			 0);
	s->temporary = 40;

	/* pid 200: through a library without symbols; ties pid 100's malloc site on bytes */
	s = sample(p, (uint32_t[]){ l_malloc200, l_foo, l_handle, l_wmain }, 4,
		   300, 153600, 300, 153600, 200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [0] = 10, [6] = 90,
								  [10] = 200 }, 48), 0);
	s->out = (struct prof_outstanding){ 300, 153600, 1000000, 2400000000ULL,
					    450000000000ULL };

	/* pid 200: a frame outside any mapping; a short histogram whose last bucket is open */
	s = sample(p, (uint32_t[]){ l_calloc200, l_noaddr }, 2, 1, 100, 1, 100, 200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[8]){ [7] = 1 }, 8), 0);
	s->out = (struct prof_outstanding){ 1, 100, 500000000, 500000000, 500000000 };

	/* pid 200: the stack table was full */
	sample(p, NULL, 0, 4, 4096, 0, 0, 200);

	proc = process(p, 100, "demo", "./demo --iterations 3",
		       (uint64_t[]){ 1250, 0, 0, 0, 1240, 0, 0, 0, 0, 0 },
		       (uint64_t[]){ 1250, 3430400, 1240, 3429120, 10, 1280, 3277056, 65536, 0 });
	assert_int_equal(prof_process__set_note(p, proc, "traced glibc malloc in "
						"/usr/lib/x86_64-linux-gnu/libc.so.6"), 0);

	proc = process(p, 200, "worker", "./worker --name \"x y\"",
		       (uint64_t[]){ 304, 1, 0, 0, 4, 0, 0, 0, 0, 0 },
		       (uint64_t[]){ 305, 157796, 4, 4096, 301, 153700, 157796, 1024, 2 });
	assert_int_equal(prof_process__add_stat(p, proc, "failed", 1), 0);

	assert_int_equal(profile__add_drop(p, "live_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "sites_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stacks_full", 4), 0);
	assert_int_equal(profile__add_drop(p, "stack_fail", 0), 0);
	assert_int_equal(profile__add_drop(p, "no_state", 0), 0);
	assert_int_equal(profile__add_drop(p, "procs_full", 0), 0);
	assert_int_equal(profile__add_note(p, "no symbols for \"%s\": install its debug package "
					   "or rebuild it with -g", "/opt/foo/lib/libfoo.so"), 0);
	assert_int_equal(profile__add_note(p, "pid %d exited during the run", 200), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 0, 0), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 100000000, 4096), 0);
	assert_int_equal(profile__add_point(p, 200, "live_bytes", "bytes", 100000000, 64), 0);
	growth_and_peaks(p);
	return p;
}

/* ---- text ------------------------------------------------------------------------------- */

static void test_text_golden(void **state)
{
	struct output_opts o = { .top = 10, .sort = OUTPUT_SORT_BYTES };
	struct profile *p = fixture();
	size_t len;
	char *out = render(&output_text, p, &o, &len);

	check_golden(GOLDEN_TXT, out, len);
	/* never colour unless asked */
	assert_null(strchr(out, '\033'));
	free(out);
	profile__free(p);
}

/* --min-age in the outstanding heading; without trends (a short run, a pprof read back) there
 * is no growth section, and without peaks no peak lines. */
static void test_text_min_age_and_short_runs(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = fixture();
	char *out;

	p->min_age_ns = 30000000000ULL;
	for (uint32_t i = 0; i < p->nsamples; i++)
		p->samples[i].growth.trend = PROF_TREND_NONE;
	for (uint32_t i = 0; i < p->nprocesses; i++) {
		p->processes[i].peak.known = false;
		p->processes[i].nsnapshots = 0;
	}
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "\nOutstanding allocations at exit (at least 30.00 s old): 311 "
				    "objects"));
	assert_null(strstr(out, "Growth"));
	assert_null(strstr(out, "peak 3.1 MiB"));
	assert_null(strstr(out, "snapshots of the sites"));
	free(out);
	profile__free(p);
}

/* A forked child's inherited frees: a line of their own, never in "other" */
static void test_text_inherited_frees(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = fixture();
	struct prof_process *worker = &p->processes[1];
	char *out;

	assert_int_equal(prof_process__add_stat(p, worker, "inherited_frees", 1), 0);
	assert_int_equal(prof_process__add_stat(p, worker, "inherited_bytes", 1500), 0);
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "\n    unknown frees: 2, 1 of blocks its parent held when it "
				    "forked (1.5 KiB)\n"));
	assert_null(strstr(out, "inherited_"));
	free(out);
	/* all of them */
	assert_int_equal(prof_process__add_stat(p, worker, "inherited_frees", 1), 0);
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "\n    unknown frees: 2, all 2 of blocks its parent held when "
				    "it forked (1.5 KiB)\n"));
	/* none: no line */
	free(out);
	profile__free(p);
	p = fixture();
	out = render(&output_text, p, &o, NULL);
	assert_null(strstr(out, "unknown frees:"));
	free(out);
	profile__free(p);
}

static void test_text_top_by_count(void **state)
{
	struct output_opts o = { .top = 2, .sort = OUTPUT_SORT_COUNT };
	struct profile *p = fixture();
	char *out = render(&output_text, p, &o, NULL);
	const char *top = strstr(out, "Top 2 allocation sites by count (of 5)");

	assert_non_null(top);
	/* by count the 1200 mallocs of pid 100 come first, then the 300 of pid 200 */
	assert_non_null(strstr(top, "#1   150.0 KiB (153600 bytes) in 1200 allocations"));
	assert_non_null(strstr(top, "#2   150.0 KiB (153600 bytes) in 300 allocations"));
	assert_null(strstr(top, "\n#3 "));
	/* top limits the outstanding sites too, and says so */
	assert_non_null(strstr(out, "... 1 more site not shown"));
	free(out);
	/* one is one (it said "Top 1 allocation sites") */
	o.top = 1;
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "\nTop 1 allocation site by count (of 5)\n"));
	free(out);
	profile__free(p);
}

static void test_text_all_and_color(void **state)
{
	struct output_opts o = { .top = 0, .color = true };
	struct profile *p = fixture();
	char *out = render(&output_text, p, &o, NULL);

	assert_non_null(strstr(out, "\033[1mTop 5 allocation sites by bytes\033[0m\n"));
	assert_non_null(strstr(out, "#5 "));
	assert_non_null(strstr(out, "\033[1m"));
	assert_non_null(strstr(out, "\033[1;33mDrops: stacks_full 4"));
	free(out);
	profile__free(p);
}

/* A profile of another mode: values named by their types, no outstanding section. */
static void test_text_cpu_profile(void **state)
{
	struct profile *p = profile__new("cpu");
	uint32_t f, l;
	int64_t v[2] = { 120, 1200000000 };
	char *out;

	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "cpu"), 0);
	f = fn(p, "spin", NULL, "spin.c");
	l = LOC(p, PROF_NONE, 0x401000, 0, { f, 12 });
	assert_non_null(profile__add_sample(p, &l, 1, v, 9));
	out = render(&output_text, p, NULL, NULL);
	assert_non_null(strstr(out, "Top 1 stack by cpu\n"));
	assert_non_null(strstr(out, "#1   cpu 1.20 s (100.0%), samples 120, pid 9\n"
				    "    #0 spin (spin.c:12)\n"));
	assert_null(strstr(out, "Outstanding"));
	free(out);
	profile__free(p);
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void test_json_golden(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("profile.json");
	size_t len;
	char *out = render(&output_json, p, NULL, &len), *cmd;

	check_golden(GOLDEN_JSON, out, len);
	write_file(path, out, len);
	if (!have("jq")) {
		print_message("jq not installed: JSON syntax checked by the golden file only\n");
	} else {
		assert_true(asprintf(&cmd, "jq . '%s' >/dev/null", path) > 0);
		assert_int_equal(run(cmd), 0);
		free(cmd);
		/* a few facts of the contract, read the way a script would */
		assert_true(asprintf(&cmd, "jq -e '"
				     ".sites | length == 5 and"
				     " .[0].alloc_bytes == 3276800 and .[0].alloc_space == 3276800"
				     " and .[0].frames[1].inlined == true and"
				     " (.[0].frames[2] | has(\"inlined\") | not) and"
				     " .[0].histogram == [{\"min\": 65536, \"max\": 131071,"
				     " \"count\": 50}] and"
				     " .[3].histogram[0].max == null and"
				     " .[2].frames[1].function == null and"
				     " .[2].outstanding.mean_age_ns == 1500000000"
				     "' '%s' >/dev/null", path) > 0);
		assert_int_equal(run(cmd), 0);
		free(cmd);
		assert_true(asprintf(&cmd, "jq -e '.processes[1].cmdline == \"./worker --name "
				     "\\\"x y\\\"\" and (.processes[0].calls | keys_unsorted | "
				     ".[0] == \"malloc\") and .drops.stacks_full == 4 and "
				     ".processes[1].failed == 1' '%s' >/dev/null", path) > 0);
		assert_int_equal(run(cmd), 0);
		free(cmd);
	}
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Any profile renders, including one with nothing in it. */
static void test_empty_profile(void **state)
{
	struct profile *p = profile__new("cpu");
	char *out, *path = scratch("empty.json"), *cmd;
	size_t len;

	assert_non_null(p);
	out = render(&output_text, p, NULL, NULL);
	assert_non_null(strstr(out, "Top stacks: none"));
	assert_non_null(strstr(out, "Drops: none"));
	free(out);
	/* with types but no samples */
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	out = render(&output_text, p, NULL, NULL);
	assert_non_null(strstr(out, "Processes: none"));
	assert_non_null(strstr(out, "Top functions by self samples: none"));
	assert_non_null(strstr(out, "Top stacks: none"));
	free(out);

	out = render(&output_json, p, NULL, &len);
	if (have("jq")) {
		write_file(path, out, len);
		assert_true(asprintf(&cmd, "jq -e '.sites == [] and .command == null' '%s' "
				     ">/dev/null", path) > 0);
		assert_int_equal(run(cmd), 0);
		free(cmd);
		unlink(path);
	}
	free(out);
	free(path);

	out = render(&output_pprof, p, NULL, &len);
	assert_true(len > 2);
	free(out);
	profile__free(p);
}

/* ---- pprof ------------------------------------------------------------------------------ */

static bool varint(const uint8_t **s, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*s < end && shift < 64) {
		uint8_t c = *(*s)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

struct pb_counts {
	unsigned int fields[16];
	bool first_string_empty;
	bool ids_nonzero;
};

/* Walk one message: every field well-formed; nested ids (field 1 of mappings, locations and
 * functions) are non-zero. */
static bool walk(const uint8_t *s, const uint8_t *end, struct pb_counts *c, bool top)
{
	while (s < end) {
		uint64_t key, v;

		if (!varint(&s, end, &key))
			return false;
		switch (key & 7) {
		case 0:
			if (!varint(&s, end, &v))
				return false;
			break;
		case 2:
			if (!varint(&s, end, &v) || v > (uint64_t)(end - s))
				return false;
			if (top && (key >> 3) < 16) {
				uint64_t f = key >> 3, id;
				const uint8_t *q = s;

				if (f == 6 && !c->fields[6])
					c->first_string_empty = v == 0;
				if (f >= 3 && f <= 5) {
					/* id is the first field we write */
					const uint8_t *r = q + 1;

					if (v < 2 || *q != 0x08 || !varint(&r, s + v, &id) || !id)
						c->ids_nonzero = false;
				}
				c->fields[f]++;
			}
			s += v;
			break;
		default:
			return false;
		}
	}
	return s == end;
}

static void test_pprof_structure(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("profile.pb.gz");
	struct pb_counts c = { .ids_nonzero = true };
	size_t len, plen;
	uint8_t *data, *pb;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	data = (uint8_t *)read_file(path, &len);
	assert_non_null(data);
	assert_true(len > 18);
	/* gzip magic and deflate */
	assert_int_equal(data[0], 0x1f);
	assert_int_equal(data[1], 0x8b);
	assert_int_equal(data[2], 8);

	pb = gunzip(data, len, &plen);
	assert_true(walk(pb, pb + plen, &c, true));
	assert_int_equal(c.fields[1], p->ntypes);
	assert_int_equal(c.fields[2], p->nsamples);
	assert_int_equal(c.fields[3], p->nmappings);
	assert_int_equal(c.fields[4], p->nlocations);
	assert_int_equal(c.fields[5], p->nfunctions);
	assert_int_equal(c.fields[11], 1);
	assert_true(c.first_string_empty);
	assert_true(c.ids_nonzero);
	free(pb);
	free(data);
	unlink(path);
	free(path);
	profile__free(p);
}

static void test_pprof_go_tool(void **state)
{
	static const char *const expect_raw[] = {
		"parse_line", "read_config", "operator new(unsigned long)", "handle_request",
		"__libc_start_call_main", "stl_vector.h", "/opt/foo/lib/libfoo.so", "pid:[100]",
		"comm:[worker]", "alloc_space/bytes[dflt]",
	};
	struct profile *p = fixture();
	char *path = scratch("go.pb.gz"), *cmd, *out;
	int status;
	size_t i;

	if (access(GO_BIN, X_OK)) {
		print_message("skipped: %s not installed (apt-get install golang-1.19-go)\n",
			      GO_BIN);
		profile__free(p);
		free(path);
		skip();
	}
	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);

	/* go wants a writable cache dir even for `go tool`; keep it inside the build dir */
	assert_true(asprintf(&cmd, "HOME='%s/tests' GOCACHE='%s/tests/gocache' "
			     GO_BIN " tool pprof -raw -symbolize=none '%s' 2>&1", out_dir(),
			     out_dir(), path) > 0);
	out = capture(cmd, &status);
	if (status)
		fail_msg("go tool pprof -raw failed (%d):\n%s", status, out);
	for (i = 0; i < sizeof(expect_raw) / sizeof(expect_raw[0]); i++) {
		if (!strstr(out, expect_raw[i]))
			fail_msg("go tool pprof -raw output lacks \"%s\":\n%s", expect_raw[i], out);
	}
	free(out);
	free(cmd);

	assert_true(asprintf(&cmd, "HOME='%s/tests' GOCACHE='%s/tests/gocache' "
			     GO_BIN " tool pprof -top -symbolize=none '%s' 2>&1", out_dir(),
			     out_dir(), path) > 0);
	out = capture(cmd, &status);
	if (status)
		fail_msg("go tool pprof -top failed (%d):\n%s", status, out);
	if (!strstr(out, "operator new(unsigned long)") || !strstr(out, "3200kB"))
		fail_msg("go tool pprof -top output unexpected:\n%s", out);
	free(out);
	free(cmd);
	unlink(path);
	free(path);
	profile__free(p);
}

/* ---- files ------------------------------------------------------------------------------ */

/* What session__write_outputs() says on stderr writing p to paths (rc: its return). */
static char *write_stderr(const struct profile *p, char **paths, int n, int *rc)
{
	const struct log_ctx lc = { .prog = "ebprof" };
	struct output_opts o = { .top = 10 };
	char *path = scratch("stderr.txt"), *out;
	size_t len;
	int saved, fd;

	make_scratch_dir();
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
	*rc = session__write_outputs(&lc, p, &o, paths, n);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	out = read_file(path, &len);
	assert_non_null(out);
	unlink(path);
	free(path);
	return out;
}

/* Folded stacks, flame graphs, speedscope and CSV have no place for the drops: written alone,
 * the drops are said on stderr (they were silent: cpu -a -o x.folded lost nothing to say for
 * 283 stacks cut); beside a report that shows them, nothing more is said. */
static void test_unshown_drops_said(void **state)
{
	struct profile *p = fixture();
	char *folded = scratch("d.folded"), *svg = scratch("d.svg"), *json = scratch("d.json");
	char *alone[] = { folded, svg }, *with[] = { folded, json }, *err;
	int rc;

	(void)state;
	err = write_stderr(p, alone, 2, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "ebprof: warning: the outputs written cannot show the drops "
			    "(stacks_full 4): a .txt, .json or .html report says what each left "
			    "out\n");
	free(err);
	err = write_stderr(p, with, 2, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	free(err);
	profile__free(p);
	/* nothing dropped, nothing said */
	p = profile__new("cpu");
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_drop(p, "stacks_full", 0), 0);
	err = write_stderr(p, alone, 1, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	free(err);
	profile__free(p);
	unlink(folded);
	unlink(svg);
	unlink(json);
	free(folded);
	free(svg);
	free(json);
}

static void test_for_path(void **state)
{
	assert_ptr_equal(output__for_path("report.txt"), &output_text);
	assert_ptr_equal(output__for_path("/tmp/x/report.json"), &output_json);
	assert_ptr_equal(output__for_path("mem.pb.gz"), &output_pprof);
	assert_ptr_equal(output__for_path("mem.pb"), &output_pprof);
	assert_ptr_equal(output__for_path("MEM.PB.GZ"), &output_pprof);
	assert_ptr_equal(output__for_path("report.svg"), &output_svg);
	assert_ptr_equal(output__for_path("stacks.folded"), &output_folded);
	assert_ptr_equal(output__for_path("report.html"), &output_html);
	assert_null(output__for_path("report.xyz"));
	assert_null(output__for_path("report"));
	assert_null(output__for_path(""));
	assert_null(output__for_path(NULL));
	/* FORMAT:PATH names the format: standard output, or a file of another name (before,
	 * '-o /dev/stdout' and '-o -' were refused: no extension) */
	assert_ptr_equal(output__for_path("folded:-"), &output_folded);
	assert_ptr_equal(output__for_path("json:/dev/stdout"), &output_json);
	assert_ptr_equal(output__for_path("SVG:flame.img"), &output_svg);
	assert_ptr_equal(output__for_path("speedscope:-"), &output_speedscope);
	assert_ptr_equal(output__for_path("pprof:out"), &output_pprof);
	assert_string_equal(output__file("folded:-"), "-");
	assert_string_equal(output__file("run:1.json"), "run:1.json");
	assert_ptr_equal(output__for_path("run:1.json"), &output_json);
	assert_null(output__for_path("svg:"));
	assert_null(output__for_path("bogus:x"));
	/* standard output alone is the text report, as without -o */
	assert_ptr_equal(output__for_path("-"), &output_text);
	assert_ptr_equal(output__for_path("/dev/stdout"), &output_text);
	/* /dev/null alone: nothing is kept, any format will do (it was refused: no extension) */
	assert_non_null(output__for_path("/dev/null"));
	assert_true(output__is_stream("/dev/null"));
	{
		char buf[64];

		assert_int_equal(output__part_path("folded:-", "cpu", buf, sizeof(buf)), 0);
		assert_string_equal(buf, "folded:-");
		assert_int_equal(output__part_path("svg:flame", "cpu", buf, sizeof(buf)), 0);
		assert_string_equal(buf, "svg:flame.cpu");
		assert_int_equal(output__part_path("json:a/x.json", "io", buf, sizeof(buf)), 0);
		assert_string_equal(buf, "json:a/x.io.json");
		assert_int_equal(output__part_path("x.pb.gz", "io", buf, sizeof(buf)), 0);
		assert_string_equal(buf, "x.io.pb.gz");
	}
	assert_string_equal(output_text.name, "text");
	assert_string_equal(output_json.name, "json");
	assert_string_equal(output_pprof.name, "pprof");
}

static int failing_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	fputs("half a report", f);
	return -EIO;
}

static const struct output_ops failing_ops = { "failing", ".txt", failing_write };

static unsigned int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_write_path_atomic(void **state)
{
	struct profile *p = fixture();
	char *dir = scratch("atomic"), *path, *bad, *data;
	struct stat st;
	size_t len;

	mkdir(dir, 0755);
	assert_true(asprintf(&path, "%s/report.txt", dir) > 0);
	assert_true(asprintf(&bad, "%s/no/such/dir/report.txt", dir) > 0);
	unlink(path);

	/* a failing renderer leaves neither the file nor a temporary behind */
	assert_int_equal(output__write_path(&failing_ops, p, NULL, path), -EIO);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(count_entries(dir), 0);

	/* ... and does not clobber an existing report */
	write_file(path, "old\n", 4);
	assert_int_equal(output__write_path(&failing_ops, p, NULL, path), -EIO);
	data = read_file(path, &len);
	assert_string_equal(data, "old\n");
	free(data);
	assert_int_equal(count_entries(dir), 1);

	assert_int_equal(output__write_path(&output_text, p, NULL, path), 0);
	data = read_file(path, &len);
	assert_non_null(strstr(data, "ebprof report"));
	free(data);
	assert_int_equal(count_entries(dir), 1);

	assert_int_equal(output__write_path(&output_text, p, NULL, bad), -ENOENT);
	assert_int_equal(output__write_path(NULL, p, NULL, path), -EINVAL);
	/* a device is written in place (no temporary file in /dev) */
	assert_int_equal(output__write_path(&output_json, p, NULL, "/dev/null"), 0);

	unlink(path);
	rmdir(dir);
	free(bad);
	free(path);
	free(dir);
	profile__free(p);
}

/* Destinations are checked before a run (output__check_path), and only regular files, FIFOs
 * named directly, /dev/null and standard output are ever written: never a device through a
 * symbolic link. */
static void test_check_path(void **state)
{
	char *dir = scratch("dests"), *file, *sub, *link, *dlink, *fifo, *under, *data;
	char *nlink, *made;
	struct profile *p = fixture();
	struct stat lst;
	char why[256];
	size_t len;

	mkdir(dir, 0755);
	assert_true(asprintf(&file, "%s/report.json", dir) > 0);
	assert_true(asprintf(&sub, "%s/sub.json", dir) > 0);
	assert_true(asprintf(&link, "%s/null.svg", dir) > 0);
	assert_true(asprintf(&dlink, "%s/ok.txt", dir) > 0);
	assert_true(asprintf(&fifo, "%s/fifo.txt", dir) > 0);
	assert_true(asprintf(&under, "%s/report.json/x.txt", dir) > 0);
	assert_true(asprintf(&nlink, "%s/new.txt", dir) > 0);
	assert_true(asprintf(&made, "%s/made.txt", dir) > 0);
	unlink(nlink);
	unlink(made);
	unlink(file);
	unlink(link);
	unlink(dlink);
	unlink(fifo);
	rmdir(sub);

	/* a new file in a writable directory, standard output */
	assert_int_equal(output__check_path(file, why, sizeof(why)), 0);
	assert_int_equal(output__check_path("-", why, sizeof(why)), 0);
	assert_int_equal(output__check_path("report.txt", why, sizeof(why)), 0);
	/* no such directory: named in the reason */
	assert_int_equal(output__check_path("/nonexistent-ebprof/x.json", why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "directory '/nonexistent-ebprof' does not exist");
	/* a directory where the file should be */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(output__check_path(sub, why, sizeof(why)), -EISDIR);
	/* a file where a directory should be */
	write_file(file, "x", 1);
	assert_int_equal(output__check_path(under, why, sizeof(why)), -ENOTDIR);
	assert_int_equal(output__check_path(file, why, sizeof(why)), 0);
	/* a device named directly: refused, but for /dev/null */
	assert_int_equal(output__check_path("/dev/zero", why, sizeof(why)), -EPERM);
	assert_int_equal(output__check_path("/dev/null", why, sizeof(why)), 0);
	assert_int_equal(output__write_path(&output_text, p, NULL, "/dev/zero"), -EPERM);
	/* a symbolic link to a device: never followed, not even to /dev/null */
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(output__check_path(link, why, sizeof(why)), -ELOOP);
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(output__write_path(&output_svg, p, NULL, link), -ELOOP);
	/* a symbolic link to a regular file is fine, and written through: the file it points
	 * at gets the report, the link stays a link (renaming over it replaced the link) */
	assert_int_equal(symlink("report.json", dlink), 0);	/* relative to the link */
	assert_int_equal(output__check_path(dlink, why, sizeof(why)), 0);
	assert_int_equal(output__write_path(&output_text, p, NULL, dlink), 0);
	assert_int_equal(lstat(dlink, &lst), 0);
	assert_true(S_ISLNK(lst.st_mode));
	data = read_file(file, &len);
	assert_non_null(strstr(data, "ebprof report"));
	free(data);
	write_file(file, "x", 1);
	/* a link to a file not made yet (relative to the link's directory): the file is made
	 * there; one whose directory is missing is named in the reason */
	assert_int_equal(symlink("made.txt", nlink), 0);
	assert_int_equal(output__check_path(nlink, why, sizeof(why)), 0);
	assert_int_equal(output__write_path(&output_text, p, NULL, nlink), 0);
	assert_int_equal(lstat(nlink, &lst), 0);
	assert_true(S_ISLNK(lst.st_mode));
	assert_int_equal(stat(made, &lst), 0);
	assert_true(S_ISREG(lst.st_mode));
	unlink(nlink);
	assert_int_equal(symlink("nodir/made.txt", nlink), 0);
	assert_int_equal(output__check_path(nlink, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "it links to '"));
	assert_non_null(strstr(why, "does not exist"));
	/* a FIFO named directly is written in place */
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(output__check_path(fifo, why, sizeof(why)), 0);
	data = read_file(file, &len);
	assert_string_equal(data, "x");
	free(data);

	unlink(fifo);
	unlink(dlink);
	unlink(link);
	unlink(nlink);
	unlink(made);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
	free(made);
	free(nlink);
	free(under);
	free(fifo);
	free(dlink);
	free(link);
	free(sub);
	free(file);
	free(dir);
	profile__free(p);
}

/* A note added 50 times (a command that execs 50 times) is one line with its count, in every
 * output; notes added once are unchanged. */
static void test_notes_collapse(void **state)
{
	const struct output_ops *ops[] = {
		&output_text, &output_json, &output_html,
	};
	static const char once[] = "traced the glibc allocator";
	static const char many[] = "PID 7 (sh) ran a new program";
	struct profile *p = fixture(), *back;
	char *out, *twice;
	size_t len;

	assert_int_equal(profile__add_note(p, "%s", once), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(profile__add_note(p, "PID %d (sh) ran a new program", 7), 0);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		out = render(ops[i], p, NULL, NULL);
		if (!strstr(out, "PID 7 (sh) ran a new program (50 times)"))
			fail_msg("%s: no collapsed note", ops[i]->name);
		/* once, not 50 times */
		twice = strstr(strstr(out, many) + 1, many);
		if (twice)
			fail_msg("%s: the note is repeated", ops[i]->name);
		assert_non_null(strstr(out, once));
		assert_null(strstr(out, "traced the glibc allocator ("));
		free(out);
	}
	out = render(&output_pprof, p, NULL, &len);
	back = profile__parse_pprof(out, len, NULL, NULL, 0);
	assert_non_null(back);
	assert_int_equal(back->nnotes, p->nnotes);
	assert_string_equal(back->notes[back->nnotes - 1],
			    "PID 7 (sh) ran a new program (50 times)");
	profile__free(back);
	free(out);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_text_top_by_count),
		cmocka_unit_test(test_text_inherited_frees),
		cmocka_unit_test(test_text_min_age_and_short_runs),
		cmocka_unit_test(test_text_all_and_color),
		cmocka_unit_test(test_text_cpu_profile),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_pprof_structure),
		cmocka_unit_test(test_pprof_go_tool),
		cmocka_unit_test(test_unshown_drops_said),
		cmocka_unit_test(test_for_path),
		cmocka_unit_test(test_write_path_atomic),
		cmocka_unit_test(test_notes_collapse),
		cmocka_unit_test(test_check_path),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
