/* The HTML report against a fixed profile (the one of test_output.c): its sections and exact
 * numbers, escaping of hostile names in the page, in its JSON data and in the embedded flame
 * graphs, well-formedness through `xmllint --html` (package libxml2-utils), the page's script
 * through `node --check`, the embedded SVGs equal to what the .svg renderer writes, the thinning
 * of long series, and a 200,000-site synthetic profile for size and time (printed, not asserted).
 * What the page does in a browser is tests/tools/html-check.js's (run by tests/e2e/html.bats). */
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
#include "leak_fixture.h"

/* ---- the fixed profile (as test_output.c's) --------------------------------------------- */

/*
 * Two processes. pid 100 (demo) allocates through malloc and operator new, with inline frames;
 * pid 200 (worker) has an unsymbolized library frame, a frame outside any mapping, a stack
 * lost to a full table, and outstanding memory. live_bytes sampled three times. 40 of the
 * operator new site's 50 allocations are temporary, with a lifetime histogram.
 */
static struct profile *fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc100, m_cxx, m_worker, m_libc200, m_foo;
	uint32_t f_malloc, f_calloc, f_new, f_push, f_parse, f_read, f_main, f_start, f_wmain;
	uint32_t f_handle;
	uint32_t l_malloc100, l_new, l_push_parse, l_parse, l_read_main, l_main100, l_start;
	uint32_t l_malloc200, l_calloc200, l_foo, l_handle, l_wmain, l_noaddr;
	struct prof_sample *s;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --iterations 3", "6.1.0-18-amd64",
					   "ebprof mem -o out.html -- ./demo --iterations 3",
					   1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  "4f1c2d3e5a6b7c8d9e0f11223344556677889900");
	m_libc100 = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_libc200 = profile__mapping(p, 200, 0x7f1000028000, 0x7f10001bd000, 0x28000, libc, NULL);
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);

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

	l_malloc100 = LOC(p, m_libc100, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_push_parse = LOC(p, m_demo, 0x555555555300, 0x1300, { f_push, 1287 }, { f_parse, 22 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main100 = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc100, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_malloc200 = LOC(p, m_libc200, 0x7f10000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc200 = LOC(p, m_libc200, 0x7f10000a5678, 0xa5678, { f_calloc, 0 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_handle = LOC(p, m_worker, 0x560000001180, 0x1180, { f_handle, 77 });
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);

	s = sample(p, (uint32_t[]){ l_malloc100, l_parse, l_read_main, l_start }, 4,
		   1200, 153600, 10, 1280, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [8] = 1200 }, 48), 0);
	s->out = (struct prof_outstanding){ 10, 1280, 150000000, 2100000000, 12000000000ULL };

	s = sample(p, (uint32_t[]){ l_new, l_push_parse, l_main100, l_start }, 4,
		   50, 3276800, 0, 0, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [17] = 50 }, 48), 0);
	assert_int_equal(prof_sample__set_life(p, s, (uint64_t[48]){ [0] = 5, [11] = 30,
								  [20] = 20, [47] = 1 }, 48),
			 0);
	s->temporary = 40;

	s = sample(p, (uint32_t[]){ l_malloc200, l_foo, l_handle, l_wmain }, 4,
		   300, 153600, 300, 153600, 200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [0] = 10, [6] = 90,
								  [10] = 200 }, 48), 0);
	s->out = (struct prof_outstanding){ 300, 153600, 1000000, 2400000000ULL,
					    450000000000ULL };

	s = sample(p, (uint32_t[]){ l_calloc200, l_noaddr }, 2, 1, 100, 1, 100, 200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[8]){ [7] = 1 }, 8), 0);
	s->out = (struct prof_outstanding){ 1, 100, 500000000, 500000000, 500000000 };

	sample(p, NULL, 0, 4, 4096, 0, 0, 200);

	process(p, 100, "demo", "./demo --iterations 3",
		(uint64_t[]){ 1250, 0, 0, 0, 1240, 0, 0, 0, 0, 0 },
		(uint64_t[]){ 1250, 3430400, 1240, 3429120, 10, 1280, 3277056, 65536, 0 });
	assert_int_equal(prof_process__set_note(p, profile__find_process(p, 100),
						"traced glibc malloc in "
						"/usr/lib/x86_64-linux-gnu/libc.so.6"), 0);
	process(p, 200, "worker", "./worker --name \"x y\"",
		(uint64_t[]){ 304, 1, 0, 0, 4, 0, 0, 0, 0, 0 },
		(uint64_t[]){ 305, 157796, 4, 4096, 301, 153700, 157796, 1024, 2 });
	assert_int_equal(prof_process__add_stat(p, profile__find_process(p, 200), "failed", 1), 0);

	assert_int_equal(profile__add_drop(p, "live_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stacks_full", 4), 0);
	assert_int_equal(profile__add_drop(p, "stack_fail", 0), 0);
	assert_int_equal(profile__add_note(p, "no symbols for \"%s\": install its debug package "
					   "or rebuild it with -g", "/opt/foo/lib/libfoo.so"), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 0, 0), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 100000000, 4096), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 2000000000, 1280), 0);
	assert_int_equal(profile__add_point(p, 200, "live_bytes", "bytes", 100000000, 64), 0);
	return p;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static void expect(const char *out, const char *what)
{
	if (!strstr(out, what))
		fail_msg("the page lacks \"%s\"", what);
}

/* The text between `open` (included in the search, not in the result) and the next `close`,
 * malloc'd; NULL if absent. */
static char *between(const char *s, const char *open, const char *close)
{
	const char *a = strstr(s, open), *b;

	if (!a)
		return NULL;
	a += strlen(open);
	b = strstr(a, close);
	return b ? strndup(a, b - a) : NULL;
}

/* xmllint --html must have nothing to say: no error, no unknown (HTML5-only) tag. */
static void check_html(const char *name, const char *out, size_t len)
{
	char *path = scratch(name), *cmd, *msg;
	int status;

	write_file(path, out, len);
	if (!have("xmllint")) {
		print_message("xmllint not installed (apt-get install libxml2-utils): %s not "
			      "checked\n", name);
	} else {
		assert_true(asprintf(&cmd, "xmllint --html --noout '%s' 2>&1", path) > 0);
		msg = capture(cmd, &status);
		if (status || *msg)
			fail_msg("xmllint --html complains about %s:\n%.3000s", path, msg);
		free(msg);
		free(cmd);
	}
	unlink(path);
	free(path);
}

