/* Unit tests of allocator discovery (core/probes.c) on this very process: no root needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/probes.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

static int find_cookie(const struct alloc_obj *o, enum mem_fn fn)
{
	for (uint32_t i = 0; i < o->nprobes; i++)
		if ((uint32_t)o->cookies[i] == fn)
			return i;
	return -1;
}

/* The object probed for fn, or -1. */
static int obj_of(const struct alloc_lib *lib, enum mem_fn fn)
{
	for (uint32_t i = 0; i < lib->nobjs; i++)
		if (find_cookie(&lib->objs[i], fn) >= 0)
			return i;
	return -1;
}

static void test_finds_glibc_in_self(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	assert_string_equal(lib.kind, "glibc");
	assert_non_null(strstr(lib.path, "libc.so"));
	assert_non_null(strstr(lib.open_path, "/proc/"));
	/* a C program: libc alone, every function of the family probed, except aliases */
	assert_int_equal(lib.nobjs, 1);
	assert_string_equal(lib.objs[0].path, lib.path);
	for (int fn = 0; fn <= MEM_FN_PVALLOC; fn++) {
		if (fn == MEM_FN_ALIGNED_ALLOC && strstr(lib.aliases, "aligned_alloc=memalign"))
			continue;
		assert_true(find_cookie(&lib.objs[0], fn) >= 0);
	}
	/* free has no return probe; every other probe has one */
	assert_int_equal(lib.objs[0].nret, lib.objs[0].nprobes - 1);
	for (uint32_t i = 0; i < lib.objs[0].nret; i++)
		assert_int_not_equal(lib.objs[0].ret_cookies[i], MEM_FN_FREE);
}

static void test_no_two_probes_at_one_address(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	for (uint32_t i = 0; i < lib.objs[0].nprobes; i++)
		for (uint32_t j = i + 1; j < lib.objs[0].nprobes; j++)
			assert_int_not_equal(lib.objs[0].offsets[i], lib.objs[0].offsets[j]);
}

static void test_aliases_are_reported(void **state)
{
	uint64_t a, m;
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	assert_int_equal(sym_elf_symbol_offset(lib.open_path, "aligned_alloc", &a), 0);
	assert_int_equal(sym_elf_symbol_offset(lib.open_path, "memalign", &m), 0);
	if (a != m) {
		/* a libc where they are distinct functions: nothing to merge */
		fprintf(stderr, "skip: aligned_alloc and memalign are distinct in this libc\n");
		skip();
	}
	assert_string_equal(lib.aliases, "aligned_alloc=memalign");
	assert_int_equal(find_cookie(&lib.objs[0], MEM_FN_ALIGNED_ALLOC), -1);
	assert_true(lib.alias_mask[MEM_FN_MEMALIGN] & (1u << MEM_FN_ALIGNED_ALLOC));
}

static void test_free_probe_skips_single_stepped_test(void **state)
{
	unsigned char code[3];
	struct alloc_lib lib;
	uint64_t sym;
	int i;
	FILE *f;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	assert_int_equal(sym_elf_symbol_offset(lib.open_path, "free", &sym), 0);
	i = find_cookie(&lib.objs[0], MEM_FN_FREE);
	assert_true(i >= 0);
	f = fopen(lib.open_path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, sym, SEEK_SET), 0);
	assert_int_equal(fread(code, 1, 3, f), 3);
	fclose(f);
	if (code[0] == 0x48 && code[1] == 0x85 && code[2] == 0xff)
		assert_int_equal(lib.objs[0].offsets[i], sym + 3);	/* test %rdi,%rdi: past it */
	else
		assert_int_equal(lib.objs[0].offsets[i], sym);
}

static void test_gone_process(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(999999, &lib), -ESRCH);
}

/* ---- the choice over installed libraries (skipped when a package is missing) ---------- */

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"
#define LIBC LIBDIR "libc.so.6"
#define LIBSTDCXX LIBDIR "libstdc++.so.6"
#define JEMALLOC LIBDIR "libjemalloc.so.2"
#define TCMALLOC LIBDIR "libtcmalloc_minimal.so.4"
#define MIMALLOC LIBDIR "libmimalloc.so.2"

