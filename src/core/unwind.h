/* The collector's side of the BPF unwinder (bpf/lib/unwind.bpf.h): unwind tables of the objects
 * each traced process maps (symbolize/unwind.c), built once per file (by device and inode) and
 * shared by every process that maps it, into the rows map; each process's executable mappings
 * into unwind_procs. Shared by every mode (procs.c calls it on each new snapshot). */
#ifndef EBPROF_CORE_UNWIND_H
#define EBPROF_CORE_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_map;
struct log_ctx;

enum unwind_how {
	UNWIND_AUTO,	/* tables where an object has them, frame pointers elsewhere */
	UNWIND_DWARF,	/* the same (an object without tables is still walked by fp) */
	UNWIND_FP,	/* frame pointers only: no tables loaded */
};

/* "fp", "dwarf", "auto" -> *how; -1 for anything else */
int unwind_how__parse(const char *s, enum unwind_how *how);

#define UNWIND_DEFAULT_ROWS	(1U << 20)	/* 16 MiB (12-byte rows in 16 bytes each): ~35 libcs */
#define UNWIND_DEFAULT_PROCS	1024
#define UNWIND_ASKED_QUEUE	1024	/* processes waiting to be loaded (-a), and the most
					 * --unwind-queue allows */
#define UNWIND_MAX_PROCS	1048576	/* the most --unwind-procs allows */
#define UNWIND_LOAD_BUDGET_MS	10	/* a tick's time for loading them (of 100 ms) */

struct bpf_object;

/* The rows a launched command (argv) needs room for: twice those of its tables and of the
 * libraries it needs (DT_NEEDED; the tables built now, from the cache or into it for the load
 * after), at least UNWIND_DEFAULT_ROWS (what it execs is not known here: make's cc1 maps
 * ~480,000 rows, python3 with its ssl modules ~270,000), at most UNWIND_LAUNCH_MAX_ROWS. The
 * default when there is no cache directory (the tables would be built twice), or the command
 * is not an ELF file (a script: its interpreter is not known here). The kernel clears the rows
 * map at every start (16 MiB: ~1-3 ms). */
#define UNWIND_LAUNCH_MAX_ROWS	(1U << 22)	/* 64 MiB */
#define UNWIND_MAX_ROWS		(1U << 26)	/* the most --unwind-rows allows: 1 GiB */
uint32_t unwind__launch_rows(char *const *argv);
/* The session launches argv (not -a): every mode's rows map is then sized by
 * unwind__launch_rows (computed once) where unwind__size_maps is given no size. */
void unwind__plan_launch(char *const *argv);

/* The session's --unwind-procs (0: each mode's own size), --unwind-queue (0: the most,
 * UNWIND_ASKED_QUEUE) and --unwind-rows (0: planned for a launch, or the default), before the
 * modes load */
void unwind__set_limits(uint32_t procs, uint32_t queue, uint32_t rows);

/* Before load: size the unwinder's maps of a mode's object (bpf/lib/unwind.bpf.h; max_procs:
 * processes with tables at once (--unwind-procs, when given, instead), max_rows: table rows
 * of all objects, 0: defaults). Nothing to do for UNWIND_FP (the maps keep one entry). The
 * mode sets its rodata's unwind_mode itself (how != UNWIND_FP). */
int unwind__size_maps(struct bpf_object *obj, enum unwind_how how, uint32_t max_procs,
		      uint32_t max_rows);
/* Before load, after unwind__size_maps: the loader's hook's program loaded (abi/unwind.h,
 * UNWIND_HOLD_SIG), for a mode that closes uprobe links through a closer of its own
 * (unwinder__use_closer): each hooked process's link then shares its probes' grace period at
 * the end. mem alone: a sampling mode would pay ~35 ms more a run (the link's grace) to save
 * the sample or two a dlopen loses before the BPF side's ask loads the new code. */
void unwind__hold_at_loader(struct bpf_object *obj, enum unwind_how how);

struct unwinder;
struct profile;
struct unwind_ident;

/* The text of /proc/PID/stat -> which program's address space the process has (abi/unwind.h:
 * starttime, endcode, startstack). 0; -EINVAL for text that is not a stat line, -ESRCH for a
 * process without an address space (a kernel thread, one exiting: startstack 0). */
int unwind_ident__parse(const char *stat, struct unwind_ident *id);
/* The same read from pid's /proc/PID/stat: 0 or a negative errno (-ESRCH: gone, a zombie). */
int unwind_ident__read(pid_t pid, struct unwind_ident *id);
/* Whether two identities are the same process in the same exec. */
bool unwind_ident__same(const struct unwind_ident *a, const struct unwind_ident *b);

/* After load: the unwinder of a mode's object with how (NULL for UNWIND_FP, or ENOMEM: frame
 * pointers then), on its unwind_procs, unwind_rows and unwind_stats maps. */
struct unwinder *unwinder__open(const struct log_ctx *lc, enum unwind_how how,
				struct bpf_object *obj);
/* The unwinder's drops into the profile: stacks that ended in [truncated] (by why: a rule it
 * cannot follow, the depth limit, code mapped since the process's load whose file has no table
 * yet), processes and objects left without tables because a map was full. Nothing for NULL. */
void unwinder__add_drops(struct unwinder *u, struct profile *prof);

/* After load: the maps' fds. NULL on ENOMEM. */
struct unwinder *unwinder__new(const struct log_ctx *lc, int procs_fd, int rows_fd, int stats_fd,
			       uint32_t max_rows);
void unwinder__free(struct unwinder *u);