static void check_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, l, k;

	while (i < len) {
		l = u[i] < 0x80 ? 1 : u[i] >= 0xf0 ? 4 : u[i] >= 0xe0 ? 3 : u[i] >= 0xc2 ? 2 : 0;
		if (!l || i + l > len)
			fail_msg("invalid UTF-8 at byte %zu", i);
		for (k = 1; k < l; k++) {
			if ((u[i + k] & 0xc0) != 0x80)
				fail_msg("invalid UTF-8 at byte %zu", i);
		}
		i += l;
	}
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_sections(void **state)
{
	static const char *const want[] = {
		"<!DOCTYPE html>", "<title>ebprof mem report: ./demo --iterations 3</title>",
		/* header */
		"<tr><th>Command</th><td><code>./demo --iterations 3</code></td></tr>",
		"<tr><th>Started</th><td>2023-11-14 22:13:20 UTC</td></tr>",
		"<tr><th>Duration</th><td>2.50 s <span class=\"note\">(2500000000 ns)</span>",
		"<tr><th>Kernel</th><td>6.1.0-18-amd64</td></tr>",
		"<code>ebprof mem -o out.html -- ./demo --iterations 3</code>",
		"<tr><th>Total alloc_space</th><td>3.4 MiB (3588196 bytes)</td></tr>",
		/* processes: exact numbers and human units, calls, notes */
		"<h2 id=\"processes\">Processes</h2>", ">Peak live</th>", ">Unknown frees</th>",
		">failed</th>",
		"<td class=\"num\" data-v=\"3430400\">3.3 MiB<span class=\"x\">3430400</span></td>",
		"<td class=\"num\" data-v=\"1250\">1250</td>",
		"<th class=\"num\" data-sort=\"num\">malloc</th>",
		"Traced but not called: realloc, reallocarray, aligned_alloc",
		"<code>./worker --name &quot;x y&quot;</code>",
		"<br><span class=\"note\">traced glibc malloc in "
		"/usr/lib/x86_64-linux-gnu/libc.so.6</span>",
		/* series */
		"<h2 id=\"timeline\">Over time</h2>\n<h3>Live bytes <span class=\"note\">"
		"(live_bytes, per process)</span></h3>",
		"<div class=\"chart\" data-series=\"live_bytes\">",
		"\"series\":[{\"name\":\"live_bytes\",\"unit\":\"bytes\",\"pid\":100,"
		"\"label\":\"demo (100)\",\"t\":[0,100000000,2000000000],\"v\":[0,4096,1280]}",
		/* sites, ranked by bytes; sortable headers; stacks in the data */
		"<h2 id=\"sites\">Top allocation sites</h2>",
		"<th class=\"num\" data-sort=\"num\" title=\"alloc_space (bytes)\">Bytes</th>"
		"<th class=\"num\" data-sort=\"num\" title=\"alloc_objects (count)\">Count</th>"
		"<th class=\"num\" data-sort=\"num\" title=\"inuse_space (bytes)\">Live bytes</th>"
		"<th class=\"num\" data-sort=\"num\" title=\"inuse_objects (count)\">"
		"Live count</th>"
		"<th class=\"num\" data-sort=\"num\" title=\"allocations freed before their thread "
		"allocated again\">Temporary</th>"
		"<th class=\"num\" data-sort=\"num\">PID</th>",
		"<table class=\"data sortable fixed\" id=\"sites-table\" data-expand=\"1\" "
		"data-page=\"500\">\n<thead><tr><th class=\"num rank\" data-sort=\"rank\">#</th>",
		"<tr class=\"row\" tabindex=\"0\" aria-expanded=\"false\" data-s=\"1\"><td "
		"class=\"num\" data-v=\"1\">1</td><td class=\"site\"><span class=\"fn\">"
		"std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int const&amp;)"
		"</span>"
		" <span class=\"src\">stl_vector.h:1287</span> <span class=\"mod\">[demo]</span>"
		" <span class=\"via\">via operator new(unsigned long)</span></td>"
		"<td class=\"num\" data-v=\"3276800\">3.1 MiB<span class=\"x\">3276800</span></td>"
		"<td class=\"num\" data-v=\"50\">50</td>",
		/* temporaries: the count sorts, the share is in the title */
		"<td class=\"num\" data-v=\"40\" title=\"40 of 50 allocations (80.0%) freed before "
		"their thread allocated again\">40</td><td class=\"num pidc\" data-v=\"100\">",
		"<td class=\"num zero\" data-v=\"0\">0</td><td class=\"num pidc\" data-v=\"200\">",
		"<span class=\"fn\">libfoo.so+0x1a2b</span>",
		"<span class=\"fn\">[no stack]</span>",
		"<td class=\"num pidc\" data-v=\"200\">200<span class=\"comm\">worker</span></td>",
		"\"stk\":{\"0\":[0,1,2,3],",
		"\"hist\":{\"0\":[[\"[128 B, 256 B)\",1200]],",
		"[\"0 B\",10],[\"[32 B, 64 B)\",90],[\"[512 B, 1 KiB)\",200]",
		/* lifetimes in time units, the open last bucket ('>' escaped), the temporaries */
		"\"life\":{\"1\":[[\"0 ns\",5],[\"[1.0 us, 2.0 us)\",30],"
		"[\"[524.3 us, 1.0 ms)\",20],[\"\\u003e= 19h 32m\",1]]},\"temp\":{\"1\":[40,50]},",
		/* the flame graphs: a selector, one SVG per type, the default selected */
		"<option value=\"1\" selected>alloc_space (bytes)</option>",
		"<option value=\"3\">inuse_space (bytes)</option>",
		"<script type=\"text/x-ebprof-svg\" id=\"flame-svg-0\" "
		"data-type=\"alloc_objects\">",
		"<script type=\"text/x-ebprof-svg\" id=\"flame-svg-3\" "
		"data-type=\"inuse_space\">",
		"<input type=\"search\" id=\"flame-search\"",
		/* outstanding, with ages */
		"<h2 id=\"outstanding\">Outstanding allocations at exit</h2>",
		"311 objects, 151.3 KiB (154980 bytes) not freed when the run ended, at 3 sites",
		"<td class=\"num\" data-v=\"2400000000\">2.40 s<span class=\"x\">2400000000 ns"
		"</span></td><td class=\"num\" data-v=\"1000000\">1.0 ms<span class=\"x\">1000000 "
		"ns</span></td><td class=\"num\" data-v=\"1500000000\">1.50 s",
		/* drops, every reason, and notes */
		"<p class=\"drops-bad\">Events were dropped",
		"<tr><td><code>live_full</code></td><td class=\"num zero\" data-v=\"0\">0</td>"
		"</tr>",
		"<tr><td><code>stacks_full</code></td><td class=\"num\" data-v=\"4\">4</td></tr>",
		"<h2 id=\"notes\">Notes</h2>",
		"<li>no symbols for &quot;/opt/foo/lib/libfoo.so&quot;: install its debug package",
		"</script>\n</body>\n</html>\n",
	};
	struct profile *p = fixture();
	size_t len, i;
	char *out = render(&output_html, p, NULL, &len);

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		expect(out, want[i]);
	/* sites in the text report's order: by bytes, ties by stack */
	assert_true(strstr(out, "data-s=\"1\"") < strstr(out, "data-s=\"0\""));
	assert_true(strstr(out, "data-s=\"0\"") < strstr(out, "data-s=\"2\""));
	/* standalone: no address but the SVG namespace and the page's own anchors */
	assert_int_equal(count(out, "http"), count(out, "http://www.w3.org/2000/svg"));
	assert_null(strstr(out, "src=\""));
	check_html("fixture.html", out, len);
	free(out);
	profile__free(p);
}

