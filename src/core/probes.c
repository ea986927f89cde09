/* Allocator discovery and uprobe attachment.
 *
 * The objects are found through the target's own /proc/PID/maps and opened through
 * /proc/PID/root, so a process in another mount namespace gets probes on its own copy of libc.
 * Every traced name (the malloc family, jemalloc's *allocx, the mangled C++ operators) is probed
 * in the object the dynamic linker binds it to: the executable, then LD_PRELOADed objects, then
 * allocator libraries (jemalloc, tcmalloc, mimalloc or any other library defining malloc and
 * free), then libstdc++, then libc. So with jemalloc preloaded one object serves everything,
 * and with glibc alone libstdc++ serves the operators (which call libc's malloc and free).
 * Symbols that share an address (glibc: aligned_alloc == memalign; tcmalloc: free == operator
 * delete) get one probe: two uprobes at one address would count every call twice. All entry points of a process attach as one
 * uprobe_multi link and all return points as another; libbpf 1.1 has no API for these links,
 * so they are created with the raw bpf(2) call. Detaching a link costs one RCU grace period
 * (about 0.1 s here) whatever its size, so two links instead of nineteen matter.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "core/placement.h"
#include "core/probes.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

#define EBPROF_BPF_F_UPROBE_MULTI_RETURN 1	/* the kernel UAPI of 6.6+ */

const char *const mem_fn_names[MEM_FN__COUNT] = {
	[MEM_FN_MALLOC] = "malloc",
	[MEM_FN_CALLOC] = "calloc",
	[MEM_FN_REALLOC] = "realloc",
	[MEM_FN_REALLOCARRAY] = "reallocarray",
	[MEM_FN_FREE] = "free",
	[MEM_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[MEM_FN_MEMALIGN] = "memalign",
	[MEM_FN_POSIX_MEMALIGN] = "posix_memalign",
	[MEM_FN_VALLOC] = "valloc",
	[MEM_FN_PVALLOC] = "pvalloc",
	[MEM_FN_OPERATOR_NEW] = "operator new",
	[MEM_FN_OPERATOR_NEW_ARRAY] = "operator new[]",
	[MEM_FN_OPERATOR_DELETE] = "operator delete",
	[MEM_FN_OPERATOR_DELETE_ARRAY] = "operator delete[]",
	[MEM_FN_MALLOCX] = "mallocx",
	[MEM_FN_RALLOCX] = "rallocx",
	[MEM_FN_DALLOCX] = "dallocx",
	[MEM_FN_SDALLOCX] = "sdallocx",
};

#define MARKER (-1)	/* a name that only tells an object's kind */

/* Every symbol probed, and the function it counts as. On a shared address the earlier entry
 * names the probe: memalign is glibc's own name and aligned_alloc its alias, free comes before
 * operator delete (tcmalloc and mimalloc alias them), operator new before operator new[]. */
static const struct fn_sym {
	const char *name;
	int fn;
	bool c;			/* a C name: --symbol-prefix applies */
} fn_syms[] = {
	{ "malloc", MEM_FN_MALLOC, true },
	{ "free", MEM_FN_FREE, true },
	{ "calloc", MEM_FN_CALLOC, true },
	{ "realloc", MEM_FN_REALLOC, true },
	{ "reallocarray", MEM_FN_REALLOCARRAY, true },
	{ "memalign", MEM_FN_MEMALIGN, true },
	{ "aligned_alloc", MEM_FN_ALIGNED_ALLOC, true },
	{ "posix_memalign", MEM_FN_POSIX_MEMALIGN, true },
	{ "valloc", MEM_FN_VALLOC, true },
	{ "pvalloc", MEM_FN_PVALLOC, true },
	{ "mallocx", MEM_FN_MALLOCX, true },
	{ "rallocx", MEM_FN_RALLOCX, true },
	{ "dallocx", MEM_FN_DALLOCX, true },
	{ "sdallocx", MEM_FN_SDALLOCX, true },
	/* new(size), nothrow, aligned, aligned nothrow: the size is always the first argument */
	{ "_Znwm", MEM_FN_OPERATOR_NEW },
	{ "_ZnwmRKSt9nothrow_t", MEM_FN_OPERATOR_NEW },
	{ "_ZnwmSt11align_val_t", MEM_FN_OPERATOR_NEW },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", MEM_FN_OPERATOR_NEW },
	{ "_Znam", MEM_FN_OPERATOR_NEW_ARRAY },
	{ "_ZnamRKSt9nothrow_t", MEM_FN_OPERATOR_NEW_ARRAY },
	{ "_ZnamSt11align_val_t", MEM_FN_OPERATOR_NEW_ARRAY },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", MEM_FN_OPERATOR_NEW_ARRAY },
	/* delete(ptr), sized, nothrow, aligned, sized aligned, aligned nothrow: ptr first */
	{ "_ZdlPv", MEM_FN_OPERATOR_DELETE },
	{ "_ZdlPvm", MEM_FN_OPERATOR_DELETE },
	{ "_ZdlPvRKSt9nothrow_t", MEM_FN_OPERATOR_DELETE },
	{ "_ZdlPvSt11align_val_t", MEM_FN_OPERATOR_DELETE },
	{ "_ZdlPvmSt11align_val_t", MEM_FN_OPERATOR_DELETE },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", MEM_FN_OPERATOR_DELETE },
	{ "_ZdaPv", MEM_FN_OPERATOR_DELETE_ARRAY },
	{ "_ZdaPvm", MEM_FN_OPERATOR_DELETE_ARRAY },
	{ "_ZdaPvRKSt9nothrow_t", MEM_FN_OPERATOR_DELETE_ARRAY },
	{ "_ZdaPvSt11align_val_t", MEM_FN_OPERATOR_DELETE_ARRAY },
	{ "_ZdaPvmSt11align_val_t", MEM_FN_OPERATOR_DELETE_ARRAY },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", MEM_FN_OPERATOR_DELETE_ARRAY },
	/* markers of the allocator libraries (their own names for malloc) */
	{ "tc_malloc", MARKER },
	{ "mi_malloc", MARKER },
};
#define NSYMS (sizeof(fn_syms) / sizeof(fn_syms[0]))
enum { SYM_MALLOC, SYM_FREE, SYM_MALLOCX = 10, SYM_TC = NSYMS - 2, SYM_MI = NSYMS - 1 };

static const char *const kinds[] = { "glibc", "jemalloc", "tcmalloc", "mimalloc", "static" };

static struct probes_opts popts;
static char last_error[PATH_MAX + 256];
static void scan_memo_clear(void);

void probes__configure(const struct probes_opts *opts)
{
	popts = opts ? *opts : (struct probes_opts){};
	scan_memo_clear();	/* the names looked for may have changed (--prefix) */
}

const char *probes__last_error(void)
{
	return last_error;
}

bool probes__valid_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (name && !strcmp(name, kinds[i]))
			return true;
	return false;
}

