/* ebprof top's model without a screen (src/top/model.c): rows from the windows of two sources,
 * their columns, sorting, filtering, the selection across windows, the panel (functions by self
 * and total, stacks), number formats, and the batch output, exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "top/model.h"

static const struct top_col cpu_cols[] = {
	{ "CPU%", "cpu_ns", TOP_COL_SHARE, TOP_UNIT_PERCENT },
};
static const struct top_source cpu_src = { "cpu", cpu_cols, 1, "cpu", TOP_UNIT_PERCENT };

/* a second source, as a mem mode would be: a rate and a gauge */
static const struct top_col mem_cols[] = {
	{ "ALLOC/s", "alloc_bytes", TOP_COL_RATE, TOP_UNIT_BYTES },
	{ "LIVE", "live_bytes", TOP_COL_GAUGE, TOP_UNIT_BYTES },
};
static const struct top_source mem_src = { "mem", mem_cols, 2, "alloc_space",
					   TOP_UNIT_BYTES };

static uint32_t named(struct profile *p, const char *name)
{
	struct prof_line l = { .line = 0 };

	l.function = profile__function(p, name, name, NULL);
	assert_int_not_equal(l.function, PROF_NONE);
	return profile__location(p, PROF_NONE, l.function + 1, l.function + 1, &l, 1);
}

static void cpu_proc(struct profile *p, uint32_t pid, const char *comm, uint64_t ns)
{
	struct prof_process *pp = profile__add_process(p, pid, comm, NULL);

	assert_non_null(pp);
	assert_int_equal(prof_process__add_stat(p, pp, "cpu_ns", ns), 0);
}

static void cpu_stack(struct profile *p, uint32_t pid, int64_t ns, int n, ...)
{
	uint32_t locs[16];
	int64_t v[2] = { ns / 10000000, ns };
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		locs[i] = named(p, va_arg(ap, const char *));
	va_end(ap);
	assert_non_null(profile__add_sample(p, locs, n, v, pid));
}

/* A 2 s window of cpu: 100 burns 1.5 s (75%), 200 0.5 s (25%), 300 ("burnish") 1 s. */
static struct profile *cpu_window(void)
{
	struct profile *p = profile__new("cpu");

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	cpu_proc(p, 200, "worker", 500000000);
	cpu_proc(p, 100, "burner", 1500000000);
	cpu_proc(p, 300, "burnish", 1000000000);
	/* 100: heavy 1.0 s, light 0.3 s, and a recursive fib 0.2 s (fib < fib < main) */
	cpu_stack(p, 100, 1000000000, 3, "heavy", "burn", "main");
	cpu_stack(p, 100, 300000000, 3, "light", "burn", "main");
	cpu_stack(p, 100, 200000000, 3, "fib", "fib", "main");
	cpu_stack(p, 200, 500000000, 2, "work", "main");
	cpu_stack(p, 300, 1000000000, 1, "spin");
	return p;
}

/* as io's: requests per second and their mean latency (a MEAN column) */
static const struct top_col io_cols[] = {
	{ "IO/s", "requests", TOP_COL_RATE, TOP_UNIT_COUNT, NULL },
	{ "IOLAT", "latency_ns", TOP_COL_MEAN, TOP_UNIT_NS, "requests" },
};
static const struct top_source io_src = { "io", io_cols, 2, "latency", TOP_UNIT_NS };

static struct profile *mem_window(void)
{
	struct profile *p = profile__new("mem");
	struct prof_process *pp;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	pp = profile__add_process(p, 200, "worker", NULL);
	assert_int_equal(prof_process__add_stat(p, pp, "alloc_bytes", 4 << 20), 0);
	assert_int_equal(prof_process__add_stat(p, pp, "live_bytes", 3 << 10), 0);
	return p;
}

static struct top_model *model(bool with_mem)
{
	const struct top_source *src[2] = { &cpu_src, &mem_src };
	struct top_model *m = top_model__new(src, with_mem ? 2 : 1);
	struct profile *wins[2] = { cpu_window(), with_mem ? mem_window() : NULL };

