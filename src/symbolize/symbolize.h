/* Symbolization facade: user addresses of a process (through its /proc/PID/maps) and kernel
 * addresses (through /proc/kallsyms) to module, function, file:line and inline frames.
 *
 * ELF symbol tables (.symtab, .dynsym, .gnu_debugdata) are read once per module into sorted
 * tables and cached by build-id (or device+inode+size+mtime when there is none); separate debug
 * files are found by build-id under /usr/lib/debug and by .gnu_debuglink; line and inline
 * information come from libdw and are cached per (module, offset). C++ and Rust names are
 * demangled with libiberty. Call sites: which name a PLT or GOT call instruction calls, to tell
 * apart aliases sharing one address (callsite.c). No libbpf here: unit-testable without root.
 *
 * Not thread-safe: one symbolizer (and the sym_procs made from it) per thread.
 */
#ifndef EBPROF_SYMBOLIZE_H
#define EBPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SYM_MAX_INLINE 16

struct symbolizer;
struct sym_proc;

struct symbolizer_opts {
	const char *debug_dir;	/* default "/usr/lib/debug" */
	bool no_demangle;
	bool no_lines;		/* skip DWARF line/inline lookups (faster) */
	/* Where debug files with compressed DWARF are kept decompressed (libdw inflates all of a
	 * file's DWARF before its first lookup: ~40 ms for glibc's), by build-id; NULL: not. */
	const char *cache_dir;
	/* At most this many ELF files open for symbols at once (0: SYM_MAX_OPEN_FILES), and
	 * files of at most this many bytes in all (0: SYM_MAX_OPEN_BYTES), one file always: past
	 * either, the file used longest ago is closed (its descriptors, its mapping, libdw's
	 * DWARF and the tables built from them), and opened again when an address in it is
	 * named, with the same answers. A process's snapshots keep their modules known, not
	 * open. */
	unsigned max_open_files;
	uint64_t max_open_bytes;
};

#define SYM_MAX_OPEN_FILES	256
#define SYM_MAX_OPEN_BYTES	(1ull << 30)

/* What the symbolizer's files cost: for -v and for the drop of frames whose file was closed
 * and could not be opened again. */
struct symbolizer_stats {
	uint64_t files_open;		/* open now */
	uint64_t files_open_max;	/* the most open at once */
	uint64_t bytes_open;		/* the sizes of the files open now */
	uint64_t opens;			/* files opened, the first time or again */
	uint64_t closes;		/* closed to stay within the budget */
	uint64_t reopens;		/* opened again after such a close */
	/* closed to stay within the budget, and at their next use gone (deleted, or another
	 * file at the path, or the process whose root or map_files reached it ended): their
	 * frames are offsets in the file, counted as the symbol_file_gone drop */
	uint64_t files_gone;
};

/* ebprof's cache directory: $EBPROF_CACHE_DIR (an absolute path; set to anything else, e.g.
 * empty: no cache), else for root /var/cache/ebprof, for others $XDG_CACHE_HOME/ebprof or
 * ~/.cache/ebprof. NULL: none. */
const char *sym_cache_dir(void);

struct sym_frame {
	const char *function;	/* demangled name, or NULL if unknown */
	const char *system_name;/* name as in the symbol table, or NULL */
	const char *file;	/* source file, or NULL */
	int line;		/* 0 if unknown */
	/* No symbol covers the address, an FDE of the file's call frame information does: the
	 * function is named after that range's start, "MODULE!sub_HEX" (MODULE: the base name of
	 * sym_result.module; HEX: the ELF virtual address, as module_offset), the only frame */
	bool cfi_named;
};

