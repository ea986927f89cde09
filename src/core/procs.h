/* The processes a mode has seen, each with its last snapshot of mappings (for symbolizing its
 * stacks after it exits), its name and command line. Shared by the modes that read their
 * counts by process (cpu, stacks, and the ones to come). Stable pointers: entries never move. */
#ifndef EBPROF_CORE_PROCS_H
#define EBPROF_CORE_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct sym_proc;

/* Snapshots of a process kept, the last one and the earlier ones it replaced: mappings gone
 * since (a library unloaded with dlclose) still name their frames. */
#define PROC_SNAPSHOTS_KEPT 16

struct proc_info {
	pid_t pid;
	struct sym_proc *sp;	/* its mappings as last seen (and earlier), or NULL */
	char comm[16];		/* as last seen ("" until known) */
	char *cmdline;		/* argv joined by spaces, or NULL */
	bool attached;		/* attached by the session (not only seen system-wide) */
	bool drained;		/* its counts were read out once: later ones merge into them */
	uint64_t maps_hash;	/* of the executable lines sp was made from (0: none) */
	void *priv;		/* the mode's own (freed by the free_priv given to free) */
	uint32_t gone_calls;	/* proc_table__prune_gone calls that found it gone */
	uint64_t mm_mark;	/* the mode's mark of its address space when sp was read */
	uint32_t names_call;	/* the proc_table__snapshot_some call that last read its names */
	/* a snapshot since the mode last looked maps code where an earlier one had other code
	 * (sym_proc__replaces_code: a library replaced and opened again at the same place); a
	 * mode that reads its counts out then (cpu) clears it */
	bool code_replaced;
	/* its parent's entry when it had no snapshot of its own and forked from that process
	 * with no exec since (see proc_table__notes): its code is mapped as the parent's */
	const struct proc_info *forked_from;
	bool pruned;		/* being freed by proc_table__prune_gone */
};

/* The mappings that name p's frames: its own snapshot, or its parent's (forked_from). */
struct sym_proc *proc_info__mappings(const struct proc_info *p);

struct proc_table;

/* sym: the run's symbolizer (NULL: no snapshots). NULL and errno on failure. */
struct proc_table *proc_table__new(struct symbolizer *sym);
/* Frees every entry's snapshot and, with free_priv, its priv. Accepts NULL. */
void proc_table__free(struct proc_table *t, void (*free_priv)(void *priv));

struct proc_info *proc_table__find(const struct proc_table *t, pid_t pid);
/* The entry of pid, made (with its name read from /proc) if new; NULL on ENOMEM. */
struct proc_info *proc_table__add(struct proc_table *t, pid_t pid);
/* Take a new snapshot of p's mappings, name and command line if it still has mappings (a
 * zombie's maps file is empty, and the last snapshot is worth more than none); its files are
 * opened now, while /proc/PID/root and map_files exist. While its executable mappings read the
 * same as at the last snapshot, that one is kept (only the name and command line are read
 * again). Returns whether it did. */
bool proc_table__snapshot(struct proc_table *t, struct proc_info *p);

/* A mode's mark of a process's address space (see proc_table__set_mm_marks), or this when it
 * has none to give: the maps file is then read at every look. */
#define PROC_MM_UNKNOWN 1ULL
typedef uint64_t (*proc_mm_mark_fn)(void *ctx, pid_t pid);
/* mark: a value that moves whenever the process's address space may have changed since it
 * last read it, for a mode whose programs see each traced process's mm (cpu: its samples read
 * the mm's write-lock sequence). proc_table__snapshot_some then reads a process's maps file
 * only when its mark moved since the last read (or is PROC_MM_UNKNOWN), and its name and
 * command line then or every PROC_NAMES_EVERY calls. NULL: read every time (the default). */
void proc_table__set_mm_marks(struct proc_table *t, proc_mm_mark_fn mark, void *ctx);
#define PROC_NAMES_EVERY 10
/* Whether p's maps file needs reading again, its mark now being `mark`. */
bool proc_info__maps_due(const struct proc_info *p, uint64_t mark);

