/* The processes a mode has seen, with their last mappings (see procs.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/procs.h"
#include "core/target.h"
#include "core/unwind.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

struct proc_table {
	struct symbolizer *sym;
	struct proc_info **p;
	uint32_t n, cap;
	struct pid_index by_pid;	/* the newest of each pid */
	uint32_t cursor;	/* where proc_table__snapshot_some goes on */
	struct unwinder *unwinder;	/* or NULL */
	proc_mm_mark_fn mark;		/* or NULL: every look reads the maps file */
	void *mark_ctx;
	uint32_t some_calls;		/* of proc_table__snapshot_some */
	bool loading;			/* in a snapshot's own unwinder__load */
	bool idents;			/* proc_table__keep_idents */
	proc_readout_fn readout;	/* or NULL */
	void *readout_ctx;
};

void proc_table__set_readout(struct proc_table *t, proc_readout_fn fn, void *ctx)
{
	t->readout = fn;
	t->readout_ctx = ctx;
}

void proc_table__keep_idents(struct proc_table *t)
{
	t->idents = true;
}

void proc_table__set_mm_marks(struct proc_table *t, proc_mm_mark_fn mark, void *ctx)
{
	t->mark = mark;
	t->mark_ctx = ctx;
}

static uint64_t mm_mark(const struct proc_table *t, pid_t pid)
{
	return t->mark ? t->mark(t->mark_ctx, pid) : PROC_MM_UNKNOWN;
}

bool proc_info__maps_due(const struct proc_info *p, uint64_t mark)
{
	return !p->sp || mark == PROC_MM_UNKNOWN || mark != p->mm_mark;
}

static void read_names(struct proc_info *p)
{
	char cmd[512];

	target__comm(p->pid, p->comm, sizeof(p->comm));
	target__cmdline(p->pid, cmd, sizeof(cmd));
	if (cmd[0]) {
		free(p->cmdline);
		p->cmdline = strdup(cmd);
	}
}

static void unwinder_maps(void *tv, pid_t pid, const char *maps);

void proc_table__set_unwinder(struct proc_table *t, struct unwinder *u)
{
	t->unwinder = u;
	unwinder__on_maps(u, unwinder_maps, t);
}

void proc_table__follow_unwinder(struct proc_table *t, struct unwinder *u)
{
	unwinder__on_maps(u, unwinder_maps, t);
}

struct proc_table *proc_table__new(struct symbolizer *sym)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (t)
		t->sym = sym;
	return t;
}

void proc_table__free(struct proc_table *t, void (*free_priv)(void *priv))
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n; i++) {
		sym_proc__free(t->p[i]->sp);
		free(t->p[i]->cmdline);
		if (free_priv && t->p[i]->priv)
			free_priv(t->p[i]->priv);
		free(t->p[i]);
	}
	free(t->p);
	pid_index__free(&t->by_pid);
	free(t);
}

uint32_t proc_table__prune_gone(struct proc_table *t, uint32_t after,
				void (*free_priv)(void *priv))
{
	uint32_t j = 0, n = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		struct proc_info *p = t->p[i];

		p->pruned = !p->attached && p->pid > 0 && kill(p->pid, 0) && errno == ESRCH &&
			    ++p->gone_calls > after;
	}
	/* a child named by the mappings of a parent pruned now has none */
	for (uint32_t i = 0; i < t->n; i++)
		if (t->p[i]->forked_from && t->p[i]->forked_from->pruned) {
			t->p[i]->forked_from = NULL;
			t->p[i]->parent_unproven = PROC_PARENT_GONE;
		}
	for (uint32_t i = 0; i < t->n; i++) {
		struct proc_info *p = t->p[i];

		if (p->pruned) {
			sym_proc__free(p->sp);
			free(p->cmdline);
			if (free_priv && p->priv)
				free_priv(p->priv);
			free(p);
			n++;
			continue;
		}
		t->p[j++] = p;
	}
	t->n = j;
	if (t->cursor >= t->n)
		t->cursor = 0;
	if (n) {
		/* oldest first: the newest of a pid wins (the index had room for them all) */
		pid_index__clear(&t->by_pid);
		for (uint32_t i = 0; i < t->n; i++)
			pid_index__put(&t->by_pid, t->p[i]->pid, t->p[i]);
	}
	return n;
}

