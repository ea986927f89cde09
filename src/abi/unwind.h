/* Unwind tables as the collector builds them (symbolize/unwind.c) and the BPF unwinder reads
 * them (bpf/lib/stack.bpf.h): rows of CFA rules from an object's .eh_frame / .debug_frame, and
 * each traced process's executable mappings pointing at them. Types and limits only. */
#ifndef EBPROF_ABI_UNWIND_H
#define EBPROF_ABI_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How the CFA (the caller's rsp) is found from the frame's registers at a pc. */
enum unwind_cfa {
	UNWIND_CFA_NONE = 0,	/* no unwind information covers this pc */
	UNWIND_CFA_RSP,		/* rsp + cfa_off */
	UNWIND_CFA_RBP,		/* rbp + cfa_off */
	UNWIND_CFA_PLT,		/* a PLT entry: rsp + cfa_off, + 8 when (pc & 15) >= rbp_off */
	UNWIND_CFA_DEREF_RBP,	/* *(rbp + cfa_off): a function that realigned its stack */
	UNWIND_CFA_SIGNAL,	/* a signal frame (__restore_rt): rsp' = *(rsp + cfa_off),
				 * rip' = *(rsp + cfa_off + 8), rbp' = *(rsp + rbp_off) */
	UNWIND_CFA_END,		/* the return address is undefined: the outermost frame */
	UNWIND_CFA_UNKNOWN,	/* a rule the unwinder does not implement: the stack stops
				 * here, marked truncated */
	UNWIND_CFA_RBX,		/* rbx + cfa_off (ld.so's _dl_runtime_resolve, which realigns
				 * its stack): */
	UNWIND_CFA_RDI,		/* rdi + cfa_off */
	UNWIND_CFA_RDX,		/* rdx + cfa_off: registers the unwinder knows in the first
				 * frame only (the sample's, the event's; rbx further up too
				 * where every frame below says where it is: UNWIND_RBX_*): a
				 * frame further up with such a rule ends the stack
				 * (UNWIND_STAT_REG_CFA) */
	UNWIND_CFA_CLONE,	/* glibc's clone and clone3 right after their system call, where
				 * parent and child both return: rsp + cfa_off in the parent; the
				 * child's outermost frame (rax 0, a first frame's register) */
	UNWIND_CFA_RA_RDI,	/* rsp + cfa_off, the return address in rdi, not on the stack
				 * (glibc's __vfork pops it there to keep it across its system
				 * call, which the child returns from first): a first frame
				 * only, as UNWIND_CFA_RDI */
};

enum unwind_rbp {
	UNWIND_RBP_SAME = 0,	/* unchanged by this frame */
	UNWIND_RBP_AT,		/* saved at CFA + rbp_off */
	UNWIND_RBP_UNDEF,	/* not recoverable */
};

/* Where the caller's %rbx is (a row's rbx, 6 bits), for a frame further up whose CFA is in
 * rbx (UNWIND_CFA_RBX: ld.so's _dl_runtime_resolve, _dl_tlsdesc_dynamic): unchanged by this
 * frame (callee-saved: the psABI's rule when the call frame information does not say), saved
 * at CFA - 8 * k (k = 1..UNWIND_RBX_MAX_K), or anywhere else (not followed further up) */
#define UNWIND_RBX_SAME		0
#define UNWIND_RBX_MAX_K	62
#define UNWIND_RBX_UNKNOWN	63

/* One row: its rule holds from pc to the next row's pc. pc is the object's ELF virtual address
 * (an address minus the mapping's load bias). The return address is at CFA - 8 (in rdi for
 * UNWIND_CFA_RA_RDI) and the caller's rsp is the CFA (rows where the call frame information
 * says otherwise are UNWIND_CFA_UNKNOWN). 12 bytes. */
