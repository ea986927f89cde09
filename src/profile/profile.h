/* The profile model every mode fills and every renderer reads.
 *
 * pprof-shaped: samples (a stack of location indices, leaf first, one value per sample type,
 * a pid) over symbolized locations (mapping + address -> lines, innermost inline frame first),
 * functions and mappings. Beside the samples it carries what a report needs that pprof has no
 * field for: per-process summaries (named call counters and named statistics), per-sample size
 * histograms and ages of outstanding allocations, drop counters by reason, and run metadata.
 *
 * No libbpf here: this is unit-testable without root. All strings are copied and owned by the
 * profile. Indices are 0-based and stable; pointers into the arrays are not (they grow).
 */
#ifndef EBPROF_PROFILE_H
#define EBPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_NONE UINT32_MAX	/* "no mapping" / "no function" */

struct prof_value_type {
	const char *type;	/* e.g. "alloc_space" */
	const char *unit;	/* e.g. "bytes" */
	/* the process statistic that holds each process's exact total of this type, when the
	 * samples may not (io, lock: a full per-stack table loses samples, never a process's
	 * totals), or NULL: the process's samples are its total. Not in pprof. */
	const char *proc_stat;
};

struct prof_function {
	const char *name;	/* demangled, e.g. "std::vector<int>::push_back(int const&)" */
	const char *system_name;/* as in the symbol table (mangled), may equal name */
	const char *filename;	/* source file, or NULL */
	/* no symbol names it: "MODULE!sub_HEX", made from the range of its call frame
	 * information (the FDE starting at HEX, an ELF virtual address in MODULE) */
	bool cfi_named;
};

struct prof_mapping {
	uint64_t start, limit, offset;
	const char *file;	/* path of the mapped file, "[anon]", ... */
	const char *build_id;	/* lowercase hex, or NULL */
	uint32_t pid;
};

struct prof_line {
	uint32_t function;	/* index into functions */
	int64_t line;		/* 0 if unknown */
};

struct prof_location {
	uint32_t mapping;	/* index into mappings, or PROF_NONE */
	uint64_t address;	/* runtime address (a return address as captured) */
	uint64_t module_offset;	/* address relative to the module (ELF vaddr), for module+0x.. */
	struct prof_line *lines;/* innermost (inlined) first; nlines == 0: unsymbolized */
	uint32_t nlines;
};

/* How a sample's live bytes moved over the later half of its process's run (growth.c has the
 * rule). NONE: not computed (too few snapshots, or not a mem profile). */
enum prof_trend {
	PROF_TREND_NONE,
	PROF_TREND_FLAT,	/* never held more than the noise threshold, nor moved by it */
	PROF_TREND_GROWING,	/* rose by more than the threshold over the later half */
	PROF_TREND_PLATEAU,	/* held memory gained before the later half, then moved less */
	PROF_TREND_SHRINKING,	/* fell by more than the threshold over the later half */
};

/* A sample's live bytes over the run, from periodic snapshots of per-site live bytes. */
struct prof_growth {
	enum prof_trend trend;	/* NONE: nothing below is set */
	double bytes_per_sec;	/* least-squares slope over the later half of the run */
	int64_t first_bytes;	/* at the first snapshot of the later half */
	int64_t last_bytes;	/* at the last snapshot (the end of the process or the run) */
	int64_t max_bytes;	/* the highest of all snapshots */
};

/* Outstanding (not freed at the end) allocations of one sample, with their ages. */
struct prof_outstanding {
	uint64_t count;
	uint64_t bytes;
	uint64_t min_age_ns;	/* youngest */
	uint64_t max_age_ns;	/* oldest */
	uint64_t sum_age_ns;	/* for the mean */
};

struct prof_sample {
	uint32_t *locs;		/* location indices, leaf first */
	uint32_t nlocs;
	int64_t *values;	/* one per sample type */
	uint32_t pid;
	uint64_t *hist;		/* optional log2 size histogram (allocation counts), nhist buckets */
	uint32_t nhist;
	uint64_t *life;		/* optional log2 lifetime histogram in ns (free counts), nlife */
	uint32_t nlife;
	uint64_t temporary;	/* allocations freed before their thread's next allocation */
	struct prof_outstanding out;	/* count == 0: nothing outstanding or not tracked */
	bool suppressed;	/* its leaks match a suppression (profile__suppress) */
	struct prof_growth growth;	/* trend NONE: not computed (see growth.c) */
};

