/* Unit tests of src/symbolize: maps parsing, ELF/DWARF symbolization of live fixture processes
 * (PIE, ET_EXEC, stripped with debug link, .dynsym only, MiniDebugInfo, C++), glibc with
 * libc6-dbg, demangling, uprobe symbol offsets, kallsyms, data addresses (what memory, which
 * data object), and a lookup-rate sanity run.
 * Fixtures come from tests/unit/symbolize.mk under $OUT/fixtures. No root needed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/symbolize.h"
#include "symbolize/sym_internal.h"
#include "util/util.h"

#include "golden.h"	/* out_dir */

/* ---- helpers ---- */

static void fixture_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/fixtures/%s", out_dir(), name);
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

#define MAX_POINTS 16

/* A running fixture and the "name addr line" points it printed. */
struct child {
	pid_t pid;
	int to_child;
	int npoints;
	struct {
		char name[32];
		uint64_t addr;
		int line;
	} points[MAX_POINTS];
};

static void child_start_path(struct child *c, const char *path)
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (access(path, X_OK)) {
		fail_msg("fixture %s missing: build it with make %s", path, path);
		return;
	}
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to_child = in[1];
	f = fdopen(out[0], "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		unsigned long long addr;
		int ln;

		if (!strcmp(line, "ready\n"))
			break;
		if (sscanf(line, "%31s %llx %d", name, &addr, &ln) == 3 &&
		    c->npoints < MAX_POINTS) {
			snprintf(c->points[c->npoints].name, sizeof(c->points[0].name), "%s", name);
			c->points[c->npoints].addr = addr;
			c->points[c->npoints].line = ln;
			c->npoints++;
		}
	}
	fclose(f);
	assert_true(c->npoints > 0);
}

static void child_start(struct child *c, const char *fixture)
{
	char path[PATH_MAX];

	fixture_path(path, sizeof(path), fixture);
	child_start_path(c, path);
}

static void child_stop(struct child *c)
{
	int status;

	if (c->pid <= 0)
		return;
	close(c->to_child);
	waitpid(c->pid, &status, 0);
	c->pid = 0;
}

static uint64_t point(const struct child *c, const char *name, int *line)
{
	for (int i = 0; i < c->npoints; i++) {
		if (!strcmp(c->points[i].name, name)) {
			if (line)
				*line = c->points[i].line;
			return c->points[i].addr;
		}
	}
	fail_msg("fixture did not print point %s", name);
	return 0;
}

static const struct sym_frame *outer(const struct sym_result *r)
{
	assert_true(r->nframes > 0);
	return &r->frames[r->nframes - 1];
}

static void assert_frame(const struct sym_frame *f, const char *fn, const char *file, int line)
{
	assert_non_null(f->function);
	assert_string_equal(f->function, fn);
	if (file) {
		assert_non_null(f->file);
		assert_string_equal(base_name(f->file), file);
	}
	if (line)
		assert_int_equal(f->line, line);
}

/* ---- 1. maps parsing ---- */

static const char MAPS_TEXT[] =
	"555555554000-555555556000 r--p 00000000 fe:01 1234            /usr/bin/my prog\n"
	"555555556000-55555555a000 r-xp 00002000 fe:01 1234            /usr/bin/my prog\n"
	"55555555a000-55555557b000 rw-p 00000000 00:00 0            [heap]\n"
	"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	"7f0000100000-7f0000200000 r-xp 00010000 fe:01 99            /tmp/gone.so (deleted)\n"
	"garbage line\n"
	"7ffd0000a000-7ffd0000c000 r-xp 00000000 00:00 0            [vdso]\n"
	"7ffd0000c000-7ffd0000d000 rw-p 00000000 00:00 0            [anon:jit]\n"
	"7ffd0000e000-7ffd0000f000 r-xp 00000000 00:00 0";

