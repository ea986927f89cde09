/* The pprof reader (src/profile/pprof_read.c): what our writer writes reads back field for field
 * and writes out again byte for byte the same; a protobuf encoded here by hand, the way other
 * tools may write it (strings first, ids out of order, unpacked repeated fields, unknown fields
 * of every wire type, no pid labels), reads right; broken input of every kind (not protobuf,
 * bad ids, truncated or bit-flipped, plain or gzipped) fails with -EINVAL and a reason, never a
 * crash; and, when the Go toolchain is installed, what `go tool pprof -proto` re-encodes (Go's
 * own encoder) reads back with the same samples. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "output/output.h"
#include "profile/profile.h"
#include "util/util.h"

#include "golden.h"
#include "profile_builder.h"

#define GO_BIN "/usr/lib/go-1.19/bin/go"

/* ---- a fixed profile, shaped like test_output.c's --------------------------------------- */

/*
 * Two processes: pid 100 (demo) with inline frames and a C++ name, pid 200 (worker) with an
 * unsymbolized library frame, a frame outside any mapping and a lost stack; module offsets
 * consistent with the mappings (pprof keeps none: they are recomputed from start and offset).
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

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --iterations 3", "6.1.0-18-amd64", NULL,
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
	f_parse = fn(p, "parse_line", "parse_line", "demo.c");
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

	sample(p, (uint32_t[]){ l_malloc100, l_parse, l_read_main, l_start }, 4, 1200, 153600, 10,
	       1280, 100);
	sample(p, (uint32_t[]){ l_new, l_push_parse, l_main100, l_start }, 4, 50, 3276800, 0, 0,
	       100);
	sample(p, (uint32_t[]){ l_malloc200, l_foo, l_handle, l_wmain }, 4, 300, 153600, 300,
	       153600, 200);
	sample(p, (uint32_t[]){ l_calloc200, l_noaddr }, 2, 1, 100, 1, 100, 200);
	sample(p, NULL, 0, 4, 4096, 0, 0, 200);

	assert_non_null(profile__add_process(p, 100, "demo", "./demo --iterations 3"));
	assert_non_null(profile__add_process(p, 200, "worker", NULL));
	assert_int_equal(profile__add_drop(p, "live_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stacks_full", 4), 0);
	assert_int_equal(profile__add_note(p, "no symbols for \"%s\"", "/opt/foo/lib/libfoo.so"),
			 0);
	assert_int_equal(profile__add_note(p, "pid %d exited during the run", 200), 0);
	return p;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void assert_str(const char *a, const char *b)
{
	if (!str_eq(a, b))
		fail_msg("\"%s\" != \"%s\"", a ? a : "(null)", b ? b : "(null)");
}

/* Parse, expecting failure with -EINVAL and a reason. */
static void expect_bad(const void *data, size_t len, const char *why_part)
{
	char why[256] = "untouched";
	struct profile *p;
	int err = 0;

	p = profile__parse_pprof(data, len, &err, why, sizeof(why));
	if (p)
		fail_msg("parsed, but should have failed (%s)", why_part ? why_part : "");
	assert_int_equal(err, -EINVAL);
	assert_true(why[0]);
	if (why_part && !strstr(why, why_part))
		fail_msg("reason \"%s\" lacks \"%s\"", why, why_part);
}

/* ---- our own output --------------------------------------------------------------------- */

static void compare(const struct profile *a, const struct profile *b)
{
	uint32_t i, j;

	assert_str(a->mode, b->mode);
	assert_str(a->command, b->command);
	assert_str(a->kernel, b->kernel);
	assert_true(a->time_nanos == b->time_nanos);
	assert_true(a->duration_nanos == b->duration_nanos);
	assert_int_equal(a->ntypes, b->ntypes);
	for (i = 0; i < a->ntypes; i++) {
		assert_str(a->types[i].type, b->types[i].type);
		assert_str(a->types[i].unit, b->types[i].unit);
	}
	assert_int_equal(a->default_type, b->default_type);

	assert_int_equal(a->nfunctions, b->nfunctions);
	for (i = 0; i < a->nfunctions; i++) {
		const struct prof_function *x = &a->functions[i], *y = &b->functions[i];

		assert_str(x->name, y->name);
		/* the writer fills a missing system name with the name */
		assert_str(x->system_name ? x->system_name : x->name, y->system_name);
		assert_str(x->filename, y->filename);
		assert_int_equal(x->cfi_named, y->cfi_named);
	}
	assert_int_equal(a->nmappings, b->nmappings);
	for (i = 0; i < a->nmappings; i++) {
		const struct prof_mapping *x = &a->mappings[i], *y = &b->mappings[i];

		assert_true(x->start == y->start && x->limit == y->limit && x->offset == y->offset);
		assert_str(x->file, y->file);
		assert_str(x->build_id, y->build_id);
		assert_int_equal(x->pid, y->pid);
	}
	assert_int_equal(a->nlocations, b->nlocations);
	for (i = 0; i < a->nlocations; i++) {
		const struct prof_location *x = &a->locations[i], *y = &b->locations[i];

		assert_int_equal(x->mapping, y->mapping);
		assert_true(x->address == y->address);
		assert_true(x->module_offset == y->module_offset);
		assert_int_equal(x->nlines, y->nlines);
		for (j = 0; j < x->nlines; j++) {
			assert_int_equal(x->lines[j].function, y->lines[j].function);
			assert_true(x->lines[j].line == y->lines[j].line);
		}
	}
	assert_int_equal(a->nsamples, b->nsamples);
	for (i = 0; i < a->nsamples; i++) {
		const struct prof_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->nlocs, y->nlocs);
		for (j = 0; j < x->nlocs; j++)
			assert_int_equal(x->locs[j], y->locs[j]);
		for (j = 0; j < a->ntypes; j++)
			assert_true(x->values[j] == y->values[j]);
	}
	/* a process has its pid and comm in pprof, nothing else */
	assert_int_equal(a->nprocesses, b->nprocesses);
	for (i = 0; i < a->nprocesses; i++) {
		assert_int_equal(a->processes[i].pid, b->processes[i].pid);
		assert_str(a->processes[i].comm, b->processes[i].comm);
		assert_null(b->processes[i].cmdline);
	}
	assert_int_equal(a->nnotes, b->nnotes);
	for (i = 0; i < a->nnotes; i++)
		assert_str(a->notes[i], b->notes[i]);
}

