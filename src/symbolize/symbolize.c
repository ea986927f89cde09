/* Symbolizer facade: process snapshots (sym_proc) built from maps text, and the address
 * resolution path mapping -> module -> ELF vaddr -> symbol + DWARF frames, with the per-module
 * frame cache in front of the DWARF work; also the mapping side of call-site decoding
 * (callsite.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libelf.h>

#include "symbolize/sym_internal.h"
#include "util/util.h"

/* The largest guard below a thread's stack taken for one (glibc's default is a page;
 * pthread_attr_setguardsize sets others) */
#define THREAD_GUARD_MAX	(1u << 20)

struct sym_proc {
	struct symbolizer *s;
	pid_t pid;		/* 0 when built from text */
	char *root;		/* prefix for opening paths: "" or "/proc/PID/root" */
	struct sym_map *maps;
	size_t nmaps;
	struct sym_proc *prev;	/* an earlier snapshot of the same process, or NULL */
	uint64_t serial;	/* sym_proc__serial */
	struct sym_perfmap *perfmap;	/* its JIT's names (perfmap.c); NULL: none, not yet */
	bool perfmap_tried;
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (opts)
		s->opts = *opts;
	s->debug_dir = strdup(s->opts.debug_dir && *s->opts.debug_dir ? s->opts.debug_dir :
								       "/usr/lib/debug");
	if (!s->debug_dir) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->opts.debug_dir = s->debug_dir;
	if (s->opts.cache_dir) {
		s->cache_dir = strdup(s->opts.cache_dir);
		if (!s->cache_dir) {
			free(s->debug_dir);
			free(s);
			errno = ENOMEM;
			return NULL;
		}
		s->opts.cache_dir = s->cache_dir;
	}
	strpool__init(&s->pool);
	elf_version(EV_CURRENT);
	return s;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	if (s) {
		*st = s->stats;
		st->bytes_open = s->open_bytes;
	} else {
		memset(st, 0, sizeof(*st));
	}
}

void symbolizer__free(struct symbolizer *s)
{
	struct sym_module *m, *next;

	if (!s)
		return;
	for (m = s->modules; m; m = next) {
		next = m->next;
		sym_module__free(m);
	}
	free(s->keys);
	strpool__fini(&s->pool);
	free(s->debug_dir);
	free(s->cache_dir);
	free(s);
}

