/* What the BPF modes' collectors (all but mem's, which keeps its own) hold besides their own
 * state, and the steps and hooks that are the same in each. A `struct collector` is the first
 * member of the mode's collector, so that the hooks below take the mode's pointer as
 * core/mode.h passes it; the mode keeps its typed skeleton for its maps and programs, the
 * collector the skeleton's generic part (struct bpf_object_skeleton: what bpftool's NAME__load,
 * __detach and __destroy call into). The mode's own logic (rodata, map sizes, what it reads and
 * how it names things) stays in the mode. */
#ifndef EBPROF_CORE_COLLECTOR_H
#define EBPROF_CORE_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/bpfutil.h"
#include "core/stacks.h"

struct bpf_map;
struct bpf_object_skeleton;
struct log_ctx;
struct proc_table;
struct profile;
struct ring_buffer;
struct session_env;
struct stack_table;
struct unwinder;

/* -a: the ring buffer of processes the BPF side announces (a note each, the first time it sees
 * one); without -a the smallest ring the kernel takes. */
#define COLLECTOR_NOTES_SIZE (1 << 16)
/* The tables a spill watches fill (collector__spill), and the maps that refer to stacks. */
#define COLLECTOR_SPILL_TABLES 3
#define COLLECTOR_REF_MAPS 8

struct collector {
	const struct log_ctx *lc;
	struct bpf_object_skeleton *skeleton;	/* the mode's skeleton's, or NULL before open */
	void *skel;			/* the skeleton (NAME_bpf), freed with it */
	struct proc_table *procs;	/* every process attached or seen */
	struct unwinder *unwinder;	/* NULL: frame pointers only */
	struct stack_table *st;		/* the copy of the `stacks` map, or NULL (kmem, cpu) */
	struct ring_buffer *notes;	/* -a only: the processes the BPF side announces */
	int wake_ep;			/* with notes: an epoll of theirs and the unwinder's */
	bool kname_at_exec;		/* the BPF side's names are renewed at each exec: they
					 * name a process seen with -a (collector__report_proc) */
	/* the stacks map a spill empties, the copy of it to clear (cpu: its windows') and the
	 * maps whose entries refer to stacks (collector__set_stacks) */
	int stacks_fd;
	struct stack_table *spill_st;
	struct stack_ref_map refs[COLLECTOR_REF_MAPS];
	unsigned nrefs;
	uint64_t spill_refused;			/* at the last spill (collector__spill) */
	uint64_t spill_keys[COLLECTOR_SPILL_TABLES];
	unsigned spills;
	bool wake_made;			/* (wake_ep is made at the first collector__wake_fd) */
	/* a run cut into windows: one process's read-outs (an exec's, code replaced) since the
	 * last window, for the next one (collector__readout) */
	struct profile *readout;
	/* --per-thread: the mode's `thread_names` map (bpf/lib/tname.bpf.h), 0: none; the names
	 * its last two takes took out of it, sorted (collector__take_thread_names) */
	int tnames_fd;
	struct collector_tnames {
		struct collector_tname *e;
		size_t n, cap;
	} tnames[2];
	/* the double-buffered tables (bpf/lib/take.bpf.h): the programs' generation, through the
	 * mapping of the object's ".data.take" (NULL: the mode has none), and the object's
	 * `take_barrier` array of maps with the table put in its slot, whose update is the
	 * flip's wait (collector__flip; the table made at the first flip, -1 before) */
	volatile uint32_t *take_gen;
	int take_outer_fd, take_inner_fd;
	bool take_warned;
};

/* First in a mode's open: libbpf's messages as -v says, the process table on the run's
 * symbolizer and, with `stacks`, a stack table. 0 or -ENOMEM (the caller fails quietly, as
 * for its own allocations). */
int collector__init(struct collector *b, const struct session_env *env, bool stacks);

/* After NAME_bpf's MINBTF_OPEN (core/minbtf.h): its result sk, with the skeleton the collector
 * loads, detaches and destroys from now on. 0, or -errno when sk is NULL (said: "cannot open
 * the BPF program"). A macro: the skeleton's type is the mode's. */
#define collector__opened(b, sk) collector__set_skel((b), (sk), (sk) ? (sk)->skeleton : NULL)
int collector__set_skel(struct collector *b, void *skel, struct bpf_object_skeleton *s);

/* Load the skeleton (its rodata and map sizes set) and open the unwinder on its maps (how:
 * --unwind); `feed` hands each snapshot of the process table to the unwinder
 * (proc_table__set_unwinder) for the modes that do not load it themselves. 0, or a negative
 * errno (said, with the hint about the verifier's log). */
