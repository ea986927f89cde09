/* The mem mode collector: loads mem.bpf.c, attaches it to processes, and turns what the kernel
 * aggregated into profile samples. The only user of the mem skeleton. */
#ifndef EBPROF_MEM_COLLECT_H
#define EBPROF_MEM_COLLECT_H

#include <stdint.h>
#include <sys/types.h>
#include "core/log.h"
#include "core/probes.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

#define MEM_DEFAULT_MAX_LIVE		(1u << 21)	/* 128 MiB of slots */
#define MEM_DEFAULT_MAX_LIVE_SAMPLED	(1u << 18)	/* --sample-bytes/--sample-every: 16 MiB */

struct mem_collector_opts {
	const struct log_ctx *lc;
	int unwind;		/* --unwind: enum unwind_how (core/unwind.h) */
	uint32_t max_live;	/* live table entries; 0: the default (below) */
	uint32_t max_stacks;	/* distinct stacks, and (pid, function, stack) sites */
	uint32_t max_procs;
	uint64_t min_size, max_size;
	uint64_t min_age_ns;	/* outstanding blocks younger than this at the end are not listed */
	uint64_t temp_ns;	/* temporaries: freed within this; 0: before the next allocation */
	bool trace_all;		/* -a: every process calling a probed library, not only attached */
	bool mmap;		/* --mmap: also the program's own mmap, munmap, mremap and brk */
	uint32_t max_regions;	/* --mmap: mapped regions tracked (0: 65536) */
	/* enum mem_sample_mode: sampled tracking (period: mean bytes between samples, or
	 * allocations per sample; the profile gets estimates), or alloc-only (entry probes only) */
	uint32_t sample_mode;
	uint64_t sample_period;
	/* --trace: every counted call as a JSON line into this file (full tracking only) */
	const char *trace_path;
	/* the run is cut into windows (session_env.windows): an ended process's numbers go to
	 * the next window only, never into the run's profile (nobody reads it: it grew by
	 * ~200 KB a process), and its entry is forgotten once a window took them */
	bool windows;
};

struct mem_collector;

/* Open, size and load the BPF side. NULL and errno on failure (already reported). */
struct mem_collector *mem_collector__new(const struct mem_collector_opts *opts);
void mem_collector__free(struct mem_collector *c);

/* Start tracing pid through lib; parent: the traced process a new child was forked from (its
 * frees of blocks the parent held then are inherited frees), else 0 (a launched, -p or
 * exec'd process). Returns 0 or a negative errno (reported). */
int mem_collector__attach(struct mem_collector *c, pid_t pid, pid_t parent,
			  const struct alloc_lib *lib);

/* Re-read the mappings of every traced process (new libraries, a launched command's finished
 * start-up), for symbolizing a process that vanishes without an exit stop. */
/* Every tick: the unwinder's processes with code mapped since their tables were loaded. */
void mem_collector__unwind_tick(struct mem_collector *c);
/* The unwinder's fd to poll, and what to do when it is readable (core/unwind.h). */
int mem_collector__unwind_fd(struct mem_collector *c);
void mem_collector__unwind_poll(struct mem_collector *c);
/* unwinder__held for mode_ops.held */
/* Its unwinder (core/unwind.h): the loader's holds */
struct unwinder *mem_collector__unwinder(struct mem_collector *c);
void mem_collector__refresh(struct mem_collector *c);

/* Move everything the kernel holds for pid into prof: its summary, its sites (symbolized
 * through sym, using its live mappings, or the snapshot taken at attach if it is gone) and its
 * outstanding blocks; then forget pid in the kernel. `now_ns` (CLOCK_MONOTONIC) ages the
 * outstanding blocks. `exec`: pid is replacing its program, whose blocks go with it (they are
 * neither live nor outstanding); the new image's numbers add to the same process later.
 * Probes stay attached (detach is slow; see mem_collector__detach). */
int mem_collector__finalize(struct mem_collector *c, pid_t pid, struct profile *prof,
			    struct symbolizer *sym, uint64_t now_ns, bool exec);
/* Finalize every attached process not finalized yet. */
int mem_collector__finalize_all(struct mem_collector *c, struct profile *prof,
				struct symbolizer *sym, uint64_t now_ns);

/*
 * Reachability scan of pid (see core/leakscan.h): stop every thread (`at_exit`: pid is held at
 * its exit already), classify its outstanding blocks, let it run again. The result replaces
 * pid's previous scan and goes into the report at finalize: per site as the sample types
 * definite/indirect/possible/reachable _objects and _space, per process as prof_scan.
 * t_ns: since the run's start. If the leader stopped for an event of its own meanwhile (exit,
 * exec), *leader_status gets its wait status for the caller to handle, else it is set to -1.
 * Returns 0 or a negative errno (reported).
 */
int mem_collector__scan(struct mem_collector *c, pid_t pid, bool at_exit, unsigned heuristics,
			int64_t t_ns, int *leader_status);

/* tid, a thread of pid, is at its exit stop: if it dies with its process (exit_group), its
 * final registers and stack pointer stand for it in pid's scan at exit, for which it will be
 * gone. */
