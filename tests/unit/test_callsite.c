/* Unit tests of sym_proc__called_symbol (src/symbolize/callsite.c): which function a call site
 * calls through the PLT or the GOT. The fixture tests/fixtures/callsite_target.c, built in the
 * layouts of tests/unit/callsite.mk (.plt + .plt.got, -fno-plt, IBT .plt.sec, ET_EXEC, stripped,
 * no section headers), runs under the interposer callsite.so, which records the real return
 * address of each allocator call, as an ebprof uprobe would see it. No root needed.
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>

#include "symbolize/symbolize.h"

#include "golden.h"	/* out_dir */

/* ---- helpers ---- */

static void fixture_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/fixtures/%s", out_dir(), name);
}

#define MAX_POINTS 16

/* A running fixture and the "point return-address called-name byte" lines it printed. */
struct child {
	pid_t pid;
	int to_child;
	int npoints;
	struct {
		char point[32], called[32];
		uint64_t ret;
		unsigned byte;	/* code byte at ret - 5 */
	} points[MAX_POINTS];
};

static void child_start(struct child *c, const char *fixture)
{
	char path[PATH_MAX], preload_rel[PATH_MAX], preload[PATH_MAX];
	int in[2], out[2];
	char line[256];
	FILE *f;

	memset(c, 0, sizeof(*c));
	fixture_path(path, sizeof(path), fixture);
	fixture_path(preload_rel, sizeof(preload_rel), "callsite.so");
	if (access(path, X_OK) || !realpath(preload_rel, preload)) {
		fail_msg("fixture %s or %s missing: build them with make %s %s", path, preload_rel,
			 path, preload_rel);
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
		setenv("LD_PRELOAD", preload, 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to_child = in[1];
	f = fdopen(out[0], "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ret;
		unsigned byte;

		if (!strcmp(line, "ready\n"))
			break;
		if (c->npoints < MAX_POINTS &&
		    sscanf(line, "%31s %llx %31s %x", c->points[c->npoints].point, &ret,
			   c->points[c->npoints].called, &byte) == 4) {
			c->points[c->npoints].ret = ret;
			c->points[c->npoints].byte = byte;
			c->npoints++;
		}
	}
	fclose(f);
	if (c->npoints != 8)
		fail_msg("fixture %s printed %d points, want 8", fixture, c->npoints);
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

static int point_index(const struct child *c, const char *point)
{
	for (int i = 0; i < c->npoints; i++)
		if (!strcmp(c->points[i].point, point))
			return i;
	fail_msg("fixture did not print point %s", point);
	return -1;
}

static uint64_t point_ret(const struct child *c, const char *point)
{
	return c->points[point_index(c, point)].ret;
}

static bool has_section(const char *fixture, const char *want)
{
	char path[PATH_MAX];
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	Elf *elf;
	int fd;

	fixture_path(path, sizeof(path), fixture);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			found = name && !strcmp(name, want);
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* What each fixture point must give: the name called, or NULL for -ENOENT; and the name the
 * interposer saw called, which checks that the fixture did what it says. */
static const struct {
	const char *point, *want, *interposed;
} EXPECT[] = {
	{ "aligned_alloc", "aligned_alloc", "aligned_alloc" },
	{ "memalign", "memalign", "memalign" },
	{ "malloc", "malloc", "malloc" },
	{ "free", "free", "free" },
	{ "calloc", "calloc", "calloc" },	/* .plt.got (GLOB_DAT) unless -fno-plt */
	{ "bnd", "memalign", "memalign" },	/* endbr64; bnd jmp *GOT stub */
	{ "indirect", NULL, "calloc" },		/* call *%rax */
	{ "local", NULL, "local" },		/* call rel32 to a static function */
};

static void check_points(struct sym_proc *p, const struct child *c, bool resolvable)
{
	for (size_t i = 0; i < sizeof(EXPECT) / sizeof(EXPECT[0]); i++) {
		int k = point_index(c, EXPECT[i].point);
		char name[64];
		int err;

		assert_string_equal(c->points[k].called, EXPECT[i].interposed);
		/* every call form here (rel32, *GOT, *%rax, the bnd stub) is seen as a call, so
		 * no real frame is ever cut from a stack as garbage */
		if (sym_proc__follows_call(p, c->points[k].ret) != 1)
			fail_msg("point %s: return address not seen as following a call",
				 EXPECT[i].point);
		err = sym_proc__called_symbol(p, c->points[k].ret, name, sizeof(name));
		if (!EXPECT[i].want || !resolvable) {
			if (err != -ENOENT)
				fail_msg("point %s: got %d (%s), want -ENOENT", EXPECT[i].point,
					 err, err ? "" : name);
			assert_string_equal(name, "");
			continue;
		}
		if (err)
			fail_msg("point %s: got %d, want \"%s\"", EXPECT[i].point, err,
				 EXPECT[i].want);
		assert_string_equal(name, EXPECT[i].want);
	}
}

/* Run a fixture variant, check every point, return the call form bytes seen. */
static void run_variant(const char *fixture, bool resolvable, unsigned *libc_call_byte)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	struct child c;

	assert_non_null(s);
	child_start(&c, fixture);
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	check_points(p, &c, resolvable);
	/* A second round is answered from the per-module cache, the same way. */
	check_points(p, &c, resolvable);
	if (libc_call_byte)
		*libc_call_byte = c.points[point_index(&c, "aligned_alloc")].byte;
	/* The hand-written stub and the local function are always reached by call rel32. */
	assert_int_equal(c.points[point_index(&c, "bnd")].byte, 0xe8);
	assert_int_equal(c.points[point_index(&c, "local")].byte, 0xe8);
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* ---- layouts ---- */

static void test_default_plt(void **state)
{
	unsigned byte;

	/* Debian's gcc does not turn on -fcf-protection: classic lazy .plt, no .plt.sec. */
	assert_true(has_section("callsite_target", ".plt"));
	assert_true(has_section("callsite_target", ".plt.got"));
	assert_false(has_section("callsite_target", ".plt.sec"));
	run_variant("callsite_target", true, &byte);
	assert_int_equal(byte, 0xe8);
}

static void test_noplt(void **state)
{
	unsigned byte;

	run_variant("callsite_noplt", true, &byte);
	assert_int_equal(byte, 0x15);	/* ff 15: call *disp32(%rip) */
}

static void test_ibt_plt_sec(void **state)
{
	unsigned byte;

	assert_true(has_section("callsite_ibt", ".plt.sec"));
	assert_true(has_section("callsite_ibt", ".plt.got"));
	run_variant("callsite_ibt", true, &byte);
	assert_int_equal(byte, 0xe8);
}

static void test_nopie(void **state)
{
	run_variant("callsite_nopie", true, NULL);
}

static void test_stripped(void **state)
{
	assert_false(has_section("callsite_target.stripped", ".symtab"));
	run_variant("callsite_target.stripped", true, NULL);
}

/* Without section headers the relocations are found through PT_DYNAMIC, as ld.so finds them. */
static void test_no_section_headers(void **state)
{
	assert_false(has_section("callsite_target.noshdr", ".rela.plt"));
	run_variant("callsite_target.noshdr", true, NULL);
}

/* ---- the file, not the process ---- */

static char *read_maps(pid_t pid)
{
	char path[64], *buf = malloc(1 << 20);
	size_t len = 0;
	ssize_t r;
	int fd;

	assert_non_null(buf);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while ((r = read(fd, buf + len, (1 << 20) - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	buf[len] = '\0';
	return buf;
}

static void test_after_exit(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	struct child c;
	char *maps;

	assert_non_null(s);
	child_start(&c, "callsite_target");
	maps = read_maps(c.pid);
	child_stop(&c);
	/* Nothing was opened while the process ran: every byte comes from the files. */
	p = symbolizer__load_maps(s, maps, NULL);
	assert_non_null(p);
	check_points(p, &c, true);
	sym_proc__free(p);
	symbolizer__free(s);
	free(maps);
}

/* ---- robustness ---- */

struct range {
	uint64_t start, end;
};

/* The executable mappings of the process whose path ends with `suffix`. */
static int exec_ranges(const char *maps, const char *suffix, struct range *r, int max)
{
	const char *line = maps;
	int n = 0;

	while (*line && n < max) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		unsigned long long a, b;
		char perms[5], rest[512];

		if (sscanf(line, "%llx-%llx %4s", &a, &b, perms) == 3 && perms[2] == 'x' &&
		    len < sizeof(rest)) {
			memcpy(rest, line, len);
			rest[len] = '\0';
			if (len >= strlen(suffix) && !strcmp(rest + len - strlen(suffix), suffix))
				r[n++] = (struct range){ a, b };
		}
		line = eol ? eol + 1 : line + len;
	}
	return n;
}

/* Every address of the fixture's code, the start of libc's, and addresses around every
 * mapping edge: the answer is a name or -ENOENT, never a crash or another error. */
static void test_sweep(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	int found = 0, points_found = 0, n;
	struct range r[8];
	struct sym_proc *p;
	struct child c;
	char *maps;

	assert_non_null(s);
	child_start(&c, "callsite_target");
	maps = read_maps(c.pid);
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);

	n = exec_ranges(maps, "/callsite_target", r, 8);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		for (uint64_t a = r[i].start; a <= r[i].end; a++) {
			char name[64];
			int err = sym_proc__called_symbol(p, a, name, sizeof(name));

			if (err) {
				assert_int_equal(err, -ENOENT);
				continue;
			}
			assert_true(name[0] != '\0');
			found++;
			for (int k = 0; k < c.npoints; k++)
				points_found += c.points[k].ret == a;
		}
	}
	/* Six fixture points, plus main's and the C runtime's own calls to libc. */
	assert_int_equal(points_found, 6);
	assert_true(found > 6);

	n = exec_ranges(maps, "/libc.so.6", r, 8);
	assert_true(n > 0);
	for (uint64_t a = r[0].start; a < r[0].start + 256 * 1024 && a <= r[0].end; a++) {
		char name[64];
		int err = sym_proc__called_symbol(p, a, name, sizeof(name));

		assert_true(err == 0 || err == -ENOENT);
	}

	/* Edges of every mapping, executable or not, and addresses in none. */
	{
		static const uint64_t odd[] = { 0, 1, 5, 6, 4096, UINT64_MAX, UINT64_MAX - 5 };
		const char *line = maps;

		while (*line) {
			unsigned long long a, b;

			if (sscanf(line, "%llx-%llx", &a, &b) == 2) {
				for (int d = -8; d <= 8; d++) {
					char name[64];
					int err;

					err = sym_proc__called_symbol(p, a + d, name, sizeof(name));
					assert_true(err == 0 || err == -ENOENT);
					err = sym_proc__called_symbol(p, b + d, name, sizeof(name));
					assert_true(err == 0 || err == -ENOENT);
				}
			}
			line = strchr(line, '\n');
			if (!line)
				break;
			line++;
		}
		for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
			char name[64];

			assert_int_equal(sym_proc__called_symbol(p, odd[i], name, sizeof(name)),
					 -ENOENT);
		}
	}

	/* The points still answer the same once the sweep has filled the cache. */
	check_points(p, &c, true);
	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
	free(maps);
}

static void test_args(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_proc *p;
	struct child c;
	uint64_t ret;
	char name[8];

	assert_non_null(s);
	child_start(&c, "callsite_target");
	p = symbolizer__load_pid(s, c.pid);
	assert_non_null(p);
	ret = point_ret(&c, "aligned_alloc");

	assert_int_equal(sym_proc__called_symbol(NULL, ret, name, sizeof(name)), -EINVAL);
	assert_int_equal(sym_proc__called_symbol(p, ret, NULL, sizeof(name)), -EINVAL);
	assert_int_equal(sym_proc__called_symbol(p, ret, name, 0), -EINVAL);
	/* Too small a buffer: a truncated copy and -ERANGE. */
	assert_int_equal(sym_proc__called_symbol(p, ret, name, 4), -ERANGE);
	assert_string_equal(name, "ali");
	assert_int_equal(sym_proc__called_symbol(p, ret, name, sizeof(name)), -ERANGE);
	assert_string_equal(name, "aligned");
	/* Exactly fits. */
	assert_int_equal(sym_proc__called_symbol(p, point_ret(&c, "malloc"), name, 7), 0);
	assert_string_equal(name, "malloc");
	/* The instruction before a return address is not a call the middle of one is. */
	assert_int_equal(sym_proc__called_symbol(p, ret - 1, name, sizeof(name)), -ENOENT);
	assert_int_equal(sym_proc__called_symbol(p, ret + 1, name, sizeof(name)), -ENOENT);

	sym_proc__free(p);
	child_stop(&c);
	symbolizer__free(s);
}

/* sym_proc__follows_syscall, in this process: right after libc's syscall() wrapper's system
 * call instruction (where a task in that call has its ip) yes; a byte further, or at the
 * wrapper's entry (where the kernel would have moved an ip: a function's first instruction), no */
static void test_follows_syscall(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	const unsigned char *f = dlsym(RTLD_DEFAULT, "syscall");
	struct sym_proc *p;
	uint64_t ip = 0;

	(void)state;
	assert_non_null(f);
	for (int i = 0; i < 64 && !ip; i++)
		if (f[i] == 0x0f && f[i + 1] == 0x05)
			ip = (uint64_t)(uintptr_t)(f + i + 2);
	assert_true(ip != 0);
	p = symbolizer__load_pid(s, getpid());
	assert_non_null(p);
	assert_int_equal(sym_proc__follows_syscall(p, ip), 1);
	assert_int_equal(sym_proc__follows_syscall(p, ip + 1), 0);
	assert_int_equal(sym_proc__follows_syscall(p, (uint64_t)(uintptr_t)f), 0);
	assert_int_equal(sym_proc__follows_call(p, ip), 0);
	sym_proc__free(p);
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_plt),
		cmocka_unit_test(test_noplt),
		cmocka_unit_test(test_ibt_plt_sec),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_no_section_headers),
		cmocka_unit_test(test_after_exit),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_follows_syscall),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