static void need(const char *path)
{
	if (access(path, R_OK)) {
		fprintf(stderr, "skip: %s is not installed\n", path);
		skip();
	}
}

static const char *kind_for(const struct alloc_lib *lib, enum mem_fn fn)
{
	int o = obj_of(lib, fn);

	return o < 0 ? "none" : lib->objs[o].kind;
}

static void test_glibc_and_libstdcxx(void **state)
{
	const char *paths[] = { LIBSTDCXX, LIBC };
	struct alloc_lib lib;

	need(LIBSTDCXX);
	probes__configure(NULL);
	assert_int_equal(probes__choose_files(paths, NULL, 2, -1, &lib), 0);
	assert_string_equal(lib.kind, "glibc");
	assert_int_equal(lib.nobjs, 2);
	/* the malloc family in libc, every C++ operator in libstdc++ */
	assert_string_equal(kind_for(&lib, MEM_FN_MALLOC), "glibc");
	assert_string_equal(kind_for(&lib, MEM_FN_FREE), "glibc");
	assert_string_equal(kind_for(&lib, MEM_FN_OPERATOR_NEW), "libstdc++");
	assert_string_equal(kind_for(&lib, MEM_FN_OPERATOR_DELETE_ARRAY), "libstdc++");
	/* libstdc++: 4 new, 4 new[], 6 delete, 6 delete[] variants, all distinct functions */
	assert_int_equal(lib.objs[1].nprobes, 20);
	/* no return probes: libstdc++'s new and new[] are entry-only, their inner malloc carries
	 * their name (a return probe would stop a std::bad_alloc's unwinding) */
	assert_int_equal(lib.objs[1].nret, 0);
	for (uint32_t j = 0; j < lib.objs[1].nprobes; j++) {
		uint32_t fn = (uint32_t)lib.objs[1].cookies[j];

		assert_int_equal(!!(lib.objs[1].cookies[j] & MEM_COOKIE_NEW),
				 fn == MEM_FN_OPERATOR_NEW || fn == MEM_FN_OPERATOR_NEW_ARRAY);
	}
}

static void test_preloaded_jemalloc_serves_everything(void **state)
{
	const char *paths[] = { JEMALLOC, LIBSTDCXX, LIBC };
	bool preload[] = { true, false, false };
	struct alloc_lib lib;

	need(JEMALLOC);
	need(LIBSTDCXX);
	probes__configure(NULL);
	assert_int_equal(probes__choose_files(paths, preload, 3, -1, &lib), 0);
	assert_string_equal(lib.kind, "jemalloc");
	assert_string_equal(lib.path, JEMALLOC);
	for (int fn = 0; fn < MEM_FN__COUNT; fn++) {
		if (fn == MEM_FN_REALLOCARRAY || fn == MEM_FN_PVALLOC)
			/* jemalloc has none: libc's are what the program binds to */
			assert_string_equal(kind_for(&lib, fn), "glibc");
		else
			assert_string_equal(kind_for(&lib, fn), "jemalloc");
	}
	/* libstdc++ defines the operators too, but jemalloc binds first */
	for (uint32_t i = 0; i < lib.nobjs; i++)
		assert_string_not_equal(lib.objs[i].kind, "libstdc++");
	assert_string_equal(lib.aliases, "");
}

static void test_jemalloc_beats_libc_without_preload(void **state)
{
	/* redis-server: libjemalloc is a NEEDED library mapped after libc in address order */
	const char *paths[] = { LIBC, JEMALLOC };
	struct alloc_lib lib;

	need(JEMALLOC);
	probes__configure(NULL);
	assert_int_equal(probes__choose_files(paths, NULL, 2, -1, &lib), 0);
	assert_string_equal(lib.kind, "jemalloc");
	assert_string_equal(kind_for(&lib, MEM_FN_MALLOCX), "jemalloc");
	assert_string_equal(kind_for(&lib, MEM_FN_SDALLOCX), "jemalloc");
}