static void test_own_output(void **state)
{
	struct profile *p = fixture(), *q;
	char *gz, why[256];
	size_t len;
	int err = 1;

	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, &err, why, sizeof(why));
	if (!q)
		fail_msg("cannot read our own pprof: %s", why);
	assert_int_equal(err, 0);
	compare(p, q);
	/* only the drops that were not 0 are written */
	assert_int_equal(q->ndrops, 1);
	assert_string_equal(q->drops[0].key, "stacks_full");
	assert_true(q->drops[0].value == 4);
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* A function named by its call frame range ("MODULE!sub_HEX", no symbol) is one again when
 * read back: pprof has no field for it, its name's shape with the same system name and no
 * file says it. A symbol of such a name with a file is none; the JSON of what was read says
 * "cfi_named" where it is one. */
static void test_cfi_named(void **state)
{
	struct profile *p = profile__new("cpu"), *q;
	uint32_t map, f, g, l1, l2, l3;
	char *gz, *json, why[256];
	size_t len;
	int err = 1;

	(void)state;
	assert_true(profile__is_cfi_name("liblzma.so.5.4.1!sub_15ae0"));
	assert_false(profile__is_cfi_name("!sub_15ae0"));
	assert_false(profile__is_cfi_name("lib/x!sub_15ae0"));
	assert_false(profile__is_cfi_name("x!sub_"));
	assert_false(profile__is_cfi_name("x!sub_15AE0"));
	assert_false(profile__is_cfi_name("x!sub_15ae0 "));
	assert_false(profile__is_cfi_name("sub_15ae0"));
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	map = profile__mapping(p, 7, 0x7f0000004000, 0x7f0000021000, 0x4000,
			       "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1", NULL);
	f = profile__function_cfi(p, "liblzma.so.5.4.1!sub_15ae0");
	g = fn(p, "a!sub_10", "a!sub_10", "a.c");
	l1 = LOC(p, map, 0x7f0000015bc9, 0x15bc9, { f, 0 });
	l2 = LOC(p, map, 0x7f0000015be0, 0x15be0, { f, 0 });
	l3 = LOC(p, map, 0x7f0000004010, 0x4010, { g, 3 });
	sample(p, (uint32_t[]){ l1, l3 }, 2, 27, 0, 0, 0, 7);
	sample(p, (uint32_t[]){ l2, l3 }, 2, 9, 0, 0, 0, 7);
	assert_non_null(profile__add_process(p, 7, "xz", NULL));
	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, &err, why, sizeof(why));
	if (!q)
		fail_msg("cannot read our own pprof: %s", why);
	compare(p, q);
	assert_true(q->functions[f].cfi_named);
	assert_false(q->functions[g].cfi_named);
	json = render(&output_json, q, NULL, &len);
	assert_non_null(strstr(json, "\"function\": \"liblzma.so.5.4.1!sub_15ae0\""));
	assert_non_null(strstr(json, "\"cfi_named\": true"));
	/* once per frame of the function, never on the symbol's */
	assert_null(strstr(strstr(strstr(json, "\"cfi_named\": true") + 1, "\"cfi_named\": true") + 1,
			    "\"cfi_named\": true"));
	free(json);
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* Written, read, written again: the same bytes (ids, string table, comments, all of it). */
static void test_rewrite_identical(void **state)
{
	struct profile *p = fixture(), *q, *r;
	char *a, *b, *c;
	size_t la, lb, lc;

	a = render(&output_pprof, p, NULL, &la);
	q = profile__parse_pprof(a, la, NULL, NULL, 0);
	assert_non_null(q);
	b = render(&output_pprof, q, NULL, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	/* and once more, from the plain (not gzipped) protobuf */
	{
		size_t rl;
		uint8_t *raw = gunzip(a, la, &rl);

		r = profile__parse_pprof(raw, rl, NULL, NULL, 0);
		assert_non_null(r);
		c = render(&output_pprof, r, NULL, &lc);
		assert_int_equal(la, lc);
		assert_memory_equal(a, c, la);
		free(raw);
		free(c);
		profile__free(r);
	}
	free(a);
	free(b);
	profile__free(q);
	profile__free(p);
}

/* The text and JSON reports of a loaded profile are the sites of the original. */
static void test_renders(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = fixture(), *q;
	char *gz, *txt;
	size_t len;

	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	txt = render(&output_text, q, &o, NULL);
	assert_non_null(strstr(txt, "Mode:      mem"));
	assert_non_null(strstr(txt, "Command:   ./demo --iterations 3"));
	assert_non_null(strstr(txt, "#1   3.1 MiB (3276800 bytes) in 50 allocations, 0 live (0 B), "
				    "pid 100 (demo)"));
	assert_non_null(strstr(txt, "    #1 std::vector<int, std::allocator<int> >::push_back(int "
				    "const&) (/usr/include/c++/12/bits/stl_vector.h:1287) [demo] "
				    "[inlined]\n    #2 parse_line (demo.c:22) [demo]\n"));
	/* inuse is what was outstanding; its ages are not in pprof */
	assert_non_null(strstr(txt, "Outstanding allocations at exit: 311 objects, 151.3 KiB "
				    "(154980 bytes) at 3 sites"));
	assert_non_null(strstr(txt, "libfoo.so+0x1a2b"));
	assert_non_null(strstr(txt, "Drops: stacks_full 4"));
	assert_non_null(strstr(txt, "pid 200 exited during the run"));
	/* pprof keeps no per-process statistics: the processes are their samples' sums (demo
	 * 1200+50+0 objects, 153600+3276800 bytes; worker 300+1+4, 153600+100+4096), not an
	 * empty table of PID and COMM and a line per process that says nothing */
	assert_non_null(strstr(txt, "\nProcesses by alloc_space\n"
				    "       PID  COMM              alloc_objects    alloc_space  "
				    "inuse_objects    inuse_space      %\n"
				    "       100  demo                       1250        3.3 MiB  "
				    "           10        1.2 KiB  95.6%\n"
				    "       200  worker                      305      154.1 KiB  "
				    "          301      150.1 KiB   4.4%\n"));
	assert_null(strstr(txt, "  pid 100 (demo)\n"));
	free(txt);
	/* nor does the JSON say that no call was made ("calls": {} per process and in totals):
	 * the run's has them, the saved profile none to say */
	txt = render(&output_json, p, &o, NULL);
	assert_non_null(strstr(txt, "\"calls\""));
	free(txt);
	txt = render(&output_json, q, &o, NULL);
	assert_null(strstr(txt, "\"calls\""));
	free(txt);
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* What a saved profile cannot carry is not a 0 in the CSV, which the columns define as "none":
 * temporaries and ages are empty; the outstanding allocations are mem's inuse values, and
 * empty for another tool's heap profile (mode pprof: its inuse is a snapshot's, not known to
 * be what was left at an exit; a Go heap profile's were 0). */
static void test_reloaded_csv(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = fixture(), *q;
	const char *mode;
	char *gz, *csv;
	size_t len;

	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	csv = render(&output_csv, q, &o, NULL);
	assert_non_null(strstr(csv, ",temporary_count,outstanding_count,outstanding_bytes,"
				    "min_age_ns,max_age_ns,stack\r\n"));
	/* demo's parse_line site: 1200 allocations, 10 of them (1280 bytes) live */
	assert_non_null(strstr(csv, "\r\n100,demo,1200,153600,10,1280,,10,1280,,,"));
	assert_null(strstr(csv, ",0,10,1280,"));
	free(csv);
	profile__free(q);
	free(gz);

	/* the same as another tool's heap profile: no comments, so mode pprof */
	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	mode = q->mode;		/* interned: put back before the free */
	q->mode = "pprof";
	csv = render(&output_csv, q, &o, NULL);
	assert_non_null(strstr(csv, "\r\n100,demo,1200,153600,10,1280,,,,,,"));
	free(csv);
	q->mode = mode;
	profile__free(q);
	free(gz);
	profile__free(p);
}

/* ---- module offsets --------------------------------------------------------------------- */

/*
 * A program not built as PIE (ET_EXEC: linked at 0x400000, where it runs, so its ELF addresses
 * are its runtime addresses) in two processes, beside a shared library whose ELF addresses are
 * its file offsets. Callers' module offsets are their calls' (the return address - 1), as
 * stacks.c makes them. pid 301 was stopped exactly at 0x4011c1, the return address of pid 300's
 * caller frame: two names, np+0x4011c1 and np+0x4011c0, which were one when read back
 * (np+0x11c1), and the text report counted a function fewer.
 */
static struct profile *nonpie_fixture(void)
{
	struct profile *p = profile__new("cpu");
	const char *np = "/usr/bin/np", *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_np300, m_libc300, m_np301, f_leaf, f_mid, f_start;
	uint32_t l_leaf, l_mid, l_main, l_start, l_exact301, l_ret301;
	int64_t v[2];

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "cpu"), 0);
	assert_int_equal(profile__set_period(p, "cpu", "nanoseconds", 1001001), 0);
	m_np300 = profile__mapping(p, 300, 0x400000, 0x4f0000, 0, np,
				   "084577925d48552493c25b5e53292e2c5fb0e7aa");
	m_libc300 = profile__mapping(p, 300, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_np301 = profile__mapping(p, 301, 0x400000, 0x4f0000, 0, np,
				   "084577925d48552493c25b5e53292e2c5fb0e7aa");
	f_leaf = fn(p, "leaf", "leaf", "np.c");
	f_mid = fn(p, "mid", "mid", "np.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);

	l_leaf = LOC(p, m_np300, 0x401146, 0x401146, { f_leaf, 3 });
	l_mid = LOC(p, m_np300, 0x401167, 0x401166, { f_mid, 4 });
	l_main = loc(p, m_np300, 0x4011c1, 0x4011c0, NULL, 0);
	l_start = LOC(p, m_libc300, 0x7f000004924a, 0x49249, { f_start, 58 });
	l_exact301 = loc(p, m_np301, 0x4011c1, 0x4011c1, NULL, 0);
	l_ret301 = loc(p, m_np301, 0x401194, 0x401193, NULL, 0);

	v[0] = 7, v[1] = 7007007;
	assert_non_null(profile__add_sample(p, STACK(l_leaf, l_mid, l_main, l_start), v, 300));
	v[0] = 2, v[1] = 2002002;
	assert_non_null(profile__add_sample(p, STACK(l_exact301, l_ret301), v, 301));
	assert_non_null(profile__add_process(p, 300, "np", NULL));
	assert_non_null(profile__add_process(p, 301, "np", NULL));
	return p;
}

/* Read back, every frame has the module offset it had, so the same name, and JSON the offset
 * addr2line takes; a caller's address is its call's (the return address - 1, what the file
 * holds for it). Written again, the same bytes. */
static void test_nonpie_offsets(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = nonpie_fixture(), *q;
	char *gz, *gz2, *a, *b, na[256], nb[256];
	size_t len, len2;
	uint32_t i;

	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	assert_int_equal(q->nlocations, p->nlocations);
	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *x = &p->locations[i], *y = &q->locations[i];
		const struct prof_mapping *m = &p->mappings[x->mapping];
		/* the runtime address the module offset names (ELF = file offset but for np) */
		uint64_t named = strcmp(m->file, "/usr/bin/np") ?
					 x->module_offset - m->offset + m->start : x->module_offset;

		if (x->module_offset != y->module_offset)
			fail_msg("location %u (%s): module offset 0x%" PRIx64 " read back as "
				 "0x%" PRIx64, i, profile__frame_name(p, x, 0, na, sizeof(na)),
				 x->module_offset, y->module_offset);
		assert_string_equal(profile__frame_name(p, x, 0, na, sizeof(na)),
				    profile__frame_name(q, y, 0, nb, sizeof(nb)));
		assert_true(y->address == named);
		assert_true(x->address == named || x->address == named + 1);
	}
	/* the comment that says where np lies in its file is no note */
	assert_int_equal(q->nnotes, 0);
	a = render(&output_folded, p, &o, NULL);
	b = render(&output_folded, q, &o, NULL);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "np (300);__libc_start_call_main;np+0x4011c0;mid;leaf "
				  "7007007\n"));
	assert_non_null(strstr(a, "np (301);np+0x401193;np+0x4011c1 2002002\n"));
	free(a);
	free(b);
	a = render(&output_json, q, &o, NULL);
	assert_non_null(strstr(a, "\"address\": \"0x401166\", \"offset\": \"0x401166\""));
	assert_non_null(strstr(a, "\"address\": \"0x4011c1\", \"offset\": \"0x4011c1\""));
	assert_non_null(strstr(a, "\"address\": \"0x7f0000049249\", \"offset\": \"0x49249\""));
	free(a);
	gz2 = render(&output_pprof, q, NULL, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(gz, gz2, len);
	free(gz2);
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* Go's encoder keeps the comment that places np's mappings in its file, though it merges the two
 * processes' mappings of np into one and numbers them anew: the same folded stacks come back. */
/* p written as pprof, re-encoded by Go's pprof (-proto: its own encoder, which merges one file's
 * mappings and renumbers everything) and read back; NULL when Go is not installed (said: the
 * caller skips) */
static struct profile *through_go(const struct profile *p, const char *stem)
{
	char name[64], *in, *out, *cmd, *log, why[256];
	struct profile *q;
	int status;

	if (access(GO_BIN, X_OK)) {
		print_message("skipped: %s not installed (apt-get install golang-1.19-go)\n",
			      GO_BIN);
		return NULL;
	}
	snprintf(name, sizeof(name), "%s-in.pb.gz", stem);
	in = scratch(name);
	snprintf(name, sizeof(name), "%s-out.pb.gz", stem);
	out = scratch(name);
	assert_int_equal(output__write_path(&output_pprof, p, NULL, in), 0);
	assert_true(asprintf(&cmd, "HOME='%s/tests' GOCACHE='%s/tests/gocache' " GO_BIN
			     " tool pprof -proto -symbolize=none -output '%s' '%s' 2>&1",
			     out_dir(), out_dir(), out, in) > 0);
	log = capture(cmd, &status);
	if (status)
		fail_msg("go tool pprof -proto failed (%d):\n%s", status, log);
	q = profile__load_pprof(out, NULL, why, sizeof(why));
	if (!q)
		fail_msg("cannot read what Go wrote: %s", why);
	unlink(in);
	unlink(out);
	free(log);
	free(cmd);
	free(in);
	free(out);
	return q;
}

static void test_nonpie_go_encoded(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = nonpie_fixture(), *q = through_go(p, "nonpie");
	char *a, *b;

	if (!q) {
		profile__free(p);
		skip();
	}
	assert_true(q->nmappings < p->nmappings);
	a = render(&output_folded, p, &o, NULL);
	b = render(&output_folded, q, &o, NULL);
	assert_string_equal(a, b);
	free(a);
	free(b);
	profile__free(q);
	profile__free(p);
}

/* ---- a protobuf as another tool may write it -------------------------------------------- */

struct enc {
	uint8_t buf[4096];
	size_t len;
};

static void put(struct enc *e, const void *d, size_t n)
{
	assert_true(e->len + n <= sizeof(e->buf));
	memcpy(e->buf + e->len, d, n);
	e->len += n;
}

static void varint(struct enc *e, uint64_t v)
{
	uint8_t b;

	do {
		b = v & 0x7f;
		v >>= 7;
		if (v)
			b |= 0x80;
		put(e, &b, 1);
	} while (v);
}

static void key(struct enc *e, uint32_t field, unsigned int wire)
{
	varint(e, (uint64_t)field << 3 | wire);
}

static void f_varint(struct enc *e, uint32_t field, uint64_t v)
{
	key(e, field, 0);
	varint(e, v);
}

static void f_fixed64(struct enc *e, uint32_t field, uint64_t v)
{
	key(e, field, 1);
	for (int i = 0; i < 8; i++) {
		uint8_t b = v >> (8 * i);

		put(e, &b, 1);
	}
}

static void f_fixed32(struct enc *e, uint32_t field, uint32_t v)
{
	key(e, field, 5);
	for (int i = 0; i < 4; i++) {
		uint8_t b = v >> (8 * i);

		put(e, &b, 1);
	}
}

static void f_bytes(struct enc *e, uint32_t field, const void *d, size_t n)
{
	key(e, field, 2);
	varint(e, n);
	put(e, d, n);
}

static void f_msg(struct enc *e, uint32_t field, const struct enc *m)
{
	f_bytes(e, field, m->buf, m->len);
}

static void f_str(struct enc *e, const char *s)
{
	f_bytes(e, 6, s, strlen(s));
}

/* Unknown fields of every wire type, which a reader must skip. */
static void unknown(struct enc *e)
{
	f_varint(e, 99, 12345);
	f_fixed64(e, 98, 0x0123456789abcdefULL);
	f_fixed32(e, 97, 0xdeadbeef);
	f_bytes(e, 96, "skip me", 7);
}

enum {
	S_EMPTY, S_SAMPLES, S_COUNT, S_CPU, S_NS, S_MAIN, S_FOO, S_XC, S_BIN, S_PID, S_COMM,
	S_XPROG, S_INL, S_NOTE, S_LIB, S_THREAD, S_N
};

static const char *const strings[S_N] = {
	"", "samples", "count", "cpu", "nanoseconds", "main", "foo", "x.c", "/usr/bin/xprog",
	"pid", "comm", "xprog", "inl", "made by hand", "/lib/libz.so", "thread",
};

/*
 * Strings first; functions 20, 10 and 30 (out of order, not from 1); mapping 7 then 9;
 * location 100 with an inline frame, 200 and 300 (unsymbolized); no default sample type (the
 * last one is the default); samples with packed and unpacked repeated fields.
 */
static void handmade(struct enc *e, bool pids)
{
	struct enc m, n;

	memset(e, 0, sizeof(*e));
	for (int i = 0; i < S_N; i++)
		f_str(e, strings[i]);
	unknown(e);

	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, S_SAMPLES);
	f_varint(&m, 2, S_COUNT);
	f_msg(e, 1, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, S_CPU);
	f_varint(&m, 2, S_NS);
	unknown(&m);
	f_msg(e, 1, &m);

	/* function 20: foo in x.c; 10: main; 30: inl (an inline function) */
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 20);
	f_varint(&m, 2, S_FOO);
	f_varint(&m, 4, S_XC);
	unknown(&m);
	f_msg(e, 5, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 10);
	f_varint(&m, 2, S_MAIN);
	f_varint(&m, 3, S_MAIN);
	f_varint(&m, 4, S_XC);
	f_varint(&m, 5, 3);	/* start_line: not in the model */
	f_msg(e, 5, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 30);
	f_varint(&m, 2, S_INL);
	f_msg(e, 5, &m);

	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 7);
	f_varint(&m, 2, 0x400000);
	f_varint(&m, 3, 0x500000);
	f_varint(&m, 4, 0x1000);
	f_varint(&m, 5, S_BIN);
	f_varint(&m, 7, 1);	/* has_functions */
	unknown(&m);
	f_msg(e, 3, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 9);
	f_varint(&m, 2, 0x7f0000000000);
	f_varint(&m, 3, 0x7f0000100000);
	f_varint(&m, 5, S_LIB);
	f_msg(e, 3, &m);

	/* location 100: inl inlined into foo, at 0x401234 */
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 100);
	f_varint(&m, 2, 7);
	f_varint(&m, 3, 0x401234);
	memset(&n, 0, sizeof(n));
	f_varint(&n, 1, 30);
	f_varint(&n, 2, 5);
	f_varint(&n, 3, 9);	/* column: not in the model */
	f_msg(&m, 4, &n);
	memset(&n, 0, sizeof(n));
	f_varint(&n, 1, 20);
	f_varint(&n, 2, 12);
	f_msg(&m, 4, &n);
	unknown(&m);
	f_msg(e, 4, &m);
	/* location 200: main; 300: unsymbolized in libz */
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 200);
	f_varint(&m, 2, 7);
	f_varint(&m, 3, 0x401100);
	memset(&n, 0, sizeof(n));
	f_varint(&n, 1, 10);
	f_varint(&n, 2, 40);
	f_msg(&m, 4, &n);
	f_msg(e, 4, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 300);
	f_varint(&m, 2, 9);
	f_varint(&m, 3, 0x7f0000002a00);
	f_msg(e, 4, &m);

	/* sample 1: unpacked location ids and values, labels pid 42 and comm */
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 300);
	f_varint(&m, 1, 100);
	f_varint(&m, 1, 200);
	f_varint(&m, 2, 7);
	f_varint(&m, 2, 70000000);
	if (pids) {
		memset(&n, 0, sizeof(n));
		f_varint(&n, 1, S_PID);
		f_varint(&n, 3, 42);
		f_varint(&n, 4, S_COUNT);	/* num_unit */
		f_msg(&m, 3, &n);
		memset(&n, 0, sizeof(n));
		f_varint(&n, 1, S_COMM);
		f_varint(&n, 2, S_XPROG);
		f_msg(&m, 3, &n);
	}
	memset(&n, 0, sizeof(n));
	f_varint(&n, 1, S_THREAD);
	f_varint(&n, 3, 43);
	f_msg(&m, 3, &n);
	unknown(&m);
	f_msg(e, 2, &m);
	/* sample 2: packed, and a negative value (a ten-byte varint) */
	memset(&m, 0, sizeof(m));
	memset(&n, 0, sizeof(n));
	varint(&n, 200);
	f_msg(&m, 1, &n);
	memset(&n, 0, sizeof(n));
	varint(&n, 3);
	varint(&n, (uint64_t)-5);
	f_msg(&m, 2, &n);
	if (pids) {
		memset(&n, 0, sizeof(n));
		f_varint(&n, 1, S_PID);
		f_varint(&n, 3, 7);
		f_msg(&m, 3, &n);
	}
	f_msg(e, 2, &m);

	f_varint(e, 9, 1700000000000000000ULL);
	f_varint(e, 10, 1000000000);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, S_CPU);
	f_varint(&m, 2, S_NS);
	f_msg(e, 11, &m);
	f_varint(e, 12, 10000000);
	f_varint(e, 13, S_NOTE);
}

