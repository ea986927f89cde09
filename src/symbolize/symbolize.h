/* Symbolization facade: user addresses of a process (through its /proc/PID/maps) and kernel
 * addresses (through /proc/kallsyms) to module, function, file:line and inline frames.
 *
 * ELF symbol tables (.symtab, .dynsym, .gnu_debugdata) are read once per module into sorted
 * tables and cached by build-id (or path+size+mtime when there is none); separate debug files
 * are found by build-id under /usr/lib/debug and by .gnu_debuglink; line and inline information
 * come from libdw and are cached per (module, offset). C++ and Rust names are demangled with
 * libiberty. No libbpf here: unit-testable without root.
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
};

struct sym_frame {
	const char *function;	/* demangled name, or NULL if unknown */
	const char *system_name;/* name as in the symbol table, or NULL */
	const char *file;	/* source file, or NULL */
	int line;		/* 0 if unknown */
};

struct sym_result {
	const char *module;	/* path of the mapped object ("[vdso]", "[anon]"...) or NULL */
	const char *build_id;	/* lowercase hex or NULL */
	uint64_t map_start, map_end, map_offset;
	uint64_t module_offset;	/* ELF virtual address inside the module (what addr2line takes) */
	bool mapped;		/* the address lies in a mapping of the process */
	bool executable;	/* ... and that mapping is executable */
	uint32_t nframes;	/* 0 = no symbol; else innermost inline frame first, outermost last */
	struct sym_frame frames[SYM_MAX_INLINE];
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/* Snapshot the mappings of a live process (/proc/PID/maps; files opened through
 * /proc/PID/root so other mount namespaces work). NULL and errno on failure. */
struct sym_proc *symbolizer__load_pid(struct symbolizer *s, pid_t pid);
/* Same from the text of a maps file; `root` is prefixed to every path ("" or NULL for none). */
struct sym_proc *symbolizer__load_maps(struct symbolizer *s, const char *maps_text,
				       const char *root);
void sym_proc__free(struct sym_proc *p);

/* Resolve one address. `return_addr`: the address is a return address (look up at addr - 1).
 * Strings in *out stay valid until symbolizer__free. Returns 0, or -ENOENT when the address is
 * in no mapping (out->mapped false). */
int sym_proc__resolve(struct sym_proc *p, uint64_t addr, bool return_addr,
		      struct sym_result *out);

/* Look up a symbol's file offset in an ELF file, for attaching uprobes. Considers .symtab and
 * .dynsym; returns 0 and the offset, or -ENOENT / negative errno. */
int sym_elf_symbol_offset(const char *path, const char *name, uint64_t *offset);

/* Kernel symbols from /proc/kallsyms (path overridable for tests). */
struct ksyms;
struct ksyms *ksyms__load(const char *path);
void ksyms__free(struct ksyms *k);
/* Function containing addr, and the offset into it; NULL if none. */
const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset);

#endif
