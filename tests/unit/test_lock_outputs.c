/* Every renderer on a lock contention profile (lock_fixture.h): text, JSON, CSV and folded byte
 * for byte against tests/golden/lock.* (UPDATE_GOLDEN=1 rewrites them); SVG, speedscope and
 * HTML by their facts (the HTML page's per-lock table and histograms); pprof through our reader
 * (the per-lock groups are ours alone and stay behind, the samples and pprof's contention
 * sample types come back whole). And naming kernel locks by data symbol (symbolize/kdata.c)
 * from a kallsyms file with and without data symbols. */
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
#include "symbolize/symbolize.h"

#include "golden.h"
#include "profile_builder.h"
#include "lock_fixture.h"

/* Words of the mem report that would be wrong here. */
static void no_mem_wording(const char *out)
{
	static const char *const words[] = { "allocation", "Allocation", "alloc_", "inuse",
					     "Outstanding", "outstanding", "live bytes", "leak" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(out, words[i]))
			fail_msg("mem wording \"%s\" in a lock profile's output:\n%.2000s",
				 words[i], strstr(out, words[i]));
}

static char *golden_of(const struct output_ops *ops, const char *golden,
		       const struct output_opts *o)
{
	struct profile *p = lock_fixture();
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
	char *out = golden_of(&output_text, "tests/golden/lock.txt", &o), *groups, *stacks;

	/* the per-lock table leads, then the histograms, then the top stacks */
	groups = strstr(out, "\nBy lock, class, process and address: wait\n");
	stacks = strstr(out, "\nTop 4 stacks by delay\n");
	assert_non_null(groups);
	assert_non_null(stacks);
	assert_true(groups < strstr(out, "\nHistograms\n"));
	assert_true(strstr(out, "\nHistograms\n") < stacks);
	assert_non_null(strstr(out, "  LOCK                           CLASS             PROCESS     "
				    "ADDRESS            CONTENTIONS    TOTAL     MEAN      MAX "
				    "NO WAIT TIMEOUTS TIMEOUT WAIT\n"));
	/* a global by its symbol, the address beside it */
	assert_non_null(strstr(out, "  request_lock in server         futex_wait        server[400] "
				    "0x555555558040             900 180.0 ms 200.0 us   2.0 ms    "
				    "4000        0         0 ns\n"));
	/* the condition variable nobody signals: its timed-out waits apart, no contention */
	assert_non_null(strstr(out, "  futex 0x55555555a2c4 in [heap] futex_wait_bitset "
				    "server[400] 0x55555555a2c4               0     0 ns     0 ns     "
				    "0 ns       0       25       2.50 s\n"));
	assert_non_null(strstr(out, "  tasklist_lock rwlock:W - 0xffffffff83008040, wait:\n"));
	assert_non_null(strstr(out, "#0 mmap_lock of 400 (rwsem:W)\n"));
	free(out);
}

static void test_json(void **state)
{
	char *out = golden_of(&output_json, "tests/golden/lock.json", NULL), *path, *cmd;

	if (!have("jq")) {
		print_message("jq not installed: JSON checked by the golden file only\n");
		free(out);
		return;
	}
	path = scratch("lock.json");
	write_file(path, out, strlen(out));
	assert_true(asprintf(&cmd, "jq -e '.mode == \"lock\" and .default_sample_type == "
			     "\"delay\" and (.sample_types | map(.type)) == [\"contentions\", "
			     "\"delay\", \"timeouts\", \"timeout_delay\"] and (.groups | length) "
			     "== 4 and .groups[3].timeouts == 25 and "
			     ".groups[3].timeout_delay_ns == 2500000000 and "
			     ".groups[3].contentions == 0 and "
			     ".processes[0].timeouts == 25 and .groups[0].labels == "
			     "{\"lock\": \"request_lock in server\", \"class\": \"futex_wait\", "
			     "\"process\": \"server[400]\", \"address\": \"0x555555558040\"} and "
			     ".groups[0].contentions == 900 and "
			     ".groups[0].delay_ns == 180000000 and .groups[0].nowait == 4000 and "
			     "(.groups[0].histograms | map(.name)) == [\"wait\"] and "
			     "(.groups[0].histograms[0].buckets | map(.count) | add) == 900' "
			     "'%s' >/dev/null", path) > 0);
	assert_int_equal(run(cmd), 0);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
}

static void test_csv_folded(void **state)
{
	char *out = golden_of(&output_csv, "tests/golden/lock.csv", NULL);

	free(out);
	out = golden_of(&output_folded, "tests/golden/lock.folded", NULL);
	assert_non_null(strstr(out, "server (400);start_thread;worker;handle_request;"
				    "__lll_lock_wait;futex_wait_[i];request_lock in server (futex_wait) "
				    "180000000\n"));
	free(out);
}

