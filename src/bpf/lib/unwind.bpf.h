/* SPDX-License-Identifier: GPL-2.0 */
/* The user stack by call frame information (.eh_frame): for a process whose executable mappings
 * the collector put in unwind_procs (core/unwind.c), each frame's caller from the rows of its
 * object's table in unwind_rows (abi/unwind.h): find the mapping (binary search), the row
 * (binary search), compute the CFA from rsp or rbp, read the return address at CFA - 8 and rbp
 * where the row says it is saved. A mapping without a table (JIT code, an object without call
 * frame information) and a pc no row covers are walked by frame pointers. The walk stops
 * cleanly at the outermost frame (the return address undefined: _start, clone, clone3) or a
 * zero return address; a frame it cannot unwind (a read fails, a rule it does not implement,
 * a CFA not above the frame) ends the stack with UNWIND_TRUNCATED, never a guess. An address
 * in none of the mappings loaded (a library mapped since: the launched program's libc, dlopen;
 * the collector is told and loads it at once) is looked up with bpf_find_vma: its file's table
 * when the collector has one (unwind_files: loaded for another process, or ahead of time for
 * the libraries a program needs), frame pointers in an anonymous mapping (JIT code) or a file
 * known to have no call frame information (a leaf's caller only where it can be told, rbp 0 no
 * outermost frame: unwind_frame), else the stack ends there in [truncated]
 * (UNWIND_STAT_UNMAPPED): a frame-pointer walk through code without frame pointers skips
 * callers silently. One frame per bpf_loop step. A process without an entry, or whose entry
 * is another program's (unwind_ident: an exec or a reused PID since its load), is walked by
 * file alone, and the collector is asked to load it (unwind_ask).
 *
 * Included by stack.bpf.h; it defines the two maps every mode's object then has (sized by the
 * collector before load, 1 entry each until then) and the per-CPU counts of how stacks ended. */
#ifndef EBPROF_BPF_LIB_UNWIND_H
#define EBPROF_BPF_LIB_UNWIND_H

#include "abi/unwind.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/* mmapable: the collector copies tables in through its mapping, not a system call per row */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

/* the objects' tables by file (abi/unwind.h), for mappings the process's entry lacks */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* UNWIND_DEFAULT_OBJS when the unwinder is on */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

/* tgids whose mappings changed since the collector loaded them (a __u32 each, once until it
 * loads them again), and tgids without a usable entry (not loaded yet: -a; an exec or a reused
 * PID since the load: once per program, unwind_asked); the session polls it (mode_ops.wake_fd) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16384);
} unwind_stale SEC(".maps");

/* The entry of a process without a usable one: no mappings (every address goes by file), stale
 * already (no notes: unwind_ask asks) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_noproc SEC(".maps");

/* tgid -> the hash of the unwind_ident it was last asked for (abi/unwind.h) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* UNWIND_ASKED_SIZE when the unwinder is on */
	__type(key, __u32);
	__type(value, __u64);
} unwind_asked SEC(".maps");

/* one array, UNWIND_CACHE_SIZE entries for each CPU in turn: a per-CPU array's entries are
 * allocated one by one (4096 per-CPU allocations, ~1.6 ms at every start) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* UNWIND_CACHE_SIZE x possible CPUs when the unwinder is on */
	__type(key, __u32);
	__type(value, struct unwind_cache_ent);
} unwind_cache SEC(".maps");

/* whole stacks by where the walk started, checked against the words it read (abi/unwind.h) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);		/* UNWIND_SCACHE_SIZE when the unwinder is on */
	__type(key, __u32);
	__type(value, struct unwind_scache_ent);
} unwind_scache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
} unwind_scratch SEC(".maps");

/* changes of unwind_procs (a load, a delete) the collector made, counted: bumped after each
 * one, so that a stack cache entry walked before reads another value */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_epoch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stats SEC(".maps");

/* Threads held at the loader's hook (abi/unwind.h, UNWIND_HOLD_SIG): tid -> 1, noted before
 * the signal; the collector takes the note at the thread's stop (unwinder__held) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNWIND_HOLDS_SIZE);
	__type(key, __u32);
	__type(value, __u32);
} unwind_holds SEC(".maps");

/* [0]: the collector's tgid, set after load: only the threads it traces are held (0: none) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_tracer SEC(".maps");

/* 0: frame pointers only; 1: by tables where the process has them (set before load) */
const volatile __u32 unwind_mode = 0;

/* The mapping of an address, as bpf_find_vma's callback sees it: kept for the walk's next
 * frames, and for the next stacks (unwind_vmas, below). bpf_find_vma can be called once per
 * program run where interrupts are off (a scheduler tracepoint, a perf event: the mmap lock's
 * release is deferred to an irq_work, busy until then), so frames in a second such file that
 * no earlier stack found end the stack in [truncated] (UNWIND_STAT_TRUNCATED): the collector
 * loads such a process as soon as the walk asks (unwind_ask). bpf_iter_task_vma, which could
 * read them all under one lock, refuses to start with interrupts off (-EBUSY on 6.18.44:
 * tried, every read failed). */
struct unwind_vma {
	__u64 start, end, pgoff;
	struct unwind_file_key key;
	__u32 file;		/* file-backed (else anonymous: JIT code) */
	__u32 valid;
	__u32 exec;		/* VM_EXEC: else no code (a return address that is none: data
				 * a walk took for one, a coroutine's uc_link) */
	__u32 mm_seq;		/* the address space's mm_lock_seq when it was read (unwind_vmas) */
};

/* The mappings earlier stacks found with bpf_find_vma, kept for the next ones (unwind_vmas):
 * a stack that crosses two files mapped since the process's load (libc and a preloaded or
 * dlopen'ed library) found only one of them per program run where interrupts are off, and
 * ended in [truncated] at the other until the collector loaded the process again (late on a
 * loaded machine: every sample until then). With the mappings kept, each stack finds one more
 * and the next ones are whole.
 *
 * Why a kept mapping is never another one's: it is used only while the address space is the
 * one it was read from and unchanged since. The kernel counts the writers of an address
 * space's mappings in mm->mm_lock_seq (a seqcount: odd while mmap_lock is held for writing,
 * bumped again at the unlock or downgrade; every mmap, munmap, mremap, mprotect, brk, stack
 * growth and exec's teardown takes it so), and bpf_find_vma's callback reads it under the read
 * lock, when no writer can be in: the value the mapping was true at. A walk uses the mapping
 * only when the current task's mm_lock_seq is that same even value: no munmap and mmap at the
 * same place since, no mapping changed at all. The entry is the address space's: the mm
 * pointer, and to tell an mm freed and its memory reused for another (an exec, a reused PID,
 * whose seqcount starts again), the tgid, the leader's start time and the exec count
 * (self_exec_id, bumped at each exec: an exec's new mm is allocated while the old one lives,
 * so one address holds two address spaces of a process only two execs or more apart, whose
 * counts differ even at the moment of an exec between the mm's switch and the bump). A
 * writer that starts after the walk's check races the walk as it races bpf_find_vma's own
 * answer, read under the lock and used after its release: nothing new.
 * Where the kernel has no such seqcount (no CONFIG_PER_VMA_LOCK, or before 6.13: an int bumped
 * at the unlock only), nothing is kept. */
#define UNWIND_VMAS_SLOTS	64	/* processes at once, by tgid (a power of 2) */
#define UNWIND_VMAS_WAYS	8	/* mappings per process, the oldest replaced (a power of 2) */

struct unwind_vmas_id {
	__u64 mm;		/* the mm_struct's address */
	__u64 start_time;	/* the leader's start_boottime (ns) */
	__u64 exec_id;		/* self_exec_id */
	__u32 tgid;
	__u32 mm_seq;
};

struct unwind_vmas_ent {
	__u32 seq;		/* odd while written (taken by compare-and-swap) */
	__u32 n;		/* mappings written since id was set (the last WAYS kept) */
	struct unwind_vmas_id id;
	struct unwind_vma v[UNWIND_VMAS_WAYS];
};

/* one array shared by every CPU: a thread's samples on either CPU learn from each other */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_VMAS_SLOTS);
	__type(key, __u32);
	__type(value, struct unwind_vmas_ent);
} unwind_vmas SEC(".maps");