static int map_cmp(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

void *sym_proc_mem__read(pid_t pid, uint64_t start, uint64_t end)
{
	size_t size = end - start;
	char path[64];
	void *buf;
	ssize_t n;
	int fd, err;

	if (end <= start || size > (1 << 20)) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(size);
	n = buf ? pread(fd, buf, size, (off_t)start) : -1;
	err = n < 0 ? errno : EIO;
	close(fd);
	if (n != (ssize_t)size) {
		free(buf);
		errno = err;
		return NULL;
	}
	return buf;
}

int sym_vdso__memfd(pid_t pid, uint64_t start, uint64_t end)
{
	void *buf = sym_proc_mem__read(pid, start, end);
	size_t size = end - start;
	int fd;

	if (!buf)
		return -1;
	fd = memfd_create("ebprof-vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, buf, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
		errno = EIO;
	}
	free(buf);
	return fd;
}

static bool is_vdso(const struct sym_map *map)
{
	return map->kind == SYM_MAP_SPECIAL && map->path && !strcmp(map->path, "[vdso]");
}

/* The kernel's code mapped into the process ([vdso]: clock_gettime, gettimeofday...) is an ELF
 * image with its own symbols, the same bytes in every process of one ABI: read now, while the
 * process is there, and named by a module made once per distinct image. Unread (the process
 * is gone), its frames are left as offsets in [vdso]. */
static void vdso_module(struct sym_proc *p, struct sym_map *map)
{
	void *buf = sym_proc_mem__read(p->pid, map->start, map->end);

	if (!buf)
		return;
	map->mod_tried = true;
	map->display = strpool__intern(&p->s->pool, map->path);
	map->mod = map->display ? sym_module__get_image(p->s, buf, map->end - map->start,
							   map->display) : NULL;
	if (map->mod)
		map->mod->refs++;
	free(buf);
}

static uint64_t new_serial(void)
{
	static uint64_t serials;

	return __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
}

/* Executable memory no ELF file names: anonymous ([anon], or named [anon:NAME]), or a memfd
 * (a JIT that maps its code twice, writable and executable): a perf map's */
static bool jit_code(const struct sym_map *m)
{
	return m->perms[2] == 'x' &&
	       (m->kind == SYM_MAP_ANON || (m->path && (!strncmp(m->path, "[anon:", 6) ||
							!strncmp(m->path, "/memfd:", 7))));
}

static struct sym_proc *proc_new(struct symbolizer *s, const char *text, const char *root,
				 pid_t pid)
{
	struct sym_proc *p = calloc(1, sizeof(*p));
	int err = -ENOMEM;

	if (!p)
		goto err;
	p->s = s;
	p->pid = pid;
	p->serial = new_serial();
	p->root = strdup(root ? root : "");
	if (!p->root)
		goto err;
	err = sym_maps__parse(text, &p->maps, &p->nmaps);
	if (err)
		goto err;
	/* The kernel lists mappings in order; text from elsewhere may not be. */
	qsort(p->maps, p->nmaps, sizeof(*p->maps), map_cmp);
	for (size_t i = 0; pid > 0 && i < p->nmaps; i++)
		if (is_vdso(&p->maps[i]))
			vdso_module(p, &p->maps[i]);
	/* where its perf map is, while the process is there to tell (its PID namespace, its
	 * user), when it has code outside files: a JIT's */
	for (size_t i = 0; pid > 0 && !p->perfmap_tried && i < p->nmaps; i++)
		if (jit_code(&p->maps[i])) {
			p->perfmap = sym_perfmap__new(pid, p->root);
			p->perfmap_tried = true;
		}
	return p;
err:
	sym_proc__free(p);
	errno = -err;
	return NULL;
}

struct sym_proc *symbolizer__load_maps(struct symbolizer *s, const char *maps_text,
				       const char *root)
{
	if (!s || !maps_text) {
		errno = EINVAL;
		return NULL;
	}
	return proc_new(s, maps_text, root, 0);
}


struct sym_proc *symbolizer__load_pid(struct symbolizer *s, pid_t pid)
{
	return symbolizer__load_pid_maps(s, pid, NULL);
}

/* Is pid in our mount namespace? (Yes when it cannot be told.) */
static bool same_mnt_ns(pid_t pid)
{
	char path[64];
	struct stat ours, its;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat("/proc/self/ns/mnt", &ours) || stat(path, &its))
		return true;
	return ours.st_dev == its.st_dev && ours.st_ino == its.st_ino;
}

struct sym_proc *symbolizer__load_pid_maps(struct symbolizer *s, pid_t pid,
					   const char *maps_text)
{
	char path[64], root[64];
	struct stat st_root, st_proc;
	struct sym_proc *p;
	char *text = NULL;
	int saved;

	if (!s || pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!maps_text) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		maps_text = text = util_read_file(path, NULL);
		if (!text)
			return NULL;
	}
	/* Open files through the process's root only when it differs from ours, or its mount
	 * namespace does (the same root, another file mounted at a path: a private namespace's
	 * bind mount named every frame from the file at that path in ours): plain paths keep
	 * .gnu_debuglink lookups in /usr/lib/debug/<dir> working. If the root cannot be examined,
	 * plain paths are the best remaining guess. */
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (stat(root, &st_proc) || stat("/", &st_root) ||
	    (st_proc.st_dev == st_root.st_dev && st_proc.st_ino == st_root.st_ino &&
	     same_mnt_ns(pid)))
		root[0] = '\0';
	p = proc_new(s, maps_text, root, pid);
	saved = errno;
	free(text);
	errno = saved;
	return p;
}

