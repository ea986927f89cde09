/* The CSV renderer against a fixed profile: byte for byte against tests/golden/profile.csv
 * (UPDATE_GOLDEN=1 rewrites it); read back by a strict RFC 4180 reader of our own and by
 * Python's csv module, which must agree field for field, with names that need quoting (commas,
 * double quotes, CR and LF); imported by sqlite3 as a real consumer; and an empty profile.
 *
 * Rendering, golden-file and tool helpers come from golden.h, the profile-building helpers from
 * profile_builder.h; the profile here is its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

#define GOLDEN_CSV "tests/golden/profile.csv"
#define COMM_200 "we,ird \"x\"\nname"
#define ODD_NAME "odd;name, \"q\"\r\nx"

/* ---- the fixed profile ------------------------------------------------------------------ */

/*
 * mem types as the collector makes them. pid 100 (demo) has inline frames and outstanding
 * memory at one site; pid 200 has a comm and a function name that must be quoted (comma, double
 * quotes, CR, LF; the name also has the stack's separator), an unsymbolized library frame, a
 * frame outside any mapping and a lost stack; pid 300 is not a known process and has a kernel
 * frame, and a site that weighs nothing. 40 of the operator new site's allocations are temporary.
 */
static struct profile *fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc, m_cxx, m_worker, m_foo, m_kern;
	uint32_t f_malloc, f_new, f_push, f_parse, f_read, f_main, f_start, f_odd, f_kfn, f_wmain;
	uint32_t l_malloc, l_new, l_push_parse, l_parse, l_read_main, l_main52, l_start;
	uint32_t l_odd, l_foo, l_noaddr, l_kern, l_wmain;
	struct prof_sample *s;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo", "6.1.0-18-amd64", "ebprof mem -o x.csv",
					   1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  NULL);
	m_libc = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);
	m_kern = profile__mapping(p, 300, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_new = fn(p, "operator new(unsigned long)", "_Znwm", NULL);
	f_push = fn(p, "std::vector<int, std::allocator<int> >::push_back(int const&)",
		    "_ZNSt6vectorIiSaIiEE9push_backERKi", "/usr/include/c++/12/bits/stl_vector.h");
	f_parse = fn(p, "parse_line", NULL, "demo.c");
	f_read = fn(p, "read_config", "read_config", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_odd = fn(p, ODD_NAME, NULL, "worker.c");
	f_kfn = fn(p, "__kmalloc", "__kmalloc", NULL);
	f_wmain = fn(p, "main", "main", "worker.c");

	l_malloc = LOC(p, m_libc, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_push_parse = LOC(p, m_demo, 0x555555555300, 0x1300, { f_push, 1287 }, { f_parse, 22 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main52 = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_odd = LOC(p, m_worker, 0x560000001200, 0x1200, { f_odd, 3 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);
	l_kern = LOC(p, m_kern, 0xffffffff81234567, 0x234567, { f_kfn, 0 });
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });

	/* a site that weighs nothing still has its row, as it has its JSON site */
	sample(p, STACK(l_malloc, l_wmain), 0, 0, 0, 0, 300);
	s = sample(p, STACK(l_malloc, l_parse, l_read_main, l_start), 1200, 153600, 10, 1280, 100);
	s->out = (struct prof_outstanding){ 10, 1280, 150000000, 2100000000, 12000000000ULL };
	s = sample(p, STACK(l_new, l_push_parse, l_main52, l_start), 50, 3276800, 0, 0, 100);
	s->temporary = 40;
	s = sample(p, STACK(l_malloc, l_odd, l_foo, l_noaddr), 300, 20480, 300, 20480, 200);
	s->out = (struct prof_outstanding){ 300, 20480, 1000000, 2400000000ULL, 45000000000ULL };
	sample(p, NULL, 0, 4, 4096, 0, 0, 200);
	sample(p, STACK(l_kern, l_wmain), 3, 12288, 0, 0, 300);

	assert_non_null(profile__add_process(p, 100, "demo", "./demo"));
	assert_non_null(profile__add_process(p, 200, COMM_200, "./worker"));
	return p;
}

/* ---- a strict RFC 4180 reader ----------------------------------------------------------- */

struct table {
	char ***rows;		/* rows[r][c], NUL-terminated copies */
	size_t *ncols;
	size_t nrows;
};

static void push_field(struct table *t, size_t r, const char *s, size_t n)
{
	char *f = malloc(n + 1);

	assert_non_null(f);
	memcpy(f, s, n);
	f[n] = '\0';
	t->rows[r] = realloc(t->rows[r], sizeof(char *) * (t->ncols[r] + 1));
	assert_non_null(t->rows[r]);
	t->rows[r][t->ncols[r]++] = f;
}

/*
 * Parse all of buf; fail the test on anything RFC 4180 does not allow: a record not ended by
 * CRLF, a double quote inside an unquoted field, anything but a comma or CRLF after a closing
 * quote, an unterminated quoted field.
 */
static void parse_csv(const char *buf, size_t len, struct table *t)
{
	const char *s = buf, *end = buf + len;
	char *field = malloc(len + 1);
	size_t r;

	assert_non_null(field);
	memset(t, 0, sizeof(*t));
	while (s < end) {
		r = t->nrows++;
		t->rows = realloc(t->rows, sizeof(*t->rows) * t->nrows);
		t->ncols = realloc(t->ncols, sizeof(*t->ncols) * t->nrows);
		assert_non_null(t->rows);
		assert_non_null(t->ncols);
		t->rows[r] = NULL;
		t->ncols[r] = 0;
		for (;;) {
			size_t n = 0;

			if (s < end && *s == '"') {
				for (s++;; s++) {
					if (s >= end)
						fail_msg("row %zu: unterminated quoted field",
							 r + 1);
					if (*s == '"') {
						if (s + 1 < end && s[1] == '"') {
							field[n++] = '"';
							s++;
							continue;
						}
						s++;
						break;
					}
					field[n++] = *s;
				}
			} else {
				for (; s < end && *s != ',' && *s != '\r' && *s != '\n'; s++) {
					if (*s == '"')
						fail_msg("row %zu: '\"' in an unquoted field",
							 r + 1);
					field[n++] = *s;
				}
			}
			push_field(t, r, field, n);
			if (s < end && *s == ',') {
				s++;
				continue;
			}
			if (s + 1 < end && s[0] == '\r' && s[1] == '\n') {
				s += 2;
				break;
			}
			fail_msg("row %zu, field %zu: not followed by ',' or CRLF (at byte %zu)",
				 r + 1, t->ncols[r], (size_t)(s - buf));
		}
	}
	free(field);
}

static void free_table(struct table *t)
{
	size_t r, c;

	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols[r]; c++)
			free(t->rows[r][c]);
		free(t->rows[r]);
	}
	free(t->rows);
	free(t->ncols);
}

/* Fields joined by US (0x1f), each record ended by RS (0x1e): how both readers print a table. */
static char *flatten(const struct table *t, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, r, c;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols[r]; c++)
			fprintf(f, "%s%s", c ? "\x1f" : "", t->rows[r][c]);
		fputc('\x1e', f);
	}
	assert_int_equal(fclose(f), 0);
	*len = n;
	return buf;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_golden(void **state)
{
	struct profile *p = fixture();
	size_t len;
	char *out = render(&output_csv, p, NULL, &len);

	check_golden(GOLDEN_CSV, out, len);
	free(out);
	profile__free(p);
}