struct proc_info *proc_table__find(const struct proc_table *t, pid_t pid)
{
	/* a recycled PID is its latest process */
	return pid_index__get(&t->by_pid, pid);
}

struct proc_info *proc_table__add(struct proc_table *t, pid_t pid)
{
	struct proc_info *p = proc_table__find(t, pid);

	if (p)
		return p;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		struct proc_info **n = realloc(t->p, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->p = n;
		t->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (pid > 0) {
		char comm[sizeof(p->comm)];

		target__comm(pid, comm, sizeof(comm));
		if (strcmp(comm, "?"))	/* "?": gone; the mode may know its name otherwise */
			memcpy(p->comm, comm, sizeof(comm));
	}
	if (pid_index__put(&t->by_pid, pid, p)) {
		free(p);
		return NULL;
	}
	t->p[t->n++] = p;
	return p;
}

uint64_t proc_maps__exec_hash(const char *maps)
{
	uint64_t h = 0;

	for (const char *line = maps; *line;) {
		const char *eol = strchr(line, '\n'), *perms = strchr(line, ' ');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);

		if (perms && perms < line + n && (size_t)(line + n - perms) > 3 && perms[3] == 'x')
			h = util_hash_u64(h ^ util_hash_bytes(line, n));
		line += n + (eol != NULL);
	}
	return h;
}

uint64_t proc_maps__exec_pages(const char *maps)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages = 0;

	for (const char *line = maps; *line;) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		unsigned long long start, end;
		char perms[5];

		/* "start-end perms offset dev inode path" */
		if (sscanf(line, "%llx-%llx %4s", &start, &end, perms) == 3 && perms[2] == 'x' &&
		    perms[1] != 'w' && end > start && !memmem(line, n, "[vsyscall]", 10))
			pages += (end - start) / (uint64_t)(page > 0 ? page : 4096);
		line += n + (eol != NULL);
	}
	return pages;
}

/* maps (the text of p's maps file, h its proc_maps__exec_hash | 1) p's newest snapshot, the
 * one before it kept, unless its code mappings are the newest's */
static bool snapshot_text(struct proc_table *t, struct proc_info *p, const char *maps,
			  uint64_t h)
{
	struct sym_proc *sp;

	if (p->sp && h == p->maps_hash)
		return true;
	sp = symbolizer__load_pid_maps(t->sym, p->pid, maps);
	if (!sp)
		return false;
	sym_proc__load_modules(sp);
	/* the earlier ones resolve what is unmapped since (dlclose) */
	sym_proc__keep_previous(sp, p->sp, PROC_SNAPSHOTS_KEPT);
	p->sp = sp;
	p->maps_hash = h;
	p->exec_pages = proc_maps__exec_pages(maps);
	p->ident_ok = false;	/* (snapshot() says, for its own text) */
	if (sym_proc__replaces_code(sp))
		p->code_replaced = true;
	return true;
}

/* The unwinder read a process's maps with code new to it (unwinder__on_maps): a library a
 * stack met, perhaps opened and closed between two snapshots */
static void unwinder_maps(void *tv, pid_t pid, const char *maps)
{
	struct proc_table *t = tv;
	struct proc_info *p;

	if (t->loading || !t->sym)
		return;	/* a snapshot's own text */
	p = proc_table__find(t, pid);
	if (p && p->sp)
		snapshot_text(t, p, maps, proc_maps__exec_hash(maps) | 1);
}