/* pid's executable mappings (maps: the text of /proc/PID/maps as the caller just read it, to
 * see that nothing changed, or NULL; they are read again, between two reads of the process's
 * identity (abi/unwind.h's unwind_ident, from /proc/PID/stat) that must agree, -EAGAIN if
 * not: an exec meanwhile) and the
 * tables of their objects into the maps, with the tables of the libraries each object needs
 * (DT_NEEDED, as ld.so would find them: ready by file in unwind_files for when they are
 * mapped). 0 or a negative errno (-E2BIG: a map is full, counted
 * in the drops). Nothing when its executable mappings read the same as at its last load. */
int unwinder__load(struct unwinder *u, pid_t pid, const char *maps);
/* fn(ctx, pid, maps) with the text of /proc/PID/maps each time a load reads mappings whose
 * code differs from the process's last load of the same program (a library mapped since: read
 * when its code was
 * first met in a stack, perhaps before any snapshot of the caller's saw it), so that the caller
 * can name frames in a library unmapped by the end. NULL fn: none. */
void unwinder__on_maps(struct unwinder *u, void (*fn)(void *ctx, pid_t pid, const char *maps),
		       void *ctx);
/* Every tick: the processes whose stacks met code mapped since they were loaded (a library
 * loaded with dlopen, or after the exec stop they were attached at) are loaded again; those
 * the BPF side met without a usable entry (-a: not loaded yet; after the map was full; an exec
 * or a reused PID since a load) that unwinder__poll left waiting are loaded, in turn, for at
 * most UNWIND_LOAD_BUDGET_MS a tick; once a second the processes gone are forgotten. */
void unwinder__tick(struct unwinder *u);
/* The fd that is readable when the BPF side met code mapped since a load (-1 for NULL), and
 * what to do then: those processes loaded again at once. */
int unwinder__fd(struct unwinder *u);
void unwinder__poll(struct unwinder *u);
/* pid is gone: out of unwind_procs. */
void unwinder__forget(struct unwinder *u, pid_t pid);
/* tid, a thread of pid this process traces, stopped for UNWIND_HOLD_SIG: true when the BPF
 * side held it at the loader's hook (abi/unwind.h; the note taken), pid's new code then loaded
 * (the caller resumes it without the signal); false: a signal of its own, to deliver */
bool unwinder__held(struct unwinder *u, pid_t pid, pid_t tid);
/* Whether pid has the loader's hook on the loader file ldso (its threads are held there, the
 * new program's startup after an exec too: mem's readiness then stops by the hold, not by a
 * breakpoint of its own) */
bool unwinder__hooked(struct unwinder *u, pid_t pid, const char *ldso);
/* The hold's note of tid taken (true: the stop for UNWIND_HOLD_SIG is the hold's; nothing
 * loaded: the caller loads what it needs) */
bool unwinder__take_hold(struct unwinder *u, pid_t tid);
/* The loader's hook's links (one per process hooked) are closed through cl, the mode's own
 * closer (core/closer.h: closed together with the mode's probes, one grace period for all),
 * until it is set to NULL; processes are hooked only while it is set. */
struct fd_closer;
void unwinder__use_closer(struct unwinder *u, struct fd_closer *cl);
/* pid, loaded, hooked at its loader once (abi/unwind.h) where the mode asked for the hook
 * (unwind__hold_at_loader, a closer set). Right after the mode's own uprobe links for it: a
 * link's registration takes the kernel's uprobes-wide write lock (dup_mmap_sem), which costs
 * an RCU grace period (~8-14 ms here) unless another registration just took it. */
void unwinder__hook(struct unwinder *u, pid_t pid);
/* Every hook's link closed (queued to the closer): at the end, with the mode's probes */
void unwinder__unhook(struct unwinder *u);

struct unwind_counts {
	uint64_t complete, truncated, depth, fp_frames;	/* the BPF side's unwind_stats */
	uint64_t unmapped;	/* stacks [truncated] at code mapped since the process's load
				 * whose file had no table yet */
	uint64_t by_file;	/* frames in such code unwound by its file's table */
	uint64_t vma_cached;	/* mappings of such code kept from an earlier stack (unwind_vmas) */
	uint64_t vma_stale;	/* kept ones not used: the address space changed since */
	uint64_t cached;	/* complete stacks found in the BPF side's stack cache */
	uint64_t reg_cfa;	/* truncated at a frame above the first whose CFA is in rbx,
				 * rdi or rdx (ld.so's _dl_runtime_resolve) */
	uint64_t procs_full, rows_full;			/* processes/objects left without tables */
	uint64_t no_proc;	/* stacks of a process with no usable entry: walked by file */
	uint64_t other_prog;	/* of them, with an entry of another program (exec, reused PID) */
	uint64_t parent;	/* of them, a forked child's walked with its parent's entry */
	uint64_t asks_loaded;	/* processes loaded when the BPF side met them without one */
	uint64_t asks_skipped;	/* not: the queue was full (the unwind_loads_skipped drop) */
	uint64_t files_full;	/* objects the BPF side cannot find by file (map full) */
	uint64_t held;		/* threads the BPF side held at the loader's hook */
	uint64_t holds;		/* their stops the collector took (unwinder__held) */
	uint32_t objects, objects_fp;			/* tables loaded; objects walked by fp */
	uint32_t preloaded;	/* tables built for libraries before they were mapped */
	uint64_t rows;					/* rows in use */
	uint64_t evicted, evicted_rows;	/* tables of objects no process mapped, their rows
					 * taken for others' (the map was full) */
	double build_ms;				/* time spent building tables */
};
void unwinder__counts(struct unwinder *u, struct unwind_counts *c);

#endif
