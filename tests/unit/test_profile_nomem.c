/* Allocation failure: every allocation the profile model and the renderers make is failed in
 * turn. Each call must report ENOMEM (or succeed), leave the profile usable and consistent,
 * and nothing may leak or crash.
 *
 * This binary replaces malloc and friends with wrappers around glibc's __libc_* entry points,
 * which count allocations, fail the one chosen, and count live blocks for a leak check. Only
 * while `armed` do they fail anything, so cmocka itself is never affected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static bool armed;
static long fail_at, seen, live;
static bool failed;

static bool inject(void)
{
	if (!armed || seen++ != fail_at)
		return false;
	failed = true;
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	void *p = inject() ? NULL : __libc_malloc(n);

	live += p != NULL;
	return p;
}

void *calloc(size_t n, size_t m)
{
	void *p = inject() ? NULL : __libc_calloc(n, m);

	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (inject())
		return NULL;
	p = __libc_realloc(old, n);
	live += !old && p;
	return p;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

static void arm(long at)
{
	seen = 0;
	fail_at = at;
	failed = false;
	armed = true;
}

/* Run one step with injection, and if the injected failure hit it, check that it reported
 * ENOMEM and run it again without injection: it must then succeed. */
#define STEP(ok_expr)                                                                       \
	do {                                                                                \
		bool _ok = (ok_expr);                                                       \
		if (!_ok) {                                                                 \
			assert_true(failed);                                                \
			armed = false;                                                      \
			assert_true(ok_expr);                                               \
			armed = true;                                                       \
		}                                                                           \
	} while (0)

#define NOMEM_INT(expr) ((err = (expr)) == 0 || (assert_int_equal(err, -ENOMEM), false))
#define NOMEM_IDX(expr) ((idx = (expr)) != PROF_NONE || (assert_int_equal(errno, ENOMEM), false))
#define NOMEM_PTR(expr) ((ptr = (expr)) != NULL || (assert_int_equal(errno, ENOMEM), false))

/* Build a small but complete profile, every step under injection. */
static struct profile *build(void)
{
	struct profile *p;
	struct prof_line lines[2];
	uint32_t idx, f[3], m[2], l[4];
	struct prof_process *proc;
	void *ptr;
	int err, i;

	p = profile__new("mem");
	if (!p) {
		assert_int_equal(errno, ENOMEM);
		armed = false;
		p = profile__new("mem");
		assert_non_null(p);
		armed = true;
	}
	STEP(NOMEM_INT(profile__set_meta(p, "./demo", "6.1", "ebprof mem", 1, 2)));
	STEP(NOMEM_INT(profile__add_type(p, "alloc_objects", "count")));
	STEP(NOMEM_INT(profile__add_type(p, "alloc_space", "bytes")));
	STEP(NOMEM_INT(profile__add_type(p, "inuse_objects", "count")));
	STEP(NOMEM_INT(profile__add_type(p, "inuse_space", "bytes")));
	STEP(NOMEM_INT(profile__set_default_type(p, "alloc_space")));
	STEP(NOMEM_IDX(m[0] = profile__mapping(p, 1, 0x1000, 0x9000, 0, "/bin/demo", "abcd")));
	STEP(NOMEM_IDX(m[1] = profile__mapping(p, 1, 0x10000, 0x90000, 0, "/lib/libc.so.6",
						 NULL)));
	STEP(NOMEM_IDX(f[0] = profile__function(p, "malloc", NULL, NULL)));
	STEP(NOMEM_IDX(f[1] = profile__function(p, "inner", "_Z5innerv", "a.c")));
	STEP(NOMEM_IDX(f[2] = profile__function(p, "main", "main", "a.c")));
	lines[0] = (struct prof_line){ f[1], 3 };
	lines[1] = (struct prof_line){ f[2], 9 };
	STEP(NOMEM_IDX(l[0] = profile__location(p, m[1], 0x10100, 0x100,
						   &(struct prof_line){ f[0], 0 }, 1)));
	STEP(NOMEM_IDX(l[1] = profile__location(p, m[0], 0x1100, 0x100, lines, 2)));
	STEP(NOMEM_IDX(l[2] = profile__location(p, m[0], 0x1200, 0x200, NULL, 0)));
	STEP(NOMEM_IDX(l[3] = profile__location(p, PROF_NONE, 0xfff0, 0, NULL, 0)));
	for (i = 0; i < 40; i++) {
		int64_t v[4] = { i + 1, 64 * (i + 1), i % 2, 64 * (i % 2) };
		uint64_t hist[48] = { [7] = (uint64_t)i + 1 };
		struct prof_sample *s;

		STEP(NOMEM_PTR(s = profile__add_sample(p, l, 4 - (i % 3), v, 1 + i % 2)));
		s = ptr;
		STEP(NOMEM_INT(prof_sample__set_hist(p, s, hist, 48)));
		s->out = (struct prof_outstanding){ i % 2, 64 * (i % 2), 1, 2, 3 };
	}
	for (i = 1; i <= 2; i++) {
		STEP(NOMEM_PTR(proc = profile__add_process(p, i, i == 1 ? "demo" : "child",
							     "./demo")));
		proc = ptr;
		STEP(NOMEM_INT(prof_process__add_call(p, proc, "malloc", 40)));
		STEP(NOMEM_INT(prof_process__add_call(p, proc, "free", 20)));
		STEP(NOMEM_INT(prof_process__add_stat(p, proc, "alloc_count", 40)));
		STEP(NOMEM_INT(prof_process__set_stat(p, proc, "alloc_bytes", 4096)));
		STEP(NOMEM_INT(prof_process__add_stat(p, proc, "live_bytes", 64)));
		STEP(NOMEM_INT(prof_process__set_note(p, proc, "traced glibc")));
	}
	STEP(NOMEM_INT(profile__add_drop(p, "live_full", 0)));
	STEP(NOMEM_INT(profile__add_drop(p, "stack_fail", 3)));
	STEP(NOMEM_INT(profile__add_note(p, "note %d", 1)));
	return p;
}

