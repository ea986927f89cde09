/* Internal interfaces shared by the files of the symbolization module: the parsed form of a
 * maps file, the per-ELF-file module cache, DWARF line/inline lookups, string interning and a
 * small u64-keyed hash map. Nothing here is part of the public API in symbolize.h.
 */
#ifndef EBPROF_SYM_INTERNAL_H
#define EBPROF_SYM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdwfl.h>

#include "symbolize/procmaps.h"
#include "symbolize/symbolize.h"

/* ---- string interning (strpool.c) ---- */

/* Strings handed out in sym_result must outlive the sym_proc that produced them, so anything
 * not owned by libdw/libelf (paths from maps text, demangled names) is interned here. */
struct strpool {
	char **slots;
	size_t cap, count;
};

void strpool__init(struct strpool *sp);
void strpool__fini(struct strpool *sp);
/* Returns the pooled copy of str (len bytes), or NULL on ENOMEM. */
const char *strpool__intern_n(struct strpool *sp, const char *str, size_t len);
const char *strpool__intern(struct strpool *sp, const char *str);

/* A process's perf map (perfmap.c): the names a JIT wrote for its code */
struct sym_perfmap;
struct sym_perfmap *sym_perfmap__new(pid_t pid, const char *root);
void sym_perfmap__free(struct sym_perfmap *m);
/* The name of the code at addr (an interned string), NULL when the map has none (or there is
 * no map) */
const char *sym_perfmap__find(struct sym_perfmap *m, struct strpool *pool, uint64_t addr);

/* ---- u64 -> pointer hash map (strpool.c) ---- */

struct u64map_slot {
	uint64_t key;
	void *val;		/* NULL = empty slot */
};

struct u64map {
	struct u64map_slot *slots;
	size_t cap, count;
};

void *u64map__get(const struct u64map *m, uint64_t key);
/* val must not be NULL. Returns 0 or -ENOMEM. */
int u64map__put(struct u64map *m, uint64_t key, void *val);
/* Frees every value with free() and the table itself. */
void u64map__free_all(struct u64map *m);
/* Frees the table, not the values (owned elsewhere: interned strings). */
void u64map__free(struct u64map *m);

/* ---- maps parsing: procmaps.h ---- */

/* ---- modules (module.c) ---- */

struct unwind_fde;

struct sym_symbol {
	uint64_t start, end;	/* ELF virtual addresses, end exclusive */
	const char *name;	/* raw, owned by libelf via the Dwfl */
	const char *display_name;	/* lazily: sym__display_name(name); NULL = not yet */
	bool sized;		/* end comes from st_size, not from the next symbol */
};

struct sym_segment {
	uint64_t offset, filesz, vaddr, memsz;
	bool exec;
};

/* A GOT slot with a JUMP_SLOT or GLOB_DAT relocation, and the .dynsym name it names. */
struct sym_got_slot {
	uint64_t vaddr;		/* r_offset: ELF virtual address of the slot */
	const char *name;	/* owned by libelf via the Dwfl */
};

struct sym_module {
	struct sym_module *next;
	char *build_id;		/* lowercase hex or NULL */
	const char *name;	/* interned display path of the mapping it was first seen as */
	char *open_path;	/* path used to open the file (may be under /proc/PID/root) */
	char *debuginfo_path;	/* search path handed to dwfl_standard_find_debuginfo */
	/* a foreign root's separate debug file, found and opened when the module was made (its
	 * /proc/PID/root may be gone by the first lookup), and its name; -1 and NULL: none */
	int debug_fd;
	char *debug_file;
	/* its .gnu_debuglink (NULL: none) and that link's CRC: find_debuginfo tells a lookup of
	 * its own debug file from one of a dwz alternate file by it */
	char *debuglink;
	uint32_t debuglink_crc;
	const char *cache_dir;	/* for decompressed debug files (debugcache.c); NULL: none */
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	GElf_Addr bias;		/* Dwfl address = ELF vaddr + bias */
	struct sym_segment *segs;
	size_t nsegs;

