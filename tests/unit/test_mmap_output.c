/* The --mmap category in the text and JSON reports, on a profile built by hand as the collector
 * builds it: mapping sites carry only the mmap_* types and are listed in sections of their own,
 * never among the allocation sites; the per-process mmap_* stats become a mappings block (text)
 * and a `mmap` object (JSON); sites say their category. Without the mmap types nothing changes
 * (the golden files of test_output.c hold that). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"
#include "profile_builder.h"

static struct profile *build(void)
{
	static const uint64_t calls[10] = { 1 }, stats[9] = { 1, 100, 0, 0, 1, 100, 100, 100, 0 };
	static const char *const mstats[] = {
		"mmap_calls_mmap", "mmap_calls_mremap", "mmap_calls_brk", "mmap_calls_munmap",
		"mmap_mapped_count", "mmap_mapped_bytes", "mmap_unmapped_count",
		"mmap_unmapped_bytes", "mmap_live_count", "mmap_live_bytes", "mmap_failed",
		"mmap_untracked", "mmap_peak_live_bytes",
	};
	static const uint64_t mvals[] = { 2, 0, 0, 1, 2, 12288, 1, 4096, 1, 8192, 0, 3, 12288 };
	struct profile *p = profile__new("mem");
	struct prof_process *proc;
	struct prof_sample *s;
	uint32_t f_malloc, f_mmap, f_main, f_work, l_malloc, l_mmap, l_main, l_work;
	int64_t v[8];

	assert_non_null(p);
	mem_types(p);
	assert_int_equal(profile__add_type(p, "mmap_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "mmap_space", "bytes"), 0);
	assert_int_equal(profile__add_type(p, "mmap_inuse_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "mmap_inuse_space", "bytes"), 0);
	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_mmap = fn(p, "mmap", "mmap", NULL);
	f_main = fn(p, "main", "main", "prog.c");
	f_work = fn(p, "map_buffers", "map_buffers", "prog.c");
	l_malloc = LOC(p, PROF_NONE, 1, 1, { f_malloc, 0 });
	l_mmap = LOC(p, PROF_NONE, 12, 12, { f_mmap, 0 });
	l_main = LOC(p, PROF_NONE, 0x401000, 0x1000, { f_main, 7 });
	l_work = LOC(p, PROF_NONE, 0x401100, 0x1100, { f_work, 21 });

	memset(v, 0, sizeof(v));
	v[0] = 1, v[1] = 100, v[2] = 1, v[3] = 100;
	s = sample_v(p, STACK(l_malloc, l_main), v, 42);
	s->out = (struct prof_outstanding){ .count = 1, .bytes = 100, .min_age_ns = 5,
					    .max_age_ns = 5, .sum_age_ns = 5 };
	memset(v, 0, sizeof(v));
	v[4] = 1, v[5] = 8192, v[6] = 1, v[7] = 8192;
	s = sample_v(p, STACK(l_mmap, l_work, l_main), v, 42);
	s->out = (struct prof_outstanding){ .count = 1, .bytes = 8192, .min_age_ns = 9,
					    .max_age_ns = 9, .sum_age_ns = 9 };
	memset(v, 0, sizeof(v));
	v[4] = 1, v[5] = 4096;
	sample_v(p, STACK(l_mmap, l_main), v, 42);

	proc = process(p, 42, "prog", "./prog", calls, stats);
	for (size_t i = 0; i < sizeof(mstats) / sizeof(mstats[0]); i++)
		assert_int_equal(prof_process__add_stat(p, proc, mstats[i], mvals[i]), 0);
	return p;
}

static char *render(const struct output_ops *ops, struct profile *p)
{
	struct output_opts o = { .top = 10 };
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(ops->write(p, &o, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_text_sections(void **state)
{
	struct profile *p = build();
	char *t = render(&output_text, p), *alloc, *maps;

	assert_non_null(strstr(t, "    mappings (mmap, mremap, brk: a category apart, not in the "
				  "numbers above):\n      calls: mmap 2, munmap 1, mremap 0, brk 0 "
				  "(failed 0, untracked 3)\n      bytes: mapped 12288 in 2 regions, "
				  "unmapped 4096 (1 times), live 8192 in 1 regions (8.0 KiB), peak live "
				  "12288 (12.0 KiB)\n"));
	/* no mmap_ stat among the others */
	assert_null(strstr(t, "mmap_calls"));
	alloc = strstr(t, "Top 1 allocation site by bytes\n");
	maps = strstr(t, "Top 2 mapping sites by bytes (of 2; mmap, mremap, brk: a category "
			 "apart, not in the allocation numbers)\n");
	assert_non_null(alloc);
	assert_non_null(maps);
	assert_true(alloc < maps);
	assert_non_null(strstr(t, "Outstanding allocations at exit: 1 object, 100 B (100 bytes) "
				  "at 1 site\n"));
	assert_non_null(strstr(maps, "#1   8.0 KiB (8192 bytes) in 1 region, 1 live (8.0 KiB), "
				     "pid 42 (prog)\n    #0 mmap\n    #1 map_buffers (prog.c:21)\n"));
	assert_non_null(strstr(maps, "Mappings still mapped at exit: 1 region, 8.0 KiB (8192 "
				     "bytes) at 1 site\n"));
	/* the allocation sections hold no mapping site */
	*maps = 0;
	assert_null(strstr(alloc, "#0 mmap"));
	free(t);
	profile__free(p);
}

static void jq_true(const char *path, const char *expr)
{
	char *cmd;
	int rc;

	assert_true(asprintf(&cmd, "jq -e '%s' '%s' > /dev/null 2>&1", expr, path) > 0);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("jq: %s: false", expr);
	free(cmd);
}

static void test_json_category(void **state)
{
	struct profile *p = build();
	char *j = render(&output_json, p), path[] = "/tmp/ebprof-mmap-json.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, j, strlen(j)), (ssize_t)strlen(j));
	close(fd);
	jq_true(path, ".processes[0].mmap == {calls: {mmap: 2, mremap: 0, brk: 0, munmap: 1}, "
		      "mapped_count: 2, mapped_bytes: 12288, unmapped_count: 1, "
		      "unmapped_bytes: 4096, live_count: 1, live_bytes: 8192, failed: 0, "
		      "untracked: 3, peak_live_bytes: 12288}");
	jq_true(path, "[.processes[0] | keys[] | select(startswith(\"mmap_\"))] | length == 0");
	jq_true(path, "[.sites[] | .category] == [\"malloc\", \"mmap\", \"mmap\"]");
	jq_true(path, "[.sites[] | select(.category == \"mmap\") | .mmap_space] | sort == [4096, 8192]");
	jq_true(path, "[.sample_types[].type][4:] == [\"mmap_objects\", \"mmap_space\", "
		      "\"mmap_inuse_objects\", \"mmap_inuse_space\"]");
	unlink(path);
	free(j);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_sections),
		cmocka_unit_test(test_json_category),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