struct sym_result {
	const char *module;	/* path of the mapped object ("[vdso]", "[anon]"...) or NULL */
	const char *build_id;	/* lowercase hex or NULL */
	uint64_t map_start, map_end, map_offset;
	/* ELF virtual address inside the module (what addr2line takes) of the address looked up,
	 * i.e. addr - 1 for a return address. When the module cannot be read, the file offset. */
	uint64_t module_offset;
	bool mapped;		/* the address lies in a mapping of the process */
	bool executable;	/* ... and that mapping is executable */
	/* Not NULL: the snapshots kept of the process had another file's code at the address too
	 * (a library closed, replaced and opened again at the same place; its path, which may be
	 * module's). Which one the address ran is not known (the kernel counts addresses without
	 * time), so nframes is 0 and module_offset is the file offset in module's file. */
	const char *other_module;
	uint32_t nframes;	/* 0 = no symbol; else innermost inline frame first, outermost last */
	struct sym_frame frames[SYM_MAX_INLINE];
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);
/* Its counters so far (zeros without s). */
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* Snapshot the mappings of a live process (/proc/PID/maps; files opened through
 * /proc/PID/root so other mount namespaces work). NULL and errno on failure. Files are opened
 * lazily, on the first address resolved in each mapping: resolve while the process still runs
 * (or the files still exist). Modules are shared by build-id across all sym_procs of one
 * symbolizer. Mappings marked "(deleted)" are read through /proc/PID/map_files (needs
 * privileges) and otherwise give a module name without symbols. */
struct sym_proc *symbolizer__load_pid(struct symbolizer *s, pid_t pid);
/* The same from maps_text, the text of /proc/PID/maps as the caller just read it (NULL: read
 * it now): a caller that looked at the text (hashed it, loaded unwind tables from it) gets the
 * snapshot of that same text, not of a second read a mapping may have come or gone between. */
struct sym_proc *symbolizer__load_pid_maps(struct symbolizer *s, pid_t pid,
					   const char *maps_text);
/* Same from the text of a maps file; `root` is prefixed to every path ("" or NULL for none). */
struct sym_proc *symbolizer__load_maps(struct symbolizer *s, const char *maps_text,
				       const char *root);
/* Frees p and the earlier snapshots it keeps. Accepts NULL. */
void sym_proc__free(struct sym_proc *p);
/* A number no other sym_proc of this process (ebprof) has had or will have, never 0 (0 for
 * NULL): what a cache of p's answers is keyed by, which a freed p's reused address cannot be. */
uint64_t sym_proc__serial(const struct sym_proc *p);
/* For a long run (ebprof agent): free the modules (an ELF file's symbols, DWARF index and
 * caches) that no live sym_proc's mapping has used for `keep` calls in a row, so that the
 * symbolizer holds the code that runs rather than every file ever seen. Results handed out
 * earlier that point into a freed module (function and file names) are invalid from then on:
 * call it when none is held (the profile keeps copies). Modules found only by build id
 * (symbolizer__resolve_build_id) count as unused. The number freed. */
unsigned symbolizer__trim(struct symbolizer *s, unsigned keep);
/* p, a new snapshot of a process, keeps prev, its earlier one (and what prev kept), up to max
 * snapshots in all, the oldest freed first: an address in none of p's mappings resolves in the
 * newest earlier snapshot that has it (a library the process has unloaded since), so its
 * samples keep their frames. p takes prev over. */
void sym_proc__keep_previous(struct sym_proc *p, struct sym_proc *prev, unsigned int max);
/* Whether p, a process's newest snapshot, maps code where an earlier snapshot it keeps had
 * other code (a library closed, replaced by another file and opened again at the same place):
 * addresses there resolve as two files' (sym_result.other_module) from then on. */
bool sym_proc__replaces_code(struct sym_proc *p);
/* Free the earlier snapshots p keeps, for a caller that has read out every address counted
 * before p was taken: those counted since are named from p (and later snapshots) alone, code
 * replaced since an earlier one no longer ambiguous. p's serial changes. */
void sym_proc__forget_previous(struct sym_proc *p);
/* Open now, instead of on first use, the module of every executable file mapping, so that
 * later lookups (including symbolizer__resolve_build_id) no longer need the process or its
 * /proc/PID/root and map_files. Returns how many mappings have a readable module. */
int sym_proc__load_modules(struct sym_proc *p);

/* pid's [vdso] mapping [start, end), read out of its memory, in a memfd (for the unwinder's
 * look at its .eh_frame); -1 (errno) when it cannot be read (the process is gone). A
 * snapshot of a live process names its [vdso] frames from the same bytes, read when it is
 * taken. */