static void test_procmaps_parse(void **state)
{
	struct sym_map *maps;
	size_t n;

	assert_int_equal(sym_maps__parse(MAPS_TEXT, &maps, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(maps[0].start, 0x555555554000ULL);
	assert_int_equal(maps[0].end, 0x555555556000ULL);
	assert_string_equal(maps[0].path, "/usr/bin/my prog");
	assert_int_equal(maps[0].kind, SYM_MAP_FILE);
	assert_string_equal(maps[1].perms, "r-xp");
	assert_int_equal(maps[1].offset, 0x2000);
	assert_int_equal(maps[1].dev_major, 0xfe);
	assert_int_equal(maps[1].dev_minor, 1);
	assert_int_equal(maps[1].inode, 1234);
	assert_int_equal(maps[2].kind, SYM_MAP_SPECIAL);
	assert_string_equal(maps[2].path, "[heap]");
	assert_int_equal(maps[3].kind, SYM_MAP_ANON);
	assert_null(maps[3].path);
	assert_true(maps[4].deleted);
	assert_string_equal(maps[4].path, "/tmp/gone.so");
	assert_int_equal(maps[4].offset, 0x10000);
	assert_string_equal(maps[5].path, "[vdso]");
	assert_string_equal(maps[6].path, "[anon:jit]");
	assert_int_equal(maps[7].kind, SYM_MAP_ANON);	/* last line, no newline, no path */
	sym_maps__free(maps, n);
}

/* The kernel writes a newline in a path as "\012" (seq_file_path's escape; nothing else, not a
 * backslash): the path is the file's again, else the file was never opened and a binary whose
 * name held a newline was never symbolized. */
static void test_procmaps_newline(void **state)
{
	static const char text[] =
		"555555556000-55555555a000 r-xp 00002000 fe:01 1234   /tmp/w/nl\\012x\n"
		"7f0000100000-7f0000200000 r-xp 00010000 fe:01 99 /tmp/a\\012\\012b\\01"
		" (deleted)\n"
		"7f0000300000-7f0000400000 r-xp 00000000 fe:01 98     /tmp/back\\slash\\01\n";
	struct sym_map *maps;
	size_t n;

	(void)state;
	assert_int_equal(sym_maps__parse(text, &maps, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(maps[0].path, "/tmp/w/nl\nx");
	assert_int_equal(maps[0].kind, SYM_MAP_FILE);
	assert_true(maps[1].deleted);
	assert_string_equal(maps[1].path, "/tmp/a\n\nb\\01");
	assert_string_equal(maps[2].path, "/tmp/back\\slash\\01");
	sym_maps__free(maps, n);
}

static void test_maps_resolve_special(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_result r;
	struct sym_proc *p;

	assert_non_null(s);
	p = symbolizer__load_maps(s, MAPS_TEXT, NULL);
	assert_non_null(p);

	assert_int_equal(sym_proc__resolve(p, 0x7ffd0000a100, false, &r), 0);
	assert_true(r.mapped);
	assert_true(r.executable);
	assert_string_equal(r.module, "[vdso]");
	assert_int_equal(r.nframes, 0);

	assert_int_equal(sym_proc__resolve(p, 0x7f0000000010, false, &r), 0);
	assert_string_equal(r.module, "[anon]");
	assert_false(r.executable);
	assert_int_equal(r.nframes, 0);

	assert_int_equal(sym_proc__resolve(p, 0x55555555a010, false, &r), 0);
	assert_string_equal(r.module, "[heap]");

	/* A deleted file without a pid to reach it through: the name, no symbols. */
	assert_int_equal(sym_proc__resolve(p, 0x7f0000100040, false, &r), 0);
	assert_string_equal(r.module, "/tmp/gone.so");
	assert_int_equal(r.module_offset, 0x10040);
	assert_int_equal(r.nframes, 0);

	/* A file that does not exist on this machine: same. */
	assert_int_equal(sym_proc__resolve(p, 0x555555556010, false, &r), 0);
	assert_string_equal(r.module, "/usr/bin/my prog");
	assert_int_equal(r.module_offset, 0x2010);
	assert_null(r.build_id);

	/* Between mappings and past the end: no mapping. */
	assert_int_equal(sym_proc__resolve(p, 0x7f0000050000, false, &r), -ENOENT);
	assert_false(r.mapped);
	assert_int_equal(sym_proc__resolve(p, 0x10, false, &r), -ENOENT);
	/* A return address just past a mapping belongs to the call in it. */
	assert_int_equal(sym_proc__resolve(p, 0x7ffd0000c000, true, &r), 0);
	assert_string_equal(r.module, "[vdso]");

	sym_proc__free(p);
	symbolizer__free(s);
}

/* ---- 2-4. fixture processes ---- */

static void check_full_debug(struct sym_proc *p, const struct child *c, const char *module_base)
{
	int leaf_line = 0, inline_line = 0, call_line = 0, static_line = 0;
	uint64_t leaf = point(c, "leaf", &leaf_line);
	uint64_t inl = point(c, "inline", &inline_line);
	uint64_t stat = point(c, "static", &static_line);
	struct sym_result r, r2;

	point(c, "call", &call_line);

	assert_int_equal(sym_proc__resolve(p, leaf, false, &r), 0);
	assert_true(r.mapped);
	assert_true(r.executable);
	assert_string_equal(base_name(r.module), module_base);
	assert_non_null(r.build_id);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_leaf", "sym_target.c", leaf_line);
	assert_string_equal(r.frames[0].system_name, "sym_leaf");

	/* The same point seen as a return address (one past the call) resolves the same. */
	assert_int_equal(sym_proc__resolve(p, leaf + 1, true, &r2), 0);
	assert_int_equal(r2.module_offset, r.module_offset);
	assert_int_equal(r2.nframes, 1);
	assert_ptr_equal(r2.frames[0].function, r.frames[0].function);

	/* The always_inline body: inner frame the inlined function, outer its caller at the
	 * call line. */
	assert_int_equal(sym_proc__resolve(p, inl, false, &r), 0);
	assert_int_equal(r.nframes, 2);
	assert_frame(&r.frames[0], "sym_inlined", "sym_target.c", inline_line);
	assert_frame(&r.frames[1], "sym_outer", "sym_target.c", call_line);

	/* Again: from the frame cache, identical. */
	assert_int_equal(sym_proc__resolve(p, inl, false, &r2), 0);
	assert_int_equal(r2.nframes, 2);
	assert_ptr_equal(r2.frames[0].function, r.frames[0].function);
	assert_ptr_equal(r2.frames[1].file, r.frames[1].file);
	assert_int_equal(r2.frames[1].line, r.frames[1].line);

	assert_int_equal(sym_proc__resolve(p, stat, false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_static_fn", "sym_target.c", static_line);
}

static void check_gap(struct sym_proc *p, const struct child *c, const char *module_base)
{
	struct sym_result r;

	assert_int_equal(sym_proc__resolve(p, point(c, "gap", NULL), false, &r), 0);
	assert_true(r.mapped);
	assert_true(r.executable);
	assert_string_equal(base_name(r.module), module_base);
	assert_true(r.module_offset > 0);
	assert_int_equal(r.nframes, 0);

	/* a label without a type in code names it (ld.so's _start); one inside a sized function
	 * names none of it */
	assert_int_equal(sym_proc__resolve(p, point(c, "asm_label", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_asm_label", NULL, 0);
	assert_int_equal(sym_proc__resolve(p, point(c, "asm_inner", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_asm_fn", NULL, 0);
}

/* ---- data addresses (sym_proc__resolve_data: a lock's name) ---- */

/* the memory kinds from maps text alone: no file is opened (none of these paths exist) */
static const char DATA_MAPS[] =
	"555555554000-555555555000 r--p 00000000 fe:01 1234  /nonexistent/prog\n"
	"555555556000-555555558000 rw-p 00002000 fe:01 1234  /nonexistent/prog\n"
	"55555555a000-55555557b000 rw-p 00000000 00:00 0     [heap]\n"
	/* a thread's stack: its guard below it */
	"7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
	"7f0000001000-7f0000801000 rw-p 00000000 00:00 0 \n"
	/* a malloc arena: its reserve above it, and the next arena's memory right after that */
	"7f1000000000-7f1000021000 rw-p 00000000 00:00 0 \n"
	"7f1000021000-7f1004000000 ---p 00000000 00:00 0 \n"
	"7f1004000000-7f1004021000 rw-p 00000000 00:00 0 \n"
	"7f2000000000-7f2000001000 rw-s 00000000 00:01 77    /dev/zero (deleted)\n"
	"7f3000000000-7f3000001000 rw-s 00003000 00:1a 88    /dev/shm/q (deleted)\n"
	"7f4000000000-7f4000001000 rw-p 00000000 00:00 0     [anon:pool]\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]\n";

static void test_data_kinds(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	struct sym_data d;

	assert_non_null(s);
	p = symbolizer__load_maps(s, DATA_MAPS, NULL);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve_data(p, 0x55555555a2a0, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_HEAP);
	assert_string_equal(d.module, "[heap]");
	assert_int_equal(d.offset, 0x2a0);
	assert_int_equal(sym_proc__resolve_data(p, 0x7ffd00020010, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_STACK);
	assert_int_equal(sym_proc__resolve_data(p, 0x7f0000800e80, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_THREAD_STACK);
	assert_null(d.module);
	assert_int_equal(d.map_start, 0x7f0000001000);
	assert_int_equal(sym_proc__resolve_data(p, 0x7f1000000900, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_ANON);
	assert_false(d.shared);
	assert_int_equal(sym_proc__resolve_data(p, 0x7f1004000900, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_ANON);
	assert_int_equal(sym_proc__resolve_data(p, 0x7f2000000040, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_ANON);
	assert_true(d.shared);
	/* a deleted file's shared mapping: not opened, its file offset */
	assert_int_equal(sym_proc__resolve_data(p, 0x7f3000000040, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_FILE);
	assert_string_equal(d.module, "/dev/shm/q");
	assert_int_equal(d.offset, 0x3040);
	assert_true(d.shared);
	assert_int_equal(sym_proc__resolve_data(p, 0x7f4000000010, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_ANON);
	assert_string_equal(d.module, "[anon:pool]");
	/* a file that cannot be read: its offset in the file */
	assert_int_equal(sym_proc__resolve_data(p, 0x555555557010, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_FILE);
	assert_int_equal(d.offset, 0x3010);
	assert_int_equal(sym_proc__resolve_data(p, 0x555555559000, &d), -ENOENT);
	assert_int_equal(d.kind, SYM_DATA_UNMAPPED);
	sym_proc__free(p);
	symbolizer__free(s);
}

/* this process's own data: objects in .data and .bss (also past the file's last page, in the
 * anonymous mapping after it), by name and offset as nm has them; the heap, a thread's stack,
 * a shared file mapping */
struct data_pair {
	long a[2];
	long b[2];
};
struct data_pair data_in_data = { { 1, 2 }, { 3, 4 } };
static char data_in_bss[1 << 17];
static pthread_mutex_t data_go = PTHREAD_MUTEX_INITIALIZER;

static void *data_thread(void *arg)
{
	long local[4] = { 0 };

	*(long **)arg = local;
	/* held by the test until it has looked */
	pthread_mutex_lock(&data_go);
	pthread_mutex_unlock(&data_go);
	return (void *)local[0];
}

static void test_data_own(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	long *volatile tl = NULL;
	char path[] = "/tmp/ebprof-data-XXXXXX";
	struct sym_proc *p;
	struct sym_data d;
	pthread_t t;
	void *heap = malloc(64), *map;
	int fd = mkstemp(path);

	assert_non_null(s);
	assert_non_null(heap);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 0x3000), 0);
	map = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0x2000);
	assert_true(map != MAP_FAILED);
	pthread_mutex_lock(&data_go);
	assert_int_equal(pthread_create(&t, NULL, data_thread, (void *)&tl), 0);
	while (!tl)
		usleep(1000);
	p = symbolizer__load_pid(s, getpid());
	assert_non_null(p);

	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)&data_in_data.b[1], &d), 0);
	assert_int_equal(d.kind, SYM_DATA_MODULE);
	assert_string_equal(d.symbol, "data_in_data");
	assert_int_equal(d.offset, 0x18);
	assert_string_equal(base_name(d.module), "test_symbolize");
	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)&data_in_bss[0], &d), 0);
	assert_string_equal(d.symbol, "data_in_bss");
	assert_int_equal(d.offset, 0);
	/* past the first page of .bss: anonymous memory after the file's mapping */
	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)&data_in_bss[100000], &d), 0);
	assert_int_equal(d.kind, SYM_DATA_MODULE);
	assert_string_equal(d.symbol, "data_in_bss");
	assert_int_equal(d.offset, 100000);
	assert_string_equal(base_name(d.module), "test_symbolize");

	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)heap, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_HEAP);
	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)&tl, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_STACK);
	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)tl, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_THREAD_STACK);
	assert_int_equal(sym_proc__resolve_data(p, (uintptr_t)map + 0x40, &d), 0);
	assert_int_equal(d.kind, SYM_DATA_FILE);
	assert_string_equal(d.module, path);
	assert_int_equal(d.offset, 0x2040);
	assert_true(d.shared);

	pthread_mutex_unlock(&data_go);
	pthread_join(t, NULL);
	sym_proc__free(p);
	symbolizer__free(s);
	munmap(map, 0x1000);
	close(fd);
	unlink(path);
	free(heap);
}

static void test_fixture_pie(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[PATH_MAX];
	struct sym_result r;
	struct sym_proc *p;
	struct child c;
	uint64_t off;

	child_start(&c, "sym_target");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	check_full_debug(p, &c, "sym_target");
	check_gap(p, &c, "sym_target");

	/* PIE: module_offset is the ELF vaddr, here equal to the file offset of the symbol. */
	fixture_path(path, sizeof(path), "sym_target");
	assert_int_equal(sym_elf_symbol_offset(path, "sym_leaf", &off), 0);
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf_entry", NULL), false, &r), 0);
	assert_int_equal(r.module_offset, off);
	assert_true(r.map_start <= point(&c, "leaf_entry", NULL));

	/* After the process is gone, its (build-id, file offset) pairs still resolve. */
	{
		uint64_t leaf = point(&c, "leaf", NULL), file_off;
		char bid[128];
		struct sym_result rb;

		/* the fixture, libc, ld.so */
		assert_true(sym_proc__load_modules(p) >= 3);
		assert_int_equal(sym_proc__resolve(p, leaf, false, &r), 0);
		file_off = leaf - r.map_start + r.map_offset;
		snprintf(bid, sizeof(bid), "%s", r.build_id);
		for (char *q = bid; *q; q++)
			if (*q >= 'a' && *q <= 'f')
				*q -= 'a' - 'A';
		sym_proc__free(p);
		p = NULL;
		child_stop(&c);
		assert_int_equal(symbolizer__resolve_build_id(s, bid, file_off + 1, true, &rb), 0);
		assert_int_equal(rb.module_offset, r.module_offset);
		assert_ptr_equal(rb.module, r.module);
		assert_true(rb.executable);
		assert_int_equal(rb.nframes, 1);
		assert_string_equal(rb.frames[0].function, "sym_leaf");
		assert_int_equal(rb.frames[0].line, r.frames[0].line);
		assert_int_equal(symbolizer__resolve_build_id(s, "00112233", 0x1000, false, &rb),
				 -ENOENT);
	}

	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* Debug files found by build-id under opts.debug_dir (.build-id/xx/rest.debug), the way
 * libc6-dbg's are under /usr/lib/debug. */
static void test_debug_dir_build_id(void **state)
{
	char dir[] = "/tmp/ebprof-dbg-XXXXXX", sub[256], link[512], target[PATH_MAX], rel[PATH_MAX];
	struct symbolizer_opts opts = { 0 };
	struct symbolizer *s, *probe;
	int inline_line = 0, call_line = 0;
	struct sym_result r;
	struct sym_proc *p;
	struct child c;

	assert_non_null(mkdtemp(dir));
	child_start(&c, "sym_target.dynsym");
	point(&c, "call", &call_line);

	/* Learn the build-id with a default symbolizer first. */
	probe = symbolizer__new(NULL);
	p = symbolizer__load_pid(probe, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, point(&c, "inline", &inline_line), false, &r), 0);
	assert_non_null(r.build_id);
	assert_int_equal(r.nframes, 1);		/* no debug info reachable yet */
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, r.build_id);
	snprintf(link, sizeof(link), "%s/%s.debug", sub, r.build_id + 2);
	sym_proc__free(p);
	symbolizer__free(probe);

	snprintf(target, sizeof(target), "%s/.build-id", dir);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	fixture_path(rel, sizeof(rel), "sym_target.debug");
	assert_non_null(realpath(rel, target));
	assert_int_equal(symlink(target, link), 0);

	opts.debug_dir = dir;
	s = symbolizer__new(&opts);
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, point(&c, "inline", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 2);
	assert_frame(&r.frames[0], "sym_inlined", "sym_target.c", inline_line);
	assert_frame(&r.frames[1], "sym_outer", "sym_target.c", call_line);
	assert_int_equal(sym_proc__resolve(p, point(&c, "static", NULL), false, &r), 0);
	assert_frame(&r.frames[0], "sym_static_fn", "sym_target.c", 0);
	sym_proc__free(p);
	symbolizer__free(s);
	child_stop(&c);

	unlink(link);
	rmdir(sub);
	snprintf(target, sizeof(target), "%s/.build-id", dir);
	rmdir(target);
	rmdir(dir);
}

/* ---- decompressed debug files (debugcache.c) ---- */

static int compressed_sections(const char *path)
{
	Elf_Scn *scn = NULL;
	int n = 0, fd = open(path, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			n++;
	}
	elf_end(elf);
	close(fd);
	return n;
}

/* sym_target.dynsym's DWARF from dbg_dir (by build-id), through the cache in cache_dir: lines
 * and the inline frame as from the file itself. */
static void check_cached_lines(const struct child *c, const char *dbg_dir, const char *cache_dir)
{
	struct symbolizer_opts opts = { .debug_dir = dbg_dir, .cache_dir = cache_dir };
	struct symbolizer *s = symbolizer__new(&opts);
	int inline_line = 0, call_line = 0, leaf_line = 0;
	struct sym_result r;
	struct sym_proc *p;

	assert_non_null(s);
	p = symbolizer__load_pid(s, c->pid);
	assert_non_null(p);
	point(c, "call", &call_line);
	assert_int_equal(sym_proc__resolve(p, point(c, "inline", &inline_line), false, &r), 0);
	assert_int_equal(r.nframes, 2);
	assert_frame(&r.frames[0], "sym_inlined", "sym_target.c", inline_line);
	assert_frame(&r.frames[1], "sym_outer", "sym_target.c", call_line);
	assert_int_equal(sym_proc__resolve(p, point(c, "leaf", &leaf_line), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_leaf", "sym_target.c", leaf_line);
	sym_proc__free(p);
	symbolizer__free(s);
}

static void test_debug_cache(void **state)
{
	char dir[] = "/tmp/ebprof-dcache-XXXXXX", dbg[64], cache[64], sub[256], link[512],
	     copy[512], stamp[600], target[PATH_MAX], rel[PATH_MAX];
	struct symbolizer *probe;
	struct stat st, st2;
	struct sym_result r;
	struct sym_proc *p;
	char bid[128];
	struct child c;
	FILE *f;

	(void)state;
	fixture_path(rel, sizeof(rel), "sym_target.zdebug");
	assert_non_null(realpath(rel, target));
	/* the fixture is what it stands for: compressed DWARF (objcopy can make it) */
	assert_true(compressed_sections(target) > 0);

	assert_non_null(mkdtemp(dir));
	snprintf(dbg, sizeof(dbg), "%s/dbg", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	child_start(&c, "sym_target.dynsym");
	probe = symbolizer__new(NULL);
	p = symbolizer__load_pid(probe, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf", NULL), false, &r), 0);
	assert_non_null(r.build_id);
	snprintf(bid, sizeof(bid), "%s", r.build_id);
	sym_proc__free(p);
	symbolizer__free(probe);

	assert_int_equal(mkdir(dbg, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/.build-id", dbg);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dbg, bid);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(link, sizeof(link), "%s/%s.debug", sub, bid + 2);
	assert_int_equal(symlink(target, link), 0);
	snprintf(copy, sizeof(copy), "%s/debug/%s.debug", cache, bid);

	/* without a cache: the compressed file itself */
	check_cached_lines(&c, dbg, NULL);
	assert_int_equal(access(cache, F_OK), -1);

	/* first use: the copy is made (private, uncompressed), the answers the same */
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(compressed_sections(copy), 0);

	/* valid: used as it is; checked whole once, its stamp (inode, size, mtime) kept beside
	 * it, and then trusted without reading it all */
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	snprintf(stamp, sizeof(stamp), "%s.ok", copy);
	assert_int_equal(access(stamp, F_OK), 0);
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);

	/* truncated: not trusted, made again */
	assert_int_equal(truncate(copy, st.st_size / 2), 0);
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st2), 0);
	assert_true(st2.st_ino != st.st_ino);
	assert_int_equal(st2.st_size, st.st_size);

	/* one byte changed in the middle: the checksum catches it */
	st = st2;
	f = fopen(copy, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
	{
		int ch = fgetc(f);

		assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
		assert_int_equal(fputc(ch ^ 0x55, f), ch ^ 0x55);
	}
	assert_int_equal(fclose(f), 0);
	{
		/* another mtime than the stamp's, whatever the clock's granularity */
		struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };

		assert_int_equal(utimensat(AT_FDCWD, copy, ts, 0), 0);
	}
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st2), 0);
	assert_true(st2.st_ino != st.st_ino);

	/* readable by others: not trusted, made again private */
	st = st2;
	assert_int_equal(chmod(copy, 0644), 0);
	check_cached_lines(&c, dbg, cache);
	assert_int_equal(stat(copy, &st2), 0);
	assert_true(st2.st_ino != st.st_ino);
	assert_int_equal(st2.st_mode & 0777, 0600);

	/* a process seen through another root (mount namespace): its debug files are not
	 * cached (another namespace could claim any build-id), its lines still found */
	{
		struct symbolizer_opts opts = { .debug_dir = dbg };
		char cache2[96], mpath[64], *maps;
		struct symbolizer *s;
		int inline_line = 0;

		snprintf(cache2, sizeof(cache2), "%s/cache2", dir);
		opts.cache_dir = cache2;
		s = symbolizer__new(&opts);
		snprintf(mpath, sizeof(mpath), "/proc/%d/maps", (int)c.pid);
		maps = util_read_file(mpath, NULL);
		assert_non_null(maps);
		p = symbolizer__load_maps(s, maps, "/");
		free(maps);
		assert_non_null(p);
		assert_int_equal(sym_proc__resolve(p, point(&c, "inline", &inline_line), false, &r), 0);
		assert_int_equal(r.nframes, 2);
		assert_frame(&r.frames[0], "sym_inlined", "sym_target.c", inline_line);
		assert_int_equal(access(cache2, F_OK), -1);
		sym_proc__free(p);
		symbolizer__free(s);
	}

	/* the original gone: the copy is not used either (answers as without a cache) */
	assert_int_equal(unlink(link), 0);
	{
		struct symbolizer_opts opts = { .debug_dir = dbg, .cache_dir = cache };
		struct symbolizer *s = symbolizer__new(&opts);

		p = symbolizer__load_pid(s, c.pid);
		assert_non_null(p);
		assert_int_equal(sym_proc__resolve(p, point(&c, "inline", NULL), false, &r), 0);
		assert_int_equal(r.nframes, 1);	/* no DWARF: the symbol only */
		assert_null(r.frames[0].file);
		sym_proc__free(p);
		symbolizer__free(s);
	}
	child_stop(&c);

	unlink(copy);
	unlink(stamp);
	snprintf(sub, sizeof(sub), "%s/debug", cache);
	rmdir(sub);
	rmdir(cache);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dbg, bid);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id", dbg);
	rmdir(sub);
	rmdir(dbg);
	rmdir(dir);
}

/* This system's libc (with libc6-dbg, compressed DWARF): every frame, file and line the same
 * through the cache, made and then used, as without it. */
/* The load address of this test program's first mapping (file offset 0) */
static uint64_t self_base(void)
{
	char exe[PATH_MAX], line[PATH_MAX + 128];
	uint64_t start = 0, off;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	assert_true(n > 0);
	exe[n] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (path && sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64, &start, &off) == 2 &&
		    !off && !strncmp(path, exe, strlen(exe)) && path[strlen(exe)] == '\n')
			break;
		start = 0;
	}
	fclose(f);
	assert_true(start != 0);
	return start;
}