static bool is_free_fn(int fn)
{
	return fn >= 0 && fn < 64 && (PROBES_FREE_FNS >> fn & 1);
}

/* The symbol name looked up for fn_syms[i], with the prefix for C names. */
static const char *sym_name(size_t i, char *buf, size_t len)
{
	if (!fn_syms[i].c || !popts.prefix || !*popts.prefix)
		return fn_syms[i].name;
	snprintf(buf, len, "%s%s", popts.prefix, fn_syms[i].name);
	return buf;
}

int probes__fn_of_symbol(const char *name)
{
	size_t pl = popts.prefix ? strlen(popts.prefix) : 0;

	if (!name)
		return -1;
	for (size_t i = 0; i < NSYMS; i++) {
		if (fn_syms[i].fn == MARKER)
			continue;
		if (!strcmp(name, fn_syms[i].name))
			return fn_syms[i].fn;
		if (fn_syms[i].c && pl && !strncmp(name, popts.prefix, pl) &&
		    !strcmp(name + pl, fn_syms[i].name))
			return fn_syms[i].fn;
	}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static bool is_libc(const char *path)
{
	const char *base = base_name(path);

	return !strncmp(base, "libc.so", 7) || (!strncmp(base, "libc-", 5) && strstr(base, ".so"));
}

static bool is_loader(const char *path)
{
	return !strncmp(base_name(path), "ld-linux", 8) || !strncmp(base_name(path), "ld-", 3);
}

/* A mapped object and the traced names it defines. */
struct cand {
	char path[PATH_MAX];
	char deleted[40];		/* START-END of a mapping of it when deleted, or "" */
	bool exe, preload, libc;
	const char *kind;
	int rank;			/* the dynamic linker's order, lower binds first */
	unsigned long start, end;	/* its lowest and highest mapped addresses */
	char soname[128];		/* DT_SONAME, or "" */
	char needed[16][128];		/* DT_NEEDED */
	int nneeded;
	bool have[NSYMS];
	uint64_t off[NSYMS];		/* file offset of each */
};

/* Definitions of the wanted names in one symbol table. */
static void scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct cand *c)
{
	char buf[128];
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr tsh;
		GElf_Sym sym;
		const char *name;
		Elf_Scn *tscn;
		int bind;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		/* an IFUNC's address is its resolver's: not the function called */
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK))
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && !strchr("mfcrpavdsjt", name[0]) && !popts.prefix))
			continue;
		for (size_t k = 0; k < NSYMS; k++) {
			if (c->have[k] || strcmp(name, sym_name(k, buf, sizeof(buf))))
				continue;
			tscn = elf_getscn(elf, sym.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &tsh))
				break;
			c->off[k] = sym.st_value - tsh.sh_addr + tsh.sh_offset;
			c->have[k] = true;
			break;
		}
	}
}