struct prof_kv {
	const char *key;
	uint64_t value;
};

/* A fact of the run for the report, e.g. ("rate", "99 Hz"), ("cpus", "8"). */
struct prof_info {
	const char *key;
	const char *value;
};

/* Reachability classes of outstanding blocks, valgrind memcheck's (see core/leakscan.h). Per
 * site they are the sample types "<class>_objects" and "<class>_space", present when the run
 * scanned (mem_profile__init with leaks). */
enum prof_leak_class {
	PROF_LEAK_DEFINITE,
	PROF_LEAK_INDIRECT,
	PROF_LEAK_POSSIBLE,
	PROF_LEAK_REACHABLE,
	PROF_LEAK__COUNT,
};
#define PROF_LEAK_HEURISTICS 5	/* none, stdstring, length64, newarray, multipleinheritance */

extern const char *const prof_leak_class_names[PROF_LEAK__COUNT];	/* "definite", ... */
extern const char *const prof_leak_class_titles[PROF_LEAK__COUNT];	/* "definitely lost" */
extern const char *const prof_leak_heuristic_names[PROF_LEAK_HEURISTICS];

/* One process's last reachability scan. */
struct prof_scan {
	bool done;		/* false: never scanned */
	bool at_exit;		/* held at its exit, else stopped while running */
	int64_t t_ns;		/* when, since the profile's time_nanos */
	uint64_t stopped_ns;	/* how long the scan kept the process stopped */
	uint64_t scanned_bytes;	/* roots and blocks read */
	uint64_t unreadable_bytes;
	uint64_t read_calls;	/* process_vm_readv calls it took */
	uint32_t threads;	/* threads whose registers and stack pointer were used */
	uint32_t threads_unknown;	/* threads without registers (stacks scanned whole) */
	uint64_t count[PROF_LEAK__COUNT];	/* every outstanding block, suppressed ones too */
	uint64_t bytes[PROF_LEAK__COUNT];
	uint64_t suppressed_count[PROF_LEAK__COUNT];	/* of which at suppressed sites */
	uint64_t suppressed_bytes[PROF_LEAK__COUNT];
	uint64_t heur_count[PROF_LEAK_HEURISTICS];	/* reachable only through a heuristic */
	uint64_t heur_bytes[PROF_LEAK_HEURISTICS];
};

/* One site's live bytes in a process's peak snapshot. */
struct prof_peak_site {
	uint32_t sample;	/* index into samples */
	uint64_t bytes;
};

/* The highest live bytes of a process: amount and time exact (the kernel keeps both), and
 * which sites held memory then, approximated by the snapshot of per-site live bytes whose total
 * was the highest: it accounts for snapshot_bytes of the peak's bytes, taken snapshot_t_ns. */
struct prof_peak {
	bool known;
	uint64_t bytes;		/* exact peak live bytes */
	int64_t t_ns;		/* when it was last raised, since time_nanos; -1: never (0 bytes) */
	int64_t snapshot_t_ns;	/* when the peak snapshot was taken; -1: no snapshot */
	uint64_t snapshot_bytes;/* the total of its sites */
	struct prof_peak_site *sites;	/* sites with bytes in it, largest first */
	uint32_t nsites;
};

/* A process's largest request: its size, when it was made and where (its site's sample, whose
 * stack is the request's). */
struct prof_largest {
	bool known;
	uint64_t bytes;
	int64_t t_ns;		/* since time_nanos; -1: not recorded (--alloc-only) */
	uint32_t sample;	/* index into samples; PROF_NONE: the site was not kept */
};

/* An object a process's allocation functions were traced in. */
struct prof_alloc_obj {
	const char *path;
	const char *kind;	/* "glibc", "jemalloc", "libstdc++", ... */
	const char *functions;	/* the traced functions it serves, comma-separated */
};

