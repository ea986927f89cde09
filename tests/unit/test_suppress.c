/* LeakSanitizer-style suppressions (src/profile/suppress.c): the pattern rule (substring, '*',
 * '^', '$'), the file format (comments, blank lines, CRLF, blanks around a line, errors that
 * name file:line), and profile__suppress on a profile of a scanned run: which samples it marks,
 * matched by function name, mangled name, source file, module base name or path, and the leak
 * classes it moves into the process's scan, exactly. */
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

#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

/* ---- the pattern rule ------------------------------------------------------------------- */

static void test_match_substring(void **state)
{
	assert_true(prof_suppressions__match("foo", "foo"));
	assert_true(prof_suppressions__match("foo", "xfooy"));
	assert_true(prof_suppressions__match("foo", "foobar"));
	assert_true(prof_suppressions__match("foo", "barfoo"));
	assert_false(prof_suppressions__match("foo", "fo"));
	assert_false(prof_suppressions__match("foo", "f-o-o"));
	/* case matters, as in LeakSanitizer */
	assert_false(prof_suppressions__match("foo", "FOO"));
	/* C++ names are plain text: no character but '*', and '^'/'$' at the ends, is special */
	assert_true(prof_suppressions__match("std::vector<int>::push_back(int const&)",
					     "void std::vector<int>::push_back(int const&) const"));
	assert_true(prof_suppressions__match("a$b", "xa$by"));
	assert_true(prof_suppressions__match("x^", "ax^b"));
	assert_true(prof_suppressions__match("a.c", "a.c"));
	assert_false(prof_suppressions__match("a.c", "abc"));
}

static void test_match_star(void **state)
{
	assert_true(prof_suppressions__match("f*o", "fo"));
	assert_true(prof_suppressions__match("f*o", "fxxxo"));
	assert_true(prof_suppressions__match("f*o", "--fxo--"));
	assert_false(prof_suppressions__match("f*o", "of"));
	assert_true(prof_suppressions__match("a*b*c", "aXbYc"));
	assert_false(prof_suppressions__match("a*b*c", "aXcYb"));
	/* a failed attempt must backtrack to the last star */
	assert_true(prof_suppressions__match("^a*ab$", "aaab"));
	assert_true(prof_suppressions__match("^*ab*ab$", "abxabyab"));
	assert_false(prof_suppressions__match("^a*ab$", "aaabx"));
	assert_true(prof_suppressions__match("foo*", "foo"));
	assert_true(prof_suppressions__match("*foo", "foo"));
	assert_true(prof_suppressions__match("**", "anything"));
	assert_true(prof_suppressions__match("*", ""));
}

static void test_match_anchors(void **state)
{
	assert_true(prof_suppressions__match("^foo", "foo"));
	assert_true(prof_suppressions__match("^foo", "foobar"));
	assert_false(prof_suppressions__match("^foo", "xfoo"));
	assert_true(prof_suppressions__match("bar$", "bar"));
	assert_true(prof_suppressions__match("bar$", "foobar"));
	assert_false(prof_suppressions__match("bar$", "barx"));
	assert_true(prof_suppressions__match("^foo$", "foo"));
	assert_false(prof_suppressions__match("^foo$", "foox"));
	assert_false(prof_suppressions__match("^foo$", "xfoo"));
	assert_true(prof_suppressions__match("^lose_*$", "lose_tree_child"));
	assert_false(prof_suppressions__match("^lose_*d$", "lose_tree_child_x"));
	assert_true(prof_suppressions__match("^/usr/lib/*.so$", "/usr/lib/libfoo.so"));
	assert_false(prof_suppressions__match("^/usr/lib/*.so$", "/usr/lib/libfoo.so.6"));
}

/* Patterns that are all anchor, or empty: an empty substring is in every string. */
static void test_match_odd(void **state)
{
	assert_true(prof_suppressions__match("", "abc"));
	assert_true(prof_suppressions__match("", ""));
	assert_true(prof_suppressions__match("^", "abc"));
	assert_true(prof_suppressions__match("$", "abc"));
	assert_true(prof_suppressions__match("^$", ""));
	assert_false(prof_suppressions__match("^$", "x"));
	assert_true(prof_suppressions__match("^*$", "x"));
	assert_false(prof_suppressions__match("x", ""));
	/* no name (an unsymbolized frame has no function or file) matches nothing */
	assert_false(prof_suppressions__match("", NULL));
	assert_false(prof_suppressions__match("*", NULL));
}

