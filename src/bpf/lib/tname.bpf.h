/* SPDX-License-Identifier: GPL-2.0 */
/* Thread names as they were when counted (--per-thread of cpu and offcpu), shared by those
 * modes' BPF programs. A thread's name changes (pthread_setname_np, prctl PR_SET_NAME, an exec):
 * read at the report, the last name covered the counts taken under the earlier ones. Each
 * thread has a name generation, in task storage (gone with the task): 0 until it is renamed,
 * bumped by the mode's task_rename program (thread_renamed). It goes into the count's key
 * (struct stack_key's gen), so counts before and after a rename are keys of their own, and
 * the name at the first count of each generation goes into `thread_names` (thread_name_keep):
 * a thread never renamed has gen 0 and no more keys than before. The collector takes the table
 * out with the counts (core/collector.h: collector__take_thread_names): a name it deleted is
 * kept again at the next first count of its (tid, gen). Include after vmlinux.h,
 * libbpf's headers and abi/stack.h.
 */
#ifndef EBPROF_BPF_LIB_TNAME_H
#define EBPROF_BPF_LIB_TNAME_H

#include "abi/stack.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} thread_gens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);	/* sized by the collector */
	__type(key, struct thread_name_key);
	__type(value, struct thread_name);
} thread_names SEC(".maps");

/* t's name generation: how many times it was renamed since tracing started (0: never). */
static __always_inline __u32 thread_gen(struct task_struct *t)
{
	__u32 *g = bpf_task_storage_get(&thread_gens, t, 0, 0);

	return g ? *g : 0;
}

/* t renamed (its task_rename tracepoint): its counts from now on are a new generation's. */
static __always_inline void thread_renamed(struct task_struct *t)
{
	__u32 *g = bpf_task_storage_get(&thread_gens, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (g)
		__sync_fetch_and_add(g, 1);
}

/* At a count's first: t's name now is generation gen's (the first one kept). False when it
 * could not be kept (the table full): the mode counts that as a drop of its own (its stats
 * array), since the report then names the thread as it is when its counts are read, or '?'. */
static __always_inline bool thread_name_keep(struct task_struct *t, __u32 tid, __u32 gen)
{
	struct thread_name_key k = { .tid = tid, .gen = gen };
	struct thread_name n = {};
	long err;

	if (bpf_map_lookup_elem(&thread_names, &k))
		return true;
	BPF_CORE_READ_STR_INTO(&n.comm, t, comm);
	err = bpf_map_update_elem(&thread_names, &k, &n, BPF_NOEXIST);
	return !err || err == -17 /* EEXIST: another CPU kept it */;
}

#endif