/* Each embedded SVG, its escaping undone, is byte for byte what the .svg renderer writes for
 * that sample type: the page reuses the flame graph, it does not redraw it. */
/* Trends as a Growth column, each process's peak with the sites of its peak snapshot, and the
 * peak's marker data for the live-bytes chart; none of it when the profile has none. */
static void test_growth_and_peak(void **state)
{
	struct output_opts o = { .top = 10 };
	struct profile *p = fixture();
	struct prof_peak pk = {
		.known = true, .bytes = 3277056, .t_ns = 1200000000, .snapshot_t_ns = 1000000000,
		.snapshot_bytes = 3200000, .nsites = 1,
		.sites = (struct prof_peak_site[]){ { 1, 3200000 } },
	};
	size_t len;
	char *out;

	p->samples[2].growth = (struct prof_growth){ PROF_TREND_GROWING, 61440.4, 79872, 153600,
						     153600 };
	p->samples[0].growth = (struct prof_growth){ PROF_TREND_PLATEAU, 0, 1280, 1280, 1280 };
	assert_int_equal(prof_process__set_peak(p, profile__find_process(p, 100), &pk), 0);
	out = render(&output_html, p, &o, &len);
	expect(out, ">Growth</th>");
	expect(out, "<td class=\"num\" data-v=\"61440\" title=\"from 79872 to 153600 bytes over the "
		    "later half of the run, max 153600\">+60.0 KiB/s <span class=\"x\">growing</span>"
		    "</td>");
	expect(out, "<td class=\"num\" data-v=\"0\" title=\"from 1280 to 1280 bytes over the later "
		    "half of the run, max 1280\">0 B/s <span class=\"x\">plateau</span></td>");
	/* sites without a trend in a profile that has some */
	expect(out, "<td class=\"num zero\" data-v=\"0\">-</td>");
	expect(out, "<br>Peak live 3.1 MiB (3277056 bytes) at 1.20 s; at the peak, per the snapshot "
		    "of the sites at 1.00 s, which holds 3.1 MiB (97.6% of the peak):");
	expect(out, "<table class=\"data narrow peak-sites\">");
	expect(out, "\"peaks\":[{\"pid\":100,\"t\":1200000000,\"v\":3277056}]");
	check_html("growth.html", out, len);
	free(out);
	profile__free(p);

	p = fixture();
	out = render(&output_html, p, &o, &len);
	assert_null(strstr(out, ">Growth</th>"));
	assert_null(strstr(out, "<br>Peak live"));
	expect(out, "\"peaks\":[]");
	free(out);
	profile__free(p);
}

static void test_embedded_svg(void **state)
{
	struct profile *p = fixture();
	struct output_opts o = { .inverted = true };
	char *out = render(&output_html, p, &o, NULL), *svg, *want, *q, open[128];
	uint32_t t;
	size_t i, k;

	for (t = 0; t < p->ntypes; t++) {
		snprintf(open, sizeof(open), "id=\"flame-svg-%u\" data-type=\"%s\">", t,
			 p->types[t].type);
		svg = between(out, open, "</script>");
		assert_non_null(svg);
		for (i = k = 0; svg[i]; i++) {
			/* "<\/" back to "</", "<\!--" back to "<!--", as the page's script does */
			if (svg[i] == '<' && svg[i + 1] == '\\' &&
			    (svg[i + 2] == '/' || svg[i + 2] == '!'))
				svg[k++] = svg[i++];
			else
				svg[k++] = svg[i];
		}
		svg[k] = '\0';
		o.value_type = p->types[t].type;
		want = render(&output_svg, p, &o, NULL);
		assert_string_equal(svg, want);
		/* and no "</" left in the script element, which would end it */
		q = between(out, open, "</script>");
		assert_null(strstr(q, "</"));
		free(q);
		free(want);
		free(svg);
	}
	free(out);

	/* --value selects the flame graph shown first; an unknown type is an error */
	o.value_type = "inuse_objects";
	out = render(&output_html, p, &o, NULL);
	expect(out, "<option value=\"2\" selected>inuse_objects (count)</option>");
	free(out);
	o.value_type = "no_such_type";
	{
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);

		assert_int_equal(output_html.write(p, &o, f), -EINVAL);
		fclose(f);
		free(buf);
	}
	profile__free(p);
}

/* Names that try to end the script or a tag, quotes, U+2028/U+2029, bytes that are not UTF-8,
 * control characters: nowhere raw, and the JSON data gives them back exactly. */