	bool syms_loaded;
	struct sym_symbol *syms;
	size_t nsyms;
	bool objs_loaded;	/* data objects (STT_OBJECT), for data addresses: a lock's name */
	struct sym_symbol *objs;
	size_t nobjs;
	bool fdes_loaded;	/* the call frame information's ranges (unwind_fdes), to name
				 * code no symbol covers by its function's start */
	struct unwind_fde *fdes;
	size_t nfdes;

	bool dwarf_failed;	/* no DWARF at all: skip libdw lookups from now on */
	struct u64map frame_cache;	/* vaddr -> struct sym_cached_frames */
	struct u64map cu_index;		/* CU DIE offset -> function range index (dwarf.c) */
	struct u64map qnames;		/* declaration DIE -> a C++ name qualified (dwarf.c) */
	bool cu_ranges_built;		/* dwarf.c: CUs by address, without .debug_aranges */
	struct sym_cu_range *cu_ranges;
	size_t ncu_ranges;

	bool plt_loaded;		/* callsite.c: the PLT sections' ranges */
	uint8_t nplt;
	struct sym_plt_sec {
		uint64_t start, end, entsize;	/* ELF vaddrs; the size of a stub */
	} plt[4];			/* .plt, .plt.sec, .plt.got */
	bool got_loaded;		/* callsite.c */
	struct sym_got_slot *got_slots;	/* sorted by vaddr */
	size_t ngot_slots;
	struct u64map call_cache;	/* return-address vaddr -> callsite.c's cached answer */
	void *image;		/* a module made from memory (the vdso): the bytes, else NULL */
	size_t image_len;
	/* what its own file holds to name code: SYM_RICH_* (a stripped copy of a binary has the
	 * build-id of the full one, not its symbols) */
	unsigned richness;
	/* a module of the same build-id whose file holds more (SYM_RICH_*): its frames are named
	 * from that one (sym_module__best), else NULL */
	struct sym_module *better;
	unsigned refs;		/* mappings of live sym_procs that resolve through it */
	unsigned idle;		/* symbolizer__trim calls that found it unreferenced */

	/* The open part (the Dwfl: the file's descriptor and mapping, its debug file's, libdw's
	 * DWARF; the tables and caches above that point into them) is closed when the
	 * symbolizer's budget of open files is full and this one was used longest ago, and
	 * opened again at its next use (sym_module__open): the fields above without a "closed
	 * with it" stay. The file is known again by its identity, or by build-id. */
	struct symbolizer *s;
	struct sym_module *lru_prev, *lru_next;	/* the open ones, least recently used 1st */
	uint64_t dev, ino, size;	/* the file's identity when first opened (an image: size) */
	int64_t mtime_ns;
	bool gone;		/* closed, and its file could not be opened again: no symbols */
};

#define SYM_RICH_SYMTAB	1	/* .symtab or .gnu_debugdata, beyond .dynsym */
#define SYM_RICH_DWARF	2	/* .debug_info in the file itself */

/* The module to name m's code from: m, or the richest of its build-id's (m->better). */
static inline struct sym_module *sym_module__best(struct sym_module *m)
{
	while (m && m->better)
		m = m->better;
	return m;
}

struct sym_cached_frames {
	uint32_t nframes;
	struct sym_frame frames[];
};

/* File identity, used to find an already-open module without reading the file again. */
struct sym_file_key {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	struct sym_module *mod;	/* NULL: not an ELF file we can use (cached negative) */
};

struct symbolizer {
	struct symbolizer_opts opts;
	char *debug_dir;
	char *cache_dir;	/* owned copy of opts.cache_dir */
	struct sym_module *modules;
	struct sym_file_key *keys;
	size_t nkeys, keys_cap;
	struct strpool pool;
	/* the open modules, least recently used first (sym_module__open) */
	struct sym_module *lru_head, *lru_tail;
	uint64_t open_bytes;	/* the sizes of their files */
	struct symbolizer_stats stats;
};