struct prof_process {
	uint32_t pid;
	const char *comm;
	const char *cmdline;	/* argv joined by spaces, or NULL */
	struct prof_kv *calls;	/* per traced function, in insertion order */
	uint32_t ncalls;
	struct prof_kv *stats;	/* e.g. alloc_count, alloc_bytes, ... in insertion order */
	uint32_t nstats;
	const char *note;	/* e.g. which allocator was traced, or why nothing was */
	struct prof_scan scan;
	/* per-site live bytes were snapshotted nsnapshots times (the last at the end); trends
	 * were fitted over [fit_from_ns, fit_to_ns], since time_nanos. 0: no growth computed */
	uint32_t nsnapshots;
	int64_t fit_from_ns, fit_to_ns;
	struct prof_peak peak;	/* !peak.known: not recorded */
	struct prof_largest largest;	/* !largest.known: not recorded */
	const char *allocator;	/* kind of the object serving malloc, or NULL */
	struct prof_alloc_obj *alloc_objs;	/* every object traced, that one first */
	uint32_t nalloc_objs;
	uint32_t ppid;		/* parent's PID, 0: unknown */
	uint32_t ns_pid;	/* PID in its own (innermost) PID namespace if that differs, or 0 */
};

/* One process's use of one kernel slab cache (kmem): allocations it made there, how many of
 * them were freed (by anyone) and are still live, bytes requested and allocated (their
 * difference is the cache's waste). */
struct prof_cache {
	const char *name;	/* "filp", "kmalloc-64", ... */
	uint32_t pid;
	uint64_t allocs, frees, bytes_req, bytes_alloc, live;
};

/* A quantity of one process sampled during the run, e.g. its live bytes. */
struct prof_series {
	uint32_t pid;
	const char *name;	/* e.g. "live_bytes" */
	const char *unit;	/* e.g. "bytes" */
	int64_t *t_ns;		/* since the profile's time_nanos, ascending */
	int64_t *v;
	uint32_t n;
	uint32_t cap;
};

/* A histogram of one quantity over a power-of-two scale: slot 0 counts zeros; a value v > 0
 * with b = floor(log2 v) counts in slot 1 + b * sub + j, j the log2(sub) bits after v's leading
 * one (sub linear sub-buckets per power of two, for percentiles; sub 1 is the plain log2 layout
 * of the size histograms, render__bucket's); the last slot is open-ended. */
struct prof_hist {
	const char *name;	/* "latency" */
	const char *unit;	/* "nanoseconds", "bytes" */
	uint32_t sub;		/* a power of two */
	uint64_t *counts;
	uint32_t n;		/* slots */
};

/* A number of a group, with the column the text report shows it in. */
struct prof_group_stat {
	const char *name;	/* "latency_p50_ns": its JSON field */
	const char *label;	/* its text column ("P50"); NULL: JSON only (e.g. exact sums) */
	const char *unit;	/* "count", "bytes", "nanoseconds" */
	int64_t value;
};

/* A row of a mode's summary beside its samples, e.g. io's (disk, operation): labels that name
 * it, numbers, histograms. Every renderer that can shows them (text, JSON). */
struct prof_group {
	struct prof_info *labels;	/* ("device", "vda"), ("op", "read"): the row's name */
	uint32_t nlabels;
	struct prof_group_stat *stats;
	uint32_t nstats;
	struct prof_hist *hists;
	uint32_t nhists;
};

/* A finding of a run of several modes (ebprof profile): a fact the run measured that crossed a
 * documented threshold (docs/FINDINGS.md), with one concrete next step. Strings owned by the
 * profile. */
struct prof_finding {
	const char *mode;	/* the part it was measured in: "cpu", "mem", "io", ... */
	const char *kind;	/* the rule: "cpu_hot_function", ... (docs/FINDINGS.md) */
	const char *subject;	/* what it names: "hash_insert (table.c:88)", "vda read", ... */
	const char *fact;	/* the measured fact, one sentence */
	const char *threshold;	/* the rule it crossed, one phrase */
	const char *action;	/* the next step, one phrase */
	double value;		/* the number behind it (its rank among findings), in unit */
	const char *unit;	/* "percent", "bytes_per_second", "nanoseconds" */
	uint32_t pid;		/* the process it is about, 0: none in particular */
};

struct profile {
	const char *mode;		/* "mem", "cpu", ... */
	const char *command;		/* launched command line, or NULL */
	const char *kernel;		/* uname -r */
	const char *options;		/* command line of ebprof itself */
	int64_t time_nanos;		/* start, wall clock */
	int64_t duration_nanos;

	struct prof_value_type *types;
	uint32_t ntypes;
	uint32_t default_type;		/* index into types */

