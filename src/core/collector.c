/* The collectors' common part: core/collector.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "abi/stack.h"
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/mode.h"
#include "core/procs.h"
#include "core/stacks.h"
#include "core/target.h"
#include "core/unwind.h"
#include "profile/profile.h"
#include "util/util.h"

int collector__init(struct collector *b, const struct session_env *env, bool stacks)
{
	b->lc = env->lc;
	bpfutil__libbpf_messages(b->lc);
	b->procs = proc_table__new(env->sym);
	if (stacks)
		b->st = stack_table__new();
	return !b->procs || (stacks && !b->st) ? -ENOMEM : 0;
}

int collector__set_skel(struct collector *b, void *skel, struct bpf_object_skeleton *s)
{
	if (!skel) {
		int err = -errno;

		pr_err(b->lc, "cannot open the BPF program: %s", strerror(-err));
		return err;
	}
	b->skel = skel;
	b->skeleton = s;
	return 0;
}

/* The object's double-buffered tables (bpf/lib/take.bpf.h), if any: the generation's mapping
 * and the array of maps whose update is the flip's wait. */
static void take_tables(struct collector *b, struct bpf_object *obj)
{
	struct bpf_map *gen = bpf_object__find_map_by_name(obj, ".data.take");
	struct bpf_map *barrier = bpf_object__find_map_by_name(obj, "take_barrier");
	size_t size = 0;

	b->take_gen = gen ? (volatile uint32_t *)bpf_map__initial_value(gen, &size) : NULL;
	if (size < sizeof(uint32_t))
		b->take_gen = NULL;
	b->take_outer_fd = barrier ? bpf_map__fd(barrier) : -1;
	b->take_inner_fd = -1;
}

int collector__gen_fd(const struct collector *b, const struct bpf_map *t0,
		      const struct bpf_map *t1, bool taken)
{
	uint32_t g = b->take_gen ? __atomic_load_n(b->take_gen, __ATOMIC_ACQUIRE) & 1 : 0;

	return bpf_map__fd((g ^ taken) ? t1 : t0);
}

void collector__flip(struct collector *b)
{
	uint32_t slot = 0;

	if (!b->take_gen)
		return;
	__atomic_store_n(b->take_gen, (*b->take_gen + 1) & 1, __ATOMIC_SEQ_CST);
	/* a table (made at the first flip, not at load: each update waits) put in the barrier's
	 * slot: the kernel waits for the programs running (maybe_wait_bpf_programs) before it
	 * returns */
	if (b->take_inner_fd < 0 && b->take_outer_fd >= 0)
		b->take_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "take_barrier_in",
						  sizeof(uint32_t), sizeof(uint32_t), 1, NULL);
	if (b->take_inner_fd >= 0 &&
	    !bpf_map_update_elem(b->take_outer_fd, &slot, &b->take_inner_fd, BPF_ANY))
		return;
	if (!b->take_warned)
		pr_warn(b->lc, "cannot wait for the BPF programs at a take of the counts: %s; a "
			"count made while a table is read may be lost",
			b->take_outer_fd < 0 ? "no barrier map" : strerror(errno));
	b->take_warned = true;
}

int collector__load(struct collector *b, int how, bool feed)
{
	int err = bpf_object__load_skeleton(b->skeleton);

	if (err) {
		pr_err(b->lc, "cannot load the BPF program into the kernel: %s%s", strerror(-err),
		       b->lc && b->lc->verbose >= 2 ? "" : " (run with -vv for the verifier log)");
		return err;
	}
	take_tables(b, *b->skeleton->obj);
	b->unwinder = unwinder__open(b->lc, how, *b->skeleton->obj);
	if (feed)
		proc_table__set_unwinder(b->procs, b->unwinder);
	else
		proc_table__follow_unwinder(b->procs, b->unwinder);
	return 0;
}

void collector__size_notes(struct bpf_map *notes, bool all)
{
	bpf_map__set_max_entries(notes, all ? COLLECTOR_NOTES_SIZE : getpagesize());
}