/* An address in a PLT stub is named NAME@plt after the function the stub jumps to, as objdump
 * names it (the oracle here), not after the zero-size _init before the PLT (which reached over
 * it up to the next symbol: every PLT sample read "_init"); _init itself keeps its name. */
static void test_plt_names(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	uint64_t base = self_base(), a;
	char line[512], name[256], cmd[128];
	int stubs = 0, init = 0;
	FILE *f;

	(void)state;
	/* this process's file: /proc/self would be objdump's own */
	snprintf(cmd, sizeof(cmd), "objdump -d -j .init -j .plt -j .plt.sec -j .plt.got "
		 "/proc/%d/exe", (int)getpid());
	f = popen(cmd, "r");
	assert_non_null(f);
	p = symbolizer__load_pid(s, getpid());
	assert_non_null(p);
	while (fgets(line, sizeof(line), f)) {
		struct sym_result r;
		char *at;

		if (sscanf(line, "%" SCNx64 " <%255[^>]>:", &a, name) != 2)
			continue;
		at = strstr(name, "@plt");
		if (at ? at[4] != '\0' : strcmp(name, "_init") != 0)
			continue;	/* "x@plt-0x10": PLT0, no stub of its own */
		for (uint64_t d = 0; d < 8; d += 4) {	/* its first byte, and inside it */
			assert_int_equal(sym_proc__resolve(p, base + a + d, false, &r), 0);
			assert_true(r.nframes >= 1);
			assert_non_null(r.frames[0].function);
			assert_string_equal(r.frames[0].function, name);
		}
		stubs += at != NULL;
		init += at == NULL;
	}
	pclose(f);
	printf("  %d PLT stubs named as objdump names them; _init %d\n", stubs, init);
	assert_true(stubs > 10);
	assert_int_equal(init, 1);
	symbolizer__free(s);
}

/* A snapshot from the maps text the caller read (procs.c hashes it, then snapshots it): the
 * mappings of that text only, not of a second read of /proc/PID/maps (a dlopen'ed library
 * could be there in one and not in the other). */
static void test_load_pid_maps_text(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *only_libc, *whole;
	struct sym_result r;
	char line[PATH_MAX + 128], *text;
	size_t len = 0, cap = 1 << 16;
	FILE *f = fopen("/proc/self/maps", "r");

	(void)state;
	text = calloc(1, cap);
	assert_non_null(text);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/libc.so.6") && len + strlen(line) < cap) {
			memcpy(text + len, line, strlen(line));
			len += strlen(line);
		}
	fclose(f);
	assert_true(len > 0);
	only_libc = symbolizer__load_pid_maps(s, getpid(), text);
	whole = symbolizer__load_pid_maps(s, getpid(), NULL);
	assert_non_null(only_libc);
	assert_non_null(whole);
	assert_int_equal(sym_proc__resolve(only_libc, (uint64_t)(uintptr_t)qsort, false, &r), 0);
	assert_non_null(r.module);
	assert_non_null(strstr(r.module, "libc.so.6"));
	/* this program's own code: in the whole maps file, not in the text given */
	assert_int_equal(sym_proc__resolve(whole, (uint64_t)(uintptr_t)test_load_pid_maps_text,
					   false, &r), 0);
	assert_int_equal(sym_proc__resolve(only_libc, (uint64_t)(uintptr_t)test_load_pid_maps_text,
					   false, &r), -ENOENT);
	sym_proc__free(only_libc);
	sym_proc__free(whole);
	free(text);
	symbolizer__free(s);
}

