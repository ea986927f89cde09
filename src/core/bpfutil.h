/* Small libbpf helpers every collector needs: reading a whole hash map in batches, summing a
 * per-CPU value, running a task iterator. */
#ifndef EBPROF_BPFUTIL_H
#define EBPROF_BPFUTIL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct log_ctx;

/* libbpf's messages: none but with -vv (lc->verbose >= 2), and never its debug level (but for
 * the programs' load logs with EBPROF_VERIFIER_STATS). Its own hints (e.g. about ulimit -l)
 * mislead on kernels that charge BPF memory to the cgroup. */
void bpfutil__libbpf_messages(const struct log_ctx *lc);

/* The kernel log level a skeleton's programs load with: 4 (the verifier's statistics: each
 * program's instructions processed, states, time) when the developer switch
 * EBPROF_VERIFIER_STATS is set non-empty, which the libbpf messages then print to stderr
 * (docs/PERFORMANCE.md, "How to measure"); 2 | 4 with EBPROF_VERIFIER_STATS=full: every
 * instruction the verifier processed, with its source line (tens of MB a program, for
 * bench/verifier_lines.py); else 0. */
unsigned int bpfutil__kernel_log_level(void);

/* Call cb for every (key, value) of the hash map fd, read in batches; cb returns non-zero to
 * stop (that value is returned). Returns 0 or a negative errno. */
typedef int (*bpfutil_map_cb)(const void *key, const void *val, void *ctx);
int bpfutil__map_for_each(int fd, size_t key_size, size_t val_size, bpfutil_map_cb cb,
			  void *ctx);
/* The same, taking every entry out of the map as it goes (BPF_MAP_LOOKUP_AND_DELETE_BATCH:
 * each bucket copied and emptied under its lock): a live view's window. An update a program
 * makes through a value pointer it looked up before the delete and writes after the copy is
 * lost (the few instructions between its lookup and its add). 0 or a negative errno. */
int bpfutil__map_take(int fd, size_t key_size, size_t val_size, bpfutil_map_cb cb, void *ctx);
/* Delete the n keys (key_size bytes each, packed) from the map fd, in batches
 * (BPF_MAP_DELETE_BATCH, one call a batch rather than one a key); a key not in the map is
 * passed over. One by one where the kernel has no batch delete for the map. 0 or the first
 * error other than a missing key (negative errno). */
int bpfutil__map_delete_keys(int fd, const void *keys, size_t key_size, uint32_t n);
/* The sum over CPUs of the __u64 at index key of the per-CPU array fd (0 if unreadable). */
uint64_t bpfutil__percpu_sum(int fd, uint32_t key);
/* The same summed over the keys first..end-1 (a mode's drop counters, for its progress line). */
uint64_t bpfutil__percpu_sum_range(int fd, uint32_t first, uint32_t end);
/* Events the kernel did not run a program of obj for because one was already running on that
 * CPU (an interrupt's event in the middle of a task's): the sum of bpf_prog_info's
 * recursion_misses over its loaded programs. */
struct bpf_object;
uint64_t bpfutil__recursion_misses(const struct bpf_object *obj);
/* The same for one program (0 if it is not loaded). */
uint64_t bpfutil__prog_recursion_misses(const struct bpf_program *prog);
/* Run the iter/task program prog once over pid's tasks (pid 0: every task). 0 or -errno. */
int bpfutil__run_task_iter(struct bpf_program *prog, pid_t pid);
/* Return once every non-sleepable BPF program that was running at the call has returned, so
 * that none still acts on a value userspace changed before (a mode's end-of-run flag). The
 * kernel waits so on an update of a map of maps from userspace (an RCU grace period, a few ms:
 * what tells userspace that no program uses the inner map it replaced); closing a link waits
 * too, but only when that close drops the link's last reference, and another process may hold
 * one for a moment (bpftool's listing, a reader of /proc/PID/fdinfo). 0 or -errno. */
int bpfutil__wait_programs(void);

/* The running kernel's BTF (/sys/kernel/btf/vmlinux, ~5 MB), parsed at most once per process
 * and kept until its exit, for every mode that asks (`ebprof profile` opens five); NULL when
 * the kernel has none. */
struct btf;
struct btf *bpfutil__vmlinux_btf(void);
/* Whether the kernel has the tracepoint `name` for tp_btf/raw_tp programs (its
 * btf_trace_NAME typedef in that BTF); false without BTF. */
bool bpfutil__has_tracepoint(const char *name);

#endif