void sym_proc__free(struct sym_proc *p)
{
	while (p) {
		struct sym_proc *prev = p->prev;

		for (size_t i = 0; i < p->nmaps; i++)
			if (p->maps[i].mod)
				p->maps[i].mod->refs--;
		sym_maps__free(p->maps, p->nmaps);
		sym_perfmap__free(p->perfmap);
		free(p->root);
		free(p);
		p = prev;
	}
}

uint64_t sym_proc__serial(const struct sym_proc *p)
{
	return p ? p->serial : 0;
}

void sym_proc__keep_previous(struct sym_proc *p, struct sym_proc *prev, unsigned int max)
{
	struct sym_proc *q = p;
	unsigned int n = 1;

	if (!p || p == prev)
		return;
	sym_proc__free(p->prev);
	p->prev = prev;
	/* the oldest go first */
	while (q->prev && n < max) {
		q = q->prev;
		n++;
	}
	sym_proc__free(q->prev);
	q->prev = NULL;
}

static struct sym_map *find_map(struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

static void map_module(struct sym_proc *p, struct sym_map *map);
static uint32_t module_frames(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			      struct sym_frame *frames);

/* Whether two modules name the code at addr (mapped by a and b) with the same functions, inline
 * ones included: two builds of one program at the same addresses (a process that exec'd another
 * build of itself, without ASLR), whose frame there is that function whichever ran. */
static bool same_functions(struct symbolizer *s, struct sym_module *ma, struct sym_map *a,
			   struct sym_module *mb, struct sym_map *b, uint64_t addr)
{
	struct sym_frame fa[SYM_MAX_INLINE], fb[SYM_MAX_INLINE];
	uint64_t va, vb;
	uint32_t na, nb;

	if (!sym_module__file_off_to_vaddr(ma, addr - a->start + a->offset, &va, NULL) ||
	    !sym_module__file_off_to_vaddr(mb, addr - b->start + b->offset, &vb, NULL))
		return false;
	na = module_frames(s, ma, va, fa);
	nb = module_frames(s, mb, vb, fb);
	if (!na || na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!fa[i].function || !fb[i].function || strcmp(fa[i].function, fb[i].function))
			return false;
	return true;
}

/* Whether a and b (mappings of one address, addr, in two snapshots pa and pb) put the same code
 * there: the same file (one build-id; else one module, the same file identity; else the same
 * device, inode and path) at the same file offset; or, by_name (naming the frame at addr, not
 * telling whether a mapping's code was replaced), two files whose functions there are the same
 * (same_functions: the frame's name is not in doubt, its line is the newest's). */
static bool same_code(struct sym_proc *pa, struct sym_map *a, struct sym_proc *pb,
		      struct sym_map *b, uint64_t addr, bool by_name)
{
	struct sym_module *ma, *mb;

	if (!a->mod_tried)
		map_module(pa, a);
	if (!b->mod_tried)
		map_module(pb, b);
	ma = sym_module__best(a->mod);
	mb = sym_module__best(b->mod);
	if (addr - a->start + a->offset != addr - b->start + b->offset)
		return by_name && ma && mb && ma != mb && same_functions(pa->s, ma, a, mb, b, addr);
	if (ma && mb)
		return ma == mb ||
		       (ma->build_id && mb->build_id && !strcmp(ma->build_id, mb->build_id)) ||
		       (by_name && same_functions(pa->s, ma, a, mb, b, addr));
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->inode == b->inode && a->kind == b->kind &&
	       (a->path && b->path ? !strcmp(a->path, b->path) : a->path == b->path);
}

/* The mapping holding addr in p or, where p has none, in the earlier snapshots it keeps (a
 * library unloaded since); *owner: the snapshot it is in. The newest that maps it executable
 * wins, else the newest that maps it: an address a stack holds was code when the stack was
 * taken, and a snapshot read while its library was half mapped (dlopen maps the whole file
 * read-only before its code) tells nothing of that moment. Kept as the newest (a dlclose
 * after it reads the same executable mappings: no snapshot after it), it made every frame
 * in a library opened and closed in a loop a frame in no code, left out of its stack.
 * other (may be NULL): an older snapshot's executable mapping of addr that puts other code
 * there (a library closed, replaced and opened again at the same place), and *other_owner its
 * snapshot; else NULL. The kernel counts bare addresses without time: which one ran is not
 * known, and the newest named the older one's samples with its own functions. */
static struct sym_map *find_map_kept(struct sym_proc *p, uint64_t addr, struct sym_proc **owner,
				     struct sym_map **other, struct sym_proc **other_owner)
{
	struct sym_map *data = NULL, *code = NULL;
	struct sym_proc *data_owner = NULL;

	if (other)
		*other = NULL;
	for (; p; p = p->prev) {
		struct sym_map *m = find_map(p, addr);

		if (m && m->perms[2] == 'x') {
			if (!code) {
				code = m;
				*owner = p;
				if (!other)
					return m;
			} else if (!same_code(*owner, code, p, m, addr, true)) {
				*other = m;
				*other_owner = p;
				return code;
			}
			continue;
		}
		if (m && !data) {
			data = m;
			data_owner = p;
		}
	}
	if (code)
		return code;
	if (data)
		*owner = data_owner;
	return data;
}

bool sym_proc__replaces_code(struct sym_proc *p)
{
	for (size_t i = 0; p && i < p->nmaps; i++) {
		struct sym_map *m = &p->maps[i];

		if (m->perms[2] != 'x')
			continue;
		for (struct sym_proc *q = p->prev; q; q = q->prev) {
			size_t lo = 0, hi = q->nmaps;

			/* from the last mapping starting at or below m's start (sorted, disjoint) */
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (q->maps[mid].start <= m->start)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t j = lo ? lo - 1 : 0; j < q->nmaps && q->maps[j].start < m->end;
			     j++) {
				struct sym_map *o = &q->maps[j];
				uint64_t at = o->start > m->start ? o->start : m->start;

				if (o->perms[2] == 'x' && m->start < o->end &&
				    !same_code(p, m, q, o, at, false))
					return true;
			}
		}
	}
	return false;
}

