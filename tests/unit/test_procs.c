/* core/procs.c: snapshots of a process's mappings (this test process's own). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/procs.h"
#include "core/unwind.h"
#include "util/util.h"
#include "symbolize/symbolize.h"

/* A page of this program's file mapped as code anew (as a dlopen maps a library's) */
static void *map_own_code(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	void *map;

	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	return map;
}

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
	map = map_own_code();
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
	map = map_own_code();
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

/* A look while a library is mapped but its code not yet (dlopen maps the whole file read-only
 * first) makes a snapshot (its executable mappings changed); unmapped after it (dlclose), the
 * maps read the same executable mappings, and that snapshot stays the newest: the library's
 * code still resolves as code, from the snapshot that saw it so. */
static void test_code_kept_past_a_half_mapped_look(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct proc_table *t = proc_table__new(sym);
	struct proc_info *p;
	struct sym_proc *half;
	struct sym_result r;
	uint64_t at;
	void *map;

	(void)state;
	assert_non_null(t);
	p = proc_table__add(t, getpid());
	assert_non_null(p);
	map = map_own_code();
	at = (uint64_t)(uintptr_t)map + 16;
	assert_true(proc_table__snapshot(t, p));
	assert_int_equal(sym_proc__resolve(p->sp, at, true, &r), 0);
	assert_true(r.executable);

	/* read-only (as dlopen's first mapping of a library is): a new snapshot */
	assert_int_equal(mprotect(map, 4096, PROT_READ), 0);
	assert_true(proc_table__snapshot(t, p));
	half = p->sp;
	/* unmapped: the same executable mappings as that one, no new snapshot */
	munmap(map, 4096);
	assert_true(proc_table__snapshot(t, p));
	assert_ptr_equal(p->sp, half);

	assert_int_equal(sym_proc__resolve(p->sp, at, true, &r), 0);
	assert_true(r.mapped);
	assert_true(r.executable);

	proc_table__free(t, NULL);
	symbolizer__free(sym);
}

static uint64_t fake_mark;

static uint64_t fake_mark_fn(void *ctx, pid_t pid)
{
	(void)ctx;
	(void)pid;
	return fake_mark;
}

/* With a mode's marks, proc_table__snapshot_some reads the maps file only when the mark moved
 * (a new executable mapping is not seen while it stands still, and is once it moves), always
 * while it is PROC_MM_UNKNOWN, and the name every PROC_NAMES_EVERY calls in between. */
static void test_snapshot_some_follows_marks(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct proc_table *t = proc_table__new(sym);
	struct proc_info *p;
	struct sym_proc *first;
	char self_comm[16];
	void *map;

	(void)state;
	assert_non_null(t);
	proc_table__set_mm_marks(t, fake_mark_fn, NULL);
	fake_mark = 1000;
	p = proc_table__add(t, getpid());
	assert_non_null(p);
	memcpy(self_comm, p->comm, sizeof(self_comm));
	p->attached = true;
	/* no snapshot yet: due whatever the mark */
	assert_true(proc_info__maps_due(p, 1000));
	proc_table__snapshot_some(t, 8);
	first = p->sp;
	assert_non_null(first);
	assert_int_equal(p->mm_mark, 1000);
	assert_false(proc_info__maps_due(p, 1000));
	assert_true(proc_info__maps_due(p, 1001));
	assert_true(proc_info__maps_due(p, PROC_MM_UNKNOWN));

	map = map_own_code();
	/* the mark stands still: the same snapshot, and the name read only every
	 * PROC_NAMES_EVERY calls */
	strcpy(p->comm, "renamed");
	for (int i = 1; i < PROC_NAMES_EVERY; i++) {
		proc_table__snapshot_some(t, 8);
		assert_ptr_equal(p->sp, first);
		assert_string_equal(p->comm, "renamed");
	}
	proc_table__snapshot_some(t, 8);
	assert_ptr_equal(p->sp, first);
	assert_string_equal(p->comm, self_comm);
	/* it moves: a new snapshot, with the mapping */
	fake_mark = 1001;
	proc_table__snapshot_some(t, 8);
	assert_true(p->sp != first);
	assert_int_equal(p->mm_mark, 1001);
	munmap(map, 4096);
	/* unknown: read at every call (the unmapping seen at once) */
	first = p->sp;
	fake_mark = PROC_MM_UNKNOWN;
	proc_table__snapshot_some(t, 8);
	assert_true(p->sp != first);

	proc_table__free(t, NULL);
	symbolizer__free(sym);
}