static void test_hostile_names(void **state)
{
	static const char evil_fn[] = "</script><script>alert(1)</script>";
	struct profile *p = profile__new("mem");
	uint32_t f1, f2, l1, l2, l3, m;
	char *out, *json, *path, *cmd, *msg;
	size_t len;
	int status;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "</title><b>cmd</b> \"q\" & 'a'", "k<e>rnel",
					   "ebprof mem -o <x>.html", 1, 1000), 0);
	mem_types(p);
	m = profile__mapping(p, 7, 0x1000, 0x2000, 0, "/tmp/<lib>\"&'.so", NULL);
	f1 = fn(p, evil_fn, NULL, "/src/\xe2\x80\xa8line\xe2\x80\xa9sep.c");
	f2 = fn(p, "bad\xff\xfe utf8 \x01\x1b[31m <!-- ]]> -->", NULL, "<!--x.c");
	l1 = LOC(p, m, 0x1100, 0x100, { f1, 3 });
	l2 = LOC(p, m, 0x1200, 0x200, { f2, 4 }, { f1, 5 });
	l3 = loc(p, m, 0x1300, 0x300, NULL, 0);
	sample(p, (uint32_t[]){ l1, l2, l3 }, 3, 2, 200, 1, 100, 7)->out =
		(struct prof_outstanding){ 1, 100, 5, 5, 5 };
	assert_non_null(profile__add_process(p, 7, "<img src=x onerror=alert(1)>", "a\nb"));
	assert_int_equal(prof_process__add_stat(p, profile__find_process(p, 7), "x<y>", 1), 0);
	assert_int_equal(prof_process__add_call(p, profile__find_process(p, 7), "</td>", 3), 0);
	assert_int_equal(profile__add_drop(p, "<drop>", 1), 0);
	assert_int_equal(profile__add_note(p, "note </script> \xe2\x80\xa8"), 0);
	assert_int_equal(profile__add_point(p, 7, "live_bytes", "bytes", 0, 1), 0);

	out = render(&output_html, p, NULL, &len);
	check_utf8(out, len);
	assert_null(memmem(out, len, "\xe2\x80\xa8", 3));
	assert_null(memmem(out, len, "\xe2\x80\xa9", 3));
	assert_null(strstr(out, "<script>alert"));
	assert_null(strstr(out, "<img"));
	assert_null(strstr(out, "<b>cmd"));
	assert_null(strstr(out, "<lib>"));
	assert_null(strstr(out, "<drop>"));
	assert_null(strstr(out, "\x1b"));
	/* only the page's own script elements end: the head's, the data, 4 SVGs, the script;
	 * the SVGs' own scripts are text inside theirs */
	assert_int_equal(count(out, "</script>"), 7);
	assert_int_equal(count(out, "<script"), 7 + 4);
	assert_int_equal(count(out, "<script type=\"text/ecmascript\">"), 4);
	expect(out, "<title>ebprof mem report: &lt;/title&gt;&lt;b&gt;cmd&lt;/b&gt; &quot;q&quot; "
		    "&amp; &#39;a&#39;</title>");
	expect(out, "<span class=\"fn\">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
		    "</span> <span class=\"src\">&#x2028;line&#x2029;sep.c:3</span>");
	expect(out, "&lt;img src=x onerror=alert(1)&gt;");
	expect(out, "<li>note &lt;/script&gt; &#x2028;</li>");
	check_html("hostile.html", out, len);

	/* the data, read back by jq, holds the names exactly (invalid bytes as U+FFFD) */
	json = between(out, "<script type=\"application/json\" id=\"ebprof-data\">", "</script>");
	assert_non_null(json);
	assert_null(strchr(json, '<'));
	if (have("jq")) {
		path = scratch("hostile.json");
		write_file(path, json, strlen(json));
		assert_true(asprintf(&cmd, "jq -e '(.strs | index(\"%s\") != null) and "
				     "(.strs | index(\"/src/\\u2028line\\u2029sep.c\") != null)"
				     " and (.strs | index(\"bad\\ufffd\\ufffd utf8 \\u0001"
				     "\\u001b[31m <!-- ]]> -->\") != null) and "
				     "(.locs | length == 3)' '%s' 2>&1", evil_fn, path) > 0);
		msg = capture(cmd, &status);
		if (status)
			fail_msg("the page's data does not give the names back:\n%s\n%s", msg,
				 json);
		free(msg);
		free(cmd);
		unlink(path);
		free(path);
	} else {
		print_message("jq not installed: the data's strings not read back\n");
	}
	free(json);
	free(out);
	profile__free(p);
}

/* Another tool's heap profile (Go's: mode pprof, default inuse_space): the text ranks by
 * inuse_space and says so, and neither page calls its inuse values what an exit left (before:
 * 'by bytes' over lines led by allocated bytes, 'Outstanding allocations at exit: none' beside
 * 9.3 MiB in use, 'Command: none (attached to running processes)'); and its duration, which
 * pprof's heap profiles leave unset, is unknown (it said 'Duration: 0 ns'). */
static void test_foreign_heap(void **state)
{
	static const char *const types[] = { "alloc_objects", "alloc_space", "inuse_objects",
					     "inuse_space" };
	struct profile *p = profile__new("pprof");
	int64_t a[4] = { 100, 1000000, 10, 900000 }, b[4] = { 5, 5000000, 1, 1000 };
	struct prof_line l = { .line = 0 };
	uint32_t loc;
	size_t len;
	char *out;

	assert_non_null(p);
	for (int i = 0; i < 4; i++)
		assert_int_equal(profile__add_type(p, types[i], i % 2 ? "bytes" : "count"), 0);
	assert_int_equal(profile__set_default_type(p, "inuse_space"), 0);
	l.function = profile__function(p, "main.keep", "main.keep", NULL);
	loc = profile__location(p, PROF_NONE, 0x1000, 0x1000, &l, 1);
	assert_non_null(profile__add_sample(p, &loc, 1, a, 0));
	l.function = profile__function(p, "main.churn", "main.churn", NULL);
	loc = profile__location(p, PROF_NONE, 0x2000, 0x2000, &l, 1);
	assert_non_null(profile__add_sample(p, &loc, 1, b, 0));
	out = render(&output_text, p, NULL, &len);
	/* a Go heap profile has no duration: not "0 ns" */
	expect(out, "\n  Duration:  unknown\n");
	expect(out, "Top 2 allocation sites by inuse_space\n");
	assert_null(strstr(out, "Outstanding"));
	assert_true(strstr(out, "main.keep") < strstr(out, "main.churn"));
	free(out);
	out = render(&output_html, p, NULL, &len);
	expect(out, "<tr><th>Duration</th><td>unknown</td></tr>");
	expect(out, "not recorded (a profile of another tool)");
	assert_null(strstr(out, "everything allocated was freed"));
	assert_null(strstr(out, "id=\"outstanding\""));
	free(out);
	profile__free(p);
}

/* A saved profile (ebprof report x.pb.gz) has no calls, statistics or series of its processes,
 * pprof keeping none: the Processes table sums each process's samples per type, as the text
 * report does; Calls and Over time say they are not in a saved profile, not that nothing was
 * called or sampled; and no Temporary column of zeros stands for temporaries not kept. */