static void test_fields(void **state)
{
	static const char *const header[] = {
		"pid", "comm", "alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
		"temporary_count", "outstanding_count", "outstanding_bytes", "min_age_ns", "max_age_ns", "stack",
	};
	/* the order of the JSON sites: by alloc_space, largest first */
	static const char *const rows[][12] = {
		{ "100", "demo", "50", "3276800", "0", "0", "40", "0", "0", "", "",
		  "__libc_start_call_main;main;parse_line;std::vector<int, std::allocator<int> >"
		  "::push_back(int const&)_[i];operator new(unsigned long)" },
		{ "100", "demo", "1200", "153600", "10", "1280", "0", "10", "1280", "150000000",
		  "2100000000", "__libc_start_call_main;main;read_config_[i];parse_line;malloc" },
		{ "200", COMM_200, "300", "20480", "300", "20480", "0", "300", "20480", "1000000",
		  "2400000000", "0x7ffe12345678;libfoo.so+0x1a2b;odd:name, \"q\"\r\nx;malloc" },
		{ "300", "", "3", "12288", "0", "0", "0", "0", "0", "", "", "main;__kmalloc_[k]" },
		{ "200", COMM_200, "4", "4096", "0", "0", "0", "0", "0", "", "", "" },
		{ "300", "", "0", "0", "0", "0", "0", "0", "0", "", "", "main;malloc" },
	};
	struct profile *p = fixture();
	struct table t;
	size_t len, r, c;
	char *out = render(&output_csv, p, NULL, &len);

	parse_csv(out, len, &t);
	assert_int_equal(t.nrows, 1 + sizeof(rows) / sizeof(rows[0]));
	for (c = 0; c < 12; c++)
		assert_string_equal(t.rows[0][c], header[c]);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		assert_int_equal(t.ncols[r + 1], 12);
		for (c = 0; c < 12; c++) {
			if (strcmp(t.rows[r + 1][c], rows[r][c]))
				fail_msg("row %zu, column %s: \"%s\", expected \"%s\"", r + 1,
					 header[c], t.rows[r + 1][c], rows[r][c]);
		}
	}
	/* quoted only when needed: plain rows stay greppable */
	assert_non_null(strstr(out, "\r\n100,demo,1200,153600,10,1280,0,10,1280,150000000,2100000000,"
				    "__libc_start_call_main;main;read_config_[i];parse_line;malloc"
				    "\r\n"));
	free_table(&t);
	free(out);
	profile__free(p);
}