static void test_handmade(void **state)
{
	struct enc e;
	struct profile *p;
	const struct prof_location *l;
	const struct prof_sample *s;
	char why[256], name[64];
	int err;

	handmade(&e, true);
	p = profile__parse_pprof(e.buf, e.len, &err, why, sizeof(why));
	if (!p)
		fail_msg("handmade profile rejected: %s", why);
	assert_string_equal(p->mode, "pprof");
	assert_null(p->command);
	assert_int_equal(p->ntypes, 2);
	assert_string_equal(p->types[1].type, "cpu");
	/* no default_sample_type: the last type */
	assert_int_equal(p->default_type, 1);
	assert_true(p->time_nanos == 1700000000000000000LL);
	assert_true(p->duration_nanos == 1000000000);

	/* functions in id order: 10 main, 20 foo, 30 inl */
	assert_int_equal(p->nfunctions, 3);
	assert_string_equal(p->functions[0].name, "main");
	assert_string_equal(p->functions[1].name, "foo");
	assert_null(p->functions[1].system_name);
	assert_string_equal(p->functions[1].filename, "x.c");
	assert_null(p->functions[2].filename);

	assert_int_equal(p->nmappings, 2);
	assert_string_equal(p->mappings[0].file, "/usr/bin/xprog");
	assert_null(p->mappings[0].build_id);
	/* the mapping's pid is that of the first sample through it */
	assert_int_equal(p->mappings[0].pid, 42);

	assert_int_equal(p->nlocations, 3);
	l = &p->locations[0];
	assert_int_equal(l->mapping, 0);
	assert_true(l->address == 0x401234);
	/* address - start + file offset */
	assert_true(l->module_offset == 0x2234);
	assert_int_equal(l->nlines, 2);
	assert_int_equal(l->lines[0].function, 2);
	assert_true(l->lines[0].line == 5);
	assert_int_equal(l->lines[1].function, 1);
	assert_int_equal(p->locations[2].nlines, 0);
	assert_string_equal(profile__frame_name(p, &p->locations[2], 0, name, sizeof(name)),
			    "libz.so+0x2a00");

	assert_int_equal(p->nsamples, 2);
	s = &p->samples[0];
	assert_int_equal(s->nlocs, 3);
	assert_int_equal(s->locs[0], 2);
	assert_int_equal(s->locs[1], 0);
	assert_int_equal(s->locs[2], 1);
	assert_true(s->values[0] == 7 && s->values[1] == 70000000);
	assert_int_equal(s->pid, 42);
	s = &p->samples[1];
	assert_int_equal(s->nlocs, 1);
	assert_true(s->values[0] == 3 && s->values[1] == -5);
	assert_int_equal(s->pid, 7);

	assert_int_equal(p->nprocesses, 2);
	assert_int_equal(p->processes[0].pid, 42);
	assert_string_equal(p->processes[0].comm, "xprog");
	assert_int_equal(p->processes[1].pid, 7);
	assert_null(p->processes[1].comm);

	/* another tool's comments are notes, and its sampling period is worth one */
	assert_int_equal(p->nnotes, 2);
	assert_string_equal(p->notes[0], "made by hand");
	assert_string_equal(p->notes[1],
			    "sampled every 10000000 nanoseconds of cpu (pprof period)");
	profile__free(p);
}

