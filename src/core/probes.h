/* Allocator discovery in a process and uprobe attachment to it. */
#ifndef EBPROF_PROBES_H
#define EBPROF_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "abi/mem.h"

#define ALLOC_MAX_OBJS	 6	/* objects probed in one process: executable, preload, allocator,
				 * libstdc++, libc, and one spare */
#define ALLOC_MAX_PROBES 64	/* distinct probe points in one object */

/* One object serving some of the traced functions, with deduplicated probe points. */
struct alloc_obj {
	char path[PATH_MAX];		/* as in the target's /proc/PID/maps */
	char open_path[PATH_MAX];	/* /proc/PID/root/... : the same inode from our namespace */
	const char *kind;		/* "glibc", "jemalloc", "tcmalloc", "mimalloc", "static",
					 * "libstdc++", "custom" */
	uint32_t nprobes;
	unsigned long offsets[ALLOC_MAX_PROBES];	/* file offsets of the probes (placement.c) */
	unsigned long entries[ALLOC_MAX_PROBES];	/* of the functions, one per distinct address */
	char reasons[ALLOC_MAX_PROBES][128];		/* where each probe went and why */
	uint64_t cookies[ALLOC_MAX_PROBES];	/* enum mem_fn | MEM_COOKIE_* flags */
	uint32_t nret;				/* probes with a return probe */
	unsigned long ret_offsets[ALLOC_MAX_PROBES];
	uint64_t ret_cookies[ALLOC_MAX_PROBES];
};

/* What serves a process's malloc family and C++ operators: one or more objects, each symbol
 * from the object the dynamic linker would bind it to. */
struct alloc_lib {
	char path[PATH_MAX];		/* the object serving malloc */
	char open_path[PATH_MAX];
	const char *kind;		/* its kind: the process's allocator */
	uint32_t nobjs;
	struct alloc_obj objs[ALLOC_MAX_OBJS];
	uint32_t nprobes;		/* over every object */
	char aliases[512];		/* "aligned_alloc=memalign" style note, or "" */
	/* bit a of alias_mask[fn]: a probe counting as fn is also the entry point of a */
	uint32_t alias_mask[MEM_FN__COUNT];
};

extern const char *const mem_fn_names[MEM_FN__COUNT];

/* The free-like functions (bit per enum mem_fn): entry probes only, no return probe. */
#define PROBES_FREE_FNS ((1ULL << MEM_FN_FREE) | (1ULL << MEM_FN_OPERATOR_DELETE) |	\
			 (1ULL << MEM_FN_OPERATOR_DELETE_ARRAY) | (1ULL << MEM_FN_DALLOCX) |	\
			 (1ULL << MEM_FN_SDALLOCX))

/* Overrides of detection, for every later probes__find_allocator (the CLI sets them once). */
struct probes_opts {
	const char *allocator;	/* glibc|jemalloc|tcmalloc|mimalloc|static: that kind serves */
	const char *lib;	/* this object (path or file name as mapped) serves */
	const char *prefix;	/* symbol prefix of the C functions: je_ makes je_malloc, ... */
};
void probes__configure(const struct probes_opts *opts);
/* A sentence saying why the last probes__find_allocator failed, or "". */
const char *probes__last_error(void);
/* Whether name is one of the --allocator kinds. */
bool probes__valid_kind(const char *name);

/* The traced function a symbol name stands for (mangled C++ operators too; the configured
 * prefix applies to the C names), or -1. */
int probes__fn_of_symbol(const char *name);

/* Find the allocator mapped into pid. 0; -ENOENT when none is mapped (yet: a dynamically linked
 * program before its libc is mapped); -ENOPKG when the options name an allocator, library or
 * prefix that is not there (probes__last_error says what); -ESRCH when the process is gone, or
 * another negative errno. */
int probes__find_allocator(pid_t pid, struct alloc_lib *lib);

/* The same choice over files of this namespace, in map order (unit tests): paths[exe_idx] is
 * the executable (-1: none), preload[i] marks LD_PRELOADed ones (NULL: none). */
int probes__choose_files(const char *const *paths, const bool *preload, int n, int exe_idx,
			 struct alloc_lib *lib);

struct probe_links {
	int entry_fd[ALLOC_MAX_OBJS];
	int exit_fd[ALLOC_MAX_OBJS];
	uint32_t n;
};

/* Attach the entry and return programs to every probe point of lib, for pid only.
 * Returns 0 or a negative errno; nothing is left attached on failure. */
/* From the kernel UAPI of 6.6+ (the build headers are older): a program's expected attach type
 * for probes__link_uprobe_multi */
#define EBPROF_BPF_TRACE_UPROBE_MULTI	48

/* One uprobe_multi link of prog_fd on cnt offsets of the file at path (cookies: NULL or cnt),
 * for pid alone (0: every process), ret: return probes. The link's fd, or a negative errno. */
int probes__link_uprobe_multi(int prog_fd, const char *path, const unsigned long *offsets,
			      const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret);
int probes__attach(int entry_prog_fd, int exit_prog_fd, pid_t pid, const struct alloc_lib *lib,
		   struct probe_links *links);
/* Attach only the entry program, to every probe point of lib whose function is not in
 * skip_fns (a bit per enum mem_fn), for pid only (--alloc-only: no return probes). */
int probes__attach_entries(int entry_prog_fd, pid_t pid, const struct alloc_lib *lib,
			   uint64_t skip_fns, struct probe_links *links);
void probes__detach(struct probe_links *links);

#endif
