/* Probe placement against the real kernel (root): for every allocator entry point of glibc,
 * jemalloc, tcmalloc, mimalloc and libstdc++, tests/fixtures/placement_driver loads the
 * library, puts a counting uprobe (perf uprobe event) where core/placement.c chose, and
 * calls the function a known number of times, NULL frees included: the probe must fire
 * exactly once a call, and where it moved, a uprobe at the entry must count the same.
 * The driver also tells, without timing, whether the kernel emulated the probed instruction
 * or single-stepped it (the first single-step maps the "[uprobes]" area): the point must be
 * emulated, a moved-from entry single-stepped. It runs on private copies of the libraries
 * (ld.so --library-path), so that other tracers' uprobes on the shared files, which are
 * per inode, cannot single-step it.
 */
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
#include "core/placement.h"
#include "symbolize/symbolize.h"
#include "../unit/alloc_fns.h"

#define CALLS 1000
#define LOADER "/lib64/ld-linux-x86-64.so.2"

static const char *const deps[] = {	/* what the allocators need besides libc */
	"/lib/x86_64-linux-gnu/libm.so.6",
	"/lib/x86_64-linux-gnu/libgcc_s.so.1",
};

static char dir[] = "/tmp/ebprof-placement.XXXXXX";

static const char *base(const char *path)
{
	return strrchr(path, '/') + 1;
}

static int copy_in(const char *path)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/%s'", path, dir, base(path));
	return system(cmd);
}

static int setup(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	for (size_t i = 0; i < TEST_NLIBS; i++)
		if (!access(test_alloc_libs[i], R_OK) && copy_in(test_alloc_libs[i]))
			return -1;
	for (size_t i = 0; i < sizeof(deps) / sizeof(deps[0]); i++)
		if (!access(deps[i], R_OK) && copy_in(deps[i]))
			return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

struct run {
	int calls;
	unsigned long hits_point, hits_entry;
	int xol_point, xol_entry, xol_control;
};

static void drive(const char *lib, const struct alloc_fn *fn, uint64_t point, uint64_t entry,
		  struct run *r)
{
	const char *fix = getenv("FIX");
	char cmd[2048], preload[1100] = "", line[256] = "";
	FILE *p;

	if (strcmp(base(lib), "libc.so.6"))	/* the allocator serves the whole driver */
		snprintf(preload, sizeof(preload), "--preload '%s/%s'", dir, base(lib));
	snprintf(cmd, sizeof(cmd), "%s --library-path '%s' %s '%s/placement_driver' '%s/%s' %s %d "
		 "%#lx %#lx", LOADER, dir, preload, fix ? fix : "build/fixtures", dir, base(lib),
		 fn->name, fn->kind, (unsigned long)point, (unsigned long)entry);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(line, sizeof(line), p))
		line[0] = 0;
	if (pclose(p))
		fail_msg("%s failed", cmd);
	memset(r, 0, sizeof(*r));
	if (sscanf(line, "calls %d point %lu %d entry %lu %d control %d", &r->calls,
		   &r->hits_point, &r->xol_point, &r->hits_entry, &r->xol_entry,
		   &r->xol_control) != 6 && r->calls != -1)
		fail_msg("%s: unexpected output '%s'", cmd, line);
}

static void test_counts_exact_at_every_placement(void **state)
{
	int libs = 0;

	if (geteuid() != 0 || access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		print_message("  needs root and the uprobe perf PMU: skipped\n");
		skip();
	}
	for (size_t l = 0; l < TEST_NLIBS; l++) {
		const char *lib = test_alloc_libs[l];
		struct placer *pl;
		int moved = 0, n = 0;

		if (access(lib, R_OK)) {
			print_message("  %s: not installed (scripts/install-deps.sh)\n", lib);
			continue;
		}
		libs++;
		pl = placer__new(lib);
		assert_non_null(pl);
		for (size_t i = 0; i < TEST_NFNS; i++) {
			const struct alloc_fn *fn = &test_alloc_fns[i];
			struct placement p;
			struct run r;
			uint64_t off;

			if (sym_elf_symbol_offset(lib, fn->name, &off))
				continue;
			assert_int_equal(placer__place(pl, off, 0, placement_arg_mask(fn->nargs),
						       test_place_flags(fn), &p), 0);
			drive(lib, fn, p.offset, off, &r);
			if (r.calls < 0)
				continue;	/* nothing to feed it (dallocx without mallocx) */
			n++;
			print_message("  %-26s %-36s %-5s %d calls, %lu hits, %s\n", base(lib),
				      fn->name, p.moved ? "moved" : "entry", r.calls, r.hits_point,
				      r.xol_control ? "fate not told (the calls single-step without "
				      "a probe of ours)" : r.xol_point ? "single-stepped" : "emulated");
			assert_int_equal(r.calls, CALLS);
			assert_int_equal(r.hits_point, CALLS);
			if (p.moved) {
				moved++;
				assert_int_equal(r.hits_entry, CALLS);
			}
			if (r.xol_control)
				continue;
			if (p.moved || p.entry_fate == INSN_EMULATED)
				assert_int_equal(r.xol_point, 0);	/* the kernel emulated it */
			else
				assert_int_equal(r.xol_point, 1);	/* and single-stepped this */
			if (p.moved)
				assert_int_equal(r.xol_entry, 1);	/* as it does the entry */
		}
		placer__free(pl);
		print_message("  %s: %d entry points, every count exact, %d probed past the "
			      "entry\n", lib, n, moved);
		assert_true(n > 0);
	}
	assert_true(libs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_exact_at_every_placement),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