/* No pid labels (Go's profiles have none): one process, pid 0, named after the main binary. */
static void test_no_pid_labels(void **state)
{
	struct enc e;
	struct profile *p;

	handmade(&e, false);
	p = profile__parse_pprof(e.buf, e.len, NULL, NULL, 0);
	assert_non_null(p);
	assert_int_equal(p->samples[0].pid, 0);
	assert_int_equal(p->samples[1].pid, 0);
	assert_int_equal(p->nprocesses, 1);
	assert_int_equal(p->processes[0].pid, 0);
	assert_string_equal(p->processes[0].comm, "xprog");
	profile__free(p);
}

/* ---- broken input ----------------------------------------------------------------------- */

/* Not protobuf, or protobuf that is not a consistent profile: each one thing wrong. */
static void test_invalid(void **state)
{
	static const uint8_t not_pb[] = "hello, this is not a profile\n";
	static const uint8_t json[] = "{\"mode\": \"mem\"}";
	static const uint8_t folded[] = "burn (4242);main;burn_heavy 750\nburn (4242);main;x 25\n";
	struct enc e, m;

	/* gzip -n of nothing */
	static const uint8_t gz_empty[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00,
					    0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
					    0x00, 0x00, 0x00, 0x00 };
	/* an empty file says so (it said "it has no string table") */
	expect_bad(NULL, 0, "it is empty (0 bytes)");
	expect_bad("", 0, "it is empty (0 bytes)");
	expect_bad(gz_empty, sizeof(gz_empty), "its gzip data inflates to nothing");
	/* text says so, not a wire type at some byte ("field 12 at byte 129 has wire type 7"
	 * for a folded file before) */
	expect_bad(not_pb, sizeof(not_pb) - 1, "it is text");
	expect_bad(json, sizeof(json) - 1, "it is text");
	expect_bad(folded, sizeof(folded) - 1, "ebprof report and diff read pprof profiles");

	/* the string table must start with "" */
	memset(&e, 0, sizeof(e));
	f_str(&e, "x");
	expect_bad(e.buf, e.len, "empty string");

	/* a sample of a location that is not there */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 5);
	f_msg(&e, 2, &m);
	expect_bad(e.buf, e.len, "location 5");

	/* a location of a function that is not there */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 1);
	{
		struct enc ln = {};

		f_varint(&ln, 1, 9);
		f_msg(&m, 4, &ln);
	}
	f_msg(&e, 4, &m);
	expect_bad(e.buf, e.len, "function 9");

	/* ... and of a mapping that is not there */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 1);
	f_varint(&m, 2, 3);
	f_msg(&e, 4, &m);
	expect_bad(e.buf, e.len, "mapping 3");

	/* two functions with one id; an id 0 */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 4);
	f_msg(&e, 5, &m);
	f_msg(&e, 5, &m);
	expect_bad(e.buf, e.len, "two functions have id 4");
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 2, 0);
	f_msg(&e, 3, &m);
	expect_bad(e.buf, e.len, "id 0");

	/* a string index past the table */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 1);
	f_varint(&m, 2, 17);
	f_msg(&e, 5, &m);
	expect_bad(e.buf, e.len, "string 17");

	/* one value for two types */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	f_str(&e, "a");
	memset(&m, 0, sizeof(m));
	f_varint(&m, 1, 1);
	f_varint(&m, 2, 1);
	f_msg(&e, 1, &m);
	f_msg(&e, 1, &m);
	memset(&m, 0, sizeof(m));
	f_varint(&m, 2, 1);
	f_msg(&e, 2, &m);
	expect_bad(e.buf, e.len, "1 values for 2 sample types");

	/* a known field with the wrong wire type */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	f_varint(&e, 2, 1);
	expect_bad(e.buf, e.len, "wire type");

	/* a group (wire type 3) */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	key(&e, 20, 3);
	expect_bad(e.buf, e.len, "wire type 3");

	/* an eleven-byte varint */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	key(&e, 9, 0);
	put(&e, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	expect_bad(e.buf, e.len, "varint");

	/* a length past the end */
	memset(&e, 0, sizeof(e));
	f_str(&e, "");
	key(&e, 2, 2);
	varint(&e, 100);
	put(&e, "abc", 3);
	expect_bad(e.buf, e.len, "longer than the data left");
}