/*
 * What scan_object found in a file, by file (device, inode, size, mtime) and role: the
 * processes of a tree map the same libraries, and each exec scanned libc's dynamic symbols
 * again. The names looked for are fixed for a run (popts). A few files, replaced in turn.
 */
#define SCAN_MEMO 32

static struct scan_memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	bool exe, valid;
	int ret;
	bool have[NSYMS];
	uint64_t off[NSYMS];
} scan_memo[SCAN_MEMO];
static unsigned scan_memo_next;

static struct scan_memo *scan_memo_find(const struct stat *st, bool exe)
{
	for (int i = 0; i < SCAN_MEMO; i++) {
		struct scan_memo *m = &scan_memo[i];

		if (m->valid && m->exe == exe && m->dev == st->st_dev && m->ino == st->st_ino &&
		    m->size == st->st_size && m->mtime.tv_sec == st->st_mtim.tv_sec &&
		    m->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return m;
	}
	return NULL;
}

static void scan_memo_clear(void)
{
	memset(scan_memo, 0, sizeof(scan_memo));
}

static int scan_object_now(int fd, bool exe, struct cand *c);

/* The traced names an ELF file defines: its dynamic symbols (what the dynamic linker binds);
 * a static executable's from .symtab. 1 when it has a program interpreter, 0 when not,
 * negative errno. */
static int scan_object(const char *path, bool exe, struct cand *c)
{
	struct scan_memo *m;
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	m = scan_memo_find(&st, exe);
	if (m) {
		close(fd);
		memcpy(c->have, m->have, sizeof(c->have));
		memcpy(c->off, m->off, sizeof(c->off));
		c->exe = exe;
		return m->ret;
	}
	ret = scan_object_now(fd, exe, c);	/* closes fd */
	if (ret >= 0) {
		m = &scan_memo[scan_memo_next++ % SCAN_MEMO];
		*m = (struct scan_memo){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
					 .mtime = st.st_mtim, .exe = exe, .valid = true,
					 .ret = ret };
		memcpy(m->have, c->have, sizeof(m->have));
		memcpy(m->off, c->off, sizeof(m->off));
	}
	return ret;
}

static int scan_object_now(int fd, bool exe, struct cand *c)
{
	bool interp = false, any = false;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstr)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(elf, shstr, sh.sh_name);
		if (sname && !strcmp(sname, ".interp"))
			interp = true;
		if (sh.sh_type == SHT_DYNSYM)
			scan_table(elf, scn, &sh, c);
	}
	for (size_t k = 0; k < NSYMS; k++)
		any |= c->have[k];
	/* a static executable (no .interp) has its allocator in .symtab only */
	if (exe && !interp && !any) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
				scan_table(elf, scn, &sh, c);
		}
	}
	c->exe = exe;
	elf_end(elf);
	close(fd);
	return interp;
}

static const char *kind_of(const struct cand *c)
{
	const char *b = base_name(c->path);

	if (c->exe)
		return c->have[SYM_MALLOC] ? "static" : "executable";
	if (c->libc)
		return "glibc";
	if (c->have[SYM_MALLOCX] || !strncmp(b, "libjemalloc", 11))
		return "jemalloc";
	if (c->have[SYM_TC] || !strncmp(b, "libtcmalloc", 11))
		return "tcmalloc";
	if (c->have[SYM_MI] || !strncmp(b, "libmimalloc", 11))
		return "mimalloc";
	if (!strncmp(b, "libstdc++", 9))
		return "libstdc++";
	return "custom";
}

