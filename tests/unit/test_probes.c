/* Unit tests of allocator discovery (core/probes.c) on this very process: no root needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/probes.h"
#include "symbolize/symbolize.h"

static int find_cookie(const struct alloc_lib *lib, enum mem_fn fn)
{
	for (uint32_t i = 0; i < lib->nprobes; i++)
		if (lib->cookies[i] == fn)
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
	/* every function of the family has a probe, except aliases */
	for (int fn = 0; fn < MEM_FN__COUNT; fn++) {
		if (fn == MEM_FN_ALIGNED_ALLOC && strstr(lib.aliases, "aligned_alloc=memalign"))
			continue;
		assert_true(find_cookie(&lib, fn) >= 0);
	}
	/* free has no return probe; every other probe has one */
	assert_int_equal(lib.nret, lib.nprobes - 1);
	for (uint32_t i = 0; i < lib.nret; i++)
		assert_int_not_equal(lib.ret_cookies[i], MEM_FN_FREE);
}

static void test_no_two_probes_at_one_address(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	for (uint32_t i = 0; i < lib.nprobes; i++)
		for (uint32_t j = i + 1; j < lib.nprobes; j++)
			assert_int_not_equal(lib.offsets[i], lib.offsets[j]);
}

static void test_aliases_are_reported(void **state)
{
	uint64_t a, m;
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	assert_int_equal(sym_elf_symbol_offset(lib.open_path, "aligned_alloc", &a), 0);
	assert_int_equal(sym_elf_symbol_offset(lib.open_path, "memalign", &m), 0);
	if (a != m)
		skip();		/* a libc where they are distinct functions: nothing to merge */
	assert_string_equal(lib.aliases, "aligned_alloc=memalign");
	assert_int_equal(find_cookie(&lib, MEM_FN_ALIGNED_ALLOC), -1);
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
	i = find_cookie(&lib, MEM_FN_FREE);
	assert_true(i >= 0);
	f = fopen(lib.open_path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, sym, SEEK_SET), 0);
	assert_int_equal(fread(code, 1, 3, f), 3);
	fclose(f);
	if (code[0] == 0x48 && code[1] == 0x85 && code[2] == 0xff)
		assert_int_equal(lib.offsets[i], sym + 3);	/* test %rdi,%rdi: placed past it */
	else
		assert_int_equal(lib.offsets[i], sym);
}

static void test_gone_process(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(999999, &lib), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_glibc_in_self),
		cmocka_unit_test(test_no_two_probes_at_one_address),
		cmocka_unit_test(test_aliases_are_reported),
		cmocka_unit_test(test_free_probe_skips_single_stepped_test),
		cmocka_unit_test(test_gone_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