/* ---- the file --------------------------------------------------------------------------- */

static char *supp_file(const char *name, const char *text)
{
	char *path = scratch(name);

	write_file(path, text, strlen(text));
	return path;
}

static void test_load_errors(void **state)
{
	char why[256], *path, *want;
	struct prof_suppressions *sp;

	path = supp_file("bad.supp", "# known\nleak:ok\n\n  fun:valgrind_style  \nleak:never\n");
	errno = 0;
	sp = prof_suppressions__load(path, why, sizeof(why));
	assert_null(sp);
	assert_int_equal(errno, EINVAL);
	/* the line number counts the comment and the blank line; the text is trimmed */
	assert_true(asprintf(&want, "%s:4: expected 'leak:PATTERN', got 'fun:valgrind_style'",
			     path) > 0);
	assert_string_equal(why, want);
	free(want);
	/* no buffer for the reason is fine */
	assert_null(prof_suppressions__load(path, NULL, 0));
	assert_int_equal(errno, EINVAL);
	unlink(path);
	free(path);

	/* an empty pattern would suppress everything: refused */
	path = supp_file("empty-pattern.supp", "leak:\r\n");
	assert_null(prof_suppressions__load(path, why, sizeof(why)));
	assert_int_equal(errno, EINVAL);
	assert_true(asprintf(&want, "%s:1: expected 'leak:PATTERN', got 'leak:'", path) > 0);
	assert_string_equal(why, want);
	free(want);
	unlink(path);
	free(path);

	/* a valgrind-style block is not this format: its first line names the problem */
	path = supp_file("valgrind.supp", "{\n   known\n   Memcheck:Leak\n}\n");
	assert_null(prof_suppressions__load(path, why, sizeof(why)));
	assert_true(asprintf(&want, "%s:1: expected 'leak:PATTERN', got '{'", path) > 0);
	assert_string_equal(why, want);
	free(want);
	unlink(path);
	free(path);

	path = scratch("no-such.supp");
	unlink(path);
	errno = 0;
	assert_null(prof_suppressions__load(path, why, sizeof(why)));
	assert_int_equal(errno, ENOENT);
	assert_true(asprintf(&want, "cannot read suppressions file %s: No such file or directory",
			     path) > 0);
	assert_string_equal(why, want);
	free(want);
	free(path);

	/* freeing nothing is fine */
	prof_suppressions__free(NULL);
}

/* ---- a scanned profile ------------------------------------------------------------------ */

/* Values in the order of mem_types then leak_types. */
enum {
	V_AO, V_AS, V_IO, V_IS, V_DO, V_DS, V_IDO, V_IDS, V_PO, V_PS, V_RO, V_RS, V_N,
};

/*
 * pid 100 (demo), scanned at exit, four sites:
 *   0: malloc <- lose_a (leak.c) <- main           3 definitely lost, 300 bytes
 *   1: malloc <- libfoo.so+0x1a2b <- main          2 indirectly lost (96), 1 possibly (50)
 *   2: calloc <- keep (keep.c) <- main             1 still reachable, 16 bytes
 *   3: operator new <- Cache::fill() (cache.cc)    1 definitely lost (24), 2 reachable (64)
 * and pid 300, never scanned and not in the process list, one definitely lost block.
 */