/* Whether PATH (an --lib argument or an LD_PRELOAD entry) names the mapped file. */
static bool names_file(const char *want, size_t wlen, const char *mapped)
{
	char real[PATH_MAX], tmp[PATH_MAX];

	if (!wlen || wlen >= sizeof(tmp))
		return false;
	memcpy(tmp, want, wlen);
	tmp[wlen] = 0;
	if (!strcmp(tmp, mapped))
		return true;
	if (!strchr(tmp, '/'))
		return !strcmp(tmp, base_name(mapped));
	return realpath(tmp, real) && !strcmp(real, mapped);
}

/* LD_PRELOAD of pid (its initial environment: what its dynamic linker read). */
static char *read_preload(pid_t pid)
{
	char path[64], *env, *res = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = util_read_file(path, &len);
	for (size_t i = 0; env && i < len; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "LD_PRELOAD=", 11)) {
			res = strdup(env + i + 11);
			break;
		}
	free(env);
	return res;
}

static bool in_preload(const char *preload, const char *mapped)
{
	const char *p = preload;

	while (p && *p) {
		size_t n = strcspn(p, ": ");

		if (names_file(p, n, mapped))
			return true;
		p += n;
		p += strspn(p, ": ");
	}
	return false;
}

static int rank_of(const struct cand *c)
{
	if (popts.lib && *popts.lib && names_file(popts.lib, strlen(popts.lib), c->path))
		return -2;
	if (popts.allocator && !strcmp(popts.allocator, c->kind))
		return -1;
	if (c->exe)
		return 0;
	if (c->preload)
		return 1;
	if (!strcmp(c->kind, "libstdc++"))
		return 3;
	if (c->libc)
		return 4;
	return 2;
}

static int read_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Where to open c in pid (0: ours). A mapped file deleted or replaced since it was mapped (a
 * library upgraded under a running process) is read, and probed, through its mapping's
 * map_files link: it names the mapped inode, which a uprobe attaches to; the path in maps
 * names another file or none. */
static void cand_open_path(pid_t pid, const struct cand *c, char *buf, size_t len)
{
	if (!pid)
		snprintf(buf, len, "%s", c->path);
	else if (c->deleted[0])
		snprintf(buf, len, "/proc/%d/map_files/%s", pid, c->deleted);
	else
		snprintf(buf, len, "/proc/%d/root%s", pid, c->path);
}

/* Strip maps' " (deleted)" from the end of path; whether it was there. */
static bool strip_deleted(char *path)
{
	static const char tag[] = " (deleted)";
	size_t len = strlen(path), tl = sizeof(tag) - 1;

	if (len <= tl || strcmp(path + len - tl, tag))
		return false;
	path[len - tl] = 0;
	return true;
}

/* The mapped ELF objects of pid, in map order; *libc_mapped, *loader_mapped. */
static int list_objects(pid_t pid, struct cand **out, int *nout, bool *libc_mapped,
			bool *loader_mapped)
{
	char path[64], line[PATH_MAX + 128], exe[PATH_MAX] = "";
	struct cand *v = NULL;
	int n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	read_exe(pid, exe, sizeof(exe));
	strip_deleted(exe);
	*libc_mapped = *loader_mapped = false;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *dash;
		unsigned long start = strtoul(line, &dash, 16);
		unsigned long end = *dash == '-' ? strtoul(dash + 1, NULL, 16) : start;
		size_t len;
		int dup = -1;
		bool deleted;

		if (!file)
			continue;
		len = strlen(file);
		if (len && file[len - 1] == '\n')
			file[--len] = 0;
		deleted = strip_deleted(file);
		if (!strncmp(file, "/dev/", 5) || !strncmp(file, "/memfd:", 7))
			continue;
		for (int i = 0; i < n && dup < 0; i++)
			if (!strcmp(v[i].path, file) && !v[i].deleted[0] == !deleted)
				dup = i;
		if (dup >= 0) {
			if (end > v[dup].end)
				v[dup].end = end;
			continue;
		}
		if (n == cap) {
			struct cand *nv;

			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = nv;
		}
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].path, sizeof(v[n].path), "%s", file);
		if (deleted)
			snprintf(v[n].deleted, sizeof(v[n].deleted), "%lx-%lx", start, end);
		v[n].start = start;
		v[n].end = end;
		v[n].exe = exe[0] && !strcmp(file, exe);
		v[n].libc = is_libc(file);
		*libc_mapped |= v[n].libc;
		*loader_mapped |= is_loader(file);
		n++;
	}
	fclose(f);
	*out = v;
	*nout = n;
	return 0;
}