	struct prof_sample *samples;
	uint32_t nsamples;
	struct prof_location *locations;
	uint32_t nlocations;
	struct prof_function *functions;
	uint32_t nfunctions;
	struct prof_mapping *mappings;
	uint32_t nmappings;
	struct prof_process *processes;
	uint32_t nprocesses;
	struct prof_kv *drops;		/* by reason, all reasons listed even when 0 */
	uint32_t ndrops;
	const char **notes;		/* free-form remarks for the report, each once */
	uint32_t *note_counts;		/* how many times each was added (renderers: profile__note) */
	uint32_t nnotes;
	struct prof_series *series;	/* sampled during the run, in creation order */
	uint32_t nseries;
	struct prof_cache *caches;	/* kernel slab caches per process (kmem), in order added */
	uint32_t ncaches;
	uint64_t min_age_ns;		/* outstanding blocks younger than this are not counted */
	/* NULL: every call was recorded. "bytes" (one sample per sample_period bytes on average),
	 * "every" (every sample_period-th allocation): values are weighted estimates. "alloc-only":
	 * calls and requested bytes only. A static string, not owned. */
	const char *sampling;
	uint64_t sample_period;
	/* What one event of a sampled profile stands for, pprof's period_type and period: e.g.
	 * cpu/nanoseconds and 10101010 for a CPU profile sampled at 99 Hz. type NULL: not set
	 * (mem's pprof output then states its own, from `sampling`). */
	struct prof_value_type period_type;
	int64_t period;
	/* facts of the run every renderer shows (rate, CPUs, samples, samples lost, ...), in the
	 * order they were first added */
	struct prof_info *info;
	uint32_t ninfo;
	/* a mode's summary rows (io: one per disk and operation), in the mode's order */
	struct prof_group *groups;
	uint32_t ngroups;
	/* A run of several modes at once (ebprof profile): one profile per mode, owned; this
	 * profile then holds the run's metadata (copied into each part) and its findings, and no
	 * samples of its own. Renderers that show several parts (text, JSON, HTML) show them all;
	 * the others are written once per part (session__write_outputs). */
	struct profile **parts;
	uint32_t nparts;
	struct prof_finding *findings;	/* most significant first */
	uint32_t nfindings;
	/* read back from a pprof file (profile__load_pprof): what pprof has no field for is not
	 * known (slab caches, temporaries, ages, histograms), which renderers say, not "none" */
	bool from_pprof;

	void *priv;			/* interning tables */
};

/* NULL and errno set on failure. free accepts NULL and frees everything the profile owns. */
struct profile *profile__new(const char *mode);
void profile__free(struct profile *p);

/* Make part (a profile of one mode) a part of p, which owns it from now on. 0 or -ENOMEM (part
 * not taken). */
int profile__add_part(struct profile *p, struct profile *part);
/* Add a finding (strings copied). 0 or a negative errno. */
int profile__add_finding(struct profile *p, const struct prof_finding *f);

/* Setters copy their strings (NULL stays NULL). Return 0 or a negative errno. set_meta also sets
 * the metadata of p's parts. */
int profile__set_meta(struct profile *p, const char *command, const char *kernel,
		      const char *options, int64_t time_nanos, int64_t duration_nanos);
/* -EBUSY once samples exist: their value arrays are sized by the number of types. */
int profile__add_type(struct profile *p, const char *type, const char *unit);
/* Index of the sample type named `type`, or -1. */
int profile__type_index(const struct profile *p, const char *type);
/* Make `type` the default sample type (what reports sort by); -ENOENT if there is no such type. */
int profile__set_default_type(struct profile *p, const char *type);
/* Each process's total of `type` is its statistic `stat` (prof_value_type.proc_stat); -ENOENT
 * if there is no such type. */
int profile__set_type_proc_stat(struct profile *p, const char *type, const char *stat);
/* The total of type i over every process: the exact per-process totals where there are, the
 * samples elsewhere; clamped to int64_t's range (prof_add). */
int64_t profile__type_total(const struct profile *p, uint32_t i);
/* Each listed process's samples summed per type: [k * ntypes + i] is p->processes[k]'s sum of
 * type i (prof_add); a sample of a pid the list lacks counts in none. What a saved profile
 * knows of a process (pprof keeps no statistics). NULL with errno set on failure. */
int64_t *profile__process_sums(const struct profile *p);

/* a + b and a - b clamped to int64_t's range. Values can come from any pprof file, and a signed
 * overflow is undefined behaviour (two samples of INT64_MAX totalled -2). */
