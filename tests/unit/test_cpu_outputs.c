/* Every renderer on a CPU profile (cpu_fixture.h): text, JSON, CSV, folded, speedscope and SVG
 * byte for byte against tests/golden/cpu.* (UPDATE_GOLDEN=1 rewrites them), HTML by its facts,
 * pprof through `go tool pprof` (a CPU profile to it) and back through our reader, which must
 * give the same text report. None may speak of allocations or bytes: the values are samples
 * and CPU time. The mem profile's goldens are tests/golden/profile.*, checked by each
 * renderer's own test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"
#include "cpu_fixture.h"

#define GO_PPROF "/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof"

/* Words of the mem report that would be wrong here. */
static void no_mem_wording(const char *out)
{
	static const char *const words[] = { "allocation", "Allocation", "alloc_", "inuse",
					     "Outstanding", "outstanding", "live bytes", "leak" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(out, words[i]))
			fail_msg("mem wording \"%s\" in a CPU profile's output:\n%.2000s", words[i],
				 strstr(out, words[i]));
}

static char *golden_of(const struct output_ops *ops, const char *golden,
		       const struct output_opts *o)
{
	struct profile *p = cpu_fixture();
	size_t len;
	char *out = render(ops, p, o, &len);

	check_golden(golden, out, len);
	no_mem_wording(out);
	profile__free(p);
	return out;
}

static void test_text(void **state)
{
	struct output_opts o = { .top = 10 };
	char *out = golden_of(&output_text, "tests/golden/cpu.txt", &o);

	assert_non_null(strstr(out, "  rate:         99 Hz\n"));
	assert_non_null(strstr(out, "  samples_lost: 3\n"));
	assert_non_null(strstr(out, "Top 5 functions by self cpu"));
	/* fib recurses three deep in its stack: its total is its 50 samples once */
	assert_non_null(strstr(out, "505.1 ms  23.6%  fib (worker.c)\n"));
	assert_non_null(strstr(out, "nft_do_chain [nf_tables] [k]\n"));
	assert_non_null(strstr(out, "compute (demo.c:8) [demo] [inlined]\n"));
	assert_null(strchr(out, '\033'));
	free(out);
}

/* Stacks of equal value rank by what they read, not by the rank of their first sample: a
 * stack sampled at two addresses of one line (two samples of 1) and the same stack as one
 * sample of 2, as Go's pprof -proto merges them, give the same report (`ebprof report` of a
 * cpu profile and of Go's re-encoding of it listed two tied stacks the other way round). */
static struct profile *tie_profile(bool merged)
{
	struct profile *p = profile__new("cpu");
	uint32_t m, f_a, f_b, a1, a2, b;
	int64_t v[1] = { 1 };

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	m = profile__mapping(p, 300, 0x400000, 0x401000, 0, "/usr/bin/app", NULL);
	f_a = fn(p, "aaa", "aaa", "app.c");
	f_b = fn(p, "bbb", "bbb", "app.c");
	a1 = LOC(p, m, 0x400100, 0x100, { f_a, 6 });
	a2 = LOC(p, m, 0x400104, 0x104, { f_a, 6 });
	b = LOC(p, m, 0x400200, 0x200, { f_b, 9 });
	if (merged) {
		v[0] = 2;
		assert_non_null(profile__add_sample(p, STACK(a1), v, 300));
	} else {
		assert_non_null(profile__add_sample(p, STACK(a1), v, 300));
		assert_non_null(profile__add_sample(p, STACK(a2), v, 300));
		v[0] = 2;
	}
	assert_non_null(profile__add_sample(p, STACK(b), v, 300));
	return p;
}

static void test_text_ties_by_stack(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *split = tie_profile(false), *merged = tie_profile(true);
	char *a = render(&output_text, split, &o, NULL);
	char *b = render(&output_text, merged, &o, NULL);

	(void)state;
	assert_string_equal(a, b);
	assert_true(strstr(a, "    #0 aaa (app.c:6)") < strstr(a, "    #0 bbb (app.c:9)"));
	free(a);
	free(b);
	profile__free(split);
	profile__free(merged);
}

static void test_text_top_and_count(void **state)
{
	struct output_opts o = { .top = 1, .sort = OUTPUT_SORT_COUNT };
	struct profile *p = cpu_fixture();
	char *out = render(&output_text, p, &o, NULL);

	assert_non_null(strstr(out, "Top 1 stack by samples (of 6)\n"));
	assert_non_null(strstr(out, "#1   samples 120 (56.6%), cpu 1.21 s, pid 100 (demo)\n"));
	assert_null(strstr(out, "\n#2 "));
	free(out);
	profile__free(p);
}