	assert_non_null(m);
	assert_int_equal(top_model__update(m, wins, 2.0), 0);
	assert_null(wins[0]);	/* the model owns the windows now */
	return m;
}

static void test_rows_sorted_by_cpu(void **state)
{
	struct top_model *m = model(false);

	assert_int_equal(top_model__nrows(m), 3);
	assert_int_equal(top_model__row(m, 0)->pid, 100);
	assert_true(top_model__row(m, 0)->has[0]);
	/* 1.5 s of CPU over 2 s: 75% of one CPU */
	assert_float_equal(top_model__row(m, 0)->v[0], 75.0, 1e-9);
	assert_int_equal(top_model__row(m, 1)->pid, 300);
	assert_float_equal(top_model__row(m, 1)->v[0], 50.0, 1e-9);
	assert_int_equal(top_model__row(m, 2)->pid, 200);
	assert_string_equal(top_model__row(m, 2)->comm, "worker");
	assert_null(top_model__row(m, 3));
	top_model__free(m);
}

static void test_sort_cycles(void **state)
{
	struct top_model *m = model(true);

	assert_int_equal(top_model__ncols(m), 3);
	assert_int_equal(top_model__sort_col(m), 0);
	/* ALLOC/s: the one process mem saw first, then those without the column, by PID */
	assert_int_equal(top_model__cycle_sort(m), 1);
	assert_int_equal(top_model__row(m, 0)->pid, 200);
	assert_float_equal(top_model__row(m, 0)->v[1], 2097152.0, 1e-9);
	assert_float_equal(top_model__row(m, 0)->v[2], 3072.0, 1e-9);
	assert_int_equal(top_model__row(m, 1)->pid, 100);
	assert_false(top_model__row(m, 1)->has[1]);
	assert_int_equal(top_model__row(m, 2)->pid, 300);
	assert_int_equal(top_model__cycle_sort(m), 2);
	/* past the last column: PID, ascending */
	assert_int_equal(top_model__cycle_sort(m), -1);
	assert_int_equal(top_model__row(m, 0)->pid, 100);
	assert_int_equal(top_model__row(m, 1)->pid, 200);
	assert_int_equal(top_model__row(m, 2)->pid, 300);
	assert_int_equal(top_model__cycle_sort(m), 0);
	assert_int_equal(top_model__row(m, 0)->pid, 100);
	/* a view sorts by its first column */
	top_model__set_view(m, 1);
	assert_int_equal(top_model__view(m), 1);
	assert_int_equal(top_model__sort_col(m), 1);
	assert_int_equal(top_model__col_source(m, 2), 1);
	top_model__free(m);
}

static void test_filter_and_selection(void **state)
{
	struct top_model *m = model(false);
	struct profile *wins[1];

	/* the first row is selected; moves clamp */
	assert_int_equal(top_model__selected(m), 0);
	assert_int_equal(top_model__selected_pid(m), 100);
	top_model__move(m, 1);
	assert_int_equal(top_model__selected_pid(m), 300);
	top_model__move(m, 10);
	assert_int_equal(top_model__selected(m), 2);
	assert_int_equal(top_model__selected_pid(m), 200);
	top_model__move(m, -10);
	assert_int_equal(top_model__selected_pid(m), 100);
	top_model__move(m, 1);

	/* "burn" matches burner and burnish; the selection stays on its process */
	top_model__filter(m, "burn");
	assert_string_equal(top_model__filter_text(m), "burn");
	assert_int_equal(top_model__nrows(m), 2);
	assert_int_equal(top_model__row(m, 0)->pid, 100);
	assert_int_equal(top_model__row(m, 1)->pid, 300);
	assert_int_equal(top_model__selected(m), 1);
	assert_int_equal(top_model__selected_pid(m), 300);

	/* a new window where 300 burns more: it moves up, still selected */
	wins[0] = cpu_window();
	cpu_proc(wins[0], 300, "burnish", 1000000000);	/* 2 s in all: 100% */
	assert_int_equal(top_model__update(m, wins, 2.0), 0);
	assert_int_equal(top_model__row(m, 0)->pid, 300);
	assert_float_equal(top_model__row(m, 0)->v[0], 100.0, 1e-9);
	assert_int_equal(top_model__selected(m), 0);
	assert_int_equal(top_model__selected_pid(m), 300);

	/* filtered out: the selection goes to the row in its place */
	top_model__filter(m, "worker");
	assert_int_equal(top_model__nrows(m), 1);
	assert_int_equal(top_model__selected_pid(m), 200);
	top_model__filter(m, "nothing");
	assert_int_equal(top_model__nrows(m), 0);
	assert_int_equal(top_model__selected(m), -1);
	assert_int_equal(top_model__selected_pid(m), 0);
	top_model__move(m, 1);
	assert_int_equal(top_model__selected(m), -1);
	top_model__filter(m, "");
	assert_int_equal(top_model__nrows(m), 3);
	top_model__free(m);
}