static inline int64_t prof_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t prof_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* The interning functions below return an index, or PROF_NONE with errno set (ENOMEM, or
 * EINVAL for a NULL name/file or an index out of range). */

/* Interned: the same (name, system_name, filename) returns the same index. */
uint32_t profile__function(struct profile *p, const char *name, const char *system_name,
			   const char *filename);
/* Interned on (pid, start, file); limit, offset and build_id of the first call are kept. */
uint32_t profile__mapping(struct profile *p, uint32_t pid, uint64_t start, uint64_t limit,
			  uint64_t offset, const char *file, const char *build_id);
/* The same for a function no symbol names, named after its FDE's range (struct
 * prof_function's cfi_named): name is also its system name; interned apart from a symbol's. */
uint32_t profile__function_cfi(struct profile *p, const char *name);
/* Whether name has the shape of such a name, "MODULE!sub_HEX" (MODULE without '/' or '!', HEX
 * lowercase), for a profile read back (pprof has no field for it). */
bool profile__is_cfi_name(const char *name);
/* Interned on (mapping, address, innermost function): one address may carry two names (an
 * alias). lines copied; the lines of the first call are kept. */
uint32_t profile__location(struct profile *p, uint32_t mapping, uint64_t address,
			   uint64_t module_offset, const struct prof_line *lines, uint32_t nlines);
/* A memo of the location a caller made of an address, in one scope at a time: `owner`, a
 * number that names the scope (stacks__user_locs: the sym_proc__serial its addresses were
 * resolved through). A call with another owner than the last's forgets what the last put.
 * PROF_NONE: not in the memo. */
uint32_t profile__memo_get(struct profile *p, uint64_t owner, uint64_t addr);
void profile__memo_put(struct profile *p, uint64_t owner, uint64_t addr, uint32_t loc);
/* Locations and values copied (values NULL: all zero); returns the new sample (valid until the
 * next add) or NULL with errno set (ENOMEM, or EINVAL for a location out of range). The
 * caller may fill s->out directly. */
struct prof_sample *profile__add_sample(struct profile *p, const uint32_t *locs, uint32_t nlocs,
					const int64_t *values, uint32_t pid);
/* The sample of pid with these locations, PROF_NONE if none (the first, if several were added
 * so). Indexed: a mode reading counts in several takes, or keys that differ only in frames the
 * report leaves out (the tracing machinery: another tool's program attached to a tracepoint
 * changes the kernel's path into ours), finds the sample it made already, so that a displayed
 * stack is one site. */
uint32_t profile__find_sample(struct profile *p, const uint32_t *locs, uint32_t nlocs,
			      uint32_t pid);
/* values (NULL: all zero) added to that sample, made if there is none (profile__add_sample):
 * the sample (valid until the next add) or NULL with errno set. Values only: a mode with
 * histograms or outstanding allocations adds those itself (profile__find_sample). */
struct prof_sample *profile__add_to_sample(struct profile *p, const uint32_t *locs,
					   uint32_t nlocs, const int64_t *values, uint32_t pid);
/* Copies n buckets (n == 0 clears). */
int prof_sample__set_hist(struct profile *p, struct prof_sample *s, const uint64_t *hist,
			  uint32_t n);
/* Same layout as the size histogram: bucket 0 = 0 ns, bucket b = [2^(b-1), 2^b) ns. */
int prof_sample__set_life(struct profile *p, struct prof_sample *s, const uint64_t *life,
			  uint32_t n);

/* Returns the process of `pid`, adding it if new; comm and cmdline replace the old ones when
 * non-NULL (a process may exec). NULL with errno set on failure. */
struct prof_process *profile__add_process(struct profile *p, uint32_t pid, const char *comm,
					  const char *cmdline);
/* NULL if there is no such process. Takes a const profile so renderers can use it. */
struct prof_process *profile__find_process(const struct profile *p, uint32_t pid);
/* Add v to the counter `name`, appending it (insertion order) if new. 0 or negative errno. */
int prof_process__add_call(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v);
int prof_process__add_stat(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v);
/* Set the stat `name` to v (for maxima such as peak_live_bytes), appending it if new. */
int prof_process__set_stat(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v);
int prof_process__set_note(struct profile *p, struct prof_process *proc, const char *note);
/* The allocator kind and the objects traced (copied). 0 or -ENOMEM. */
int prof_process__set_allocator(struct profile *p, struct prof_process *proc, const char *kind,
				const struct prof_alloc_obj *objs, uint32_t n);
