/* Every renderer on a kernel-allocation profile as `ebprof kmem` makes it: text, JSON, CSV and
 * folded byte for byte against tests/golden/kmem.* (UPDATE_GOLDEN=1 rewrites them), with the
 * facts the kmem report promises checked by name: processes[].kmem, caches[] and waste_space
 * in JSON; the stacks by bytes and by count, the slab cache table with its waste, the sizes and
 * the outstanding allocations in text; and pprof back through our reader (caches are ours
 * only). */
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

#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"

static struct prof_sample *kmem_sample(struct profile *p, const uint32_t *locs, uint32_t n,
				       int64_t allocs, int64_t bytes, int64_t live,
				       int64_t live_bytes, int64_t waste, uint32_t pid)
{
	int64_t v[5] = { allocs, bytes, live, live_bytes, waste };
	struct prof_sample *s = profile__add_sample(p, locs, n, v, pid);

	assert_non_null(s);
	return s;
}

static void kstat(struct profile *p, struct prof_process *proc, const char *k, uint64_t v)
{
	assert_int_equal(prof_process__add_stat(p, proc, k, v), 0);
}

static struct profile *kmem_fixture(void)
{
	struct profile *p = profile__new("kmem");
	uint32_t m_fix, m_libc, m_kernel;
	uint32_t l_filp, l_kmalloc, l_page, l_cache_alloc, l_alloc_file, l_path_openat;
	uint32_t l_openat2, l_pipe2, l_kmalloc_k, l_entry, l_syscall, l_do_opens, l_do_pipes;
	uint32_t l_main, l_fault;
	struct prof_process *proc;
	struct prof_sample *s;
	uint64_t hist_opens[24] = { [8] = 10000 }, hist_pipes[24] = { [8] = 2000 };
	uint64_t hist_km[24] = { [9] = 1000, [10] = 1000 }, hist_page[24] = { [13] = 3 };
	uint64_t hist_kw[24] = { [8] = 4 };
	struct prof_cache caches[] = {
		{ "filp", 100, 12000, 10000, 12000 * 192, 12000 * 192, 2000 },
		{ "kmalloc-512", 100, 1000, 0, 1000 * 320, 1000 * 512, 1000 },
		{ "kmalloc-1024", 100, 1000, 0, 1000 * 640, 1000 * 1024, 1000 },
		{ "filp", 200, 4, 4, 4 * 192, 4 * 192, 0 },
	};

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, NULL, "6.18.0", "ebprof kmem -p 100",
					   1700000000123456789LL, 2000000000LL), 0);
	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__add_type(p, "inuse_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "inuse_space", "bytes"), 0);
	assert_int_equal(profile__add_type(p, "waste_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	assert_int_equal(profile__add_info(p, "traced_for", "2.00 s"), 0);
	assert_int_equal(profile__add_info(p, "allocations", "14007"), 0);

	m_fix = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/kmemfix",
				 NULL);
	m_libc = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_kernel = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82200000, 0,
				    "[kernel.kallsyms]", NULL);

	l_filp = LOC(p, PROF_NONE, 0, 0, { fn(p, "kmem_cache_alloc [filp]",
						"kmem_cache_alloc [filp]", NULL), 0 });
	l_kmalloc = LOC(p, PROF_NONE, 0, 0, { fn(p, "kmalloc", "kmalloc", NULL), 0 });
	l_page = LOC(p, PROF_NONE, 0, 0, { fn(p, "mm_page_alloc [order 0]",
						"mm_page_alloc [order 0]", NULL), 0 });
	l_cache_alloc = LOC(p, m_kernel, 0xffffffff81300100, 0x300100,
			    { fn(p, "kmem_cache_alloc_noprof", "kmem_cache_alloc_noprof", NULL), 0 });
	l_kmalloc_k = LOC(p, m_kernel, 0xffffffff81300200, 0x300200,
			  { fn(p, "__kmalloc_cache_noprof", "__kmalloc_cache_noprof", NULL), 0 });
	l_alloc_file = LOC(p, m_kernel, 0xffffffff81310100, 0x310100,
			   { fn(p, "alloc_empty_file", "alloc_empty_file", NULL), 0 });
	l_path_openat = LOC(p, m_kernel, 0xffffffff81320100, 0x320100,
			    { fn(p, "path_openat", "path_openat", NULL), 0 });
	l_openat2 = LOC(p, m_kernel, 0xffffffff81330100, 0x330100,
			{ fn(p, "do_sys_openat2", "do_sys_openat2", NULL), 0 });
	l_pipe2 = LOC(p, m_kernel, 0xffffffff81340100, 0x340100,
		      { fn(p, "do_pipe2", "do_pipe2", NULL), 0 });
	l_fault = LOC(p, m_kernel, 0xffffffff81350100, 0x350100,
		      { fn(p, "handle_mm_fault", "handle_mm_fault", NULL), 0 });
	l_entry = LOC(p, m_kernel, 0xffffffff81c00087, 0xc00087,
		      { fn(p, "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_after_hwframe",
			   NULL), 0 });
	l_syscall = LOC(p, m_libc, 0x7f0000114a1d, 0x114a1d, { fn(p, "syscall", "syscall", NULL),
							       0 });
	l_do_opens = LOC(p, m_fix, 0x555555555180, 0x1180, { fn(p, "do_opens", "do_opens",
								 "kmemfix.c"), 30 });
	l_do_pipes = LOC(p, m_fix, 0x555555555280, 0x1280, { fn(p, "do_pipes", "do_pipes",
								 "kmemfix.c"), 50 });
	l_main = LOC(p, m_fix, 0x555555555420, 0x1420, { fn(p, "main", "main", "kmemfix.c"), 90 });

	/* the opens: 10000 filps, all freed */
	s = kmem_sample(p, STACK(l_filp, l_cache_alloc, l_alloc_file, l_path_openat, l_openat2,
				 l_entry, l_syscall, l_do_opens, l_main), 10000, 10000 * 192, 0, 0, 0,
			100);
	assert_int_equal(prof_sample__set_hist(p, s, hist_opens, 24), 0);
	/* the pipes, held: their filps and pipe_inode_info, outstanding with ages */
	s = kmem_sample(p, STACK(l_filp, l_cache_alloc, l_alloc_file, l_pipe2, l_entry,
				 l_do_pipes, l_main), 2000, 2000 * 192, 2000, 2000 * 192, 0, 100);
	assert_int_equal(prof_sample__set_hist(p, s, hist_pipes, 24), 0);
	s->out = (struct prof_outstanding){ .count = 2000, .bytes = 2000 * 192,
					    .min_age_ns = 1000000, .max_age_ns = 900000000,
					    .sum_age_ns = 2000ull * 450000000 };
	s = kmem_sample(p, STACK(l_kmalloc, l_kmalloc_k, l_pipe2, l_entry, l_do_pipes, l_main),
			2000, 1000 * 512 + 1000 * 1024, 2000, 1000 * 512 + 1000 * 1024,
			1000 * (512 - 320) + 1000 * (1024 - 640), 100);
	assert_int_equal(prof_sample__set_hist(p, s, hist_km, 24), 0);
	s->out = (struct prof_outstanding){ .count = 2000, .bytes = 1000 * 512 + 1000 * 1024,
					    .min_age_ns = 1000000, .max_age_ns = 900000000,
					    .sum_age_ns = 2000ull * 450000000 };
	/* a page fault's pages: a kernel-only stack of another process */
	s = kmem_sample(p, STACK(l_page, l_fault), 3, 3 * 4096, 0, 0, 0, 200);
	assert_int_equal(prof_sample__set_hist(p, s, hist_page, 24), 0);
	s = kmem_sample(p, STACK(l_filp, l_cache_alloc, l_alloc_file, l_path_openat, l_openat2,
				 l_entry), 4, 4 * 192, 0, 0, 0, 200);
	assert_int_equal(prof_sample__set_hist(p, s, hist_kw, 24), 0);

	proc = profile__add_process(p, 100, "kmemfix", "./kmemfix 10000 1000 hold");
	assert_non_null(proc);
	kstat(p, proc, "kmem_kmalloc", 2000);
	kstat(p, proc, "kmem_kfree", 12);
	kstat(p, proc, "kmem_cache_alloc", 12000);
	kstat(p, proc, "kmem_cache_free", 10000);
	kstat(p, proc, "kmem_page_alloc", 0);
	kstat(p, proc, "kmem_page_free", 0);
	kstat(p, proc, "kmem_percpu_alloc", 0);
	kstat(p, proc, "kmem_percpu_free", 0);
	kstat(p, proc, "kmem_kmalloc_bytes_req", 960000);
	kstat(p, proc, "kmem_bytes_req", 12000 * 192 + 960000);
	kstat(p, proc, "kmem_bytes_alloc", 12000 * 192 + 1536000);
	kstat(p, proc, "kmem_live_count", 4000);
	kstat(p, proc, "kmem_live_bytes", 2000 * 192 + 1536000);
	proc = profile__add_process(p, 200, "kworker/0:1", NULL);
	assert_non_null(proc);
	kstat(p, proc, "kmem_cache_alloc", 4);
	kstat(p, proc, "kmem_page_alloc", 3);
	kstat(p, proc, "kmem_bytes_req", 4 * 192 + 3 * 4096);
	kstat(p, proc, "kmem_bytes_alloc", 4 * 192 + 3 * 4096);
	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++)
		assert_int_equal(profile__add_cache(p, &caches[i]), 0);
	assert_int_equal(profile__add_drop(p, "counts_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "live_table_full", 2), 0);
	assert_int_equal(profile__add_drop(p, "free_unseen", 0), 0);
	assert_int_equal(profile__add_note(p, "2 allocations were not tracked to their free"), 0);
	return p;
}

static char *golden_of(const struct output_ops *ops, const char *golden,
		       const struct output_opts *o)
{
	struct profile *p = kmem_fixture();
	size_t len;
	char *out = render(ops, p, o, &len);

	check_golden(golden, out, len);
	profile__free(p);
	return out;
}

static void test_text(void **state)
{
	struct output_opts o = { .top = 10 };
	char *out = golden_of(&output_text, "tests/golden/kmem.txt", &o);

	assert_non_null(strstr(out, "  Mode:      kmem\n"));
	assert_non_null(strstr(out, "Top 5 allocation sites by bytes\n"));
	assert_non_null(strstr(out, "Top 5 allocation sites by count\n"));
	/* the slab table: summed over processes, with the waste and its share */
	assert_non_null(strstr(out, "Slab caches by bytes allocated (3 of 3; kmalloc by size "
				    "class)\n"));
	assert_non_null(strstr(out, "  kmalloc-1024                   1000          0       1000"
				    "    625.0 KiB   1000.0 KiB    375.0 KiB  37.5%\n"));
	assert_non_null(strstr(out, "  filp                          12004      10004       2000"));
	/* a stack's waste on its line */
	assert_non_null(strstr(out, "#2   1.5 MiB (1536000 bytes) in 2000 allocations, 2000 live "
				    "(1.5 MiB), waste 562.5 KiB (576000 bytes), pid 100 (kmemfix)\n"));
	assert_non_null(strstr(out, "Allocation sizes (bytes requested), every stack\n"));
	assert_non_null(strstr(out, "Outstanding allocations at the end: 4000 objects"));
	/* outstanding stacks whole: the user frames under the deep kernel ones */
	assert_non_null(strstr(out, "do_pipes (kmemfix.c:50)"));
	assert_non_null(strstr(out, "Drops: live_table_full 2"));
	free(out);
}

/* The process table keeps --top: -a over 2 s listed 519 processes unsorted. With more than
 * --top, the most bytes allocated first; the total is every process's. */
static void test_process_top(void **state)
{
	static const struct { uint32_t pid; const char *comm; uint64_t bytes; } procs[] = {
		{ 10, "small", 1000 }, { 20, "large", 3000 }, { 30, "middle", 2000 },
	};
	struct output_opts o = { .top = 2 };
	struct profile *p = profile__new("kmem");
	const char *large, *middle;
	size_t len;
	char *out;

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < 3; i++) {
		struct prof_process *proc = profile__add_process(p, procs[i].pid, procs[i].comm,
								 NULL);

		assert_non_null(proc);
		kstat(p, proc, "kmem_kmalloc", 1);
		kstat(p, proc, "kmem_bytes_alloc", procs[i].bytes);
	}
	out = render(&output_text, p, &o, &len);
	assert_non_null(strstr(out, "Processes: the top 2 of 3 by bytes allocated (the total is "
				    "all of them; --top 0 lists every one)\n"));
	large = strstr(out, "     20  large ");
	middle = strstr(out, "     30  middle ");
	assert_non_null(large);
	assert_non_null(middle);
	assert_true(large < middle);
	assert_null(strstr(out, "  small "));
	/* 3 kmallocs, 6000 bytes: every process's */
	assert_non_null(strstr(out, "  total  3 processes"));
	assert_non_null(strstr(strstr(out, "  total  3 processes"), " 3  "));
	assert_non_null(strstr(strstr(out, "  total  3 processes"), " 5.9 KiB\n"));
	/* the details of the processes shown only */
	assert_non_null(strstr(out, "allocated 3000"));
	assert_null(strstr(out, "allocated 1000"));
	free(out);
	o.top = 0;
	out = render(&output_text, p, &o, &len);
	assert_non_null(strstr(out, "\nProcesses\n"));
	assert_non_null(strstr(out, "     10  small "));
	free(out);
	profile__free(p);
}

