/* The processes a mode has seen, each with its last snapshot of mappings (for symbolizing its
 * stacks after it exits), its name and command line. Shared by the modes that read their
 * counts by process (cpu, stacks, and the ones to come). Stable pointers: entries never move. */
#ifndef EBPROF_CORE_PROCS_H
#define EBPROF_CORE_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "abi/unwind.h"

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
	uint64_t forked_hash;	/* forked_from's maps_hash then: its snapshots name p's frames
				 * only while they map the same code */
	uint8_t parent_unproven;	/* enum proc_parent_unproven: why its parent's mappings
					 * do not name its frames */
	bool pruned;		/* being freed by proc_table__prune_gone */
	/* with proc_table__keep_idents: the process and exec its snapshot sp is of (read before
	 * and after its maps file, the same both times), and sp's pages mapped executable */
	bool ident_ok;
	struct unwind_ident ident;
	uint64_t exec_pages;
	/* untargeted at its reaping (proc_table__untarget): its process is gone, and a target
	 * of its PID from now on is another process (see proc_table__set_readout) */
	bool reaped;
};

/* Why a process gone before its note was read, which had forked from a parent without an exec
 * since (the note said so), is not named by its parent's mappings: they could not be shown to
 * be those of the fork. */
enum proc_parent_unproven {
	PROC_PARENT_PROVEN,
	PROC_PARENT_GONE,	/* the parent is gone too, and no snapshot of it is known to be
				 * of the process and exec the kernel saw */
	PROC_PARENT_OTHER,	/* another process or program at its PID: it exec'd, or exited
				 * and its PID was given again */
	PROC_PARENT_CODE,	/* it has more or less code mapped than the kernel saw (a library
				 * opened or closed since), or its snapshot changed since */
};

/* The mappings that name p's frames: its own snapshot, or its parent's (forked_from) while it
 * maps the code it mapped when p's note was read. NULL: none. */
struct sym_proc *proc_info__mappings(const struct proc_info *p);
/* Why p's frames are not named by its parent's mappings (PROC_PARENT_PROVEN: p has mappings,
 * or had no parent to be named by), and a few words saying so. */
enum proc_parent_unproven proc_info__parent_unproven(const struct proc_info *p);
const char *proc_parent_unproven__str(enum proc_parent_unproven why);

struct proc_table;

/* sym: the run's symbolizer (NULL: no snapshots). NULL and errno on failure. */
struct proc_table *proc_table__new(struct symbolizer *sym);
/* Every snapshot from now on also reads its process's identity (proc_info's ident: two reads
 * of /proc/PID/stat more), for notes naming a parent (proc_table__notes). */
void proc_table__keep_idents(struct proc_table *t);
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

/* A record of a mode's notes ring (proc_table__notes): a prefix of this, at least the tgid. */
struct proc_note {
	uint32_t tgid;		/* a process seen for the first time */
	uint32_t exec;		/* not 0: one seen before exec'd (or another has its PID) */
	uint32_t parent;	/* its parent's tgid if it has exec'd nothing since its fork and
				 * the parent still ran that image with as much code mapped */
	uint32_t pad;
	/* with parent, the whole record: the parent then (abi/unwind.h: /proc/PID/stat's
	 * starttime, endcode, startstack) and its pages mapped executable (mm->exec_vm) */
	struct unwind_ident parent_ident;
	uint64_t parent_exec_pages;
};

/* -a: a reader of a mode's ring buffer map_fd of announced processes (struct proc_note, sent
 * the first time the mode's programs see one, or when one seen before exec'd): each one t does
 * not have, and each that exec'd, is (added and) snapshot when the reader is consumed
 * (ring_buffer__consume: when a note wakes the collector, and every tick; a process seen
 * system-wide can exit at any time). A new one gone by then that forked without an exec gets
 * its parent's mappings (they map its code) if they are shown to be those the kernel saw: the
 * parent's snapshot of that process and exec (proc_table__keep_idents) with as much code
 * mapped, or its maps file read now, its identity the same before and after. Else none, and
 * why (proc_info__parent_unproven). NULL and errno set on failure; the caller frees it with
 * ring_buffer__free. */
struct ring_buffer;
struct ring_buffer *proc_table__notes(struct proc_table *t, int map_fd);
/* One such record of len bytes, as the reader takes it (tests). */
void proc_table__note(struct proc_table *t, const void *data, size_t len);

/* A mode's reading out of what its programs counted of pid so far (kept in the kernel by
 * tgid), into the report, named by pid's entry as it is then (proc_info__mappings): what an
 * exec reads out. */
typedef void (*proc_readout_fn)(void *ctx, pid_t pid);
/* With a readout: a target (proc_table__target) whose entry's snapshots are of an earlier
 * process with its PID (untargeted since, at its reaping: the kernel gave the PID again) has
 * that process's counts read out first, named by its own snapshots, and then starts a snapshot
 * history of its own: its frames are named from its mappings only, never from the earlier
 * process's (which, kept, made an address where the two programs have other code
 * [ambiguous: A or B]). Not traced until then, it has counted nothing yet. Without a readout,
 * and for a process seen with -a (every process counts: the earlier one's counts and the new
 * one's first are one key in the kernel), the earlier snapshots stay: where their code
 * differs, such a frame is named from neither. */
void proc_table__set_readout(struct proc_table *t, proc_readout_fn fn, void *ctx);

/* pid traced by a mode whose programs filter on a `targets` hash map (tgid -> __u8, 1): its
 * entry (into *out if not NULL), in the map, attached and snapshot. 0, -ENOMEM, or the map's
 * error (-E2BIG: full). */
int proc_table__target(struct proc_table *t, pid_t pid, int targets_fd, struct proc_info **out);
/* pid is gone (the mode's reaped): out of the targets map, not attached; a target of pid
 * after this is another process (proc_table__set_readout). */
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
/* The pages a maps file's text maps executable, as the kernel counts them (mm->exec_vm:
 * executable, not writable; [vsyscall] is no mapping of the process). */
uint64_t proc_maps__exec_pages(const char *maps);

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