/* Copy peak (and its sites) into proc, replacing what it had. 0 or a negative errno. */
int prof_process__set_peak(struct profile *p, struct prof_process *proc,
			   const struct prof_peak *peak);
/* Value of a stat/call by name; false if absent. */
bool prof_process__stat(const struct prof_process *proc, const char *name, uint64_t *v);
bool prof_process__call(const struct prof_process *proc, const char *name, uint64_t *v);

/* Adds count to the drop reason, appending the reason if new (list every reason, even at 0). */
int profile__add_drop(struct profile *p, const char *reason, uint64_t count);
/* Append a copy of c (its name copied). 0 or -ENOMEM. */
int profile__add_cache(struct profile *p, const struct prof_cache *c);
/* The cache rows of one (pid, name) made one, their numbers summed (a mode that took its
 * rows out of the kernel more than once as the run went on: kmem's spills), in (pid, name)
 * order. */
void profile__merge_caches(struct profile *p);
/* Append a point to the series (pid, name), creating it with unit on first use. Points must
 * come in time order per series. Returns 0 or a negative errno. */
int profile__add_point(struct profile *p, uint32_t pid, const char *name, const char *unit,
		       int64_t t_ns, int64_t v);
/* A series of rates from a running total (counted events): each point is the total's growth
 * since the previous call, per second, times scale, placed at the middle of that interval (the
 * first starts at t_ns 0, the total then 0). 0 or a negative errno. */
struct prof_rate {
	uint64_t last;
	int64_t last_t_ns;
};
int profile__add_rate_point(struct profile *p, struct prof_rate *r, uint32_t pid,
			    const char *name, const char *unit, int64_t t_ns, uint64_t total,
			    double scale);
/* Add a remark for the report. A note equal to one already there is not added again: its
 * count goes up (a command that execs 50 times gets one note, "... (50 times)"). */