static void test_json(void **state)
{
	char *out = golden_of(&output_json, "tests/golden/kmem.json", NULL), *path, *cmd;

	if (!have("jq")) {
		print_message("jq not installed: JSON checked by the golden file only\n");
		free(out);
		return;
	}
	path = scratch("kmem.json");
	write_file(path, out, strlen(out));
	assert_true(asprintf(&cmd, "jq -e '.mode == \"kmem\" and .default_sample_type == "
			     "\"alloc_space\" and (.processes[0].kmem | keys_unsorted) == "
			     "[\"kmalloc\", \"kfree\", \"cache_alloc\", \"cache_free\", "
			     "\"page_alloc\", \"page_free\", \"percpu_alloc\", \"percpu_free\", "
			     "\"kmalloc_bytes_req\", \"bytes_req\", \"bytes_alloc\", \"live_count\", "
			     "\"live_bytes\"] and (.processes[0] | has(\"kmem_kmalloc\") | not) and "
			     "(.processes[0] | has(\"calls\") | not) and "
			     ".totals.kmem.cache_alloc == 12004 and (.caches | length) == 4 and "
			     ".caches[0] == {\"name\": \"filp\", \"pid\": 100, \"allocs\": 12000, "
			     "\"frees\": 10000, \"bytes_req\": 2304000, \"bytes_alloc\": 2304000, "
			     "\"live\": 2000} and ([.sites[].waste_space] | add) == 576000 and "
			     "([.sites[] | select(.outstanding) | .outstanding.count] | add) == 4000'"
			     " '%s' >/dev/null", path) > 0);
	assert_int_equal(run(cmd), 0);
	free(cmd);
	unlink(path);
	free(path);
	free(out);
}