/* What build() makes, however its allocations failed. */
static void check(const struct profile *p)
{
	uint64_t v;

	assert_string_equal(p->command, "./demo");
	assert_int_equal(p->ntypes, 4);
	assert_int_equal(p->default_type, 1);
	assert_int_equal(p->nmappings, 2);
	assert_int_equal(p->nfunctions, 3);
	assert_int_equal(p->nlocations, 4);
	assert_int_equal(p->locations[1].nlines, 2);
	assert_int_equal(p->nsamples, 40);
	assert_int_equal(p->samples[39].values[1], 64 * 40);
	assert_int_equal(p->samples[39].hist[7], 40);
	assert_int_equal(p->nprocesses, 2);
	assert_non_null(profile__find_process(p, 2));
	assert_true(prof_process__call(&p->processes[1], "free", &v));
	assert_int_equal(v, 20);
	assert_int_equal(p->processes[1].nstats, 3);
	assert_int_equal(p->ndrops, 2);
	assert_int_equal(p->drops[1].value, 3);
	assert_int_equal(p->nnotes, 1);
}

static void test_profile_nomem(void **state)
{
	long at, base;

	for (at = 0;; at++) {
		struct profile *p;

		base = live;
		arm(at);
		p = build();
		armed = false;
		check(p);
		profile__free(p);
		assert_int_equal(live, base);
		/* a run in which nothing failed has tried every allocation */
		if (!failed)
			break;
	}
	print_message("failed each of %ld allocations in turn\n", at);
}

static void test_render_nomem(void **state)
{
	const struct output_ops *ops[] = { &output_text, &output_json, &output_pprof };
	static char fbuf[1 << 16];
	struct output_opts o = { .top = 10 };
	struct profile *p;
	long at, base;
	FILE *f;
	size_t i;

	p = build();
	check(p);
	/* stdio's own buffer is static, so only the renderers allocate */
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(setvbuf(f, fbuf, _IOFBF, sizeof(fbuf)), 0);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* once unarmed first: glibc's one-time allocations (time zone) are not leaks */
		assert_int_equal(ops[i]->write(p, &o, f), 0);
		for (at = 0;; at++) {
			int err;

			base = live;
			arm(at);
			err = ops[i]->write(p, &o, f);
			armed = false;
			if (live != base)
				fail_msg("%s leaks %ld blocks when allocation %ld fails",
					 ops[i]->name, live - base, at);
			if (!failed) {
				assert_int_equal(err, 0);
				break;
			}
			/* some allocations only speed things up; the rest must be reported */
			if (err)
				assert_int_equal(err, -ENOMEM);
		}
	}
	fclose(f);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_nomem),
		cmocka_unit_test(test_render_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
