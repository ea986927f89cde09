/* Interned stacks (abi/stack.h) read from a mode's BPF `stacks` map, and turned into profile
 * locations: user frames through a process's mappings, kernel frames through /proc/kallsyms
 * (modules as "[name]" mappings, BPF programs as "[bpf]"). One place for every mode. */
#ifndef EBPROF_CORE_STACKS_H
#define EBPROF_CORE_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "abi/stack.h"
#include "abi/unwind.h"

struct profile;
struct sym_proc;
struct ksyms;
struct log_ctx;

/* The name of the mapping kernel frames get (output/flame.c and csv.c mark them "_[k]"). */
#define STACKS_KERNEL_MAPPING "[kernel.kallsyms]"
/* the drop of stacks ended at a return address in code no snapshot of the mappings saw */
#define STACKS_DROP_OUTSIDE "unwind_outside_code"
/* the drop of stacks a frame-pointer walk ended in code without frame pointers: at a saved
 * frame pointer that is no frame (STACK_FP_BROKEN, abi/stack.h), or at a "return address" that
 * no call instruction precedes (the walk read that code's data as a frame) */
#define STACKS_DROP_FP_BROKEN "unwind_fp_broken"
/* the drop of stacks of a process whose mappings were never read (it exited first): their user
 * frames are bare addresses */
#define STACKS_DROP_NO_MAPPINGS "unwind_no_mappings"
/* the count of stacks with a frame at an address two files had code at during the run (a
 * library closed, replaced and opened again at the same place): the frame is named from
 * neither, "[ambiguous: A or B]" (not a loss of samples: they count, under whole stacks) */
#define STACKS_DROP_AMBIGUOUS "unwind_ambiguous_code"

/* A copy of a mode's stacks map: hash -> struct stack_trace. */
struct stack_table;

struct stack_table *stack_table__new(void);
void stack_table__free(struct stack_table *t);
/* Empty a mode's stacks map (hash -> struct stack_trace) and t, its copy (NULL: none): once no
 * count refers to a stack any more (they were all taken out), so that counting goes on. */
void stack_map__clear(int map_fd, struct stack_table *t);
/* Stack hashes, as collected by a stack_refs_fn. */
struct stack_refs {
	uint64_t *h;
	size_t n, cap;
};

int stack_refs__add(struct stack_refs *r, uint64_t h);
/* A map whose entries name stacks (a count table keyed by a struct stack_key, the waits or
 * requests going on): where each hash is in an entry, its key and value taken as one run of
 * bytes (STACK_REF_KEY, STACK_REF_VAL). */
#define STACK_REF_MAX 4
struct stack_ref_map {
	int fd;
	uint32_t key_size, val_size;
	bool percpu;			/* a per-CPU array of one slot: each CPU's value */
	uint32_t n;			/* hashes an entry has */
	uint32_t at[STACK_REF_MAX];	/* their offsets */
};
#define STACK_REF_KEY(ktype, field) offsetof(ktype, field)
#define STACK_REF_VAL(ktype, vtype, field) (sizeof(ktype) + offsetof(vtype, field))
/* A count table keyed by a struct stack_key (first in its key): its two stacks. */
static inline struct stack_ref_map stack_ref_map__counts(int fd, uint32_t key_size,
							  uint32_t val_size)
{
	return (struct stack_ref_map){ .fd = fd, .key_size = key_size, .val_size = val_size,
				       .n = 2, .at = { offsetof(struct stack_key, ustack),
						       offsetof(struct stack_key, kstack) } };
}
/* The stacks the entries of the n maps refer to, in that order (a wait that ends meanwhile is
 * in one or the other when its map comes before the counts'). 0 or a negative errno. */
