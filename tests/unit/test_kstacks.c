/* Kernel symbols with their regions (core kernel text and init text, modules with and without
 * their bounds from a modules list, BPF programs) from hand-written kallsyms files, and
 * core/stacks.c: the stack table, kernel and user frames as profile locations, named frames.
 * No root, no BPF: the table is filled through stack_table__add, user frames come from this
 * test's own process. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/stacks.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

#include "golden.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 t helper\n"
	"ffffffff81000100 T helper_alias\n"
	"ffffffff81000200 T __ia32_sys_getppid\n"
	"ffffffff81000200 T __x64_sys_getppid\n"
	"ffffffff81000300 T do_sys_open\n"
	"ffffffff81000400 T vfs_read\n"
	"ffffffff81000500 T _etext\n"
	"ffffffff81000600 D some_data\n"
	"ffffffff81100000 T _sinittext\n"
	"ffffffff81100010 t early_setup\n"
	"ffffffff81100100 T _einittext\n"
	"ffffffffa0000b4c t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n"
	"ffffffffa0001000 t bpf_prog_0123456789abcdef_handle\t[bpf]\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"
	"ffffffffc0001100 T mod_fn2\t[mymod]\n"
	"ffffffffc0001000 d mod_data\t[mymod]\n"
	"ffffffffc0008000 t other_fn\t[other]\n";

static const char modules[] =
	"mymod 8192 0 - Live 0xffffffffc0001000\n"
	"nosyms 4096 0 - Live 0xffffffffc0010000 (O)\n"
	"garbage line\n";

static char dir[PATH_MAX - 16], ks_path[PATH_MAX], mod_path[PATH_MAX];

static int setup(void **state)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/tests/ksyms-XXXXXX", out_dir());
	if (!mkdtemp(dir))
		return -1;
	snprintf(ks_path, sizeof(ks_path), "%s/kallsyms", dir);
	snprintf(mod_path, sizeof(mod_path), "%s/modules", dir);
	f = fopen(ks_path, "w");
	if (!f)
		return -1;
	fputs(kallsyms, f);
	fclose(f);
	f = fopen(mod_path, "w");
	if (!f)
		return -1;
	fputs(modules, f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	unlink(ks_path);
	unlink(mod_path);
	rmdir(dir);
	return 0;
}

/* ---- kallsyms ------------------------------------------------------------------------ */

static void test_core_regions(void **state)
{
	struct ksyms *k = ksyms__load(ks_path);
	struct ksym_info ki;
	uint64_t off, s, e;
	const char *mod = "x";

	assert_non_null(k);
	assert_null(ksyms__resolve(k, 0xffffffff80ffffffULL, &off));
	assert_string_equal(ksyms__resolve_mod(k, 0xffffffff81000110ULL, &off, &mod),
			    "helper_alias");
	assert_int_equal(off, 0x10);
	assert_null(mod);
	assert_string_equal(ksyms__resolve(k, 0xffffffff810004ffULL, &off), "vfs_read");
	/* one body for both entry points: the 64-bit one's name, as perf gives (the ia32
	 * one's won alphabetically) */
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000208ULL, &off), "__x64_sys_getppid");
	/* past _etext: data, not vfs_read */
	assert_null(ksyms__resolve(k, 0xffffffff81000500ULL, &off));
	assert_null(ksyms__resolve(k, 0xffffffff81000610ULL, &off));
	/* init text, then past its end */
	assert_string_equal(ksyms__resolve(k, 0xffffffff81100020ULL, &off), "early_setup");
	assert_null(ksyms__resolve(k, 0xffffffff81100100ULL, &off));
	assert_int_equal(ksyms__lookup(k, 0xffffffff81100200ULL, &ki), -ENOENT);
	assert_null(ki.module);
	assert_int_equal(ki.start, 0);
	assert_int_equal(ki.end, 0);

	assert_int_equal(ksyms__lookup(k, 0xffffffff81000310ULL, &ki), 0);
	assert_string_equal(ki.name, "do_sys_open");
	assert_int_equal(ki.start, 0xffffffff81000000ULL);
	assert_int_equal(ki.end, 0xffffffff81100100ULL);
	ksyms__core_bounds(k, &s, &e);
	assert_int_equal(s, 0xffffffff81000000ULL);
	assert_int_equal(e, 0xffffffff81100100ULL);
	ksyms__core_bounds(NULL, &s, &e);
	assert_int_equal(e, 0);
	assert_int_equal(ksyms__lookup(NULL, 1, &ki), -ENOENT);
	ksyms__free(k);
}