/* Samples whose stacks read the same (a loop sampled at two of its instructions: two
 * locations, one function and line) are one stack in the text report, their values summed;
 * apart, the top stack read as two smaller ones. */
static void test_text_same_stack_once(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = cpu_fixture();
	uint32_t m, f_spin, f_main, a, b, c;
	char *out;

	m = profile__mapping(p, 300, 0x400000, 0x401000, 0, "/usr/bin/loop", NULL);
	f_spin = fn(p, "spinloop", "spinloop", "loop.c");
	f_main = fn(p, "main", "main", "loop.c");
	a = LOC(p, m, 0x400100, 0x100, { f_spin, 6 });
	b = LOC(p, m, 0x400104, 0x104, { f_spin, 6 });
	c = LOC(p, m, 0x400200, 0x200, { f_main, 9 });
	cpu_sample(p, STACK(a, c), 40, 300);
	cpu_sample(p, STACK(b, c), 35, 300);
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "Top 7 stacks by cpu\n"));
	assert_non_null(strstr(out, "samples 75, pid 300\n    #0 spinloop (loop.c:6) [loop]\n"));
	assert_null(strstr(out, "samples 40,"));
	free(out);
	profile__free(p);
}

/* --per-thread's "name [tid]" root and a [truncated] end are synthetic frames (no address, no
 * function): the tables of functions leave them out (a thread listed as a function had its
 * whole total); the stacks keep them, JSON marks them and gives them no address, and pprof
 * keeps them as such (address 0) when read back. */
static void test_synthetic_frames(void **state)
{
	struct output_opts o = { .top = 20 };
	struct profile *p = profile__new("cpu"), *q;
	uint32_t m, f_work, f_main, f_thread, f_trunc, work, mainl, thread, trunc;
	int64_t v[1] = { 7 };
	char *out, *gz, why[256];
	size_t len;
	int err = 1;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	m = profile__mapping(p, 300, 0x400000, 0x401000, 0, "/usr/bin/app", NULL);
	f_work = fn(p, "work", "work", "app.c");
	f_main = fn(p, "main", "main", "app.c");
	f_thread = fn(p, "app [301]", "app [301]", NULL);
	f_trunc = fn(p, "[truncated]", "[truncated]", NULL);
	work = LOC(p, m, 0x400100, 0x100, { f_work, 6 });
	mainl = LOC(p, m, 0x400200, 0x200, { f_main, 9 });
	thread = LOC(p, PROF_NONE, 0, 0, { f_thread, 0 });
	trunc = LOC(p, PROF_NONE, 0, 0, { f_trunc, 0 });
	assert_true(profile__location_is_synthetic(&p->locations[thread]));
	assert_false(profile__location_is_synthetic(&p->locations[work]));
	assert_non_null(profile__add_sample(p, STACK(work, mainl, thread), v, 300));
	assert_non_null(profile__add_sample(p, STACK(work, trunc, thread), v, 300));
	out = render(&output_text, p, &o, NULL);
	/* one function by self: "Top 1 function", not "functions" */
	assert_non_null(strstr(out, "\nTop 1 function by self samples\n"));
	assert_non_null(strstr(out, "Top 2 functions by total samples\n"));
	assert_null(strstr(out, "  app [301]\n"));
	assert_null(strstr(out, "  [truncated]\n"));
	/* the stacks keep them */
	assert_non_null(strstr(out, "    #2 app [301]\n"));
	assert_non_null(strstr(out, "    #1 [truncated]\n"));
	free(out);
	o.top = 1;
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "\nTop 1 stack by samples (of 2)\n"));
	assert_non_null(strstr(out, "\nTop 1 function by total samples (of 2)\n"));
	free(out);
	o.top = 20;
	out = render(&output_json, p, &o, NULL);
	assert_non_null(strstr(out, "{\"function\": \"app [301]\", \"file\": null, \"line\": null, "
				    "\"module\": null, \"address\": null, \"offset\": null, "
				    "\"synthetic\": true}"));
	assert_null(strstr(out, "\"address\": \"0x0\""));
	free(out);
	/* the flame graph says what they are, in a colour of their own (it called both a
	 * "function" and coloured them as the program's code) */
	out = render(&output_svg, p, &o, NULL);
	assert_non_null(strstr(out, "<title>app [301]\n14, 100.00%\nno code: named by ebprof (a "
				    "thread, lock, event, or where the stack was cut)</title>"));
	assert_non_null(strstr(out, "<title>[truncated]\n7, 50.00%\nno code: named by ebprof"));
	assert_non_null(strstr(out, "<title>work\n7, 50.00%\nfunction, in app</title>"));
	assert_null(strstr(out, "[truncated]\n7, 50.00%\nfunction"));
	free(out);
	/* and the page's stacks mark them (flag 4, shown "no code"), the functions not: each
	 * synthetic line is [name, no file (-1), no line (0), 4] */
	out = render(&output_html, p, &o, NULL);
	assert_int_equal(count(out, ",-1,0,4]"), 2);
	assert_non_null(strstr(out, "add(li, 'inl', 'no code');"));
	free(out);
	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, &err, why, sizeof(why));
	if (!q)
		fail_msg("cannot read our own pprof: %s", why);
	assert_int_equal(q->nsamples, 2);
	assert_true(profile__location_is_synthetic(&q->locations[q->samples[0].locs[2]]));
	assert_false(profile__location_is_synthetic(&q->locations[q->samples[0].locs[0]]));
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* -a's process table keeps --top (a build's report listed 1,242 processes), and when a name has
 * several processes a table by command sums them (102 cc1 processes of 1-4% each were 81%) */