static void test_invalid_gzip(void **state)
{
	struct profile *p = fixture();
	size_t len, i;
	char *gz = render(&output_pprof, p, NULL, &len), *bigger;

	/* cut short: the gzip stream ends early */
	expect_bad(gz, len / 2, "gzip");
	expect_bad(gz, 10, "gzip");
	/* trailing garbage after the stream */
	bigger = malloc(len + 4);
	memcpy(bigger, gz, len);
	memcpy(bigger + len, "junk", 4);
	expect_bad(bigger, len + 4, "after the end of the gzip stream");
	/* two members back to back are one profile's data, as gzip defines it: here, the same
	 * message twice, so twice the samples */
	free(bigger);
	bigger = malloc(2 * len);
	memcpy(bigger, gz, len);
	memcpy(bigger + len, gz, len);
	{
		struct profile *q = profile__parse_pprof(bigger, 2 * len, NULL, NULL, 0);

		/* the concatenated message repeats ids: that is an error, not a crash */
		assert_null(q);
	}
	/* corrupt deflate data */
	for (i = 20; i < 30 && i < len; i++)
		gz[i] ^= 0xff;
	expect_bad(gz, len, NULL);
	free(bigger);
	free(gz);
	profile__free(p);
}

/*
 * Every prefix of the encoding, and every single-bit flip of it (plain protobuf) or of many
 * places (gzipped), must either parse or fail with -EINVAL: never crash, never another error.
 * Built with CFLAGS=-fsanitize=address,undefined this also catches what does not crash.
 */
