/* Folded stacks and flame graph renderers against a fixed profile: the folded file byte for byte
 * against tests/golden/profile.folded (UPDATE_GOLDEN=1 rewrites it) and through flamegraph.pl;
 * the SVG through xmllint (or a structural check without it), its names, title, script and
 * layout; the choice of value type; and a 100,000-sample synthetic profile for size and time.
 *
 * Rendering and golden-file helpers come from golden.h, the profile-building helpers from
 * profile_builder.h; the profile here is its own, made to exercise what the flame renderers do
 * with stacks. */
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

#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

#define GOLDEN_FOLDED "tests/golden/profile.folded"
#define FLAMEGRAPH_PL "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"

/* ---- the fixed profile ------------------------------------------------------------------ */

/*
 * mem types as the collector makes them. pid 100 (demo) allocates through malloc and operator
 * new, with inline frames, and has two samples that fold to one line (same names, other
 * addresses and lines); pid 200 (worker) goes through an unsymbolized library and a frame
 * outside any mapping, lost one stack, and a name with ';' and a newline; pid 300 is not a
 * known process and has a kernel frame. One sample has 0 bytes, one a tiny value (narrower
 * than a flame graph draws).
 */
static struct profile *fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc, m_cxx, m_worker, m_libc2, m_foo, m_kern;
	uint32_t f_malloc, f_calloc, f_new, f_push, f_parse, f_read, f_main, f_start, f_wmain;
	uint32_t f_handle, f_odd, f_kfn, f_tmpl;
	uint32_t l_malloc, l_new, l_push_parse, l_parse, l_parse2, l_read_main, l_main, l_start;
	uint32_t l_malloc2, l_calloc2, l_foo, l_handle, l_wmain, l_noaddr, l_odd, l_kern, l_tmpl;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --iterations 3", "6.1.0-18-amd64",
					   "ebprof mem -o out.svg -- ./demo --iterations 3",
					   1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  NULL);
	m_libc = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_libc2 = profile__mapping(p, 200, 0x7f1000028000, 0x7f10001bd000, 0x28000, libc, NULL);
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);
	m_kern = profile__mapping(p, 300, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_calloc = fn(p, "calloc", "calloc", NULL);
	f_new = fn(p, "operator new(unsigned long)", "_Znwm", NULL);
	f_push = fn(p, "std::vector<int, std::allocator<int> >::push_back(int const&)",
		    "_ZNSt6vectorIiSaIiEE9push_backERKi", "/usr/include/c++/12/bits/stl_vector.h");
	f_parse = fn(p, "parse_line", NULL, "demo.c");
	f_read = fn(p, "read_config", "read_config", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_wmain = fn(p, "main", "main", "worker.c");
	f_handle = fn(p, "handle_request", "handle_request", "worker.c");
	f_odd = fn(p, "odd;name\nwith breaks 42", NULL, "worker.c");
	f_kfn = fn(p, "__kmalloc", "__kmalloc", NULL);
	f_tmpl = fn(p, "cache<&x, 2>::get() 7", NULL, "worker.c");

	l_malloc = LOC(p, m_libc, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_push_parse = LOC(p, m_demo, 0x555555555300, 0x1300, { f_push, 1287 }, { f_parse, 22 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_parse2 = LOC(p, m_demo, 0x555555555270, 0x1270, { f_parse, 25 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_malloc2 = LOC(p, m_libc2, 0x7f10000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc2 = LOC(p, m_libc2, 0x7f10000a5678, 0xa5678, { f_calloc, 0 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_handle = LOC(p, m_worker, 0x560000001180, 0x1180, { f_handle, 77 });
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);
	l_odd = LOC(p, m_worker, 0x560000001200, 0x1200, { f_odd, 3 });
	l_kern = LOC(p, m_kern, 0xffffffff81234567, 0x234567, { f_kfn, 0 });
	l_tmpl = LOC(p, m_worker, 0x560000001300, 0x1300, { f_tmpl, 9 });

	/* malloc <- parse_line <- read_config (inlined into main) <- __libc_start_call_main */
	sample(p, STACK(l_malloc, l_parse, l_read_main, l_start), 1200, 153600, 0, 0, 100);
	/* the same names at another address of parse_line: merged with the line above */
	sample(p, STACK(l_malloc, l_parse2, l_read_main, l_start), 10, 1000, 0, 0, 100);
	/* operator new <- push_back (inlined into parse_line) <- main */
	sample(p, STACK(l_new, l_push_parse, l_main, l_start), 50, 3276800, 0, 0, 100);
	/* nothing allocated here: no line */
	sample(p, STACK(l_new, l_main, l_start), 0, 0, 0, 0, 100);
	/* through a library without symbols */
	sample(p, STACK(l_malloc2, l_foo, l_handle, l_wmain), 300, 153600, 0, 0, 200);
	/* a frame outside any mapping; 100 bytes: narrower than the flame graph draws */
	sample(p, STACK(l_calloc2, l_noaddr), 1, 100, 0, 0, 200);
	/* the stack table was full */
	sample(p, NULL, 0, 4, 4096, 0, 0, 200);
	/* names that would break the format */
	sample(p, STACK(l_malloc2, l_odd, l_tmpl, l_wmain), 2, 20480, 0, 0, 200);
	/* a process without a comm, with a kernel frame */
	sample(p, STACK(l_kern, l_main), 3, 12288, 0, 0, 300);

	assert_non_null(profile__add_process(p, 100, "demo", "./demo --iterations 3"));
	assert_non_null(profile__add_process(p, 200, "worker", "./worker"));
	return p;
}

/* ---- folded ----------------------------------------------------------------------------- */

static void test_folded_golden(void **state)
{
	struct profile *p = fixture();
	size_t len;
	char *out = render(&output_folded, p, NULL, &len);

	check_golden(GOLDEN_FOLDED, out, len);

	/* the rules the golden file shows, spelled out */
	/* root first, process frame on top, inline frames outermost first and suffixed */
	assert_non_null(strstr(out, "demo (100);__libc_start_call_main;main;read_config_[i];"
				    "parse_line;malloc 154600\n"));
	assert_non_null(strstr(out, "demo (100);__libc_start_call_main;main;parse_line;"
				    "std::vector<int, std::allocator<int> >::"
				    "push_back(int const&)_[i];operator new(unsigned long) 3276800\n"));
	/* unsymbolized frames, kernel frames, lost stacks, unknown processes */
	assert_non_null(strstr(out, "worker (200);main;handle_request;libfoo.so+0x1a2b;malloc "
				    "153600\n"));
	assert_non_null(strstr(out, "worker (200);0x7ffe12345678;calloc 100\n"));
	assert_non_null(strstr(out, "worker (200);[no stack] 4096\n"));
	assert_non_null(strstr(out, "[unknown] (300);main;__kmalloc_[k] 12288\n"));
	/* separators replaced; a trailing " 7" would read as a second count */
	assert_non_null(strstr(out, ";odd:name with breaks_42;"));
	assert_non_null(strstr(out, ";cache<&x, 2>::get()_7;"));
	/* the 0-byte sample has no line; merged lines are not repeated */
	assert_int_equal(count(out, "\n"), 7);
	free(out);
	profile__free(p);
}

/* Lines sorted bytewise and well-formed: "stack value" with a positive integer value. */
static void test_folded_format(void **state)
{
	struct profile *p = fixture();
	char *out = render(&output_folded, p, NULL, NULL), *line, *save = NULL, *prev = NULL;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *end;
		long long v;

		assert_non_null(sp);
		v = strtoll(sp + 1, &end, 10);
		assert_true(v > 0 && !*end);
		*sp = '\0';
		if (prev)
			assert_true(strcmp(prev, line) < 0);
		prev = line;
	}
	free(out);
	profile__free(p);
}

static void test_folded_value_type(void **state)
{
	struct output_opts o = { .value_type = "alloc_objects" };
	struct profile *p = fixture();
	char *out = render(&output_folded, p, &o, NULL), *buf = NULL;
	size_t n = 0;
	FILE *f;

	assert_non_null(strstr(out, "demo (100);__libc_start_call_main;main;read_config_[i];"
				    "parse_line;malloc 1210\n"));
	assert_non_null(strstr(out, "worker (200);[no stack] 4\n"));
	free(out);

	/* inuse_space: only what is still live, here nothing: an empty file */
	o.value_type = "inuse_space";
	out = render(&output_folded, p, &o, &n);
	assert_int_equal(n, 0);
	free(out);

	o.value_type = "no_such_type";
	f = open_memstream(&buf, &n);
	assert_int_equal(output_folded.write(p, &o, f), -EINVAL);
	assert_int_equal(output_svg.write(p, &o, f), -EINVAL);
	fclose(f);
	free(buf);
	profile__free(p);
}

static void test_folded_flamegraph_pl(void **state)
{
	struct profile *p = fixture();
	char *path = scratch("flame.folded"), *cmd, *err;
	size_t len;
	char *out = render(&output_folded, p, NULL, &len);
	int status;

	if (access(FLAMEGRAPH_PL, R_OK) || !have("perl")) {
		print_message("skipped: %s not installed (apt-get install libdevel-nytprof-perl)\n",
			      FLAMEGRAPH_PL);
		free(out);
		free(path);
		profile__free(p);
		skip();
	}
	write_file(path, out, len);
	/* its stderr only: the SVG goes to /dev/null */
	assert_true(asprintf(&cmd, "perl '%s' '%s' 2>&1 >/dev/null", FLAMEGRAPH_PL, path) > 0);
	err = capture(cmd, &status);
	if (status || strstr(err, "Ignored") || strstr(err, "ERROR"))
		fail_msg("flamegraph.pl did not take %s (exit %d):\n%s", path, status, err);
	free(err);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* ---- SVG -------------------------------------------------------------------------------- */

/* Well-formed XML: xmllint when installed, else balanced tags and no bare '&' or '<'. */
static void check_xml(const char *path, const char *svg)
{
	char *cmd, *msg;
	int status;

	if (have("xmllint")) {
		assert_true(asprintf(&cmd, "xmllint --noout '%s' 2>&1", path) > 0);
		msg = capture(cmd, &status);
		if (status)
			fail_msg("xmllint rejects %s:\n%.2000s", path, msg);
		free(msg);
		free(cmd);
		return;
	}
	print_message("xmllint not installed (apt-get install libxml2-utils): structural check "
		      "only\n");
	assert_int_equal(count(svg, "<g>") + count(svg, "<g id="), count(svg, "</g>"));
	assert_int_equal(count(svg, "<title>"), count(svg, "</title>"));
	assert_int_equal(count(svg, "<text"), count(svg, "</text>"));
	assert_int_equal(count(svg, "<svg"), 1);
	assert_int_equal(count(svg, "</svg>"), 1);
	assert_int_equal(count(svg, "<script"), count(svg, "</script>"));
}

static void test_svg(void **state)
{
	static const char *const names[] = {
		"<title>all\n", "<title>demo (100)\n", "<title>worker (200)\n",
		"<title>[unknown] (300)\n", "<title>read_config\n", "<title>parse_line\n",
		"<title>operator new(unsigned long)\n",
		"<title>std::vector&lt;int, std::allocator&lt;int&gt; &gt;::"
		"push_back(int const&amp;)\n",
		"<title>libfoo.so+0x1a2b\n", "<title>[no stack]\n", "<title>__kmalloc\n",
		"<title>cache&lt;&amp;x, 2&gt;::get()_7\n",
	};
	struct profile *p = fixture();
	char *path = scratch("flame.svg");
	size_t len, i;
	char *out = render(&output_svg, p, NULL, &len);

	write_file(path, out, len);
	check_xml(path, out);
	assert_true(strncmp(out, "<?xml version=\"1.0\"", 19) == 0);
	assert_non_null(strstr(out, ">ebprof mem: alloc_space (bytes)</text>"));
	assert_non_null(strstr(out, "./demo --iterations 3 - total 3.5 MiB (3621964 bytes) in "
				    "7 stacks"));
	assert_non_null(strstr(out, "<script type=\"text/ecmascript\"><![CDATA["));
	/* standalone: no address but the SVG namespace's */
	assert_int_equal(count(out, "http"), count(out, "http://www.w3.org/2000/svg"));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strstr(out, names[i]))
			fail_msg("the SVG has no frame \"%s\"", names[i]);
	}
	/* values and shares in the tooltips; kinds said in words */
	assert_non_null(strstr(out, "<title>all\n3.5 MiB (3621964 bytes), 100.00%\nall samples"));
	assert_non_null(strstr(out, "<title>malloc\n151.0 KiB (154600 bytes), 4.27%\n"
				    "allocator, in libc.so.6</title>"));
	assert_non_null(strstr(out, "<title>read_config\n151.0 KiB (154600 bytes), 4.27%\n"
				    "inlined, in demo</title>"));
	assert_non_null(strstr(out, "\nfunction, kernel, in [kernel.kallsyms]</title>"));
	/* calloc's 100 bytes are 0.003%: not drawn, and not merged (alone too narrow) */
	assert_null(strstr(out, "<title>calloc\n"));
	assert_null(strstr(out, "<title>0x7ffe12345678\n"));
	/* only the leaf end's allocator functions are coloured as such */
	assert_non_null(strstr(out, "<title>__libc_start_call_main\n3.3 MiB (3431400 bytes), "
				    "94.74%\nfunction, in libc.so.6</title>"));
	/* the 0-byte sample has no frame */
	assert_int_equal(count(out, "<title>main\n"), 3);
	/* names that fit are written out; the root spans the whole width at the bottom */
	assert_non_null(strstr(out, "<rect x=\"10.00\" y=\"152\" width=\"1180.00\" height=\"15\""));
	assert_non_null(strstr(out, "<text x=\"13.00\" y=\"163\">all</text>"));

	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Icicle: root at the top, right under the title; the same frames. */
static void test_svg_inverted(void **state)
{
	struct output_opts o = { .inverted = true };
	struct profile *p = fixture();
	char *std = render(&output_svg, p, NULL, NULL), *inv = render(&output_svg, p, &o, NULL);

	assert_non_null(strstr(inv, "<rect x=\"10.00\" y=\"56\" width=\"1180.00\""));
	assert_non_null(strstr(inv, "inverted: true"));
	assert_non_null(strstr(std, "inverted: false"));
	assert_int_equal(count(std, "<title>"), count(inv, "<title>"));
	free(std);
	free(inv);
	profile__free(p);
}

/* Many narrow children of one frame: drawn as one merged box, and only when wide enough. */
static void test_svg_narrow_merged(void **state)
{
	struct profile *p = profile__new("mem");
	char name[32], *out, *path = scratch("narrow.svg");
	uint32_t f_main, l_main, i;
	size_t len;

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	f_main = fn(p, "main", NULL, NULL);
	l_main = LOC(p, PROF_NONE, 0x1000, 0, { f_main, 0 });
	sample(p, STACK(l_main), 1, 1000000, 0, 0, 1);
	/* 400 children of main of 100 bytes each: 0.01% each, 4% together */
	for (i = 0; i < 400; i++) {
		uint32_t f, l;

		snprintf(name, sizeof(name), "leaf%03u", i);
		f = fn(p, name, NULL, NULL);
		l = LOC(p, PROF_NONE, 0x2000 + i, 0, { f, 0 });
		sample(p, STACK(l, l_main), 1, 100, 0, 0, 1);
	}
	out = render(&output_svg, p, NULL, &len);
	write_file(path, out, len);
	check_xml(path, out);
	assert_null(strstr(out, "<title>leaf"));
	assert_non_null(strstr(out, "<title>[400 narrow frames]\n39.1 KiB (40000 bytes), 3.85%\n"
				    "400 sibling frames, each under 0.1%, merged</title>"));
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Names that are not XML: escaped, bad UTF-8 replaced by U+FFFD, so the file stays readable. */
static void test_svg_hostile_names(void **state)
{
	struct profile *p = profile__new("mem");
	char *out, *path = scratch("hostile.svg");
	uint32_t f1, f2, l1, l2;
	size_t len;

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	assert_int_equal(profile__set_meta(p, "./a <b> & \"c\"\x01", NULL, NULL, 0, 0), 0);
	f1 = fn(p, "bad\xff\xfe utf8 \xc3\x28 ]]> <![CDATA[", NULL, NULL);
	f2 = fn(p, "ok \xc3\xa9t\xc3\xa9 \xe2\x82\xac", NULL, NULL);
	l1 = LOC(p, PROF_NONE, 0x1000, 0, { f1, 0 });
	l2 = LOC(p, PROF_NONE, 0x2000, 0, { f2, 0 });
	sample(p, STACK(l2, l1), 1, 1000, 0, 0, 7);
	assert_non_null(profile__add_process(p, 7, "a&b<c>", NULL));
	out = render(&output_svg, p, NULL, &len);
	write_file(path, out, len);
	check_xml(path, out);
	assert_non_null(strstr(out, "<title>bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd( "
				    "]]&gt; &lt;![CDATA[\n"));
	assert_non_null(strstr(out, "<title>ok \xc3\xa9t\xc3\xa9 \xe2\x82\xac\n"));
	assert_non_null(strstr(out, "<title>a&amp;b&lt;c&gt; (7)\n"));
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* Any profile renders, including one with nothing in it. */
static void test_empty_profile(void **state)
{
	struct profile *p = profile__new("cpu");
	char *out, *path = scratch("empty.svg");
	size_t len;

	assert_non_null(p);
	out = render(&output_folded, p, NULL, &len);
	assert_int_equal(len, 0);
	free(out);
	out = render(&output_svg, p, NULL, &len);
	write_file(path, out, len);
	check_xml(path, out);
	assert_non_null(strstr(out, "no samples"));
	assert_non_null(strstr(out, "<script"));
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

/* The script parses (node --check) when node is installed. */
static void test_svg_script_parses(void **state)
{
	struct profile *p = fixture();
	char *out = render(&output_svg, p, NULL, NULL), *path = scratch("flame.js"), *cmd, *msg;
	char *begin, *end;
	int status;

	begin = strstr(out, "<![CDATA[\nvar ebprofFlame");
	assert_non_null(begin);
	begin += strlen("<![CDATA[\n");
	end = strstr(begin, "]]></script>");
	assert_non_null(end);
	if (!have("node")) {
		print_message("skipped: node not installed, the script's syntax is not checked\n");
		free(path);
		free(out);
		profile__free(p);
		skip();
	}
	write_file(path, begin, end - begin);
	assert_true(asprintf(&cmd, "node --check '%s' 2>&1", path) > 0);
	msg = capture(cmd, &status);
	if (status)
		fail_msg("the SVG's script does not parse:\n%s", msg);
	free(msg);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
	profile__free(p);
}

static void test_for_path(void **state)
{
	assert_ptr_equal(output__for_path("mem.folded"), &output_folded);
	assert_ptr_equal(output__for_path("/tmp/x/flame.svg"), &output_svg);
	assert_ptr_equal(output__for_path("FLAME.SVG"), &output_svg);
	assert_string_equal(output_folded.name, "folded");
	assert_string_equal(output_svg.name, "svg");
	assert_string_equal(output_folded.ext, ".folded");
	assert_string_equal(output_svg.ext, ".svg");
}

/* ---- a big profile ---------------------------------------------------------------------- */

#define BIG_SAMPLES 100000
#define BIG_FUNCS 600
#define BIG_MODULES 6

/*
 * 100,000 distinct stacks 6 to 40 frames deep over 600 functions in 6 modules: a call graph
 * in which each function calls one of 5 others, so stacks share prefixes as real ones do and
 * fan out into a long tail, a tenth of the locations with an inline frame.
 */
static void test_big_profile(void **state)
{
	struct profile *p = profile__new("mem");
	uint32_t maps[BIG_MODULES], funcs[BIG_FUNCS], locs[BIG_FUNCS], stack[48];
	struct output_opts o = { 0 };
	char name[64], *path = scratch("big.svg"), *out;
	double t0, t1;
	size_t len, lenf;
	uint32_t i, j;

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	for (i = 0; i < BIG_MODULES; i++) {
		snprintf(name, sizeof(name), "/usr/lib/libmod%u.so", i);
		maps[i] = profile__mapping(p, 1, 0x7f0000000000ULL + ((uint64_t)i << 24),
					   0x7f0000000000ULL + ((uint64_t)(i + 1) << 24), 0, name,
					   NULL);
	}
	for (i = 0; i < BIG_FUNCS; i++) {
		snprintf(name, sizeof(name), "ns%u::Component%u::operation_%u(int, char const*)",
			 i % 7, i % 23, i);
		funcs[i] = fn(p, name, NULL, NULL);
	}
	for (i = 0; i < BIG_FUNCS; i++) {
		uint32_t m = maps[i % BIG_MODULES];
		uint64_t addr = 0x7f0000000000ULL + ((uint64_t)(i % BIG_MODULES) << 24) + i * 64;

		if (i % 10 == 3)
			locs[i] = LOC(p, m, addr, i * 64, { funcs[(i + 1) % BIG_FUNCS], 5 },
				      { funcs[i], 10 });
		else
			locs[i] = LOC(p, m, addr, i * 64, { funcs[i], 10 });
	}
	for (i = 0; i < BIG_SAMPLES; i++) {
		uint32_t depth = 6 + rnd(35), f = rnd(3);
		int64_t v[2];

		/* built root first, stored leaf first */
		for (j = 0; j < depth; j++) {
			stack[depth - 1 - j] = locs[f];
			/* callees skewed towards the first of the five, as hot paths are */
			f = (f * 31 + 7 + rnd(5) * rnd(5) / 4 * 101) % BIG_FUNCS;
		}
		v[0] = 1 + rnd(10);
		v[1] = v[0] * (16 + rnd(4096));
		assert_non_null(profile__add_sample(p, stack, depth, v, 1 + i % 3));
	}

	t0 = now();
	out = render(&output_svg, p, &o, &len);
	t1 = now();
	write_file(path, out, len);
	print_message("%u samples: SVG %zu bytes (%.1f MB) with %zu frames in %.2f s\n",
		      BIG_SAMPLES, len, len / 1e6, count(out, "<g><title>"), t1 - t0);
	assert_true(len < 20 * 1000 * 1000);
	check_xml(path, out);
	free(out);

	t0 = now();
	out = render(&output_folded, p, &o, &lenf);
	t1 = now();
	print_message("%u samples: folded %zu bytes (%.1f MB), %zu lines in %.2f s\n",
		      BIG_SAMPLES, lenf, lenf / 1e6, count(out, "\n"), t1 - t0);
	free(out);
	unlink(path);
	free(path);
	profile__free(p);
}

/*
 * The worst case for size: 1000 stacks each just wide enough to be drawn (0.1%), 40 distinct
 * long C++ names deep, so nothing merges and every level has 1000 boxes.
 */
static void test_big_profile_worst(void **state)
{
	struct profile *p = profile__new("mem");
	char name[256], *out, *path = scratch("worst.svg");
	uint32_t stack[40], i, j;
	double t0, t1;
	size_t len;

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	for (i = 0; i < BIG_SAMPLES; i++) {
		uint32_t chain = i % 1000;

		for (j = 0; j < 40; j++) {
			snprintf(name, sizeof(name), "ns%u::Table<std::basic_string<char, "
				 "std::char_traits<char>, std::allocator<char> > >::step_%u(int)",
				 chain, j);
			stack[39 - j] = LOC(p, PROF_NONE, (uint64_t)chain << 16 | j, 0,
					    { fn(p, name, NULL, NULL), 1 });
		}
		sample(p, stack, 40, 1, 100, 0, 0, 1);
	}
	t0 = now();
	out = render(&output_svg, p, NULL, &len);
	t1 = now();
	write_file(path, out, len);
	print_message("worst case, %u samples: SVG %zu bytes (%.1f MB) with %zu frames in "
		      "%.2f s\n", BIG_SAMPLES, len, len / 1e6, count(out, "<g><title>"), t1 - t0);
	assert_true(len < 20 * 1000 * 1000);
	check_xml(path, out);
	free(out);
	unlink(path);
	free(path);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_golden),
		cmocka_unit_test(test_folded_format),
		cmocka_unit_test(test_folded_value_type),
		cmocka_unit_test(test_folded_flamegraph_pl),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_svg_inverted),
		cmocka_unit_test(test_svg_narrow_merged),
		cmocka_unit_test(test_svg_hostile_names),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_svg_script_parses),
		cmocka_unit_test(test_for_path),
		cmocka_unit_test(test_big_profile),
		cmocka_unit_test(test_big_profile_worst),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