int collector__load(struct collector *b, int how, bool feed);

/* The double-buffered tables (bpf/lib/take.bpf.h): a take (a spill, a window) first flips the
 * generation the programs count into and waits until no program can still be counting into
 * the other one (collector__flip: an update of the object's `take_barrier` array of maps,
 * which the kernel makes wait for an RCU grace period, synchronize_rcu, before it returns;
 * every program ebprof runs, in a
 * tracepoint, a uprobe or a perf event's interrupt, runs inside what that waits for), then
 * takes that one at leisure: no writer is left, no add lost. COLLECTOR_FD is a table's fd of
 * the generation counted now (reads of one process, the run's end), COLLECTOR_TAKEN_FD the
 * one the last flip took away from the programs; COLLECTOR_SIZE sizes both before load.
 * collector__load finds the generation and the barrier (nothing to name: the object's
 * ".data.take" and `take_barrier`). */
int collector__gen_fd(const struct collector *b, const struct bpf_map *t0,
		      const struct bpf_map *t1, bool taken);
#define COLLECTOR_FD(b, maps, name) \
	collector__gen_fd((b), (maps).name##_0, (maps).name##_1, false)
#define COLLECTOR_TAKEN_FD(b, maps, name) \
	collector__gen_fd((b), (maps).name##_0, (maps).name##_1, true)
#define COLLECTOR_SIZE(maps, name, n) \
	(bpf_map__set_max_entries((maps).name##_0, (n)), \
	 bpf_map__set_max_entries((maps).name##_1, (n)))
/* Flip the generation and wait (above); nothing for a mode without such tables. A wait that
 * fails is said once (the takes may then lose the adds made while they copy, as before). */
void collector__flip(struct collector *b);

/* Before load: the size of the mode's `notes` ring buffer (COLLECTOR_NOTES_SIZE with -a). */
void collector__size_notes(struct bpf_map *notes, bool all);
/* After load, with -a (all): the reader of the `notes` ring buffer, which adds each announced
 * process to the table with a snapshot (proc_table__notes). 0, or -errno (said). */
int collector__notes(struct collector *b, struct bpf_map *notes, bool all);
/* The processes announced since the last look (-a), while their mappings are there: every
 * tick, at a window, at stop. Nothing without a reader. */
void collector__consume_notes(struct collector *b);

/* A mode whose programs filter on a `targets` map: pid in it, attached and snapshot. 0;
 * -ESRCH when it is gone already; else the error, said ("cannot trace PID ..."; -E2BIG: more
 * than max_targets processes at once). */
int collector__target(struct collector *b, pid_t pid, int targets_fd, unsigned max_targets);
/* pid, held at its exit (or exec) stop: a snapshot of its mappings while they are still
 * readable. Its entry, or NULL (no memory). */
struct proc_info *collector__hold(struct collector *b, pid_t pid);

/* The process tgid as a report names it, in b's table: its mappings snapshot now unless exec (at
 * an exec, the snapshot the hold took is of the old program); its name from /proc, else kcomm
 * (the kernel's name of it, at most kcomm_len bytes; NULL or "": none), else "?" (gone).
 * kthread: kcomm names it even when /proc has a name (a kworker's carries its current work);
 * so it does a process not attached when b->kname_at_exec.
 * Its entry, or NULL (no memory). */
struct proc_info *collector__report_proc(struct collector *b, pid_t tgid, bool exec,
					 const char *kcomm, size_t kcomm_len, bool kthread);
/* Whether the kernel's name of tgid is needed (collector__report_proc's kcomm): it is not in
 * b's table with a name, or it is one seen with -a in a mode whose kernel names follow execs
 * (kname_at_exec). Else it is not worth a map lookup per record (but for a kernel thread's,
 * in modes that prefer it). */
bool collector__needs_kname(const struct collector *b, pid_t tgid);

/* The name of thread tid of process tgid as it was at the counts of its name's generation gen
 * (--per-thread: struct stack_key's gen; the mode's `thread_names` map, bpf/lib/tname.bpf.h,
 * or the names its last two takes took out of it), else its name now (/proc: that map was
 * full), else "?" (gone). */
void collector__thread_name(struct collector *b, pid_t tgid, pid_t tid, uint32_t gen, char *buf,
			    size_t len);
/* --per-thread: the mode's `thread_names` map, which each spill (collector__spill) and window
 * (collector__take_thread_names) empties. */
void collector__set_thread_names(struct collector *b, int fd);
/* The thread names kept in the kernel taken out of it, before the counts they belong to are
 * taken (a spill's, a window's), so that the table never fills over a long run: a count made
 * before this take has its name in it; one made after, a name kept anew (the kernel keeps a
 * name when a count of its (tid, gen) is made and finds none). The take before is kept too:
 * a count whose name the kernel found just before this take, and which is made only after
 * the counts are taken, is read at the next take, its name in this one. Earlier ones are
 * freed. Nothing without --per-thread. */
void collector__take_thread_names(struct collector *b);

/* The drops counted in the mode's per-CPU stats array stats_fd, counters first..n-1 (named by
 * names), `skip` left out (a reason of -a only; -1: none), into prof; their values into v[]
 * (v[skip] 0) for the mode's notes. */
void collector__add_drops(struct profile *prof, int stats_fd, const char *const *names, int first,
			  int n, int skip, uint64_t *v);
/* A mode's per-process totals table (TAKE_TABLE's two generations t0, t1, tgid -> val_size
 * bytes, exact whatever the per-stack table kept) into cb(key, value, ctx): process `only`'s
 * taken out of the generation counted now (an exec: it counts on from 0 under its new program),
 * or every process's, taken out at once of the one the last flip took away (take: a window, a
 * spill) or read (the end). A failure is said (the rows may be incomplete).
 * COLLECTOR_READ_PROCS names the table as COLLECTOR_FD does. */
int collector__read_procs(struct collector *b, const struct bpf_map *t0, const struct bpf_map *t1,
			  size_t val_size, pid_t only, bool take,
			  int (*cb)(const void *key, const void *val, void *ctx), void *ctx);
#define COLLECTOR_READ_PROCS(b, maps, name, val_size, only, take, cb, ctx) \
	collector__read_procs((b), (maps).name##_0, (maps).name##_1, (val_size), (only), (take), \
			      (cb), (ctx))
/* The note of n events (`one`, `many`: "wait", "waits") in no process's totals (the mode's
 * per-process table, of `room` processes, full; the drop process_totals_full), if n: the rows and
 * totals are short by them, their stacks are not. */
void collector__note_totals_full(struct profile *prof, uint64_t n, const char *one,
				 const char *many, uint32_t room);
/* The note of n processes the BPF side could not announce (the notes ring buffer full), if n. */
void collector__note_notes_lost(struct profile *prof, uint64_t n);
/* The note of n thread names --per-thread could not keep (bpf/lib/tname.bpf.h: the mode's
 * `thread_names` map, of size entries, full), if n; `option` sizes that map. */
void collector__note_thread_names(struct profile *prof, uint64_t n, const char *option,
				  uint32_t size);
/* -a: the PIDs the kernel gave another process during the run (bpf/lib/pidreuse.bpf.h: the
 * mode's `reused` map, reused_fd; `times`, the mode's count of them), if any: the report keys
 * processes by PID, so each such process row (and each group labelled with its "pid": offcpu's
 * run-queue table) holds the processes' numbers together, under the last one's name; said on
 * the row (its note, the group's "note" label), in the run's note naming the first few
 * (procs__note_reused) and as the run fact pids_reused (the larger, when two collectors of one
 * run, cpu --offcpu's, both count). */
void collector__note_reused(struct profile *prof, int reused_fd, uint64_t times);
/* The same for a window: the PIDs given again since the last window, taken out of the
 * `reused` map (a run cut into windows writes no report: each window says its own) before the
 * window takes the counts (a reuse is counted before the event that met it: that event is
 * then in the window), then said once the counts are in it (its rows, its note "during the
 * window", its fact pids_reused). `times`: the mode's count of them so far, *last its value
 * at the last window (updated). */
#define COLLECTOR_REUSED_MAX 1024	/* the `reused` map's size */
struct collector_reused {
	uint64_t times;
	uint32_t n;
	struct {
		uint32_t pid, times;
	} e[COLLECTOR_REUSED_MAX];
};
void collector__reused_take(struct collector_reused *w, int reused_fd, uint64_t times,
			    uint64_t *last);
void collector__reused_say(const struct collector_reused *w, struct profile *into);
/* The waits already going on when tracing started (-p: pid's threads; pid 0: every task, -a):
 * the mode's task iterator run once, which gives each such thread an entry from the start
 * (offcpu_begun, lock_begun); `what` names those waits in the warning if it cannot run. */
void collector__find_begun(struct collector *b, struct bpf_program *iter, pid_t pid,
			   const char *what);
/* Their run fact begun_before_start and note, if n: "N <one|many> already <state> when tracing
 * started: <counted>; <stack>" (NULL: "its user stack ... [user stack not seen]"). */
void collector__note_begun(struct profile *prof, uint64_t n, const char *one, const char *many,
			   const char *state, const char *counted, const char *stack);

/* Every tick (core/mode.h's tick): the processes announced since the last one (-a), a new
 * snapshot of the attached ones each second, the unwinder's tick. A mode's tick as it is, for
 * a collector that needs nothing else then. */
void collector__tick(void *m, int64_t t_ns, bool second);
/* After load: the mode's stacks map (stacks_fd), st the copy of it to clear when it is emptied
 * (NULL: none), and the n maps whose entries refer to its stacks (at most COLLECTOR_REF_MAPS:
 * the waits or requests going on, then the count tables), for collector__reclaim. */
void collector__set_stacks(struct collector *b, int stacks_fd, struct stack_table *st,
			   const struct stack_ref_map *refs, unsigned n);
/* Empty the stacks map and its copy but for the stacks the maps of collector__set_stacks refer
 * to now (stack_map__reclaim), so that counting goes on. How many stacks went back. */
size_t collector__reclaim(struct collector *b);
/* The same at a window, once the copy holds three quarters of max stacks (a window fetches the
 * stacks it counted into the copy, which grows as the map does). */
void collector__reclaim_full(struct collector *b, uint32_t max);

/* Where a read-out of one process goes (at its exec, or when its code was replaced): the run's
 * profile; in a run cut into windows, which never writes it, a profile of its shape that the
 * next window takes (collector__window_readout). The run's profile there grew with every exec
 * for as long as the agent ran, and what the old programs did was in no window. */
struct profile *collector__readout(struct collector *b, const struct session_env *env);
/* A window (after the mode's own counts are in it): the read-outs since the last one, with
 * their processes (a process in the window already keeps its name there: an exec's old program
 * goes under the new one's) and their statistics added to its. 0 or -ENOMEM. */
int collector__window_readout(struct collector *b, struct profile *into);

/* How full a mode's tables are getting, each tick (collector__spill): for each table a spill
 * empties, the BPF side's count of the keys it made (its inserts) and its room (0: no table);
 * and what they refused so far (their drops). */
struct spill_check {
	uint64_t keys[COLLECTOR_SPILL_TABLES];
	uint32_t room[COLLECTOR_SPILL_TABLES];
	uint64_t refused;
};
/* A spill, each tick, so that a long -a run does not fill up with the keys of processes long
 * gone: when the keys a table made since the last spill are three quarters of its room, or a
 * table refused something since, take(m) takes the mode's tables out of the kernel into the
 * run's profile (its counts, and what it sums apart: 0 or a negative errno), then, when it
 * did, the stacks map is emptied but for what is still referred to (collector__reclaim).
 * The tables are flipped first (collector__flip): take reads the generation taken away.
 * Counted and said at -v; never in a run cut into windows (each window takes its counts).
 * Whether it spilled. */
bool collector__spill(struct collector *b, const struct session_env *env,
		      const struct spill_check *due, int (*take)(void *m), void *m);
/* Every entry of the table fd taken out of the kernel (read and deleted a batch at a time:
 * bpfutil__map_take) into cb, for a mode that sums a table apart from the profile as the run
 * goes (offcpu's run-queue latencies, lock's per-lock totals). A failure is said, naming
 * `what` (some of it may be missing from the report). How many entries were taken, or a
 * negative errno. */
long collector__take(struct collector *b, int fd, size_t key_size, size_t val_size,
		     bpfutil_map_cb cb, void *ctx, const char *what);

/* core/mode.h's wake_fd and wake: the unwinder's news of code mapped since its tables were
 * loaded or of a process met without them (core/unwind.h), and with -a the processes the BPF
 * side announces (snapshot at once: a process living 20 ms is gone by the next tick, its
 * frames bare addresses). */
int collector__wake_fd(void *m);
void collector__wake(void *m);
/* core/mode.h's detach: every link of the skeleton's programs (NAME_bpf__detach). */
void collector__detach(void *m);
/* What it holds, freed, after the mode's own: the notes reader, the skeleton (its links,
 * programs and maps), the process table (free_priv: the mode's proc_info.priv, or NULL), the
 * unwinder, the stack table. */
void collector__close(struct collector *b, void (*free_priv)(void *priv));

#endif