static void test_truncated_and_flipped(void **state)
{
	struct profile *p = fixture(), *q;
	size_t len, rl, i;
	char *gz = render(&output_pprof, p, NULL, &len);
	uint8_t *raw = gunzip(gz, len, &rl), *buf = malloc(rl > len ? rl : len);
	unsigned int ok = 0, bad = 0, bit;
	uint32_t rng = 12345;
	int err;

	for (i = 0; i < rl; i++) {
		q = profile__parse_pprof(raw, i, &err, NULL, 0);
		if (q) {
			ok++;
			profile__free(q);
		} else {
			assert_int_equal(err, -EINVAL);
			bad++;
		}
	}
	for (i = 0; i < rl; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(buf, raw, rl);
			buf[i] ^= 1u << bit;
			q = profile__parse_pprof(buf, rl, &err, NULL, 0);
			if (q) {
				/* what parses must render */
				char *txt = render(&output_text, q, NULL, NULL);

				free(txt);
				ok++;
				profile__free(q);
			} else {
				assert_int_equal(err, -EINVAL);
				bad++;
			}
		}
	}
	for (i = 0; i < len; i++) {
		q = profile__parse_pprof(gz, i, &err, NULL, 0);
		assert_null(q);
		assert_int_equal(err, -EINVAL);
	}
	for (i = 0; i < 4000; i++) {
		size_t at;

		rng = rng * 1103515245 + 12345;
		at = (rng >> 8) % len;
		memcpy(buf, gz, len);
		buf[at] ^= 1u << (rng >> 28 & 7);
		q = profile__parse_pprof(buf, len, &err, NULL, 0);
		if (q)
			profile__free(q);
		else
			assert_true(err == -EINVAL || err == -EFBIG);
	}
	/* a few random bytes at once, in ours and in the handmade one with its unknown fields */
	for (i = 0; i < 20000; i++) {
		struct enc e;
		const uint8_t *src = raw;
		size_t n = rl, k;

		if (i & 1) {
			handmade(&e, i & 2);
			src = e.buf;
			n = e.len;
		}
		memcpy(buf, src, n);
		for (k = 0; k < 1 + i % 4; k++) {
			rng = rng * 1103515245 + 12345;
			buf[(rng >> 4) % n] = rng >> 24;
		}
		q = profile__parse_pprof(buf, n, &err, NULL, 0);
		if (q) {
			char *txt = render(&output_text, q, NULL, NULL);

			free(txt);
			profile__free(q);
			ok++;
		} else {
			assert_int_equal(err, -EINVAL);
			bad++;
		}
	}
	print_message("%u parsed, %u rejected of the plain variants\n", ok, bad);
	assert_true(bad > 0);
	free(buf);
	free(raw);
	free(gz);
	profile__free(p);
}