void sym_proc__forget_previous(struct sym_proc *p)
{
	if (!p || !p->prev)
		return;
	sym_proc__free(p->prev);
	p->prev = NULL;
	/* its answers change: a cache of them (keyed by serial) must not serve the old ones */
	p->serial = new_serial();
}

static void map_module(struct sym_proc *p, struct sym_map *map)
{
	struct symbolizer *s = p->s;
	char *open_path = NULL;

	map->mod_tried = true;
	if (map->kind == SYM_MAP_ANON) {
		map->display = "[anon]";
		return;
	}
	map->display = strpool__intern(&s->pool, map->path);
	if (!map->display || map->kind != SYM_MAP_FILE)
		return;
	if (map->deleted) {
		/* The path may now name another file (or nothing); only the mapping's own
		 * map_files link is the file that is mapped. Needs privileges; else no symbols. */
		if (!p->pid)
			return;
		if (asprintf(&open_path, "/proc/%d/map_files/%llx-%llx", (int)p->pid,
			     (unsigned long long)map->start, (unsigned long long)map->end) < 0)
			return;
	} else if (asprintf(&open_path, "%s%s", p->root, map->path) < 0) {
		return;
	}
	map->mod = sym_module__get(s, open_path, p->root, map->display);
	if (!map->mod && !map->deleted && p->pid && *p->root) {
		/* not at that path in its root: a chroot inside its namespace, whose maps show
		 * paths as we see them; the mapping's own link is the file */
		free(open_path);
		open_path = NULL;
		if (asprintf(&open_path, "/proc/%d/map_files/%llx-%llx", (int)p->pid,
			     (unsigned long long)map->start, (unsigned long long)map->end) < 0)
			return;
		map->mod = sym_module__get(s, open_path, p->root, map->display);
	}
	if (map->mod)
		map->mod->refs++;
	free(open_path);
}