static void test_debug_cache_libc(void **state)
{
	void *fns[] = { (void *)malloc, (void *)free, (void *)printf, (void *)fopen,
			(void *)qsort, (void *)strtod };
	char dir[] = "/tmp/ebprof-dcache-XXXXXX", sub[64];
	struct symbolizer_opts with = { .cache_dir = dir };
	struct symbolizer *s0, *s1, *s2;
	struct sym_proc *p0, *p1, *p2 = NULL;
	int lines = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	s0 = symbolizer__new(NULL);
	s1 = symbolizer__new(&with);
	s2 = symbolizer__new(&with);
	p0 = symbolizer__load_pid(s0, getpid());
	p1 = symbolizer__load_pid(s1, getpid());
	assert_non_null(p0);
	assert_non_null(p1);
	for (int pass = 0; pass < 2; pass++) {
		struct sym_proc *pc = pass ? NULL : p1;

		if (pass) {	/* a new symbolizer: the copy made by the first is read */
			p2 = symbolizer__load_pid(s2, getpid());
			assert_non_null(p2);
			pc = p2;
		}
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
			for (uint64_t d = 0; d < 64; d += 16) {
				uint64_t a = (uint64_t)(uintptr_t)fns[i] + d;
				struct sym_result x, y;

				assert_int_equal(sym_proc__resolve(p0, a, false, &x), 0);
				assert_int_equal(sym_proc__resolve(pc, a, false, &y), 0);
				assert_int_equal(x.nframes, y.nframes);
				for (uint32_t j = 0; j < x.nframes; j++) {
					const struct sym_frame *fx = &x.frames[j], *fy = &y.frames[j];

					assert_true(!fx->function == !fy->function);
					if (fx->function)
						assert_string_equal(fx->function, fy->function);
					assert_true(!fx->file == !fy->file);
					if (fx->file)
						assert_string_equal(fx->file, fy->file);
					assert_int_equal(fx->line, fy->line);
					lines += fx->line > 0;
				}
			}
		}
	}
	snprintf(sub, sizeof(sub), "%s/debug", dir);
	printf("  libc: %d frames with lines; %s\n", lines,
	       access(sub, F_OK) ? "no decompressed copy (no compressed debug file)" :
				   "through a decompressed copy");
	sym_proc__free(p0);
	sym_proc__free(p1);
	sym_proc__free(p2);
	symbolizer__free(s0);
	symbolizer__free(s1);
	symbolizer__free(s2);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_fixture_exec(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_result r;
	struct sym_proc *p;
	struct child c;

	child_start(&c, "sym_target.nopie");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	check_full_debug(p, &c, "sym_target.nopie");
	check_gap(p, &c, "sym_target.nopie");
	/* ET_EXEC: the ELF vaddr is the run-time address. */
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf", NULL), false, &r), 0);
	assert_int_equal(r.module_offset, point(&c, "leaf", NULL));
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

static void test_fixture_debuglink(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	struct child c;

	/* Stripped of .symtab and DWARF: everything comes from sym_target.debug. */
	child_start(&c, "sym_target.stripped");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	check_full_debug(p, &c, "sym_target.stripped");
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

static void test_fixture_dynsym_only(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_result r;
	struct sym_proc *p;
	struct child c;

	child_start(&c, "sym_target.dynsym");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_leaf", NULL, 0);
	assert_null(r.frames[0].file);
	assert_int_equal(r.frames[0].line, 0);
	/* Inlined code is only known to DWARF: one frame, the containing function. */
	assert_int_equal(sym_proc__resolve(p, point(&c, "inline", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_outer", NULL, 0);
	/* A static function is in no table here. */
	assert_int_equal(sym_proc__resolve(p, point(&c, "static", NULL), false, &r), 0);
	assert_true(r.nframes == 0 || strcmp(r.frames[0].function, "sym_static_fn"));
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* Code no symbol covers, in a file that keeps its call frame information (strip keeps
 * .eh_frame): named after the FDE holding it, "sym_target.dynsym!sub_HEX", HEX the FDE's start
 * as an ELF virtual address (module_offset's basis), every address of the range one name. The
 * oracles: the full file's symbol table (nm -S), which the stripped copy lacks, and readelf's
 * FDEs of the stripped copy. Before, each address was its own "sym_target.dynsym+0x..". */
#define FDE_MAX 64

static void test_fixture_fde_names(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char full[PATH_MAX], stripped[PATH_MAX], cmd[PATH_MAX + 64], line[512], name[256];
	struct { uint64_t lo, hi; } fde[FDE_MAX];
	unsigned long long a, sz, lo, hi;
	uint64_t base = 0;
	int nfde = 0, named = 0;
	struct sym_result r;
	struct sym_proc *p;
	struct child c;
	FILE *f;
	char t;

	(void)state;
	fixture_path(full, sizeof(full), "sym_target");
	fixture_path(stripped, sizeof(stripped), "sym_target.dynsym");
	snprintf(cmd, sizeof(cmd), "readelf -wf %s", stripped);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && nfde < FDE_MAX)
		if (strstr(line, " FDE ") && strstr(line, "pc=") &&
		    sscanf(strstr(line, "pc="), "pc=%llx..%llx", &lo, &hi) == 2) {
			fde[nfde].lo = lo;
			fde[nfde++].hi = hi;
		}
	pclose(f);
	assert_true(nfde >= 4);

	child_start(&c, "sym_target.dynsym");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s", full);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %llx %c %255s", &a, &sz, &t, name) == 4 &&
		    !strcmp(name, "sym_leaf"))
			base = point(&c, "leaf_entry", NULL) - a;
	pclose(f);
	assert_true(base != 0);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char want[300];
		int k;

		/* the static functions: in .symtab only, which the stripped copy lost */
		if (sscanf(line, "%llx %llx %c %255s", &a, &sz, &t, name) != 4 || t != 't' || !sz)
			continue;
		for (k = 0; k < nfde && fde[k].lo != a; k++)
			;
		/* its first byte, one inside, its last */
		for (int i = 0; i < 3; i++) {
			uint64_t at = i == 0 ? 0 : i == 1 ? sz / 2 : sz - 1;

			assert_int_equal(sym_proc__resolve(p, base + a + at, false, &r), 0);
			if (k == nfde) {
				/* no FDE either (hand-written assembly): an offset, as before */
				assert_int_equal(r.nframes, 0);
				continue;
			}
			/* the FDE is the function's range, as the full file's symbol says */
			assert_int_equal(fde[k].hi, a + sz);
			snprintf(want, sizeof(want), "sym_target.dynsym!sub_%llx", a);
			assert_int_equal(r.nframes, 1);
			assert_string_equal(r.frames[0].function, want);
			assert_string_equal(r.frames[0].system_name, want);
			assert_null(r.frames[0].file);
			assert_true(r.frames[0].cfi_named);
			assert_int_equal(r.module_offset, a + at);
			named++;
		}
		if (k == nfde)
			continue;
		/* a return address one past its last byte is a call in it */
		assert_int_equal(sym_proc__resolve(p, base + a + sz, true, &r), 0);
		assert_int_equal(r.nframes, 1);
		assert_string_equal(r.frames[0].function, want);
		/* its first byte before it: another function's */
		assert_int_equal(sym_proc__resolve(p, base + a - 1, false, &r), 0);
		assert_true(r.nframes == 0 || strcmp(r.frames[0].function, want));
	}
	pclose(f);
	/* sym_static_fn and sym_static_loop, three addresses each */
	assert_true(named >= 6);
	/* a symbol still wins: sym_outer is in .dynsym */
	assert_int_equal(sym_proc__resolve(p, point(&c, "call", NULL) + 1, false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_string_equal(r.frames[0].function, "sym_outer");
	assert_false(r.frames[0].cfi_named);
	/* bytes no symbol and no FDE covers stay an offset */
	assert_int_equal(sym_proc__resolve(p, point(&c, "gap", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 0);
	/* a sized symbol names its bytes only: past them, the FDE that covers the function
	 * whole names the rest after its start, the symbol's address */
	assert_int_equal(sym_proc__resolve(p, point(&c, "short_head", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_string_equal(r.frames[0].function, "sym_short_fn");
	assert_false(r.frames[0].cfi_named);
	assert_int_equal(sym_proc__resolve(p, point(&c, "short_tail", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_true(r.frames[0].cfi_named);
	assert_int_equal(r.module_offset, point(&c, "short_tail", NULL) - base);
	snprintf(line, sizeof(line), "sym_target.dynsym!sub_%" PRIx64,
		 point(&c, "short_head", NULL) - 2 - base);
	assert_string_equal(r.frames[0].function, line);
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* One build-id, two files: sym_target.dynsym (.dynsym only) and sym_target (.symtab and DWARF).
 * The first file met was the build-id's one module: met first, the .dynsym-only copy left the
 * full file's static functions and lines unnamed. Now the richer file is read for its own, the
 * poorer copy names its code from it, in either order, and keeps it through a trim while only
 * the poorer copy's process is left. */
static void test_same_build_id_richer(void **state)
{
	(void)state;
	for (int order = 0; order < 2; order++) {
		struct symbolizer *s = symbolizer__new(NULL);
		const char *names[2] = { "sym_target.dynsym", "sym_target" };
		struct sym_proc *p[2];
		struct child c[2];
		struct sym_result r;

		for (int i = 0; i < 2; i++) {
			int k = order ? 1 - i : i;

			child_start(&c[k], names[k]);
			p[k] = symbolizer__load_pid(s, c[k].pid);
			assert_non_null(p[k]);
			assert_true(sym_proc__load_modules(p[k]) >= 1);
		}
		check_full_debug(p[1], &c[1], "sym_target");
		check_full_debug(p[0], &c[0], "sym_target.dynsym");
		/* the full file's process gone: its module stays while the copy's maps it */
		sym_proc__free(p[1]);
		/* (the other child may hold its pipe: no end of input for it) */
		kill(c[1].pid, SIGKILL);
		child_stop(&c[1]);
		symbolizer__trim(s, 1);
		symbolizer__trim(s, 1);
		assert_int_equal(sym_proc__resolve(p[0], point(&c[0], "static", NULL), false, &r),
				 0);
		assert_int_equal(r.nframes, 1);
		assert_frame(&r.frames[0], "sym_static_fn", "sym_target.c", 0);
		sym_proc__free(p[0]);
		child_stop(&c[0]);
		symbolizer__free(s);
	}
}

/* maps text of one library file (its two first segments) at 0x7f0000000000, inode ino */
static void plugin_maps(char *buf, size_t len, const char *fixture, int ino)
{
	char rel[PATH_MAX], path[PATH_MAX];

	fixture_path(rel, sizeof(rel), fixture);
	assert_non_null(realpath(rel, path));
	snprintf(buf, len,
		 "7f0000000000-7f0000001000 r--p 00000000 08:01 %d %s\n"
		 "7f0000001000-7f0000002000 r-xp 00001000 08:01 %d %s\n", ino, path, ino, path);
}

/* Two snapshots that map two files (libreplug1.so, then libreplug2.so: the same layout, the hot
 * function named for each) at one address: the newest named both, the first file's samples with
 * the second's replug_v2_hot. Now named from neither, the other file said; one file in both
 * snapshots (or one build-id) is named as before. */
static void test_replaced_library_ambiguous(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	const uint64_t hot = 0x7f0000001109 + 4;	/* inside replug_vN_hot */
	char text[2 * PATH_MAX + 256];
	struct sym_proc *a, *b;
	struct sym_result r;
	uint64_t serial;

	(void)state;
	plugin_maps(text, sizeof(text), "libreplug1.so", 11);
	a = symbolizer__load_maps(s, text, NULL);
	assert_non_null(a);
	assert_int_equal(sym_proc__resolve(a, hot, false, &r), 0);
	assert_null(r.other_module);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "replug_v1_hot", NULL, 0);
	plugin_maps(text, sizeof(text), "libreplug2.so", 12);
	b = symbolizer__load_maps(s, text, NULL);
	assert_non_null(b);
	sym_proc__keep_previous(b, a, 16);
	assert_int_equal(sym_proc__resolve(b, hot, false, &r), 0);
	assert_true(r.mapped && r.executable);
	assert_int_equal(r.nframes, 0);
	assert_string_equal(base_name(r.module), "libreplug2.so");
	assert_non_null(r.other_module);
	assert_string_equal(base_name(r.other_module), "libreplug1.so");
	assert_int_equal(r.module_offset, 0x1109 + 4);
	/* said to a caller that reads its counts out then (cpu), which forgets the earlier one:
	 * named from the new file alone, under a new serial */
	assert_true(sym_proc__replaces_code(b));
	serial = sym_proc__serial(b);
	sym_proc__forget_previous(b);
	assert_true(sym_proc__serial(b) != serial);
	assert_false(sym_proc__replaces_code(b));
	assert_int_equal(sym_proc__resolve(b, hot, false, &r), 0);
	assert_null(r.other_module);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "replug_v2_hot", NULL, 0);
	sym_proc__free(b);

	/* the same file in both snapshots: named */
	plugin_maps(text, sizeof(text), "libreplug1.so", 11);
	a = symbolizer__load_maps(s, text, NULL);
	b = symbolizer__load_maps(s, text, NULL);
	sym_proc__keep_previous(b, a, 16);
	assert_false(sym_proc__replaces_code(b));
	assert_int_equal(sym_proc__resolve(b, hot, false, &r), 0);
	assert_null(r.other_module);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "replug_v1_hot", NULL, 0);
	sym_proc__free(b);
	symbolizer__free(s);
}

static void test_fixture_minidebuginfo(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_result r;
	struct sym_proc *p;
	struct child c;

	child_start(&c, "sym_target.mini");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	/* Only in the xz-compressed .gnu_debugdata symbol table. */
	assert_int_equal(sym_proc__resolve(p, point(&c, "static", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_static_fn", NULL, 0);
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_leaf", NULL, 0);
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

static void copy_file(const char *from, const char *to)
{
	char buf[8192];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t r;

	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	close(out);
}

/* A program whose file was deleted (upgraded package, tmp build): reported by its path; symbols
 * come through /proc/PID/map_files when this user may open it (root), else none. */
static void test_deleted_executable(void **state)
{
	char dir[] = "/tmp/ebprof-del-XXXXXX", path[PATH_MAX], src[PATH_MAX], mf[128];
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_result r;
	struct sym_proc *p;
	struct child c;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/victim", dir);
	fixture_path(src, sizeof(src), "sym_target");
	copy_file(src, path);
	child_start_path(&c, path);
	assert_int_equal(unlink(path), 0);
	rmdir(dir);

	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, point(&c, "leaf", NULL), false, &r), 0);
	assert_string_equal(r.module, path);
	assert_true(r.executable);
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)c.pid,
		 (unsigned long long)r.map_start, (unsigned long long)r.map_end);
	fd = open(mf, O_RDONLY);
	if (fd >= 0) {
		close(fd);
		assert_int_equal(r.nframes, 1);
		assert_string_equal(r.frames[0].function, "sym_leaf");
	} else {
		printf("  %s not readable (%s): expecting no symbols\n", mf, strerror(errno));
		assert_int_equal(r.nframes, 0);
	}
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* Maps text written by hand, files found under a root prefix (as for another mount
 * namespace): the module keeps its in-namespace name. */
static void test_maps_with_root(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char root[PATH_MAX], path[PATH_MAX], text[512];
	const uint64_t base = 0x560000000000ULL;
	struct sym_result r;
	struct sym_proc *p;
	uint64_t off;

	assert_non_null(realpath(out_dir(), root));
	fixture_path(path, sizeof(path), "sym_target");
	assert_int_equal(sym_elf_symbol_offset(path, "sym_outer", &off), 0);
	snprintf(text, sizeof(text),
		 "%llx-%llx r--p 00000000 fe:01 7 /fixtures/sym_target\n"
		 "%llx-%llx r-xp 00001000 fe:01 7 /fixtures/sym_target\n",
		 (unsigned long long)base, (unsigned long long)base + 0x1000,
		 (unsigned long long)base + 0x1000, (unsigned long long)base + 0x2000);
	p = symbolizer__load_maps(s, text, root);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, base + off + 4, false, &r), 0);
	assert_string_equal(r.module, "/fixtures/sym_target");
	assert_int_equal(r.module_offset, off + 4);
	assert_true(r.nframes >= 1);
	assert_string_equal(outer(&r)->function, "sym_outer");
	sym_proc__free(p);
	symbolizer__free(s);
}

/* ---- 5. C++ ---- */

static void test_cxx_fixture(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_opts raw_opts = { .no_demangle = true };
	struct symbolizer *raw = symbolizer__new(&raw_opts);
	struct sym_result r;
	struct sym_proc *p;
	struct child c;
	uint64_t frob, twice;

	child_start(&c, "sym_cxx");
	frob = point(&c, "frob", NULL);
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, frob, false, &r), 0);
	assert_int_equal(r.nframes, 1);
	assert_string_equal(r.frames[0].function, "ebprof_test::Widget::frob(int, char const*)");
	assert_string_equal(r.frames[0].system_name, "_ZN11ebprof_test6Widget4frobEiPKc");
	assert_string_equal(base_name(r.frames[0].file), "sym_cxx.cpp");
	assert_true(r.frames[0].line > 0);
	/* a function of internal linkage, inlined: DWARF names it "twice<int>" and no linkage
	 * name; qualified by its namespaces as gdb has it */
	twice = point(&c, "twice", NULL);
	assert_int_equal(sym_proc__resolve(p, twice, false, &r), 0);
	assert_int_equal(r.nframes, 2);
	assert_string_equal(r.frames[0].function, "ebprof_test::inner::twice<int>");
	assert_string_equal(r.frames[1].function, "ebprof_test::Widget::doubled(int)");
	sym_proc__free(p);

	p = symbolizer__load_pid(raw, c.pid);
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, frob, false, &r), 0);
	assert_string_equal(r.frames[0].function, "_ZN11ebprof_test6Widget4frobEiPKc");
	sym_proc__free(p);

	child_stop(&c);
	symbolizer__free(raw);
	symbolizer__free(s);
}

static void check_demangle(const char *mangled, const char *want)
{
	char *d = sym_demangle(mangled);

	if (!want) {
		assert_null(d);
		return;
	}
	assert_non_null(d);
	assert_string_equal(d, want);
	free(d);
}

static void test_demangle(void **state)
{
	check_demangle("_ZN2ns3fooEiPKc", "ns::foo(int, char const*)");
	check_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi",
		       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	check_demangle("_ZN3foo3barEv.cold", "foo::bar() [clone .cold]");
	/* Rust legacy: the hash is dropped. */
	check_demangle("_ZN7mycrate4main17h0123456789abcdefE", "mycrate::main");
	/* Rust v0 */
	check_demangle("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
	check_demangle("malloc", NULL);
	check_demangle("_Znot_valid", NULL);
	check_demangle(NULL, NULL);
}

/* ---- 4. glibc ---- */

static bool have_debug_file(const char *build_id)
{
	char path[PATH_MAX];

	if (!build_id || strlen(build_id) < 3)
		return false;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id,
		 build_id + 2);
	return access(path, R_OK) == 0;
}

static void test_glibc_malloc(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	void *addr = dlsym(RTLD_DEFAULT, "malloc");
	struct sym_result r, r2;
	struct sym_proc *p, *p2;
	const struct sym_frame *f;
	struct sym_module *m;
	int nmods = 0, nmods2 = 0;
	uint64_t off;

	assert_non_null(addr);
	p = symbolizer__load_pid(s, getpid());
	assert_non_null(p);
	assert_int_equal(sym_proc__resolve(p, (uint64_t)(uintptr_t)addr, false, &r), 0);
	assert_true(r.executable);
	assert_string_equal(base_name(r.module), "libc.so.6");
	assert_non_null(r.build_id);
	f = outer(&r);
	assert_non_null(strstr(f->function, "malloc"));
	if (have_debug_file(r.build_id)) {
		assert_non_null(r.frames[0].file);
		assert_true(r.frames[0].line > 0);
		printf("  malloc -> %s at %s:%d (%u frames)\n", f->function, r.frames[0].file,
		       r.frames[0].line, r.nframes);
	} else {
		printf("  no libc debug file for build-id %s: file:line not checked\n", r.build_id);
	}

	/* What a uprobe on malloc would attach to is this same place. */
	assert_int_equal(sym_elf_symbol_offset(r.module, "malloc", &off), 0);
	assert_int_equal(off, r.module_offset);

	/* A second snapshot shares the modules: nothing new is opened. */
	for (m = s->modules; m; m = m->next)
		nmods++;
	p2 = symbolizer__load_pid(s, getpid());
	assert_non_null(p2);
	assert_int_equal(sym_proc__resolve(p2, (uint64_t)(uintptr_t)addr, false, &r2), 0);
	for (m = s->modules; m; m = m->next)
		nmods2++;
	assert_int_equal(nmods, nmods2);
	assert_ptr_equal(r.build_id, r2.build_id);
	assert_ptr_equal(outer(&r2)->function, f->function);

	/* Anonymous memory: mapped, not executable, no frames. */
	{
		void *anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct sym_proc *p3;

		assert_true(anon != MAP_FAILED);
		p3 = symbolizer__load_pid(s, getpid());
		assert_non_null(p3);
		assert_int_equal(sym_proc__resolve(p3, (uintptr_t)anon + 64, false, &r), 0);
		assert_true(r.mapped);
		assert_false(r.executable);
		assert_int_equal(r.nframes, 0);
		sym_proc__free(p3);
		munmap(anon, 1 << 20);
	}

	sym_proc__free(p2);
	sym_proc__free(p);
	symbolizer__free(s);
}

/* ---- uprobe offsets ---- */

static void test_elf_symbol_offset(void **state)
{
	char path[PATH_MAX];
	uint64_t off = 0, off2 = 0;

	fixture_path(path, sizeof(path), "sym_target");
	assert_int_equal(sym_elf_symbol_offset(path, "sym_leaf", &off), 0);
	assert_true(off > 0);
	/* Static: .symtab only. */
	assert_int_equal(sym_elf_symbol_offset(path, "sym_static_fn", &off2), 0);
	assert_true(off2 > 0 && off2 != off);
	fixture_path(path, sizeof(path), "sym_target.dynsym");
	assert_int_equal(sym_elf_symbol_offset(path, "sym_leaf", &off2), 0);
	assert_int_equal(off2, off);
	assert_int_equal(sym_elf_symbol_offset(path, "sym_static_fn", &off2), -ENOENT);
	/* ET_EXEC: a file offset, not the (0x400000-based) address. */
	fixture_path(path, sizeof(path), "sym_target.nopie");
	assert_int_equal(sym_elf_symbol_offset(path, "sym_leaf", &off2), 0);
	assert_true(off2 < 0x100000);

	assert_int_equal(sym_elf_symbol_offset(path, "no_such_function", &off2), -ENOENT);
	assert_int_equal(sym_elf_symbol_offset("/nonexistent/file", "main", &off2), -ENOENT);
	assert_int_equal(sym_elf_symbol_offset("tests/unit/symbolize.mk", "main", &off2), -ENOEXEC);
	assert_int_equal(sym_elf_symbol_offset(path, "", &off2), -EINVAL);

	/* Versioned names: "malloc@@GLIBC_2.2.5"-style entries match the plain name. */
	{
		Dl_info info;
		void *addr = dlsym(RTLD_DEFAULT, "malloc");

		assert_true(dladdr(addr, &info));
		assert_int_equal(sym_elf_symbol_offset(info.dli_fname, "malloc", &off), 0);
		assert_int_equal(sym_elf_symbol_offset(info.dli_fname, "free", &off2), 0);
		assert_true(off != off2);
		/* glibc's strlen and memcpy are IFUNCs: their address is the resolver, which a
		 * uprobe would count once per load, not per call (stacks -e u:libc:strlen counted
		 * 2 for 1,000 calls): said, with the resolver's offset */
		off = 0;
		assert_int_equal(sym_elf_symbol_offset(info.dli_fname, "strlen", &off), -EOPNOTSUPP);
		assert_true(off != 0);
		assert_int_equal(sym_elf_symbol_offset(info.dli_fname, "memcpy", &off), -EOPNOTSUPP);
	}
}

/* ---- 6. kallsyms ---- */

static void test_ksyms_literal(void **state)
{
	char dir[] = "/tmp/ebprof-ksyms-XXXXXX", path[PATH_MAX];
	struct ksyms *k;
	uint64_t off;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000100 t helper\n"
	      "ffffffff81000100 T helper_alias\n"
	      "ffffffff82000000 D some_data\n"
	      "ffffffff81000200 W weak_fn\n"
	      "ffffffffc0001000 t mod_fn\t[mymod]\n"
	      "ffffffff81000300 T do_sys_open\n", f);
	fclose(f);
	k = ksyms__load(path);
	assert_non_null(k);
	assert_null(ksyms__resolve(k, 0xffffffff80ffffffULL, &off));
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000000ULL, &off), "_stext");
	assert_int_equal(off, 0);
	/* Aliases: the global one. */
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000110ULL, &off), "helper_alias");
	assert_int_equal(off, 0x10);
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000250ULL, &off), "weak_fn");
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000310ULL, &off), "do_sys_open");
	/* Data symbols are not kept. */
	assert_string_equal(ksyms__resolve(k, 0xffffffff82000010ULL, &off), "do_sys_open");
	assert_string_equal(ksyms__resolve(k, 0xffffffffc0001004ULL, &off), "mod_fn");
	assert_int_equal(off, 4);
	ksyms__free(k);
	ksyms__free(NULL);

	/* Hidden addresses (kptr_restrict) are refused. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0000000000000000 T _stext\n0000000000000000 t helper\n", f);
	fclose(f);
	errno = 0;
	assert_null(ksyms__load(path));
	assert_int_equal(errno, EPERM);

	unlink(path);
	rmdir(dir);
	errno = 0;
	assert_null(ksyms__load(path));
	assert_int_equal(errno, ENOENT);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_ksyms_proc(void **state)
{
	struct ksyms *k;
	const char *name;
	double t0 = now_s();
	uint64_t off;
	void *addr;

	k = ksyms__load(NULL);
	if (!k) {
		printf("  /proc/kallsyms not usable (%s): skipped\n", strerror(errno));
		skip();
	}
	printf("  /proc/kallsyms loaded in %.1f ms\n", (now_s() - t0) * 1e3);
	/* Find a well-known function through its own address. */
	{
		FILE *f = fopen("/proc/kallsyms", "r");
		char line[256];
		unsigned long long a = 0;

		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			char t, n[200];

			if (sscanf(line, "%llx %c %199s", &a, &t, n) == 3 && !strcmp(n, "schedule"))
				break;
			a = 0;
		}
		fclose(f);
		addr = (void *)(uintptr_t)a;
	}
	if (addr) {
		name = ksyms__resolve(k, (uint64_t)(uintptr_t)addr + 1, &off);
		assert_non_null(name);
		assert_string_equal(name, "schedule");
		assert_int_equal(off, 1);
	}
	ksyms__free(k);
}