static void test_panel_functions(void **state)
{
	struct top_model *m = model(false);
	struct top_panel_line l[8];
	uint32_t n = top_model__panel(m, 100, false, l, 8);

	/* by self, then total: heavy 1.0 s (50% of one CPU over 2 s), light 0.3 s, fib 0.2 s
	 * (self once, total once though it is twice on its stack), then burn and main (no self,
	 * total 1.3 s and 1.5 s: main first) */
	assert_int_equal(n, 5);
	assert_string_equal(l[0].text, "heavy");
	assert_float_equal(l[0].self, 50.0, 1e-9);
	assert_float_equal(l[0].total, 50.0, 1e-9);
	assert_string_equal(l[1].text, "light");
	assert_float_equal(l[1].self, 15.0, 1e-9);
	assert_string_equal(l[2].text, "fib");
	assert_float_equal(l[2].self, 10.0, 1e-9);
	assert_float_equal(l[2].total, 10.0, 1e-9);
	assert_string_equal(l[3].text, "main");
	assert_float_equal(l[3].self, 0.0, 1e-9);
	assert_float_equal(l[3].total, 75.0, 1e-9);
	assert_string_equal(l[4].text, "burn");
	assert_float_equal(l[4].total, 65.0, 1e-9);
	/* at most max lines; another process's only */
	assert_int_equal(top_model__panel(m, 100, false, l, 2), 2);
	assert_int_equal(top_model__panel(m, 200, false, l, 8), 2);
	assert_string_equal(l[0].text, "work");
	assert_float_equal(l[0].self, 25.0, 1e-9);
	/* every process (pid 0) */
	assert_int_equal(top_model__panel(m, 0, false, l, 8), 7);
	assert_string_equal(l[0].text, "heavy");
	assert_string_equal(l[1].text, "spin");
	/* no such process */
	assert_int_equal(top_model__panel(m, 999, false, l, 8), 0);
	top_model__free(m);
}

/* A synthetic frame (--per-thread's "name [tid]" root) is no function in the panel; as the
 * leaf (a lock, a kind) it is one. */
static void test_panel_synthetic(void **state)
{
	const struct top_source *src[1] = { &cpu_src };
	struct top_model *m = top_model__new(src, 1);
	struct profile *p = profile__new("cpu"), *wins[1];
	struct prof_line l = { .line = 0 };
	struct top_panel_line out[8];
	uint32_t locs[3];
	int64_t v[2] = { 50, 500000000 };

	assert_non_null(m);
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	cpu_proc(p, 200, "worker", 500000000);
	locs[0] = named(p, "work");
	locs[1] = named(p, "main");
	l.function = profile__function(p, "worker [201]", "worker [201]", NULL);
	locs[2] = profile__location(p, PROF_NONE, 0, 0, &l, 1);
	assert_true(profile__location_is_synthetic(&p->locations[locs[2]]));
	assert_non_null(profile__add_sample(p, locs, 3, v, 200));
	wins[0] = p;
	assert_int_equal(top_model__update(m, wins, 2.0), 0);
	assert_int_equal(top_model__panel(m, 200, false, out, 8), 2);
	assert_string_equal(out[0].text, "work");
	assert_string_equal(out[1].text, "main");
	top_model__free(m);
}