/* mark: the mode's mark read before the maps file (so that a change after it moves it) */
static bool snapshot(struct proc_table *t, struct proc_info *p, uint64_t mark)
{
	char path[64], *maps;
	size_t len = 0;
	struct unwind_ident before, after;
	bool ok, ident = false;
	uint64_t h;

	if (p->pid <= 0 || !t->sym)
		return false;
	/* which process and exec the text is of: the same before it and after it */
	if (t->idents)
		ident = !unwind_ident__read(p->pid, &before);
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	maps = util_read_file(path, &len);
	if (!maps || !len) {
		free(maps);
		return false;
	}
	/* the same executable mappings (addresses, offsets, inodes, paths) as last time: the same
	 * snapshot (only they can name a frame; the heap's growth alone changes nothing) */
	h = proc_maps__exec_hash(maps) | 1;
	if (t->unwinder && (!p->sp || h != p->maps_hash) && p->attached) {
		t->loading = true;
		unwinder__load(t->unwinder, p->pid, maps);
		t->loading = false;
	}
	/* from the text just hashed: a second read could miss a mapping the hash has (a library
	 * between dlclose and dlopen), and the next read with it would then hash the same and
	 * make no snapshot with it */
	ok = snapshot_text(t, p, maps, h);
	free(maps);
	if (!ok)
		return false;
	if (t->idents) {
		p->ident_ok = ident && !unwind_ident__read(p->pid, &after) &&
			      unwind_ident__same(&before, &after);
		p->ident = before;
	}
	p->mm_mark = mark;
	p->names_call = t->some_calls;
	read_names(p);
	return true;
}

bool proc_table__snapshot(struct proc_table *t, struct proc_info *p)
{
	return snapshot(t, p, p->pid > 0 && t->sym ? mm_mark(t, p->pid) : PROC_MM_UNKNOWN);
}

uint32_t proc_table__count(const struct proc_table *t)
{
	return t->n;
}

struct proc_info *proc_table__at(const struct proc_table *t, uint32_t i)
{
	return i < t->n ? t->p[i] : NULL;
}

void proc_table__snapshot_attached(struct proc_table *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->p[i]->attached)
			proc_table__snapshot(t, t->p[i]);
}

void proc_table__snapshot_some(struct proc_table *t, uint32_t max)
{
	uint32_t looked = 0;

	t->some_calls++;
	for (uint32_t i = 0; i < t->n && looked < max; i++) {
		struct proc_info *p = t->p[t->cursor++ % t->n];
		uint64_t mark;

		if (!p->attached)
			continue;
		looked++;
		mark = t->sym ? mm_mark(t, p->pid) : PROC_MM_UNKNOWN;
		if (proc_info__maps_due(p, mark)) {
			snapshot(t, p, mark);
		} else if (t->some_calls - p->names_call >= PROC_NAMES_EVERY) {
			/* a name set since (prctl), an argv rewritten (setproctitle) */
			p->names_call = t->some_calls;
			read_names(p);
		}
	}
}

static int adopt_one(const void *k, const void *v, void *ctx)
{
	struct proc_table *t = ctx;
	pid_t pid = *(const uint32_t *)k;
	struct proc_info *p;

	if (!pid || proc_table__find(t, pid))
		return 0;
	p = proc_table__add(t, pid);
	if (p)
		proc_table__snapshot(t, p);
	return 0;
}

int proc_table__adopt(struct proc_table *t, int map_fd, size_t val_size)
{
	return bpfutil__map_for_each(map_fd, sizeof(uint32_t), val_size, adopt_one, t);
}

struct sym_proc *proc_info__mappings(const struct proc_info *p)
{
	if (!p)
		return NULL;
	if (p->sp)
		return p->sp;
	/* the parent's snapshots while they map what they did when the note was read (a later
	 * one, after an exec or a dlopen, could name its frames from other code) */
	if (p->forked_from && p->forked_from->maps_hash == p->forked_hash)
		return p->forked_from->sp;
	return NULL;
}

enum proc_parent_unproven proc_info__parent_unproven(const struct proc_info *p)
{
	if (!p || p->sp)
		return PROC_PARENT_PROVEN;
	if (p->forked_from)
		return p->forked_from->maps_hash == p->forked_hash ? PROC_PARENT_PROVEN
								   : PROC_PARENT_CODE;
	return (enum proc_parent_unproven)p->parent_unproven;
}