static void test_text_processes_top_and_commands(void **state)
{
	struct output_opts o = { .top = 2 };
	struct profile *p = cpu_fixture();
	uint32_t m, f_parse, a;
	char *out, *cmds;

	(void)state;
	m = profile__mapping(p, 0, 0x400000, 0x2000000, 0, "/usr/lib/gcc/cc1", NULL);
	f_parse = fn(p, "c_parse_file", "c_parse_file", "c-parser.cc");
	a = LOC(p, m, 0x400100, 0x100, { f_parse, 6 });
	for (uint32_t pid = 1001; pid <= 1003; pid++) {
		assert_non_null(profile__add_process(p, pid, "cc1", NULL));
		cpu_sample(p, STACK(a), 30 + pid - 1001, pid);
	}
	out = render(&output_text, p, &o, NULL);
	assert_non_null(strstr(out, "Processes by cpu (the top 2 of 5)\n"));
	cmds = strstr(out, "Commands by cpu (the top 2 of 3)\n");
	assert_non_null(cmds);
	/* cc1: three processes, 30 + 31 + 32 samples of 10.1 ms */
	assert_non_null(strstr(cmds, "  COMMAND              PROCS"));
	assert_non_null(strstr(cmds, "\n  cc1                      3             93       939.4 ms"));
	free(out);
	/* one process a name: no commands' table */
	profile__free(p);
	p = cpu_fixture();
	o.top = 10;
	out = render(&output_text, p, &o, NULL);
	assert_null(strstr(out, "Commands by"));
	free(out);
	profile__free(p);
}

static void test_json(void **state)
{
	char *out = golden_of(&output_json, "tests/golden/cpu.json", NULL), *path, *cmd;

	if (!have("jq")) {
		print_message("jq not installed: JSON checked by the golden file only\n");
		free(out);
		return;
	}
	path = scratch("cpu.json");
	write_file(path, out, strlen(out));
	assert_true(asprintf(&cmd, "jq -e '.mode == \"cpu\" and .info.rate == \"99 Hz\" and "
			     "(.info | keys_unsorted) == [\"rate\", \"cpus\", \"samples\", "
			     "\"samples_lost\"] and .period == {\"type\": \"cpu\", \"unit\": "
			     "\"nanoseconds\", \"value\": 10101010} and .default_sample_type == "
			     "\"cpu\"' '%s' >/dev/null", path) > 0);
	assert_int_equal(run(cmd), 0);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
}

static void test_csv(void **state)
{
	char *out = golden_of(&output_csv, "tests/golden/cpu.csv", NULL);

	assert_non_null(strstr(out, "nf_hook_slow_[k];nft_do_chain_[k]"));
	free(out);
}

static void test_folded(void **state)
{
	char *out = golden_of(&output_folded, "tests/golden/cpu.folded", NULL);

	/* every kernel frame marked, a module's too; the inlined frame; the process root */
	assert_non_null(strstr(out, "worker (200);main;send;entry_SYSCALL_64_after_hwframe_[k];"
				    "__sys_sendto_[k];ip_output_[k];nf_hook_slow_[k];"
				    "nft_do_chain_[k] 101010100\n"));
	assert_non_null(strstr(out, "demo (100);__libc_start_call_main;main;spin;compute_[i] "));
	free(out);
}