int sym_vdso__memfd(pid_t pid, uint64_t start, uint64_t end);

/* Resolve one address. `return_addr`: the address is a return address (look up at addr - 1).
 * Through p's earlier snapshots too (sym_proc__keep_previous); an address two of them map with
 * different code is named from neither (out->other_module). sym_proc__follows_call and
 * sym_proc__follows_syscall answer yes there when either file's bytes do;
 * sym_proc__called_symbol answers -ENOENT.
 * Strings in *out stay valid until symbolizer__free (or symbolizer__trim frees their
 * module). Returns 0, or -ENOENT when the address is
 * in no mapping (out->mapped false). */
int sym_proc__resolve(struct sym_proc *p, uint64_t addr, bool return_addr,
		      struct sym_result *out);

/* What a data address of a process is: the memory it lies in and, in an ELF file's image, the
 * data object holding it. For naming a lock by where it lives (a futex's address). */
enum sym_data_kind {
	SYM_DATA_UNMAPPED,	/* in no mapping of the snapshot (or its earlier ones) */
	SYM_DATA_MODULE,	/* an ELF file's image: its .data, .bss (symbol, when one holds it) */
	SYM_DATA_FILE,		/* a mapping of another file (a process-shared lock's, in shared
				 * memory): offset is the file offset */
	SYM_DATA_HEAP,		/* [heap] */
	SYM_DATA_STACK,		/* [stack]: the main thread's */
	SYM_DATA_THREAD_STACK,	/* anonymous memory laid out as a thread's stack is (right above
				 * an inaccessible guard mapping of at most 1 MiB: glibc's
				 * pthread stacks, which also hold the thread's descriptor and
				 * static TLS) */
	SYM_DATA_ANON,		/* other anonymous memory ([anon], or [anon:NAME] as named) */
	SYM_DATA_SPECIAL,	/* [vvar], [vdso], ... */
};

struct sym_data {
	enum sym_data_kind kind;
	/* the mapping's path or name ("[heap]", "[anon:NAME]"); the ELF file's for .bss in an
	 * anonymous mapping; NULL for anonymous memory without a name */
	const char *module;
	/* SYM_DATA_MODULE: the data object (a sized STT_OBJECT) holding the address, or NULL */
	const char *symbol;
	/* symbol: the address's offset in it; SYM_DATA_MODULE without one: the ELF virtual
	 * address; SYM_DATA_FILE: the offset in the file; else the offset in the mapping */
	uint64_t offset;
	uint64_t map_start, map_end;
	bool shared;		/* a shared mapping (MAP_SHARED: perms 's') */
};

/* Resolve a data address of p's. Files are opened only when regular (a device's mapping is
 * not). Strings in *out live as sym_proc__resolve's do. 0, -ENOENT when addr is in no mapping
 * (out->kind SYM_DATA_UNMAPPED), -EINVAL without p or out. */
int sym_proc__resolve_data(struct sym_proc *p, uint64_t addr, struct sym_data *out);

/* The name of the function that the call instruction ending at `ret_addr` (a return address
 * in process p) calls through the PLT or the GOT: the symbol of the dynamic relocation of
 * the GOT slot used. Writes it (without @VERSION) to name. Returns 0, -ENOENT when the
 * instruction is not such a call (a direct call to a local function, an indirect call
 * through a register, no relocation), or another negative errno.
 *
 * This tells apart names that share one address, such as glibc 2.36's aligned_alloc and
 * memalign. x86-64 only (-EOPNOTSUPP for other modules). The caller's bytes are read from its
 * ELF file through the module cache, not from process memory, so it works after the process
 * has exited. Recognized: call rel32 to a stub that starts with jmp *disp32(%rip) (.plt,
 * .plt.sec, .plt.got; after endbr64, with or without a bnd prefix), and call *disp32(%rip)
 * (-fno-plt); the slot must carry an R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT relocation
 * against a .dynsym symbol. -ENOENT also when ret_addr is in no executable mapping or its file
 * cannot be read; -ERANGE when the name does not fit in len bytes (name holds a truncated
 * copy); -EINVAL without p, name or len. Answers are cached per (module, address). */
