/* Helpers shared by the renderer tests: render to memory, scratch files under $OUT/tests, and
 * byte-for-byte comparison with golden files (UPDATE_GOLDEN=1 rewrites them). Include after
 * cmocka.h; every function is static, each test binary gets its own copy. */
#ifndef EBPROF_TEST_GOLDEN_H
#define EBPROF_TEST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/output.h"

static __attribute__((unused)) char *render(const struct output_ops *ops,
					    const struct profile *p, const struct output_opts *o,
					    size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(ops->write(p, o, f), 0);
	assert_int_equal(fclose(f), 0);
	if (len)
		*len = n;
	return buf;
}

static __attribute__((unused)) char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static __attribute__((unused)) void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static __attribute__((unused)) const char *out_dir(void)
{
	const char *out = getenv("OUT");

	return out && *out ? out : "build";
}

/* A scratch path under $OUT/tests. */
static __attribute__((unused)) char *scratch(const char *name)
{
	char *path;

	assert_true(asprintf(&path, "%s/tests/%s", out_dir(), name) > 0);
	return path;
}

static __attribute__((unused)) void check_golden(const char *golden, const char *actual,
						  size_t len)
{
	const char *update = getenv("UPDATE_GOLDEN");
	size_t glen = 0, line = 1, i;
	char *expect, *dump;

	if (update && strcmp(update, "1") == 0) {
		write_file(golden, actual, len);
		print_message("updated %s: review it, it is the spec\n", golden);
		return;
	}
	expect = read_file(golden, &glen);
	if (!expect)
		fail_msg("cannot read %s (run from the repository root; UPDATE_GOLDEN=1 "
			 "creates it)", golden);
	if (glen == len && memcmp(expect, actual, len) == 0) {
		free(expect);
		return;
	}
	for (i = 0; i < len && i < glen && expect[i] == actual[i]; i++)
		line += actual[i] == '\n';
	dump = scratch(strrchr(golden, '/') + 1);
	write_file(dump, actual, len);
	free(expect);
	fail_msg("output differs from %s at line %zu; actual output in %s (diff them; if the "
		 "change is intended, rerun with UPDATE_GOLDEN=1 and review)", golden, line, dump);
}

#endif
