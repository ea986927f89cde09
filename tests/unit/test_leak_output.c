/* The leak sections of the renderers, on the fixed profile of a scanned run (leak_fixture.h):
 * text and JSON byte for byte against tests/golden/leaks.txt and tests/golden/leaks.json
 * (UPDATE_GOLDEN=1 rewrites them), the JSON's contract read back with jq, the CSV's leak
 * columns, and the pprof output with the leak sample types through Go's pprof. */
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
#include "leak_fixture.h"

#define GO_BIN "/usr/lib/go-1.19/bin/go"
#define GOLDEN_TXT "tests/golden/leaks.txt"
#define GOLDEN_JSON "tests/golden/leaks.json"

/* ---- text ------------------------------------------------------------------------------- */

static void test_text_golden(void **state)
{
	struct output_opts o = { .top = 10, .sort = OUTPUT_SORT_BYTES };
	struct profile *p = leak_fixture();
	size_t len;
	char *out = render(&output_text, p, &o, &len);

	check_golden(GOLDEN_TXT, out, len);
	free(out);
	profile__free(p);
}

static void test_text_top(void **state)
{
	struct output_opts o = { .top = 2, .sort = OUTPUT_SORT_BYTES };
	struct profile *p = leak_fixture();
	char *out = render(&output_text, p, &o, NULL);
	const char *lost = strstr(out, "Lost blocks by site");

	/* five sites lost something, one of them suppressed: four, the two largest shown */
	assert_non_null(lost);
	assert_non_null(strstr(lost, "Lost blocks by site (definitely, indirectly or possibly "
				     "lost): 4 sites\n"));
	assert_non_null(strstr(lost, "\n  500 B (500 bytes): 2 blocks definitely lost (200 "
				     "bytes), 3 blocks indirectly lost (300 bytes), pid 100 (demo)\n"
				     "    #1 lose_list (leak.c:30) [demo]\n"));
	assert_non_null(strstr(lost, "\n  256 B (256 bytes): 2 blocks possibly lost, pid 100 "
				     "(demo)\n"));
	assert_non_null(strstr(lost, "\n  ... 2 more sites not shown\n"));
	assert_null(strstr(lost, "zero_len"));
	assert_null(strstr(lost, "libfoo.so+0x1a2b"));
	free(out);
	profile__free(p);
}

/* Without a scanned process the section is left out, even with the leak types (a pprof of a
 * --leaks run, read back, has them but no scans). */