/* Find or open the module for a file. `open_path` is what we open, `root` is the prefix of a
 * foreign mount namespace ("" for ours) used to also search that namespace's debug directory.
 * A file whose build-id a module has already is that module, unless it holds more than every
 * module of that build-id (SYM_RICH_*: a full binary met after its stripped copy): then a
 * module of its own, which the poorer ones name their code from (->better).
 * Returns NULL (errno set) when the file cannot be opened or is not ELF. */
struct sym_module *sym_module__get(struct symbolizer *s, const char *open_path, const char *root,
				   const char *display);
void sym_module__free(struct sym_module *m);
/* m's open part, opened again if it was closed (the least recently used open modules are
 * closed first when the budget is full; never m itself), and m marked used now: 0, or
 * negative errno when its file cannot be opened again (gone, or another file there now: counted
 * in stats.files_gone once; its frames are offsets). Every use of m->dmod, and of the tables
 * built from it, comes after this, and no other module is opened while they are in use. */
int sym_module__open(struct sym_module *m);
/* The module of an ELF image read out of a process's memory (its vdso): the one made from
 * the same bytes before, else a new one (display: its name). NULL (errno) when the bytes are
 * not ELF. */
struct sym_module *sym_module__get_image(struct symbolizer *s, const void *buf, size_t len,
					 const char *display);
/* The bytes of pid's mapping [start, end), read through /proc/PID/mem (at most 1 MiB): a
 * malloc'd copy, or NULL (errno). */
void *sym_proc_mem__read(pid_t pid, uint64_t start, uint64_t end);

/* ELF virtual address of a file offset via the PT_LOAD segment that holds it; false if none.
 * *exec tells whether that segment is executable (may be NULL). */
bool sym_module__file_off_to_vaddr(const struct sym_module *m, uint64_t file_off,
				   uint64_t *vaddr, bool *exec);

/* Function symbol containing vaddr, or NULL. Builds the sorted table on first use. */
const struct sym_symbol *sym_module__find_symbol(struct sym_module *m, uint64_t vaddr);
/* The range [*start, *end) of the FDE holding vaddr in m's file (its .eh_frame, else its
 * .debug_frame): the function (or the part of one) the code at vaddr is in, when no symbol
 * names it. Builds the sorted table on first use. true, or false when no FDE holds vaddr. */
bool sym_module__fde_range(struct sym_module *m, uint64_t vaddr, uint64_t *start,
			   uint64_t *end);
/* The data object (a sized STT_OBJECT of .symtab, else .dynsym) containing vaddr, or NULL.
 * Builds its sorted table on first use. */
const struct sym_symbol *sym_module__find_object(struct sym_module *m, uint64_t vaddr);
/* ELF virtual address of a file offset as a data address: in a PT_LOAD segment's file part, or
 * past it up to its size in memory (.bss: a mapping's zeroed tail, or the anonymous mapping
 * that follows it, at the offset the file's mapping would have continued at). */
bool sym_module__data_vaddr(const struct sym_module *m, uint64_t file_off, uint64_t *vaddr);

/* ---- call sites (callsite.c) ---- */

/* Name of the function that the call instruction ending at ELF vaddr `ret_vaddr` calls through
 * a PLT-style stub or a GOT slot (x86-64), as in .dynsym: 0 and *name, -ENOENT when it is no
 * such call, -EOPNOTSUPP for a module of another architecture, -ENOMEM. Cached per vaddr. */
int sym_module__called_symbol(struct sym_module *m, uint64_t ret_vaddr, const char **name);
/* The function whose PLT-style stub (in .plt, .plt.sec or .plt.got) holds vaddr, named by the
 * relocation of the GOT slot the stub jumps through (what objdump and gdb call NAME@plt): 0 and
 * *name (the .dynsym name, without @plt); -ENOENT when vaddr is in no such stub (PLT0, the lazy
 * part of an IBT .plt, code outside the PLT sections). */