static void test_speedscope(void **state)
{
	char *out = golden_of(&output_speedscope, "tests/golden/cpu.speedscope.json", NULL);

	assert_non_null(strstr(out, "\"unit\": \"nanoseconds\""));
	free(out);
}

static void test_svg(void **state)
{
	char *out = golden_of(&output_svg, "tests/golden/cpu.svg", NULL);

	assert_non_null(strstr(out, "nft_do_chain"));
	free(out);
}

/* Cut every element from `open` to `close` out of s. */
static void strip(char *s, const char *open, const char *close)
{
	for (char *a; (a = strstr(s, open));) {
		char *b = strstr(a, close);

		assert_non_null(b);
		b += strlen(close);
		memmove(a, b, strlen(b) + 1);
	}
}

static void test_html(void **state)
{
	struct profile *p = cpu_fixture();
	char *out;

	/* the run's CPU over time, every traced process together (pid 0): it was "? (0)" */
	assert_int_equal(profile__add_point(p, 0, "cpu", "percent", 1000000000, 98), 0);
	out = render(&output_html, p, NULL, NULL);
	assert_non_null(strstr(out, "\"label\":\"all processes\""));
	assert_non_null(strstr(out, "</td><td>all processes</td>"));
	assert_null(strstr(out, "? (0)"));
	/* what the page says, not its scripts and styles (which serve mem reports too) */
	strip(out, "<script", "</script>");
	strip(out, "<style", "</style>");
	no_mem_wording(out);
	assert_null(strstr(out, "[[kernel.kallsyms]]"));
	assert_null(strstr(out, "<h3>Calls</h3>"));
	assert_non_null(strstr(out, "<tr><th>rate</th><td>99 Hz</td></tr>"));
	assert_non_null(strstr(out, "<tr><th>samples_lost</th><td>3</td></tr>"));
	free(out);
	profile__free(p);
}

/* A synthetic frame's function has no system name in the pprof: written as its name, Go's
 * pprof took "futex 0x7f0000001000 in [stack] of thread 9 (futex_wait)" for demangled C++
 * ("[", "]") and cut its "(futex_wait)", and "waker: ping [1778] of pingpong (1776)" its pid.
 * Read back by ours, and written again, nothing changes. */
static void test_pprof_synthetic_names(void **state)
{
	static const char *const names[] = {
		"futex 0x7f0000001000 in [stack] of thread 9 (futex_wait)",
		"waker: ping [1778] of pingpong (1776)",
	};
	struct profile *p = profile__new("lock"), *back;
	char *path = scratch("synth.pb.gz"), *cmd, *out, *a, *b, why[256];
	uint32_t m, f_work, work, leaf;
	int64_t v[1] = { 5 };
	size_t l1, l2;
	int status, err;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	m = profile__mapping(p, 300, 0x400000, 0x401000, 0, "/usr/bin/app", NULL);
	f_work = fn(p, "work", "work", "app.c");
	work = LOC(p, m, 0x400100, 0x100, { f_work, 6 });
	for (int i = 0; i < 2; i++) {
		uint32_t f = fn(p, names[i], names[i], NULL);

		leaf = LOC(p, PROF_NONE, 0, 0, { f, 0 });
		assert_non_null(profile__add_sample(p, STACK(leaf, work), v, 300));
		v[0]++;
	}
	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	if (access(GO_PPROF, X_OK)) {
		print_message("go tool pprof not installed (%s): checked by our reader only\n",
			      GO_PPROF);
	} else {
		/* pprof's default symbolization, which demangles (-symbolize=none does not) */
		assert_true(asprintf(&cmd, "HOME='%s/tests' " GO_PPROF " -top '%s' 2>&1",
				     out_dir(), path) > 0);
		out = capture(cmd, &status);
		if (status || !strstr(out, "  futex 0x7f0000001000 in [stack] of thread 9 "
				    "(futex_wait)\n") ||
		    !strstr(out, "  waker: ping [1778] of pingpong (1776)\n"))
			fail_msg("pprof -top cut the names (%d):\n%s", status, out);
		free(out);
		free(cmd);
	}
	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->functions[back->locations[back->samples[0].locs[0]].lines[0]
					    .function].name, names[0]);
	a = render(&output_pprof, p, NULL, &l1);
	b = render(&output_pprof, back, NULL, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(a, b, l1);
	free(a);
	free(b);
	profile__free(back);
	profile__free(p);
	unlink(path);
	free(path);
}