/* A process gone for more than `after` calls is forgotten; a live one, or one attached, is kept,
 * and the others' entries keep their addresses. */
static void test_prune_gone(void **state)
{
	struct proc_table *t = proc_table__new(NULL);
	struct proc_info *self, *gone, *held;
	pid_t child = fork();
	int status;

	(void)state;
	assert_non_null(t);
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	gone = proc_table__add(t, child);
	self = proc_table__add(t, getpid());
	held = proc_table__add(t, 2147483000);	/* no such process, but attached */
	assert_non_null(gone);
	assert_non_null(self);
	assert_non_null(held);
	held->attached = true;
	assert_int_equal(proc_table__prune_gone(t, 1, NULL), 0);
	assert_int_equal(proc_table__count(t), 3);
	assert_int_equal(proc_table__prune_gone(t, 1, NULL), 1);
	assert_int_equal(proc_table__count(t), 2);
	assert_null(proc_table__find(t, child));
	assert_ptr_equal(proc_table__find(t, getpid()), self);
	assert_ptr_equal(proc_table__find(t, 2147483000), held);
	proc_table__free(t, NULL);
}

/* The pages a maps file maps executable are the kernel's own count (mm->exec_vm, which
 * /proc/PID/status shows as VmExe + VmLib in kB), one more mapping of code included. */
static void test_exec_pages(void **state)
{
	char *maps, *status, *at;
	unsigned long exe = 0, lib = 0;
	void *map;

	(void)state;
	map = map_own_code();
	maps = util_read_file("/proc/self/maps", NULL);
	status = util_read_file("/proc/self/status", NULL);
	assert_non_null(maps);
	assert_non_null(status);
	at = strstr(status, "VmExe:");
	assert_non_null(at);
	assert_int_equal(sscanf(at, "VmExe: %lu kB", &exe), 1);
	at = strstr(status, "VmLib:");
	assert_non_null(at);
	assert_int_equal(sscanf(at, "VmLib: %lu kB", &lib), 1);
	assert_int_equal(proc_maps__exec_pages(maps), (exe + lib) * 1024 / 4096);
	free(maps);
	free(status);
	munmap(map, 4096);
}

/* A note of a process gone before it was read, forked from this one without an exec: named by
 * this process's mappings only when they are shown to be those the kernel saw (its identity
 * and its pages of code as in the note), else none, and why. A parent's snapshot, once used,
 * names the child only while it maps the same code. */
