// SPDX-License-Identifier: GPL-2.0
/* The benchmark's floor (bench/floor.c loads it): uprobe programs that do nothing, attached
 * where ebprof attaches its own, so the harness can measure what the uprobe traps alone cost.
 * With count_hits set (the harness's one check run) they count their hits instead, proving the
 * probes fire; in the measured runs the flag is 0 and the verifier drops that code entirely.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "abi/mem.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 count_hits = 0;

/* hits: [0] entry of an allocating function, [1] free, [2] returns, [3] raw tracepoint */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void count(__u32 k)
{
	__u64 *n = bpf_map_lookup_elem(&hits, &k);

	if (n)
		(*n)++;
}

SEC("uprobe")
int floor_enter(struct pt_regs *ctx)
{
	if (count_hits)
		count(bpf_get_attach_cookie(ctx) == MEM_FN_FREE ? 1 : 0);
	return 0;
}

SEC("uretprobe")
int floor_exit(struct pt_regs *ctx)
{
	if (count_hits)
		count(2);
	return 0;
}

/* `floor --raw-tp NAME` (bench/stacks.sh): an empty program on the raw tracepoint ebprof stacks
 * attaches for an event (sys_enter for a syscall's entry), on every CPU and every task as
 * ebprof's own: what the tracepoint's dispatch alone costs. Loaded only with that option. */
SEC("?raw_tp")
int floor_raw_tp(void *ctx)
{
	if (count_hits)
		count(3);
	return 0;
}