static void test_saved_profile(void **state)
{
	struct profile *p = fixture(), *q;
	size_t len;
	char *gz, *out;

	(void)state;
	gz = render(&output_pprof, p, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	out = render(&output_html, q, NULL, &len);
	expect(out, "<th class=\"num\" data-sort=\"num\" title=\"its samples' sum\">"
		    "alloc_space</th>");
	/* demo: 1200 + 50 allocations, 153600 + 3276800 bytes, 10 (1280 bytes) live */
	expect(out, "<td class=\"num\" data-v=\"1250\">1250</td>"
		    "<td class=\"num\" data-v=\"3430400\">3.3 MiB<span class=\"x\">3430400</span>"
		    "</td><td class=\"num\" data-v=\"10\">10</td>"
		    "<td class=\"num\" data-v=\"1280\">1.2 KiB<span class=\"x\">1280</span></td>"
		    "</tr>");
	/* worker: 300 + 1 + 4, 153600 + 100 + 4096; and the total of both */
	expect(out, "<td class=\"num\" data-v=\"305\">305</td>"
		    "<td class=\"num\" data-v=\"157796\">154.1 KiB<span class=\"x\">157796</span>");
	expect(out, "<tfoot><tr><td>Total</td><td>2 processes</td>"
		    "<td class=\"num\" data-v=\"1555\">1555</td>");
	expect(out, "Not in a saved profile: pprof keeps no calls.");
	expect(out, "Not in a saved profile: pprof keeps no series.");
	assert_null(strstr(out, "No calls to the traced functions"));
	assert_null(strstr(out, "nothing was sampled during the run"));
	assert_null(strstr(out, ">Temporary</th>"));
	free(out);
	free(gz);
	profile__free(q);
	profile__free(p);
}

/* A profile with nothing in it, and one of another mode, render and say what is missing. */
static void test_empty_and_other_modes(void **state)
{
	struct profile *p = profile__new("cpu");
	int64_t v[2] = { 120, 1200000000 };
	uint32_t f, l;
	size_t len;
	char *out;

	out = render(&output_html, p, NULL, &len);
	expect(out, "No processes were traced.");
	expect(out, "<h2 id=\"timeline\">Over time</h2>\n<p class=\"empty\">No samples");
	expect(out, "<h2 id=\"sites\">Top stacks</h2>\n<p class=\"empty\">No samples.</p>");
	expect(out, "No sample types: nothing to draw.");
	expect(out, "<p class=\"drops-ok\">No events were dropped.</p>");
	assert_null(strstr(out, "id=\"outstanding\""));
	assert_null(strstr(out, "id=\"notes\""));
	check_html("empty.html", out, len);
	free(out);
	/* the unwinder's drops cut stacks short, their events counted: not "dropped events"
	 * (said of every such run before) */
	assert_int_equal(profile__add_drop(p, "unwind_truncated", 1), 0);
	out = render(&output_html, p, NULL, &len);
	expect(out, "<p class=\"drops-bad\">Some stacks are incomplete: they end in [truncated]");
	expect(out, "<p class=\"drops-bad\">Every event was counted; the unwinder's drops");
	assert_null(strstr(out, "Events were dropped"));
	assert_null(strstr(out, "Some events were dropped"));
	free(out);
	/* with a drop that loses events too, the numbers are short */
	assert_int_equal(profile__add_drop(p, "count_table_full", 2), 0);
	out = render(&output_html, p, NULL, &len);
	expect(out, "Some events were dropped: the numbers below are incomplete");
	expect(out, "Events were dropped: these were not fully accounted");
	free(out);

	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "cpu"), 0);
	f = fn(p, "spin", NULL, "spin.c");
	l = LOC(p, PROF_NONE, 0x401000, 0, { f, 12 });
	assert_non_null(profile__add_sample(p, &l, 1, v, 9));
	out = render(&output_html, p, NULL, &len);
	/* a cpu profile's rows are stacks, not allocation sites */
	expect(out, "<a href=\"#sites\">Top stacks</a>");
	expect(out, "<h2 id=\"sites\">Top stacks</h2>\n<p class=\"hint\">1 stack by cpu.");
	expect(out, "<th data-sort=\"text\">Stack</th>");
	expect(out, "placeholder=\"Filter stacks by function");
	expect(out, "<tr><th>Stacks</th><td>1 distinct stack in");
	{
		/* the page's own words, not the script's comments */
		char *script = strstr(out, "<script");

		assert_non_null(script);
		*script = 0;
		assert_null(strstr(out, " site"));
		*script = '<';
	}
	expect(out, "title=\"cpu (nanoseconds)\">cpu</th>");
	expect(out, "<td class=\"num\" data-v=\"1200000000\">1.20 s<span class=\"x\">1200000000 ns"
		    "</span></td>");
	expect(out, "<option value=\"1\" selected>cpu (nanoseconds)</option>");
	assert_null(strstr(out, "id=\"outstanding\""));
	/* nothing is allocated: no Temporary column, no temporaries in the data */
	assert_null(strstr(out, ">Temporary</th>"));
	expect(out, "\"life\":{},\"temp\":{},");
	check_html("cpu.html", out, len);
	free(out);
	profile__free(p);
}

/* The page's script is valid JavaScript, and never holds a "</" (which would end it early). */
static void test_script_parses(void **state)
{
	struct profile *p = fixture();
	char *out = render(&output_html, p, NULL, NULL), *js, *path, *cmd, *msg;
	const char *start = strstr(out, "<script>\n");
	int status;

	assert_non_null(start);
	js = between(start, "<script>\n", "</script>");
	assert_non_null(js);
	assert_null(strstr(js, "</"));
	assert_true(strlen(js) > 1000);
	if (!have("node")) {
		print_message("node not installed: the page's script is not parsed\n");
	} else {
		path = scratch("html-script.js");
		write_file(path, js, strlen(js));
		assert_true(asprintf(&cmd, "node --check '%s' 2>&1", path) > 0);
		msg = capture(cmd, &status);
		if (status)
			fail_msg("node --check rejects the page's script:\n%s", msg);
		free(msg);
		free(cmd);
		unlink(path);
		free(path);
	}
	free(js);
	free(out);
	profile__free(p);
}