static void test_note_of_a_forked_child(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct proc_table *t = proc_table__new(sym);
	struct proc_note n = { .parent = (uint32_t)getpid() };
	struct proc_info *c, *self;
	char *maps = util_read_file("/proc/self/maps", NULL);
	pid_t kids[6];
	int status;
	void *map;

	(void)state;
	assert_non_null(t);
	assert_non_null(maps);
	for (int i = 0; i < 6; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(0);
		assert_true(kids[i] > 0);
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
	}
	assert_int_equal(unwind_ident__read(getpid(), &n.parent_ident), 0);
	n.parent_exec_pages = proc_maps__exec_pages(maps);
	free(maps);

	/* the same process and exec, as much code: its maps file names the child's frames */
	n.tgid = (uint32_t)kids[0];
	proc_table__note(t, &n, sizeof(n));
	c = proc_table__find(t, kids[0]);
	assert_non_null(c);
	assert_non_null(proc_info__mappings(c));
	assert_int_equal(proc_info__parent_unproven(c), PROC_PARENT_PROVEN);

	/* another exec (its end of code moved), or another process (its start): none */
	n.tgid = (uint32_t)kids[1];
	n.parent_ident.end_code += 4096;
	proc_table__note(t, &n, sizeof(n));
	n.parent_ident.end_code -= 4096;
	c = proc_table__find(t, kids[1]);
	assert_null(proc_info__mappings(c));
	assert_int_equal(proc_info__parent_unproven(c), PROC_PARENT_OTHER);
	assert_string_equal(proc_parent_unproven__str(PROC_PARENT_OTHER), "parent exec'd or exited");
	n.tgid = (uint32_t)kids[2];
	n.parent_ident.start_time--;
	proc_table__note(t, &n, sizeof(n));
	n.parent_ident.start_time++;
	assert_int_equal(proc_info__parent_unproven(proc_table__find(t, kids[2])),
			 PROC_PARENT_OTHER);

	/* a page of code more or less than the kernel saw */
	n.tgid = (uint32_t)kids[3];
	n.parent_exec_pages++;
	proc_table__note(t, &n, sizeof(n));
	n.parent_exec_pages--;
	c = proc_table__find(t, kids[3]);
	assert_null(proc_info__mappings(c));
	assert_int_equal(proc_info__parent_unproven(c), PROC_PARENT_CODE);

	/* a parent gone too (the first child: reaped), and a note without the parent's identity
	 * (not the whole record): none */
	n.tgid = (uint32_t)kids[4];
	n.parent = (uint32_t)kids[0];
	proc_table__note(t, &n, sizeof(n));
	n.parent = (uint32_t)getpid();
	assert_int_equal(proc_info__parent_unproven(proc_table__find(t, kids[4])),
			 PROC_PARENT_GONE);
	n.tgid = (uint32_t)kids[5];
	proc_table__note(t, &n, offsetof(struct proc_note, parent_ident));
	assert_null(proc_info__mappings(proc_table__find(t, kids[5])));

	/* the parent's own snapshot, of this exec with as much code, names it, until the parent
	 * maps other code */
	proc_table__free(t, NULL);
	t = proc_table__new(sym);
	proc_table__keep_idents(t);
	self = proc_table__add(t, getpid());
	assert_true(proc_table__snapshot(t, self));
	assert_true(self->ident_ok);
	n.tgid = (uint32_t)kids[0];
	proc_table__note(t, &n, sizeof(n));
	c = proc_table__find(t, kids[0]);
	assert_ptr_equal(c->forked_from, self);
	assert_ptr_equal(proc_info__mappings(c), self->sp);
	map = map_own_code();
	assert_true(proc_table__snapshot(t, self));
	assert_null(proc_info__mappings(c));
	assert_int_equal(proc_info__parent_unproven(c), PROC_PARENT_CODE);
	munmap(map, 4096);
	proc_table__free(t, NULL);
	symbolizer__free(sym);
}

/* util's pid index: every pid found after the table grew, the newest put of a pid wins, pid 0
 * and negative ones are keys like any other, a cleared index is empty. */
static void test_pid_index(void **state)
{
	struct pid_index x = { 0 };
	static int v[20000];

	(void)state;
	assert_null(pid_index__get(&x, 1));
	for (int i = 0; i < 20000; i++)
		assert_int_equal(pid_index__put(&x, i * 7 - 5, &v[i]), 0);
	assert_int_equal(x.n, 20000);
	for (int i = 0; i < 20000; i++)
		assert_ptr_equal(pid_index__get(&x, i * 7 - 5), &v[i]);
	assert_null(pid_index__get(&x, 3));
	assert_int_equal(pid_index__put(&x, 2, &v[5]), 0);	/* 2 = 1 * 7 - 5: again */
	assert_ptr_equal(pid_index__get(&x, 2), &v[5]);
	assert_int_equal(x.n, 20000);
	assert_int_equal(pid_index__put(&x, 0, &v[9]), 0);
	assert_ptr_equal(pid_index__get(&x, 0), &v[9]);
	pid_index__clear(&x);
	assert_null(pid_index__get(&x, 2));
	assert_null(pid_index__get(&x, 0));
	assert_int_equal(pid_index__put(&x, 2, &v[1]), 0);
	assert_ptr_equal(pid_index__get(&x, 2), &v[1]);
	pid_index__free(&x);
	assert_null(pid_index__get(&x, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_kept_until_maps_change),
		cmocka_unit_test(test_code_kept_past_a_half_mapped_look),
		cmocka_unit_test(test_snapshot_some_follows_marks),
		cmocka_unit_test(test_prune_gone),
		cmocka_unit_test(test_exec_pages),
		cmocka_unit_test(test_note_of_a_forked_child),
		cmocka_unit_test(test_pid_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
