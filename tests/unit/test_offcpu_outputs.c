/* Every renderer on an off-CPU profile (offcpu_fixture.h): text, JSON, CSV and folded byte for
 * byte against tests/golden/offcpu.* (UPDATE_GOLDEN=1 rewrites them); SVG, speedscope and HTML
 * by their facts; pprof through our reader (the per-process run-queue groups are ours alone and
 * stay behind, the samples come back whole). */
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
#include "offcpu_fixture.h"

/* Words of the mem report that would be wrong here. */
static void no_mem_wording(const char *out)
{
	static const char *const words[] = { "allocation", "Allocation", "alloc_", "inuse",
					     "Outstanding", "outstanding", "live bytes", "leak" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(out, words[i]))
			fail_msg("mem wording \"%s\" in an off-CPU profile's output:\n%.2000s",
				 words[i], strstr(out, words[i]));
}

static char *golden_of(const struct output_ops *ops, const char *golden,
		       const struct output_opts *o)
{
	struct profile *p = offcpu_fixture();
	size_t len;
	char *out = render(ops, p, o, &len);

	if (golden)
		check_golden(golden, out, len);
	if (ops != &output_html)
		no_mem_wording(out);
	profile__free(p);
	return out;
}

static void test_text(void **state)
{
	struct output_opts o = { .top = 10 };
	char *out = golden_of(&output_text, "tests/golden/offcpu.txt", &o);
	char *groups = strstr(out, "\nBy process and pid: run-queue latency\n");
	char *stacks = strstr(out, "\nTop 3 stacks by offcpu\n");

	assert_non_null(groups);
	assert_non_null(stacks);
	assert_true(groups < stacks);
	assert_non_null(strstr(out, "  PROCESS PID WAITS"));
	assert_non_null(strstr(out, "  srv 400, run-queue latency:\n"));
	/* the waker's name on top, the separator under its leaf */
	assert_non_null(strstr(out, "#0 waker: srv (400)\n"));
	assert_non_null(strstr(out, "    #9 --\n    #10 __schedule"));
	free(out);
}

static void test_json(void **state)
{
	char *out = golden_of(&output_json, "tests/golden/offcpu.json", NULL), *path, *cmd;

	if (!have("jq")) {
		print_message("jq not installed: JSON checked by the golden file only\n");
		free(out);
		return;
	}
	path = scratch("offcpu.json");
	write_file(path, out, strlen(out));
	assert_true(asprintf(&cmd, "jq -e '.mode == \"offcpu\" and .default_sample_type == "
			     "\"offcpu\" and (.groups | length) == 1 and .groups[0].labels == "
			     "{\"process\": \"srv\", \"pid\": \"400\"} and .groups[0].runq_waits "
			     "== 1621 and (.groups[0].histograms[0].buckets | map(.count) | add) "
			     "== 1621 and .groups[0].histograms[0].name == \"run-queue latency\" "
			     "and ([.sites[].switches] | add) == 1621' '%s' >/dev/null",
			     path) > 0);
	assert_int_equal(run(cmd), 0);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
}

static void test_csv_folded(void **state)
{
	char *out = golden_of(&output_csv, "tests/golden/offcpu.csv", NULL);

	free(out);
	out = golden_of(&output_folded, "tests/golden/offcpu.folded", NULL);
	/* offwaketime's layout: blocked stack, "--", the waker's upside down, its name on top */
	assert_non_null(strstr(out, "srv (400);start_thread;worker;wait_job;rawsys3_[i];"
				    "entry_SYSCALL_64_after_hwframe_[k];vfs_read_[k];"
				    "anon_pipe_read_[k];schedule_[k];__schedule_[k];--;"
				    "try_to_wake_up_[k];anon_pipe_write_[k];vfs_write_[k];"
				    "entry_SYSCALL_64_after_hwframe_[k];rawsys3;post_job_[i];"
				    "producer;start_thread;waker: srv (400) 731000000\n"));
	free(out);
}

static void test_svg_speedscope_html(void **state)
{
	char *out = golden_of(&output_svg, NULL, NULL);

	assert_non_null(strstr(out, "waker: interrupt"));
	free(out);
	out = golden_of(&output_speedscope, NULL, NULL);
	assert_non_null(strstr(out, "\"unit\": \"nanoseconds\""));
	free(out);
	out = golden_of(&output_html, NULL, NULL);
	assert_non_null(strstr(out, "run-queue latency"));
	assert_non_null(strstr(out, "wait_job"));
	/* a row is named by the kernel function that waited, past the scheduler's own frames
	 * (every row read "__schedule"), and past a waker's frames */
	assert_null(strstr(out, "<td class=\"site\"><span class=\"fn\">__schedule</span>"));
	assert_null(strstr(out, "<td class=\"site\"><span class=\"fn\">schedule</span>"));
	assert_null(strstr(out, "<td class=\"site\"><span class=\"fn\">waker: "));
	assert_non_null(strstr(out, "<td class=\"site\"><span class=\"fn\">do_nanosleep</span>"));
	free(out);
}

