/* Unwind tables: an ELF object's call frame information (.eh_frame, or .debug_frame, also from
 * a separate debug file found by build-id) read with libdw into a sorted table of rows (CFA
 * rule, where the return address and rbp are saved: abi/unwind.h), for the BPF unwinder. Rows
 * that repeat their predecessor's rule are merged. No libbpf here. */
#ifndef EBPROF_SYMBOLIZE_UNWIND_H
#define EBPROF_SYMBOLIZE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

#include "abi/unwind.h"

#define UNWIND_MAX_SEGS 8

/* A table's file in the cache directory: unwind/BUILD-ID UNWIND_CACHE_SUFFIX. The format's
 * number is in the name (and the header's magic): two ebprof versions with other formats
 * each keep their own file instead of rebuilding the other's at every run. */
#define UNWIND_CACHE_FORMAT "6"
#define UNWIND_CACHE_SUFFIX ".v" UNWIND_CACHE_FORMAT ".rows"
/* What the unwind directory's tables (every format's) may take in all: past it, those used
 * longest ago are removed (sym_cache__make_room) */
#define UNWIND_CACHE_MAX_TOTAL (512ULL << 20)

struct unwind_table {
	struct unwind_row *rows;	/* sorted by pc */
	uint32_t nrows;
	const char *source;		/* ".eh_frame", ".debug_frame", ... (static) */
	char build_id[41];		/* lowercase hex, "" when none */
	bool cached;			/* the rows came from the cache */
	/* the executable PT_LOAD segments, to find a mapping's load bias */
	uint32_t nsegs;
	struct { uint64_t offset, vaddr, filesz; } segs[UNWIND_MAX_SEGS];
};

/* Build the table of the ELF file at path. debug_dir: where separate debug files are looked for
 * by build-id (NULL: /usr/lib/debug). cache_dir: where tables are kept between runs by build-id
 * (sym_cache_dir(); NULL: not), read from there when whole. 0, or -1 with a reason (a sentence
 * part, static) in *why: no table (the caller walks frame pointers there). */
int unwind_table__build(const char *path, const char *debug_dir, const char *cache_dir,
			struct unwind_table *t, const char **why);
/* The same from the file open at fd (left open): a file read through the descriptor a caller
 * opened is the one it asked about, whatever happens to its path meanwhile. -1 only for what
 * the file holds (or out of memory), never because it could not be opened. */
int unwind_table__build_fd(int fd, const char *debug_dir, const char *cache_dir,
			   struct unwind_table *t, const char **why);
void unwind_table__free(struct unwind_table *t);

/* The row whose rule holds at pc (an ELF virtual address), NULL before the first. */
const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t pc);

/* The load bias of a mapping of the table's file at start with file offset pgoff (address -
 * bias = ELF virtual address); false when no executable segment holds pgoff. */
bool unwind_table__bias(const struct unwind_table *t, uint64_t start, uint64_t pgoff,
			uint64_t *bias);

/* The libraries the ELF file at path needs (DT_NEEDED), found as ld.so finds them in the usual
 * places: DT_RPATH (without DT_RUNPATH), DT_RUNPATH ($ORIGIN: real_path's directory, or
 * path's when NULL), then Debian's x86-64 library directories (not LD_LIBRARY_PATH, not
 * ld.so.conf's others): paths that exist into *out (n of them; each and the array freed by the
 * caller). A guess the dynamic linker may not share: only used to have tables ready. 0, or -1
 * when the file cannot be read as ELF. */
int unwind_needed(const char *path, const char *real_path, char ***out, size_t *n);

/* The libraries ld.so preloads into a process, as it finds them: LD_PRELOAD in its environment
 * (env: len bytes of NUL-terminated "NAME=value" strings, as /proc/PID/environ) and the
 * contents of /etc/ld.so.preload (file, NULL: none), names separated by spaces or colons (the
 * file's by any white space too). A name with a '/' is a path (relative ones from cwd); any
 * other is looked for in LD_LIBRARY_PATH's directories, then Debian's (as unwind_needed).
 * Paths that exist into *out (n of them; each and the array freed by the caller). 0, or
 * -ENOMEM. */
int unwind_preloads(const char *env, size_t len, const char *file, const char *cwd,
		    char ***out, size_t *n);

/* One FDE's range of code, [start, end) as ELF virtual addresses: one function (or one part
 * of one: a .cold part has its own), whatever symbols the file keeps. */
struct unwind_fde {
	uint64_t start, end;
};

/* The FDEs of the ELF file elf (libelf's, left open) with a range, from its .eh_frame, else its
 * .debug_frame (*source: which, static), sorted by start: *out (n of them, freed by the
 * caller). The same walk of the call frame information as the tables' (without
 * .eh_frame_hdr); what the symbolizer names code no symbol covers by. 0, or -1 when the file
 * has no FDE with a range (or out of memory). */
int unwind_fdes(Elf *elf, struct unwind_fde **out, size_t *n, const char **source);

/* The same rules (everything but pc) */
static inline bool unwind_row__same(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa == b->cfa && a->rbp == b->rbp && a->rbx == b->rbx &&
	       a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

#endif