struct unwind_row {
	__u32 pc;
	__s32 cfa_off;
	__u8 cfa;		/* enum unwind_cfa */
	__u8 rbp : 2;		/* enum unwind_rbp */
	__u8 rbx : 6;		/* UNWIND_RBX_SAME, k (saved at CFA - 8 * k), UNWIND_RBX_UNKNOWN */
	__s16 rbp_off;
};

/* Executable mappings of one traced process the unwinder knows, sorted by start. */
#define UNWIND_MAX_MAPS		256
#define UNWIND_MAP_FP		0xffffffffU	/* rows value: no table, walk frame pointers */
#define UNWIND_FILE_SEGS	4	/* executable segments of an object the BPF side knows */

struct unwind_map {
	__u64 start, end;
	__u64 bias;		/* address - bias = the object's ELF virtual address */
	__u32 rows;		/* first row in the rows array, or UNWIND_MAP_FP */
	__u32 nrows;
};

/* Which program's address space an entry holds: the BPF side uses an entry only when the
 * current task's match (else the tgid is another process's since, a reused PID, or the same
 * process after an exec, with other mappings). The collector reads them from /proc/PID/stat
 * (one read) before and after its read of the maps. */
struct unwind_ident {
	__u64 start_time;	/* the process's start, in clock ticks after boot (stat's
				 * starttime: group_leader->start_boottime / (1e9 / USER_HZ)) */
	__u64 start_stack;	/* mm->start_stack (stat's startstack): randomized per exec */
	__u64 end_code;		/* mm->end_code (stat's endcode): another program's text, also
				 * without ASLR */
};

#define UNWIND_USER_HZ		100	/* x86-64's USER_HZ: /proc's clock ticks */

struct unwind_proc {
	__u32 nmaps;
	__u32 stale;		/* set by the unwinder at an address in none of maps (a library
				 * mapped since: the collector reloads; unwind_stale) */
	__u32 gen;		/* changes with every load: the row cache's entries of older
				 * loads are not used */
	__u32 exec_pages;	/* pages of code in the address space maps were read from, as
				 * the kernel counts them (mm->exec_vm: executable, not
				 * writable, not [vsyscall]; 0: unknown): a child forked since
				 * that has as many is walked with this entry until its own
				 * loads (unwind.bpf.h, unwind_borrowable) */
	struct unwind_ident ident;	/* the address space maps were read from */
	struct unwind_map maps[UNWIND_MAX_MAPS];
};

/* The BPF side asks the collector (unwind_stale) to load a process it has no usable entry for
 * (not loaded yet, or its entry is another program's) once per process and program: the
 * process's (tgid's) last ask, by a hash of its unwind_ident, in an LRU map of this size. */
#define UNWIND_ASKED_SIZE	8192

/* Every object the collector has looked at, by its file (the kernel's device number,
 * MKDEV(major, minor) = major << 20 | minor, and inode): its table, found from a mapping the
 * process's unwind_proc does not have yet (a library mapped since its load: the launched
 * program's libc, dlopen). Objects without call frame information are there too (rows
 * UNWIND_MAP_FP: frame pointers); a file not there ends the stack in [truncated]. */
#define UNWIND_DEFAULT_OBJS	4096

struct unwind_file_key {
	__u64 dev, ino;
};

struct unwind_file {
	__u32 rows;		/* first row, or UNWIND_MAP_FP */
	__u32 nrows;
	__u32 nsegs;		/* the executable PT_LOAD segments, to find a mapping's bias */
	__u32 pad;
	struct { __u64 offset, vaddr, filesz; } segs[UNWIND_FILE_SEGS];
};

/* The BPF unwinder's per-CPU cache of the rows it found, by (process, address looked up):
 * a loop's stacks find their rows without searching. */
#define UNWIND_CACHE_SIZE	4096	/* entries per CPU, a power of 2 */

struct unwind_cache_ent {
	__u64 ip;		/* the address looked up (ip, or ip - 1 for a return address) */
	__u32 tgid, gen;
	struct unwind_row row;	/* rows = UNWIND_MAP_FP mappings: cfa UNWIND_CFA_NONE */
	__u32 check;		/* a hash of the above: an entry written half by one task and
				 * half by another (preempted) on the same CPU is not used */
};

