/* The options every recording mode shares (src/cli/options.c), parsed as a mode would: -d
 * takes the same durations everywhere and refuses what is not one, or what rounds to no time
 * at all, as a usage error (2) rather than running without a limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/options.h"
#include "core/unwind.h"

static const struct mode_cli test_cli = {
	.name = "test",
	.usage = "usage: ebprof test\n",
};

/* Parse "ebprof test -d ARG -- /bin/true"; the exit status, 0 when parsed. */
static int parse_d(const char *arg, struct session_opts *so)
{
	char *argv[] = { "test", "-d", (char *)arg, "--", "/bin/true", NULL };
	struct log_ctx lc = { .prog = "ebprof" };

	memset(so, 0, sizeof(*so));
	return cli_parse(5, argv, &lc, &test_cli, so, NULL);
}

static void test_duration_units(void **state)
{
	struct session_opts so;

	assert_int_equal(parse_d("500ms", &so), 0);
	assert_true(so.duration == 0.5);
	assert_int_equal(parse_d("2m", &so), 0);
	assert_true(so.duration == 120);
	assert_int_equal(parse_d("1h", &so), 0);
	assert_true(so.duration == 3600);
	assert_int_equal(parse_d("30s", &so), 0);
	assert_true(so.duration == 30);
	assert_int_equal(parse_d("1.5", &so), 0);
	assert_true(so.duration == 1.5);
}

static void test_duration_rejected(void **state)
{
	static const char *const bad[] = {
		"nan", "inf", "1e-300", "1e3", "0", "0s", "0.0000000001", "0.1ns", "-1", "5d", "",
		"200000000h",
	};
	struct session_opts so;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_d(bad[i], &so) != 2)
			fail_msg("-d '%s' was not a usage error (duration %g)", bad[i], so.duration);
}

/* Parse "ebprof test -p ARG"; the exit status, 0 when parsed. */
static int parse_p(const char *arg, struct session_opts *so)
{
	char *argv[] = { "test", "-p", NULL, NULL };
	char buf[64];
	struct log_ctx lc = { .prog = "ebprof" };

	snprintf(buf, sizeof(buf), "%s", arg);	/* (the list is cut in place) */
	argv[2] = buf;
	memset(so, 0, sizeof(*so));
	return cli_parse(3, argv, &lc, &test_cli, so, NULL);
}

/* -p takes PIDs separated by commas; an empty item is a mistake to say, not one to skip (before,
 * "1,,2", ",1" and "1," were taken as "1,2" and "1" without a word) */
static void test_pid_lists(void **state)
{
	static const char *const bad[] = { "1,,2", ",1", "1,", ",", "", "0", "1,x", "2147483648" };
	struct session_opts so;

	(void)state;
	assert_int_equal(parse_p("1", &so), 0);
	assert_int_equal(so.npids, 1);
	assert_int_equal(so.pids[0], 1);
	assert_int_equal(parse_p("12,34,56", &so), 0);
	assert_int_equal(so.npids, 3);
	assert_int_equal(so.pids[2], 56);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_p(bad[i], &so) != 2)
			fail_msg("-p '%s' was not a usage error (%d PIDs)", bad[i], so.npids);
}

/* The bounded counts every mode's table sizes take (--max-stacks, --max-live). */
static void test_count_bounds(void **state)
{
	struct log_ctx lc = { .prog = "ebprof" };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "16", 16, 64, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "0x40", 16, 64, &v),
			 0);
	assert_int_equal(v, 64);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "15", 16, 64, &v), 2);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "65", 16, 64, &v), 2);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "-1", 0, 64, &v), 2);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "4k", 0, 1 << 20,
					 &v), 2);
	assert_int_equal(cli_parse_count(&lc, "cpu", "--max-stacks", "stacks", "", 0, 64, &v), 2);
}

/* --unwind: auto (the default), dwarf or fp, the same in every mode; anything else is 2 */
static void test_unwind(void **state)
{
	const char *ok[] = { "auto", "dwarf", "fp" };
	const int how[] = { UNWIND_AUTO, UNWIND_DWARF, UNWIND_FP };
	struct log_ctx lc = { .prog = "ebprof" };
	struct session_opts so;

	(void)state;
	for (int i = 0; i < 3; i++) {
		char *argv[] = { "test", "--unwind", (char *)ok[i], "--", "/bin/true", NULL };

		memset(&so, 0, sizeof(so));
		so.unwind = -1;
		assert_int_equal(cli_parse(5, argv, &lc, &test_cli, &so, NULL), 0);
		assert_int_equal(so.unwind, how[i]);
	}
	{
		char *argv[] = { "test", "--", "/bin/true", NULL };

		memset(&so, 0, sizeof(so));
		assert_int_equal(cli_parse(3, argv, &lc, &test_cli, &so, NULL), 0);
		assert_int_equal(so.unwind, UNWIND_AUTO);
	}
	{
		char *argv[] = { "test", "--unwind", "frames", "--", "/bin/true", NULL };

		memset(&so, 0, sizeof(so));
		assert_int_equal(cli_parse(5, argv, &lc, &test_cli, &so, NULL), 2);
	}
}

/* --unwind-procs N (1 to UNWIND_MAX_PROCS) and --unwind-queue N (1 to UNWIND_ASKED_QUEUE), 0 when
 * not given; out of range is 2 */
static void test_unwind_limits(void **state)
{
	struct log_ctx lc = { .prog = "ebprof" };
	struct session_opts so;

	(void)state;
	{
		char *argv[] = { "test", "--unwind-procs", "3", "--unwind-queue", "1024", "--",
				 "/bin/true", NULL };

		memset(&so, 0, sizeof(so));
		assert_int_equal(cli_parse(7, argv, &lc, &test_cli, &so, NULL), 0);
		assert_int_equal(so.unwind_procs, 3);
		assert_int_equal(so.unwind_queue, 1024);
	}
	{
		char *argv[] = { "test", "--", "/bin/true", NULL };

		memset(&so, 0, sizeof(so));
		assert_int_equal(cli_parse(3, argv, &lc, &test_cli, &so, NULL), 0);
		assert_int_equal(so.unwind_procs, 0);
		assert_int_equal(so.unwind_queue, 0);
	}
	{
		char *bad[][2] = { { "--unwind-procs", "0" }, { "--unwind-procs", "1048577" },
				   { "--unwind-queue", "0" }, { "--unwind-queue", "1025" } };

		for (int i = 0; i < 4; i++) {
			char *argv[] = { "test", bad[i][0], bad[i][1], "--", "/bin/true", NULL };

			memset(&so, 0, sizeof(so));
			assert_int_equal(cli_parse(5, argv, &lc, &test_cli, &so, NULL), 2);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_rejected),
		cmocka_unit_test(test_count_bounds),
		cmocka_unit_test(test_unwind),
		cmocka_unit_test(test_unwind_limits),
		cmocka_unit_test(test_pid_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