/* ---- 7b. the kallsyms cache ---- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Every lookup of `a` answers as `b`'s at each address of addrs. */
static void assert_same_lookups(const struct ksyms *a, const struct ksyms *b,
				const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ksym_info x, y;
		int rx = ksyms__lookup(a, addrs[i], &x), ry = ksyms__lookup(b, addrs[i], &y);

		if (rx != ry || !x.name != !y.name || (x.name && strcmp(x.name, y.name)) ||
		    x.offset != y.offset || !x.module != !y.module ||
		    (x.module && strcmp(x.module, y.module)) || x.start != y.start ||
		    x.end != y.end)
			fail_msg("%#llx: %d %s+%llu [%s] [%#llx,%#llx) against %d %s+%llu [%s] "
				 "[%#llx,%#llx)", (unsigned long long)addrs[i], rx,
				 x.name ? x.name : "-", (unsigned long long)x.offset,
				 x.module ? x.module : "", (unsigned long long)x.start,
				 (unsigned long long)x.end, ry, y.name ? y.name : "-",
				 (unsigned long long)y.offset, y.module ? y.module : "",
				 (unsigned long long)y.start, (unsigned long long)y.end);
	}
}

static enum ksyms_from load_cached_from(const char *ksp, const char *mods, const char *bid,
					const char *cache, struct ksyms **out)
{
	enum ksyms_from from = KSYMS_FROM_CACHE + 1;
	struct ksyms *k = ksyms__load_cached(ksp, mods, bid, cache, &from);

	assert_non_null(k);
	if (out)
		*out = k;
	else
		ksyms__free(k);
	return from;
}