/* mm_lock_seq as a seqcount (6.13 on, CONFIG_PER_VMA_LOCK) */
struct mm_struct___vmaseq {
	struct {
		unsigned int sequence;
	} mm_lock_seq;
} __attribute__((preserve_access_index));

/* What unwind_rule looks up: ip (ip - 1 for a return address: look) in process tgid; vma the
 * walk's last bpf_find_vma */
struct unwind_look {
	__u64 ip, look;
	__u32 tgid;
	__u32 by_file;		/* set when the rule came from unwind_rule_by_file */
	__u32 borrowed;		/* the entry is the parent's (unwind_borrowable): not marked
				 * stale for the child's addresses */
	__u32 pad;
	struct unwind_vma vma;
};

/* A walk's registers and counts: scalars only (unwind_frame, a global function, is given them) */
struct unwind_ctx {
	__u64 ip, sp, bp;
	__u64 nr;
	__u32 exact;		/* ip is where the frame was, not a return address */
	__u32 end;		/* UNWIND_STAT_* that ended it */
	__u32 tgid;
	struct unwind_look look;
	__u64 sp0;			/* sp where the walk started: the log's offsets' base */
	__u64 rbx, rdi, rdx, rax;	/* the first frame's (UNWIND_CFA_RBX...) */
	__u32 leaf;			/* they are known */
	__u32 rbx_ok;			/* the frame's rbx is known: rbx, or saved at rbx_at */
	__u64 rbx_at;			/* where a frame below saved it (0: rbx holds it) */
};

static __always_inline void unwind_count_n(__u32 what, __u64 k)
{
	__u64 *n = bpf_map_lookup_elem(&unwind_stats, &what);

	if (n)
		*n += k;
}

static __always_inline void unwind_count(__u32 what)
{
	unwind_count_n(what, 1);
}

/* The binary searches run as bpf_loop steps: a loop the verifier would unroll and follow
 * branch by branch made loading (the modes' start-up) several times slower. */
struct unwind_search {
	struct unwind_proc *proc;
	__u64 key;		/* the address (maps) or pc (rows) looked for */
	__u32 lo, hi;		/* maps: [lo, hi) holds it if any; rows: the last row <= key is
				 * in [lo, hi) */
	__s32 found;		/* maps: the index, -1: none */
};

static long unwind_map_step(__u64 i, void *data)
{
	struct unwind_search *s = data;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = (s->lo + s->hi) / 2;
	if (mid >= UNWIND_MAX_MAPS)
		return 1;
	if (s->key < s->proc->maps[mid].start) {
		s->hi = mid;
	} else if (s->key >= s->proc->maps[mid].end) {
		s->lo = mid + 1;
	} else {
		s->found = (__s32)mid;
		return 1;
	}
	return 0;
}

/* the mapping of ip in p (sorted by start), NULL if none */
static __always_inline struct unwind_map *unwind_find_map(struct unwind_proc *p, __u64 ip)
{
	struct unwind_search s = { .proc = p, .key = ip, .lo = 0, .hi = p->nmaps, .found = -1 };
	__u32 k;

	if (s.hi > UNWIND_MAX_MAPS)
		return NULL;
	bpf_loop(9, unwind_map_step, &s, 0);	/* 2^9 > UNWIND_MAX_MAPS */
	k = (__u32)s.found;
	if (k >= UNWIND_MAX_MAPS)
		return NULL;
	return &p->maps[k];
}

/* 1 when ip is in one of p's mappings (p may be NULL: 0). A global function, for the checks of
 * code without a table (unwind_is_ret, unwind_own_frame): inlined, the search's bpf_loop
 * callback was verified again at each call site and for each state it was reached in (the
 * 16 words of unwind_own_frame's loop above all): 14,700 of the ~25,000 instructions the
 * unwinder cost every program that takes a user stack (cpu_sample 28,496 -> 13,801).
 * unwind_rule, on the walk's path, keeps the search inlined: no call more there. */
__noinline int unwind_in_maps(struct unwind_proc *p, __u64 ip)
{
	return p && unwind_find_map(p, ip) != NULL;
}

static long unwind_row_step(__u64 i, void *data)
{
	struct unwind_search *s = data;
	struct unwind_row *r;
	__u32 mid;

	if (s->hi - s->lo <= 1)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	r = bpf_map_lookup_elem(&unwind_rows, &mid);
	if (!r)
		return 1;
	if (r->pc <= s->key)
		s->lo = mid;
	else
		s->hi = mid;
	return 0;
}

/* the last row of [first, first + n) at or before pc, NULL if pc is before them all */
static __always_inline struct unwind_row *unwind_find_row(__u32 first, __u32 n, __u32 pc)
{
	struct unwind_search s = { .key = pc, .lo = first, .hi = first + n };
	struct unwind_row *r;
	__u32 k;

	if (!n)
		return NULL;
	bpf_loop(24, unwind_row_step, &s, 0);	/* 2^24 rows per table at most */
	k = s.lo;
	r = bpf_map_lookup_elem(&unwind_rows, &k);
	if (!r || r->pc > pc)
		return NULL;
	return r;
}

static __always_inline __u32 unwind_ent_check(const struct unwind_cache_ent *e)
{
	__u64 h = e->ip ^ ((__u64)e->tgid << 32 | e->gen);

	h ^= (__u64)e->row.pc << 32 | (__u32)e->row.cfa_off;
	h ^= ((__u64)e->row.rbx << 48 | (__u64)e->row.cfa << 40 | (__u64)e->row.rbp << 32 |
	      (__u16)e->row.rbp_off) *
	     0x9e3779b97f4a7c15ULL;
	h *= 0xff51afd7ed558ccdULL;
	return (__u32)(h ^ (h >> 32)) | 1;
}

/* The current address space's identity for unwind_vmas (its mm_lock_seq the current one):
 * 0, 1 when there is none to go by (no mm, no seqcount), 2 when a writer is in (odd) */
static __always_inline int unwind_vmas_cur(struct unwind_vmas_id *id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct___vmaseq *mm;

	mm = (void *)BPF_CORE_READ(task, mm);
	if (!mm || !bpf_core_field_exists(mm->mm_lock_seq.sequence))
		return 1;
	id->mm = (__u64)mm;
	id->mm_seq = BPF_CORE_READ(mm, mm_lock_seq.sequence);
	id->start_time = BPF_CORE_READ(task, group_leader, start_boottime);
	id->exec_id = BPF_CORE_READ(task, self_exec_id);
	id->tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	return (id->mm_seq & 1) ? 2 : 0;
}

static __always_inline struct unwind_vmas_ent *unwind_vmas_slot(__u32 tgid)
{
	__u32 slot = (tgid * 0x9e3779b1U) >> 26;	/* the top 6 bits: UNWIND_VMAS_SLOTS */

	return bpf_map_lookup_elem(&unwind_vmas, &slot);
}

/* The kept mapping of ip into *out (see unwind_vmas): 1, else 0. A kept mapping of ip not
 * used because the address space changed since, or is being changed, is counted
 * (UNWIND_STAT_VMA_STALE: anything that takes its mmap_lock for writing, a uprobe attached or
 * detached anywhere on a file it maps too). A global function: verified once. */
__noinline int unwind_vmas_find(__u64 ip, struct unwind_vma *out)
{
	struct unwind_vmas_id id;
	struct unwind_vmas_ent *e;
	__u32 seq, n;
	int rc;

	if (!out)
		return 0;
	rc = unwind_vmas_cur(&id);
	if (rc == 2)
		unwind_count(UNWIND_STAT_VMA_STALE);
	if (rc)
		return 0;
	e = unwind_vmas_slot(id.tgid);
	if (!e)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	if (seq & 1)
		return 0;
	asm volatile("" ::: "memory");	/* the entry read after its seq (x86: loads in order) */
	if (e->id.mm != id.mm || e->id.tgid != id.tgid || e->id.start_time != id.start_time ||
	    e->id.exec_id != id.exec_id)
		return 0;
	n = e->n;
	for (int i = 0; i < UNWIND_VMAS_WAYS; i++) {
		if (i >= n)
			break;
		if (ip >= e->v[i].start && ip < e->v[i].end) {
			if (e->id.mm_seq != id.mm_seq) {
				unwind_count(UNWIND_STAT_VMA_STALE);
				return 0;
			}
			*out = e->v[i];
			asm volatile("" ::: "memory");
			/* a writer meanwhile (another CPU): what was read may be half its */
			return *(volatile __u32 *)&e->seq == seq && out->valid;
		}
	}
	return 0;
}