static uint32_t count_of(const char *s, const char *end, const char *what)
{
	uint32_t n = 0;

	for (s = strstr(s, what); s && (!end || s < end); s = strstr(s + 1, what))
		n++;
	return n;
}

/* offcpu -a: a group per process, 32,035 of them in 2 minutes: the text report keeps to --top
 * (rows and histograms), the HTML to its SITES_MAX of 5,000 as its sites tables, saying so
 * (it had a row and a histogram for every one), the JSON has them all. */
static void test_many_groups(void **state)
{
	struct profile *p = offcpu_fixture();
	const uint64_t lat[] = { 3000 }, count[] = { 2 };
	char pid[16], *out, *table, *end;

	for (uint32_t i = 0; i < 5010; i++) {
		snprintf(pid, sizeof(pid), "%u", 1000 + i);
		off_group(p, "churn", pid, lat, count, 1);
	}
	out = render(&output_html, p, NULL, NULL);
	table = strstr(out, "id=\"groups-table\"");
	assert_non_null(table);
	end = strstr(table, "</tbody></table>");
	assert_non_null(end);
	assert_int_equal(count_of(table, end, "<tr>"), 1 + 5000);	/* the header's */
	assert_int_equal(count_of(end, NULL, "<details class=\"hist\">"), 5000);
	assert_non_null(strstr(out, "<p class=\"hint\">5011 rows; the first 5000 are shown here, "
				    "with their histograms (every one is in the .json and .txt "
				    "--top 0 reports).</p>"));
	free(out);
	out = render(&output_text, p, &(struct output_opts){ .top = 10 }, NULL);
	assert_non_null(strstr(out, "By process and pid: run-queue latency (the top 10 of "
				    "5011)\n"));
	assert_non_null(strstr(out, "\nHistograms (the top 10 of 5011)\n"));
	assert_int_equal(count_of(out, NULL, ", run-queue latency:\n"), 10);
	free(out);
	out = render(&output_text, p, &(struct output_opts){ .top = 0 }, NULL);
	assert_int_equal(count_of(out, NULL, ", run-queue latency:\n"), 5011);
	free(out);
	out = render(&output_json, p, NULL, NULL);
	assert_int_equal(count_of(out, NULL, "\"runq_waits\""), 5011);
	free(out);
	profile__free(p);
}

/* offcpu -a over 2 minutes had 20,697 processes, each a row of the HTML's Processes table:
 * the page keeps to SITES_MAX of them as its other tables, the ones with the most off-CPU time
 * first, and says so; the total row is all of them. */
static void test_many_processes(void **state)
{
	struct profile *p = offcpu_fixture();
	char *out, *table, *end, *first;

	/* pid 1000 + i waited (i + 1) us: with srv's, the eleven least, 1000 to 1010, are left out */
	for (uint32_t i = 0; i < 5010; i++) {
		off_sample(p, (const uint32_t[]){ 0 }, 1, 1000 * (int64_t)(i + 1), 1, 1000 + i);
		assert_non_null(profile__add_process(p, 1000 + i, "churn", NULL));
	}
	out = render(&output_html, p, NULL, NULL);
	assert_non_null(strstr(out, "<p class=\"hint\">5011 rows; the first 5000 are shown here, "
				    "the ones with the most offcpu (the total is all of them; "
				    "every one is in the .json and .txt --top 0 reports).</p>"));
	table = strstr(out, "id=\"procs\"");
	assert_non_null(table);
	end = strstr(table, "</tbody>");
	assert_non_null(end);
	assert_int_equal(count_of(table, end, "<tr>"), 1 + 5000);	/* the header's */
	/* the most first: srv (1.7 s), then pid 6009 (5.01 ms) */
	first = strstr(table, "<tbody>\n<tr><td class=\"num\" data-v=\"400\">400</td>");
	assert_non_null(first);
	assert_non_null(strstr(first, "</tr>\n<tr><td class=\"num\" data-v=\"6009\">"));
	assert_int_equal(count_of(table, end, "data-v=\"1010\">1010</td>"), 0);
	assert_int_equal(count_of(table, end, "data-v=\"1011\">1011</td>"), 1);
	assert_non_null(strstr(end, "<td>5011 processes</td>"));
	free(out);
	profile__free(p);
}

static void test_pprof(void **state)
{
	struct profile *p = offcpu_fixture(), *back;
	char *path = scratch("offcpu.pb.gz"), *a, *b, why[256];
	int err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->mode, "offcpu");
	assert_int_equal(back->ngroups, 0);
	/* its text says the summary is not there, rather than leaving it out without a word */
	a = render(&output_text, back, &(struct output_opts){ .top = 10 }, NULL);
	assert_non_null(strstr(a, "\nRun-queue latency: not in a saved profile\n"));
	free(a);
	a = render(&output_text, p, &(struct output_opts){ .top = 10 }, NULL);
	assert_null(strstr(a, "not in a saved profile"));
	free(a);
	assert_string_equal(back->types[back->default_type].type, "offcpu");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_folded),
		cmocka_unit_test(test_svg_speedscope_html),
		cmocka_unit_test(test_many_groups),
		cmocka_unit_test(test_many_processes),
		cmocka_unit_test(test_pprof),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