static void test_tcmalloc_aliases(void **state)
{
	const char *paths[] = { TCMALLOC, LIBSTDCXX, LIBC };
	bool preload[] = { true, false, false };
	struct alloc_lib lib;
	int f;

	need(TCMALLOC);
	need(LIBSTDCXX);
	probes__configure(NULL);
	assert_int_equal(probes__choose_files(paths, preload, 3, -1, &lib), 0);
	assert_string_equal(lib.kind, "tcmalloc");
	/* free and operator delete are one function: one probe, counted per caller */
	assert_true(lib.alias_mask[MEM_FN_FREE] & (1u << MEM_FN_OPERATOR_DELETE));
	assert_true(lib.alias_mask[MEM_FN_FREE] & (1u << MEM_FN_OPERATOR_DELETE_ARRAY));
	assert_true(lib.alias_mask[MEM_FN_OPERATOR_NEW] & (1u << MEM_FN_OPERATOR_NEW_ARRAY));
	f = find_cookie(&lib.objs[0], MEM_FN_FREE);
	assert_true(f >= 0);
	assert_true(lib.objs[0].cookies[f] & MEM_COOKIE_CALLER);
	assert_int_equal(find_cookie(&lib.objs[0], MEM_FN_OPERATOR_NEW_ARRAY), -1);
	for (uint32_t i = 0; i < lib.objs[0].nprobes; i++)
		for (uint32_t j = i + 1; j < lib.objs[0].nprobes; j++)
			assert_int_not_equal(lib.objs[0].offsets[i], lib.objs[0].offsets[j]);
}

static void test_mimalloc_leaves_nothrow_delete_to_libstdcxx(void **state)
{
	const char *paths[] = { MIMALLOC, LIBSTDCXX, LIBC };
	bool preload[] = { true, false, false };
	struct alloc_lib lib;

	need(MIMALLOC);
	need(LIBSTDCXX);
	probes__configure(NULL);
	assert_int_equal(probes__choose_files(paths, preload, 3, -1, &lib), 0);
	assert_string_equal(lib.kind, "mimalloc");
	assert_string_equal(kind_for(&lib, MEM_FN_OPERATOR_NEW), "mimalloc");
	/* mimalloc has no operator delete(void*, nothrow_t): libstdc++'s serves it */
	assert_true(lib.nobjs >= 2);
	assert_string_equal(lib.objs[1].kind, "libstdc++");
	assert_true(lib.alias_mask[MEM_FN_FREE] & (1u << MEM_FN_OPERATOR_DELETE));
}

static void test_options_override(void **state)
{
	const char *paths[] = { JEMALLOC, LIBC };
	bool preload[] = { true, false };
	struct probes_opts o = { .allocator = "glibc" };
	struct alloc_lib lib;

	need(JEMALLOC);
	probes__configure(&o);
	assert_int_equal(probes__choose_files(paths, preload, 2, -1, &lib), 0);
	assert_string_equal(lib.kind, "glibc");
	assert_string_equal(kind_for(&lib, MEM_FN_MALLOC), "glibc");
	assert_string_equal(kind_for(&lib, MEM_FN_MALLOCX), "jemalloc");

	o = (struct probes_opts){ .allocator = "tcmalloc" };
	probes__configure(&o);
	assert_int_equal(probes__choose_files(paths, preload, 2, -1, &lib), -ENOPKG);
	assert_non_null(strstr(probes__last_error(), "no tcmalloc allocator"));

	o = (struct probes_opts){ .lib = LIBC };
	probes__configure(&o);
	assert_int_equal(probes__choose_files(paths, preload, 2, -1, &lib), 0);
	assert_string_equal(lib.path, LIBC);

	o = (struct probes_opts){ .lib = "/nonexistent/libfoo.so" };
	probes__configure(&o);
	assert_int_equal(probes__choose_files(paths, preload, 2, -1, &lib), -ENOPKG);
	assert_non_null(strstr(probes__last_error(), "--lib /nonexistent/libfoo.so"));

	/* Debian's jemalloc has no je_ names */
	o = (struct probes_opts){ .prefix = "je_" };
	probes__configure(&o);
	assert_int_equal(probes__choose_files(paths, preload, 2, -1, &lib), -ENOPKG);
	assert_non_null(strstr(probes__last_error(), "je_malloc"));
	assert_int_equal(probes__fn_of_symbol("je_sdallocx"), MEM_FN_SDALLOCX);
	probes__configure(NULL);
}