static void test_csv_folded(void **state)
{
	char *csv = golden_of(&output_csv, "tests/golden/kmem.csv", NULL);
	char *folded = golden_of(&output_folded, "tests/golden/kmem.folded", NULL);

	assert_non_null(strstr(csv, "waste_space"));
	assert_non_null(strstr(folded, "kmemfix (100);main;do_pipes;"));
	free(csv);
	free(folded);
}

/* Read back, inuse_objects and inuse_space are the outstanding allocations, as mem's (the text
 * said "Outstanding allocations at the end: none", the CSV 0, though the sites carried them),
 * and what pprof cannot carry is said so, not "none": the slab caches (text, JSON null), the
 * sizes, the ages and temporaries (CSV empty). */
static void check_reloaded(const struct profile *back)
{
	struct output_opts o = { .top = 10 };
	char *txt = render(&output_text, back, &o, NULL);
	char *json = render(&output_json, back, &o, NULL);
	char *csv = render(&output_csv, back, &o, NULL);

	assert_non_null(strstr(txt, "\nOutstanding allocations at the end: 4000 objects, 1.8 MiB "
				    "(1920000 bytes) at 2 sites\n"));
	/* no ages: "oldest 0 ns" would be false */
	assert_non_null(strstr(txt, "\n  2000 objects, 1.5 MiB (1536000 bytes), pid 100 "
				    "(kmemfix)\n"));
	assert_null(strstr(txt, "oldest"));
	assert_non_null(strstr(txt, "\nSlab caches: not in a saved profile\n"));
	assert_non_null(strstr(txt, "\nAllocation sizes (bytes requested): not in a saved "
				    "profile\n"));
	assert_null(strstr(txt, "Slab caches: none"));
	assert_non_null(strstr(json, "\"caches\": null"));
	assert_non_null(strstr(json, "\"outstanding\": {\"count\": 2000, \"bytes\": 1536000"));
	/* temporary_count, outstanding_count, outstanding_bytes, min_age_ns, max_age_ns */
	assert_non_null(strstr(csv, "\n100,kmemfix,2000,1536000,2000,1536000,576000,,2000,1536000,"
				    ",,"));
	assert_non_null(strstr(csv, "\n100,kmemfix,2000,384000,2000,384000,0,,2000,384000,,,"));
	assert_non_null(strstr(csv, "\n100,kmemfix,10000,1920000,0,0,0,,0,0,,,"));
	free(txt);
	free(json);
	free(csv);
}

/* pprof keeps the samples and types; caches and per-process totals are our formats' only. */
static void test_pprof(void **state)
{
	struct profile *p = kmem_fixture(), *back;
	char *path = scratch("kmem.pb.gz"), why[256];
	int err;

	assert_int_equal(output__write_path(&output_pprof, p, NULL, path), 0);
	back = profile__load_pprof(path, &err, why, sizeof(why));
	if (!back)
		fail_msg("our reader refused it: %s", why);
	assert_string_equal(back->mode, "kmem");
	assert_int_equal(back->ntypes, 5);
	assert_string_equal(back->types[4].type, "waste_space");
	assert_int_equal(back->nsamples, p->nsamples);
	assert_int_equal(back->ncaches, 0);
	check_reloaded(back);
	profile__free(back);
	unlink(path);
	free(path);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_process_top),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_folded),
		cmocka_unit_test(test_pprof),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
