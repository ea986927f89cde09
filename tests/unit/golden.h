/* Helpers shared by the renderer tests: render to memory, scratch files under $OUT/tests,
 * byte-for-byte comparison with golden files (UPDATE_GOLDEN=1 rewrites them), running the
 * outside tools that check an output (run, capture, have), and looking into one (gunzip,
 * count). The other tests that need $OUT use its out_dir. Include after cmocka.h; every
 * function is static, each test binary gets its own copy. */
#ifndef EBPROF_TEST_GOLDEN_H
#define EBPROF_TEST_GOLDEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>
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

/* All of f to its end, NUL-terminated; its length in *len. */
static __attribute__((unused)) char *read_all(FILE *f, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static __attribute__((unused)) char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f)
		return NULL;
	buf = read_all(f, len);
	fclose(f);
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

/* Scratch files go under $OUT/tests, which the build creates; make sure anyway (from main). */
static __attribute__((unused)) void make_scratch_dir(void)
{
	char *dir;

	if (asprintf(&dir, "%s/tests", out_dir()) > 0) {
		mkdir(out_dir(), 0755);
		mkdir(dir, 0755);
		free(dir);
	}
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

/* ---- outside tools ---------------------------------------------------------------------- */

/* Run a shell command; its exit status, or -1 if it could not run. */
static __attribute__((unused)) int run(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Output of a command (what it writes to the pipe: redirect stderr in cmd to get it too), its
 * exit status (-1 if it did not exit) and, if len is not NULL, the output's length. */
static __attribute__((unused)) char *capture_len(const char *cmd, int *status, size_t *len)
{
	FILE *f = popen(cmd, "r");
	char *buf;
	size_t n;
	int st;

	assert_non_null(f);
	buf = read_all(f, &n);
	st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (len)
		*len = n;
	return buf;
}

static __attribute__((unused)) char *capture(const char *cmd, int *status)
{
	return capture_len(cmd, status, NULL);
}

/* Whether a tool is on PATH. */
static __attribute__((unused)) bool have(const char *tool)
{
	char *cmd;
	int st;

	assert_true(asprintf(&cmd, "command -v %s >/dev/null 2>&1", tool) > 0);
	st = system(cmd);
	free(cmd);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* ---- looking at an output --------------------------------------------------------------- */

/* A gzip stream (a .pb.gz) inflated; its length in *out_len. */
static __attribute__((unused)) uint8_t *gunzip(const void *in, size_t len, size_t *out_len)
{
	z_stream zs = { .next_in = (Bytef *)in, .avail_in = len };
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap);
	int r;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	do {
		if (zs.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		zs.next_out = out + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		r = inflate(&zs, Z_NO_FLUSH);
	} while (r == Z_OK);
	assert_int_equal(r, Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* Occurrences of needle in s. strchr first, not strstr: under ASan each strstr call measures
 * all of s again, which makes counting lines of a 100 MB output take many minutes. */
static __attribute__((unused)) size_t count(const char *s, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	while ((s = strchr(s, needle[0]))) {
		if (strncmp(s, needle, l) == 0) {
			n++;
			s += l;
		} else {
			s++;
		}
	}
	return n;
}

#endif