int sym_proc__load_modules(struct sym_proc *p)
{
	int n = 0;

	if (!p)
		return -EINVAL;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct sym_map *map = &p->maps[i];

		if (map->perms[2] != 'x')
			continue;
		if (!map->mod_tried)
			map_module(p, map);
		n += map->mod != NULL;
	}
	return n;
}

/* vaddr in a PLT stub: frames[0] named NAME@plt after the function it jumps to (as objdump and
 * gdb name it), and true; else false. */
static bool plt_frame(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			     struct sym_frame *frames)
{
	const char *name, *shown, *fn, *sys;
	char buf[512];

	if (sym_module__plt_symbol(m, vaddr, &name))
		return false;
	shown = sym__display_name(s, name);
	if (snprintf(buf, sizeof(buf), "%s@plt", shown) >= (int)sizeof(buf))
		return false;
	fn = strpool__intern(&s->pool, buf);
	snprintf(buf, sizeof(buf), "%s@plt", name);
	sys = strpool__intern(&s->pool, buf);
	if (!fn || !sys)
		return false;
	frames[0] = (struct sym_frame){ .function = fn, .system_name = sys };
	return true;
}

static uint32_t module_frames(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			      struct sym_frame *frames)
{
	struct sym_cached_frames *c;
	struct sym_symbol *sym;
	uint32_t n = 0;

	/* open again if it was closed, and the most recently used */
	if (sym_module__open(m))
		return 0;
	if (!s->opts.no_lines) {
		c = u64map__get(&m->frame_cache, vaddr);
		if (c) {
			memcpy(frames, c->frames, c->nframes * sizeof(*frames));
			return c->nframes;
		}
		n = sym_dwarf__frames(s, m, vaddr, frames, SYM_MAX_INLINE);
	}

	if (!n && plt_frame(s, m, vaddr, frames)) {
		n = 1;	/* a PLT stub: no symbol of its own, its callee's name@plt */
		sym = NULL;
	} else {
		/* the table is ours; only the lazy name is set */
		sym = (struct sym_symbol *)sym_module__find_symbol(m, vaddr);
	}
	if (sym) {
		struct sym_frame *outer;

		if (!sym->display_name)
			sym->display_name = sym__display_name(s, sym->name);
		if (!n)
			frames[n++] = (struct sym_frame){ 0 };
		/* The outermost frame is the real function: name it as the symbol table does, so
		 * aliases and .cold parts read the same with and without DWARF. A zero-size symbol
		 * stretched to the next one is a guess; a DWARF name found here is not. */
		outer = &frames[n - 1];
		if (sym->sized || !outer->function) {
			outer->function = sym->display_name ? sym->display_name : sym->name;
			outer->system_name = sym->name;
		}
	} else if (n && !frames[n - 1].function) {
		/* Line-table-only result and no symbol: not a function we can name. */
		n = 0;
	}
	/* names from libelf and libdw live as long as m stays open: results (and the cache,
	 * kept while it is) get the pool's copies, which live as long as the symbolizer */
	for (uint32_t i = 0; i < n; i++) {
		struct sym_frame *f = &frames[i];

		f->function = f->function ? strpool__intern(&s->pool, f->function) : NULL;
		f->system_name = f->system_name ? strpool__intern(&s->pool, f->system_name) : NULL;
		f->file = f->file ? strpool__intern(&s->pool, f->file) : NULL;
	}

	if (!s->opts.no_lines) {
		c = malloc(sizeof(*c) + n * sizeof(*frames));
		/* Without memory we only lose the cache entry. */
		if (c) {
			c->nframes = n;
			memcpy(c->frames, frames, n * sizeof(*frames));
			if (u64map__put(&m->frame_cache, vaddr, c))
				free(c);
		}
	}
	return n;
}

/* Code no symbol covers (a stripped file's static functions: Debian's libraries keep only
 * .dynsym) in a function its call frame information knows, the FDE whose range holds vaddr:
 * named after the range's start, "MODULE!sub_HEX" (module: the path its mapping shows; HEX:
 * an ELF virtual address, as module_offset), so that the addresses of one function are one
 * function. One frame, or none where no FDE holds vaddr either (hand-written assembly without
 * CFI directives, a file without .eh_frame). A sized symbol's bytes end at its size: past it,
 * an FDE may still name the code. */