int sym_module__plt_symbol(struct sym_module *m, uint64_t vaddr, const char **name);
/* Whether vaddr is in .plt, .plt.sec or .plt.got (x86-64) */
bool sym_module__in_plt(struct sym_module *m, uint64_t vaddr);
/* 1 if a call instruction ends right before ret_vaddr, 0 if not, -errno if unreadable. */
int sym_module__follows_call(struct sym_module *m, uint64_t ret_vaddr);
/* 1 if a system call instruction ends right before vaddr, 0 if not, -errno if unreadable. */
int sym_module__follows_syscall(struct sym_module *m, uint64_t vaddr);

/* ---- DWARF (dwarf.c) ---- */

/* Fill frames[] (innermost first) for vaddr from DWARF scopes and the line table. The outermost
 * frame's names are left for the caller to take from the symbol table when it has one.
 * Returns the number of frames, 0 when DWARF does not cover vaddr. */
uint32_t sym_dwarf__frames(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			   struct sym_frame *frames, uint32_t max);

/* ---- demangling (demangle.c) ---- */

/* Demangled form of a raw name, interned; `raw` itself when it is not mangled or demangling is
 * off. NULL only on ENOMEM. */
const char *sym__demangle_interned(struct symbolizer *s, const char *raw);
/* Name to show for a symbol-table entry: without an @VERSION suffix, demangled. Interned
 * unless it is `raw` itself. */
const char *sym__display_name(struct symbolizer *s, const char *raw);

/* cache.c: files kept between runs under sym_cache_dir(). */
struct stat;
/* A read-only fd of path if it is a regular file of ours that no one else can read or write
 * (*st filled), else -1. */
int sym_cache__open(const char *path, struct stat *st);
/* The whole of such a file (NUL-terminated, malloc'd; *len its size), or NULL. */
char *sym_cache__read(const char *path, size_t *len);
/* A new private temporary file beside path (its directory, and the one above, made 0700 if
 * missing and checked to be ours and not writable by others): fd, *tmp its name; -1 if not. */
int sym_cache__create(const char *path, char **tmp);
/* Close fd; if ok, rename *tmp to path (0), else (or if that fails) remove it (-1). Frees tmp. */
int sym_cache__commit(int fd, char *tmp, const char *path, bool ok);
/* A fast 64-bit checksum of a cache file's bytes (not cryptographic: it finds damage). */
uint64_t sym_cache__hash(const void *p, size_t len);
/* Room for `need` more bytes in cache directory dir, whose files (those ending in suffix) may
 * hold max_total bytes in all: the least recently used removed (oldest modification time;
 * sym_cache__used marks a hit) until they fit. Best effort. */
void sym_cache__make_room(const char *dir, const char *suffix, uint64_t need,
			  uint64_t max_total);
/* Mark a cache file used now (its modification time), for sym_cache__make_room. */
void sym_cache__used(const char *path);

/* debugcache.c: an fd of the decompressed copy, under cache_dir, of the debug file `orig`
 * whose build-id is `bid` (lowercase hex), made now if missing or not whole; -1: none (orig
 * has no compressed sections, another build-id, or the copy cannot be made). */
int sym_debug_cache__open(const char *cache_dir, const char *orig, const char *bid);
/* The lowercase hex build-id of elf (malloc'ed), or NULL (debugcache.c). */
char *sym__build_id_hex(Elf *elf);
/* The separate debug file of build-id hex under debug_dir (NULL: /usr/lib/debug),
 * DIR/.build-id/xx/rest.debug, opened read-only; -1 if none (unwind.c). */
int sym__open_debug_file(const char *debug_dir, const char *hex);

#endif