/* Keep v, just read by bpf_find_vma (its mm_seq the callback's), for the next stacks. Not
 * kept when another CPU writes the entry at the same moment (the next stack's find keeps it).
 * A global function: verified once. */
__noinline int unwind_vmas_put(const struct unwind_vma *v)
{
	struct unwind_vmas_id id;
	struct unwind_vmas_ent *e;
	__u32 seq, k;

	if (!v || !v->valid)
		return 0;
	__builtin_memset(&id, 0, sizeof(id));
	unwind_vmas_cur(&id);	/* (a writer in since the callback: v stays true at its seq) */
	if (!id.mm || (v->mm_seq & 1))
		return 0;
	id.mm_seq = v->mm_seq;
	e = unwind_vmas_slot(id.tgid);
	if (!e)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	if ((seq & 1) || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq)
		return 0;
	if (e->id.mm != id.mm || e->id.mm_seq != id.mm_seq || e->id.tgid != id.tgid ||
	    e->id.start_time != id.start_time || e->id.exec_id != id.exec_id) {
		e->id = id;	/* another address space, or this one changed: its mappings go */
		e->n = 0;
	}
	k = e->n & (UNWIND_VMAS_WAYS - 1);
	e->v[k] = *v;
	e->n++;
	asm volatile("" ::: "memory");	/* the entry written before its seq (x86: stores in order) */
	*(volatile __u32 *)&e->seq = seq + 2;
	return 0;
}

static long unwind_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct unwind_vma *v = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);
	struct mm_struct___vmaseq *mm = (void *)BPF_CORE_READ(vma, vm_mm);

	/* under the mmap read lock: no writer in, the value these fields are true at */
	if (bpf_core_field_exists(mm->mm_lock_seq.sequence))
		v->mm_seq = BPF_CORE_READ(mm, mm_lock_seq.sequence);
	else
		v->mm_seq = 1;	/* odd: never kept */
	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	v->exec = !!(BPF_CORE_READ(vma, vm_flags) & 0x4);	/* VM_EXEC */
	if (f) {
		v->file = 1;
		v->key.ino = BPF_CORE_READ(f, f_inode, i_ino);
		v->key.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	}
	return 0;
}

/* The mapping of ip into *vp, the walk's last one (kept when it holds ip): 0, or 1 when it
 * cannot be found (in no mapping, or bpf_find_vma busy: see unwind_vma). From unwind_vmas
 * when an earlier stack found it, else by bpf_find_vma, then kept there. A global function:
 * verified once, bpf_find_vma's callback with it (inlined in each caller's walk, the
 * callback was verified again for every state that reached it, and each way of finding the
 * mapping multiplied the states after it: cpu's program took twice as long to load). */
__noinline int unwind_vma_of(__u64 ip, struct unwind_vma *vp)
{
	struct unwind_vma v;

	if (!vp)
		return 1;
	if (vp->valid && ip >= vp->start && ip < vp->end)
		return 0;
	if (unwind_vmas_find(ip, vp)) {
		unwind_count(UNWIND_STAT_VMA_CACHED);
		return 0;
	}
	__builtin_memset(&v, 0, sizeof(v));
	vp->valid = 0;
	/* fails busy at the walk's second file where interrupts are off (see unwind_vma): the
	 * stack ends there, unwind_truncated (not unwind_unmapped, which says a file had no
	 * table: a sample in the middle of an exec walks by file too); the next stacks find the
	 * first one in unwind_vmas */
	if (bpf_find_vma(bpf_get_current_task_btf(), ip, unwind_vma_cb, &v, 0))
		return 1;
	v.valid = 1;
	*vp = v;
	unwind_vmas_put(&v);
	return 0;
}

/* The rule at look in code the process's tables do not map (see the top): 0 with *row
 * (UNWIND_CFA_NONE: frame pointers), 1 when no table is known for its file, 2 when ip is in no
 * mapping at all, 3 in a mapping that is not executable (no code: never walked by frame
 * pointers). Not cached: it is looked up only until the collector loads the process. */
static __always_inline int unwind_rule_by_file(__u64 ip, __u64 look, struct unwind_row *row,
					       struct unwind_vma *vp)
{
	struct unwind_vma v;
	struct unwind_file *f;
	struct unwind_row *r;
	__u64 bias = 0, pc;
	bool found = false;

	__builtin_memset(row, 0, sizeof(*row));
	row->cfa = UNWIND_CFA_NONE;
	if (unwind_vma_of(ip, vp))
		return 2;
	v = *vp;
	if (!v.exec)
		return 3;
	if (!v.file)
		return 0;
	f = bpf_map_lookup_elem(&unwind_files, &v.key);
	if (!f)
		return 1;
	if (f->rows == UNWIND_MAP_FP)
		return 0;
	for (int i = 0; i < UNWIND_FILE_SEGS; i++) {
		__u64 so = f->segs[i].offset & ~0xfffULL;

		if (i < f->nsegs && v.pgoff >= so &&
		    v.pgoff < f->segs[i].offset + f->segs[i].filesz) {
			bias = v.start - v.pgoff + f->segs[i].offset - f->segs[i].vaddr;
			found = true;
			break;
		}
	}
	if (!found)
		return 1;
	pc = look - bias;
	r = pc < 0xffffffffULL ? unwind_find_row(f->rows, f->nrows, (__u32)pc) : NULL;
	if (r)
		*row = *r;
	unwind_count(UNWIND_STAT_BY_FILE);
	return 0;
}

/* The rule at k->look (ip, or ip - 1 for a return address) in process k->tgid (its mappings
 * proc) into *row: 0; 1 when ip is in none of the mappings and no table is known for its file
 * (unwind_rule_by_file), 2 when it is in no mapping at all. From the per-CPU cache when it
 * has it. A global function: verified once, on its own, not at each call site with every
 * state the caller can be in (that made loading ten times slower). */
__noinline int unwind_rule(struct unwind_proc *proc, struct unwind_look *k,
			   struct unwind_row *row)
{
	struct unwind_cache_ent *e;
	struct unwind_map *m;
	struct unwind_row *r = NULL;
	__u64 pc, ip, look;
	__u32 slot, tgid;

	if (!proc || !row || !k)
		return 2;
	ip = k->ip;
	look = k->look;
	tgid = k->tgid;
	slot = (__u32)((look ^ (look >> 12) ^ tgid) * 0x9e3779b1U) & (UNWIND_CACHE_SIZE - 1);
	slot += bpf_get_smp_processor_id() * UNWIND_CACHE_SIZE;	/* this CPU's part */
	e = bpf_map_lookup_elem(&unwind_cache, &slot);
	if (e && e->ip == look && e->tgid == tgid && e->gen == proc->gen &&
	    e->check == unwind_ent_check(e)) {
		*row = e->row;
		return 0;
	}
	m = unwind_find_map(proc, ip);
	if (!m) {
		int rc;

		k->by_file = 1;
		rc = unwind_rule_by_file(ip, look, row, &k->vma);
		/* code mapped since the collector's last look: it is told, once (not for an
		 * address in data: no code to load) */
		if (rc != 3 && !proc->stale && !k->borrowed) {
			proc->stale = 1;
			/* woken: the collector loads it at once (rare: once per load) */
			bpf_ringbuf_output(&unwind_stale, &tgid, sizeof(tgid), 0);
		}
		return rc;
	}
	if (m->rows != UNWIND_MAP_FP) {
		pc = look - m->bias;
		r = pc < 0xffffffffULL ? unwind_find_row(m->rows, m->nrows, (__u32)pc) : NULL;
	}
	if (r) {
		*row = *r;
	} else {
		__builtin_memset(row, 0, sizeof(*row));
		row->cfa = UNWIND_CFA_NONE;
	}
	if (e) {
		e->ip = look;
		e->tgid = tgid;
		e->gen = proc->gen;
		e->row = *row;
		e->check = unwind_ent_check(e);
	}
	return 0;
}