static void test_fn_of_symbol(void **state)
{
	probes__configure(NULL);
	assert_int_equal(probes__fn_of_symbol("malloc"), MEM_FN_MALLOC);
	assert_int_equal(probes__fn_of_symbol("_ZdlPvm"), MEM_FN_OPERATOR_DELETE);
	assert_int_equal(probes__fn_of_symbol("_ZnamSt11align_val_tRKSt9nothrow_t"),
			 MEM_FN_OPERATOR_NEW_ARRAY);
	assert_int_equal(probes__fn_of_symbol("_ZdaPv"), MEM_FN_OPERATOR_DELETE_ARRAY);
	assert_int_equal(probes__fn_of_symbol("tc_malloc"), -1);
	assert_int_equal(probes__fn_of_symbol("je_malloc"), -1);
	assert_false(probes__valid_kind("ptmalloc"));
	assert_true(probes__valid_kind("mimalloc"));
}

/* The symbols a file defines are kept by file (device, inode, size, mtime): the same path
 * holding another library since is scanned again (jemalloc, then tcmalloc copied over it). */
static void test_symbols_kept_by_file(void **state)
{
	const char *out = getenv("OUT");
	char path[4096], cmd[8400];
	const char *paths[1] = { path };
	struct alloc_lib lib;
	int fd;

	need(JEMALLOC);
	need(TCMALLOC);
	snprintf(path, sizeof(path), "%s/fixtures/liballoc-memo.XXXXXX", out ? out : "build");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	probes__configure(NULL);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", JEMALLOC, path);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < 2; i++) {		/* read, then kept */
		assert_int_equal(probes__choose_files(paths, NULL, 1, -1, &lib), 0);
		assert_string_equal(lib.kind, "jemalloc");
	}
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", TCMALLOC, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(probes__choose_files(paths, NULL, 1, -1, &lib), 0);
	assert_string_equal(lib.kind, "tcmalloc");
	unlink(path);
}

/* "did you mean" for u:LIB:FUNC: the closest function of the object (versions aside), none when
 * nothing is close or the name is there ("no function 'mallco'" named no function before). */
static void test_close_function(void **state)
{
	char near[256];

	(void)state;
	assert_int_equal(util_edit_distance("mallco", "malloc"), 2);
	assert_int_equal(util_edit_distance("", "abc"), 3);
	assert_int_equal(sym_elf_close_function(LIBC, "mallco", near, sizeof(near)), 0);
	assert_string_equal(near, "malloc");
	/* a versioned one (memcpy@@GLIBC_2.14 in .dynsym of some builds) by its plain name */
	assert_int_equal(sym_elf_close_function(LIBC, "memcpyy", near, sizeof(near)), 0);
	assert_string_equal(near, "memcpy");
	assert_int_equal(sym_elf_close_function(LIBC, "malloc", near, sizeof(near)), -ENOENT);
	assert_int_equal(sym_elf_close_function(LIBC, "no_such_function_near_anything", near,
						sizeof(near)), -ENOENT);
	assert_int_equal(sym_elf_close_function("/nonexistent", "malloc", near, sizeof(near)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_glibc_in_self),
		cmocka_unit_test(test_no_two_probes_at_one_address),
		cmocka_unit_test(test_aliases_are_reported),
		cmocka_unit_test(test_close_function),
		cmocka_unit_test(test_free_probe_skips_single_stepped_test),
		cmocka_unit_test(test_gone_process),
		cmocka_unit_test(test_glibc_and_libstdcxx),
		cmocka_unit_test(test_preloaded_jemalloc_serves_everything),
		cmocka_unit_test(test_jemalloc_beats_libc_without_preload),
		cmocka_unit_test(test_tcmalloc_aliases),
		cmocka_unit_test(test_mimalloc_leaves_nothrow_delete_to_libstdcxx),
		cmocka_unit_test(test_options_override),
		cmocka_unit_test(test_fn_of_symbol),
		cmocka_unit_test(test_symbols_kept_by_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
