/* util_shell_join: a launched command's words on one line, as a shell reads them back (the
 * reports' "Command:" and JSON's command), checked by bash itself: the words it reads back
 * from the line (their bytes) must be the words given. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

static void expect(char *const *argv, int argc, const char *want)
{
	char *s = util_shell_join(argc, argv);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

static void test_quoting(void **state)
{
	char *plain[] = { "sleep", "3" };
	char *paths[] = { "./a.out", "--x=1,2", "/tmp/f_g@h%+:" };
	char *spaces[] = { "sh", "-c", "dd if=/dev/zero of=f; sync", "" };
	char *quote[] = { "echo", "it's", "a\\b", "$HOME", "*" };
	char *ctl[] = { "python3", "-c", "import os\nprint('x')\t#", "\x01" };

	(void)state;
	expect(plain, 2, "sleep 3");
	expect(paths, 3, "./a.out --x=1,2 /tmp/f_g@h%+:");
	expect(spaces, 4, "sh -c 'dd if=/dev/zero of=f; sync' ''");
	expect(quote, 5, "echo 'it'\\''s' 'a\\b' '$HOME' '*'");
	expect(ctl, 4, "python3 -c $'import os\\nprint(\\'x\\')\\t#' $'\\x01'");
	expect(NULL, 0, "");
}

/* bash reads each line back into the same words */
static void test_bash_reads_back(void **state)
{
	char *words[] = { "a b", "it's", "x\ny\t\\z'q\"", "$(id)", "`id`", "", "~", "é ü", "\x7f!" };
	char *line = util_shell_join(9, words), script[] = "/tmp/ebprof-test-util-XXXXXX";
	char cmd[4200], got[4096], want[4096] = "";
	size_t n = 0;
	FILE *p;
	int fd;

	(void)state;
	assert_non_null(line);
	/* a script bash runs (popen's sh may be dash, without $'...'): each word's bytes in
	 * hex, one per line */
	fd = mkstemp(script);
	assert_true(fd >= 0);
	p = fdopen(fd, "w");
	assert_non_null(p);
	fprintf(p, "set -- %s\nfor w in \"$@\"; do printf %%s \"$w\" | od -An -tx1 | "
		"tr -d ' \\n'; echo; done\n", line);
	fclose(p);
	snprintf(cmd, sizeof(cmd), "bash %s", script);
	for (int i = 0; i < 9; i++) {
		for (const unsigned char *c = (const unsigned char *)words[i]; *c; c++)
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%02x", *c);
		n += (size_t)snprintf(want + n, sizeof(want) - n, "\n");
	}
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(got, 1, sizeof(got) - 1, p);
	got[n] = '\0';
	assert_int_equal(pclose(p), 0);
	unlink(script);
	assert_string_equal(got, want);
	assert_null(strchr(line, '\n'));
	free(line);
}

/* util_upper_bound_u64 against a linear count, on elements whose key is not the first field,
 * with repeats, below the first and past the last */
static void test_upper_bound(void **state)
{
	struct el {
		uint32_t pad;
		uint64_t key;
	} a[] = { { 0, 10 }, { 0, 20 }, { 0, 20 }, { 0, 30 }, { 0, 40 } };
	size_t n = sizeof(a) / sizeof(a[0]);

	(void)state;
	for (uint64_t k = 0; k <= 45; k++) {
		size_t want = 0;

		while (want < n && a[want].key <= k)
			want++;
		assert_int_equal(util_upper_bound_u64(a, n, sizeof(a[0]), offsetof(struct el, key),
						      k), want);
	}
	assert_int_equal(util_upper_bound_u64(a, 0, sizeof(a[0]), offsetof(struct el, key), 99),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_bash_reads_back),
		cmocka_unit_test(test_upper_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