/* go tool pprof reads it as a CPU profile; our reader gives back the same report. */
static void test_pprof(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = cpu_fixture(), *back;
	char *path = scratch("cpu.pb.gz"), *cmd, *out, *text, *text2, why[256];
	size_t len;
	int status, err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	if (access(GO_PPROF, X_OK)) {
		print_message("go tool pprof not installed (%s): checked by our reader only\n",
			      GO_PPROF);
	} else {
		assert_true(asprintf(&cmd, "HOME='%s/tests' " GO_PPROF
				     " -symbolize=none -top '%s' 2>&1", out_dir(), path) > 0);
		out = capture(cmd, &status);
		if (status)
			fail_msg("pprof -top failed (%d):\n%s", status, out);
		if (!strstr(out, "Type: cpu\n") || !strstr(out, "Duration: 3s, Total samples = "
							    "2141.41ms (71.38%)") ||
		    !strstr(out, "1212.12ms 56.60% 56.60%  1212.12ms 56.60%  compute (inline)"))
			fail_msg("pprof -top does not read a CPU profile:\n%s", out);
		free(out);
		free(cmd);
		assert_true(asprintf(&cmd, "HOME='%s/tests' " GO_PPROF
				     " -symbolize=none -raw '%s' 2>&1", out_dir(), path) > 0);
		out = capture(cmd, &status);
		if (status || !strstr(out, "Period: 10101010") ||
		    !strstr(out, "info: rate: 99 Hz") || !strstr(out, "samples/count cpu/nanoseconds"))
			fail_msg("pprof -raw output unexpected (%d):\n%s", status, out);
		free(out);
		free(cmd);
	}

	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->mode, "cpu");
	assert_int_equal(back->ninfo, 4);
	assert_string_equal(profile__info(back, "samples_lost"), "3");
	assert_string_equal(back->period_type.type, "cpu");
	assert_int_equal(back->period, CPU_PERIOD_NS);
	text = render(&output_text, p, &o, &len);
	text2 = render(&output_text, back, &o, &len);
	assert_string_equal(text, text2);
	free(text);
	free(text2);
	/* and written again, the same bytes */
	{
		size_t l1, l2;
		char *a = render(&output_pprof, p, NULL, &l1), *b = render(&output_pprof, back,
									  NULL, &l2);

		assert_int_equal(l1, l2);
		assert_memory_equal(a, b, l1);
		free(a);
		free(b);
	}
	profile__free(back);
	unlink(path);
	free(path);
	profile__free(p);
}

static void test_info(void **state)
{
	struct profile *p = profile__new("cpu");

	assert_int_equal(profile__add_info(p, "rate", "%d Hz", 99), 0);
	assert_int_equal(profile__add_info(p, "cpus", "4"), 0);
	/* set again: replaced where it was */
	assert_int_equal(profile__add_info(p, "rate", "%d Hz", 49), 0);
	assert_int_equal(p->ninfo, 2);
	assert_string_equal(p->info[0].key, "rate");
	assert_string_equal(p->info[0].value, "49 Hz");
	assert_string_equal(profile__info(p, "cpus"), "4");
	assert_null(profile__info(p, "nope"));
	assert_int_equal(profile__add_info(p, "a:b", "x"), -EINVAL);
	assert_int_equal(profile__add_info(p, "", "x"), -EINVAL);
	assert_int_equal(profile__set_period(p, "cpu", NULL, 1), -EINVAL);
	assert_int_equal(profile__set_period(p, "cpu", "nanoseconds", 1000), 0);
	/* the mem report shows them too */
	{
		struct profile *m = profile__new("mem");
		char *out;

		assert_int_equal(profile__add_info(m, "tracked", "%s", "every call"), 0);
		out = render(&output_text, m, NULL, NULL);
		/* in the column of every report's facts (render__text_header) */
		assert_non_null(strstr(out, "\n  tracked:   every call\n"));
		free(out);
		profile__free(m);
	}
	assert_int_equal(profile__set_period(p, NULL, NULL, 1000), 0);
	assert_null(p->period_type.type);
	assert_int_equal(p->period, 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_top_and_count),
		cmocka_unit_test(test_text_same_stack_once),
		cmocka_unit_test(test_text_processes_top_and_commands),
		cmocka_unit_test(test_synthetic_frames),
		cmocka_unit_test(test_text_ties_by_stack),
		cmocka_unit_test(test_pprof_synthetic_names),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_pprof),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
