/* Every renderer on a block I/O profile (io_fixture.h): text, JSON, CSV and folded byte for
 * byte against tests/golden/io.* (UPDATE_GOLDEN=1 rewrites them); SVG, speedscope and HTML by
 * their facts; pprof through our reader (the per-disk groups are ours alone and stay behind,
 * the samples come back whole). The histograms behind the groups (struct prof_hist): the
 * values each slot holds, quantiles, the log2 view. */
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
#include "io_fixture.h"

/* Words of the mem report that would be wrong here. */
static void no_mem_wording(const char *out)
{
	static const char *const words[] = { "allocation", "Allocation", "alloc_", "inuse",
					     "Outstanding", "outstanding", "live bytes", "leak" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(out, words[i]))
			fail_msg("mem wording \"%s\" in an I/O profile's output:\n%.2000s",
				 words[i], strstr(out, words[i]));
}

static char *golden_of(const struct output_ops *ops, const char *golden,
		       const struct output_opts *o)
{
	struct profile *p = io_fixture();
	size_t len;
	char *out = render(ops, p, o, &len);

	if (golden)
		check_golden(golden, out, len);
	/* the page's scripts serve mem reports too */
	if (ops != &output_html)
		no_mem_wording(out);
	profile__free(p);
	return out;
}

static void test_text(void **state)
{
	struct output_opts o = { .top = 10 };
	char *out = golden_of(&output_text, "tests/golden/io.txt", &o), *groups, *stacks, *funcs;

	/* the per-disk table leads, then the histograms, then the top stacks */
	groups = strstr(out, "\nBy device and op: latency\n");
	stacks = strstr(out, "\nTop 4 stacks by latency\n");
	funcs = strstr(out, "\nTop 3 functions by self latency\n");
	assert_non_null(groups);
	assert_non_null(stacks);
	assert_non_null(funcs);
	assert_true(groups < strstr(out, "\nHistograms\n"));
	assert_true(strstr(out, "\nHistograms\n") < stacks);
	assert_true(stacks < funcs);
	assert_non_null(strstr(out, "  DEVICE OP    REQUESTS   BYTES      AVG      P50      P90"
				    "     P99      MAX   QUEUE  SERVICE IN FLIGHT\n"));
	assert_non_null(strstr(out, "  vda    read      2000 7.8 MiB  47.2 us  39.6 us  51.7 us"
				    " 53.2 us 900.0 us  5.0 us  42.2 us         0\n"));
	/* the JSON-only sum has no column */
	assert_null(strstr(out, "LATENCY_NS"));
	assert_non_null(strstr(out, "  vda write, latency:\n"));
	assert_non_null(strstr(out, "    [262.1 us, 524.3 us)  70 #"));
	assert_non_null(strstr(out, "  vda read, size:\n    [4 KiB, 8 KiB)  2000 #"));
	assert_non_null(strstr(out, "#0 vda read (sync)\n"));
	assert_non_null(strstr(out, "#4 wb_workfn [kernel.kallsyms] [k]\n"));
	free(out);
}

/* A process's row and the Totals come from its statistic when the sample type names one (a
 * full stack table lost samples, not the process's totals), from its samples otherwise. */
static void test_process_totals(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = io_fixture();
	struct prof_process *proc;
	size_t len;
	char *out;

	assert_int_equal(profile__set_type_proc_stat(p, "requests", "requests"), 0);
	assert_int_equal(profile__set_type_proc_stat(p, "nothing", "requests"), -ENOENT);
	/* db's 500 requests more than its stacks kept; dd's 7, none of its stacks kept */
	proc = profile__find_process(p, 300);
	assert_int_equal(prof_process__add_stat(p, proc, "requests", 500), 0);
	proc = profile__add_process(p, 400, "dd", NULL);
	assert_int_equal(prof_process__add_stat(p, proc, "requests", 7), 0);
	assert_int_equal(profile__type_total(p, 0), 2597 + 10 + 7);
	/* latency names no statistic: its samples */
	assert_int_equal(profile__type_total(p, 2), 147900000);
	out = render(&output_text, p, &o, &len);
	assert_non_null(strstr(out, "  Totals:    requests 2614, io_bytes 13.9 MiB"));
	assert_non_null(strstr(out, "       300  db                         2597       13.8 MiB"
				    "       144.9 ms        14.1 ms  98.0%\n"));
	assert_non_null(strstr(out, "       400  dd                            7            0 B"
				    "           0 ns           0 ns   0.0%\n"));
	free(out);
	profile__free(p);
}

