/* The speedscope renderer against a fixed profile: byte for byte against
 * tests/golden/profile.speedscope.json (UPDATE_GOLDEN=1 rewrites it), its facts read back with jq
 * (frames shared and deduplicated, stacks root first, one profile per process and type, zero
 * and negative weights left out), and the file checked against the JSON schema that the
 * speedscope package ships, with ajv (tests/tools; skipped with a reason when not installed).
 * Also an empty profile, the choice of renderer by file name, and a 100,000-sample profile.
 *
 * Rendering, golden-file and tool helpers come from golden.h, the profile-building helpers from
 * profile_builder.h; the profile here is its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

#define GOLDEN_SPEEDSCOPE "tests/golden/profile.speedscope.json"
#define TOOLS_DIR "tests/tools"
#define VALIDATOR TOOLS_DIR "/validate-speedscope.js"

/* ---- the fixed profile ------------------------------------------------------------------ */

/*
 * mem types as the collector makes them. Processes are listed 200 before 100, and pid 300 is
 * not listed at all. pid 100 has inline frames (read_config in main), the same function and line
 * at two addresses (one frame), another line of it (another frame), and a sample that weighs
 * nothing in any type (its own function must not become a frame). pid 200 has a kernel frame,
 * an unsymbolized library frame, a frame outside any mapping, a name JSON must escape, and a
 * lost stack. pid 300 has a negative value (a diff), which speedscope cannot take.
 */