/* Python's csv module, strict, must read exactly what our reader reads. */
static void test_python_csv(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("profile.csv"), *cmd, *py, *mine;
	size_t len, plen, mlen;
	char *out = render(&output_csv, p, NULL, &len);
	struct table t;
	int status;

	if (!have("python3")) {
		print_message("skipped: python3 not installed\n");
		free(out);
		free(path);
		profile__free(p);
		skip();
	}
	write_file(path, out, len);
	assert_true(asprintf(&cmd, "python3 -c 'import csv, sys\n"
			     "with open(sys.argv[1], newline=\"\") as f:\n"
			     "    for row in csv.reader(f, strict=True):\n"
			     "        sys.stdout.write(\"\\x1f\".join(row) + \"\\x1e\")\n' '%s'",
			     path) > 0);
	py = capture_len(cmd, &status, &plen);
	assert_int_equal(status, 0);
	parse_csv(out, len, &t);
	mine = flatten(&t, &mlen);
	if (plen != mlen || memcmp(py, mine, mlen))
		fail_msg("python's csv module reads %s differently:\n%s\nours:\n%s", path, py,
			 mine);
	free_table(&t);
	free(mine);
	free(py);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* sqlite3 imports it as a table named by the header. */
static void test_sqlite_import(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("sqlite.csv"), *cmd, *res;
	size_t len;
	char *out = render(&output_csv, p, NULL, &len);
	int status;

	if (!have("sqlite3")) {
		print_message("skipped: sqlite3 not installed (apt-get install sqlite3)\n");
		free(out);
		free(path);
		profile__free(p);
		skip();
	}
	write_file(path, out, len);
	assert_true(asprintf(&cmd, "sqlite3 :memory: -cmd '.import --csv %s sites' "
			     "'select count(*), sum(alloc_space), sum(outstanding_bytes), "
			     "sum(temporary_count), count(distinct pid), length(max(comm)), "
			     "sum(stack like \"%%_[i]%%\") from sites' 2>&1", path) > 0);
	res = capture(cmd, &status);
	if (status || strcmp(res, "6|3467264|21760|40|3|15|2\n"))
		fail_msg("sqlite3 import (%d): %s", status, res);
	free(res);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Any profile renders: nothing in it gives the header alone; the columns of allocations only
 * for allocations. */
static void test_empty_profile(void **state)
{
	struct profile *p = profile__new("mem");
	char *out;

	assert_non_null(p);
	out = render(&output_csv, p, NULL, NULL);
	assert_string_equal(out, "pid,comm,temporary_count,outstanding_count,outstanding_bytes,"
				 "min_age_ns,max_age_ns,stack\r\n");
	free(out);
	profile__free(p);
	p = profile__new("cpu");
	assert_non_null(p);
	out = render(&output_csv, p, NULL, NULL);
	assert_string_equal(out, "pid,comm,stack\r\n");
	free(out);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	out = render(&output_csv, p, NULL, NULL);
	assert_string_equal(out, "pid,comm,samples,cpu,stack\r\n");
	free(out);
	profile__free(p);
}

static void test_for_path(void **state)
{
	assert_ptr_equal(output__for_path("sites.csv"), &output_csv);
	assert_ptr_equal(output__for_path("/tmp/x/SITES.CSV"), &output_csv);
	assert_null(output__for_path("sites.csv.gz"));
	assert_string_equal(output_csv.name, "csv");
	assert_string_equal(output_csv.ext, ".csv");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_python_csv),
		cmocka_unit_test(test_sqlite_import),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_for_path),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