int stack_refs__add_maps(struct stack_refs *r, const struct stack_ref_map *maps, size_t n);
/* Adds the hashes of every stack that a count or a wait going on refers to now. */
typedef int (*stack_refs_fn)(void *ctx, struct stack_refs *r);
/*
 * Empty a mode's stacks map and t (its copy, NULL: none) while counting goes on: every stack is
 * taken out (each bucket copied and emptied at once), then those that refs finds referred to
 * (the counts made since theirs were taken, offcpu's waits going on) go back, unless a program
 * interned them again meanwhile. Returns how many went back. A program that found a stack in
 * the map just before it was taken and keeps its hash only after refs looked leaves a count
 * without it (microseconds a run): that count shows a "[stack lost]" frame (stacks__key_locs).
 */
size_t stack_map__reclaim(int map_fd, struct stack_table *t, stack_refs_fn refs, void *ctx);
/* Read every stack of the map (batch lookups) into t, replacing what it had. 0 or -errno. */
int stack_table__read(struct stack_table *t, int map_fd);
/* The stack of hash h (0: none), or NULL when it is not in the table. */
const struct stack_trace *stack_table__get(const struct stack_table *t, __u64 h);
/* Add (or replace) the stack of hash h (0 is ignored): for tests, and for a mode that reads its
 * stacks some other way. A copy of st's nr frames is kept. 0 or a negative errno. */
int stack_table__add(struct stack_table *t, __u64 h, const struct stack_trace *st);
/* The stack of hash h from the map into t, unless t has it (0 is ignored): a live view reads
 * only the stacks its window counted, not the whole map each time. 0 or a negative errno
 * (-ENOENT: not in the map). */
int stack_table__fetch(struct stack_table *t, int map_fd, __u64 h);
/* Forget every stack (the map was emptied). */
void stack_table__clear(struct stack_table *t);
/* How many stacks t holds. */
uint32_t stack_table__count(const struct stack_table *t);

/*
 * Append the locations of user frames ips[0..nr) to locs (room for nr): each resolved through
 * sp, the process's mappings (NULL: kept as bare addresses). `first_exact`: ips[0] is where the
 * thread was (a sample in user mode), symbolized at the address itself; every other frame is a
 * return address, symbolized at address - 1. A first frame outside any executable mapping of
 * sp's snapshots is a bare address; past it, such a frame ends the stack in "[truncated]",
 * counted in prof as the STACKS_DROP_OUTSIDE drop (one per stack so ended), and so does an
 * address that follows no call instruction (a frame-pointer walk that ran into code without
 * frame pointers), counted as STACKS_DROP_FP_BROKEN, and so does STACK_FP_BROKEN (the BPF walk's
 * own end at a frame pointer that is no frame). Two return addresses of glibc follow no call
 * and are no such end: the signal trampoline (the stack goes on into the interrupted code) and
 * makecontext's __start_context (a coroutine's outermost frame: the stack ends there, whole,
 * without it). Returns how many were appended.
 */
uint32_t stacks__user_locs(struct profile *prof, struct sym_proc *sp, pid_t pid,
			   const __u64 *ips, uint32_t nr, bool first_exact, uint32_t *locs);

/* Append the locations of kernel frames ips[0..nr) (ips[0] exact, the rest return addresses,
 * looked up at address - 1) resolved through ks (NULL: bare addresses under the kernel
 * mapping). Mappings, all of pid 0: STACKS_KERNEL_MAPPING for the core kernel (and addresses
 * no region claims), "[name]" for a module, "[bpf]" for BPF programs; module_offset is the
 * offset from the region's start (what KASLR and module loads do not change), or the address
 * when the region's bounds are not known. Frames without a symbol keep their address and no
 * lines. Returns how many were appended. */
uint32_t stacks__kernel_locs(struct profile *prof, const struct ksyms *ks, const __u64 *ips,
			     uint32_t nr, uint32_t *locs);

/* Kernel symbols for every mode: /proc/kallsyms loaded once, at the first call; NULL (said once
 * through lc) when it cannot be read, and kernel frames stay addresses. Reading it costs ~50 ms
 * of kernel CPU: call it only for a stack that has kernel frames. */