/* Whether a call instruction ends right before ret_addr, read from the module's file: a real
 * return address always follows one, a value a frame-pointer walk picked up from garbage
 * usually does not. 1 yes, 0 no, negative errno when the bytes cannot be read. */
int sym_proc__follows_call(struct sym_proc *p, uint64_t ret_addr);
/* Whether a system call instruction (syscall, sysenter, int $0x80) ends right before ip, read
 * as sym_proc__follows_call reads: a task in a system call has its ip there, unless the kernel
 * moved it (a signal handler's entry, a new program's entry at exec, a restarted call moved
 * back onto its instruction). 1 yes, 0 no, negative errno when the bytes cannot be read. */
int sym_proc__follows_syscall(struct sym_proc *p, uint64_t ip);

int sym_proc__called_symbol(struct sym_proc *p, uint64_t ret_addr, char *name, size_t len);

/* Resolve a (build-id, file offset) pair, as BPF_F_USER_BUILD_ID stacks give them, against
 * the modules this symbolizer has already opened (through any sym_proc, so snapshot and resolve
 * a process while it runs and its build-id stacks stay resolvable after it exits). The result
 * has no map_* fields; `mapped` means the offset lies in a PT_LOAD segment of the file. Returns
 * 0, or -ENOENT when no module with that build-id (hex, any case) is known. Debug files alone
 * cannot translate file offsets (their program headers carry no file layout), so they are not
 * searched here. */
int symbolizer__resolve_build_id(struct symbolizer *s, const char *build_id, uint64_t file_offset,
				 bool return_addr, struct sym_result *out);

/* Look up a symbol's file offset in an ELF file, for attaching uprobes. Considers .symtab and
 * .dynsym, then (a name they lack) the .symtab of the object's debug file by build-id under
 * /usr/lib/debug; returns 0 and the offset, or -ENOENT / negative errno. Names match with or without
 * an @VERSION / @@VERSION suffix (exact name, then default version, then hidden version); a
 * plain STT_FUNC is preferred over an STT_GNU_IFUNC, whose offset is that of its resolver:
 * when the best match is an IFUNC, -EOPNOTSUPP, with *offset set (glibc's strlen, memcpy). A
 * C++ name as written in the source ("ns::Acc<long>::run", or with its parameter list
 * "ns::f(int)") matches the demangled form of a mangled symbol. The first function of the
 * name; sym_elf_symbol_offsets gives every one. */
int sym_elf_symbol_offset(const char *path, const char *name, uint64_t *offset);
/* Every function an exact name names (static functions of one name in two source files, a C++
 * name's overloads written without parameters), at most max, their offsets distinct; *n of
 * them. Errors as sym_elf_symbol_offset's. */
#define SYM_ELF_MAX_FUNCS 16
int sym_elf_symbol_offsets(const char *path, const char *name, uint64_t *offsets, size_t max,
			   size_t *n);
/* The function in path's symbol tables whose name (without @VERSION) is closest to name, for a
 * "did you mean": within an edit distance of 2, or a fifth of name's length if more. 0 and its
 * name in out, -ENOENT when none is that close (or name itself is there), negative errno. */
int sym_elf_close_function(const char *path, const char *name, char *out, size_t len);

/* Demangle a C++ (_Z...) or Rust (_ZN...h<hash>E legacy, _R... v0) name with libiberty.
 * Returns a malloc'd string for the caller to free, or NULL if the name is not mangled (or
 * does not parse). */
char *sym_demangle(const char *name);

/* Kernel symbols from /proc/kallsyms (path overridable for tests; NULL = /proc/kallsyms).
 * Only text symbols (t, T, w, W) are kept, each with its region: the core kernel, a module
 * ("addr t name\t[module]" lines), or BPF programs ("bpf_prog_<tag>_<name>\t[bpf]"). Kernel
 * symbols carry no size, so where a region ends is taken from what can be known: the core
 * kernel's text ends at _etext (init text at _einittext), a module's at the size
 * /proc/modules gives it. NULL and errno on failure; EPERM when every address reads as 0
 * (kptr_restrict hides them from this user). */