/* Note the word v read at addr in the walk's log (s: the scratch, NULL: no log; sp0: where the
 * walk started, the offsets' base) for the stack cache's check. A global function: verified
 * once, not in every state of the walk (inlined, the log's branches made loading the modes
 * several times slower). */
__noinline int unwind_log_word(struct unwind_scratch *s, __u64 sp0, __u64 addr, __u64 v)
{
	__u64 off = addr - sp0;
	__u32 n;

	if (!s || s->nocache)
		return 0;
	n = s->nreads;
	if (off > UNWIND_SCACHE_SPAN - 8 || (off & 7) || n >= UNWIND_SCACHE_READS) {
		s->nocache = 1;
		return 0;
	}
	s->off[n] = (__u16)off;
	s->val[n] = v;
	s->nreads = n + 1;
	if (off + 8 > s->span)
		s->span = (__u32)off + 8;
	return 0;
}

/* A word of the user stack into *out, noted in the log: 0, or 1 when it cannot be read. Read
 * into this small global function's frame (stack.bpf.h's read_frame says why). */
__noinline int unwind_read_word(struct unwind_scratch *s, __u64 sp0, __u64 addr, __u64 *out)
{
	__u64 v;

	if (!out || bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 1;
	*out = v;
	unwind_log_word(s, sp0, addr, v);
	return 0;
}

static __always_inline int unwind_read(struct unwind_ctx *u, struct unwind_scratch *scr,
				       __u64 addr, __u64 *v)
{
	return unwind_read_word(scr, u->sp0, addr, v) ? -1 : 0;
}

static __always_inline void unwind_log(struct unwind_ctx *u, struct unwind_scratch *scr,
				       __u64 addr, __u64 v)
{
	unwind_log_word(scr, u->sp0, addr, v);
}

/* The walk uses its current %rbp (a frame's CFA is computed from it, or a frame-pointer record
 * read at it): what it depends on becomes part of the check (UNWIND_BP_* in abi/unwind.h): the
 * start register's value a key of the entry, a saved one's word in the log. */
static __always_inline void unwind_use_bp(struct unwind_ctx *u, struct unwind_scratch *scr)
{
	if (scr->bpdep == UNWIND_BP_REG)
		scr->bpkey = 1;
	else if (scr->bpdep == UNWIND_BP_SAVED)
		unwind_log(u, scr, scr->bp_at, u->bp);
	scr->bpdep = UNWIND_BP_KNOWN;
}

/* The caller's %rbp was read from the stack at addr (not yet in the log) */
static __always_inline void unwind_saved_bp(struct unwind_scratch *scr, __u64 addr)
{
	scr->bpdep = UNWIND_BP_SAVED;
	scr->bp_at = addr;
}

/* 1 when the code before addr ends in a call instruction (e8 rel32; ff /2, register or memory
 * operand, any prefix). A global function: verified once. */
__noinline int unwind_after_call(__u64 addr)
{
	__u8 b[8];	/* b[7] is the byte before addr */
	__u8 m;

	if (addr < 4096)
		return 0;
	if (bpf_probe_read_user(b, sizeof(b), (void *)(addr - sizeof(b))))
		return 0;
	if (b[3] == 0xe8)				/* call rel32 */
		return 1;
	m = b[7];
	if (b[6] == 0xff && ((m & 0xf8) == 0xd0 ||	/* call *%reg */
			     ((m & 0xf8) == 0x10 && (m & 7) != 4 && (m & 7) != 5)))
		return 1;				/* call *(%reg) */
	m = b[6];
	if (b[5] == 0xff && (((m & 0xf8) == 0x50 && (m & 7) != 4) ||	/* *d8(%reg) */
			     (m == 0x14 && (b[7] & 7) != 5)))		/* *(sib) */
		return 1;
	if (b[4] == 0xff && b[5] == 0x54)		/* *d8(sib) */
		return 1;
	m = b[3];
	if (b[2] == 0xff && (m == 0x15 || ((m & 0xf8) == 0x90 && (m & 7) != 4)))
		return 1;				/* *d32(%rip), *d32(%reg) */
	if (b[1] == 0xff && (b[2] == 0x94 || (b[2] == 0x14 && (b[3] & 7) == 5)))
		return 1;				/* *d32(sib) */
	return 0;
}

/* 1 when addr is a return address in proc's code: in one of its executable mappings, right
 * after a call instruction. (Two global functions, not one calling the other: that made a
 * call chain one frame deeper than the verifier's 8 in kmem's programs.) */
static __always_inline int unwind_is_ret(struct unwind_proc *proc, __u64 addr)
{
	return proc && addr >= 4096 && unwind_in_maps(proc, addr) && unwind_after_call(addr);
}

/* 1 when the frame-pointer record at bp is the own of a frame where the thread was, in code
 * without a table: bp a little above sp (UNWIND_OWN_WORDS words) and none of the words
 * between them a return address: a function that set up no frame would have its own return
 * address there, below its caller's record at bp (a caller keeping no frame pointer has none
 * in %rbp, which is then no record, or unreadable, or far away). A word that may be one is
 * enough to say no: in code after a call, or outside every mapping of proc's (code it does not
 * know: a process walked by file has none). The words are read into the scratch's buffer,
 * free while a walk runs. A global function. */
#define UNWIND_OWN_WORDS	16

__noinline int unwind_own_frame(struct unwind_proc *proc, struct unwind_scratch *scr, __u64 sp,
				 __u64 bp)
{
	__u64 *w;
	__u32 n, tok;

	if (!proc || !scr || bp <= sp || bp - sp > UNWIND_OWN_WORDS * 8 || ((bp - sp) & 7))
		return 0;
	/* (the seq as unwind_scache_lookup takes it: a walk on this CPU meanwhile, which
	 * may have written the buffer, makes the answer no) */
	tok = __sync_add_and_fetch(&scr->seq, 1);
	if (bpf_probe_read_user(scr->buf, UNWIND_OWN_WORDS * 8, (void *)sp))
		return 0;
	w = (__u64 *)scr->buf;
	n = (__u32)(bp - sp) / 8;
	for (__u32 i = 0; i < UNWIND_OWN_WORDS; i++) {
		__u64 v;

		if (i >= n)
			break;
		v = w[i];
		/* no code: a small number, an address in the stack */
		if (v < 4096 || (v > sp - (8 << 20) && v < sp + (8 << 20)))
			continue;
		/* in no mapping the entry knows (none, walking by file; code mapped since its
		 * load): maybe a return address, or a return address after a call */
		if (!unwind_in_maps(proc, v) || unwind_after_call(v))
			return 0;
	}
	asm volatile("" ::: "memory");
	return *(volatile __u32 *)&scr->seq == tok;
}

/* Where a walk's addresses go */
struct unwind_ips {
	__u64 ip[STACK_MAX_DEPTH];
};

/* Step i: ips[i] = the frame's ip, then its caller's registers. 1 ends the walk. A global
 * function, verified once on its own: as bpf_loop's callback body the verifier followed it
 * again for each state the walk could be in after a step and each call site's state (~50
 * times in cpu's program: 18,000 instructions processed, ~24 ms of its load, now ~5,000 and
 * ~6 ms; mem's exit probe 108,000 -> 50,000). It costs a step one BPF-to-BPF call. */
__noinline int unwind_frame(__u64 i, struct unwind_ctx *u, struct unwind_ips *ips,
			    struct unwind_proc *proc, struct unwind_scratch *scr)
{
	struct unwind_row row, *r = &row;
	__u64 cfa, ra = 0, bp;
	__u8 rule;

	if (!u || !ips || !scr)
		return 1;
	bp = u->bp;
	asm volatile("" : "+r"(i));
	if (i >= STACK_MAX_DEPTH)
		return 1;
	if (i == STACK_MAX_DEPTH - 1) {
		/* no room for a caller: the stack goes on deeper than a stack holds */
		ips->ip[i] = UNWIND_TRUNCATED;
		u->nr = i + 1;
		u->end = UNWIND_STAT_DEPTH;
		return 1;
	}
	ips->ip[i] = u->ip;
	u->nr = i + 1;

	u->look.ip = u->ip;
	u->look.look = u->ip - (u->exact ? 0 : 1);
	u->look.tgid = u->tgid;
	u->look.by_file = 0;
	switch (unwind_rule(proc, &u->look, &row)) {
	case 0:
		break;
	case 1:
		/* code mapped since the process's load whose file has no table yet: the frames
		 * so far are right, a walk on by frame pointers may not be */
		if (i + 1 < STACK_MAX_DEPTH) {
			ips->ip[i + 1] = UNWIND_TRUNCATED;
			u->nr = i + 2;
		}
		u->end = UNWIND_STAT_UNMAPPED;
		return 1;
	default:
		goto truncated;
	}
	if (u->look.by_file)
		scr->nocache = 1;
	rule = row.cfa;
	switch (rule) {
	case UNWIND_CFA_RSP:
		cfa = u->sp + (__s64)r->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		unwind_use_bp(u, scr);
		cfa = u->bp + (__s64)r->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = u->sp + (__s64)r->cfa_off +
		      ((u->ip & 15) >= (__u64)r->rbp_off ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_RBP:
		unwind_use_bp(u, scr);
		if (unwind_read(u, scr, u->bp + (__s64)r->cfa_off, &cfa))
			goto truncated;
		break;
	case UNWIND_CFA_SIGNAL: {
		__u64 nsp;

		/* the interrupted registers, from the ucontext at rsp */
		if (unwind_read(u, scr, u->sp + (__s64)r->cfa_off, &nsp) ||
		    unwind_read(u, scr, u->sp + (__s64)r->cfa_off + 8, &ra) ||
		    unwind_read(u, scr, u->sp + (__s64)r->rbp_off, &bp))
			goto truncated;
		u->ip = ra;
		u->sp = nsp;
		u->bp = bp;
		scr->bpdep = UNWIND_BP_KNOWN;	/* its word is in the log */
		u->exact = 1;
		u->rbx_ok = 0;
		return ra ? 0 : 1;
	}
	case UNWIND_CFA_RBX:
		/* the first frame's rbx (the sample's, the event's), or where the frames below
		 * saved it (callee-saved: each row says) */
		if (!u->rbx_ok) {
			unwind_count(UNWIND_STAT_REG_CFA);
			goto truncated;
		}
		cfa = u->rbx;
		if (u->rbx_at && unwind_read(u, scr, u->rbx_at, &cfa))
			goto truncated;
		cfa += (__s64)r->cfa_off;
		/* the walk depends on a register the stack cache does not key on */
		scr->nocache = 1;
		break;
	case UNWIND_CFA_RDI:
	case UNWIND_CFA_RDX: {
		/* registers known in the first frame only (call-clobbered: no row says where a
		 * frame above the first had them) */
		if (i != 0 || !u->leaf) {
			unwind_count(UNWIND_STAT_REG_CFA);
			goto truncated;
		}
		cfa = rule == UNWIND_CFA_RDI ? u->rdi : u->rdx;
		cfa += (__s64)r->cfa_off;
		scr->nocache = 1;
		break;
	}
	case UNWIND_CFA_CLONE:
		/* where clone's parent and child both return (a first frame only: no call
		 * returns there): the child (rax 0) starts there, the stack whole; the parent's
		 * frame is still its entry's */
		if (i != 0 || !u->leaf) {
			unwind_count(UNWIND_STAT_REG_CFA);
			goto truncated;
		}
		if (!u->rax) {
			u->end = UNWIND_STAT_COMPLETE;
			return 1;
		}
		cfa = u->sp + (__s64)r->cfa_off;
		scr->nocache = 1;	/* the walk depends on rax */
		break;
	case UNWIND_CFA_RA_RDI:
		/* the return address in rdi (glibc's __vfork across its system call): known in
		 * the first frame only; rbp and rbx unchanged (the row says so) */
		if (i != 0 || !u->leaf) {
			unwind_count(UNWIND_STAT_REG_CFA);
			goto truncated;
		}
		cfa = u->sp + (__s64)r->cfa_off;
		if (cfa < u->sp || !u->rdi)
			goto truncated;
		scr->nocache = 1;	/* the walk depends on rdi */
		if (r->rbx != UNWIND_RBX_SAME)
			u->rbx_ok = 0;
		u->ip = u->rdi;
		u->sp = cfa;
		u->exact = 0;
		return 0;
	case UNWIND_CFA_END:
		u->end = UNWIND_STAT_COMPLETE;
		return 1;
	case UNWIND_CFA_NONE:
		break;
	default:
		goto truncated;
	}
	if (rule != UNWIND_CFA_NONE) {
		if (cfa <= u->sp)
			goto truncated;
		if (r->rbp == UNWIND_RBP_AT && r->rbp_off == -16) {
			/* push %rbp first: both in one read, by stack.bpf.h's
			 * read_frame (its small frame makes the read cheaper) */
			struct frame_rec pair;

			if (read_frame(cfa - 16, &pair))
				goto truncated;
			bp = pair.next;
			ra = pair.ret;
			unwind_saved_bp(scr, cfa - 16);
			unwind_log(u, scr, cfa - 8, ra);
		} else if (unwind_read(u, scr, cfa - 8, &ra)) {
			goto truncated;
		} else if (r->rbp == UNWIND_RBP_AT) {
			/* not in the log until used (unwind_use_bp) */
			if (unwind_read_word(NULL, u->sp0, cfa + (__s64)r->rbp_off, &bp))
				goto truncated;
			unwind_saved_bp(scr, cfa + (__s64)r->rbp_off);
		} else if (r->rbp == UNWIND_RBP_UNDEF) {
			bp = 0;
			scr->bpdep = UNWIND_BP_KNOWN;
		}
	}
	if (rule == UNWIND_CFA_NONE && u->exact) {
		/* where the thread was (the first frame, or one a signal interrupted), in code
		 * without a table: the record at rbp is its own only if it set up its frame,
		 * else its caller's, whose caller the walk would then take for its own (a JIT
		 * leaf, a function built without frame pointers: its caller silently left out).
		 * Known in three cases: a return address at [rsp] (nothing pushed yet: its
		 * caller is there, and the walk goes on from it with its own rule), rbp == rsp
		 * (its frame just set up), or rbp a little above rsp with no return address
		 * between them (unwind_own_frame). Else the caller is not known: [truncated]. */
		__u64 w;

		/* the checks read code (a JIT's can change) and words outside the log: not for
		 * the stack cache */
		scr->nocache = 1;
		unwind_use_bp(u, scr);
		if (unwind_read(u, scr, u->sp, &w))
			goto truncated;
		if (unwind_is_ret(proc, w)) {
			u->rbx_ok = 0;
			unwind_count(UNWIND_STAT_FP_FRAMES);
			u->ip = w;
			u->sp += 8;
			u->exact = 0;
			return 0;
		}
		if (u->bp != u->sp && !unwind_own_frame(proc, scr, u->sp, u->bp))
			goto truncated;
	}
	if (rule == UNWIND_CFA_NONE) {
		/* no call frame information here: the frame pointer's record. rbp 0 is no frame:
		 * an outermost function has a table that says so (_start's, clone's; ld.so's
		 * _start, which has none, gets one from the table's builder: the ELF entry
		 * point), and anything else with rbp 0 here is code that keeps no frame
		 * pointer, whose caller is not known */
		struct frame_rec rec;

		unwind_use_bp(u, scr);
		if (u->bp < 4096 || (u->bp & 7) || u->bp < u->sp || read_frame(u->bp, &rec))
			goto truncated;
		bp = rec.next;
		ra = rec.ret;
		unwind_saved_bp(scr, u->bp);
		unwind_log(u, scr, u->bp + 8, ra);
		cfa = u->bp + 16;
		u->rbx_ok = 0;
		unwind_count(UNWIND_STAT_FP_FRAMES);
		/* counted in the scratch (map memory): a count in u, which the verifier tracks,
		 * made it follow the walk step by step (loading several times slower) */
		scr->nfp++;
	}
	if (!ra) {
		u->end = UNWIND_STAT_COMPLETE;
		return 1;
	}
	/* the caller's rbx: where this frame saved it, or unchanged */
	if (rule != UNWIND_CFA_NONE && r->rbx == UNWIND_RBX_UNKNOWN) {
		u->rbx_ok = 0;
	} else if (rule != UNWIND_CFA_NONE && r->rbx != UNWIND_RBX_SAME) {
		u->rbx_at = cfa - 8 * (__u64)r->rbx;
		u->rbx_ok = 1;
	}
	u->ip = ra;
	u->sp = cfa;
	u->bp = bp;
	u->exact = 0;
	return 0;

truncated:
	if (i + 1 < STACK_MAX_DEPTH) {
		ips->ip[i + 1] = UNWIND_TRUNCATED;
		u->nr = i + 2;
	}
	u->end = UNWIND_STAT_TRUNCATED;
	return 1;
}

/* bpf_loop's context: what unwind_frame is given */
struct unwind_loop {
	struct unwind_ctx *u;
	struct unwind_ips *ips;
	struct unwind_proc *proc;
	struct unwind_scratch *scr;
};

static long unwind_step(__u64 i, void *data)
{
	struct unwind_loop *l = data;

	return unwind_frame(i, l->u, l->ips, l->proc, l->scr) ? 1 : 0;
}

/* The current task's address space as the collector identifies it (abi/unwind.h). BTF
 * pointers: plain loads the JIT guards (a NULL mm, an exiting task's, reads 0), not a helper
 * call per field (six of them, ~160 ns at every stack). A mode whose programs run seldom
 * (cpu: 99 Hz a CPU) defines UNWIND_IDENT_BY_READS: the verifier checks each BTF pointer load
 * against the kernel's "__safe_trusted" types by a search of all its type names (~2 ms of
 * every start for cpu's program), more than its samples' reads cost in minutes. */
static __always_inline void unwind_cur_ident(struct unwind_ident *id)
{
	struct task_struct *task = bpf_get_current_task_btf();
#ifdef UNWIND_IDENT_BY_READS
	id->start_time = BPF_CORE_READ(task, group_leader, start_boottime) /
			 (1000000000ULL / UNWIND_USER_HZ);
	id->start_stack = BPF_CORE_READ(task, mm, start_stack);
	id->end_code = BPF_CORE_READ(task, mm, end_code);
#else
	struct mm_struct *mm = task->mm;

	id->start_time = task->group_leader->start_boottime / (1000000000ULL / UNWIND_USER_HZ);
	id->start_stack = mm->start_stack;
	id->end_code = mm->end_code;
#endif
}

static __always_inline __u64 unwind_ident_hash(const struct unwind_ident *id)
{
	__u64 h = id->start_time * 0x9e3779b97f4a7c15ULL;

	h = (h ^ id->start_stack) * 0xff51afd7ed558ccdULL;
	h = (h ^ id->end_code) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

/* A process without a usable entry (none yet, or another program's): the collector is asked to
 * load it, once per program (a ring buffer full now: asked again at a later stack), and woken:
 * it loads the process at once (core/unwind.c, within a budget a tick), since until then its
 * stacks end at their second file (unwind_rule_by_file) */
static __always_inline void unwind_ask(__u32 tgid, const struct unwind_ident *id)
{
	__u64 h = unwind_ident_hash(id), *last;

	if (!id->start_stack)	/* no address space (exiting) */
		return;
	last = bpf_map_lookup_elem(&unwind_asked, &tgid);
	if (last && *last == h)
		return;
	if (bpf_ringbuf_output(&unwind_stale, &tgid, sizeof(tgid), 0))
		return;
	bpf_map_update_elem(&unwind_asked, &tgid, &h, BPF_ANY);
}

/* 1 when proc, tgid's entry (NULL: none), holds the current program's mappings; else 0, and
 * the collector is asked to load it (unwind_ask). A global function: verified once, on its own
 * (inlined, its branches multiplied the states of every caller's walk: a slower start-up). */
__noinline int unwind_usable(struct unwind_proc *proc, __u32 tgid)
{
	struct unwind_ident id;

	unwind_cur_ident(&id);
	if (proc) {
		if (proc->ident.start_time == id.start_time &&
		    proc->ident.start_stack == id.start_stack &&
		    proc->ident.end_code == id.end_code)
			return 1;
		unwind_count(UNWIND_STAT_OTHER_PROG);
	}
	unwind_count(UNWIND_STAT_NO_PROC);
	unwind_ask(tgid, &id);
	return 0;
}

/* The tgid of the current process's parent (its leader's real_parent), 0 if none */
static __always_inline __u32 unwind_parent_tgid(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (__u32)BPF_CORE_READ(task, group_leader, real_parent, tgid);
}

/* 1 when p, the entry of the current process's parent, holds the current process's code
 * mappings: a child that has not exec'd since its fork (the task's exec id is still the one
 * it was forked with), in the address space the entry was read from (start_stack, randomized
 * at each exec, and end_code: one exec's image, the parent's since or not) and with as many
 * pages of code as the entry's load counted (mm->exec_vm: an executable mapping made or let
 * go since the load, by the parent before the fork or by the child since, changes it). A
 * child whose code mappings differ is never walked with its parent's rules: it goes by file.
 * Read with helpers, not BTF pointer loads: a rare path (a child's first stacks), and each
 * program's verification stays as it was. A global function: verified once. */
__noinline int unwind_borrowable(struct unwind_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 start_stack, end_code, exec_vm;

	if (!p || !p->exec_pages)
		return 0;
	if (BPF_CORE_READ(task, self_exec_id) != BPF_CORE_READ(task, parent_exec_id))
		return 0;
	start_stack = BPF_CORE_READ(task, mm, start_stack);
	end_code = BPF_CORE_READ(task, mm, end_code);
	exec_vm = BPF_CORE_READ(task, mm, exec_vm);
	return start_stack && start_stack == p->ident.start_stack &&
	       end_code == p->ident.end_code && exec_vm == p->exec_pages;
}

/* Where a walk starts (the stack cache's key) and, for its caller, the entry's seq and the
 * scratch's token that unwind_scache_lookup / unwind_scache_lock took */
struct unwind_skey {
	__u64 ip, sp, bp;
	__u32 tgid, gen;
	__u32 seq, tok;
	__u32 epoch, anygen;	/* anygen: whatever its gen, when its epoch is epoch */
	__u32 slot, pad;
	struct unwind_ident ident;
};

/* The stack cache's entry e for k: its number of addresses when it holds the stack walked from
 * k's registers and every word its walk read reads the same again (its span above sp, at once
 * into the scratch buffer), else 0. A global function: verified once. */
__noinline int unwind_scache_lookup(struct unwind_scache_ent *e, struct unwind_scratch *s,
				    struct unwind_skey *k)
{
	__u32 seq, nr, span, n, off;

	if (!e || !s || !k)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	asm volatile("" ::: "memory");
	if ((seq & 1) || e->tgid != k->tgid || (e->gen != k->gen && !k->anygen) ||
	    e->ip != k->ip || e->sp != k->sp || (e->bp != k->bp && !e->bpany))
		return 0;
	nr = e->nr;
	span = e->span;
	n = e->nreads;
	if (!nr || nr > UNWIND_SCACHE_FRAMES || !span || span > UNWIND_SCACHE_SPAN ||
	    n > UNWIND_SCACHE_READS)
		return 0;
	k->seq = seq;
	k->tok = __sync_add_and_fetch(&s->seq, 1);
	if (bpf_probe_read_user(s->buf, span, (void *)k->sp))
		return 0;
	for (__u32 i = 0; i < UNWIND_SCACHE_READS; i++) {
		if (i >= n)
			break;
		off = e->off[i];
		if (off > UNWIND_SCACHE_SPAN - 8)
			return 0;
		if (*(__u64 *)(s->buf + off) != e->val[i])
			return 0;
	}
	return (int)nr;
}

/* e taken for writing (its seq odd, k->seq the even value before) with k's key: 1, or 0 when
 * another task on this CPU is writing it. A global function: verified once. */
__noinline int unwind_scache_lock(struct unwind_scache_ent *e, struct unwind_skey *k)
{
	__u32 seq;

	if (!e || !k)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	if ((seq & 1) || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq)
		return 0;
	asm volatile("" ::: "memory");
	k->seq = seq;
	e->tgid = k->tgid;
	e->gen = k->gen;
	e->epoch = k->epoch;
	e->ident = k->ident;
	e->ip = k->ip;
	e->sp = k->sp;
	e->bp = k->bp;
	return 1;
}

/* The walk's log into e (locked by unwind_scache_lock), nr addresses (already in e->ips), and
 * the count of those by frame pointers; e released: 1 when it holds the stack. A log another
 * walk on this CPU wrote into meanwhile (the scratch's seq not k->tok) leaves e empty (0). A
 * global function. */
__noinline int unwind_scache_unlock(struct unwind_scache_ent *e, struct unwind_scratch *s,
				    struct unwind_skey *k, __u32 nr)
{
	__u32 n;
	int kept = 0;

	if (!e || !s || !k)
		return 0;
	n = s->nreads;
	e->nr = 0;
	if (n <= UNWIND_SCACHE_READS && s->span && s->span <= UNWIND_SCACHE_SPAN) {
		for (__u32 i = 0; i < UNWIND_SCACHE_READS; i++) {
			if (i >= n)
				break;
			e->off[i] = s->off[i];
			e->val[i] = s->val[i];
		}
		e->nreads = n;
		e->span = s->span;
		e->nfp = s->nfp;
		e->bpany = !s->bpkey;
		asm volatile("" ::: "memory");
		if (*(volatile __u32 *)&s->seq == k->tok) {
			e->nr = nr;
			kept = 1;
		}
	}
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&e->seq = k->seq + 2;
	return kept;
}

/* Where a walk starts: the registers at ip (a return address's: as after the return); rbx,
 * rdi, rdx, rax when leaf (a frame whose CFA is in one of them is unwound in the first frame
 * only; rax tells clone's child from its parent).
 * want: the caller interns stacks by hash in a map that loses no entry while their process can
 * still hit the cache with them, and notes them (unwind_scache_note): a hit noted so gives hash, not the addresses. Out: hash (0: the
 * addresses are in out), and where the stack returned is cached (cached; slot, seq: the
 * entry and its seq), for unwind_scache_note. */
struct unwind_start {
	__u64 ip, sp, bp;
	__u64 rbx, rdi, rdx, rax;
	__u32 leaf, want;
	__u64 hash;
	__u32 cached, slot, seq, pad;
};

/* A hit in e for k: its stack (or with st->want, its noted hash: st->hash) and the number of
 * addresses, else 0. k->anygen: an entry of any gen whose epoch and ident are k's (checked
 * after its seq was read: the seq's check at the end vouches for all read between). A global
 * function. */
__noinline int unwind_scache_take(struct unwind_scache_ent *e, struct unwind_scratch *scr,
				  struct unwind_skey *k, struct unwind_start *st,
				  struct unwind_ips *out)
{
	__u64 h = 0;
	int nr;

	if (!e || !scr || !k || !st || !out)
		return 0;
	nr = unwind_scache_lookup(e, scr, k);
	if (nr <= 0 || nr > UNWIND_SCACHE_FRAMES)
		return 0;
	if (k->anygen && (e->epoch != k->epoch || e->ident.start_time != k->ident.start_time ||
			  e->ident.start_stack != k->ident.start_stack ||
			  e->ident.end_code != k->ident.end_code))
		return 0;
	/* the caller's hash of this very stack, interned: its addresses are not needed (read
	 * before the check of seq below, which vouches for it) */
	if (st->want && e->hseq == k->seq)
		h = e->hash;
	/* else copied by plain loads and stores: a helper call costs more than the ~13 words a
	 * stack has */
	for (__u32 i = 0; i < UNWIND_SCACHE_FRAMES && !h; i++) {
		if (i >= (__u32)nr)
			break;
		out->ip[i] = e->ips[i];
	}
	if (e->nfp)
		unwind_count_n(UNWIND_STAT_FP_FRAMES, e->nfp);
	asm volatile("" ::: "memory");
	/* nobody on this CPU wrote the entry or the buffer meanwhile */
	if (*(volatile __u32 *)&e->seq != k->seq || *(volatile __u32 *)&scr->seq != k->tok)
		return 0;
	unwind_count(UNWIND_STAT_COMPLETE);
	unwind_count(UNWIND_STAT_CACHED);
	st->hash = h;
	st->cached = 1;
	st->slot = k->slot;
	st->seq = k->seq;
	return nr;
}

/* The first entry of the set (UNWIND_SCACHE_WAYS entries in a row) where a walk from (ip, sp)
 * of process tgid is kept */
static __always_inline __u32 unwind_scache_slot(__u32 tgid, __u64 ip, __u64 sp)
{
	__u64 h = (ip ^ (sp << 7) ^ ((__u64)tgid << 40)) * 0x9e3779b97f4a7c15ULL;

	return ((__u32)(h >> 40) & (UNWIND_SCACHE_SIZE / UNWIND_SCACHE_WAYS - 1)) *
	       UNWIND_SCACHE_WAYS;
}

/* e was walked in the current process's program with the process entries as they are now
 * (k's epoch): whatever its gen, its tables were the process's own */
static __always_inline bool unwind_scache_same(const struct unwind_scache_ent *e,
					       const struct unwind_skey *k)
{
	return e && e->epoch == k->epoch && e->tgid == k->tgid &&
	       e->ident.start_time == k->ident.start_time &&
	       e->ident.start_stack == k->ident.start_stack &&
	       e->ident.end_code == k->ident.end_code;
}

/* A hit in entry e of the set whose first entry is e0, at slot (way w): as unwind_scache_take,
 * and w noted as the way used last */
static __always_inline int unwind_scache_way(struct unwind_scache_ent *e0,
					     struct unwind_scache_ent *e, __u32 w, __u32 slot,
					     struct unwind_scratch *scr, struct unwind_skey *k,
					     struct unwind_start *st, struct unwind_ips *out)
{
	int nr;

	k->slot = slot;
	nr = unwind_scache_take(e, scr, k, st, out);
	if (nr > 0 && e0)
		e0->lastw = w;
	return nr;
}

/* The stack of the current process from st into out; the number of addresses. A process whose
 * entry is missing (not loaded yet, the map full) or holds another program's mappings (its
 * identity differs: an exec since, a reused PID) is walked by file alone (unwind_rule_by_file:
 * the stack ends in [truncated] where no table is known, never a guess) and the collector is
 * asked to load it (unwind_usable). A stack the
 * walk found from the same registers before, whose words read are the same, comes from the
 * per-CPU stack cache. A global function: verified once per program, not at each of the
 * modes' call sites with their states (and its two ways out, the cache's and the walk's, do
 * not double the caller's paths after it). */
__noinline int unwind_walk(struct unwind_ips *out, struct unwind_start *st)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0, slot;
	struct unwind_skey k = {};
	struct unwind_ctx u = { .exact = 1, .end = UNWIND_STAT_TRUNCATED, .tgid = tgid };
	struct unwind_loop l = { .u = &u };
	struct unwind_scache_ent *e, *e1;
	struct unwind_scratch *scr;
	bool tried = false, tried1 = false;
	__u32 *ep, slot1, fill;
	int nr;

	if (!out || !st)
		return -1;
	st->hash = 0;
	st->cached = 0;
	l.ips = out;
	u.ip = k.ip = st->ip;
	u.sp = u.sp0 = k.sp = st->sp;
	u.bp = k.bp = st->bp;
	u.rbx = st->rbx;
	u.rdi = st->rdi;
	u.rdx = st->rdx;
	u.rax = st->rax;
	u.leaf = st->leaf;
	u.rbx_ok = st->leaf;
	k.tgid = tgid;
	/* never NULL (one entry, key 0): checked once here, not at each use in the walk */
	scr = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!scr)
		return -1;
	l.scr = scr;
	/* the collector's count of changes to the process entries, before the lookup of this
	 * one: an entry walked with it, of the same program, was walked with this one's tables
	 * as they are (no lookup needed) */
	ep = bpf_map_lookup_elem(&unwind_epoch, &zero);
	k.epoch = ep ? *(volatile __u32 *)ep : 0;
	asm volatile("" ::: "memory");
	/* the set's two entries: two stacks from the same registers (one call site reached
	 * from two callers with the frames alike, in turn) are both kept; the way last used
	 * is noted in the first */
	slot = unwind_scache_slot(tgid, k.ip, k.sp);
	slot1 = slot + 1;
	e = bpf_map_lookup_elem(&unwind_scache, &slot);
	e1 = bpf_map_lookup_elem(&unwind_scache, &slot1);
	unwind_cur_ident(&k.ident);
	k.anygen = 1;
	if (unwind_scache_same(e, &k)) {
		nr = unwind_scache_way(e, e, 0, slot, scr, &k, st, out);
		if (nr > 0)
			return nr;
		/* the same entry's words differ: a walk, without reading them again */
		tried = true;
	}
	if (unwind_scache_same(e1, &k)) {
		nr = unwind_scache_way(e, e1, 1, slot1, scr, &k, st, out);
		if (nr > 0)
			return nr;
		tried1 = true;
	}
	k.anygen = 0;
	l.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	/* (usable implies an entry; the verifier is told so by testing it again) */
	if (!unwind_usable(l.proc, tgid) || !l.proc) {
		/* a child forked without exec that has its parent's code mappings: the
		 * parent's entry (its own is asked for); else by file alone: an entry without
		 * mappings (a NULL one here made every program's verification several times
		 * longer). Nothing from or into the stack cache either way (a walk by file is
		 * never kept there, and its entries are keyed by the process's own gen). */
		__u32 ptgid = unwind_parent_tgid();

		l.proc = ptgid && ptgid != tgid ? bpf_map_lookup_elem(&unwind_procs, &ptgid) :
						  NULL;
		if (l.proc && unwind_borrowable(l.proc)) {
			u.look.borrowed = 1;
			unwind_count(UNWIND_STAT_PARENT);
		} else {
			l.proc = bpf_map_lookup_elem(&unwind_noproc, &zero);
			if (!l.proc)
				return -1;
			l.proc->stale = 1;
		}
		e = NULL;
		e1 = NULL;
	}
	k.gen = l.proc->gen;
	if (e && !tried) {
		nr = unwind_scache_way(e, e, 0, slot, scr, &k, st, out);
		if (nr > 0)
			return nr;
	}
	if (e1 && !tried1) {
		nr = unwind_scache_way(e, e1, 1, slot1, scr, &k, st, out);
		if (nr > 0)
			return nr;
	}
	k.tok = __sync_add_and_fetch(&scr->seq, 1);
	scr->nreads = 0;
	scr->span = 0;
	scr->nocache = 0;
	scr->nfp = 0;
	scr->bpkey = 0;
	scr->bpdep = UNWIND_BP_REG;
	bpf_loop(STACK_MAX_DEPTH, unwind_step, &l, 0);
	unwind_count(u.end);
	/* what unwind_frame wrote is unknown to the verifier: the bound it had before, in a
	 * register of its own (u's memory is unknown again after each call) */
	nr = u.nr < STACK_MAX_DEPTH ? (int)u.nr : STACK_MAX_DEPTH;
	/* kept in the way not used last, which is then the last */
	fill = e && e->lastw == 0 ? 1 : 0;
	if (fill) {
		k.slot = slot1;
		if (e)
			e->lastw = 1;
		e = e1;
	} else {
		k.slot = slot;
		if (e)
			e->lastw = 0;
	}
	if (u.end == UNWIND_STAT_COMPLETE && e && !scr->nocache && nr > 0 &&
	    nr <= UNWIND_SCACHE_FRAMES && unwind_scache_lock(e, &k)) {
		__u32 n = (__u32)nr & (2 * UNWIND_SCACHE_FRAMES - 1);

		if (n > UNWIND_SCACHE_FRAMES)
			n = UNWIND_SCACHE_FRAMES;
		if (bpf_probe_read_kernel(e->ips, n * sizeof(__u64), out->ip))
			n = 0;	/* (cannot fail) */
		if (unwind_scache_unlock(e, scr, &k, n) && n == (__u32)nr) {
			st->cached = 1;
			st->slot = k.slot;
			st->seq = k.seq + 2;
		}
	}
	return nr;
}

/* Note h, the hash under which the caller interned the stack unwind_walk gave from st (st->want
 * set, st->hash 0), with its stack cache entry: the entry's later hits give h alone. Only for
 * a map that loses no entry while the entry's address space can still hit it (the hits skip
 * the map: mem's stacks of a process are forgotten when it has ended). The entry is taken as a fill takes
 * it (its seq odd, then the next even value, which the note names): a reader of the entry
 * before sees its seq changed and does not use what it read (a note written while a reader
 * checked another stack's words in the same entry could pair that stack with this hash). */
static __always_inline void unwind_scache_note(const struct unwind_start *st, __u64 h)
{
	struct unwind_scache_ent *e;
	__u32 slot = st->slot, seq = st->seq;

	if (!st->cached || !h || (seq & 1))
		return;
	e = bpf_map_lookup_elem(&unwind_scache, &slot);
	if (!e || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq)
		return;
	asm volatile("" ::: "memory");
	e->hash = h;
	e->hseq = seq + 2;
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&e->seq = seq + 2;
}

/* The stack of the current process from registers (ip, sp, bp; leaf: all of them, may be NULL)
 * as they are at ip (a return address's: as after the return) into ips (STACK_MAX_DEPTH of
 * them); the number of addresses (unwind_walk), or -1 without tables (unwind_mode 0): the
 * caller walks frame pointers. */
static __always_inline long unwind_user_start(__u64 *ips, struct unwind_start *st)
{
	long n;

	if (!unwind_mode)
		return -1;
	n = unwind_walk((struct unwind_ips *)ips, st);
	/* what unwind_walk returns is unknown to the verifier: the bound it has */
	return n < STACK_MAX_DEPTH ? n : STACK_MAX_DEPTH;
}

static __always_inline long unwind_user_leaf(__u64 *ips, __u64 ip, __u64 sp, __u64 bp,
					     struct pt_regs *leaf)
{
	struct unwind_start st = { .ip = ip, .sp = sp, .bp = bp };

	if (!unwind_mode)
		return -1;
	if (leaf) {
		st.rbx = BPF_CORE_READ(leaf, bx);
		st.rdi = BPF_CORE_READ(leaf, di);
		st.rdx = BPF_CORE_READ(leaf, dx);
		st.rax = BPF_CORE_READ(leaf, ax);
		st.leaf = 1;
	}
	return unwind_user_start(ips, &st);
}

/* The same without the first frame's other registers (a frame whose CFA is in rbx, rdi or rdx
 * ends the stack, UNWIND_STAT_REG_CFA) */
static __always_inline long unwind_user(__u64 *ips, __u64 ip, __u64 sp, __u64 bp)
{
	return unwind_user_leaf(ips, ip, sp, bp, NULL);
}

/* At the loader's hook (_dl_debug_state, attached per process by the collector where it
 * traces the process: core/unwind.c): a thread the collector traces is held (abi/unwind.h),
 * so that code just mapped has its table before it runs. After an exec the new program's
 * startup is held there too: mem's readiness takes those stops (modes/mem/ready.c), since
 * its own breakpoint cannot share the address with this probe's. Every other thread goes on:
 * its new code waits for the collector's tick. */
SEC("uprobe")
int unwind_dl_hook(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, zero = 0, one = 1, *tracer;

	tracer = bpf_map_lookup_elem(&unwind_tracer, &zero);
	if (!unwind_mode || !tracer || !*tracer || !BPF_CORE_READ(task, ptrace) ||
	    (__u32)BPF_CORE_READ(task, parent, tgid) != *tracer)
		return 0;
	if (bpf_map_update_elem(&unwind_holds, &tid, &one, BPF_ANY))
		return 0;
	if (bpf_send_signal_thread(UNWIND_HOLD_SIG)) {
		bpf_map_delete_elem(&unwind_holds, &tid);
		return 0;
	}
	unwind_count(UNWIND_STAT_HELD);
	return 0;
}

#endif