/* ---- files ------------------------------------------------------------------------------ */

static void test_load_file(void **state)
{
	struct profile *p = fixture(), *q;
	char *path = scratch("read.pb.gz"), *dir = scratch("");
	char why[256];
	int err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	q = profile__load_pprof(path, &err, why, sizeof(why));
	assert_non_null(q);
	assert_int_equal(err, 0);
	assert_int_equal(q->nsamples, p->nsamples);
	profile__free(q);

	q = profile__load_pprof("/nonexistent/x.pb.gz", &err, why, sizeof(why));
	assert_null(q);
	assert_int_equal(err, -ENOENT);
	assert_string_equal(why, strerror(ENOENT));
	q = profile__load_pprof(dir, &err, NULL, 0);
	assert_null(q);
	assert_int_equal(err, -EISDIR);
	unlink(path);
	free(path);
	free(dir);
	profile__free(p);
}

/* Input is read up to a limit, not whole: /dev/zero, a pipe or a huge file that is not gzip
 * was slurped without one (12 GB of /dev/zero before a timeout killed it). The reader's own
 * limit is tried small on a pipe and a character device, the loader's 1 GiB on a sparse file
 * (refused by its size, nothing read); "-" reads standard input. */
static void test_input_limit(void **state)
{
	char *path = scratch("sparse.pb"), *data, *buf;
	int fds[2], fd, err, in;
	struct profile *q;
	char why[256];
	size_t len = 1;

	/* a pipe of 100 bytes: all of it under a limit of 100, EFBIG under 99 */
	for (size_t max = 99; max <= 100; max++) {
		assert_int_equal(pipe(fds), 0);
		buf = calloc(1, 100);
		assert_int_equal(write(fds[1], buf, 100), 100);
		close(fds[1]);
		free(buf);
		errno = 0;
		data = util_read_fd(fds[0], max, &len);
		close(fds[0]);
		if (max == 100) {
			assert_non_null(data);
			assert_int_equal(len, 100);
		} else {
			assert_null(data);
			assert_int_equal(errno, EFBIG);
		}
		free(data);
	}
	/* endless: stops once past the limit */
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	data = util_read_fd(fd, 200000, &len);
	assert_null(data);
	assert_int_equal(errno, EFBIG);
	close(fd);

	/* 1 GiB and a byte, sparse: refused by the loader without reading it */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (1ll << 30) + 1), 0);
	close(fd);
	q = profile__load_pprof(path, &err, why, sizeof(why));
	assert_null(q);
	assert_int_equal(err, -EFBIG);
	unlink(path);

	/* "-": standard input */
	{
		struct profile *p = fixture();

		assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
		in = dup(STDIN_FILENO);
		fd = open(path, O_RDONLY);
		assert_true(in >= 0 && fd >= 0);
		assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
		close(fd);
		q = profile__load_pprof("-", &err, why, sizeof(why));
		assert_int_equal(dup2(in, STDIN_FILENO), STDIN_FILENO);
		close(in);
		assert_non_null(q);
		assert_int_equal(q->nsamples, p->nsamples);
		profile__free(q);
		profile__free(p);
		unlink(path);
	}
	free(path);
}