int collector__notes(struct collector *b, struct bpf_map *notes, bool all)
{
	if (!all)
		return 0;
	b->notes = proc_table__notes(b->procs, bpf_map__fd(notes));
	if (!b->notes) {
		int err = -errno;

		pr_err(b->lc, "cannot read the BPF ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

void collector__consume_notes(struct collector *b)
{
	if (b->notes)
		ring_buffer__consume(b->notes);
}

int collector__target(struct collector *b, pid_t pid, int targets_fd, unsigned max_targets)
{
	int err;

	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	err = proc_table__target(b->procs, pid, targets_fd, NULL);
	if (err == -E2BIG)
		pr_err(b->lc, "cannot trace PID %d: %s (more processes at once than the table "
		       "holds, %u)", pid, strerror(-err), max_targets);
	else if (err)
		pr_err(b->lc, "cannot trace PID %d: %s", pid, strerror(-err));
	return err;
}

struct proc_info *collector__hold(struct collector *b, pid_t pid)
{
	struct proc_info *p = proc_table__add(b->procs, pid);

	if (p)
		proc_table__snapshot(b->procs, p);
	return p;
}

struct proc_info *collector__report_proc(struct collector *b, pid_t tgid, bool exec,
					 const char *kcomm, size_t kcomm_len, bool kthread)
{
	struct proc_info *p = proc_table__add(b->procs, tgid);

	if (!p)
		return NULL;
	if (!exec)
		proc_table__snapshot(b->procs, p);
	/* a process seen with -a is named by the kernel when its names follow execs: a read of
	 * /proc before its exec said the shell's name (a script's exec of python3 was the
	 * script) */
	if (kcomm && kcomm[0] && (!p->comm[0] || kthread || (b->kname_at_exec && !p->attached)))
		snprintf(p->comm, sizeof(p->comm), "%.*s", (int)kcomm_len, kcomm);
	if (!p->comm[0])
		target__comm(tgid, p->comm, sizeof(p->comm));
	return p;
}

struct collector_tname {
	struct thread_name_key k;
	struct thread_name n;
};

static int tname_cmp(const void *a, const void *b)
{
	const struct thread_name_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

void collector__set_thread_names(struct collector *b, int fd)
{
	b->tnames_fd = fd;
}

static int tname_taken(const void *k, const void *v, void *ctx)
{
	struct collector_tnames *t = ctx;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct collector_tname *e = realloc(t->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	memcpy(&t->e[t->n].k, k, sizeof(t->e[t->n].k));
	memcpy(&t->e[t->n++].n, v, sizeof(t->e[0].n));
	return 0;
}

void collector__take_thread_names(struct collector *b)
{
	struct collector_tnames old = b->tnames[1];

	if (!b->tnames_fd)
		return;
	b->tnames[1] = b->tnames[0];
	b->tnames[0] = old;
	b->tnames[0].n = 0;
	collector__take(b, b->tnames_fd, sizeof(struct thread_name_key), sizeof(struct thread_name),
			tname_taken, &b->tnames[0], "the threads' names");
	qsort(b->tnames[0].e, b->tnames[0].n, sizeof(struct collector_tname), tname_cmp);
}

void collector__thread_name(struct collector *b, pid_t tgid, pid_t tid, uint32_t gen, char *buf,
			    size_t len)
{
	struct thread_name_key k = { .tid = (__u32)tid, .gen = gen };
	const struct collector_tname *t = NULL;
	struct thread_name n;
	char path[64], *s;

	if (b->tnames_fd && !bpf_map_lookup_elem(b->tnames_fd, &k, &n)) {
		snprintf(buf, len, "%.*s", THREAD_NAME_LEN, n.comm);
		return;
	}
	for (int i = 0; i < 2 && !t; i++)
		if (b->tnames[i].n)
			t = bsearch(&k, b->tnames[i].e, b->tnames[i].n, sizeof(*t), tname_cmp);
	if (t) {
		snprintf(buf, len, "%.*s", THREAD_NAME_LEN, t->n.comm);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", tgid, tid);
	s = util_read_file(path, NULL);
	if (s && *s) {
		s[strcspn(s, "\n")] = 0;
		snprintf(buf, len, "%s", s);
	} else {
		snprintf(buf, len, "?");
	}
	free(s);
}

int collector__read_procs(struct collector *b, const struct bpf_map *t0, const struct bpf_map *t1,
			  size_t val_size, pid_t only, bool take,
			  int (*cb)(const void *key, const void *val, void *ctx), void *ctx)
{
	/* a take's: the generation its flip took away from the programs (collector__flip) */
	int fd = collector__gen_fd(b, t0, t1, take && !only);
	void *v = NULL;
	__u32 k = only;
	int err;

	if (only) {
		v = malloc(val_size);
		err = !v ? -ENOMEM : bpf_map_lookup_and_delete_elem(fd, &k, v) ?
		      (errno == ENOENT ? 0 : -errno) : cb(&k, v, ctx);
	} else if (take) {
		err = bpfutil__map_take(fd, sizeof(__u32), val_size, cb, ctx);
	} else {
		err = bpfutil__map_for_each(fd, sizeof(__u32), val_size, cb, ctx);
	}
	free(v);
	if (err)
		pr_warn(b->lc, "reading the processes' totals failed: %s; the processes' rows may "
			"be incomplete", strerror(-err));
	return err;
}

bool collector__needs_kname(const struct collector *b, pid_t tgid)
{
	const struct proc_info *p = proc_table__find(b->procs, tgid);

	return !p || !p->comm[0] || (b->kname_at_exec && !p->attached);
}

void collector__add_drops(struct profile *prof, int stats_fd, const char *const *names, int first,
			  int n, int skip, uint64_t *v)
{
	for (int s = first; s < n; s++) {
		v[s] = 0;
		if (s == skip)
			continue;
		v[s] = bpfutil__percpu_sum(stats_fd, s);
		profile__add_drop(prof, names[s], v[s]);
	}
}

void collector__note_totals_full(struct profile *prof, uint64_t n, const char *one,
				 const char *many, uint32_t room)
{
	if (n)
		profile__add_note(prof, "%llu %s %s in no process's totals (the processes' rows and "
				  "totals are short by %s, %s not): the table of processes' totals "
				  "(%u) was full", (unsigned long long)n, n == 1 ? one : many,
				  n == 1 ? "is" : "are", n == 1 ? "it" : "them",
				  n == 1 ? "its stack is" : "their stacks are", room);
}

void collector__note_notes_lost(struct profile *prof, uint64_t n)
{
	if (n)
		profile__add_note(prof, "%llu new %s not announced in time (the ring buffer was "
				  "full): %s before the end %s bare addresses",
				  (unsigned long long)n, n == 1 ? "process was" : "processes were",
				  n == 1 ? "if it exited" : "those that exited",
				  n == 1 ? "it shows" : "show");
}

void collector__note_thread_names(struct profile *prof, uint64_t n, const char *option,
				  uint32_t size)
{
	if (n)
		profile__add_note(prof, "%llu %s a thread's name was not kept (--per-thread): "
				  "the thread-name table (%s %u) was full; those threads are named "
				  "as they were when their counts were read (/proc), '?' when gone "
				  "by then, not as they were when counted; raise %s",
				  (unsigned long long)n, n == 1 ? "time" : "times", option, size,
				  option);
}

#define REUSED_SHOWN 4

static int on_reused(const void *key, const void *val, void *ctx)
{
	struct collector_reused *w = ctx;

	/* (the map holds as many: none past them) */
	if (w->n < COLLECTOR_REUSED_MAX) {
		w->e[w->n].pid = *(const __u32 *)key;
		w->e[w->n++].times = *(const __u32 *)val;
	}
	return 0;
}

/* The PIDs of `reused` (taken out of it with take) and the mode's count of times, into w. */
static void reused_read(struct collector_reused *w, int reused_fd, uint64_t times, bool take)
{
	w->times = times;
	w->n = 0;
	if (!times)
		return;
	if (take)
		bpfutil__map_take(reused_fd, sizeof(__u32), sizeof(__u32), on_reused, w);
	else
		bpfutil__map_for_each(reused_fd, sizeof(__u32), sizeof(__u32), on_reused, w);
}

/* w said in prof, during its span ("run" or "window"): on each such process's row (and group
 * labelled with its "pid"), in the note naming the lowest few and as the fact pids_reused. */
static void reused_say(const struct collector_reused *w, struct profile *prof, const char *span)
{
	const char *had = profile__info(prof, "pids_reused");
	pid_t ex[REUSED_SHOWN];
	uint32_t nex = 0;
	bool more = false;
	char note[160], id[16];

	if (!w->times)
		return;
	for (uint32_t k = 0; k < w->n; k++) {
		pid_t pid = (pid_t)w->e[k].pid;
		struct prof_process *pp = profile__find_process(prof, w->e[k].pid);
		uint32_t i = nex;

		more |= w->e[k].times > 1;
		/* on its row, which the run's note may not name (the first few only) */
		snprintf(note, sizeof(note), "PID used by %u processes during the %s (the kernel "
			 "recycled it): their numbers are summed here, under the last one's name",
			 w->e[k].times + 1, span);
		if (pp)
			prof_process__set_note(prof, pp, note);
		snprintf(id, sizeof(id), "%d", pid);
		for (uint32_t g = 0; g < prof->ngroups; g++) {
			const char *v = prof_group__label(&prof->groups[g], "pid");

			if (v && !strcmp(v, id))
				prof_group__set_note(prof, &prof->groups[g], note);
		}
		/* the lowest few, for a note that reads the same whatever the map's order */
		for (; i > 0 && ex[i - 1] > pid; i--)
			if (i < REUSED_SHOWN)
				ex[i] = ex[i - 1];
		if (i < REUSED_SHOWN)
			ex[i] = pid;
		if (nex < REUSED_SHOWN)
			nex++;
	}
	if (!had || strtoull(had, NULL, 10) < w->times)
		profile__add_info(prof, "pids_reused", "%llu", (unsigned long long)w->times);
	/* the map holds 1024 PIDs; the times past it are in the count */
	procs__note_reused(prof, w->n ? w->n : w->times, ex, nex, more || w->times > w->n, span);
}

void collector__note_reused(struct profile *prof, int reused_fd, uint64_t times)
{
	struct collector_reused w;

	reused_read(&w, reused_fd, times, false);
	reused_say(&w, prof, "run");
}

void collector__reused_take(struct collector_reused *w, int reused_fd, uint64_t times,
			    uint64_t *last)
{
	reused_read(w, reused_fd, times > *last ? times - *last : 0, true);
	*last = times;
}

void collector__reused_say(const struct collector_reused *w, struct profile *into)
{
	reused_say(w, into, "window");
}

void collector__find_begun(struct collector *b, struct bpf_program *iter, pid_t pid,
			   const char *what)
{
	int err = bpfutil__run_task_iter(iter, pid);

	if (err)
		pr_warn(b->lc, "cannot look for the %s already going on%s: %s (those waits are "
			"seen from their next start only)", what, pid ? "" : " on the machine",
			strerror(-err));
}

void collector__note_begun(struct profile *prof, uint64_t n, const char *one, const char *many,
			   const char *state, const char *counted, const char *stack)
{
	if (!n)
		return;
	profile__add_info(prof, "begun_before_start", "%llu", (unsigned long long)n);
	profile__add_note(prof, "%llu %s already %s when tracing started: %s; %s",
			  (unsigned long long)n, n == 1 ? one : many, state, counted,
			  stack ? stack : "its user stack could not be read (another task's) and is "
			  "shown as [user stack not seen]");
}

void collector__tick(void *m, int64_t t_ns, bool second)
{
	struct collector *b = m;

	collector__consume_notes(b);
	if (second)
		proc_table__snapshot_attached(b->procs);
	unwinder__tick(b->unwinder);
}

void collector__set_stacks(struct collector *b, int stacks_fd, struct stack_table *st,
			   const struct stack_ref_map *refs, unsigned n)
{
	b->stacks_fd = stacks_fd;
	b->spill_st = st;
	b->nrefs = n < COLLECTOR_REF_MAPS ? n : COLLECTOR_REF_MAPS;
	memcpy(b->refs, refs, b->nrefs * sizeof(*refs));
}

static int collector_refs(void *ctx, struct stack_refs *r)
{
	struct collector *b = ctx;

	return stack_refs__add_maps(r, b->refs, b->nrefs);
}

size_t collector__reclaim(struct collector *b)
{
	size_t back = stack_map__reclaim(b->stacks_fd, b->spill_st, collector_refs, b);

	pr_debug(b->lc, "stacks map emptied; %zu stacks still referred to put back", back);
	return back;
}

void collector__reclaim_full(struct collector *b, uint32_t max)
{
	if ((uint64_t)stack_table__count(b->spill_st) * 4 > (uint64_t)max * 3)
		collector__reclaim(b);
}

struct profile *collector__readout(struct collector *b, const struct session_env *env)
{
	if (!env->windows)
		return env->prof;
	if (!b->readout)
		b->readout = profile__new_like(env->prof);
	/* out of memory: the run's, as before (it only grows) */
	return b->readout ? b->readout : env->prof;
}

int collector__window_readout(struct collector *b, struct profile *into)
{
	struct profile *r = b->readout;
	int err = 0;

	if (!r)
		return 0;
	b->readout = NULL;
	if (r->nsamples && r->ntypes == into->ntypes)
		err = profile__copy_samples(into, r, NULL, 0);
	for (uint32_t i = 0; !err && i < r->nprocesses; i++) {
		const struct prof_process *pp = &r->processes[i];
		struct prof_process *to = profile__find_process(into, pp->pid);

		if (!to)
			to = profile__add_process(into, pp->pid, pp->comm, pp->cmdline);
		if (!to)
			err = -ENOMEM;
		/* its totals too (cpu, io, lock: the rows are these, not its samples) */
		for (uint32_t j = 0; !err && j < pp->nstats; j++)
			err = prof_process__add_stat(into, to, pp->stats[j].key,
						     pp->stats[j].value);
	}
	profile__free(r);
	return err;
}

static bool spill_due(struct collector *b, const struct session_env *env,
		      const struct spill_check *due)
{
	bool full = due->refused != b->spill_refused;

	if (env->windows)
		return false;
	for (int i = 0; i < COLLECTOR_SPILL_TABLES && !full; i++)
		full = due->room[i] &&
		       (due->keys[i] - b->spill_keys[i]) * 4 >= (uint64_t)due->room[i] * 3;
	if (!full)
		return false;
	b->spill_refused = due->refused;
	memcpy(b->spill_keys, due->keys, sizeof(b->spill_keys));
	b->spills++;
	return true;
}

bool collector__spill(struct collector *b, const struct session_env *env,
		      const struct spill_check *due, int (*take)(void *m), void *m)
{
	if (!spill_due(b, env, due))
		return false;
	collector__flip(b);
	collector__take_thread_names(b);	/* before the counts they name */
	if (take(m))
		return false;
	/* said once taken: the flip's wait comes first (a test lets its next wave go then) */
	pr_info(b->lc, "the count table filled: its counts taken into the profile (%u times)",
		b->spills);
	collector__reclaim(b);
	return true;
}

struct take_count {
	bpfutil_map_cb cb;
	void *ctx;
	long n;
};

static int count_taken(const void *k, const void *v, void *ctx)
{
	struct take_count *t = ctx;

	t->n++;
	return t->cb(k, v, t->ctx);
}

long collector__take(struct collector *b, int fd, size_t key_size, size_t val_size,
		     bpfutil_map_cb cb, void *ctx, const char *what)
{
	struct take_count t = { .cb = cb, .ctx = ctx };
	int err = bpfutil__map_take(fd, key_size, val_size, count_taken, &t);

	if (err)
		pr_warn(b->lc, "taking %s out of the kernel failed: %s; some may be missing from "
			"the report", what, strerror(-err));
	return err ?: t.n;
}

int collector__wake_fd(void *m)
{
	struct collector *b = m;
	int fds[2] = { unwinder__fd(b->unwinder), b->notes ? ring_buffer__epoll_fd(b->notes) : -1 };

	if (fds[1] < 0)
		return fds[0];
	if (b->wake_made)
		return b->wake_ep;
	b->wake_made = true;
	b->wake_ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < 2 && b->wake_ep >= 0; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		if (fds[i] >= 0 && epoll_ctl(b->wake_ep, EPOLL_CTL_ADD, fds[i], &ev)) {
			close(b->wake_ep);
			b->wake_ep = -1;
		}
	}
	if (b->wake_ep < 0)
		pr_warn(b->lc, "new processes and the unwinder's news are read each tick only: %s",
			strerror(errno));
	return b->wake_ep;
}

void collector__wake(void *m)
{
	struct collector *b = m;

	/* the new processes first (their mappings read before they can exit), then the
	 * unwinder's asks and news */
	collector__consume_notes(b);
	unwinder__poll(b->unwinder);
}

void collector__detach(void *m)
{
	struct collector *b = m;

	if (b->skeleton)
		bpf_object__detach_skeleton(b->skeleton);
}

void collector__close(struct collector *b, void (*free_priv)(void *priv))
{
	ring_buffer__free(b->notes);
	b->notes = NULL;
	if (b->wake_made && b->wake_ep >= 0)
		close(b->wake_ep);
	b->wake_made = false;
	/* what NAME_bpf__destroy does */
	if (b->skeleton)
		bpf_object__destroy_skeleton(b->skeleton);
	free(b->skel);
	b->skeleton = NULL;
	b->skel = NULL;
	proc_table__free(b->procs, free_priv);
	b->procs = NULL;
	unwinder__free(b->unwinder);
	b->unwinder = NULL;
	stack_table__free(b->st);
	b->st = NULL;
	profile__free(b->readout);
	b->readout = NULL;
	for (int i = 0; i < 2; i++) {
		free(b->tnames[i].e);
		b->tnames[i] = (struct collector_tnames){ 0 };
	}
	if (b->take_gen && b->take_inner_fd >= 0)
		close(b->take_inner_fd);
	b->take_gen = NULL;
}
