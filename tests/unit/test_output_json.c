/* The streaming JSON writer: string escaping (control characters, invalid UTF-8), layout in
 * pretty, flat and compact form, and detection of misuse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "output/json_writer.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	jsonw_escape(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

#define ASSERT_ESCAPED(in, out)                                                             \
	do {                                                                                \
		char *_e = escaped(in);                                                     \
		assert_string_equal(_e, out);                                               \
		free(_e);                                                                   \
	} while (0)

static void test_escape(void **state)
{
	ASSERT_ESCAPED("", "\"\"");
	ASSERT_ESCAPED("plain text", "\"plain text\"");
	ASSERT_ESCAPED("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	ASSERT_ESCAPED("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	ASSERT_ESCAPED("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 passes through: 2, 3 and 4 byte sequences */
	ASSERT_ESCAPED("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac "
		       "\xf0\x9f\x98\x80\"");
	/* comm cut inside a character */
	ASSERT_ESCAPED("ab\xc3", "\"ab\\ufffd\"");
	ASSERT_ESCAPED("\xe2\x82", "\"\\ufffd\\ufffd\"");
	ASSERT_ESCAPED("\xff", "\"\\ufffd\"");
	/* overlong, surrogate and beyond U+10FFFF are not UTF-8 */
	ASSERT_ESCAPED("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	ASSERT_ESCAPED("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	ASSERT_ESCAPED("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	ASSERT_ESCAPED("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ASSERT_ESCAPED("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
	/* a lone continuation byte, then good text */
	ASSERT_ESCAPED("\x80ok", "\"\\ufffdok\"");
}

static char *doc(bool pretty, void (*build)(struct json_writer *w), int *err)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json_writer *w;

	assert_non_null(f);
	w = jsonw__new(f, pretty);
	assert_non_null(w);
	build(w);
	*err = jsonw__error(w);
	jsonw__free(w);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void build_sample(struct json_writer *w)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "s", "x");
	jsonw_null_field(w, "n");
	jsonw_string_field(w, "ns", NULL);
	jsonw_uint_field(w, "u", UINT64_MAX);
	jsonw_int_field(w, "i", INT64_MIN);
	jsonw_bool_field(w, "b", false);
	jsonw_hex_field(w, "h", 0x1a2b);
	jsonw_name(w, "empty_a");
	jsonw_start_array(w);
	jsonw_end_array(w);
	jsonw_name(w, "empty_o");
	jsonw_start_object(w);
	jsonw_end_object(w);
	jsonw_name(w, "arr");
	jsonw_start_array(w);
	jsonw_uint(w, 1);
	jsonw_start_object_flat(w);
	jsonw_uint_field(w, "a", 1);
	jsonw_name(w, "in");
	/* nested in a flat container: flat as well */
	jsonw_start_array(w);
	jsonw_bool(w, true);
	jsonw_null(w);
	jsonw_end_array(w);
	jsonw_end_object(w);
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void test_layout(void **state)
{
	int err;
	char *out = doc(true, build_sample, &err);

	assert_int_equal(err, 0);
	assert_string_equal(out,
			    "{\n"
			    "  \"s\": \"x\",\n"
			    "  \"n\": null,\n"
			    "  \"ns\": null,\n"
			    "  \"u\": 18446744073709551615,\n"
			    "  \"i\": -9223372036854775808,\n"
			    "  \"b\": false,\n"
			    "  \"h\": \"0x1a2b\",\n"
			    "  \"empty_a\": [],\n"
			    "  \"empty_o\": {},\n"
			    "  \"arr\": [\n"
			    "    1,\n"
			    "    {\"a\": 1, \"in\": [true, null]}\n"
			    "  ]\n"
			    "}");
	free(out);

	out = doc(false, build_sample, &err);
	assert_int_equal(err, 0);
	assert_string_equal(out, "{\"s\":\"x\",\"n\":null,\"ns\":null,\"u\":18446744073709551615,"
			    "\"i\":-9223372036854775808,\"b\":false,\"h\":\"0x1a2b\","
			    "\"empty_a\":[],\"empty_o\":{},"
			    "\"arr\":[1,{\"a\":1,\"in\":[true,null]}]}");
	free(out);
}

static void build_value_without_name(struct json_writer *w)
{
	jsonw_start_object(w);
	jsonw_uint(w, 1);
	jsonw_end_object(w);
}

static void build_name_in_array(struct json_writer *w)
{
	jsonw_start_array(w);
	jsonw_name(w, "x");
	jsonw_end_array(w);
}

static void build_mismatched_end(struct json_writer *w)
{
	jsonw_start_array(w);
	jsonw_end_object(w);
}

static void build_two_names(struct json_writer *w)
{
	jsonw_start_object(w);
	jsonw_name(w, "a");
	jsonw_name(w, "b");
}

static void build_two_top_values(struct json_writer *w)
{
	jsonw_uint(w, 1);
	jsonw_uint(w, 2);
}

static void build_too_deep(struct json_writer *w)
{
	int i;

	for (i = 0; i < 100; i++)
		jsonw_start_array(w);
}

static void test_misuse(void **state)
{
	void (*const cases[])(struct json_writer *) = {
		build_value_without_name, build_name_in_array, build_mismatched_end,
		build_two_names, build_two_top_values, build_too_deep,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = doc(true, cases[i], &err);

		assert_int_equal(err, -EINVAL);
		free(out);
	}
}

/* Every byte value in a string still gives JSON that jq reads. */
static void test_all_bytes_parse(void **state)
{
	const char *outdir = getenv("OUT");
	char in[256], *path, *cmd;
	FILE *f;
	int i, st;

	if (system("command -v jq >/dev/null 2>&1")) {
		print_message("skipped: jq not installed\n");
		skip();
	}
	for (i = 1; i < 256; i++)
		in[i - 1] = (char)i;
	in[255] = '\0';
	assert_true(asprintf(&path, "%s/tests/json_bytes.json", outdir ? outdir : "build") > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	jsonw_escape(f, in);
	fputc('\n', f);
	assert_int_equal(fclose(f), 0);
	/* 127 ASCII characters come back as themselves, the 128 high bytes as U+FFFD */
	assert_true(asprintf(&cmd, "jq -e 'length == 255 and .[0:3] == \"\\u0001\\u0002\\u0003\" "
			     "and (.[127:] | test(\"^\\ufffd+$\"))' '%s' >/dev/null", path) > 0);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	remove(path);
	free(cmd);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_all_bytes_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
