/* The text report's tables padded in columns, not bytes (output/render.c render__width): a
 * process or a disk named in UTF-8 ("prög ünï", 8 columns in 11 bytes) shifted every column
 * after it by the difference. Each table's lines are checked to take the same number of
 * columns (every one ends in a right-aligned number); render__width itself under the user's
 * locale (C.UTF-8: a CJK character is 2 columns) and for bytes that are no text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"
#include "cpu_fixture.h"
#include "io_fixture.h"
#include "leak_fixture.h"

#define NAME "prög ünï"	/* 8 columns, 11 bytes */

/* Columns of a line of UTF-8 without wide characters: its code points. */
static size_t points(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

/* The lines after the line `heading` up to the next empty one (a table: its header and rows)
 * all take the same columns; at least `min` of them, one naming `name`. */
static void assert_aligned(const char *out, const char *heading, const char *name, int min)
{
	const char *at = strstr(out, heading), *line;
	size_t width = 0;
	int n = 0;
	bool named = false;

	if (!at)
		fail_msg("no table \"%s\" in:\n%s", heading, out);
	line = strchr(at, '\n') + 1;
	while (*line && *line != '\n') {
		const char *end = strchr(line, '\n');
		size_t w = points(line, end - line);

		if (n && w != width)
			fail_msg("table \"%s\": line %d is %zu columns wide, the header %zu:\n%.*s",
				 heading, n, w, width, (int)(end - at), at);
		width = w;
		named |= memmem(line, end - line, name, strlen(name)) != NULL;
		n++;
		line = end + 1;
	}
	if (n < min || !named)
		fail_msg("table \"%s\": %d lines, %s:\n%s", heading, n,
			 named ? "named" : "no " NAME, at);
}

static void test_width(void **state)
{
	(void)state;
	assert_int_equal(render__width(""), 0);
	assert_int_equal(render__width("cc1 --x"), 7);
	assert_int_equal(render__width(NAME), 8);
	/* the C.UTF-8 locale of main(): wide characters take two columns */
	assert_int_equal(render__width("日本"), 4);
	/* not UTF-8: a column per byte that starts no continuation */
	assert_int_equal(render__width("a\xff\xfe"), 3);
	assert_int_equal(render__pad(NAME, 16), 16 + 3);
	assert_int_equal(render__pad("abc", 16), 16);
	assert_int_equal(render__pad(NAME, 4), 0);
}

/* cpu's "Processes by" and "Commands by" (text_stacks.c) */
static void test_cpu_processes(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = cpu_fixture();
	char *out;

	(void)state;
	assert_non_null(profile__add_process(p, 100, NAME, NULL));
	/* a second process of the name: the table by command too */
	assert_non_null(profile__add_process(p, 300, NAME, NULL));
	cpu_sample(p, p->samples[0].locs, p->samples[0].nlocs, 5, 300);
	out = render(&output_text, p, &o, NULL);
	assert_aligned(out, "Processes by cpu", NAME, 3);
	assert_aligned(out, "Commands by cpu", NAME, 3);
	free(out);
	profile__free(p);
}

/* mem's process table (text.c) */
static void test_mem_processes(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = leak_fixture();
	char *out;

	(void)state;
	assert_non_null(profile__add_process(p, 100, NAME, NULL));
	out = render(&output_text, p, &o, NULL);
	assert_aligned(out, "Processes\n", NAME, 3);
	free(out);
	profile__free(p);
}

/* io's table of groups (text_groups.c): a disk named in UTF-8 */
static void test_groups(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = io_fixture();
	char *out;

	(void)state;
	io_group(p, NAME, "read", (const uint64_t[]){ 40000 }, (const uint64_t[]){ 10 }, 1, 5000,
		 4096, 0);
	out = render(&output_text, p, &o, NULL);
	assert_aligned(out, "By device and op", NAME, 4);
	free(out);
	profile__free(p);
}

/* ebprof profile's table of every mode's numbers (set.c) */
static void test_set_processes(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *set = profile__new("profile"), *cpu = cpu_fixture();
	char *out;

	(void)state;
	assert_non_null(set);
	assert_non_null(profile__add_process(cpu, 100, NAME, NULL));
	assert_int_equal(profile__add_part(set, cpu), 0);
	assert_int_equal(profile__add_part(set, io_fixture()), 0);
	out = render(&output_text, set, &o, NULL);
	assert_aligned(out, "Processes (every mode's numbers)", NAME, 3);
	free(out);
	profile__free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_cpu_processes),
		cmocka_unit_test(test_mem_processes),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_set_processes),
	};

	/* the user's locale, as a terminal's: the widths are read under it */
	setenv("LC_ALL", "C.UTF-8", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