const char *proc_parent_unproven__str(enum proc_parent_unproven why)
{
	switch (why) {
	case PROC_PARENT_GONE:
		return "parent gone";
	case PROC_PARENT_OTHER:
		return "parent exec'd or exited";
	case PROC_PARENT_CODE:
		return "parent's code changed";
	default:
		return "";
	}
}

/* The parent's maps file now, into *out, if it is of the process and exec the kernel saw when
 * it sent the note n (the same identity before and after the read) with as much code mapped:
 * PROC_PARENT_PROVEN, else why not. What it mapped since with as many pages in all (a library
 * closed and another of its size opened) cannot be told from the outside. */
static enum proc_parent_unproven parent_maps(struct proc_table *t, const struct proc_note *n,
					     struct sym_proc **out)
{
	pid_t parent = (pid_t)n->parent;
	struct unwind_ident id;
	enum proc_parent_unproven why = PROC_PARENT_PROVEN;
	char path[64], *maps;
	size_t len = 0;

	*out = NULL;
	if (unwind_ident__read(parent, &id))
		return PROC_PARENT_GONE;
	if (!unwind_ident__same(&id, &n->parent_ident))
		return PROC_PARENT_OTHER;
	snprintf(path, sizeof(path), "/proc/%d/maps", parent);
	maps = util_read_file(path, &len);
	if (!maps || !len)
		why = PROC_PARENT_GONE;
	else if (unwind_ident__read(parent, &id))
		why = PROC_PARENT_GONE;
	else if (!unwind_ident__same(&id, &n->parent_ident))
		why = PROC_PARENT_OTHER;
	else if (proc_maps__exec_pages(maps) != n->parent_exec_pages)
		why = PROC_PARENT_CODE;
	else
		*out = symbolizer__load_pid_maps(t->sym, parent, maps);
	free(maps);
	if (!why && !*out)
		why = PROC_PARENT_GONE;	/* (its files could not be opened) */
	return why;
}

/* p, gone before its note n was read, forked from n's parent and exec'd nothing since (the note
 * says so, checked in the kernel when it was sent): it mapped its code as its parent does, so
 * the parent's mappings name its frames, as perf gives a forked child its parent's maps, if
 * they are those the kernel saw then: the parent's entry if ebprof has a snapshot of it of the
 * same process and exec (a target: the parent may have exited too) with as many pages of code,
 * else the parent's maps file read now, the same checks made. Anything it mapped after the fork
 * is in neither and stays an address. Otherwise its frames stay addresses, and
 * p->parent_unproven says why: named from a parent that exec'd, or a process given its PID,
 * they would have been named from other code. */
static bool snapshot_parent(struct proc_table *t, struct proc_info *p, const struct proc_note *n)
{
	struct proc_info *pp = proc_table__find(t, (pid_t)n->parent);
	enum proc_parent_unproven why;
	struct sym_proc *sp;

	if (!t->sym || p->sp)
		return false;
	if (pp && pp != p && pp->sp && pp->ident_ok &&
	    unwind_ident__same(&pp->ident, &n->parent_ident) &&
	    pp->exec_pages == n->parent_exec_pages) {
		p->forked_from = pp;
		p->forked_hash = pp->maps_hash;
		p->parent_unproven = PROC_PARENT_PROVEN;
		return true;
	}
	why = parent_maps(t, n, &sp);
	p->parent_unproven = (uint8_t)why;
	if (!sp)
		return false;
	sym_proc__load_modules(sp);
	p->sp = sp;
	p->maps_hash = 0;	/* not its own: a snapshot of its own replaces it */
	return true;
}