/* The BPF unwinder's per-CPU cache of whole stacks, in sets of UNWIND_SCACHE_WAYS entries by
 * (process, ip, sp) where a walk started, an entry also by bp where the walk used it
 * (UNWIND_BP_*): the stack it found and every word of user memory the walk read and used (as
 * offsets from sp, all within UNWIND_SCACHE_SPAN bytes above it) with the value read. The
 * walk is a function of the registers it starts from, the process's tables (gen) and the words it reads: when each
 * of them reads the same again (one read of the span), the walk would find the same stack.
 * Only complete stacks through the process's loaded tables are kept. A caller that interns
 * stacks by hash in a map that never loses an entry (mem) notes the hash with the entry once
 * interned (hash, valid while seq is hseq): its later hits give the hash alone, without the
 * addresses, their hash or a map operation. A hit needs no lookup of the process's entry
 * while the entries are as they were at the walk (unwind_epoch: the collector counts every
 * change of unwind_procs) and the process is the same program (ident). */
#define UNWIND_SCACHE_SIZE	128	/* entries per CPU, a power of 2 */
#define UNWIND_SCACHE_WAYS	2	/* entries a walk's registers may be kept in, in a row */
#define UNWIND_SCACHE_FRAMES	32	/* longer stacks are not kept */
#define UNWIND_SCACHE_READS	64	/* words read by the walk */
#define UNWIND_SCACHE_SPAN	16384	/* bytes above sp the words are in (sqlite3's stacks need
					 * more than 4 KiB; a per-CPU value is at most 32 KiB) */

struct unwind_scache_ent {
	__u32 seq;		/* even: whole; odd: being written (a reader does not use it;
				 * a reader whose entry's seq changed meanwhile neither) */
	__u32 tgid, gen, nr;
	__u32 nreads, span;	/* words, and bytes above sp to read to check them */
	__u32 nfp;		/* frames by frame pointers in it (unwind_stats) */
	__u32 hseq;		/* the seq whose stack hash is (its user's, see unwind_scache_note) */
	__u64 ip, sp, bp;
	__u64 hash;		/* the stack's hash in its user's stacks map, interned there */
	struct unwind_ident ident;	/* the process's when it was walked */
	__u32 epoch;		/* unwind_epoch's value before the walk's lookup of its entry */
	__u32 bpany;		/* the walk never used the %rbp it started from: bp is no key */
	__u32 lastw, pad3;	/* a set's first entry: its way hit or filled last */
	__u16 off[UNWIND_SCACHE_READS];
	__u64 val[UNWIND_SCACHE_READS];
	__u64 ips[UNWIND_SCACHE_FRAMES];
};

/* The walk's log of the words it read, and the buffer a cached stack's span is read into:
 * per CPU, seq bumped by every user (a task preempted meanwhile on the same CPU sees it
 * changed and does not trust what it holds). */
struct unwind_scratch {
	__u32 seq;
	__u32 nreads, span;
	__u32 nocache;		/* the walk read outside the span, too many words, or used a
				 * file's table (bpf_find_vma): not kept */
	__u32 nfp;		/* frames the walk took by frame pointers */
	__u32 bpkey;		/* the walk used the %rbp it started from: its entry keys on it */
	__u32 bpdep, pad;	/* where the walk's current %rbp came from (UNWIND_BP_*) */
	__u64 bp_at;		/* UNWIND_BP_SAVED: the address it was read from */
	__u16 off[UNWIND_SCACHE_READS];
	__u64 val[UNWIND_SCACHE_READS];
	__u8 buf[UNWIND_SCACHE_SPAN];
};

/* Where a walk's current %rbp came from. Code without frame pointers keeps data in %rbp and
 * saves it like any callee-saved register: a walk depends on that value only where a frame's
 * CFA is computed from %rbp (or a frame-pointer record is read at it). Until then the value is
 * neither a key of the walk's stack cache entry nor a word of its log, so that the same stack
 * reached with other data in %rbp is a hit. */
