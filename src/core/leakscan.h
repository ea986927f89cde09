/* Reachability of outstanding heap blocks: valgrind memcheck's leak classes, computed from a
 * process's memory.
 *
 * The caller names the blocks (address and requested size), the root regions (writable data of
 * every module, thread stacks from their stack pointers, other writable mappings that are not
 * the allocator's heap), the threads' registers, and a way to read the process's memory. The
 * scan follows memcheck's definitions exactly:
 *   - an aligned word pointing at a block's first byte is a start pointer, anywhere else inside
 *     the block an interior pointer (a zero-sized block has only its start);
 *   - still reachable: reached from the roots through start pointers only (or through an
 *     interior pointer one of memcheck's heuristics accepts: stdstring, length64, newarray,
 *     multipleinheritance), following the contents of reachable blocks;
 *   - possibly lost: reached, but only through some interior pointer or from a possibly lost
 *     block;
 *   - then, in address order, each block still unreached leads a clique: every unreached block
 *     its contents lead to (start or interior pointers) is indirectly lost; the leaders that
 *     no other unreached block points to are definitely lost.
 * No libbpf and no /proc here: unit-testable with memory in a buffer.
 */
#ifndef EBPROF_LEAKSCAN_H
#define EBPROF_LEAKSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* the same order as enum prof_leak_class */
enum leak_class {
	LEAK_DEFINITE,		/* "definitely lost" */
	LEAK_INDIRECT,		/* "indirectly lost" */
	LEAK_POSSIBLE,		/* "possibly lost" */
	LEAK_REACHABLE,		/* "still reachable" */
	LEAK__COUNT,
};

/* memcheck's --leak-check-heuristics, as a bit set; LEAK_HEUR_ALL is memcheck's default */
enum leak_heuristic {
	LEAK_HEUR_NONE,
	LEAK_HEUR_STDSTRING,
	LEAK_HEUR_LENGTH64,
	LEAK_HEUR_NEWARRAY,
	LEAK_HEUR_MULTIPLE_INHERITANCE,
	LEAK_HEUR__COUNT,
};
#define LEAK_HEUR_ALL 0x1eu	/* bit (1 << h) for every heuristic above but NONE */

/* The names of both enums are the profile's: prof_leak_class_names, prof_leak_heuristic_names
 * (profile/profile.h), in the same order. */

struct leak_block {
	uint64_t addr;
	uint64_t size;		/* as requested */
	uint64_t user;		/* the caller's, untouched (e.g. the block's site) */
	/* out */
	uint8_t cls;		/* enum leak_class */
	uint8_t heuristic;	/* enum leak_heuristic that made it reachable, or NONE */
	/* private */
	uint8_t state;
	uint8_t pending;
	uint8_t heads;		/* what the heuristics found in its first words, once */
	uint8_t link_state;	/* 0 unknown, 1 read: link valid, 2 none */
	uint64_t link;		/* glibc: the next chunk's header, just past this chunk */
	uint64_t cache_off;	/* where its memory is in the scan's cache */
};

#define LEAK_REGION_ALLOCATOR 0x1	/* the allocator's own data (glibc's main_arena) */

struct leak_region {
	uint64_t start, end;
	unsigned flags;
};

/* A mapping, for the multipleinheritance heuristic's vtable test. Sorted by start. */
struct leak_map {
	uint64_t start, end;
	bool file;		/* backed by a file */
	bool r, x;
};

/* Reads remote memory like process_vm_readv: bytes read (a short count ends at the first
 * element that could not be read), or -1 with errno set. */
typedef ssize_t (*leak_readv_fn)(void *ctx, const struct iovec *local, unsigned long nlocal,
				 const struct iovec *remote, unsigned long nremote);

struct leak_scan_opts {
	leak_readv_fn readv;
	void *ctx;
	unsigned heuristics;	/* bit set of 1 << enum leak_heuristic */
	/* glibc keeps pointers to chunk headers (its bins and top chunk, in main_arena); a
	 * chunk header overlaps the last word of the previous chunk, so in the allocator's own
	 * data (LEAK_REGION_ALLOCATOR) a word equal to a block's next-chunk header is glibc's
	 * link, not the program's pointer. */
	bool glibc_links;
	const struct leak_map *maps;
	size_t nmaps;
	/* read every block up front when they fit in this many bytes (0: never); else blocks
	 * are read as the scan reaches them */
	uint64_t cache_bytes;
};

struct leak_stats {
	uint64_t count[LEAK__COUNT];
	uint64_t bytes[LEAK__COUNT];
	uint64_t heur_count[LEAK_HEUR__COUNT];	/* reachable only through a heuristic */
	uint64_t heur_bytes[LEAK_HEUR__COUNT];
	uint64_t scanned_bytes;		/* roots and blocks read */
	uint64_t unreadable_bytes;	/* root or block memory that could not be read */
	uint64_t allocator_links;	/* glibc chunk links ignored */
	uint64_t read_calls;		/* calls of readv: what stopping the process costs most */
};

/*
 * Classify blocks[0..n): sorts them by address (the caller finds its blocks by `user`) and
 * sets each block's cls and heuristic. regs: register values of every thread (roots).
 * Returns 0, or a negative errno (-ENOMEM); unreadable memory is counted, not fatal.
 */
int leak_scan(struct leak_block *blocks, size_t n, const struct leak_region *roots,
	      size_t nroots, const uint64_t *regs, size_t nregs, const struct leak_scan_opts *o,
	      struct leak_stats *st);

#endif