/* ---- Go's encoder ----------------------------------------------------------------------- */

/* Go's pprof re-encodes our profile with its own encoder (its field order, its string table,
 * its flags); what it writes must read back to the same samples. */
static void test_go_encoded(void **state)
{
	struct profile *p = fixture(), *q = through_go(p, "go");
	uint32_t i, j;

	if (!q) {
		profile__free(p);
		skip();
	}
	assert_int_equal(q->ntypes, p->ntypes);
	assert_string_equal(q->types[q->default_type].type, "alloc_space");
	/* Go drops the sample without a stack, the last one */
	assert_int_equal(p->samples[p->nsamples - 1].nlocs, 0);
	assert_int_equal(q->nsamples, p->nsamples - 1);
	for (i = 0; i < q->nsamples; i++) {
		const struct prof_sample *x = &p->samples[i], *y = &q->samples[i];
		char a[256], b[256];

		assert_int_equal(x->pid, y->pid);
		for (j = 0; j < p->ntypes; j++)
			assert_true(x->values[j] == y->values[j]);
		assert_int_equal(x->nlocs, y->nlocs);
		for (j = 0; j < x->nlocs; j++) {
			const struct prof_location *lx = &p->locations[x->locs[j]];
			const struct prof_location *ly = &q->locations[y->locs[j]];

			/* Go folds the mappings of one file into one and moves addresses with
			 * them: the offset in the module is what stays */
			if (lx->mapping == PROF_NONE)
				assert_true(lx->address == ly->address);
			else
				assert_true(lx->module_offset == ly->module_offset);
			assert_int_equal(lx->nlines, ly->nlines);
			assert_string_equal(profile__frame_name(p, lx, 0, a, sizeof(a)),
					    profile__frame_name(q, ly, 0, b, sizeof(b)));
		}
	}
	assert_string_equal(profile__find_process(q, 200)->comm, "worker");
	profile__free(q);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_output),
		cmocka_unit_test(test_cfi_named),
		cmocka_unit_test(test_rewrite_identical),
		cmocka_unit_test(test_renders),
		cmocka_unit_test(test_reloaded_csv),
		cmocka_unit_test(test_nonpie_offsets),
		cmocka_unit_test(test_nonpie_go_encoded),
		cmocka_unit_test(test_handmade),
		cmocka_unit_test(test_no_pid_labels),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_invalid_gzip),
		cmocka_unit_test(test_truncated_and_flipped),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_input_limit),
		cmocka_unit_test(test_go_encoded),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