static void test_svg_speedscope_html(void **state)
{
	char *out = golden_of(&output_svg, NULL, NULL);

	assert_non_null(strstr(out, "mmap_lock of 400 (rwsem:W)"));
	free(out);
	out = golden_of(&output_speedscope, NULL, NULL);
	assert_non_null(strstr(out, "\"unit\": \"nanoseconds\""));
	free(out);
	out = golden_of(&output_html, NULL, NULL);
	/* the per-lock table, a row per lock, and each lock's histogram */
	assert_non_null(strstr(out, "<h2 id=\"groups\">By lock, class, process and address: wait</h2>"));
	assert_non_null(strstr(out, "<td>request_lock in server</td><td>futex_wait</td>"
				    "<td>server[400]</td><td>0x555555558040</td>"
				    "<td class=\"num\" data-v=\"900\">900</td>"));
	/* the condition variable's too, empty: it has no contention */
	assert_int_equal(count(out, "<details class=\"hist\">"), 4);
	assert_non_null(strstr(out, "<summary>tasklist_lock rwlock:W - 0xffffffff83008040, wait"
				    "</summary>"));
	free(out);
}

/* pprof keeps the samples (folded the same after a round trip) and the contention sample
 * types, not the groups. */
static void test_pprof(void **state)
{
	struct profile *p = lock_fixture(), *back;
	char *path = scratch("lock.pb.gz"), *a, *b, why[256];
	int err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->mode, "lock");
	assert_int_equal(back->ngroups, 0);
	/* its text says the summary is not there, rather than leaving it out without a word */
	a = render(&output_text, back, &(struct output_opts){ .top = 10 }, NULL);
	assert_non_null(strstr(a, "\nBy lock, class, process and address: not in a saved profile\n"));
	free(a);
	a = render(&output_text, p, &(struct output_opts){ .top = 10 }, NULL);
	assert_null(strstr(a, "not in a saved profile"));
	free(a);
	assert_int_equal(back->ntypes, 4);
	assert_string_equal(back->types[0].type, "contentions");
	assert_string_equal(back->types[0].unit, "count");
	assert_string_equal(back->types[1].type, "delay");
	assert_string_equal(back->types[1].unit, "nanoseconds");
	assert_string_equal(back->types[back->default_type].type, "delay");
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

/* Kernel data symbols: a lock at a data symbol or inside one is named; heap, text, modules'
 * data and per-CPU offsets are not; a kernel listing only section markers names nothing. */
static void test_kdata(void **state)
{
	char *path = scratch("kallsyms-data"), *lines = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&lines, &len);
	struct kdata *k;
	const char *s;
	uint64_t off;

	assert_non_null(f);
	fputs("0000000000000000 D fixed_percpu_data\n"
	      "ffffffff81000000 T _stext\n"
	      "ffffffff81001000 T do_fork\n"
	      "ffffffff82400000 D __start_rodata\n", f);
	/* enough data objects to tell a KALLSYMS_ALL kernel */
	for (int i = 0; i < 100; i++)
		fprintf(f, "ffffffff8300%04x d obj%d\n", i * 64, i);
	fputs("ffffffff83100000 D tasklist_lock\n"
	      "ffffffff83100040 B rcu_state\n"
	      "ffffffff83200000 B _end\n"
	      "ffffffffc0001000 d mod_lock\t[mymod]\n", f);
	assert_int_equal(fclose(f), 0);
	write_file(path, lines, len);
	k = kdata__load(path);
	assert_non_null(k);
	assert_int_equal(kdata__count(k), 102);
	s = kdata__resolve(k, 0xffffffff83100000ull, &off);
	assert_string_equal(s, "tasklist_lock");
	assert_int_equal(off, 0);
	s = kdata__resolve(k, 0xffffffff83100048ull, &off);
	assert_string_equal(s, "rcu_state");
	assert_int_equal(off, 8);
	assert_null(kdata__resolve(k, 0xffff888100384cecull, &off));	/* the heap */
	assert_null(kdata__resolve(k, 0xffffffff81001010ull, &off));	/* text */
	assert_null(kdata__resolve(k, 0xffffffff83200000ull, &off));	/* past _end */
	assert_null(kdata__resolve(k, 0xffffffffc0001000ull, &off));	/* a module's */
	kdata__free(k);

	/* no CONFIG_KALLSYMS_ALL: only markers, nothing named */
	s = "ffffffff81000000 T _stext\nffffffff82400000 D __start_rodata\n"
	    "ffffffff83100000 D tasklist_lock\nffffffff83200000 B _end\n";
	write_file(path, s, strlen(s));
	k = kdata__load(path);
	assert_non_null(k);
	assert_int_equal(kdata__count(k), 0);
	assert_null(kdata__resolve(k, 0xffffffff83100000ull, &off));
	kdata__free(k);
	assert_null(kdata__load("/nonexistent/kallsyms"));
	kdata__free(NULL);
	unlink(path);
	free(path);
	free(lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_folded),
		cmocka_unit_test(test_svg_speedscope_html),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_kdata),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