static uint32_t cfi_frame(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			  const char *module, struct sym_frame *frames)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	uint64_t start, end;
	const char *name;
	char buf[512];

	/* a PLT section's FDE covers its stubs and PLT0, no function: those stay offsets */
	if (sym_module__in_plt(m, vaddr) || !sym_module__fde_range(m, vaddr, &start, &end))
		return 0;
	base = base && base[1] ? base + 1 : module ? module : "?";
	snprintf(buf, sizeof(buf), "%s!sub_%" PRIx64, base, start);
	name = strpool__intern(&s->pool, buf);
	if (!name)
		return 0;
	frames[0] = (struct sym_frame){ .function = name, .system_name = name, .cfi_named = true };
	return 1;
}

int sym_proc__resolve(struct sym_proc *p, uint64_t addr, bool return_addr,
		      struct sym_result *out)
{
	uint64_t a = return_addr && addr ? addr - 1 : addr;
	struct sym_proc *other_owner = NULL;
	struct sym_map *map, *other;
	uint64_t file_off, vaddr;
	struct sym_module *mod;

	if (!p || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	map = find_map_kept(p, a, &p, &other, &other_owner);
	if (!map)
		return -ENOENT;
	out->mapped = true;
	out->executable = map->perms[2] == 'x';
	out->map_start = map->start;
	out->map_end = map->end;
	out->map_offset = map->offset;
	if (!map->mod_tried)
		map_module(p, map);
	out->module = map->display;

	file_off = a - map->start + map->offset;
	out->module_offset = file_off;
	if (other) {
		/* two files' code at this address during the run: named from neither */
		if (!other->mod_tried)
			map_module(other_owner, other);
		out->other_module = other->display ? other->display : "?";
		return 0;
	}
	/* code a JIT made outside files: named by its perf map, if it wrote one */
	if (jit_code(map) && !map->mod) {
		const char *name = sym_perfmap__find(p->perfmap, &p->s->pool, a);

		if (name) {
			out->frames[0] = (struct sym_frame){ .function = name, .system_name = name };
			out->nframes = 1;
		}
		return 0;
	}
	/* named from the richest file of its build-id (a stripped copy's from the full one) */
	mod = sym_module__best(map->mod);
	if (!mod)
		return 0;
	out->build_id = mod->build_id;
	if (!sym_module__file_off_to_vaddr(mod, file_off, &vaddr, NULL))
		return 0;
	out->module_offset = vaddr;
	out->nframes = module_frames(p->s, mod, vaddr, out->frames);
	if (!out->nframes)
		out->nframes = cfi_frame(p->s, mod, vaddr, out->module, out->frames);
	return 0;
}

/* Whether map's file may be opened for its symbols: a regular file (a device's mapping is not
 * read: opening one can block or have effects), or a private mapping of a deleted one, read
 * through its map_files link as code is. */
static bool data_file_readable(const struct sym_proc *p, const struct sym_map *map)
{
	struct stat st;
	char *path;
	bool reg;

	if (map->kind != SYM_MAP_FILE)
		return false;
	if (map->deleted)
		return map->perms[3] == 'p';
	if (asprintf(&path, "%s%s", p->root, map->path) < 0)
		return false;
	reg = !stat(path, &st) && S_ISREG(st.st_mode);
	free(path);
	return reg;
}

/* The ELF virtual address in map's module of the data at file offset file_off; false when the
 * file is no ELF file (or unreadable) or no segment holds it. */
static bool data_vaddr(struct sym_proc *p, struct sym_map *map, uint64_t file_off,
		       uint64_t *vaddr)
{
	if (!map->mod_tried && data_file_readable(p, map))
		map_module(p, map);
	return map->mod && sym_module__data_vaddr(map->mod, file_off, vaddr);
}

/* addr in module m at ELF vaddr: the data object holding it, or the vaddr itself */
static void data_object(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			struct sym_data *out)
{
	struct sym_symbol *sym = (struct sym_symbol *)sym_module__find_object(m, vaddr);

	out->kind = SYM_DATA_MODULE;
	out->offset = vaddr;
	if (!sym)
		return;
	/* the table is ours; only the lazy name is set */
	if (!sym->display_name)
		sym->display_name = sym__display_name(s, sym->name);
	/* interned: the table's names go with it when m is closed */
	out->symbol = strpool__intern(&s->pool, sym->display_name ? sym->display_name :
								    sym->name);
	out->offset = vaddr - sym->start;
}

int sym_proc__resolve_data(struct sym_proc *p, uint64_t addr, struct sym_data *out)
{
	struct sym_map *map, *prev;
	uint64_t vaddr, file_off;

	if (!p || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	map = find_map_kept(p, addr, &p, NULL, NULL);
	if (!map)
		return -ENOENT;
	prev = map > p->maps && map[-1].end == map->start ? &map[-1] : NULL;
	out->map_start = map->start;
	out->map_end = map->end;
	out->shared = map->perms[3] == 's';
	out->offset = addr - map->start;
	/* shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS) is shmem the kernel names so */
	if (map->kind == SYM_MAP_FILE && map->deleted && !strcmp(map->path, "/dev/zero")) {
		out->kind = SYM_DATA_ANON;
		return 0;
	}
	switch (map->kind) {
	case SYM_MAP_FILE:
		out->module = strpool__intern(&p->s->pool, map->path);
		file_off = addr - map->start + map->offset;
		if (data_vaddr(p, map, file_off, &vaddr)) {
			data_object(p->s, map->mod, vaddr, out);
		} else {
			out->kind = SYM_DATA_FILE;
			out->offset = file_off;
		}
		return 0;
	case SYM_MAP_SPECIAL:
		out->module = strpool__intern(&p->s->pool, map->path);
		out->kind = !strcmp(map->path, "[heap]") ? SYM_DATA_HEAP :
			    !strcmp(map->path, "[stack]") ? SYM_DATA_STACK :
			    !strncmp(map->path, "[anon:", 6) ? SYM_DATA_ANON : SYM_DATA_SPECIAL;
		return 0;
	case SYM_MAP_ANON:
		break;
	}
	/* a file's .bss past the page its data ends in: the anonymous mapping right after the
	 * file's, at the offset that mapping would have gone on at */
	if (prev && prev->kind == SYM_MAP_FILE && prev->perms[3] == 'p' &&
	    data_vaddr(p, prev, addr - prev->start + prev->offset, &vaddr)) {
		out->module = strpool__intern(&p->s->pool, prev->path);
		data_object(p->s, prev->mod, vaddr, out);
		return 0;
	}
	/* glibc maps a thread's stack with its guard below it, inaccessible, a page by default;
	 * an arena of malloc's has its reserve above it instead, up to 64 MiB, which the next
	 * arena's memory may follow */
	out->kind = prev && prev->kind == SYM_MAP_ANON && !strncmp(prev->perms, "---", 3) &&
		    prev->end - prev->start <= THREAD_GUARD_MAX && map->perms[0] == 'r' &&
		    map->perms[1] == 'w' ? SYM_DATA_THREAD_STACK : SYM_DATA_ANON;
	return 0;
}

/* The module of a code mapping holding ret_addr - 1, and ret_addr as an ELF address in it. */
static bool map_ret(struct sym_proc *p, struct sym_map *map, uint64_t ret_addr,
		    struct sym_module **mod, uint64_t *vaddr)
{
	uint64_t file_off;

	if (!map || map->perms[2] != 'x')
		return false;
	if (!map->mod_tried)
		map_module(p, map);
	if (!map->mod)
		return false;
	file_off = ret_addr - 1 - map->start + map->offset;
	if (!sym_module__file_off_to_vaddr(map->mod, file_off, vaddr, NULL))
		return false;
	*vaddr += 1;
	*mod = map->mod;
	return true;
}

/* The module holding the call that ends at ret_addr, and ret_addr as an ELF address in it; the
 * same of the other file whose code was there in an older snapshot (*omod; NULL: none). */
static bool ret_module(struct sym_proc *p, uint64_t ret_addr, struct sym_module **mod,
		       uint64_t *vaddr, struct sym_module **omod, uint64_t *ovaddr, bool *two)
{
	struct sym_proc *other_owner = NULL;
	struct sym_map *map, *other = NULL;

	*omod = NULL;
	/* The call ends right before ret_addr: its last byte decides the mapping. */
	map = ret_addr ? find_map_kept(p, ret_addr - 1, &p, &other, &other_owner) : NULL;
	*two = other != NULL;
	if (!map_ret(p, map, ret_addr, mod, vaddr))
		return false;
	if (other && !map_ret(other_owner, other, ret_addr, omod, ovaddr))
		*omod = NULL;
	return true;
}

/* check(module, vaddr) of the module p maps addr in: -EINVAL without p, -ENOENT in none. An
 * address two files had code at: yes (1) when either file says yes (its frame is named from
 * neither, but the stack goes on through it). */
static int module_check(struct sym_proc *p, uint64_t addr,
			int (*check)(struct sym_module *m, uint64_t vaddr))
{
	struct sym_module *mod, *omod;
	uint64_t vaddr, ovaddr;
	bool two;
	int r;

	if (!p)
		return -EINVAL;
	if (!ret_module(p, addr, &mod, &vaddr, &omod, &ovaddr, &two))
		return -ENOENT;
	r = check(mod, vaddr);
	if (r != 1 && omod && check(omod, ovaddr) == 1)
		r = 1;
	return r;
}

int sym_proc__follows_syscall(struct sym_proc *p, uint64_t ip)
{
	return module_check(p, ip, sym_module__follows_syscall);
}

int sym_proc__called_symbol(struct sym_proc *p, uint64_t ret_addr, char *name, size_t len)
{
	struct sym_module *mod, *omod;
	uint64_t vaddr, ovaddr;
	const char *sym;
	bool two;
	size_t n;
	int err;

	if (!p || !name || !len)
		return -EINVAL;
	name[0] = '\0';
	/* two files' code there: which call it was is not known */
	if (!ret_module(p, ret_addr, &mod, &vaddr, &omod, &ovaddr, &two) || two)
		return -ENOENT;
	err = sym_module__called_symbol(mod, vaddr, &sym);
	if (err)
		return err;
	/* .dynsym names carry no version, but a hand-made file might. */
	n = strcspn(sym, "@");
	if (n >= len) {
		memcpy(name, sym, len - 1);
		name[len - 1] = '\0';
		return -ERANGE;
	}
	memcpy(name, sym, n);
	name[n] = '\0';
	return 0;
}

int sym_proc__follows_call(struct sym_proc *p, uint64_t ret_addr)
{
	return module_check(p, ret_addr, sym_module__follows_call);
}

int symbolizer__resolve_build_id(struct symbolizer *s, const char *build_id, uint64_t file_offset,
				 bool return_addr, struct sym_result *out)
{
	uint64_t off = return_addr && file_offset ? file_offset - 1 : file_offset;
	struct sym_module *m;
	uint64_t vaddr;
	bool exec;

	if (!s || !build_id || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (m = s->modules; m; m = m->next)
		if (m->build_id && strcasecmp(m->build_id, build_id) == 0)
			break;
	if (!m)
		return -ENOENT;
	m = sym_module__best(m);
	out->module = m->name;
	out->build_id = m->build_id;
	out->module_offset = off;
	if (!sym_module__file_off_to_vaddr(m, off, &vaddr, &exec))
		return 0;
	out->mapped = true;
	out->executable = exec;
	out->module_offset = vaddr;
	out->nframes = module_frames(s, m, vaddr, out->frames);
	if (!out->nframes)
		out->nframes = cfi_frame(s, m, vaddr, out->module, out->frames);
	return 0;
}
