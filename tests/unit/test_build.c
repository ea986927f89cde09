/* The Makefile keeps the flags the code needs apart from the user's: `make CFLAGS=-O0`
 * (or CPPFLAGS=, LDLIBS=) must still compile with -std=gnu11 -D_GNU_SOURCE and the include
 * paths, and link the libraries. Checked on make's dry run (-n), so nothing is built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* make's commands for target (a path under a scratch OUT) with the user's variables set. */
static char *dry_run(const char *vars, const char *target)
{
	char cmd[512], *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "make -s -n -B V=1 OUT=/tmp/ebprof-test-build %s "
		 "/tmp/ebprof-test-build/%s 2>&1", vars, target);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, n);
		len += n;
		buf[len] = 0;
	}
	pclose(p);
	assert_non_null(buf);
	return buf;
}

static void test_user_cflags_keep_required(void **state)
{
	char *out = dry_run("CFLAGS=-O0 CPPFLAGS=-DUSER_FLAG", "obj/util/duration.o");

	if (!strstr(out, "-O0") || !strstr(out, "-DUSER_FLAG"))
		fail_msg("the user's flags are not used:\n%s", out);
	if (!strstr(out, "-std=gnu11") || !strstr(out, "-D_GNU_SOURCE") || !strstr(out, "-Isrc"))
		fail_msg("make CFLAGS=... dropped the flags the code needs:\n%s", out);
	free(out);
}

static void test_user_ldlibs_keep_required(void **state)
{
	char *out = dry_run("CFLAGS=-O0 LDLIBS=-ldl", "tests/test_build");

	if (!strstr(out, "-ldl") || !strstr(out, "-lbpf") || !strstr(out, "-std=gnu11"))
		fail_msg("make LDLIBS=... dropped the libraries the code needs:\n%s", out);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_cflags_keep_required),
		cmocka_unit_test(test_user_ldlibs_keep_required),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