static void test_panel_stacks(void **state)
{
	struct top_model *m = model(false);
	struct top_panel_line l[8];
	uint32_t n = top_model__panel(m, 100, true, l, 8);

	assert_int_equal(n, 3);
	assert_string_equal(l[0].text, "heavy < burn < main");
	assert_float_equal(l[0].self, 50.0, 1e-9);
	assert_string_equal(l[1].text, "light < burn < main");
	assert_string_equal(l[2].text, "fib < fib < main");
	assert_float_equal(l[2].self, 10.0, 1e-9);
	top_model__free(m);
}

static void test_format(void **state)
{
	char b[32];

	assert_string_equal(top_format(99.54, TOP_UNIT_PERCENT, b, sizeof(b)), "99.5");
	assert_string_equal(top_format(999, TOP_UNIT_COUNT, b, sizeof(b)), "999");
	assert_string_equal(top_format(12345, TOP_UNIT_COUNT, b, sizeof(b)), "12345");
	assert_string_equal(top_format(123456, TOP_UNIT_COUNT, b, sizeof(b)), "123.5k");
	assert_string_equal(top_format(4500000, TOP_UNIT_COUNT, b, sizeof(b)), "4.5M");
	assert_string_equal(top_format(1023, TOP_UNIT_BYTES, b, sizeof(b)), "1023B");
	assert_string_equal(top_format(1536, TOP_UNIT_BYTES, b, sizeof(b)), "1.5K");
	assert_string_equal(top_format(3 << 20, TOP_UNIT_BYTES, b, sizeof(b)), "3.0M");
	assert_string_equal(top_format(850, TOP_UNIT_NS, b, sizeof(b)), "850ns");
	assert_string_equal(top_format(15000000, TOP_UNIT_NS, b, sizeof(b)), "15.0ms");
	assert_string_equal(top_format(1.2e9, TOP_UNIT_NS, b, sizeof(b)), "1.20s");
}

static void test_batch_output(void **state)
{
	struct top_model *m = model(true);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	top_model__print(m, f, "ebprof top - header", 0);
	top_model__print(m, f, "second", 2);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
		"ebprof top - header\n"
		"    PID COMMAND                CPU%    ALLOC/s       LIVE\n"
		"    100 burner                 75.0          -          -\n"
		"    300 burnish                50.0          -          -\n"
		"    200 worker                 25.0       2.0M       3.0K\n"
		"\n"
		"second\n"
		"    PID COMMAND                CPU%    ALLOC/s       LIVE\n"
		"    100 burner                 75.0          -          -\n"
		"    300 burnish                50.0          -          -\n"
		"\n");
	free(buf);
	top_model__free(m);
}

static void test_mean_column(void **state)
{
	const struct top_source *src[2] = { &cpu_src, &io_src };
	struct top_model *m = top_model__new(src, 2);
	struct profile *wins[2] = { cpu_window(), profile__new("io") };
	struct prof_process *pp;

	assert_non_null(m);
	assert_non_null(wins[1]);
	/* 200: 30 requests of 4 ms in all in 2 s; 300: a request counted without latency yet is
	 * impossible, but 0 requests must not divide: no value */
	pp = profile__add_process(wins[1], 200, "worker", NULL);
	assert_int_equal(prof_process__add_stat(wins[1], pp, "requests", 30), 0);
	assert_int_equal(prof_process__add_stat(wins[1], pp, "latency_ns", 120000000), 0);
	pp = profile__add_process(wins[1], 300, "burnish", NULL);
	assert_int_equal(prof_process__add_stat(wins[1], pp, "requests", 0), 0);
	assert_int_equal(prof_process__add_stat(wins[1], pp, "latency_ns", 0), 0);
	assert_int_equal(top_model__update(m, wins, 2.0), 0);
	top_model__sort(m, 1);
	assert_int_equal(top_model__row(m, 0)->pid, 200);
	assert_float_equal(top_model__row(m, 0)->v[1], 15.0, 1e-9);
	assert_float_equal(top_model__row(m, 0)->v[2], 4000000.0, 1e-9);
	assert_int_equal(top_model__row(m, 1)->pid, 300);
	assert_true(top_model__row(m, 1)->has[1]);
	assert_false(top_model__row(m, 1)->has[2]);
	top_model__free(m);
}