/* 100,000 points are thinned to at most 2 per bucket, keeping the first, the last and peaks. */
static void test_series_thinning(void **state)
{
	struct profile *p = fixture();
	char *out, *t, *v;
	uint32_t i;

	for (i = 0; i < 100000; i++) {
		/* a saw tooth with one spike */
		int64_t val = i == 54321 ? 999999999 : (int64_t)(i % 1000) * 1000;

		assert_int_equal(profile__add_point(p, 300, "live_bytes", "bytes",
						    (int64_t)i * 1000000, val), 0);
	}
	out = render(&output_html, p, NULL, NULL);
	t = between(out, "\"pid\":300,\"label\":\"? (300)\",\"t\":[", "]");
	v = between(out, "\"pid\":300,\"label\":\"? (300)\",\"t\":[", "]}");
	assert_non_null(t);
	assert_non_null(v);
	assert_true(count(t, ",") + 1 <= 2 * 1000 + 2);
	assert_true(count(t, ",") + 1 >= 1000);
	assert_true(strncmp(t, "0,", 2) == 0);
	assert_non_null(strstr(t, ",99999000000"));
	assert_non_null(strstr(v, ",999999999,"));
	print_message("100000 points of a series: %zu in the page\n", count(t, ",") + 1);
	free(t);
	free(v);
	free(out);
	profile__free(p);
}

/* ---- big profiles ----------------------------------------------------------------------- */

#define BIG_SITES 200000
#define BIG_FUNCS 2000
#define BIG_MODULES 8

/*
 * 200,000 distinct stacks 6 to 40 frames deep over 2,000 C++-like functions in 8 modules (each
 * function calls one of 5 others, so stacks share prefixes as real ones do), a tenth of the
 * locations with an inline frame, every site with a histogram, a third still live, 4 processes
 * with a live_bytes series of 20,000 points each.
 */
static struct profile *big_profile(void)
{
	struct profile *p = profile__new("mem");
	uint32_t maps[BIG_MODULES], funcs[BIG_FUNCS], locs[BIG_FUNCS], stack[48];
	char name[128];
	uint32_t i, j;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./big", "6.1.0", "ebprof mem -o big.html -- ./big",
					   1700000000000000000LL, 20000000000LL), 0);
	mem_types(p);
	for (i = 0; i < BIG_MODULES; i++) {
		snprintf(name, sizeof(name), "/usr/lib/libmod%u.so", i);
		maps[i] = profile__mapping(p, 1, 0x7f0000000000ULL + ((uint64_t)i << 24),
					   0x7f0000000000ULL + ((uint64_t)(i + 1) << 24), 0, name,
					   NULL);
	}
	for (i = 0; i < BIG_FUNCS; i++) {
		snprintf(name, sizeof(name), "ns%u::Component%u::operation_%u(int, char const*)",
			 i % 7, i % 23, i);
		snprintf(name + 100, 28, "src/mod%u/file%u.cc", i % BIG_MODULES, i % 97);
		funcs[i] = fn(p, name, NULL, name + 100);
	}
	for (i = 0; i < BIG_FUNCS; i++) {
		uint32_t m = maps[i % BIG_MODULES];
		uint64_t addr = 0x7f0000000000ULL + ((uint64_t)(i % BIG_MODULES) << 24) + i * 64;

		if (i % 10 == 3)
			locs[i] = LOC(p, m, addr, i * 64, { funcs[(i + 1) % BIG_FUNCS], 5 },
				      { funcs[i], 10 + i % 300 });
		else
			locs[i] = LOC(p, m, addr, i * 64, { funcs[i], 10 + i % 300 });
	}
	for (i = 0; i < BIG_SITES; i++) {
		uint32_t depth = 6 + rnd(35), f = rnd(3);
		uint64_t hist[24] = { 0 };
		struct prof_sample *s;
		int64_t v[4];

		for (j = 0; j < depth; j++) {
			stack[depth - 1 - j] = locs[f];
			f = (f * 31 + 7 + rnd(5) * rnd(5) / 4 * 101) % BIG_FUNCS;
		}
		v[0] = 1 + rnd(10);
		v[1] = v[0] * (16 + rnd(4096));
		v[2] = i % 3 ? 0 : 1;
		v[3] = v[2] * (16 + rnd(4096));
		s = profile__add_sample(p, stack, depth, v, 1 + i % 4);
		assert_non_null(s);
		hist[5 + rnd(12)] = v[0];
		assert_int_equal(prof_sample__set_hist(p, s, hist, 24), 0);
		if (v[2])
			s->out = (struct prof_outstanding){ 1, v[3], 1000 + i, 1000 + i, 1000 + i };
	}
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "worker-%u", i);
		assert_non_null(profile__add_process(p, i, name, name));
		for (j = 0; j < 20000; j++)
			assert_int_equal(profile__add_point(p, i, "live_bytes", "bytes",
							    (int64_t)j * 1000000,
							    (int64_t)(j * i) % 70000 * 1000), 0);
	}
	assert_int_equal(profile__add_drop(p, "stacks_full", 0), 0);
	return p;
}

static void test_big_profile(void **state)
{
	struct profile *p = big_profile();
	double t0, t1;
	size_t len;
	char *out;

	t0 = now();
	out = render(&output_html, p, NULL, &len);
	t1 = now();
	print_message("%u sites: HTML %zu bytes (%.1f MB) in %.2f s; %zu table rows, %zu flame "
		      "graphs embedded\n", BIG_SITES, len, len / 1e6, t1 - t0,
		      count(out, "<tr class=\"row"), count(out, "text/x-ebprof-svg"));
	assert_true(len < 20 * 1000 * 1000);
	/* the cap is said */
	expect(out, "200000 sites by alloc_space; the first 5000 are shown here");
	assert_int_equal(count(out, "<tr class=\"row"), 2 * 5000);
	check_html("big.html", out, len);
	free(out);
	profile__free(p);
}

/*
 * The flame graphs' worst case for size (1,000 stacks of 40 distinct long C++ names, each just
 * wide enough to be drawn, about 10 MB of SVG per type): the page keeps the selected type's and
 * leaves out what does not fit, saying so.
 */
static void test_flame_budget(void **state)
{
	struct profile *p = profile__new("mem");
	char name[256], *out;
	uint32_t stack[40], i, j;
	double t0, t1;
	size_t len;

	mem_types(p);
	for (i = 0; i < 100000; i++) {
		uint32_t chain = i % 1000;

		for (j = 0; j < 40; j++) {
			snprintf(name, sizeof(name), "ns%u::Table<std::basic_string<char, "
				 "std::char_traits<char>, std::allocator<char> > >::step_%u(int)",
				 chain, j);
			stack[39 - j] = LOC(p, PROF_NONE, (uint64_t)chain << 16 | j, 0,
					    { fn(p, name, NULL, NULL), 1 });
		}
		sample(p, stack, 40, 1, 100, 1, 100, 1);
	}
	t0 = now();
	out = render(&output_html, p, NULL, &len);
	t1 = now();
	print_message("flame graph worst case: HTML %zu bytes (%.1f MB) in %.2f s, %zu of 4 flame "
		      "graphs embedded\n", len, len / 1e6, t1 - t0,
		      count(out, "text/x-ebprof-svg"));
	assert_true(len < 20 * 1000 * 1000);
	expect(out, "id=\"flame-svg-1\" data-type=\"alloc_space\"");
	expect(out, "flame graphs were left out to keep this page small");
	expect(out, " disabled>");
	free(out);
	profile__free(p);
}