static struct profile *scanned(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc, m_foo, m_cxx;
	uint32_t f_malloc, f_calloc, f_new, f_lose, f_keep, f_fill, f_main;
	uint32_t l_malloc, l_calloc, l_new, l_lose, l_foo, l_keep, l_fill, l_main;
	struct prof_process *proc;
	struct prof_scan *sc;

	assert_non_null(p);
	mem_types(p);
	leak_types(p);
	assert_int_equal(p->ntypes, V_N);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  NULL);
	m_libc = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_foo = profile__mapping(p, 100, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_calloc = fn(p, "calloc", "calloc", NULL);
	f_new = fn(p, "operator new(unsigned long)", "_Znwm", NULL);
	f_lose = fn(p, "lose_a", "lose_a", "src/leak.c");
	f_keep = fn(p, "keep", "keep", "/home/me/src/keep.c");
	f_fill = fn(p, "Cache::fill()", "_ZN5Cache4fillEv", "cache.cc");
	f_main = fn(p, "main", "main", "demo.c");

	l_malloc = LOC(p, m_libc, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc = LOC(p, m_libc, 0x7f00000a5678, 0xa5678, { f_calloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_lose = LOC(p, m_demo, 0x555555555250, 0x1250, { f_lose, 12 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_keep = LOC(p, m_demo, 0x555555555300, 0x1300, { f_keep, 40 });
	l_fill = LOC(p, m_demo, 0x555555555380, 0x1380, { f_fill, 7 });
	l_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_main, 50 });

	sample_v(p, STACK(l_malloc, l_lose, l_main),
		 (int64_t[V_N]){ [V_AO] = 3, [V_AS] = 300, [V_IO] = 3, [V_IS] = 300,
				 [V_DO] = 3, [V_DS] = 300 }, 100);
	sample_v(p, STACK(l_malloc, l_foo, l_main),
		 (int64_t[V_N]){ [V_AO] = 5, [V_AS] = 246, [V_IO] = 3, [V_IS] = 146,
				 [V_IDO] = 2, [V_IDS] = 96, [V_PO] = 1, [V_PS] = 50 }, 100);
	sample_v(p, STACK(l_calloc, l_keep, l_main),
		 (int64_t[V_N]){ [V_AO] = 1, [V_AS] = 16, [V_IO] = 1, [V_IS] = 16,
				 [V_RO] = 1, [V_RS] = 16 }, 100);
	sample_v(p, STACK(l_new, l_fill, l_main),
		 (int64_t[V_N]){ [V_AO] = 3, [V_AS] = 88, [V_IO] = 3, [V_IS] = 88,
				 [V_DO] = 1, [V_DS] = 24, [V_RO] = 2, [V_RS] = 64 }, 100);
	sample_v(p, STACK(l_malloc, l_lose, l_main),
		 (int64_t[V_N]){ [V_AO] = 1, [V_AS] = 8, [V_IO] = 1, [V_IS] = 8,
				 [V_DO] = 1, [V_DS] = 8 }, 300);

	proc = process(p, 100, "demo", "./demo", (uint64_t[10]){ 0 }, (uint64_t[9]){ 0 });
	sc = &proc->scan;
	sc->done = true;
	sc->at_exit = true;
	sc->count[PROF_LEAK_DEFINITE] = 4;
	sc->bytes[PROF_LEAK_DEFINITE] = 324;
	sc->count[PROF_LEAK_INDIRECT] = 2;
	sc->bytes[PROF_LEAK_INDIRECT] = 96;
	sc->count[PROF_LEAK_POSSIBLE] = 1;
	sc->bytes[PROF_LEAK_POSSIBLE] = 50;
	sc->count[PROF_LEAK_REACHABLE] = 3;
	sc->bytes[PROF_LEAK_REACHABLE] = 80;
	return p;
}

static struct prof_suppressions *load(const char *text)
{
	char *path = supp_file("test.supp", text), why[256] = "";
	struct prof_suppressions *sp = prof_suppressions__load(path, why, sizeof(why));

	if (!sp)
		fail_msg("cannot load %s: %s", path, why);
	unlink(path);
	free(path);
	return sp;
}

/* Which samples are marked, as a string of 0/1 in sample order. */
static const char *marks(const struct profile *p)
{
	static char m[16];
	uint32_t i;

	for (i = 0; i < p->nsamples && i + 1 < sizeof(m); i++)
		m[i] = p->samples[i].suppressed ? '1' : '0';
	m[i] = 0;
	return m;
}

static void expect_moved(const struct profile *p, const uint64_t count[PROF_LEAK__COUNT],
			 const uint64_t bytes[PROF_LEAK__COUNT])
{
	const struct prof_scan *sc = &profile__find_process(p, 100)->scan;

	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		if (sc->suppressed_count[c] != count[c] || sc->suppressed_bytes[c] != bytes[c])
			fail_msg("%s: %llu blocks, %llu bytes suppressed; expected %llu, %llu",
				 prof_leak_class_names[c],
				 (unsigned long long)sc->suppressed_count[c],
				 (unsigned long long)sc->suppressed_bytes[c],
				 (unsigned long long)count[c], (unsigned long long)bytes[c]);
	}
	/* the classes themselves keep every block: renderers subtract */
	assert_int_equal(sc->count[PROF_LEAK_DEFINITE], 4);
	assert_int_equal(sc->bytes[PROF_LEAK_DEFINITE], 324);
	assert_int_equal(sc->count[PROF_LEAK_REACHABLE], 3);
}

static void test_suppress_by_function(void **state)
{
	struct profile *p = scanned();
	struct prof_suppressions *sp = load("leak:lose_a\n");

	assert_int_equal(profile__suppress(p, sp), 2);
	/* pid 300 has no process entry: its sample is marked all the same */
	assert_string_equal(marks(p), "10001");
	expect_moved(p, (uint64_t[]){ 3, 0, 0, 0 }, (uint64_t[]){ 300, 0, 0, 0 });
	/* again: nothing new, nothing moved twice */
	assert_int_equal(profile__suppress(p, sp), 0);
	expect_moved(p, (uint64_t[]){ 3, 0, 0, 0 }, (uint64_t[]){ 300, 0, 0, 0 });
	prof_suppressions__free(sp);
	profile__free(p);

	/* the demangled name, with '*', and the mangled one */
	p = scanned();
	sp = load("leak:^Cache::*()$\n");
	assert_int_equal(profile__suppress(p, sp), 1);
	assert_string_equal(marks(p), "00010");
	expect_moved(p, (uint64_t[]){ 1, 0, 0, 2 }, (uint64_t[]){ 24, 0, 0, 64 });
	prof_suppressions__free(sp);
	profile__free(p);

	p = scanned();
	sp = load("leak:_ZN5Cache4fill\n");
	assert_int_equal(profile__suppress(p, sp), 1);
	assert_string_equal(marks(p), "00010");
	prof_suppressions__free(sp);
	profile__free(p);

	/* a name no frame has: nothing */
	p = scanned();
	sp = load("leak:^lose$\nleak:keep_\n");
	assert_int_equal(profile__suppress(p, sp), 0);
	assert_string_equal(marks(p), "00000");
	expect_moved(p, (uint64_t[]){ 0, 0, 0, 0 }, (uint64_t[]){ 0, 0, 0, 0 });
	prof_suppressions__free(sp);
	profile__free(p);
}

static void test_suppress_by_file(void **state)
{
	struct profile *p = scanned();
	struct prof_suppressions *sp = load("leak:keep.c\n");

	assert_int_equal(profile__suppress(p, sp), 1);
	assert_string_equal(marks(p), "00100");
	expect_moved(p, (uint64_t[]){ 0, 0, 0, 1 }, (uint64_t[]){ 0, 0, 0, 16 });
	prof_suppressions__free(sp);
	profile__free(p);

	/* the file's path as recorded, anchored */
	p = scanned();
	sp = load("leak:^src/leak.c$\n");
	assert_int_equal(profile__suppress(p, sp), 2);
	assert_string_equal(marks(p), "10001");
	prof_suppressions__free(sp);
	profile__free(p);
}

static void test_suppress_by_module(void **state)
{
	struct profile *p = scanned();
	struct prof_suppressions *sp = load("leak:^libfoo.so$\n");

	/* the base name matches, anchored: an unsymbolized frame has only its module */
	assert_int_equal(profile__suppress(p, sp), 1);
	assert_string_equal(marks(p), "01000");
	expect_moved(p, (uint64_t[]){ 0, 2, 1, 0 }, (uint64_t[]){ 0, 96, 50, 0 });
	prof_suppressions__free(sp);
	profile__free(p);

	/* so does the path */
	p = scanned();
	sp = load("leak:^/opt/foo/*/libfoo.so$\n");
	assert_int_equal(profile__suppress(p, sp), 1);
	assert_string_equal(marks(p), "01000");
	prof_suppressions__free(sp);
	profile__free(p);

	/* the leaf of a mem stack is the allocator function itself (malloc in libc, operator
	 * new in libstdc++ here), in every stack alike: it is never matched, or these patterns
	 * would hide every leak */
	p = scanned();
	sp = load("leak:libstdc++\nleak:^malloc$\nleak:^libc.so.6$\nleak:calloc\n");
	assert_int_equal(profile__suppress(p, sp), 0);
	assert_string_equal(marks(p), "00000");
	prof_suppressions__free(sp);
	profile__free(p);
}

/* A process whose last scan counted less than its sites hold (a pid seen again: the process
 * keeps the last image's scan, its sites add up both): suppressed never exceeds the scan. */
static void test_suppressed_within_scan(void **state)
{
	struct profile *p = scanned();
	struct prof_suppressions *sp = load("leak:lose_a\n");
	struct prof_process *proc = profile__find_process(p, 100);

	(void)state;
	proc->scan.count[PROF_LEAK_DEFINITE] = 1;
	proc->scan.bytes[PROF_LEAK_DEFINITE] = 8;
	assert_int_equal(profile__suppress(p, sp), 2);
	assert_int_equal(proc->scan.suppressed_count[PROF_LEAK_DEFINITE], 1);
	assert_int_equal(proc->scan.suppressed_bytes[PROF_LEAK_DEFINITE], 8);
	prof_suppressions__free(sp);
	profile__free(p);
}

/* A pattern of nothing but '*', '^' and '$' would match every stack: refused. */
static void test_match_everything_refused(void **state)
{
	const char *const bad[] = { "leak:*\n", "leak:^\n", "leak:$\n", "leak:^*$\n" };
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *path = supp_file("all.supp", bad[i]);

		why[0] = 0;
		errno = 0;
		assert_null(prof_suppressions__load(path, why, sizeof(why)));
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(why, "all.supp:1: "));
		assert_non_null(strstr(why, "matches every stack"));
	}
}

