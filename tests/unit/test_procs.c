/* core/procs.c: snapshots of a process's mappings (this test process's own). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/procs.h"
#include "symbolize/symbolize.h"

/* A snapshot is kept while the mappings read the same, and taken anew when they change: a
 * new executable mapping is then known. */
static void test_snapshot_kept_until_maps_change(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct proc_table *t = proc_table__new(sym);
	struct proc_info *p;
	struct sym_proc *first;
	struct sym_result r;
	void *map;
	int fd;

	(void)state;
	assert_non_null(t);
	p = proc_table__add(t, getpid());
	assert_non_null(p);
	assert_true(proc_table__snapshot(t, p));
	first = p->sp;
	assert_non_null(first);

	/* nothing mapped or unmapped since: the same snapshot */
	assert_true(proc_table__snapshot(t, p));
	assert_ptr_equal(p->sp, first);

	/* a new executable mapping of a file: a new snapshot, which knows it */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	assert_int_equal(sym_proc__resolve(first, (uint64_t)(uintptr_t)map + 16, false, &r),
			 -ENOENT);
	assert_true(proc_table__snapshot(t, p));
	assert_true(p->sp != first);
	assert_int_equal(sym_proc__resolve(p->sp, (uint64_t)(uintptr_t)map + 16, false, &r), 0);
	assert_true(r.mapped);

	/* and unmapped again (a dlclose): another one, which keeps the earlier ones, so that the
	 * samples taken while it was mapped still resolve */
	first = p->sp;
	munmap(map, 4096);
	assert_true(proc_table__snapshot(t, p));
	assert_true(p->sp != first);
	assert_int_equal(sym_proc__resolve(p->sp, (uint64_t)(uintptr_t)map + 16, false, &r), 0);
	assert_true(r.mapped);
	/* what no snapshot ever mapped stays unmapped */
	assert_int_equal(sym_proc__resolve(p->sp, 4096, false, &r), -ENOENT);

	/* in turn: an attached process is looked at by proc_table__snapshot_some, others not */
	first = p->sp;
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	p->attached = false;
	proc_table__snapshot_some(t, 8);
	assert_ptr_equal(p->sp, first);
	p->attached = true;
	proc_table__snapshot_some(t, 8);
	assert_true(p->sp != first);
	munmap(map, 4096);

	proc_table__free(t, NULL);
	symbolizer__free(sym);
}

/* A long run forgets the processes gone since the previous call, not those gone just now
 * (their last counts may still be read) nor those that run. */
static void test_forget_gone(void **state)
{
	struct proc_table *t = proc_table__new(NULL);
	pid_t child = fork();

	(void)state;
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	waitpid(child, NULL, 0);
	assert_non_null(proc_table__add(t, getpid()));
	assert_non_null(proc_table__add(t, child));
	assert_int_equal(proc_table__forget_gone(t), 0);	/* seen gone once */
	assert_int_equal(proc_table__count(t), 2);
	assert_int_equal(proc_table__forget_gone(t), 1);	/* and still gone */
	assert_int_equal(proc_table__count(t), 1);
	assert_int_equal(proc_table__at(t, 0)->pid, getpid());
	assert_null(proc_table__find(t, child));
	proc_table__free(t, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_kept_until_maps_change),
		cmocka_unit_test(test_forget_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