/* as offcpu's: the off-CPU time in % of one thread's time (two threads asleep: 200%), the
 * switches out per second, the panel ranking functions by off-CPU time */
static const struct top_col offcpu_cols[] = {
	{ "OFF-CPU%", "offcpu_ns", TOP_COL_SHARE, TOP_UNIT_PERCENT, NULL },
	{ "WAITS/s", "switches", TOP_COL_RATE, TOP_UNIT_COUNT, NULL },
};
static const struct top_source offcpu_src = { "offcpu", offcpu_cols, 2, "offcpu",
					      TOP_UNIT_PERCENT };

static void test_offcpu_columns(void **state)
{
	const struct top_source *src[3] = { &cpu_src, &offcpu_src, &io_src };
	struct top_model *m = top_model__new(src, 3);
	/* io's part is empty, as a member without a window leaves it */
	struct profile *wins[3] = { cpu_window(), profile__new("offcpu"), profile__new("io") };
	struct profile *w = wins[1];
	struct prof_process *pp;
	struct top_panel_line l[5];
	int64_t v[2];
	uint32_t locs[3];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(m);
	assert_non_null(w);
	assert_int_equal(profile__add_type(w, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(w, "switches", "count"), 0);
	/* 2 s window: 400's two threads 3.0 s off the CPU in 40 waits, 2.4 s in rawsys3 (inlined
	 * into nap: one location of two lines) < sleep_loop < main, 0.6 s in poll < main; 100
	 * (burner) 0.1 s in 2 */
	{
		struct prof_line two[2] = { { .function = profile__function(w, "rawsys3",
									    "rawsys3", NULL) },
					    { .function = profile__function(w, "nap", "nap",
									    NULL) } };

		locs[0] = profile__location(w, PROF_NONE, 0x500, 0x500, two, 2);
	}
	locs[1] = named(w, "sleep_loop");
	locs[2] = named(w, "main");
	v[0] = 2400000000;
	v[1] = 30;
	assert_non_null(profile__add_sample(w, locs, 3, v, 400));
	locs[0] = named(w, "poll");
	locs[1] = locs[2];
	v[0] = 600000000;
	v[1] = 10;
	assert_non_null(profile__add_sample(w, locs, 2, v, 400));
	pp = profile__add_process(w, 400, "offsleep", NULL);
	assert_int_equal(prof_process__add_stat(w, pp, "offcpu_ns", 3000000000), 0);
	assert_int_equal(prof_process__add_stat(w, pp, "switches", 40), 0);
	pp = profile__add_process(w, 100, "burner", NULL);
	assert_int_equal(prof_process__add_stat(w, pp, "offcpu_ns", 100000000), 0);
	assert_int_equal(prof_process__add_stat(w, pp, "switches", 2), 0);
	assert_int_equal(top_model__update(m, wins, 2.0), 0);

	/* the view's first column sorts: 400 first (150%: more than one thread's time) */
	top_model__set_view(m, 1);
	assert_int_equal(top_model__sort_col(m), 1);
	assert_int_equal(top_model__row(m, 0)->pid, 400);
	assert_string_equal(top_model__row(m, 0)->comm, "offsleep");
	assert_false(top_model__row(m, 0)->has[0]);	/* no CPU sample */
	assert_float_equal(top_model__row(m, 0)->v[1], 150.0, 1e-9);
	assert_float_equal(top_model__row(m, 0)->v[2], 20.0, 1e-9);
	assert_int_equal(top_model__row(m, 1)->pid, 100);
	assert_float_equal(top_model__row(m, 1)->v[1], 5.0, 1e-9);
	assert_float_equal(top_model__row(m, 1)->v[2], 1.0, 1e-9);
	assert_false(top_model__row(m, 1)->has[3]);	/* the empty part: no IO/s */
	/* the panel: rawsys3 first by self (120% of one thread over 2 s), then poll; main by
	 * total, then nap, the inlined callee's caller, and sleep_loop with it */
	assert_int_equal(top_model__panel(m, 400, false, l, 5), 5);
	assert_string_equal(l[0].text, "rawsys3");
	assert_float_equal(l[0].self, 120.0, 1e-9);
	assert_string_equal(l[1].text, "poll");
	assert_float_equal(l[1].self, 30.0, 1e-9);
	assert_string_equal(l[2].text, "main");
	assert_float_equal(l[2].total, 150.0, 1e-9);
	assert_string_equal(l[3].text, "nap");
	assert_float_equal(l[3].self, 0.0, 1e-9);
	assert_float_equal(l[3].total, 120.0, 1e-9);
	assert_string_equal(l[4].text, "sleep_loop");
	assert_int_equal(top_model__panel(m, 400, true, l, 4), 2);
	assert_string_equal(l[0].text, "rawsys3 < nap < sleep_loop < main");

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	top_model__print(m, f, "h", 2);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
		"h\n"
		"    PID COMMAND                CPU%   OFF-CPU%    WAITS/s       IO/s      IOLAT\n"
		"    400 offsleep                  -      150.0         20          -          -\n"
		"    100 burner                 75.0        5.0          1          -          -\n"
		"\n");
	free(buf);
	top_model__free(m);
}