/* The argument registers mem_enter reads for fn (see its switch); all six for one it does not
 * know. No instruction before a moved probe point may write them. */
static unsigned fn_arg_regs(int fn)
{
	switch (fn) {
	case MEM_FN_MALLOC: case MEM_FN_FREE: case MEM_FN_VALLOC: case MEM_FN_PVALLOC:
	case MEM_FN_OPERATOR_NEW: case MEM_FN_OPERATOR_NEW_ARRAY:
	case MEM_FN_OPERATOR_DELETE: case MEM_FN_OPERATOR_DELETE_ARRAY:
	case MEM_FN_MALLOCX: case MEM_FN_DALLOCX: case MEM_FN_SDALLOCX:
		return placement_arg_mask(1);
	case MEM_FN_CALLOC: case MEM_FN_REALLOC: case MEM_FN_ALIGNED_ALLOC: case MEM_FN_MEMALIGN:
	case MEM_FN_RALLOCX:
		return placement_arg_mask(2);
	case MEM_FN_REALLOCARRAY: case MEM_FN_POSIX_MEMALIGN:
		return placement_arg_mask(3);
	default:
		return PLACE_ALL_ARGS;
	}
}

/* Add one object's probe points for the names it serves (chosen[k] == this object). */
static int add_object(struct alloc_lib *lib, const struct cand *c, pid_t pid, const int *chosen,
		      int ci)
{
	struct alloc_obj *o = &lib->objs[lib->nobjs];
	int8_t primary[ALLOC_MAX_PROBES];
	struct placer *pl;

	memset(o, 0, sizeof(*o));
	snprintf(o->path, sizeof(o->path), "%s", c->path);
	if (strlen(c->path) + 32 >= sizeof(o->open_path))
		return -ENAMETOOLONG;
	cand_open_path(pid, c, o->open_path, sizeof(o->open_path));
	o->kind = c->kind;
	for (size_t k = 0; k < NSYMS; k++) {
		int fn = fn_syms[k].fn;
		uint32_t j;

		if (chosen[k] != ci || fn == MARKER)
			continue;
		for (j = 0; j < o->nprobes; j++)
			if (o->offsets[j] == c->off[k])
				break;
		if (j < o->nprobes) {
			/* a name at an address already probed: an alias, told apart by callers */
			int p = primary[j];

			if (p != fn && !(lib->alias_mask[p] & (1u << fn))) {
				lib->alias_mask[p] |= 1u << fn;
				snprintf(lib->aliases + strlen(lib->aliases),
					 sizeof(lib->aliases) - strlen(lib->aliases), "%s%s=%s",
					 lib->aliases[0] ? ", " : "", mem_fn_names[fn],
					 mem_fn_names[p]);
			}
			if (p != fn && is_free_fn(p))
				o->cookies[j] |= MEM_COOKIE_CALLER;
			continue;
		}
		if (o->nprobes == ALLOC_MAX_PROBES)
			return -E2BIG;
		primary[o->nprobes] = fn;
		o->offsets[o->nprobes] = c->off[k];
		o->cookies[o->nprobes++] = fn;
	}
	if (!o->nprobes)
		return 0;
	/* Past a single-stepped first instruction when that is safe (core/placement.c). %rsp must
	 * be the entry's at every point: a return probe shares the point and hijacks *(%rsp), an
	 * aliased free and --alloc-only read the caller there, and the free mark compares stack
	 * pointers of delete and the free it tail-calls; %rbp too: --alloc-only walks the
	 * caller's frames from it. Free-like functions have entry probes only; the
	 * rest return what they allocated. */
	pl = placer__new(o->open_path);		/* NULL: every probe at its entry */
	for (uint32_t j = 0; j < o->nprobes; j++) {
		int fn = primary[j];
		struct placement place;
		size_t n;

		placer__place(pl, o->offsets[j], 0, fn_arg_regs(fn) | PLACE_RBP, PLACE_KEEP_RSP,
			      &place);
		o->entries[j] = o->offsets[j];
		o->offsets[j] = place.offset;
		n = strnlen(place.reason, sizeof(o->reasons[j]) - 1);
		memcpy(o->reasons[j], place.reason, n);
		o->reasons[j][n] = 0;
		if (is_free_fn(fn))
			continue;
		/* libstdc++'s operator new calls malloc (aligned new: aligned_alloc), which is
		 * probed: no return probe on new, whose hijacked return address would stop a
		 * std::bad_alloc's unwinding (see MEM_COOKIE_NEW) */
		if (!strcmp(o->kind, "libstdc++") &&
		    (fn == MEM_FN_OPERATOR_NEW || fn == MEM_FN_OPERATOR_NEW_ARRAY)) {
			o->cookies[j] |= MEM_COOKIE_NEW;
			continue;
		}
		o->ret_offsets[o->nret] = o->offsets[j];
		o->ret_cookies[o->nret++] = fn;
	}
	placer__free(pl);
	lib->nprobes += o->nprobes;
	lib->nobjs++;
	return 0;
}