const struct ksyms *stacks__ksyms(const struct log_ctx *lc);

/* How many leading frames of a kernel stack captured inside a BPF program are the tracing
 * machinery that ran it (the program, bpf_trace_run*, __bpf_trace_*, perf_trace_*, uprobe
 * dispatch...) rather than the code that hit the event. Modes whose programs run in the
 * traced task's context (tracepoints, uprobes) leave them out; a perf event's stack starts at
 * the interrupted code and has none. */
uint32_t stacks__tracing_frames(const struct ksyms *ks, const __u64 *ips, uint32_t nr);

/* One entry of a counts map keyed by struct stack_key with a __u64 value. */
struct stack_count {
	struct stack_key k;
	__u64 n;
};

/* Every entry of such a map of process `only` (0: every process), sorted by (tgid, aux), in
 * *out (malloc'd; the caller frees it). 0 or a negative errno. */
int stack_counts__read(int fd, pid_t only, struct stack_count **out, size_t *n);

/* Every entry of such a map, taken out of it (read and deleted a batch at a time, each under
 * its bucket's lock: BPF_MAP_LOOKUP_AND_DELETE_BATCH), sorted by (tgid, aux), in *out
 * (malloc'd). A program counts into an entry it found before the delete and adds after the
 * copy only in the few instructions between its lookup and its add: a window's reader. 0 or a
 * negative errno (what was taken before an error is in *out). */
int stack_counts__take(int fd, struct stack_count **out, size_t *n);

/* A map whose key begins with a struct stack_key and whose value is the mode's own (io's
 * requests, lock's waits: key and value of key_size and val_size bytes), read into records of
 * rec_size bytes, the key at 0 and the value at val_off (the caller's struct { KEY k; VAL v; }),
 * in the map's order: the entries of process `only` (0: every one); `take`: taken out of the
 * map (a window: bpfutil__map_take). *out malloc'd (the caller frees it, also after an error,
 * with what was read before it). 0 or a negative errno. */
int stack_records__read(int fd, size_t key_size, size_t val_size, size_t rec_size,
			size_t val_off, pid_t only, bool take, void **out, size_t *n);
/* The stacks those n records (each rec_size bytes, a struct stack_key first) name, fetched
 * into st from the stacks map (a window's: only the stacks it counted). */
void stack_table__fetch_records(struct stack_table *st, int stacks_fd, const void *recs,
				size_t n, size_t rec_size);

/* The locations of a key's stacks: its kernel frames, leaf first (without the tracing
 * machinery when `strip_tracing`), then its user frames through sp (pid's mappings, NULL: bare
 * addresses). Room for 2 * STACK_MAX_DEPTH in locs. Returns how many were appended. */
uint32_t stacks__key_locs(struct profile *prof, const struct stack_table *st,
			  const struct ksyms *ks, struct sym_proc *sp, pid_t pid,
			  const struct stack_key *k, bool strip_tracing, uint32_t *locs);

/* A location for a synthetic frame named `name` (a thread "name [tid]", a kind or an event
 * leaf, "[truncated]"): profile__location_is_synthetic's (no mapping, address 0; the name
 * keeps locations apart). */
uint32_t stacks__named_loc(struct profile *prof, const char *name);
/* A stack that ends before its outermost frame: "[truncated]" appended to locs[0..n), and the
 * stack counted as the drop `drop` (NULL: the part that cut it counts it). Returns the new n. */
uint32_t stacks__end_truncated(struct profile *prof, uint32_t *locs, uint32_t n,
			       const char *drop);
/* Whether a user stack's address is a walk's own end mark (UNWIND_TRUNCATED, STACK_FP_BROKEN),
 * no frame */
static inline bool stacks__is_end(__u64 ip)
{
	return ip == UNWIND_TRUNCATED || ip == STACK_FP_BROKEN;
}

#endif
