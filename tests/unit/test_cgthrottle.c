/* core/cgthrottle.c on a made-up cgroup tree under a temporary root: the test process's own
 * cgroup (its /proc/self/cgroup) found under v1's cpu controller (mounted as cpu or
 * cpu,cpuacct) or v2, its cpu.stat's throttling read in nanoseconds (v1 throttled_time, v2
 * throttled_usec), and a cpu.stat without them (v2's root) not taken. */
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

#include "core/cgthrottle.h"

/* This process's cgroup path in the line of /proc/self/cgroup that v2 (v2: true) or v1's cpu
 * controller has; false: none */
static bool own_path(bool v2, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char ctl[256];

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(ctl, sizeof(ctl), ",%.*s,", (int)(c2 - c1 - 1), c1 + 1);
		if (v2 ? !strncmp(line, "0::", 3) : strncmp(line, "0::", 3) && strstr(ctl, ",cpu,")) {
			snprintf(path, len, "%s", c2 + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void put_stat(const char *root, const char *sub, const char *path, const char *text)
{
	char cmd[2048], file[1536];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s%s'", root, sub, path);
	assert_int_equal(system(cmd), 0);
	snprintf(file, sizeof(file), "%s/%s%s/cpu.stat", root, sub, path);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_root(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_v1(void **state)
{
	char root[] = "/tmp/cgthrottle.XXXXXX", path[512], want[1024];
	struct cg_throttle t;

	if (!own_path(false, path, sizeof(path)))
		skip();
	assert_non_null(mkdtemp(root));
	/* no cpu controller's directory: nothing */
	assert_int_equal(cg_throttle__read_pid(root, getpid(), &t), -ENOENT);
	put_stat(root, "cpu,cpuacct", path, "nr_periods 40\nnr_throttled 3\nthrottled_time "
		 "5000\nnr_bursts 0\nburst_time 0\n");
	assert_int_equal(cg_throttle__read_pid(root, getpid(), &t), 0);
	snprintf(want, sizeof(want), "%s/cpu,cpuacct%s", root, path);
	assert_string_equal(t.dir, want);
	assert_true(t.n == 3 && t.ns == 5000);
	/* read again: the counts now */
	put_stat(root, "cpu,cpuacct", path, "nr_throttled 4\nthrottled_time 9000\n");
	assert_int_equal(cg_throttle__read(&t), 0);
	assert_true(t.n == 4 && t.ns == 9000);
	rm_root(root);
}

static void test_v2(void **state)
{
	char root[] = "/tmp/cgthrottle.XXXXXX", path[512], want[1024];
	struct cg_throttle t;

	if (!own_path(true, path, sizeof(path)))
		skip();
	assert_non_null(mkdtemp(root));
	/* a cpu.stat without throttling (v2's root cgroup has none) */
	put_stat(root, "", path, "usage_usec 100\nuser_usec 50\nsystem_usec 50\n");
	assert_int_equal(cg_throttle__read_pid(root, getpid(), &t), -ENOENT);
	put_stat(root, "", path, "usage_usec 100\nnr_periods 9\nnr_throttled 7\n"
		 "throttled_usec 1234\n");
	assert_int_equal(cg_throttle__read_pid(root, getpid(), &t), 0);
	snprintf(want, sizeof(want), "%s%s", root, path);
	assert_string_equal(t.dir, want);
	assert_true(t.n == 7 && t.ns == 1234000);
	rm_root(root);
}

static void test_no_process(void **state)
{
	struct cg_throttle t;

	assert_int_equal(cg_throttle__read_pid("/tmp", 0x7ffffff0, &t), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_no_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