struct ksyms;
struct ksyms *ksyms__load(const char *path);
/* The same with the module list read from `modules` (the format of /proc/modules: "name size
 * refs deps state 0xaddr"); NULL: no module bounds (a module's last function then extends to
 * the next symbol). An unreadable modules file is not an error. */
struct ksyms *ksyms__load_paths(const char *kallsyms, const char *modules);
void ksyms__free(struct ksyms *k);

/* The same through a cache of the core kernel's symbols (reading /proc/kallsyms costs ~50 ms
 * of kernel CPU; the core kernel's part is most of it and does not change until the next
 * boot). `cache` is the file (NULL: none); it is used when it was written for the same boot id
 * (read from `boot_id`), kernel release and first line of `kallsyms` whose address is not 0,
 * is owned by this user and private, and is whole (size, layout and checksum); otherwise
 * `kallsyms` is read and the
 * cache (re)written, atomically, its directory made if missing (mode 0700). A table from the
 * cache answers for the core kernel's text; any other address (a module, a BPF program, a
 * trampoline) makes it read the whole `kallsyms` then, once. Lookups answer what
 * ksyms__load_paths' table would. *from says where the table came from. */
enum ksyms_from { KSYMS_FROM_KALLSYMS, KSYMS_FROM_CACHE };
struct ksyms *ksyms__load_cached(const char *kallsyms, const char *modules, const char *boot_id,
				 const char *cache, enum ksyms_from *from);
/* The cache's path: sym_cache_dir()/kallsyms, NULL: none. */
const char *ksyms__cache_path(void);
/* This system's: /proc/kallsyms, /proc/modules and the boot id, through ksyms__cache_path(). */
struct ksyms *ksyms__load_system(enum ksyms_from *from);

/* What a kernel address is. */
struct ksym_info {
	const char *name;	/* function containing the address, NULL if unknown */
	uint64_t offset;	/* addr - the function's address */
	/* NULL: the core kernel; "bpf": a BPF program; else the module's name */
	const char *module;
	uint64_t start, end;	/* the region's bounds [start, end), as far as they are known */
};

/* Resolve addr: 0 with info->name set, or -ENOENT when no function can be named. Then
 * info->module and the bounds still say which region it is in when that is known (an address
 * inside a module's bounds, but below its first symbol), else info->start == info->end == 0
 * (below every symbol, or past the end of the text it follows). */
int ksyms__lookup(const struct ksyms *k, uint64_t addr, struct ksym_info *info);
/* The bounds of the core kernel's text as ksyms__lookup gives them for it ([0, 0) without k
 * or symbols), for kernel addresses that resolve to nothing. */
void ksyms__core_bounds(const struct ksyms *k, uint64_t *start, uint64_t *end);
/* Function containing addr (the closest text symbol at or below it, within the text of its
 * region) and the offset into it; NULL if it is unknown. */
const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset);
/* The same, also giving the region: *module NULL for the core kernel, "bpf" for a BPF
 * program, else the module's name (also set when the function is not known, see lookup). */
const char *ksyms__resolve_mod(const struct ksyms *k, uint64_t addr, uint64_t *offset,
			       const char **module);

/* Kernel data symbols (tasklist_lock) from /proc/kallsyms (path; NULL = /proc/kallsyms): the
 * core kernel's data, bss and read-only data, for naming kernel objects such as locks by
 * address. NULL and errno on failure. */
struct kdata;
struct kdata *kdata__load(const char *path);
void kdata__free(struct kdata *k);
/* How many data symbols k holds: 0 when the kernel lists none (no CONFIG_KALLSYMS_ALL). */
size_t kdata__count(const struct kdata *k);
/* The data symbol at or below addr and the offset into it, when addr lies in the kernel
 * image's data (from its lowest data symbol to _end); NULL otherwise (the heap, a module). */
const char *kdata__resolve(const struct kdata *k, uint64_t addr, uint64_t *offset);

#endif