static void test_bpf_and_modules(void **state)
{
	struct ksyms *k = ksyms__load(ks_path);
	struct ksym_info ki;
	const char *mod;
	uint64_t off;

	assert_non_null(k);
	assert_string_equal(ksyms__resolve_mod(k, 0xffffffffa0000b60ULL, &off, &mod),
			    "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	assert_string_equal(mod, "bpf");
	assert_int_equal(off, 0x14);
	assert_int_equal(ksyms__lookup(k, 0xffffffffa0001004ULL, &ki), 0);
	assert_string_equal(ki.name, "bpf_prog_0123456789abcdef_handle");
	assert_int_equal(ki.start, 0xffffffffa0000b4cULL);

	assert_string_equal(ksyms__resolve_mod(k, 0xffffffffc0001004ULL, &off, &mod), "mod_fn");
	assert_string_equal(mod, "mymod");
	assert_int_equal(off, 4);
	/* without the module list, the last function of a module extends to the next symbol */
	assert_string_equal(ksyms__resolve_mod(k, 0xffffffffc0003000ULL, &off, &mod), "mod_fn2");
	assert_string_equal(ksyms__resolve_mod(k, 0xffffffffc0008010ULL, &off, &mod), "other_fn");
	assert_string_equal(mod, "other");
	ksyms__free(k);

	/* with it, a module ends where its size says, and a module without text symbols is
	 * still known as itself */
	k = ksyms__load_paths(ks_path, mod_path);
	assert_non_null(k);
	assert_string_equal(ksyms__resolve_mod(k, 0xffffffffc0002fffULL, &off, &mod), "mod_fn2");
	assert_string_equal(mod, "mymod");
	assert_int_equal(ksyms__lookup(k, 0xffffffffc0001100ULL, &ki), 0);
	assert_int_equal(ki.start, 0xffffffffc0001000ULL);
	assert_int_equal(ki.end, 0xffffffffc0003000ULL);
	assert_int_equal(ksyms__lookup(k, 0xffffffffc0003000ULL, &ki), -ENOENT);
	assert_null(ki.name);
	assert_int_equal(ksyms__lookup(k, 0xffffffffc0010010ULL, &ki), -ENOENT);
	assert_string_equal(ki.module, "nosyms");
	assert_int_equal(ki.start, 0xffffffffc0010000ULL);
	assert_int_equal(ki.end, 0xffffffffc0011000ULL);
	ksyms__free(k);

	/* an unreadable module list is no error */
	k = ksyms__load_paths(ks_path, "/nonexistent/modules");
	assert_non_null(k);
	ksyms__free(k);
}

/* ---- stacks: the table ------------------------------------------------------------------ */

static void test_stack_table(void **state)
{
	struct stack_table *t = stack_table__new();
	struct stack_trace st = { .nr = 3, .ips = { 1, 2, 3 } };
	const struct stack_trace *got;

	assert_non_null(t);
	assert_null(stack_table__get(t, 42));
	assert_int_equal(stack_table__add(t, 42, &st), 0);
	assert_int_equal(stack_table__add(t, 0, &st), 0);	/* "no stack": not kept */
	assert_int_equal(stack_table__count(t), 1);
	got = stack_table__get(t, 42);
	assert_non_null(got);
	assert_int_equal(got->nr, 3);
	assert_int_equal(got->ips[2], 3);
	assert_null(stack_table__get(t, 0));
	/* the same hash again replaces its stack */
	st.nr = 1;
	st.ips[0] = 9;
	assert_int_equal(stack_table__add(t, 42, &st), 0);
	assert_int_equal(stack_table__count(t), 1);
	assert_int_equal(stack_table__get(t, 42)->ips[0], 9);
	/* many, through several growths; hashes that differ in high bits only */
	for (uint64_t i = 1; i <= 5000; i++) {
		st.nr = i % STACK_MAX_DEPTH + 1;
		st.ips[0] = i;
		assert_int_equal(stack_table__add(t, i << 40, &st), 0);
	}
	assert_int_equal(stack_table__count(t), 5001);
	for (uint64_t i = 1; i <= 5000; i++) {
		got = stack_table__get(t, i << 40);
		assert_non_null(got);
		assert_int_equal(got->ips[0], i);
		assert_int_equal(got->nr, i % STACK_MAX_DEPTH + 1);
	}
	assert_null(stack_table__get(t, 5001ULL << 40));
	/* a depth past the limit is cut to it */
	st.nr = 1000;
	assert_int_equal(stack_table__add(t, 7, &st), 0);
	assert_int_equal(stack_table__get(t, 7)->nr, STACK_MAX_DEPTH);
	stack_table__free(t);
	stack_table__free(NULL);
	assert_int_equal(stack_table__add(NULL, 1, &st), -EINVAL);
	assert_int_equal(stack_table__read(NULL, -1), -EINVAL);
}

/* ---- stacks: locations ------------------------------------------------------------------ */

static const char *map_file(const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	return l->mapping == PROF_NONE ? NULL : p->mappings[l->mapping].file;
}

static const char *fn_name(const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	return l->nlines ? p->functions[l->lines[0].function].name : NULL;
}

static void test_kernel_locs(void **state)
{
	struct ksyms *k = ksyms__load_paths(ks_path, mod_path);
	struct profile *p = profile__new("cpu");
	/* exact leaf in vfs_read; a return address at the start of vfs_read (the call was the
	 * last instruction of do_sys_open); a module, a BPF program, nothing known */
	const __u64 ips[] = { 0xffffffff81000410ULL, 0xffffffff81000400ULL,
			      0xffffffffc0001108ULL, 0xffffffffa0000b60ULL,
			      0xffffffff81000600ULL };
	uint32_t locs[8], n;

	assert_non_null(k);
	assert_non_null(p);
	n = stacks__kernel_locs(p, k, ips, 5, locs);
	assert_int_equal(n, 5);
	assert_string_equal(fn_name(p, locs[0]), "vfs_read");
	assert_string_equal(fn_name(p, locs[1]), "do_sys_open");
	assert_int_equal(p->locations[locs[1]].address, 0xffffffff81000400ULL);
	assert_string_equal(map_file(p, locs[0]), STACKS_KERNEL_MAPPING);
	assert_int_equal(p->locations[locs[0]].module_offset, 0x410);
	assert_string_equal(fn_name(p, locs[2]), "mod_fn2");
	assert_string_equal(map_file(p, locs[2]), "[mymod]");
	assert_int_equal(p->locations[locs[2]].module_offset, 0x108);
	assert_string_equal(fn_name(p, locs[3]), "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	assert_string_equal(map_file(p, locs[3]), "[bpf]");
	assert_null(fn_name(p, locs[4]));
	assert_string_equal(map_file(p, locs[4]), STACKS_KERNEL_MAPPING);
	/* one core kernel mapping for named and unnamed frames alike */
	assert_int_equal(p->locations[locs[0]].mapping, p->locations[locs[4]].mapping);
	for (uint32_t i = 0; i < n; i++)
		assert_true(profile__location_is_kernel(p, &p->locations[locs[i]]));
	/* the same frames again are the same locations */
	{
		uint32_t again[8];

		assert_int_equal(stacks__kernel_locs(p, k, ips, 5, again), 5);
		assert_memory_equal(locs, again, 5 * sizeof(*locs));
	}

	/* without symbols: bare addresses under the kernel mapping */
	n = stacks__kernel_locs(p, NULL, ips, 2, locs);
	assert_int_equal(n, 2);
	assert_string_equal(map_file(p, locs[0]), STACKS_KERNEL_MAPPING);
	assert_int_equal(p->locations[locs[0]].nlines, 0);
	assert_int_equal(p->locations[locs[1]].address, 0xffffffff81000400ULL);
	profile__free(p);
	ksyms__free(k);
}

/* A key's stacks (stacks__key_locs): tracepoint and uprobe programs capture their kernel stack
 * from inside the tracing machinery; those leading frames are left out when asked, and the
 * first frame after them is a return address (looked up at ip - 1), not where the event hit. */
static void test_key_locs_strip_tracing(void **state)
{
	struct ksyms *k = ksyms__load_paths(ks_path, mod_path);
	struct profile *p = profile__new("stacks");
	struct stack_table *t = stack_table__new();
	struct stack_trace kst = { .nr = 2, .ips = { 0xffffffffa0001010ULL,
						     0xffffffff81000400ULL } };
	struct stack_trace only = { .nr = 1, .ips = { 0xffffffffa0001010ULL } };
	struct stack_key key = { .tgid = 1, .kstack = 7 };
	uint32_t locs[2 * STACK_MAX_DEPTH], n;

	assert_non_null(k);
	assert_non_null(p);
	assert_non_null(t);
	assert_int_equal(stack_table__add(t, 7, &kst), 0);
	assert_int_equal(stack_table__add(t, 8, &only), 0);
	assert_int_equal(stacks__tracing_frames(k, kst.ips, 2), 1);
	/* kept: the program's frame, then the return address into do_sys_open */
	n = stacks__key_locs(p, t, k, NULL, 1, &key, false, locs);
	assert_int_equal(n, 2);
	assert_string_equal(fn_name(p, locs[0]), "bpf_prog_0123456789abcdef_handle");
	assert_string_equal(fn_name(p, locs[1]), "do_sys_open");
	/* stripped: do_sys_open still (at ip - 1), not vfs_read (at ip) */
	n = stacks__key_locs(p, t, k, NULL, 1, &key, true, locs);
	assert_int_equal(n, 1);
	assert_string_equal(fn_name(p, locs[0]), "do_sys_open");
	/* a stack of nothing but machinery is kept whole */
	key.kstack = 8;
	assert_int_equal(stacks__tracing_frames(k, only.ips, 1), 0);
	n = stacks__key_locs(p, t, k, NULL, 1, &key, true, locs);
	assert_int_equal(n, 1);
	/* no stacks at all: no frames */
	key.kstack = 0;
	assert_int_equal(stacks__key_locs(p, t, k, NULL, 1, &key, true, locs), 0);
	/* stacks the table does not have (taken from the map while a count referred to them):
	 * said by a frame each, never shown as a shorter stack */
	key.kstack = 99;
	key.ustack = 98;
	n = stacks__key_locs(p, t, k, NULL, 1, &key, true, locs);
	assert_int_equal(n, 2);
	assert_string_equal(fn_name(p, locs[0]), "[stack lost]");
	assert_string_equal(fn_name(p, locs[1]), "[stack lost]");
	stack_table__free(t);
	profile__free(p);
	ksyms__free(k);
}

static void test_named_loc(void **state)
{
	struct profile *p = profile__new("cpu");
	uint32_t a = stacks__named_loc(p, "demo"), b = stacks__named_loc(p, "worker [12]");

	assert_int_not_equal(a, PROF_NONE);
	assert_int_not_equal(b, PROF_NONE);
	assert_int_not_equal(a, b);
	/* no made-up address: 0, which no code has; the names keep them apart */
	assert_int_equal(p->locations[a].address, 0);
	assert_int_equal(p->locations[b].address, 0);
	assert_true(profile__location_is_synthetic(&p->locations[a]));
	assert_true(profile__location_is_synthetic(&p->locations[b]));
	assert_int_equal(stacks__named_loc(p, "demo"), a);
	assert_string_equal(fn_name(p, a), "demo");
	assert_int_equal(p->locations[a].mapping, PROF_NONE);
	assert_false(profile__location_is_kernel(p, &p->locations[a]));
	profile__free(p);
}

/* data of this process (a mapping that is not code) */
static uint64_t user_locs_data[4];

/* the value of drop `key` in p, 0 when not listed */
static uint64_t drop_of(const struct profile *p, const char *key)
{
	for (size_t i = 0; i < p->ndrops; i++)
		if (!strcmp(p->drops[i].key, key))
			return p->drops[i].value;
	return 0;
}

/* Frames of this process: where the caller is, and return addresses. */
__attribute__((noinline)) uint64_t kstacks_leaf(void)
{
	uint64_t ra = (uint64_t)(uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return ra;
}

static void test_user_locs(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct sym_proc *sp;
	struct profile *p = profile__new("cpu");
	__u64 ips[5];
	uint32_t locs[5], n;

	assert_non_null(sym);
	sp = symbolizer__load_pid(sym, getpid());
	assert_non_null(sp);
	ips[0] = (uint64_t)(uintptr_t)kstacks_leaf;	/* exact: the function's first byte */
	ips[1] = kstacks_leaf();				/* follows a call */
	ips[2] = (uint64_t)(uintptr_t)kstacks_leaf + 1;	/* follows no call: the end */
	ips[3] = ips[1];
	n = stacks__user_locs(p, sp, getpid(), ips, 4, true, locs);
	assert_int_equal(n, 3);
	assert_int_equal(drop_of(p, STACKS_DROP_OUTSIDE), 0);
	assert_string_equal(fn_name(p, locs[0]), "kstacks_leaf");
	assert_int_equal(p->locations[locs[0]].address, ips[0]);
	assert_string_equal(fn_name(p, locs[1]), "test_user_locs");
	assert_int_equal(p->mappings[p->locations[locs[1]].mapping].pid, getpid());
	assert_false(profile__location_is_kernel(p, &p->locations[locs[1]]));
	/* what a frame-pointer walk read past code without frame pointers is not the callers:
	 * the stack ends, said ("[truncated]", never as if test_user_locs were the outermost
	 * frame) and counted, apart from the stacks that end outside code */
	assert_string_equal(fn_name(p, locs[2]), "[truncated]");
	assert_int_equal(drop_of(p, STACKS_DROP_FP_BROKEN), 1);

	/* a return address in no mapping, or in one that is not code (a library unmapped
	 * between two snapshots, its range read as another file's data): the stack ends there,
	 * said, never a frame left out with the ones after it kept (they were dropped, and the
	 * stack read as test_user_locs calling kstacks_leaf's caller) */
	ips[2] = 0x10;
	ips[3] = ips[1];
	n = stacks__user_locs(p, sp, getpid(), ips, 4, true, locs);
	assert_int_equal(n, 3);
	assert_string_equal(fn_name(p, locs[1]), "test_user_locs");
	assert_string_equal(fn_name(p, locs[2]), "[truncated]");
	/* each stack so ended is counted (every limit hit is a drop) */
	assert_int_equal(drop_of(p, STACKS_DROP_OUTSIDE), 1);
	ips[2] = (uint64_t)(uintptr_t)&user_locs_data;
	n = stacks__user_locs(p, sp, getpid(), ips, 4, true, locs);
	assert_int_equal(n, 3);
	assert_string_equal(fn_name(p, locs[2]), "[truncated]");
	assert_int_equal(drop_of(p, STACKS_DROP_OUTSIDE), 2);
	/* where the thread was, in no code: a bare address, and the stack goes on */
	n = stacks__user_locs(p, sp, getpid(), ips + 2, 2, true, locs);
	assert_int_equal(n, 2);
	assert_int_equal(drop_of(p, STACKS_DROP_OUTSIDE), 2);
	assert_int_equal(p->locations[locs[0]].address, ips[2]);
	assert_null(fn_name(p, locs[0]));
	assert_string_equal(fn_name(p, locs[1]), "test_user_locs");
	ips[2] = 0x10;
	ips[4] = ips[1];

	/* not exact: the first frame is a return address too, looked up at address - 1 */
	n = stacks__user_locs(p, sp, getpid(), ips + 1, 1, false, locs);
	assert_int_equal(n, 1);
	assert_string_equal(fn_name(p, locs[0]), "test_user_locs");

	/* named again (from the memo of return addresses): the same locations; a first frame
	 * is not a caller's return address, so the memo does not answer for it */
	{
		uint32_t again[5];

		ips[2] = (uint64_t)(uintptr_t)kstacks_leaf + 1;
		ips[3] = ips[1];
		n = stacks__user_locs(p, sp, getpid(), ips, 4, true, locs);
		assert_int_equal(n, 3);
		assert_int_equal(stacks__user_locs(p, sp, getpid(), ips, 4, true, again), 3);
		assert_memory_equal(again, locs, 3 * sizeof(*locs));
		assert_int_equal(stacks__user_locs(p, sp, getpid(), ips + 1, 2, true, again), 2);
		assert_int_equal(p->locations[again[0]].address, ips[1]);
		assert_string_equal(fn_name(p, again[1]), "[truncated]");
		/* the same addresses of another pid through the same symbols: that pid's mapping,
		 * not the last pid's location */
		assert_int_equal(stacks__user_locs(p, sp, 1, ips, 2, true, again), 2);
		assert_int_equal(p->mappings[p->locations[again[1]].mapping].pid, 1);
		assert_int_not_equal(again[1], locs[1]);
		ips[2] = 0x10;
		ips[4] = ips[1];
	}

	/* without the process's mappings: every frame as a bare address */
	n = stacks__user_locs(p, NULL, 1, ips, 5, true, locs);
	assert_int_equal(n, 5);
	assert_int_equal(p->locations[locs[2]].address, 0x10);
	assert_int_equal(p->locations[locs[2]].mapping, PROF_NONE);
	sym_proc__free(sp);
	symbolizer__free(sym);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_regions),
		cmocka_unit_test(test_bpf_and_modules),
		cmocka_unit_test(test_stack_table),
		cmocka_unit_test(test_kernel_locs),
		cmocka_unit_test(test_key_locs_strip_tracing),
		cmocka_unit_test(test_named_loc),
		cmocka_unit_test(test_user_locs),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, setup, teardown);
}