/* Comments, blank lines, CRLF, blanks before and after: only the pattern is kept (the '$' of a
 * pattern with a blank or CR left behind would anchor nothing). */
static void test_load_format(void **state)
{
	struct profile *p = scanned();
	struct prof_suppressions *sp;

	sp = load("# known leaks\r\n\r\n   \t\r\n  leak:^lose_a$ \t\r\n# leak:keep\r\n"
		  "\tleak:^libfoo.so$\r\n#last, without a newline\r\nleak:fill()$  ");
	assert_int_equal(profile__suppress(p, sp), 4);
	assert_string_equal(marks(p), "11011");
	expect_moved(p, (uint64_t[]){ 4, 2, 1, 2 }, (uint64_t[]){ 324, 96, 50, 64 });
	prof_suppressions__free(sp);
	profile__free(p);

	/* an empty file, or one of comments only, suppresses nothing */
	p = scanned();
	sp = load("");
	assert_int_equal(profile__suppress(p, sp), 0);
	prof_suppressions__free(sp);
	sp = load("# nothing\n\n");
	assert_int_equal(profile__suppress(p, sp), 0);
	prof_suppressions__free(sp);
	/* and no suppressions at all */
	assert_int_equal(profile__suppress(p, NULL), 0);
	assert_string_equal(marks(p), "00000");
	profile__free(p);
}