static void test_ksyms_cache(void **state)
{
	static const char kallsyms[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 t helper\n"
		"ffffffff81000100 T helper_alias\n"
		"ffffffff81000200 W weak_fn\n"
		"ffffffff81000300 T do_sys_open\n"
		"ffffffff81000400 T _etext\n"
		"ffffffff82000000 D some_data\n"
		"ffffffff83000000 T _sinittext\n"
		"ffffffff83000000 t init_fn\n"
		"ffffffff83000100 T _einittext\n"
		"ffffffffc0001000 t mod_fn\t[mymod]\n"
		"ffffffffc0001080 t mod_fn2\t[mymod]\n"
		"ffffffffc0003000 t bpf_prog_0123456789abcdef_prog\t[bpf]\n"
		"ffffffffc0005000 t ftrace_trampoline\t[__builtin__ftrace]\n";
	static const uint64_t addrs[] = {
		0, 0xffffffff80ffffffULL, 0xffffffff81000000ULL, 0xffffffff81000001ULL,
		0xffffffff81000110ULL, 0xffffffff81000250ULL, 0xffffffff810003ffULL,
		0xffffffff81000400ULL, 0xffffffff82000010ULL, 0xffffffff83000050ULL,
		0xffffffff83000100ULL, 0xffffffffc0000fffULL, 0xffffffffc0001004ULL,
		0xffffffffc0001090ULL, 0xffffffffc0001fffULL, 0xffffffffc0002100ULL,
		0xffffffffc0003010ULL, 0xffffffffc0005004ULL, UINT64_MAX,
	};
	const size_t naddrs = sizeof(addrs) / sizeof(addrs[0]);
	char dir[] = "/tmp/ebprof-kcache-XXXXXX", ksp[PATH_MAX], mods[PATH_MAX], bid[PATH_MAX],
	     cache[PATH_MAX + 16], cdir[PATH_MAX];
	struct ksyms *full, *k;
	struct stat st;
	uint64_t off;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(ksp, sizeof(ksp), "%s/kallsyms", dir);
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	snprintf(bid, sizeof(bid), "%s/boot_id", dir);
	snprintf(cdir, sizeof(cdir), "%s/cache", dir);
	snprintf(cache, sizeof(cache), "%s/kallsyms", cdir);
	write_text(ksp, kallsyms);
	write_text(mods, "mymod 4096 0 - Live 0xffffffffc0001000\n");
	write_text(bid, "11111111-2222-3333-4444-555555555555\n");
	full = ksyms__load_paths(ksp, mods);
	assert_non_null(full);

	/* no cache yet: read, and the cache written (its directory made), private */
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(cdir, &st), 0);
	assert_int_equal(st.st_mode & 077, 0);

	/* valid: used, and every lookup answers as the whole table's, including those outside
	 * the core kernel (a module, a BPF program, a trampoline: read from kallsyms then) */
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_CACHE);
	assert_same_lookups(k, full, addrs, naddrs);
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000110ULL, &off), "helper_alias");
	assert_int_equal(off, 0x10);
	ksyms__free(k);
	/* the same with the outside lookups first */
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_CACHE);
	for (size_t i = naddrs; i-- > 0;)
		assert_same_lookups(k, full, &addrs[i], 1);
	ksyms__free(k);

	/* modules are never cached: a changed module list is seen with the cache still used */
	write_text(mods, "mymod 128 0 - Live 0xffffffffc0001000\n");
	ksyms__free(full);
	full = ksyms__load_paths(ksp, mods);
	assert_non_null(full);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_CACHE);
	assert_same_lookups(k, full, addrs, naddrs);
	assert_null(ksyms__resolve(k, 0xffffffffc0001090ULL, &off));	/* past mymod's end */
	ksyms__free(k);

	/* another boot: rebuilt, then used */
	write_text(bid, "99999999-2222-3333-4444-555555555555\n");
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_CACHE);

	/* another kernel text base (same boot id, as a test can make it): rebuilt with the new
	 * addresses, not answered from the old ones */
	write_text(ksp, "ffffffff91000000 T _stext\nffffffff91000100 T other_fn\n"
			"ffffffff91000400 T _etext\n");
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_CACHE);
	assert_string_equal(ksyms__resolve(k, 0xffffffff91000104ULL, &off), "other_fn");
	assert_null(ksyms__resolve(k, 0xffffffff81000110ULL, &off));
	ksyms__free(k);
	write_text(ksp, kallsyms);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);

	/* a truncated file: not trusted, rebuilt */
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(truncate(cache, st.st_size - 3), 0);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_KALLSYMS);
	assert_same_lookups(k, full, addrs, naddrs);
	ksyms__free(k);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_CACHE);
	assert_int_equal(truncate(cache, 10), 0);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);

	/* a changed byte (a name) with the size right: the checksum catches it */
	assert_int_equal(stat(cache, &st), 0);
	f = fopen(cache, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, st.st_size - 4, SEEK_SET), 0);
	assert_int_equal(fputc('X', f), 'X');
	assert_int_equal(fclose(f), 0);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_KALLSYMS);
	assert_same_lookups(k, full, addrs, naddrs);
	ksyms__free(k);

	/* readable by others: not trusted (and replaced by a private one) */
	assert_int_equal(chmod(cache, 0644), 0);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_CACHE);

	/* addresses hidden from this reader: no table, whatever the cache holds */
	write_text(ksp, "0000000000000000 T _stext\n0000000000000000 t helper\n");
	errno = 0;
	assert_null(ksyms__load_cached(ksp, mods, bid, cache, NULL));
	assert_int_equal(errno, EPERM);

	/* first lines with address 0 (per-CPU offsets on some kernels) before the rest: the
	 * cache is keyed by the first line with an address, and used */
	unlink(cache);
	write_text(ksp, "0000000000000000 A fixed_percpu_data\n"
			"0000000000000000 A __per_cpu_start\n"
			"0000000000001000 A cpu_debug_store\n"
			"ffffffff81000000 T _stext\n"
			"ffffffff81000100 T some_fn\n"
			"ffffffff81000400 T _etext\n");
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, &k), KSYMS_FROM_CACHE);
	assert_string_equal(ksyms__resolve(k, 0xffffffff81000104ULL, &off), "some_fn");
	ksyms__free(k);

	/* a symbol of another region inside the core text: no cache is written */
	unlink(cache);
	write_text(ksp, "ffffffff81000000 T _stext\n"
			"ffffffff81000100 t odd_fn\t[odd]\n"
			"ffffffff81000400 T _etext\n");
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(load_cached_from(ksp, mods, bid, cache, NULL), KSYMS_FROM_KALLSYMS);
	assert_int_equal(access(cache, F_OK), -1);

	/* no cache path: just read */
	assert_int_equal(load_cached_from(ksp, mods, bid, NULL, NULL), KSYMS_FROM_KALLSYMS);

	ksyms__free(full);
	unlink(cache);
	rmdir(cdir);
	unlink(ksp);
	unlink(mods);
	unlink(bid);
	rmdir(dir);
}