/*
 * The objects serving pid's traced names. Pure over the candidates (unit-testable): each name is
 * bound to the lowest-ranked object defining it, as the dynamic linker binds it; the object
 * serving malloc comes first.
 */
static int choose(struct alloc_lib *lib, struct cand *v, int n, pid_t pid)
{
	int chosen[NSYMS], order[ALLOC_MAX_OBJS], norder = 0, m;
	char buf[128];
	int err;

	for (size_t k = 0; k < NSYMS; k++) {
		chosen[k] = -1;
		for (int i = 0; i < n; i++) {
			if (!v[i].have[k])
				continue;
			/* of two equal ranks, the one loaded first: the loader maps top-down, so
			 * that is the higher address (a preload whose environment the program
			 * overwrote, redis's process title, still comes first) */
			if (chosen[k] < 0 || v[i].rank < v[chosen[k]].rank ||
			    (v[i].rank == v[chosen[k]].rank && v[i].start > v[chosen[k]].start))
				chosen[k] = i;
		}
	}
	m = chosen[SYM_MALLOC];
	if (m < 0 || chosen[SYM_FREE] < 0) {
		snprintf(last_error, sizeof(last_error), "PID %d has no %s and %s in its mappings",
			 pid, sym_name(SYM_MALLOC, buf, sizeof(buf)),
			 popts.prefix && *popts.prefix ? "its free" : "free");
		return -ENOENT;
	}
	order[norder++] = m;
	for (size_t k = 0; k < NSYMS; k++) {
		bool seen = false;

		if (chosen[k] < 0 || fn_syms[k].fn == MARKER)
			continue;
		for (int j = 0; j < norder; j++)
			seen |= order[j] == chosen[k];
		if (seen)
			continue;
		if (norder == ALLOC_MAX_OBJS) {
			snprintf(last_error, sizeof(last_error), "PID %d binds its allocation "
				 "functions to more than %d objects, more than ebprof probes in one "
				 "process", pid, ALLOC_MAX_OBJS);
			return -ENOPKG;
		}
		order[norder++] = chosen[k];
	}
	for (int j = 0; j < norder; j++) {
		err = add_object(lib, &v[order[j]], pid, chosen, order[j]);
		if (err)
			return err;
	}
	snprintf(lib->path, sizeof(lib->path), "%s", lib->objs[0].path);
	snprintf(lib->open_path, sizeof(lib->open_path), "%s", lib->objs[0].open_path);
	lib->kind = lib->objs[0].kind;
	return 0;
}

/* DT_SONAME and DT_NEEDED of an ELF file (its section headers). */
static void read_dynamic(const char *path, struct cand *c)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	c->soname[0] = 0;
	c->nneeded = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && elf_kind(elf) == ELF_K_ELF && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn d;
			const char *str;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
				continue;
			str = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!str)
				continue;
			if (d.d_tag == DT_SONAME)
				snprintf(c->soname, sizeof(c->soname), "%s", str);
			else if (c->nneeded < 16)
				snprintf(c->needed[c->nneeded++], sizeof(c->needed[0]), "%s", str);
		}
		break;
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* Whether every library the mapped objects need is mapped: the loader maps them all before it
 * relocates any or runs a constructor, so a program whose libc is mapped early (a library
 * needed only by another library comes after it) is not looked at half loaded. */