enum unwind_bp_dep {
	UNWIND_BP_REG,		/* the register the walk started from */
	UNWIND_BP_KNOWN,	/* nothing to check: a constant, or its word is in the log */
	UNWIND_BP_SAVED,	/* read from the stack at bp_at, not in the log */
};

/* How the unwinder's stacks ended (unwind_stats, per CPU) */
enum unwind_stat {
	UNWIND_STAT_COMPLETE,	/* at the outermost frame */
	UNWIND_STAT_TRUNCATED,	/* at a frame it could not unwind (UNWIND_TRUNCATED) */
	UNWIND_STAT_DEPTH,	/* at STACK_MAX_DEPTH frames (UNWIND_TRUNCATED) */
	UNWIND_STAT_FP_FRAMES,	/* frames unwound by frame pointers (no table covered them) */
	UNWIND_STAT_UNMAPPED,	/* stacks ended in [truncated] at an address in code mapped
				 * since the process's tables were loaded whose file has no table
				 * loaded yet (until the collector loads it: at once, or a tick) */
	UNWIND_STAT_BY_FILE,	/* frames unwound in code mapped since the process's tables were
				 * loaded, by its file's table (found with bpf_find_vma) */
	UNWIND_STAT_NO_PROC,	/* stacks of a process with no entry (not loaded yet, -a; or left
				 * out: the map was full): walked by file (unwind_rule_by_file) */
	UNWIND_STAT_OTHER_PROG,	/* of them, with an entry of another program (an exec since
				 * the load, or a reused PID): not used */
	UNWIND_STAT_CACHED,	/* stacks (counted complete too) found in the stack cache */
	UNWIND_STAT_REG_CFA,	/* stacks ended (truncated) at a frame above the first whose CFA
				 * is in rdi or rdx (UNWIND_CFA_RDI, _RDX: not known there), or
				 * in rbx where a frame below did not say where it saved it */
	UNWIND_STAT_HELD,	/* threads held at the loader's hook (unwind_dl_hook) */
	UNWIND_STAT_PARENT,	/* stacks of a forked child without an entry (not loaded yet),
				 * walked with its parent's: the same program and code mappings
				 * (counted in UNWIND_STAT_NO_PROC too) */
	UNWIND_STAT_VMA_CACHED,	/* mappings of code mapped since the load found in unwind_vmas
				 * (an earlier stack's bpf_find_vma) instead of by the helper */
	UNWIND_STAT_VMA_STALE,	/* such mappings kept but not used: the address space changed
				 * since (its mm_lock_seq moved) or was being changed */
	UNWIND_STAT__COUNT,
};

/*
 * Code a process maps while it runs (dlopen) has no table in its entry until the collector
 * loads the process again, and a library's constructors and first calls run right after it is
 * mapped. Where the mode asks for it (mem, stacks: core/unwind.h, unwind__hold_at_loader), a thread
 * the collector traces (ptrace: a launched command's, a followed tree's, a -p process's
 * leader) that reaches the loader's hook (_dl_debug_state, which the loader calls
 * before and after it maps or unmaps objects) is held there: unwind_dl_hook notes it in
 * unwind_holds and sends it UNWIND_HOLD_SIG; its signal-delivery stop reaches the collector,
 * which loads the process's new code and resumes it without the signal (core/unwind.h,
 * unwinder__held). SIGURG (23 on x86-64): ignored by default, should a stop ever be missed.
 */
#define UNWIND_HOLD_SIG		23
#define UNWIND_HOLDS_SIZE	4096	/* threads held at once (unwind_holds) */

/* The address a stack ends with when it could not be unwound further: rendered [truncated].
 * No user mapping is ever there (it is a kernel address). */
#define UNWIND_TRUNCATED	0xfffffffffffff000ULL

#endif