void mem_collector__thread_exit(struct mem_collector *c, pid_t pid, pid_t tid);

/* pid's last scan, or NULL if it was never scanned (or is finalized). */
const struct prof_scan *mem_collector__last_scan(struct mem_collector *c, pid_t pid);

/* A window (core/mode.h) of every traced process: its allocations since the last window
 * (stats alloc_count, alloc_bytes; estimates when sampled) and what it holds now (live_count,
 * live_bytes), from the kernel's per-process counters, its threads' held counts flushed first;
 * and its sites as samples with their stacks (symbolized with sym): alloc_objects and
 * alloc_space since the last window, inuse_objects and inuse_space now (allocated minus freed
 * at the site). The sites are read, not taken: the report at the end has them all. A process
 * finalized since the last window is in this one with what it did until its end. into gets
 * the run's sample types if it has none. 0 or a negative errno. */
int mem_collector__window(struct mem_collector *c, struct profile *into,
			  struct symbolizer *sym);

/* Totals over the traced processes still running, for progress lines. */
struct mem_totals {
	uint64_t calls;		/* all traced calls so far */
	uint64_t live_bytes;
	uint64_t live_count;
	uint64_t drops;
};

/* Append every traced process's live bytes and live count at t_ns (since the run's start) to
 * prof's series "live_bytes" and "live_count"; fill *tot if not NULL. */
void mem_collector__sample(struct mem_collector *c, struct profile *prof, int64_t t_ns,
			   struct mem_totals *tot);

/* Tracing began at start_ns (CLOCK_MONOTONIC): times in the profile count from there, and the
 * first snapshot of per-site live bytes is due a snapshot interval later. Call before attaching. */
void mem_collector__set_start(struct mem_collector *c, uint64_t start_ns);
/* Snapshot every traced process's per-site live bytes if one is due at now_ns (CLOCK_MONOTONIC),
 * for growth trends and the sites at each peak. Cheap when none is due; call it often. The
 * interval starts at one second and doubles when a read costs more than 5% of it, or when a
 * process's store of snapshots is full. Returns 1 if it took one, else 0. */
int mem_collector__snapshot(struct mem_collector *c, uint64_t now_ns);

/* Add the drop counters (summed over CPUs, every reason) to prof. */
int mem_collector__drops(struct mem_collector *c, struct profile *prof);

/* --trace: write the calls the kernel recorded since the last time. Call it every tick. */
void mem_collector__poll(struct mem_collector *c);
/* --trace: the last calls, the stacks not written yet and the end line (calls, drops). Call
 * once, after every process is finalized. Returns 0 or a negative errno (reported). */
int mem_collector__trace_finish(struct mem_collector *c);
/* Remove pid's probes (before re-attaching after an exec). */
void mem_collector__detach_pid(struct mem_collector *c, pid_t pid);
/*
 * System-wide (opts.trace_all): probe lib for every process that maps it (no pid filter).
 * Processes become known by calling it: mem_collector__adopt_new() picks them up (their
 * mappings, names) and mem_collector__finalize_gone() reports those that have ended.
 */
int mem_collector__attach_all(struct mem_collector *c, const struct alloc_lib *lib);
/* Start reporting every process the kernel has counted and we do not know yet. Returns how
 * many were new. */
int mem_collector__adopt_new(struct mem_collector *c);
/* Finalize the adopted processes that have exited (symbolized from their last mappings). */
void mem_collector__finalize_gone(struct mem_collector *c, struct profile *prof,
				  struct symbolizer *sym, uint64_t now_ns);

/* Queue pid's probes for closing on a worker thread (a process that ended: closing a link
 * costs an RCU grace period, which the run loop must not wait for). */
void mem_collector__retire(struct mem_collector *c, pid_t pid);
/* At the end of the run, before the last reads: take the probes off, so that no thread's held
 * counts change any more (finalizing adds them to the maps). */
void mem_collector__quiesce(struct mem_collector *c);
/* Remove every probe (concurrently; returns when all are gone). */
void mem_collector__detach(struct mem_collector *c);

/* Tests only (EBPROF_TEST_STALL_SIZE=N: the first counted allocation of N bytes stops in its
 * return program, its counts held, its block not yet live): whether it is there, and letting
 * it go; whether the programs have been told to stop counting (mem_collector__quiesce). */
bool mem_collector__test_stalled(struct mem_collector *c);
void mem_collector__test_release(struct mem_collector *c);
bool mem_collector__test_quiescing(struct mem_collector *c);

/* The mem sample types, in order: alloc_objects, alloc_space, inuse_objects, inuse_space;
 * with leaks, then <class>_objects and <class>_space for definite, indirect, possible and
 * reachable. */
int mem_profile__init(struct profile *prof, bool leaks);
/* --mmap: the mapping category's sample types mmap_objects, mmap_space, mmap_inuse_objects and
 * mmap_inuse_space, after the others. Mapping sites have 0 in every other type, and allocation
 * sites 0 in these: the categories never mix. */
int mem_profile__add_mmap_types(struct profile *prof);
/* --alloc-only: alloc_objects and alloc_space only. */
int mem_profile__init_alloc_only(struct profile *prof);

#endif