static bool closure_mapped(struct cand *v, int n, pid_t pid)
{
	for (int i = 0; i < n; i++) {
		char open_path[PATH_MAX + 32];

		cand_open_path(pid, &v[i], open_path, sizeof(open_path));
		read_dynamic(open_path, &v[i]);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < v[i].nneeded; k++) {
			const char *want = v[i].needed[k];
			bool found = false;

			for (int j = 0; j < n && !found; j++)
				found = !strcmp(v[j].soname, want) ||
					!strcmp(base_name(v[j].path), base_name(want));
			if (!found)
				return false;
		}
	return true;
}

/* Whether pid, stopped in a system call, made it from the dynamic loader: it is still loading
 * libraries (launch mode). A running process (attach) is never "in the loader". */
static bool in_loader(pid_t pid, const struct cand *v, int n)
{
	char path[64], buf[512], *last;
	unsigned long pc;
	FILE *f;
	bool in = false;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f) || !strncmp(buf, "running", 7)) {
		fclose(f);
		return false;
	}
	fclose(f);
	last = strrchr(buf, ' ');
	if (!last)
		return false;
	pc = strtoul(last + 1, NULL, 16);
	for (int i = 0; i < n; i++)
		in |= is_loader(v[i].path) && pc >= v[i].start && pc < v[i].end;
	return in;
}

/* Scan the candidates' symbols (the executable's already scanned when `exe_done`), rank them
 * and choose; checks the options. */
static int classify_and_choose(struct alloc_lib *lib, struct cand *v, int n, pid_t pid,
			       bool exe_done)
{
	int err, lib_idx = -1;

	for (int i = 0; i < n; i++) {
		char open_path[PATH_MAX + 32];

		if (!v[i].exe || !exe_done) {
			cand_open_path(pid, &v[i], open_path, sizeof(open_path));
			if (scan_object(open_path, v[i].exe, &v[i]) < 0)
				continue;
		}
		v[i].kind = kind_of(&v[i]);
		v[i].rank = rank_of(&v[i]);
		if (v[i].rank == -2)
			lib_idx = i;
	}
	if (popts.lib && *popts.lib && lib_idx < 0) {
		snprintf(last_error, sizeof(last_error), "--lib %s: no such object is mapped in "
			 "PID %d (give its path as /proc/%d/maps shows it)", popts.lib, pid, pid);
		return -ENOPKG;
	}
	if (popts.allocator && *popts.allocator) {
		bool found = false;

		for (int i = 0; i < n; i++)
			found |= v[i].kind && v[i].rank == -1 && v[i].have[SYM_MALLOC];
		if (!found) {
			snprintf(last_error, sizeof(last_error), "--allocator %s: PID %d has no %s "
				 "allocator mapped (no object of that kind defines %s)",
				 popts.allocator, pid, popts.allocator,
				 fn_syms[SYM_MALLOC].c && popts.prefix ? "its malloc" : "malloc");
			return -ENOPKG;
		}
	}
	for (int i = 0; i < n; i++)
		if (!v[i].kind) {	/* not an ELF file: binds nothing */
			memset(v[i].have, 0, sizeof(v[i].have));
			v[i].kind = "none";
		}
	err = choose(lib, v, n, pid);
	if (err == -ENOENT && ((popts.prefix && *popts.prefix) || lib_idx >= 0))
		err = -ENOPKG;
	return err;
}

int probes__choose_files(const char *const *paths, const bool *preload, int n, int exe_idx,
			 struct alloc_lib *lib)
{
	struct cand *v = calloc(n > 0 ? n : 1, sizeof(*v));
	int err;

	memset(lib, 0, sizeof(*lib));
	last_error[0] = 0;
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		snprintf(v[i].path, sizeof(v[i].path), "%s", paths[i]);
		v[i].exe = i == exe_idx;
		v[i].libc = is_libc(paths[i]);
		v[i].preload = preload && preload[i];
	}
	err = classify_and_choose(lib, v, n, 0, false);
	free(v);
	return err;
}