void proc_table__note(struct proc_table *t, const void *data, size_t len)
{
	struct proc_note n = { 0 };
	struct proc_info *p;
	bool ok;

	memcpy(&n, data, len < sizeof(n) ? len : sizeof(n));
	if (!n.tgid)
		return;
	p = proc_table__find(t, (pid_t)n.tgid);
	if (p && !n.exec)
		return;
	if (!p)
		p = proc_table__add(t, (pid_t)n.tgid);
	/* one read again that is gone already (a PID given to another process that then
	 * exited) keeps no name or command line of the process before: the report names it as
	 * the kernel did */
	ok = p && proc_table__snapshot(t, p);
	/* (a parent only with the identity the kernel saw: the whole record) */
	if (p && !ok && !n.exec && n.parent && len >= sizeof(n))
		snapshot_parent(t, p, &n);
	if (p && !ok && n.exec) {
		p->comm[0] = 0;
		free(p->cmdline);
		p->cmdline = NULL;
	}
}

static int on_note(void *ctx, void *data, size_t len)
{
	proc_table__note(ctx, data, len);
	return 0;
}

struct ring_buffer *proc_table__notes(struct proc_table *t, int map_fd)
{
	return ring_buffer__new(map_fd, on_note, t, NULL);
}

/* p's snapshots and what was learnt with them, gone: p is another process's entry now */
static void forget_history(struct proc_info *p)
{
	sym_proc__free(p->sp);
	p->sp = NULL;
	p->maps_hash = 0;	/* (a child named by these: PROC_PARENT_CODE from now on) */
	p->exec_pages = 0;
	p->ident_ok = false;
	p->code_replaced = false;
	p->forked_from = NULL;
	p->forked_hash = 0;
	p->parent_unproven = PROC_PARENT_PROVEN;
	p->mm_mark = 0;
}

/* p, about to be traced, was untargeted at its process's reaping: this is another process at
 * its PID (proc_table__set_readout). The earlier one's counts read out, named by its
 * snapshots, and its history forgotten; not a target since, the new one counted nothing. */
static void new_process(struct proc_table *t, struct proc_info *p)
{
	if (!p->reaped)
		return;
	p->reaped = false;
	if (!t->readout)
		return;
	t->readout(t->readout_ctx, p->pid);
	forget_history(p);
}

int proc_table__target(struct proc_table *t, pid_t pid, int targets_fd, struct proc_info **out)
{
	struct proc_info *p = proc_table__add(t, pid);
	uint32_t key = pid;
	uint8_t one = 1;

	if (!p)
		return -ENOMEM;
	new_process(t, p);
	if (!p->attached) {
		if (bpf_map_update_elem(targets_fd, &key, &one, BPF_ANY))
			return -errno;
		p->attached = true;
	}
	/* right after an exec only the program and its loader are mapped: ticks re-read */
	proc_table__snapshot(t, p);
	if (out)
		*out = p;
	return 0;
}

void proc_table__untarget(struct proc_table *t, pid_t pid, int targets_fd)
{
	struct proc_info *p = proc_table__find(t, pid);
	uint32_t key = pid;

	/* its number may come back as another process */
	if (p && p->attached) {
		bpf_map_delete_elem(targets_fd, &key);
		unwinder__forget(t->unwinder, pid);
		p->attached = false;
		p->reaped = true;
	}
}

void procs__note_reused(struct profile *prof, uint64_t n, const pid_t *ex, uint32_t nex,
			bool more, const char *span)
{
	uint32_t shown = n < nex ? (uint32_t)n : nex;
	const char *by = more ? "more than one process" : "two processes";
	char list[64] = "";
	size_t len = 0;

	if (!n)
		return;
	for (uint32_t i = 0; i < shown && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? ", " : "",
					ex[i]);
	/* once: cpu --offcpu's two collectors may both say it */
	if (n == 1)
		profile__add_note_once(prof, "PID %s was used by %s during the %s (the kernel "
				  "recycled it); their numbers are reported together", list, by,
				  span);
	else
		profile__add_note_once(prof, "%llu PIDs were used by %s during the %s (the kernel "
				  "recycled them: %s%s); each one's numbers are reported together",
				  (unsigned long long)n, by, span, list, n > shown ? ", ..." : "");
}