/* This machine's kernel: a table from the cache answers every text symbol's address (and the
 * bytes around it) as the whole /proc/kallsyms does. */
static void test_ksyms_cache_proc(void **state)
{
	char dir[] = "/tmp/ebprof-kcache-XXXXXX", cache[PATH_MAX + 16], line[512];
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	struct ksyms *full, *k;
	FILE *f;

	(void)state;
	full = ksyms__load_paths("/proc/kallsyms", "/proc/modules");
	if (!full) {
		printf("  /proc/kallsyms not usable (%s): skipped\n", strerror(errno));
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(cache, sizeof(cache), "%s/kallsyms", dir);
	assert_int_equal(load_cached_from("/proc/kallsyms", "/proc/modules",
					  "/proc/sys/kernel/random/boot_id", cache, NULL),
			 KSYMS_FROM_KALLSYMS);
	assert_int_equal(load_cached_from("/proc/kallsyms", "/proc/modules",
					  "/proc/sys/kernel/random/boot_id", cache, &k),
			 KSYMS_FROM_CACHE);
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t;

		/* the core kernel's: BPF programs come and go under other users of the
		 * machine, so two reads of the rest need not agree */
		if (sscanf(line, "%llx %c", &a, &t) != 2 || !strchr("tTwW", t) ||
		    strchr(line, '['))
			continue;
		if (n + 3 > cap) {
			cap = cap ? cap * 2 : 65536;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			assert_non_null(addrs);
		}
		addrs[n++] = a - 1;
		addrs[n++] = a;
		addrs[n++] = a + 7;
	}
	fclose(f);
	assert_same_lookups(k, full, addrs, n);
	printf("  %zu addresses answered alike\n", n);
	free(addrs);
	ksyms__free(k);
	ksyms__free(full);
	unlink(cache);
	rmdir(dir);
}

/* ---- 8. lookup rate ---- */

static void test_perf_libc(void **state)
{
	struct symbolizer_opts nolines = { .no_lines = true };
	struct symbolizer *s = symbolizer__new(&nolines), *sl = symbolizer__new(NULL);
	void *addr = dlsym(RTLD_DEFAULT, "malloc");
	uint64_t lo, hi, x = 88172645463325252ULL;
	const int N = 100000, DISTINCT = 2000;
	struct sym_proc *p, *pl;
	struct sym_result r;
	uint64_t *pool;
	int named = 0;
	double t0, t1;

	p = symbolizer__load_pid(s, getpid());
	pl = symbolizer__load_pid(sl, getpid());
	assert_non_null(p);
	assert_non_null(pl);
	assert_int_equal(sym_proc__resolve(p, (uint64_t)(uintptr_t)addr, false, &r), 0);
	lo = r.map_start;
	hi = r.map_end;
	pool = calloc(DISTINCT, sizeof(*pool));
	assert_non_null(pool);

	/* Symbols only: random addresses across libc's text mapping. */
	t0 = now_s();
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		assert_int_equal(sym_proc__resolve(p, lo + x % (hi - lo), true, &r), 0);
		named += r.nframes > 0;
		if (i < DISTINCT)
			pool[i] = lo + x % (hi - lo);
	}
	t1 = now_s();
	printf("  symbols only: %d lookups in %.3f s = %.0f/s (%d named)\n", N, t1 - t0,
	       N / (t1 - t0), named);
	assert_true(named > N / 2);

	/* With lines and inline frames: first sight of each address (cold), then a profile-like
	 * stream that keeps hitting the same addresses (cache). */
	t0 = now_s();
	for (int i = 0; i < DISTINCT; i++)
		sym_proc__resolve(pl, pool[i], true, &r);
	t1 = now_s();
	printf("  lines, cold:  %d lookups in %.3f s = %.0f/s\n", DISTINCT, t1 - t0,
	       DISTINCT / (t1 - t0));
	t0 = now_s();
	for (int i = 0; i < N; i++)
		sym_proc__resolve(pl, pool[i % DISTINCT], true, &r);
	t1 = now_s();
	printf("  lines, cached: %d lookups in %.3f s = %.0f/s\n", N, t1 - t0, N / (t1 - t0));

	free(pool);
	sym_proc__free(p);
	sym_proc__free(pl);
	symbolizer__free(s);
	symbolizer__free(sl);
}

static void test_free_null(void **state)
{
	symbolizer__free(NULL);
	sym_proc__free(NULL);
	ksyms__free(NULL);
	errno = 0;
	assert_null(symbolizer__load_pid(NULL, 1));
	assert_int_equal(errno, EINVAL);
}

static void test_load_pid_missing(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);

	errno = 0;
	/* pid_max is at most 2^22: this pid cannot exist. */
	assert_null(symbolizer__load_pid(s, 0x7ffffff0));
	assert_int_equal(errno, ENOENT);
	symbolizer__free(s);
}

/* fds of this process whose link starts with prefix ("socket:", or a directory) */
static int count_fds(const char *prefix)
{
	char path[64], target[PATH_MAX];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		n += !strncmp(target, prefix, strlen(prefix));
	}
	return n;
}

/* A copy of fixture at dir/name whose build-id differs from the original's in its last byte
 * (tag): another file to libdw and to the module cache, the same code. */
static void copy_new_build_id(const char *fixture, const char *build_id, const char *dir,
			      const char *name, unsigned char tag, char *out, size_t len)
{
	char src[PATH_MAX];
	unsigned char bid[64], *p;
	size_t n = strlen(build_id) / 2, size;
	char *buf;
	FILE *f;

	fixture_path(src, sizeof(src), fixture);
	buf = util_read_file(src, &size);
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sscanf(build_id + 2 * i, "%2hhx", &bid[i]), 1);
	p = memmem(buf, size, bid, n);
	assert_non_null(p);
	p[n - 1] = tag;
	snprintf(out, len, "%s/%s", dir, name);
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(out, 0755), 0);
	free(buf);
}

#define BUDGET_COPIES 6

/* The symbolizer keeps at most opts.max_open_files files open: six processes of six files
 * (copies of sym_target under other build-ids), each snapshot kept (its modules mapped), named
 * twice in turn with a budget of two open files, name every point as a symbolizer without a
 * budget does, with at most two of the files open at any time and none lost. Before, every file
 * ever named stayed open (its descriptor, its mapping, libdw's DWARF): 6 of them here. */