static void test_text_unscanned(void **state)
{
	struct profile *p = leak_fixture();
	char *out;

	p->processes[0].scan.done = false;
	p->processes[1].scan.done = false;
	out = render(&output_text, p, NULL, NULL);
	assert_null(strstr(out, "Leak summary"));
	assert_null(strstr(out, "Lost blocks"));
	free(out);
	profile__free(p);
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void jq_true(const char *path, const char *expr)
{
	char *cmd, *msg;
	int status;

	assert_true(asprintf(&cmd, "jq -e '%s' '%s' 2>&1", expr, path) > 0);
	msg = capture(cmd, &status);
	if (status)
		fail_msg("jq -e '%s' is not true of %s (%d):\n%s", expr, path, status, msg);
	free(msg);
	free(cmd);
}

static void test_json_golden(void **state)
{
	struct profile *p = leak_fixture();
	char *path = scratch("leaks.json");
	size_t len;
	char *out = render(&output_json, p, NULL, &len);

	check_golden(GOLDEN_JSON, out, len);
	write_file(path, out, len);
	if (!have("jq")) {
		print_message("jq not installed: the JSON is checked by the golden file only\n");
		goto out;
	}
	/* valid JSON, and the contract of docs/JSON.md read as a script reads it */
	jq_true(path, ".");
	/* per process: the classes leave the suppressed blocks out, summed apart */
	jq_true(path, ".processes[0].leaks == {\"at_exit\": true, \"t_ns\": 2400000000, "
		"\"stopped_ns\": 3500000, \"scanned_bytes\": 1234567, \"unreadable_bytes\": 0, "
		"\"read_calls\": 31, \"threads\": 2, \"threads_without_registers\": 0, "
		"\"definite\": {\"count\": 3, \"bytes\": 200}, "
		"\"indirect\": {\"count\": 3, \"bytes\": 300}, "
		"\"possible\": {\"count\": 2, \"bytes\": 256}, "
		"\"reachable\": {\"count\": 8, \"bytes\": 1024}, "
		"\"suppressed\": {\"count\": 0, \"bytes\": 0}, "
		"\"reachable_via_heuristic\": {\"length64\": {\"count\": 1, \"bytes\": 64}}}");
	jq_true(path, ".processes[1].leaks | (.at_exit | not) and "
		".threads_without_registers == 1 and .definite == {\"count\": 0, \"bytes\": 0} and "
		".suppressed == {\"count\": 4, \"bytes\": 4096} and "
		".reachable_via_heuristic == {\"stdstring\": {\"count\": 2, \"bytes\": 64}, "
		"\"newarray\": {\"count\": 1, \"bytes\": 40}}");
	/* in order: stats, then note, then leaks */
	jq_true(path, ".processes[0] | keys_unsorted | .[-1] == \"leaks\"");
	/* per site: every class, suppressed or not, and the mark; the leak types are not
	 * repeated as fields of their own */
	jq_true(path, "[.sites[] | select(.frames[1].function == \"lose_list\")][0].leaks == "
		"{\"definite\": {\"count\": 2, \"bytes\": 200}, "
		"\"indirect\": {\"count\": 3, \"bytes\": 300}, "
		"\"possible\": {\"count\": 0, \"bytes\": 0}, "
		"\"reachable\": {\"count\": 0, \"bytes\": 0}, \"suppressed\": false}");
	jq_true(path, "[.sites[] | select(.leaks.suppressed)] | length == 1 and "
		".[0].pid == 200 and .[0].frames[1].module == \"/opt/foo/lib/libfoo.so\" and "
		".[0].leaks.definite == {\"count\": 4, \"bytes\": 4096}");
	jq_true(path, "[.sites[] | has(\"leaks\")] | all");
	jq_true(path, "[.sites[] | has(\"definite_space\") or has(\"reachable_objects\")] | any "
		"| not");
	/* the sites' classes add up to the processes': unsuppressed ones to the classes, the
	 * suppressed ones to "suppressed" */
	jq_true(path, ". as $r | [$r.processes[] | .pid as $p | .leaks as $l | "
		"(\"definite\", \"indirect\", \"possible\", \"reachable\") as $c | "
		"[$r.sites[] | select(.pid == $p and (.leaks.suppressed | not)) | .leaks[$c]] | "
		"{count: (map(.count) | add // 0), bytes: (map(.bytes) | add // 0)} == $l[$c]] | "
		"all");
	jq_true(path, ". as $r | [$r.processes[] | .pid as $p | .leaks.suppressed as $s | "
		"[$r.sites[] | select(.pid == $p and .leaks.suppressed) | .leaks | .[] | "
		"objects] | {count: (map(.count) | add // 0), bytes: (map(.bytes) | add // 0)} "
		"== $s] | all");
	jq_true(path, "(.sites | map(.leaks.definite.count) | add) == 3 + 4 and "
		"(.sites | map(.leaks.reachable.bytes) | add) == 1024 + 192");
	/* the types themselves stay in sample_types, for pprof's sake */
	jq_true(path, "[.sample_types[].type] == [\"alloc_objects\", \"alloc_space\", "
		"\"inuse_objects\", \"inuse_space\", \"definite_objects\", \"definite_space\", "
		"\"indirect_objects\", \"indirect_space\", \"possible_objects\", "
		"\"possible_space\", \"reachable_objects\", \"reachable_space\"]");
out:
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* A profile without the leak types (a run without --leaks) has no "leaks" anywhere. */
static void test_json_no_leaks(void **state)
{
	struct profile *p = profile__new("mem");
	char *out;
	uint32_t f, l;

	assert_non_null(p);
	mem_types(p);
	f = fn(p, "lose", "lose", "x.c");
	l = LOC(p, PROF_NONE, 0x401000, 0, { f, 3 });
	sample(p, &l, 1, 1, 8, 1, 8, 7);
	process(p, 7, "x", NULL, (uint64_t[10]){ 0 }, (uint64_t[9]){ 0 });
	out = render(&output_json, p, NULL, NULL);
	assert_null(strstr(out, "\"leaks\""));
	free(out);
	profile__free(p);
}

/* ---- CSV -------------------------------------------------------------------------------- */

#define CSV_HEADER "pid,comm,alloc_objects,alloc_space,inuse_objects,inuse_space," \
	"definite_objects,definite_space,indirect_objects,indirect_space,possible_objects," \
	"possible_space,reachable_objects,reachable_space,temporary_count,outstanding_count," \
	"outstanding_bytes,min_age_ns,max_age_ns,suppressed,stack\r\n"

static void test_csv(void **state)
{
	struct profile *p = leak_fixture();
	char *path = scratch("leaks.csv"), *cmd, *msg;
	size_t len;
	char *out = render(&output_csv, p, NULL, &len);
	int status;

	/* the classes are columns as the other types; which sites were suppressed a column */
	assert_int_equal(strncmp(out, CSV_HEADER, strlen(CSV_HEADER)), 0);
	assert_non_null(strstr(out, "\r\n100,demo,10,1000,5,500,2,200,3,300,0,0,0,0,0,5,500,"
				    "1000000,2000000000,0,__libc_start_call_main;main;lose_list;"
				    "malloc\r\n"));
	assert_non_null(strstr(out, "\r\n200,worker,4,4096,4,4096,4,4096,0,0,0,0,0,0,0,4,4096,"
				    "1000000,2400000000,1,main;handle_request;libfoo.so+0x1a2b;"
				    "malloc\r\n"));
	assert_non_null(strstr(out, "\r\n200,worker,4,4096,0,0,0,0,0,0,0,0,0,0,0,0,0,,,0,"
				    "\r\n"));
	assert_int_equal(count(out, "\r\n"), 1 + 7);
	/* what a reader computes from it: the lost bytes the leak summary reports */
	write_file(path, out, len);
	if (!have("python3")) {
		print_message("python3 not installed: the CSV is not read back\n");
	} else {
		assert_true(asprintf(&cmd, "python3 -c 'import csv, sys\n"
				     "rows = list(csv.DictReader(open(sys.argv[1], newline=\"\")))\n"
				     "kept = [r for r in rows if r[\"suppressed\"] == \"0\"]\n"
				     "print(len(rows), sum(int(r[\"definite_space\"]) for r in kept),"
				     " sum(int(r[\"reachable_objects\"]) for r in kept),"
				     " sum(int(r[\"definite_objects\"]) for r in rows))' '%s' 2>&1",
				     path) > 0);
		msg = capture(cmd, &status);
		assert_int_equal(status, 0);
		/* 200 bytes definitely lost (4096 suppressed), 8 + 3 reachable blocks */
		assert_string_equal(msg, "7 200 11 7\n");
		free(msg);
		free(cmd);
	}
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Without the leak types, no suppressed column: the CSV of a plain run is unchanged. */
static void test_csv_no_leaks(void **state)
{
	struct profile *p = profile__new("mem");
	char *out;

	assert_non_null(p);
	mem_types(p);
	out = render(&output_csv, p, NULL, NULL);
	assert_string_equal(out, "pid,comm,alloc_objects,alloc_space,inuse_objects,inuse_space,"
			    "temporary_count,outstanding_count,outstanding_bytes,min_age_ns,"
			    "max_age_ns,stack\r\n");
	free(out);
	profile__free(p);
}

/* ---- pprof ------------------------------------------------------------------------------ */

/* The leak types and the suppressed mark survive a pprof written and read back. */
static void test_pprof_round_trip(void **state)
{
	struct profile *p = leak_fixture(), *q;
	char *path = scratch("leaks.pb.gz"), why[256] = "", *a, *b;
	int err = 0, to, tb;
	size_t alen, blen;
	uint32_t i;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	q = profile__load_pprof(path, &err, why, sizeof(why));
	if (!q)
		fail_msg("cannot read back %s: %s", path, why);
	assert_int_equal(q->ntypes, LV_N);
	assert_int_equal(q->nsamples, p->nsamples);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		to = profile__leak_type(q, c, false);
		tb = profile__leak_type(q, c, true);
		assert_int_equal(to, profile__leak_type(p, c, false));
		assert_int_equal(tb, profile__leak_type(p, c, true));
		assert_string_equal(q->types[tb].unit, "bytes");
		assert_string_equal(q->types[to].unit, "count");
	}
	for (i = 0; i < p->nsamples; i++) {
		assert_memory_equal(q->samples[i].values, p->samples[i].values,
				    sizeof(int64_t) * LV_N);
		assert_int_equal(q->samples[i].suppressed, p->samples[i].suppressed);
	}
	assert_true(q->samples[4].suppressed);
	/* and written again, the same bytes */
	a = render(&output_pprof, p, NULL, &alen);
	b = render(&output_pprof, q, NULL, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
	profile__free(q);
	unlink(path);
	free(path);
	profile__free(p);
}

static char *go_pprof(const char *args, const char *path)
{
	char *cmd, *out;
	int status;

	assert_true(asprintf(&cmd, "HOME='%s/tests' GOCACHE='%s/tests/gocache' " GO_BIN
			     " tool pprof -symbolize=none %s '%s' 2>&1", out_dir(), out_dir(),
			     args, path) > 0);
	out = capture(cmd, &status);
	if (status)
		fail_msg("%s failed (%d):\n%s", cmd, status, out);
	free(cmd);
	return out;
}

/* Go's pprof takes the leak types as any other: their totals, and the suppressed label to
 * leave those sites out. */
static void test_pprof_go_tool(void **state)
{
	struct profile *p = leak_fixture();
	char *path = scratch("leaks-go.pb.gz"), *out;

	if (access(GO_BIN, X_OK)) {
		print_message("skipped: %s not installed (apt-get install golang-1.19-go)\n",
			      GO_BIN);
		profile__free(p);
		free(path);
		skip();
	}
	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);

	out = go_pprof("-raw", path);
	if (!strstr(out, "definite_objects/count definite_space/bytes indirect_objects/count") ||
	    !strstr(out, "suppressed:[true]"))
		fail_msg("go tool pprof -raw lacks the leak types or the label:\n%s", out);
	free(out);

	/* every lost byte, the suppressed ones too: pprof knows no suppressions */
	out = go_pprof("-top -sample_index=definite_space", path);
	if (!strstr(out, "Showing nodes accounting for 4296B, 100% of 4296B total"))
		fail_msg("go tool pprof -top -sample_index=definite_space:\n%s", out);
	free(out);
	/* ... unless told to leave them out */
	out = go_pprof("-top -sample_index=definite_space -tagignore=suppressed=true", path);
	if (!strstr(out, "Showing nodes accounting for 200B, 4.66% of 4296B total"))
		fail_msg("go tool pprof -top -tagignore=suppressed=true:\n%s", out);
	free(out);
	out = go_pprof("-top -sample_index=reachable_objects", path);
	if (!strstr(out, "Showing nodes accounting for 11, 100% of 11 total"))
		fail_msg("go tool pprof -top -sample_index=reachable_objects:\n%s", out);
	free(out);
	unlink(path);
	free(path);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_text_top),
		cmocka_unit_test(test_text_unscanned),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_json_no_leaks),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_csv_no_leaks),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_pprof_go_tool),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