int profile__add_note(struct profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, but a note equal to one already there is left as it is (a fact of the whole
 * profile that two writers may state: each unwinder of `cpu --offcpu` names the symbolizer's
 * drops). */
int profile__add_note_once(struct profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Note i as every renderer shows it: its text, followed by " (N times)" when it was added
 * N > 1 times. Returns buf, or the bare note when buf is too small for the whole. */
#define PROF_NOTE_MAX 4096	/* a buffer for profile__note */
const char *profile__note(const struct profile *p, uint32_t i, char *buf, size_t len);
/* Set the run fact `key` (a short name without ':', e.g. "rate", "samples_lost") to the
 * formatted value: appended if new, else replaced where it is. 0, -EINVAL for a bad key, or
 * -ENOMEM. */
int profile__add_info(struct profile *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of run fact `key`, or NULL. */
const char *profile__info(const struct profile *p, const char *key);
/* The count of drop reason `reason`, or -1 when the profile does not list it. */
int64_t profile__drop(const struct profile *p, const char *reason);
/* The period type and period (see struct profile). type and unit NULL clear it. 0 or a negative
 * errno. */
int profile__set_period(struct profile *p, const char *type, const char *unit, int64_t period);

/* (pick.c) A new empty profile with src's shape: mode, sample types, default type, period,
 * sampling, times. NULL and errno set on failure. */
struct profile *profile__new_like(const struct profile *src);
/* The samples of the processes pids[0..npids) in src, with their locations, functions and
 * mappings, and those processes (name, command line), in a new profile of src's shape (the
 * agent's one profile per service of a window). NULL and errno set on failure. */
struct profile *profile__pick(const struct profile *src, const uint32_t *pids, size_t npids);
/* Append the samples of src whose pid is one of pids[0..npids) (pids NULL: every sample) to p,
 * with their locations, functions and mappings; p has src's sample types (the same number).
 * 0 or -ENOMEM. */
int profile__copy_samples(struct profile *p, const struct profile *src, const uint32_t *pids,
			  size_t npids);

/* A new group, appended (valid until the next add), or NULL with errno set. */
struct prof_group *profile__add_group(struct profile *p);
/* Append a label, a number or a histogram (counts copied) to g. 0 or a negative errno. */
int prof_group__add_label(struct profile *p, struct prof_group *g, const char *key,
			  const char *value);
int prof_group__add_stat(struct profile *p, struct prof_group *g, const char *name,
			 const char *label, const char *unit, int64_t value);
int prof_group__add_hist(struct profile *p, struct prof_group *g, const char *name,
			 const char *unit, uint32_t sub, const uint64_t *counts, uint32_t n);
/* The value of g's label `key`, or NULL. */
const char *prof_group__label(const struct prof_group *g, const char *key);
/* A remark on the row (offcpu's run-queue row of a PID the kernel gave another process:
 * core/collector.h), kept as its last label, "note" (JSON's labels.note): not one of the labels
 * that name the row, the first prof_group__nnames(g), which the renderers show as columns; they
 * show the note under the row. A second note is not added. 0 or a negative errno. */
int prof_group__set_note(struct profile *p, struct prof_group *g, const char *note);
uint32_t prof_group__nnames(const struct prof_group *g);

/* ---- hist.c: histograms of struct prof_hist's layout ------------------------------------ */

/* Every count of h. */
uint64_t prof_hist__total(const struct prof_hist *h);
/* The values slot i holds, [*min, *max]; false for the open last slot (*max: UINT64_MAX). */
bool prof_hist__slot(const struct prof_hist *h, uint32_t i, uint64_t *min, uint64_t *max);
/* The q-quantile (0 < q <= 1) of the counted values, interpolated linearly within its slot (so
 * within 1/sub of a power of two of the truth); 0 without counts; the open slot's lower bound
 * when it falls there. */
double prof_hist__quantile(const struct prof_hist *h, double q);
/* h folded into out[0..nout): plain log2 buckets as render__bucket lays them out (bucket 0
 * holds 0, bucket b [2^(b-1), 2^b), the last open, as h's). Returns the number of buckets,
 * at most nout (what does not fit counts in the last). */
uint32_t prof_hist__log2(const struct prof_hist *h, uint64_t *out, uint32_t nout);

/* Index of the sample type "<class>_objects" (bytes: "<class>_space"), or -1. */
int profile__leak_type(const struct profile *p, enum prof_leak_class c, bool bytes);

/* ---- suppress.c: LeakSanitizer-style suppressions --------------------------------------- */

struct prof_suppressions;

/* Parse a suppressions file: one `leak:PATTERN` per line, `#` comments and blank lines
 * ignored. A pattern matches a frame's function name, source file or module (path or base
 * name) as a substring, with `*` matching any run of characters, `^` and `$` anchoring it.
 * NULL with errno set; *why (if non-NULL) gets a sentence naming the file and line. */
struct prof_suppressions *prof_suppressions__load(const char *path, char *why, size_t why_len);
void prof_suppressions__free(struct prof_suppressions *sp);
/* Mark the samples whose stacks match a suppression (s->suppressed) and move their leak
 * classes into each process's scan.suppressed_*. Returns how many samples were marked. */
uint32_t profile__suppress(struct profile *p, const struct prof_suppressions *sp);
/* Does the pattern match the string (the rule above)? For tests. */
bool prof_suppressions__match(const char *pattern, const char *s);

/* Display name of a location's frame `line_idx` (0 = innermost): the function (a function no
 * symbol names is "module!sub_HEX", cfi_named), or "module+0xoff" (module's base name) when
 * unsymbolized, or "0xaddr" without a mapping.
 * Writes into buf and returns it. */
const char *profile__frame_name(const struct profile *p, const struct prof_location *loc,
				uint32_t line_idx, char *buf, size_t len);

/* Is m kernel code: "[kernel.kallsyms]" (the core kernel), "[bpf]" (BPF programs), or a
 * module's "[name]" mapped in the kernel's half of the address space (core/stacks.c makes
 * them)? Renderers mark these frames "_[k]". */
bool profile__mapping_is_kernel(const struct prof_mapping *m);
/* The same for a location: false without a mapping. */
bool profile__location_is_kernel(const struct profile *p, const struct prof_location *loc);
/* Whether loc is a synthetic frame: not code but a name a mode puts in a stack (a thread
 * "name [tid]", kmem's kind, lock's lock, an event's name, "[truncated]", offcpu's "--"): no
 * mapping, address 0 (no code is at 0) and one line, its name. Renderers write no address for
 * it and leave it out of the tables of functions; pprof keeps it as such a location. */
static inline bool profile__location_is_synthetic(const struct prof_location *loc)
{
	return loc->mapping == PROF_NONE && loc->address == 0 && loc->nlines == 1;
}

/* ---- growth.c: live bytes of sites over time ------------------------------------------- */

/* Fewer snapshots than this (the last one at the end included) give no trend. */
#define PROF_GROWTH_MIN_SNAPSHOTS 3

/* Least-squares slope of v over t_ns, in units per second; 0 without two distinct times. */
double prof_growth__slope(const int64_t *t_ns, const int64_t *v, uint32_t n);
/* Index of the first point of the later half of [t0_ns, t_ns[n - 1]] (t_ns ascending). */
uint32_t prof_growth__later_half(const int64_t *t_ns, uint32_t n, int64_t t0_ns);
/*
 * The growth of one site from its snapshots: live bytes v at times t_ns (ascending), the window
 * starting at t0_ns, when the site held 0 bytes (tracing began); block_bytes a typical block of
 * the site (its mean allocation size). Returns 0, or -EAGAIN with g->trend NONE when there are
 * fewer than PROF_GROWTH_MIN_SNAPSHOTS points or fewer than two in the later half.
 */
int prof_growth__fit(const int64_t *t_ns, const int64_t *v, uint32_t n, int64_t t0_ns,
		     uint64_t block_bytes, struct prof_growth *g);
/* A process's snapshot count and the window trends were fitted over (its later half), from
 * the snapshot times t_ns[0..n) since t0_ns: proc->nsnapshots, fit_from_ns, fit_to_ns (0 when
 * too few snapshots for a trend). */
void prof_process__set_growth_window(struct prof_process *proc, const int64_t *t_ns, uint32_t n,
				     int64_t t0_ns);
/* "growing", "plateau", "shrinking", "flat"; NULL for NONE. */
const char *prof_trend__name(enum prof_trend t);

/* ---- pprof_read.c: loading a saved profile ---------------------------------------------- */

/*
 * A pprof profile (profile.proto, gzipped or not), ebprof's own or any other tool's: sample
 * types and the default one, time and duration, mappings, locations, functions and samples as
 * saved (ids become indices in id order). Each distinct numeric `pid` label becomes a process
 * named by the `comm` label (no pid labels at all: one process, pid 0, named after the first
 * mapping). The comments ebprof writes become the mode, command, kernel, run facts,
 * non-zero drops and notes again, and a period type (not mem's) is kept; another tool's comments become notes (its mode is "pprof").
 * Returns NULL with *err (if err is non-NULL) and errno set: a read error (-ENOENT, ...),
 * -EINVAL when the data is not a valid pprof profile, -EFBIG when it is or inflates past 1 GiB,
 * -ENOMEM. why (if non-NULL) gets a sentence on what is wrong, for the user. path "-" is
 * standard input.
 */
struct profile *profile__load_pprof(const char *path, int *err, char *why, size_t why_len);
/* The same from memory. */
struct profile *profile__parse_pprof(const void *data, size_t len, int *err, char *why,
				     size_t why_len);

/* ---- diff.c: comparing two profiles ----------------------------------------------------- */

/* The sample types of a diff profile, by index. */
enum prof_diff_type {
	PROF_DIFF_MAX,		/* named after the compared type: max(base, new) */
	PROF_DIFF_BASE,		/* "base" */
	PROF_DIFF_NEW,		/* "new" */
	PROF_DIFF_DELTA,	/* "delta": new - base */
	PROF_DIFF_NTYPES,
};

/*
 * base and newer compared in one sample type (NULL: base's default type), as a profile of mode
 * "diff" that every renderer can take: one sample per distinct stack, all of pid 0 and with no
 * processes. Stacks are matched by their frames' names root to leaf, pids and addresses aside:
 * a function by name and source file, an unsymbolized frame by module and offset, inline frames
 * one by one; so two runs of one program line up. Its types, all in the compared type's unit:
 * the compared type itself valued max(base, new) (the default, what flame graphs weigh frames
 * by, so a stack that vanished still has a width), then "base", "new" and "delta".
 * NULL with errno set: EINVAL if either profile lacks the type, the units differ, or the type is
 * named like one of the others; ENOMEM.
 */
struct profile *profile__diff(const struct profile *base, const struct profile *newer,
			      const char *type);
/* Is p a diff profile (mode "diff" with the four types above)? */
bool profile__is_diff(const struct profile *p);

#endif
