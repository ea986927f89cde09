/* Interned stacks (abi/stack.h) read from a mode's BPF `stacks` map, and turned into profile
 * locations: user frames through a process's mappings, kernel frames through /proc/kallsyms
 * (modules as "[name]" mappings, BPF programs as "[bpf]"). One place for every mode. */
#ifndef EBPROF_CORE_STACKS_H
#define EBPROF_CORE_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "abi/stack.h"

struct profile;
struct sym_proc;
struct ksyms;

/* The name of the mapping kernel frames get (output/flame.c and csv.c mark them "_[k]"). */
#define STACKS_KERNEL_MAPPING "[kernel.kallsyms]"

/* A copy of a mode's stacks map: hash -> struct stack_trace. */
struct stack_table;

struct stack_table *stack_table__new(void);
void stack_table__free(struct stack_table *t);
/* Read every stack of the map (batch lookups) into t, replacing what it had. 0 or -errno. */
int stack_table__read(struct stack_table *t, int map_fd);
/* The stack of hash h (0: none), or NULL when it is not in the table. */
const struct stack_trace *stack_table__get(const struct stack_table *t, __u64 h);
/* Add (or replace) the stack of hash h (0 is ignored): for tests, and for a mode that reads its
 * stacks some other way. A copy of st's nr frames is kept. 0 or a negative errno. */
int stack_table__add(struct stack_table *t, __u64 h, const struct stack_trace *st);
/* How many stacks t holds. */
uint32_t stack_table__count(const struct stack_table *t);

/*
 * Append the locations of user frames ips[0..nr) to locs (room for nr): each resolved through
 * sp, the process's mappings (NULL: kept as bare addresses). `first_exact`: ips[0] is where the
 * thread was (a sample in user mode), symbolized at the address itself; every other frame is a
 * return address, symbolized at address - 1. Frames outside any executable mapping are
 * dropped; past the first frame, an address that follows no call instruction ends the stack
 * (a frame-pointer walk that ran into code without frame pointers). Returns how many were
 * appended.
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

/* A location for a synthetic frame named `name` (a process root such as "comm", a thread
 * "name [tid]", the traced function at its entry): no mapping, a distinct address per name. */
uint32_t stacks__named_loc(struct profile *prof, const char *name);

#endif