static void test_open_files_budget(void **state)
{
	static const char *const points[] = { "leaf", "inline", "static", "call" };
	struct symbolizer_opts opts = { .max_open_files = 2 };
	char dir[] = "/tmp/ebprof-budget-XXXXXX", path[PATH_MAX], bid[128];
	struct symbolizer *ref, *s;
	struct sym_proc *rp[BUDGET_COPIES], *p[BUDGET_COPIES];
	struct child c[BUDGET_COPIES];
	struct symbolizer_stats st;
	struct sym_result r, want;
	uint64_t reopens;
	int files, line = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* the build-id of sym_target, to change in each copy */
	child_start(&c[0], "sym_target");
	ref = symbolizer__new(NULL);
	rp[0] = symbolizer__load_pid(ref, c[0].pid);
	assert_int_equal(sym_proc__resolve(rp[0], point(&c[0], "leaf", NULL), false, &r), 0);
	assert_non_null(r.build_id);
	snprintf(bid, sizeof(bid), "%s", r.build_id);
	sym_proc__free(rp[0]);
	symbolizer__free(ref);
	child_stop(&c[0]);

	for (int i = 0; i < BUDGET_COPIES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "copy%d", i);
		copy_new_build_id("sym_target", bid, dir, name, (unsigned char)(0xa0 + i), path,
				  sizeof(path));
		child_start_path(&c[i], path);
	}
	ref = symbolizer__new(NULL);
	s = symbolizer__new(&opts);
	for (int i = 0; i < BUDGET_COPIES; i++) {
		rp[i] = symbolizer__load_pid(ref, c[i].pid);
		p[i] = symbolizer__load_pid(s, c[i].pid);
		assert_non_null(rp[i]);
		assert_non_null(p[i]);
		/* as core/procs.c does at each snapshot */
		sym_proc__load_modules(p[i]);
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < BUDGET_COPIES; i++) {
			for (size_t k = 0; k < sizeof(points) / sizeof(points[0]); k++) {
				uint64_t a = point(&c[i], points[k], NULL);

				assert_int_equal(sym_proc__resolve(rp[i], a, false, &want), 0);
				assert_int_equal(sym_proc__resolve(p[i], a, false, &r), 0);
				assert_true(want.nframes > 0);
				assert_int_equal(r.nframes, want.nframes);
				assert_string_equal(r.build_id, want.build_id);
				assert_int_equal(r.module_offset, want.module_offset);
				for (uint32_t f = 0; f < r.nframes; f++) {
					assert_frame(&r.frames[f], want.frames[f].function,
						     base_name(want.frames[f].file),
						     want.frames[f].line);
					assert_string_equal(r.frames[f].system_name,
							    want.frames[f].system_name);
				}
				/* the call check reads the file's bytes: open again too */
				assert_int_equal(sym_proc__follows_call(p[i], a),
						 sym_proc__follows_call(rp[i], a));
			}
			/* of the copies, only what the budget allows is open (ref: all six) */
			snprintf(path, sizeof(path), "%s/", dir);
			files = count_fds(path);
			assert_true(files <= 2 + BUDGET_COPIES);
		}
	}
	symbolizer__stats(s, &st);
	assert_true(st.files_open_max <= 2);
	assert_true(st.files_open <= 2);
	assert_true(st.closes >= BUDGET_COPIES);
	assert_true(st.reopens >= BUDGET_COPIES);
	assert_int_equal(st.files_gone, 0);
	/* a budget of bytes smaller than any file: one file open at a time, the same names */
	{
		struct symbolizer_opts bytes = { .max_open_bytes = 1 };
		struct symbolizer *sb = symbolizer__new(&bytes);

		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < BUDGET_COPIES; i++) {
				struct sym_proc *q = symbolizer__load_pid(sb, c[i].pid);
				uint64_t a = point(&c[i], "inline", NULL);

				assert_non_null(q);
				assert_int_equal(sym_proc__resolve(rp[i], a, false, &want), 0);
				assert_int_equal(sym_proc__resolve(q, a, false, &r), 0);
				assert_int_equal(r.nframes, want.nframes);
				for (uint32_t f = 0; f < r.nframes; f++)
					assert_frame(&r.frames[f], want.frames[f].function,
						     base_name(want.frames[f].file),
						     want.frames[f].line);
				sym_proc__free(q);
			}
		}
		symbolizer__stats(sb, &st);
		assert_int_equal(st.files_open_max, 1);
		assert_int_equal(st.files_gone, 0);
		symbolizer__free(sb);
	}
	for (int i = 0; i < BUDGET_COPIES; i++)
		sym_proc__free(rp[i]);
	symbolizer__free(ref);
	snprintf(path, sizeof(path), "%s/", dir);
	files = count_fds(path);
	assert_true(files <= 2);
	/* the last started first: the later children hold the earlier ones' stdin too */
	for (int i = BUDGET_COPIES - 1; i >= 0; i--) {
		sym_proc__free(p[i]);
		child_stop(&c[i]);
	}
	symbolizer__free(s);
	assert_int_equal(count_fds(path), 0);

	/* closed for the budget, then deleted: its frames are offsets, counted once */
	s = symbolizer__new(&opts);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/copy%d", dir, i);
		child_start_path(&c[i], path);
		p[i] = symbolizer__load_pid(s, c[i].pid);
		sym_proc__load_modules(p[i]);
		assert_int_equal(sym_proc__resolve(p[i], point(&c[i], "leaf", NULL), false, &r), 0);
		assert_int_equal(r.nframes, 1);
	}
	/* copy0's file was used longest ago: closed; gone now */
	snprintf(path, sizeof(path), "%s/copy0", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sym_proc__resolve(p[0], point(&c[0], "leaf", NULL), false, &r), 0);
	assert_true(r.mapped);
	assert_int_equal(r.nframes, 0);
	assert_int_equal(sym_proc__resolve(p[0], point(&c[0], "static", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 0);
	symbolizer__stats(s, &st);
	assert_int_equal(st.files_gone, 1);
	snprintf(path, sizeof(path), "%s/copy3", dir);
	child_start_path(&c[3], path);
	p[3] = symbolizer__load_pid(s, c[3].pid);
	sym_proc__load_modules(p[3]);
	assert_int_equal(sym_proc__resolve(p[3], point(&c[3], "leaf", NULL), false, &r), 0);
	assert_int_equal(r.nframes, 1);
	/* copy1, closed for copy3, replaced by the same bytes (another inode: a package
	 * reinstalled): opened again by its build-id, named as before. (Replaced while open, it
	 * is kept open: the others, whose paths still lead to their files, are closed first.) */
	{
		char tmp[PATH_MAX + 8];
		char *bytes;
		size_t size;
		FILE *f;

		snprintf(path, sizeof(path), "%s/copy1", dir);
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		bytes = util_read_file(path, &size);
		assert_non_null(bytes);
		f = fopen(tmp, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(bytes, 1, size, f), size);
		assert_int_equal(fclose(f), 0);
		free(bytes);
		assert_int_equal(rename(tmp, path), 0);
	}
	symbolizer__stats(s, &st);
	reopens = st.reopens;
	assert_int_equal(sym_proc__resolve(p[1], point(&c[1], "inline", &line), false, &r), 0);
	assert_int_equal(r.nframes, 2);
	assert_frame(&r.frames[0], "sym_inlined", "sym_target.c", line);
	symbolizer__stats(s, &st);
	assert_int_equal(st.files_gone, 1);
	assert_int_equal(st.reopens, reopens + 1);
	assert_true(st.files_open <= 2);
	for (int i = 3; i >= 0; i--) {
		sym_proc__free(p[i]);
		child_stop(&c[i]);
	}
	symbolizer__free(s);
	for (int i = 1; i < BUDGET_COPIES; i++) {
		snprintf(path, sizeof(path), "%s/copy%d", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

/* A file without local debug information (no .symtab, DWARF, debug link or file by build-id)
 * opens no connection: ebprof does not fetch debug files over the network (debuginfod), and
 * libdw's search made a debuginfod client for each such file, a curl handle with a socket pair
 * (2 descriptors) for as long as the file stayed open (sweep K: 207 sockets in 110 s of
 * offcpu -a). Its .dynsym still names what it exports. */
static void test_no_debuginfod(void **state)
{
	char dir[] = "/tmp/ebprof-nodbg-XXXXXX", path[PATH_MAX], bid[128];
	struct symbolizer *s;
	struct sym_proc *p[3];
	struct child c[3];
	struct sym_result r;
	int before = count_fds("socket:");

	(void)state;
	assert_non_null(mkdtemp(dir));
	child_start(&c[0], "sym_target.dynsym");
	s = symbolizer__new(NULL);
	p[0] = symbolizer__load_pid(s, c[0].pid);
	assert_int_equal(sym_proc__resolve(p[0], point(&c[0], "leaf", NULL), false, &r), 0);
	assert_non_null(r.build_id);
	snprintf(bid, sizeof(bid), "%s", r.build_id);
	assert_int_equal(r.nframes, 1);
	assert_frame(&r.frames[0], "sym_leaf", NULL, 0);
	/* two more such files, other build-ids */
	for (int i = 1; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "dyn%d", i);
		copy_new_build_id("sym_target.dynsym", bid, dir, name, (unsigned char)(0xb0 + i),
				  path, sizeof(path));
		child_start_path(&c[i], path);
		p[i] = symbolizer__load_pid(s, c[i].pid);
		assert_int_equal(sym_proc__resolve(p[i], point(&c[i], "leaf", NULL), false, &r),
				 0);
		assert_int_equal(r.nframes, 1);
		assert_frame(&r.frames[0], "sym_leaf", NULL, 0);
		/* DWARF looked for too (inline frames come from it alone) */
		assert_int_equal(sym_proc__resolve(p[i], point(&c[i], "inline", NULL), false, &r),
				 0);
		assert_int_equal(r.nframes, 1);
		unlink(path);
	}
	assert_int_equal(count_fds("socket:"), before);
	for (int i = 2; i >= 0; i--) {
		sym_proc__free(p[i]);
		child_stop(&c[i]);
	}
	symbolizer__free(s);
	rmdir(dir);
}

/* symbolizer__trim frees the modules no live process snapshot uses, after `keep` calls, and
 * only those: a snapshot still held keeps its modules, and resolves the same afterwards. */
static void test_trim_unused_modules(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *a, *b;
	struct sym_result r;
	char name[256];

	(void)state;
	assert_non_null(s);
	a = symbolizer__load_pid(s, getpid());
	b = symbolizer__load_pid(s, getpid());
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(sym_proc__resolve(a, (uint64_t)(uintptr_t)test_trim_unused_modules, false,
					   &r), 0);
	assert_true(r.nframes >= 1);
	assert_int_equal(sym_proc__resolve(b, (uint64_t)(uintptr_t)test_trim_unused_modules, false,
					   &r), 0);
	snprintf(name, sizeof(name), "%s", r.frames[0].function);
	sym_proc__free(a);
	/* b still maps the executable */
	assert_int_equal(symbolizer__trim(s, 1), 0);
	assert_int_equal(sym_proc__resolve(b, (uint64_t)(uintptr_t)test_trim_unused_modules, false,
					   &r), 0);
	assert_string_equal(r.frames[0].function, name);
	sym_proc__free(b);
	/* unused now: kept for `keep` calls, then freed */
	assert_int_equal(symbolizer__trim(s, 2), 0);
	assert_true(symbolizer__trim(s, 2) >= 1);
	/* and loaded again when a process maps it */
	a = symbolizer__load_pid(s, getpid());
	assert_int_equal(sym_proc__resolve(a, (uint64_t)(uintptr_t)test_trim_unused_modules, false,
					   &r), 0);
	assert_string_equal(r.frames[0].function, name);
	sym_proc__free(a);
	symbolizer__free(s);
}

/* A perf map's lines (perfmap.c), read from ROOT/tmp/perf-PID.map: hex with or without 0x,
 * names with blanks, lines that are no entry skipped, the later of two lines for one address,
 * one nested in a longer one, and the file read again when it has grown (a JIT appends); a
 * file older than the process (another's that had its PID) not used. */
static void test_perfmap(void **state)
{
	char root[] = "/tmp/ebprof-perfmap-XXXXXX", dir[128], path[160];
	struct strpool pool;
	struct sym_perfmap *m;
	FILE *f;

	(void)state;
	strpool__init(&pool);
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/tmp", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "7f0000001000 100 LazyCompile:~run app.js:3\n"
		   "0x7f0000002000 0x40 Builtin:Add\n"
		   "garbage line\n"
		   "7f0000003000 0 zero_size\n"
		   "7f0000004000 80\n"
		   "7f0000005000 200 outer\n"
		   "7f0000005080 10 inner\n"
		   "7f0000001000 80 recompiled\n");
	fclose(f);
	m = sym_perfmap__new(getpid(), root);
	assert_non_null(m);
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f0000001010), "recompiled");
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f00000010a0),
			    "LazyCompile:~run app.js:3");
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000001100));
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f000000203f), "Builtin:Add");
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000002040));
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000003000));
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000004000));
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f0000005088), "inner");
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f0000005190), "outer");
	/* appended since: read again at the miss */
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000009000));
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "7f0000009000 20 Function:late\n");
	fclose(f);
	assert_string_equal(sym_perfmap__find(m, &pool, 0x7f0000009010), "Function:late");
	sym_perfmap__free(m);
	/* a file last written before the process started: an earlier process's with its PID */
	{
		struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

		assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
		m = sym_perfmap__new(getpid(), root);
		assert_non_null(m);
		assert_null(sym_perfmap__find(m, &pool, 0x7f0000001010));
		sym_perfmap__free(m);
	}
	/* no file: no names */
	m = sym_perfmap__new(getpid(), "/nonexistent");
	assert_non_null(m);
	assert_null(sym_perfmap__find(m, &pool, 0x7f0000001010));
	sym_perfmap__free(m);
	unlink(path);
	rmdir(dir);
	rmdir(root);
	strpool__fini(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procmaps_parse),
		cmocka_unit_test(test_procmaps_newline),
		cmocka_unit_test(test_data_kinds),
		cmocka_unit_test(test_data_own),
		cmocka_unit_test(test_trim_unused_modules),
		cmocka_unit_test(test_open_files_budget),
		cmocka_unit_test(test_no_debuginfod),
		cmocka_unit_test(test_maps_resolve_special),
		cmocka_unit_test(test_fixture_pie),
		cmocka_unit_test(test_debug_dir_build_id),
		cmocka_unit_test(test_fixture_exec),
		cmocka_unit_test(test_fixture_debuglink),
		cmocka_unit_test(test_debug_cache),
		cmocka_unit_test(test_debug_cache_libc),
		cmocka_unit_test(test_plt_names),
		cmocka_unit_test(test_load_pid_maps_text),
		cmocka_unit_test(test_fixture_dynsym_only),
		cmocka_unit_test(test_fixture_fde_names),
		cmocka_unit_test(test_same_build_id_richer),
		cmocka_unit_test(test_replaced_library_ambiguous),
		cmocka_unit_test(test_fixture_minidebuginfo),
		cmocka_unit_test(test_maps_with_root),
		cmocka_unit_test(test_deleted_executable),
		cmocka_unit_test(test_cxx_fixture),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_glibc_malloc),
		cmocka_unit_test(test_elf_symbol_offset),
		cmocka_unit_test(test_ksyms_literal),
		cmocka_unit_test(test_ksyms_proc),
		cmocka_unit_test(test_ksyms_cache),
		cmocka_unit_test(test_ksyms_cache_proc),
		cmocka_unit_test(test_perf_libc),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_load_pid_missing),
		cmocka_unit_test(test_perfmap),
	};

	/* A fixture child left behind by a failed assertion must not block on its stdin. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