/* ---- leaks ------------------------------------------------------------------------------ */

/* The text between `open` and the next `close`, from s on, or fail. */
static const char *after(const char *s, const char *what)
{
	const char *a = strstr(s, what);

	if (!a)
		fail_msg("the page lacks \"%s\" where expected", what);
	return a + strlen(what);
}

/* A scanned run (leak_fixture.h): per process memcheck's summary, the sites with lost blocks
 * by lost bytes with the suppressed one last and marked, no leak columns among the top sites,
 * and the flame graph of each class. */
static void test_leaks(void **state)
{
	static const char *const want[] = {
		"<a href=\"#outstanding\">Outstanding</a><a href=\"#leaks\">Leaks</a>",
		"<h2 id=\"leaks\">Leaks</h2>",
		/* pid 100: at exit; the classes; a heuristic under still reachable */
		"<h3 id=\"leaks-100\">pid 100 (demo)</h3>\n<p class=\"note scan\">Scanned at its "
		"exit, 2.40 s into the run; the process was stopped for 3.5 ms; 1.2 MiB (1234567 "
		"bytes) of roots and blocks read; 2 threads.</p>",
		"<table class=\"data narrow leak-sum\" id=\"leak-sum-100\">",
		"<tr class=\"leak-definite\"><td>definitely lost</td><td class=\"num\" "
		"data-v=\"3\">3</td><td class=\"num\" data-v=\"200\">200 B</td></tr>\n"
		"<tr class=\"leak-indirect\"><td>indirectly lost</td><td class=\"num\" "
		"data-v=\"3\">3</td><td class=\"num\" data-v=\"300\">300 B</td></tr>\n"
		"<tr class=\"leak-possible\"><td>possibly lost</td><td class=\"num\" "
		"data-v=\"2\">2</td><td class=\"num\" data-v=\"256\">256 B</td></tr>\n"
		"<tr class=\"leak-reachable\"><td>still reachable</td><td class=\"num\" "
		"data-v=\"8\">8</td><td class=\"num\" data-v=\"1024\">1.0 KiB<span class=\"x\">"
		"1024</span></td></tr>\n"
		"<tr class=\"leak-heuristic\"><td>of which reachable via heuristic length64</td>"
		"<td class=\"num\" data-v=\"1\">1</td><td class=\"num\" data-v=\"64\">64 B</td>"
		"</tr>\n<tr class=\"leak-suppressed\"><td>suppressed</td><td class=\"num zero\" "
		"data-v=\"0\">0</td><td class=\"num zero\" data-v=\"0\">0 B</td></tr>\n"
		"</tbody></table>",
		/* pid 200: while running, unreadable bytes, a thread without registers; its
		 * suppressed definite blocks out of definitely lost */
		"<h3 id=\"leaks-200\">pid 200 (worker)</h3>\n<p class=\"note scan\">Scanned while "
		"it ran, 2.45 s into the run; the process was stopped for 12.0 ms; 8.0 MiB (8400000 "
		"bytes) of roots and blocks read, 4096 bytes unreadable; 3 threads and 1 more "
		"without registers (whose whole stacks were scanned).</p>",
		"<tr class=\"leak-definite\"><td>definitely lost</td><td class=\"num zero\" "
		"data-v=\"0\">0</td><td class=\"num zero\" data-v=\"0\">0 B</td></tr>",
		"<tr class=\"leak-heuristic\"><td>of which reachable via heuristic stdstring</td>"
		"<td class=\"num\" data-v=\"2\">2</td><td class=\"num\" data-v=\"64\">64 B</td>"
		"</tr>\n<tr class=\"leak-heuristic\"><td>of which reachable via heuristic newarray"
		"</td><td class=\"num\" data-v=\"1\">1</td><td class=\"num\" data-v=\"40\">40 B"
		"</td></tr>\n<tr class=\"leak-suppressed\"><td>suppressed</td><td class=\"num\" "
		"data-v=\"4\">4</td><td class=\"num\" data-v=\"4096\">4.0 KiB<span class=\"x\">"
		"4096</span></td></tr>",
		/* the sites */
		"<h3 id=\"lost-sites\">Sites with lost blocks</h3>\n<p class=\"hint\">5 sites lost "
		"blocks, 1 of them suppressed (marked, and listed last).",
		"<table class=\"data sortable fixed\" id=\"leaks-table\" data-expand=\"1\" "
		"data-page=\"500\">\n<thead><tr><th class=\"num rank\" data-sort=\"rank\">#</th>"
		"<th data-sort=\"text\">Site</th><th class=\"num\" data-sort=\"num\">Lost</th>",
		/* a site with two classes: lost is both, each its own cell */
		"<tr class=\"row\" tabindex=\"0\" aria-expanded=\"false\" data-s=\"0\"><td "
		"class=\"num\" data-v=\"1\">1</td><td class=\"site\"><span class=\"fn\">lose_list"
		"</span> <span class=\"src\">leak.c:30</span> <span class=\"mod\">[demo]</span> "
		"<span class=\"via\">via malloc</span></td>"
		"<td class=\"num\" data-v=\"500\" data-n=\"5\">500 B<span class=\"x\">5 blocks"
		"</span></td><td class=\"num\" data-v=\"200\" data-n=\"2\">200 B<span class=\"x\">"
		"2 blocks</span></td><td class=\"num\" data-v=\"300\" data-n=\"3\">300 B<span "
		"class=\"x\">3 blocks</span></td><td class=\"num zero\" data-v=\"0\" data-n=\"0\">-"
		"</td><td class=\"num pidc\" data-v=\"100\">100<span class=\"comm\">demo</span>"
		"</td></tr>",
		/* a zero-byte block is still a lost block */
		"<td class=\"num\" data-v=\"0\" data-n=\"1\">0 B<span class=\"x\">1 block</span>"
		"</td>",
		/* the suppressed site, marked */
		"<tr class=\"row suppressed\" tabindex=\"0\" aria-expanded=\"false\" data-s=\"4\">"
		"<td class=\"num\" data-v=\"5\">5</td><td class=\"site\"><span class=\"fn\">"
		"libfoo.so+0x1a2b</span> <span class=\"via\">via malloc</span> <span "
		"class=\"badge\">suppressed</span></td><td class=\"num\" data-v=\"4096\" "
		"data-n=\"4\">4.0 KiB<span class=\"x\">4096 bytes in 4 blocks</span></td>",
		/* the stacks of the lost sites are in the data, to open */
		"\"stk\":{\"0\":[", "\"3\":[", "\"4\":[", "\"5\":[",
		/* a flame graph per class, said what it weighs */
		"<option value=\"5\">definite_space (bytes): definitely lost, bytes</option>",
		"<option value=\"4\">definite_objects (count): definitely lost, blocks</option>",
		"<option value=\"11\">reachable_space (bytes): still reachable, bytes</option>",
		"<script type=\"text/x-ebprof-svg\" id=\"flame-svg-5\" data-type=\"definite_space\">",
		"<script type=\"text/x-ebprof-svg\" id=\"flame-svg-8\" data-type=\"possible_objects\">",
	};
	struct profile *p = leak_fixture();
	struct output_opts o = { .value_type = "definite_space" };
	size_t len, i;
	char *out = render(&output_html, p, NULL, &len), *svg, *flame;
	const char *at, *sites;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		expect(out, want[i]);
	/* the section after outstanding, before the drops */
	assert_true(strstr(out, "<h2 id=\"outstanding\">") < strstr(out, "<h2 id=\"leaks\">"));
	assert_true(strstr(out, "<h2 id=\"leaks\">") < strstr(out, "<h2 id=\"drops\">"));
	/* rows by lost bytes: lose_list 500, parse_line 256, handle_request 100, zero_len 0, and
	 * the suppressed site last though it lost the most */
	at = after(out, "id=\"leaks-table\"");
	at = after(at, "data-s=\"0\"><td class=\"num\" data-v=\"1\">1</td>");
	at = after(at, "data-s=\"1\"><td class=\"num\" data-v=\"2\">2</td>");
	at = after(at, "data-s=\"5\"><td class=\"num\" data-v=\"3\">3</td>");
	at = after(at, "data-s=\"3\"><td class=\"num\" data-v=\"4\">4</td>");
	at = after(at, "data-s=\"4\"><td class=\"num\" data-v=\"5\">5</td>");
	assert_null(strstr(strstr(out, "id=\"leaks-table\""), "data-s=\"2\""));
	assert_int_equal(count(strstr(out, "id=\"leaks-table\""), "<tr class=\"row"), 5);
	/* the top sites table has no column per class: the section has them */
	sites = strstr(out, "<h2 id=\"sites\">");
	assert_non_null(sites);
	flame = strstr(sites, "<h2 id=\"flame\">");
	assert_non_null(flame);
	*flame = '\0';
	assert_null(strstr(sites, "definite_"));
	assert_null(strstr(sites, "reachable_"));
	*flame = '<';
	/* the header still totals every type, suppressed blocks included as in pprof */
	expect(out, "<tr><th>Total definite_space</th><td>4.2 KiB (4296 bytes)</td></tr>");
	check_html("leaks.html", out, len);
	free(out);

	/* --value definite_space: its flame graph is the one shown, and it is the .svg's */
	out = render(&output_html, p, &o, &len);
	expect(out, "<option value=\"5\" selected>definite_space (bytes): definitely lost, "
		    "bytes</option>");
	svg = render(&output_svg, p, &o, NULL);
	expect(svg, "total 4.2 KiB (4296 bytes) in 2 stacks");
	free(svg);
	free(out);

	/* the classes read back from a pprof have no scans: no section, no link */
	for (i = 0; i < p->nprocesses; i++)
		p->processes[i].scan.done = false;
	out = render(&output_html, p, NULL, &len);
	assert_null(strstr(out, "id=\"leaks\""));
	assert_null(strstr(out, "href=\"#leaks\""));
	assert_null(strstr(out, "id=\"leaks-table\""));
	free(out);
	profile__free(p);
}