static struct profile *fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc, m_worker, m_foo, m_kern;
	uint32_t f_malloc, f_parse, f_read, f_main, f_start, f_never, f_odd, f_kfn, f_wmain;
	uint32_t l_malloc, l_malloc_b, l_parse, l_parse_b, l_parse22, l_read_main, l_main52;
	uint32_t l_start, l_never, l_kern, l_odd, l_foo, l_noaddr, l_wmain;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --iterations 3", "6.1.0-18-amd64",
					   "ebprof mem -o out.speedscope.json -- ./demo",
					   1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  NULL);
	m_libc = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);
	m_kern = profile__mapping(p, 200, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_parse = fn(p, "parse_line", NULL, "demo.c");
	f_read = fn(p, "read_config", "read_config", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_never = fn(p, "never_weighed", NULL, "demo.c");
	f_odd = fn(p, "odd \"name\"\\ with;\nbreaks\t\x01", NULL, "worker.c");
	f_kfn = fn(p, "__kmalloc", "__kmalloc", NULL);
	f_wmain = fn(p, "main", "main", "worker.c");

	l_malloc = LOC(p, m_libc, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_malloc_b = LOC(p, m_libc, 0x7f00000a1300, 0xa1300, { f_malloc, 0 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_parse_b = LOC(p, m_demo, 0x555555555254, 0x1254, { f_parse, 21 });
	l_parse22 = LOC(p, m_demo, 0x555555555270, 0x1270, { f_parse, 22 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main52 = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_never = LOC(p, m_demo, 0x555555555500, 0x1500, { f_never, 7 });
	l_kern = LOC(p, m_kern, 0xffffffff81234567, 0x234567, { f_kfn, 0 });
	l_odd = LOC(p, m_worker, 0x560000001200, 0x1200, { f_odd, 3 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });

	/* malloc <- parse_line:21 <- read_config:35 (inlined into main:50) <- libc start */
	sample(p, STACK(l_malloc, l_parse, l_read_main, l_start), 1200, 153600, 10, 1280, 100);
	/* the same functions and lines at other addresses: the same frames */
	sample(p, STACK(l_malloc_b, l_parse_b, l_read_main, l_start), 10, 1000, 0, 0, 100);
	/* another line of parse_line: another frame */
	sample(p, STACK(l_malloc, l_parse22, l_main52, l_start), 5, 500, 5, 500, 100);
	/* weighs nothing anywhere */
	sample(p, STACK(l_malloc, l_never, l_main52, l_start), 0, 0, 0, 0, 100);
	/* kernel, a hostile name, a library without symbols, no mapping */
	sample(p, STACK(l_kern, l_odd, l_foo, l_noaddr, l_wmain), 3, 12288, 3, 12288, 200);
	/* the stack table was full */
	sample(p, NULL, 0, 4, 4096, 0, 0, 200);
	/* not a listed process; a diff's negative value */
	sample(p, STACK(l_malloc, l_wmain), 1, 64, 0, -64, 300);

	assert_non_null(profile__add_process(p, 200, "worker", "./worker"));
	assert_non_null(profile__add_process(p, 100, "demo", "./demo --iterations 3"));
	/* listed but without samples: no profiles */
	assert_non_null(profile__add_process(p, 400, "idle", "./idle"));
	return p;
}

/* ---- checks ----------------------------------------------------------------------------- */

static bool have_validator(void)
{
	return access(TOOLS_DIR "/node_modules/ajv", F_OK) == 0 &&
	       access(TOOLS_DIR "/node_modules/speedscope", F_OK) == 0 && have("node");
}

/* Validate a file with speedscope's schema, or skip the calling test saying why we cannot. */
static void validate_or_skip(const char *path)
{
	char *cmd, *out;
	int status;

	if (!have_validator()) {
		print_message("skipped: " TOOLS_DIR "/node_modules or node missing: run "
			      "scripts/install-deps.sh to install the npm validators (npm ci "
			      "--prefix " TOOLS_DIR ")\n");
		skip();
	}
	assert_true(asprintf(&cmd, "node " VALIDATOR " '%s' 2>&1", path) > 0);
	out = capture(cmd, &status);
	if (status)
		fail_msg("speedscope schema validation of %s failed (%d):\n%s", path, status, out);
	free(out);
	free(cmd);
}

/* Every jq expression must hold for the file; the failing one is named. */
static void jq_facts(const char *path, const char *const *facts, size_t n)
{
	char *cmd, *out;
	int status;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_true(asprintf(&cmd, "jq -e '%s' '%s' 2>&1", facts[i], path) > 0);
		out = capture(cmd, &status);
		if (status)
			fail_msg("jq -e '%s' does not hold (%d): %s", facts[i], status, out);
		free(out);
		free(cmd);
	}
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_golden(void **state)
{
	struct profile *p = fixture();
	size_t len;
	char *out = render(&output_speedscope, p, NULL, &len);

	check_golden(GOLDEN_SPEEDSCOPE, out, len);
	free(out);
	profile__free(p);
}

static void test_structure(void **state)
{
	static const char *const facts[] = {
		".\"$schema\" == \"https://www.speedscope.app/file-format-schema.json\"",
		".exporter == \"ebprof 0.1.0\" and .name == \"ebprof mem: ./demo --iterations 3\"",
		/* listed processes with samples in list order, then the unlisted; 4 types each */
		"[.profiles[].name] == [\"worker (200): alloc_objects\","
		" \"worker (200): alloc_space\","
		" \"worker (200): inuse_objects\", \"worker (200): inuse_space\","
		" \"demo (100): alloc_objects\", \"demo (100): alloc_space\","
		" \"demo (100): inuse_objects\", \"demo (100): inuse_space\","
		" \"[unknown] (300): alloc_objects\", \"[unknown] (300): alloc_space\","
		" \"[unknown] (300): inuse_objects\", \"[unknown] (300): inuse_space\"]",
		/* the default type of the first process */
		".activeProfileIndex == 1",
		"[.profiles[].unit] == ([\"none\", \"bytes\", \"none\", \"bytes\"] | . + . + .)",
		"all(.profiles[]; .type == \"sampled\" and .startValue == 0 and"
		" .endValue == (.weights | add // 0) and"
		" (.samples | length) == (.weights | length))",
		/* root first, inline frames outermost first, largest sample first */
		".shared.frames as $f | [.profiles[5].samples[0][] | $f[.] | [.name, .line]] =="
		" [[\"__libc_start_call_main\", null], [\"main\", 50], [\"read_config\", 35],"
		" [\"parse_line\", 21], [\"malloc\", null]]",
		".profiles[5].weights == [153600, 1000, 500] and .profiles[5].endValue == 155100",
		/* one frame per function, file and line, whatever the address */
		"[.shared.frames[] | select(.name == \"parse_line\") | .line] | sort == [21, 22]",
		"[.shared.frames[] | select(.name == \"malloc\")] =="
		" [{\"name\": \"malloc\", \"file\": \"/usr/lib/x86_64-linux-gnu/libc.so.6\"}]",
		"[.shared.frames[] | select(.name == \"main\") | .file] | sort =="
		" [\"demo.c\", \"demo.c\", \"worker.c\"]",
		".shared.frames | map(.name) | (unique | length) == 10 and length == 13",
		/* zero weights are left out, and so are the frames only they use */
		"all(.profiles[].weights[]; . > 0)",
		"[.shared.frames[] | select(.name == \"never_weighed\")] == []",
		".profiles[7].weights == [1280, 500] and .profiles[6].weights == [10, 5]",
		/* a negative weight too */
		".profiles[11] | .samples == [] and .weights == [] and .endValue == 0",
		/* unsymbolized, kernel, lost and escaped frames */
		".shared.frames as $f | [.profiles[1].samples[][] | $f[.]] == ["
		" {\"name\": \"main\", \"file\": \"worker.c\", \"line\": 10},"
		" {\"name\": \"0x7ffe12345678\"},"
		" {\"name\": \"libfoo.so+0x1a2b\", \"file\": \"/opt/foo/lib/libfoo.so\"},"
		" {\"name\": \"odd \\\"name\\\"\\\\ with;\\nbreaks\\t\\u0001\","
		" \"file\": \"worker.c\", \"line\": 3},"
		" {\"name\": \"__kmalloc\", \"file\": \"[kernel.kallsyms]\"},"
		" {\"name\": \"[no stack]\"}]",
	};
	struct profile *p = fixture();
	char *path = scratch("profile.speedscope.json");
	size_t len;
	char *out = render(&output_speedscope, p, NULL, &len);

	write_file(path, out, len);
	free(out);
	profile__free(p);
	if (!have("jq")) {
		print_message("skipped: jq not installed (apt-get install jq)\n");
		unlink(path);
		free(path);
		skip();
	}
	jq_facts(path, facts, sizeof(facts) / sizeof(facts[0]));
	unlink(path);
	free(path);
}

static void test_schema(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("schema.speedscope.json");
	size_t len;
	char *out = render(&output_speedscope, p, NULL, &len);

	write_file(path, out, len);
	free(out);
	profile__free(p);
	validate_or_skip(path);
	unlink(path);
	free(path);
}

/* The validator must fail on what speedscope would reject, or its pass means nothing. */
static void test_schema_rejects(void **state)
{
	static const char *const bad[] = {
		/* no $schema */
		"{\"shared\": {\"frames\": []}, \"profiles\": []}",
		/* an unknown unit */
		"{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\","
		" \"shared\": {\"frames\": [{\"name\": \"a\"}]},"
		" \"profiles\": [{\"type\": \"sampled\","
		" \"name\": \"x\", \"unit\": \"count\", \"startValue\": 0, \"endValue\": 1,"
		" \"samples\": [[0]], \"weights\": [1]}]}",
		/* a frame index out of range */
		"{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\","
		" \"shared\": {\"frames\": [{\"name\": \"a\"}]},"
		" \"profiles\": [{\"type\": \"sampled\","
		" \"name\": \"x\", \"unit\": \"bytes\", \"startValue\": 0, \"endValue\": 1,"
		" \"samples\": [[1]], \"weights\": [1]}]}",
	};
	char *path = scratch("bad.speedscope.json"), *cmd, *out;
	int status;
	size_t i;

	if (!have_validator()) {
		print_message("skipped: " TOOLS_DIR "/node_modules or node missing: run "
			      "scripts/install-deps.sh to install the npm validators\n");
		free(path);
		skip();
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i], strlen(bad[i]));
		assert_true(asprintf(&cmd, "node " VALIDATOR " '%s' 2>&1", path) > 0);
		out = capture(cmd, &status);
		if (status != 1)
			fail_msg("the validator took bad file %zu (status %d): %s", i, status, out);
		free(out);
		free(cmd);
	}
	unlink(path);
	free(path);
}

/* Any profile renders: nothing in it gives no profiles (and no index into them). */
static void test_empty_profile(void **state)
{
	static const char *const facts[] = {
		".profiles == [] and .shared.frames == [] and (has(\"activeProfileIndex\") | not)",
		".name == \"ebprof cpu\"",
	};
	struct profile *p = profile__new("cpu");
	char *path = scratch("empty.speedscope.json");
	size_t len;
	char *out;

	assert_non_null(p);
	out = render(&output_speedscope, p, NULL, &len);
	write_file(path, out, len);
	free(out);
	profile__free(p);
	if (have("jq"))
		jq_facts(path, facts, sizeof(facts) / sizeof(facts[0]));
	validate_or_skip(path);
	unlink(path);
	free(path);
}

/* A cpu-like profile: nanoseconds are a unit speedscope knows. */
static void test_units(void **state)
{
	struct profile *p = profile__new("cpu");
	int64_t v[2] = { 3, 1500 };
	char *out;
	uint32_t l;

	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "cpu"), 0);
	l = LOC(p, PROF_NONE, 0x401000, 0, { fn(p, "spin", NULL, "spin.c"), 12 });
	assert_non_null(profile__add_sample(p, &l, 1, v, 9));
	out = render(&output_speedscope, p, NULL, NULL);
	assert_non_null(strstr(out, "\"name\": \"[unknown] (9): samples\",\n      \"unit\": "
				    "\"none\""));
	assert_non_null(strstr(out, "\"name\": \"[unknown] (9): cpu\",\n      \"unit\": "
				    "\"nanoseconds\""));
	assert_non_null(strstr(out, "\"activeProfileIndex\": 1,"));
	assert_non_null(strstr(out, "{\"name\": \"spin\", \"file\": \"spin.c\", \"line\": 12}"));
	free(out);
	profile__free(p);
}

static void test_for_path(void **state)
{
	assert_ptr_equal(output__for_path("mem.speedscope.json"), &output_speedscope);
	assert_ptr_equal(output__for_path("/tmp/x/MEM.SPEEDSCOPE.JSON"), &output_speedscope);
	/* only the whole suffix: these are JSON reports */
	assert_ptr_equal(output__for_path("speedscope.json"), &output_json);
	assert_ptr_equal(output__for_path("mem.speedscope-json"), NULL);
	assert_ptr_equal(output__for_path("report.json"), &output_json);
	assert_string_equal(output_speedscope.name, "speedscope");
	assert_string_equal(output_speedscope.ext, ".speedscope.json");
	/* the exporter names this build's version */
	assert_string_equal("ebprof " EBPROF_VERSION, "ebprof 0.1.0");
}

/* ---- a big profile ---------------------------------------------------------------------- */

#define BIG_SAMPLES 100000
#define BIG_FUNCS 600

/* 100,000 stacks 6 to 40 deep over 600 functions in 3 processes: time, size, and the schema. */
static void test_big_profile(void **state)
{
	struct profile *p = profile__new("mem");
	uint32_t map, locs[BIG_FUNCS], stack[48], i, j;
	char name[96], *path = scratch("big.speedscope.json"), *out;
	double t0, t1;
	size_t len;

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	map = profile__mapping(p, 1, 0x7f0000000000ULL, 0x7f0001000000ULL, 0, "/usr/lib/libbig.so",
			       NULL);
	for (i = 0; i < BIG_FUNCS; i++) {
		uint64_t addr = 0x7f0000000000ULL + i * 64;

		snprintf(name, sizeof(name), "ns%u::Component%u::operation_%u(int)", i % 7, i % 23,
			 i);
		if (i % 10 == 3)
			locs[i] = LOC(p, map, addr, i * 64, { fn(p, "inlined_helper", NULL, "h.c"),
							      (int64_t)i },
				      { fn(p, name, NULL, "big.c"), 10 });
		else
			locs[i] = LOC(p, map, addr, i * 64, { fn(p, name, NULL, "big.c"), 10 });
	}
	for (i = 0; i < BIG_SAMPLES; i++) {
		uint32_t depth = 6 + rnd(35), f = rnd(3);
		int64_t v[2];

		for (j = 0; j < depth; j++) {
			stack[depth - 1 - j] = locs[f];
			f = (f * 31 + 7 + rnd(5) * 101) % BIG_FUNCS;
		}
		v[0] = 1 + rnd(10);
		v[1] = v[0] * (16 + rnd(4096));
		assert_non_null(profile__add_sample(p, stack, depth, v, 1 + i % 3));
	}
	t0 = now();
	out = render(&output_speedscope, p, NULL, &len);
	t1 = now();
	print_message("%u samples: speedscope %zu bytes (%.1f MB) in %.2f s\n", BIG_SAMPLES, len,
		      len / 1e6, t1 - t0);
	write_file(path, out, len);
	free(out);
	profile__free(p);
	validate_or_skip(path);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_schema_rejects),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_for_path),
		cmocka_unit_test(test_big_profile),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