/* A profile of a run that did not scan has no leak types: samples are marked, nothing moves. */
static void test_suppress_unscanned(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_suppressions *sp = load("leak:lose\n");
	struct prof_process *proc;
	uint32_t f, l;

	assert_non_null(p);
	mem_types(p);
	f = fn(p, "lose", "lose", "x.c");
	l = LOC(p, PROF_NONE, 0x401000, 0, { f, 3 });
	sample(p, &l, 1, 1, 8, 1, 8, 7);
	proc = process(p, 7, "x", NULL, (uint64_t[10]){ 0 }, (uint64_t[9]){ 0 });
	assert_int_equal(profile__suppress(p, sp), 1);
	assert_true(p->samples[0].suppressed);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		assert_int_equal(proc->scan.suppressed_count[c], 0);
		assert_int_equal(proc->scan.suppressed_bytes[c], 0);
	}
	prof_suppressions__free(sp);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_substring),
		cmocka_unit_test(test_match_star),
		cmocka_unit_test(test_match_anchors),
		cmocka_unit_test(test_match_odd),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_format),
		cmocka_unit_test(test_suppress_by_function),
		cmocka_unit_test(test_suppress_by_file),
		cmocka_unit_test(test_suppress_by_module),
		cmocka_unit_test(test_match_everything_refused),
		cmocka_unit_test(test_suppressed_within_scan),
		cmocka_unit_test(test_suppress_unscanned),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