/* Scanned, and nothing lost: the summary, and the sites table says there are none. */
static void test_leaks_none_lost(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_process *proc;
	uint32_t f, l;
	char *out;

	assert_non_null(p);
	mem_types(p);
	leak_types(p);
	f = fn(p, "keep", "keep", "k.c");
	l = LOC(p, PROF_NONE, 0x401000, 0, { f, 3 });
	sample_v(p, &l, 1, (int64_t[LV_N]){ 1, 16, 1, 16, [LV_RO] = 1, [LV_RS] = 16 }, 7);
	proc = process(p, 7, "k", NULL, (uint64_t[10]){ 0 }, (uint64_t[9]){ 0 });
	proc->scan = (struct prof_scan){ .done = true, .at_exit = true, .threads = 1,
					 .count = { [PROF_LEAK_REACHABLE] = 1 },
					 .bytes = { [PROF_LEAK_REACHABLE] = 16 } };
	out = render(&output_html, p, NULL, NULL);
	expect(out, "<tr class=\"leak-reachable\"><td>still reachable</td><td class=\"num\" "
		    "data-v=\"1\">1</td><td class=\"num\" data-v=\"16\">16 B</td></tr>");
	expect(out, "<h3 id=\"lost-sites\">Sites with lost blocks</h3>\n<p class=\"empty\">None: "
		    "no block was definitely, indirectly or possibly lost.</p>");
	expect(out, "; 1 thread.</p>");
	assert_null(strstr(out, "id=\"leaks-table\""));
	free(out);
	profile__free(p);
}

static void test_for_path(void **state)
{
	assert_ptr_equal(output__for_path("report.html"), &output_html);
	assert_ptr_equal(output__for_path("/tmp/R.HTML"), &output_html);
	assert_string_equal(output_html.name, "html");
	assert_string_equal(output_html.ext, ".html");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_growth_and_peak),
		cmocka_unit_test(test_embedded_svg),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_foreign_heap),
		cmocka_unit_test(test_saved_profile),
		cmocka_unit_test(test_empty_and_other_modes),
		cmocka_unit_test(test_script_parses),
		cmocka_unit_test(test_series_thinning),
		cmocka_unit_test(test_big_profile),
		cmocka_unit_test(test_flame_budget),
		cmocka_unit_test(test_leaks),
		cmocka_unit_test(test_leaks_none_lost),
		cmocka_unit_test(test_for_path),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
