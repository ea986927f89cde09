/* The unwinder's collector side (core/unwind.c) against real BPF maps (root: map creation and
 * /proc/PID/map_files): what it puts in unwind_procs for this very process when a library it
 * reads is unmapped under it. A program that dlopens and dlcloses a library in a loop
 * (tests/fixtures/lazyfix) has it unmapped at any moment the unwinder reads it: such a read
 * may leave the library out for now, never mark it as a file without call frame information
 * for the rest of the run (every stack through it then ended in [truncated] after its first
 * frame, in a flaky run of tests/e2e/unwind_ctx.bats). The moment is made exact here: this
 * file's open() unmaps the library (dlclose) right before the unwinder's open of its file
 * through /proc/self/map_files, then opens it.
 * And: an object whose rows fit the rows map by its size but cannot be stored there (a map
 * that refuses them) is said as such, not counted as a full map (unwind_rows_full, whose note
 * says to raise --unwind-rows, which would not help).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <cmocka.h>

#include "abi/unwind.h"
#include "core/log.h"
#include "core/unwind.h"
#include "profile/profile.h"

#define ROWS	(1U << 20)

/* The library to unmap at the open of a map_files entry of its (at) */
static struct {
	void *handle;		/* NULL: nothing to do */
	uint64_t at;		/* an address of its code */
	int fired;		/* opens it unmapped first */
	int err;		/* what the open then said (0: opened) */
} race;

/* Every open() of this program and of what it links statically (core/unwind.c) */
int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	unsigned long start, end;
	const char *mf = strstr(path, "/map_files/");
	mode_t mode = 0;
	int fd;

	if (flags & O_CREAT || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (!race.handle || !mf || sscanf(mf, "/map_files/%lx-%lx", &start, &end) != 2 ||
	    race.at < start || race.at >= end)
		return real(path, flags, mode);
	dlclose(race.handle);
	race.handle = NULL;
	race.fired++;
	fd = real(path, flags, mode);
	race.err = fd < 0 ? errno : 0;
	return fd;
}

static const char *lib_path(void)
{
	static char path[PATH_MAX];
	const char *out = getenv("OUT");

	snprintf(path, sizeof(path), "%s/fixtures/liblazyfix.so", out && *out ? out : "build");
	return path;
}

/* The library's lz_run, mapped again (*handle: its handle) */
static uint64_t map_lib(void **handle)
{
	void *fn;

	*handle = dlopen(lib_path(), RTLD_LAZY | RTLD_LOCAL);
	assert_non_null(*handle);
	fn = dlsym(*handle, "lz_run");
	assert_non_null(fn);
	return (uint64_t)(uintptr_t)fn;
}

/* The mapping of at in pid's entry (NULL: none) */
static const struct unwind_map *entry_map(const struct unwind_proc *p, uint64_t at)
{
	for (uint32_t i = 0; i < p->nmaps && i < UNWIND_MAX_MAPS; i++)
		if (at >= p->maps[i].start && at < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static void test_unmapped_while_read(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	struct log_ctx lc = { .prog = "test_unwinder_bpf", .verbose = getenv("TEST_VERBOSE") ? 1 : 0 };
	struct unwind_proc *p = calloc(1, sizeof(*p));
	const struct unwind_map *m;
	struct unwinder *u;
	uint32_t key = (uint32_t)getpid();
	int procs, rows, stats;
	void *h;
	uint64_t at;

	(void)state;
	if (access(lib_path(), R_OK)) {
		print_message("skipped: %s is not built (make fixtures)\n", lib_path());
		skip();
	}
	procs = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_procs", sizeof(uint32_t),
			       sizeof(struct unwind_proc), 4, &hash);
	rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(uint32_t),
			      sizeof(struct unwind_row), ROWS, &mmapable);
	stats = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "unwind_stats", sizeof(uint32_t),
			       sizeof(uint64_t), UNWIND_STAT__COUNT, NULL);
	assert_non_null(p);
	assert_true(procs >= 0 && rows >= 0 && stats >= 0);
	u = unwinder__new(&lc, procs, rows, stats, ROWS);
	assert_non_null(u);

	/* the library in the maps it reads, gone when it opens its file */
	race.at = map_lib(&race.handle);
	assert_int_equal(unwinder__load(u, getpid(), NULL), 0);
	assert_int_equal(race.fired, 1);
	assert_int_equal(race.err, ENOENT);
	/* mapped again (a later round of the loop): its rows reach the BPF side */
	at = map_lib(&h);
	assert_int_equal(unwinder__load(u, getpid(), NULL), 0);
	assert_int_equal(bpf_map_lookup_elem(procs, &key, p), 0);
	m = entry_map(p, at);
	assert_non_null(m);
	assert_int_not_equal(m->rows, UNWIND_MAP_FP);
	assert_true(m->nrows > 0);
	assert_int_equal(race.fired, 1);

	dlclose(h);
	unwinder__free(u);
	close(procs);
	close(rows);
	close(stats);
	free(p);
}

static void test_rows_not_stored(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	struct log_ctx lc = { .prog = "test_unwinder_bpf", .verbose = getenv("TEST_VERBOSE") ? 1 : 0 };
	struct profile *prof = profile__new("cpu");
	struct unwinder *u;
	int procs, rows, stats;
	bool said = false;

	(void)state;
	procs = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_procs", sizeof(uint32_t),
			       sizeof(struct unwind_proc), 4, &hash);
	/* 16 rows, not mmapable, while the unwinder is told ROWS: every upload fails (E2BIG) */
	rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(uint32_t),
			      sizeof(struct unwind_row), 16, NULL);
	stats = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "unwind_stats", sizeof(uint32_t),
			       sizeof(uint64_t), UNWIND_STAT__COUNT, NULL);
	assert_non_null(prof);
	assert_true(procs >= 0 && rows >= 0 && stats >= 0);
	u = unwinder__new(&lc, procs, rows, stats, ROWS);
	assert_non_null(u);
	assert_int_equal(unwinder__load(u, getpid(), NULL), 0);
	unwinder__add_drops(u, prof);
	assert_int_equal(profile__drop(prof, "unwind_rows_full"), 0);
	for (uint32_t i = 0; i < prof->nnotes; i++)
		if (strstr(prof->notes[i], "could not be stored in the rows map (Argument list too long)"))
			said = true;
	assert_true(said);
	unwinder__free(u);
	profile__free(prof);
	close(procs);
	close(rows);
	close(stats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unmapped_while_read),
		cmocka_unit_test(test_rows_not_stored),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_unwinder_bpf: skipped: needs root (BPF maps, "
			"/proc/PID/map_files)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
