/* Allocator discovery in a process and uprobe attachment to it. */
#ifndef EBPROF_PROBES_H
#define EBPROF_PROBES_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include "abi/mem.h"

/* The object serving a process's malloc family, with deduplicated probe points. */
struct alloc_lib {
	char path[PATH_MAX];		/* as in the target's /proc/PID/maps */
	char open_path[PATH_MAX];	/* /proc/PID/root/... : the same inode from our namespace */
	const char *kind;		/* "glibc", "static" */
	uint32_t nprobes;
	unsigned long offsets[MEM_FN__COUNT];	/* file offsets, one per distinct address */
	uint64_t cookies[MEM_FN__COUNT];	/* enum mem_fn for each */
	uint32_t nret;				/* the first nret probes need a return probe */
	unsigned long ret_offsets[MEM_FN__COUNT];
	uint64_t ret_cookies[MEM_FN__COUNT];
	char aliases[256];		/* "aligned_alloc=memalign" style note, or "" */
	int8_t alias_of[MEM_FN__COUNT];	/* the probed function an unprobed alias shares, or -1 */
};

extern const char *const mem_fn_names[MEM_FN__COUNT];

/* Find the allocator mapped into pid. 0, -ENOENT when none is mapped (yet), -ESRCH when the
 * process is gone, or another negative errno. */
int probes__find_allocator(pid_t pid, struct alloc_lib *lib);

struct probe_links {
	int entry_fd;
	int exit_fd;
};

/* Attach the entry and return programs to every probe point of lib, for pid only.
 * Returns 0 or a negative errno; nothing is left attached on failure. */
int probes__attach(int entry_prog_fd, int exit_prog_fd, pid_t pid, const struct alloc_lib *lib,
		   struct probe_links *links);
/* Attach only the entry program, to every probe point of lib whose function is not in
 * skip_fns (a bit per enum mem_fn), for pid only (--alloc-only: no return probes). */
int probes__attach_entries(int entry_prog_fd, pid_t pid, const struct alloc_lib *lib,
			   uint64_t skip_fns, struct probe_links *links);
void probes__detach(struct probe_links *links);

#endif