/* The header's drops: every source's, each named by its source (only the first source with
 * drops was named, so 'drops 11 (unwind_outside_code 2)' left 9 unexplained). */
static void test_drops(void **state)
{
	const struct top_source *src[2] = { &cpu_src, &mem_src };
	struct top_model *m = top_model__new(src, 2);
	struct profile *wins[2] = { cpu_window(), mem_window() };
	char why[256];

	assert_non_null(m);
	assert_int_equal(profile__add_drop(wins[0], "unwind_outside_code", 2), 0);
	assert_int_equal(profile__add_drop(wins[0], "stack_table_full", 0), 0);
	assert_int_equal(profile__add_drop(wins[1], "live_table_full", 9), 0);
	assert_int_equal(top_model__update(m, wins, 2.0), 0);
	assert_int_equal(top_model__drops(m, why, sizeof(why)), 11);
	assert_string_equal(why, "cpu unwind_outside_code 2, mem live_table_full 9");
	top_model__free(m);
	m = model(false);
	assert_int_equal(top_model__drops(m, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	top_model__free(m);
}

static void test_no_window(void **state)
{
	const struct top_source *src[1] = { &cpu_src };
	struct top_model *m = top_model__new(src, 1);
	struct top_panel_line l[2];

	assert_non_null(m);
	assert_int_equal(top_model__nrows(m), 0);
	assert_null(top_model__window(m, 0));
	assert_int_equal(top_model__panel(m, 0, false, l, 2), 0);
	assert_int_equal(top_model__selected_pid(m), 0);
	top_model__free(m);
	assert_null(top_model__new(src, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_sorted_by_cpu),
		cmocka_unit_test(test_sort_cycles),
		cmocka_unit_test(test_filter_and_selection),
		cmocka_unit_test(test_panel_functions),
		cmocka_unit_test(test_panel_synthetic),
		cmocka_unit_test(test_panel_stacks),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_batch_output),
		cmocka_unit_test(test_mean_column),
		cmocka_unit_test(test_offcpu_columns),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_no_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