int probes__find_allocator(pid_t pid, struct alloc_lib *lib)
{
	bool libc_mapped = false, loader_mapped = false, dynamic = false;
	struct cand *v = NULL;
	char *preload = NULL;
	int n = 0, err;

	memset(lib, 0, sizeof(*lib));
	last_error[0] = 0;
	err = list_objects(pid, &v, &n, &libc_mapped, &loader_mapped);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		char open_path[PATH_MAX + 32];

		if (!v[i].exe)
			continue;
		cand_open_path(pid, &v[i], open_path, sizeof(open_path));
		dynamic = scan_object(open_path, true, &v[i]) > 0;
	}
	/* a dynamically linked program binds its names once the loader has mapped its libraries;
	 * libc comes last among them for the usual link order (see ARCHITECTURE.md) */
	if ((dynamic || loader_mapped) && !libc_mapped) {
		err = -ENOENT;
		goto out;
	}
	if ((dynamic || loader_mapped) && in_loader(pid, v, n) && !closure_mapped(v, n, pid)) {
		err = -ENOENT;
		goto out;
	}
	preload = read_preload(pid);
	for (int i = 0; i < n; i++)
		v[i].preload = in_preload(preload, v[i].path);
	err = classify_and_choose(lib, v, n, pid, true);
out:
	free(preload);
	free(v);
	if (err)
		lib->path[0] = lib->open_path[0] = 0;
	return err;
}

int probes__link_uprobe_multi(int prog_fd, const char *path, const unsigned long *offsets,
			     const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret)
{
	/* union bpf_attr.link_create with the uprobe_multi member of Linux 6.6 */
	struct {
		__u32 prog_fd;
		__u32 target_fd;
		__u32 attach_type;
		__u32 flags;
		__aligned_u64 path;
		__aligned_u64 offsets;
		__aligned_u64 ref_ctr_offsets;
		__aligned_u64 cookies;
		__u32 cnt;
		__u32 um_flags;
		__u32 pid;
		__u32 pad;
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = EBPROF_BPF_TRACE_UPROBE_MULTI;
	attr.path = (unsigned long)path;
	attr.offsets = (unsigned long)offsets;
	attr.cookies = (unsigned long)cookies;
	attr.cnt = cnt;
	attr.um_flags = ret ? EBPROF_BPF_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int probes__attach(int entry_prog_fd, int exit_prog_fd, pid_t pid, const struct alloc_lib *lib,
		   struct probe_links *links)
{
	int fd;

	links->n = 0;
	for (uint32_t i = 0; i < lib->nobjs; i++) {
		const struct alloc_obj *o = &lib->objs[i];

		links->entry_fd[i] = links->exit_fd[i] = -1;
		links->n = i + 1;
		/* returns first: an entry without its return would leave depth raised */
		if (o->nret) {
			fd = probes__link_uprobe_multi(exit_prog_fd, o->open_path, o->ret_offsets,
					       o->ret_cookies, o->nret, pid, true);
			if (fd < 0)
				goto fail;
			links->exit_fd[i] = fd;
		}
		fd = probes__link_uprobe_multi(entry_prog_fd, o->open_path, o->offsets, o->cookies,
				       o->nprobes, pid, false);
		if (fd < 0)
			goto fail;
		links->entry_fd[i] = fd;
	}
	return 0;
fail:
	probes__detach(links);
	return fd;
}

int probes__attach_entries(int entry_prog_fd, pid_t pid, const struct alloc_lib *lib,
			   uint64_t skip_fns, struct probe_links *links)
{
	unsigned long offsets[ALLOC_MAX_PROBES];
	uint64_t cookies[ALLOC_MAX_PROBES];
	int fd = -ENOENT;

	links->n = 0;
	for (uint32_t i = 0; i < lib->nobjs; i++) {
		const struct alloc_obj *o = &lib->objs[i];
		uint32_t n = 0;

		links->entry_fd[i] = links->exit_fd[i] = -1;
		links->n = i + 1;
		for (uint32_t j = 0; j < o->nprobes; j++) {
			uint32_t fn = (uint32_t)o->cookies[j];

			if (fn < 64 && (skip_fns >> fn & 1))
				continue;
			offsets[n] = o->offsets[j];
			cookies[n++] = o->cookies[j];
		}
		if (!n)
			continue;
		fd = probes__link_uprobe_multi(entry_prog_fd, o->open_path, offsets, cookies, n, pid, false);
		if (fd < 0) {
			probes__detach(links);
			return fd;
		}
		links->entry_fd[i] = fd;
	}
	return fd < 0 ? fd : 0;
}

void probes__detach(struct probe_links *links)
{
	if (!links)
		return;
	for (uint32_t i = 0; i < links->n && i < ALLOC_MAX_OBJS; i++) {
		if (links->entry_fd[i] >= 0)
			close(links->entry_fd[i]);
		if (links->exit_fd[i] >= 0)
			close(links->exit_fd[i]);
		links->entry_fd[i] = links->exit_fd[i] = -1;
	}
	links->n = 0;
}