static void test_json(void **state)
{
	char *out = golden_of(&output_json, "tests/golden/io.json", NULL), *path, *cmd;

	if (!have("jq")) {
		print_message("jq not installed: JSON checked by the golden file only\n");
		free(out);
		return;
	}
	path = scratch("io.json");
	write_file(path, out, strlen(out));
	assert_true(asprintf(&cmd, "jq -e '.mode == \"io\" and .default_sample_type == "
			     "\"latency\" and (.groups | length) == 2 and .groups[0].labels == "
			     "{\"device\": \"vda\", \"op\": \"read\"} and .groups[0].requests == "
			     "2000 and .groups[0].latency_ns == 94480000 and "
			     "(.groups[0].histograms | map(.name)) == [\"latency\", \"queue\", "
			     "\"service\", \"size\"] and (.groups[0].histograms[0].buckets | "
			     "map(.count) | add) == 2000 and .groups[1].histograms[0].buckets[0] "
			     "== {\"min\": 294912, \"max\": 327679, \"count\": 70} and "
			     "([.processes[] | select(.pid == 57) | .note][0] == \"kernel thread: "
			     "writeback flusher\")' '%s' >/dev/null", path) > 0);
	assert_int_equal(run(cmd), 0);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
}

static void test_csv_folded(void **state)
{
	char *out = golden_of(&output_csv, "tests/golden/io.csv", NULL);

	free(out);
	out = golden_of(&output_folded, "tests/golden/io.folded", NULL);
	/* the leaf names the disk and operation, kernel frames marked, latency in ns */
	assert_non_null(strstr(out, "db (300);__libc_start_call_main;main;load_table;pread64;"
				    "entry_SYSCALL_64_after_hwframe_[k];__x64_sys_pread64_[k];"
				    "vfs_read_[k];iomap_dio_rw_[k];blk_mq_submit_bio_[k];"
				    "blk_account_io_start_[k];vda read (sync) 96000000\n"));
	assert_non_null(strstr(out, "kworker/u8:1 (57);kthread_[k];wb_workfn_[k];"));
	free(out);
}

static void test_svg_speedscope_html(void **state)
{
	char *out = golden_of(&output_svg, NULL, NULL);

	assert_non_null(strstr(out, "vda read (sync)"));
	free(out);
	out = golden_of(&output_speedscope, NULL, NULL);
	assert_non_null(strstr(out, "\"unit\": \"nanoseconds\""));
	free(out);
	out = golden_of(&output_html, NULL, NULL);
	assert_non_null(strstr(out, "vda read (sync)"));
	free(out);
}

/* pprof keeps the samples (folded the same after a round trip), not the groups. */
static void test_pprof(void **state)
{
	struct profile *p = io_fixture(), *back;
	char *path = scratch("io.pb.gz"), *a, *b, why[256];
	int err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->mode, "io");
	assert_int_equal(back->ngroups, 0);
	/* its text says the summary is not there, rather than leaving it out without a word */
	a = render(&output_text, back, &(struct output_opts){ .top = 10 }, NULL);
	assert_non_null(strstr(a, "\nBy device and op: not in a saved profile\n"));
	free(a);
	a = render(&output_text, p, &(struct output_opts){ .top = 10 }, NULL);
	assert_null(strstr(a, "not in a saved profile"));
	free(a);
	assert_string_equal(back->types[back->default_type].type, "latency");
	/* each process's statistics of its types come back from its samples (pprof has no place
	 * for them; a report of a saved profile had no totals) */
	{
		static const char *const stats[] = { "requests", "io_bytes", "latency_ns",
						     "queue_ns" };
		int64_t *sums = profile__process_sums(p);

		assert_non_null(sums);
		assert_int_equal(back->nprocesses, p->nprocesses);
		for (uint32_t k = 0; k < p->nprocesses; k++) {
			const struct prof_process *bp = profile__find_process(back,
									      p->processes[k].pid);

			assert_non_null(bp);
			for (uint32_t t = 0; t < 4; t++) {
				uint64_t v;

				assert_true(prof_process__stat(bp, stats[t], &v));
				assert_int_equal(v, sums[(size_t)k * p->ntypes + t]);
			}
		}
		free(sums);
		a = render(&output_json, back, NULL, NULL);
		assert_non_null(strstr(a, "\"requests\": 2107"));
		free(a);
	}
	a = render(&output_folded, p, NULL, NULL);
	b = render(&output_folded, back, NULL, NULL);
	assert_string_equal(a, b);
	free(a);
	free(b);
	profile__free(back);
	unlink(path);
	free(path);
	profile__free(p);
}