/* A new snapshot of every process attached (mappings loaded since the last look: a launched
 * program maps its libraries after the exec stop it was attached at). */
void proc_table__snapshot_attached(struct proc_table *t);
/* The same for at most max attached processes, going on from where the last call stopped: a
 * bounded cost per call, every process looked at in turn (each call, when there are few).
 * With a mode's marks (proc_table__set_mm_marks), the maps file only of those whose marks
 * moved. */
void proc_table__snapshot_some(struct proc_table *t, uint32_t max);
/* -a: each process of the BPF hash map map_fd, keyed by tgid (__u32) with values of val_size
 * (a mode's names of the processes its programs saw), that t does not have yet: added and
 * snapshot, so that its stacks symbolize if it is gone by the end. 0 or a negative errno. */
int proc_table__adopt(struct proc_table *t, int map_fd, size_t val_size);

/* -a: a reader of a mode's ring buffer map_fd of announced processes (records that start with
 * a __u32 tgid, sent the first time the mode's programs see one; a second __u32, when there is
 * one, not 0 when one seen before exec'd; a third, when there is one, its parent's tgid if it
 * has exec'd nothing since its fork): each one t does not have, and each that exec'd, is
 * (added and) snapshot when the reader is consumed (ring_buffer__consume: when a note wakes the
 * collector, and every tick; a process seen system-wide can exit at any time). A new one gone
 * by then that forked without an exec gets its parent's mappings (they map its code). NULL and
 * errno set on failure; the caller frees it with ring_buffer__free. */
struct ring_buffer;
struct ring_buffer *proc_table__notes(struct proc_table *t, int map_fd);

/* pid traced by a mode whose programs filter on a `targets` hash map (tgid -> __u8, 1): its
 * entry (into *out if not NULL), in the map, attached and snapshot. 0, -ENOMEM, or the map's
 * error (-E2BIG: full). */
int proc_table__target(struct proc_table *t, pid_t pid, int targets_fd, struct proc_info **out);
/* pid is gone (the mode's reaped): out of the targets map, not attached. */
void proc_table__untarget(struct proc_table *t, pid_t pid, int targets_fd);

/* A live view's table over hours of -a: forget the processes not attached that have been gone
 * (not in /proc) for more than `after` calls, so that a process's last counts, read by the
 * window after its exit, still find its snapshot. Their snapshots (and open files) go; with
 * free_priv, their priv. Returns how many. */
uint32_t proc_table__prune_gone(struct proc_table *t, uint32_t after,
				void (*free_priv)(void *priv));
/* Each new snapshot's mappings go to u too (its tables for the BPF unwinder), and an
 * untargeted process out of it; the mappings u reads itself (code a stack met that it had no
 * table for) become a snapshot of their process too. u: NULL for none. */
struct unwinder;
void proc_table__set_unwinder(struct proc_table *t, struct unwinder *u);
/* Only the last: the mappings u reads itself become a snapshot of their process (a mode that
 * feeds u itself: stacks). */
void proc_table__follow_unwinder(struct proc_table *t, struct unwinder *u);

/* A hash of the executable lines of a maps file ("start-end perms offset dev inode path"):
 * what can name a frame, unchanged by the heap's growth. */
uint64_t proc_maps__exec_hash(const char *maps);

uint32_t proc_table__count(const struct proc_table *t);
struct proc_info *proc_table__at(const struct proc_table *t, uint32_t i);

/* The note of n PIDs the kernel gave another process during the span ("run", or "window" in a
 * run cut into windows; the first nex of them in ex[]; more: one of them went to more than two
 * processes), if n: the report keys processes by PID, so each such row holds their numbers
 * together, which is said rather than passing several programs off as one. */
struct profile;
void procs__note_reused(struct profile *prof, uint64_t n, const pid_t *ex, uint32_t nex,
			bool more, const char *span);

#endif