static void test_hist(void **state)
{
	uint64_t c[IOF_LAT_SLOTS] = { 0 }, min, max, log2[64];
	struct prof_hist h = { .name = "latency", .unit = "nanoseconds", .sub = IOF_SUB,
			       .counts = c, .n = IOF_LAT_SLOTS };
	uint32_t nb;

	/* slot bounds: 0; small values one integer each; [1024, 1151] past 2^10 */
	assert_true(prof_hist__slot(&h, 0, &min, &max));
	assert_true(min == 0 && max == 0);
	assert_true(prof_hist__slot(&h, 1, &min, &max));
	assert_true(min == 1 && max == 1);
	assert_true(prof_hist__slot(&h, iof_slot(1024), &min, &max));
	assert_true(min == 1024 && max == 1151);
	assert_true(prof_hist__slot(&h, iof_slot(1151), &min, &max));
	assert_true(min == 1024 && max == 1151);
	assert_false(prof_hist__slot(&h, IOF_LAT_SLOTS - 1, &min, &max));
	assert_true(min == 1ull << 47 && max == UINT64_MAX);

	/* no counts: 0 */
	assert_true(prof_hist__quantile(&h, 0.5) == 0);
	/* 100 values in [1024, 1152): the median is in the middle of the slot */
	c[iof_slot(1100)] = 100;
	assert_true(prof_hist__quantile(&h, 0.5) == 1088);
	assert_true(prof_hist__quantile(&h, 1) == 1152);
	/* 90 fast, 10 slow: p90 at the fast slot's top, p99 within the slow one */
	c[iof_slot(1000000)] = 10;
	c[iof_slot(1100)] = 90;
	assert_true(prof_hist__quantile(&h, 0.9) == 1152);
	prof_hist__slot(&h, iof_slot(1000000), &min, &max);
	assert_true(prof_hist__quantile(&h, 0.99) > (double)min);
	assert_true(prof_hist__quantile(&h, 0.99) <= (double)max + 1);
	assert_int_equal(prof_hist__total(&h), 100);

	/* the log2 view: [1024, 2048) is bucket 11, [2^19, 2^20) bucket 20; 49 buckets */
	c[IOF_LAT_SLOTS - 1] = 3;
	nb = prof_hist__log2(&h, log2, 64);
	assert_int_equal(nb, 49);
	assert_int_equal(log2[11], 90);
	assert_int_equal(log2[20], 10);
	assert_int_equal(log2[48], 3);
	/* fewer buckets than the layout: the rest in the last */
	nb = prof_hist__log2(&h, log2, 12);
	assert_int_equal(nb, 12);
	assert_int_equal(log2[11], 103);
}

static void test_groups(void **state)
{
	struct profile *p = profile__new("io");
	uint64_t c[3] = { 1, 2, 3 };
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	assert_int_equal(prof_group__add_label(p, g, "device", "sda"), 0);
	assert_int_equal(prof_group__add_stat(p, g, "requests", "REQUESTS", "count", 6), 0);
	assert_int_equal(prof_group__add_hist(p, g, "size", "bytes", 1, c, 3), 0);
	/* sub-buckets come in powers of two */
	assert_int_equal(prof_group__add_hist(p, g, "size", "bytes", 3, c, 3), -EINVAL);
	assert_int_equal(prof_group__add_label(p, g, "op", NULL), -EINVAL);
	c[0] = 9;	/* copied */
	assert_int_equal(p->groups[0].hists[0].counts[0], 1);
	assert_string_equal(prof_group__label(&p->groups[0], "device"), "sda");
	assert_null(prof_group__label(&p->groups[0], "op"));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_process_totals),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_folded),
		cmocka_unit_test(test_svg_speedscope_html),
		cmocka_unit_test(test_pprof),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
