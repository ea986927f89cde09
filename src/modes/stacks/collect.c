/* The stacks mode collector (see collect.h): events attached once for the whole run (raw
 * tracepoints, syscalls, classic tracepoints) or per process (uprobes), counts read per process
 * when it is finalized and the rest at the end. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/minbtf.h"
#include "core/closer.h"
#include "core/session.h"
#include "core/procs.h"
#include "core/unwind.h"
#include "core/stacks.h"
#include "modes/stacks/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"
#include "stacks.skel.h"

#define MAX_TARGETS 8192	/* traced processes at once (a launched tree) */
#define MAX_COMMS 32768		/* processes named (-a sees every one) */
#define MAX_LOCS (1 + 2 * STACK_MAX_DEPTH)

static const char *const drop_names[STACKS_DROP__COUNT] = {
	[STACKS_DROP_COUNTS_FULL] = "counts_full",
	[STACKS_DROP_STACKS_FULL] = "stacks_full",
	[STACKS_DROP_NOTES_FULL] = "process_notes_lost",
};

/* A traced process's uprobe links (proc_info.priv). */
struct proc_uprobes {
	int *fds;
	int n;
};

struct stacks_mode {
	struct collector base;		/* first: the shared hooks take the collector */
	const struct session_env *env;
	const struct log_ctx *lc;
	struct stacks_opts *o;
	struct stacks_bpf *skel;
	struct fd_closer *closer;
	int tp_fds[STACKS_MAX_EVENTS];	/* raw tracepoints opened with a cookie */
	int ntp_fds;
	/* classic tracepoints, sys_enter/exit, and stacks_exec */
	struct bpf_link *links[STACKS_MAX_EVENTS + 3];
	int nlinks;
	int *all_ufds;			/* -a: uprobes in every process */
	int nall_ufds;
	int uprobe_type;		/* the uprobe PMU's perf event type */
	__u32 gen;			/* the last attach's generation (STACKS_COOKIE) */
	bool probed[STACKS_MAX_EVENTS];	/* a uprobe event attached in some process */
	uint32_t nfuncs[STACKS_MAX_EVENTS];	/* the functions of its name probed (the most) */
};

/* libbpf's callback has no context argument, hence a file-level flag */
int stacks_opts__resolve(struct stacks_opts *o, const struct log_ctx *lc)
{
	for (int i = 0; i < o->nevents; i++) {
		const struct stacks_event *ev = &o->events[i];
		char path[PATH_MAX], why[PATH_MAX + 128];
		uint64_t off;
		int err = stacks_event__resolve(&o->events[i], lc);

		if (err)
			return err;
		/* a uprobe's file known now (a path, a library) is checked before anything runs;
		 * a bare name may be the target's own program, known only at attach */
		if (ev->kind != STACKS_EV_UPROBE || stacks_event__uprobe_path(ev, 0, path,
									      sizeof(path))) {
			if (ev->kind == STACKS_EV_UPROBE && strchr(ev->path, '/')) {
				pr_err(lc, "event %s: cannot read %s", ev->spec, ev->path);
				return -ENOENT;
			}
			continue;
		}
		err = sym_elf_symbol_offset(path, ev->sym, &off);
		if (err) {
			pr_err(lc, "event %s: %s", ev->spec,
			       stacks_event__symbol_error(path, ev->sym, err, why, sizeof(why)));
			return -ENOENT;
		}
	}
	return 0;
}

void stacks_opts__free(struct stacks_opts *o)
{
	for (int i = 0; i < o->nevents; i++)
		stacks_event__free(&o->events[i]);
	o->nevents = 0;
}

static bool has_kind(const struct stacks_opts *o, enum stacks_ev_kind k)
{
	for (int i = 0; i < o->nevents; i++)
		if (o->events[i].kind == k)
			return true;
	return false;
}

/* BPF_RAW_TRACEPOINT_OPEN with a cookie (kernel 6.10+): the attr as this kernel has it, which
 * the uapi header of Debian 12 (6.1) predates. */
struct raw_tp_attr {
	__u64 name;
	__u32 prog_fd;
	__u32 pad;
	__u64 cookie;
};

static int open_raw_tp(int prog_fd, const char *name, __u64 cookie)
{
	struct raw_tp_attr attr = { .name = (__u64)(unsigned long)name, .prog_fd = prog_fd,
				    .cookie = cookie };
	int fd = syscall(__NR_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}

static int uprobe_pmu_type(void)
{
	char *s = util_read_file("/sys/bus/event_source/devices/uprobe/type", NULL);
	int t = s ? atoi(s) : -1;

	free(s);
	return t;
}

/* One uprobe link at path+off for pid (-1: every process), its cookie the event index and the
 * attach's generation (STACKS_COOKIE). The perf event is closed once linked (the link holds it):
 * one fd per probe to close later. */
static int open_uprobe(struct stacks_mode *m, const char *path, uint64_t off, pid_t pid,
		       __u64 cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .perf_event.bpf_cookie = cookie);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = m->uprobe_type,
		.config1 = (__u64)(unsigned long)path,
		.config2 = off,
	};
	int pfd, lfd;

	pfd = syscall(__NR_perf_event_open, &attr, pid, pid < 0 ? 0 : -1, -1,
		      PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	lfd = bpf_link_create(bpf_program__fd(m->skel->progs.stacks_uprobe), pfd, BPF_PERF_EVENT,
			      &lo);
	close(pfd);
	return lfd;
}

static void fill_syscalls(struct stacks_mode *m)
{
	int fd = bpf_map__fd(m->skel->maps.sc_events);

	for (int i = 0; i < m->o->nevents; i++) {
		const struct stacks_event *ev = &m->o->events[i];
		__u32 slot = ev->nr, v = i + 1;

		if (ev->kind != STACKS_EV_SYS_ENTER && ev->kind != STACKS_EV_SYS_EXIT)
			continue;
		if (ev->nr < 0 || ev->nr >= STACKS_MAX_SYSCALLS)
			continue;
		if (ev->kind == STACKS_EV_SYS_EXIT)
			slot += STACKS_MAX_SYSCALLS;
		bpf_map_update_elem(fd, &slot, &v, BPF_ANY);
	}
}

/* The run-wide events: attached at open, counting nothing until a target is in `targets`. */
static int attach_tracepoints(struct stacks_mode *m)
{
	struct stacks_bpf *sk = m->skel;

	for (int i = 0; i < m->o->nevents; i++) {
		const struct stacks_event *ev = &m->o->events[i];

		if (ev->kind == STACKS_EV_RAW_TP) {
			int fd = open_raw_tp(bpf_program__fd(sk->progs.stacks_raw_tp), ev->name, i);

			if (fd < 0) {
				pr_err(m->lc, "cannot attach to the raw tracepoint %s (event %s): %s",
				       ev->name, ev->spec, strerror(-fd));
				return fd;
			}
			m->tp_fds[m->ntp_fds++] = fd;
			pr_info(m->lc, "%s: raw tracepoint %s", ev->spec, ev->name);
		} else if (ev->kind == STACKS_EV_TRACEFS) {
			LIBBPF_OPTS(bpf_tracepoint_opts, to, .bpf_cookie = i);
			struct bpf_link *l;

			l = bpf_program__attach_tracepoint_opts(sk->progs.stacks_tp, ev->cat,
								ev->name, &to);
			if (!l) {
				pr_err(m->lc, "cannot attach to the tracepoint %s: %s", ev->spec,
				       strerror(errno));
				return -errno;
			}
			m->links[m->nlinks++] = l;
			pr_info(m->lc, "%s: classic tracepoint (tracefs)", ev->spec);
		} else if (ev->kind != STACKS_EV_UPROBE) {
			pr_info(m->lc, "%s: raw tracepoint %s, syscall %d", ev->spec,
				ev->kind == STACKS_EV_SYS_ENTER ? "sys_enter" : "sys_exit", ev->nr);
		}
	}
	if (has_kind(m->o, STACKS_EV_SYS_ENTER)) {
		m->links[m->nlinks] = bpf_program__attach(sk->progs.stacks_sys_enter);
		if (!m->links[m->nlinks]) {
			pr_err(m->lc, "cannot attach to the sys_enter raw tracepoint: %s",
			       strerror(errno));
			return -errno;
		}
		m->nlinks++;
	}
	if (has_kind(m->o, STACKS_EV_SYS_EXIT)) {
		m->links[m->nlinks] = bpf_program__attach(sk->progs.stacks_sys_exit);
		if (!m->links[m->nlinks]) {
			pr_err(m->lc, "cannot attach to the sys_exit raw tracepoint: %s",
			       strerror(errno));
			return -errno;
		}
		m->nlinks++;
	}
	/* every run, not only -a: a launched shell's child that opens before it execs (a
	 * background job's /dev/null) kept the shell's name after its exec */
	m->links[m->nlinks] = bpf_program__attach(sk->progs.stacks_exec);
	if (!m->links[m->nlinks]) {
		pr_err(m->lc, "cannot attach to the sched_process_exec tracepoint: %s",
		       strerror(errno));
		return -errno;
	}
	m->nlinks++;
	return 0;
}

static void stacks_close(void *mp);

static void *stacks_open(const struct session_env *env, void *opts)
{
	struct stacks_mode *m = calloc(1, sizeof(*m));
	struct stacks_opts *o = opts;
	struct stack_ref_map refs[2];
	struct stacks_bpf *sk;

	if (!m)
		return NULL;
	m->env = env;
	m->lc = env->lc;
	m->o = o;
	m->closer = fd_closer__new(FD_CLOSER_THREADS);	/* NULL: links close synchronously */
	if (collector__init(&m->base, env, true))
		goto fail;
	if (has_kind(o, STACKS_EV_UPROBE)) {
		m->uprobe_type = uprobe_pmu_type();
		if (m->uprobe_type < 0) {
			pr_err(m->lc, "cannot use uprobes: this kernel has no uprobe PMU "
			       "(/sys/bus/event_source/devices/uprobe)");
			goto fail;
		}
	}

	sk = m->skel = MINBTF_OPEN(m->lc, stacks_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&m->base, sk))
		goto fail;
	sk->rodata->self_tgid = getpid();
	sk->rodata->compat_at_exit = !has_kind(o, STACKS_EV_SYS_ENTER);
	bpf_map__set_max_entries(sk->maps.stacks, o->max_stacks);
	COLLECTOR_SIZE(sk->maps, counts, o->max_stacks);
	bpf_map__set_max_entries(sk->maps.targets, MAX_TARGETS);
	bpf_map__set_max_entries(sk->maps.comms, MAX_COMMS);
	sk->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(sk->obj, env->unwind, MAX_TARGETS, 0);
	unwind__hold_at_loader(sk->obj, env->unwind);	/* stacks_attach's hook */
	/* only the kinds of probe the run uses are verified */
	bpf_program__set_autoload(sk->progs.stacks_raw_tp, has_kind(o, STACKS_EV_RAW_TP));
	bpf_program__set_autoload(sk->progs.stacks_sys_enter, has_kind(o, STACKS_EV_SYS_ENTER));
	bpf_program__set_autoload(sk->progs.stacks_sys_exit, has_kind(o, STACKS_EV_SYS_EXIT));
	bpf_program__set_autoload(sk->progs.stacks_tp, has_kind(o, STACKS_EV_TRACEFS));
	bpf_program__set_autoload(sk->progs.stacks_uprobe, has_kind(o, STACKS_EV_UPROBE));
	collector__size_notes(sk->maps.notes, env->all);
	/* the unwinder loads a process at attach (stacks_attach), not at each snapshot */
	if (collector__load(&m->base, env->unwind, false) ||
	    collector__notes(&m->base, sk->maps.notes, env->all))
		goto fail;
	/* the loader's hook (stacks_attach) closes its links on the closer's threads */
	unwinder__use_closer(m->base.unwinder, m->closer);
	/* both generations of counts (bpf/lib/take.bpf.h) */
	refs[0] = stack_ref_map__counts(bpf_map__fd(sk->maps.counts_0), sizeof(struct stack_key),
					bpf_map__value_size(sk->maps.counts_0));
	refs[1] = stack_ref_map__counts(bpf_map__fd(sk->maps.counts_1), sizeof(struct stack_key),
					bpf_map__value_size(sk->maps.counts_1));
	collector__set_stacks(&m->base, bpf_map__fd(sk->maps.stacks), m->base.st, refs, 2);
	fill_syscalls(m);
	if (attach_tracepoints(m))
		goto fail;

	if (profile__add_type(env->prof, "events", "count") ||
	    profile__set_default_type(env->prof, "events"))
		goto fail;
	profile__add_note(env->prof, "each stack's leaf frame is the event's name, then the "
			  "kernel frames, then the user frames");
	return m;
fail:
	stacks_close(m);
	return NULL;
}

static void snapshot(struct stacks_mode *m, struct proc_info *p)
{
	proc_table__snapshot(m->base.procs, p);
}

static void close_ufds(struct stacks_mode *m, struct proc_info *p)
{
	struct proc_uprobes *u = p->priv;

	if (!u)
		return;
	for (int i = 0; i < u->n; i++)
		fd_closer__close(m->closer, u->fds[i]);
	free(u->fds);
	u->fds = NULL;
	u->n = 0;
}

static void free_uprobes(void *priv)
{
	struct proc_uprobes *u = priv;

	free(u->fds);
	free(u);
}

/* Attach every uprobe event in pid (-1: every process, gen 0), of generation gen; fds appended
 * to *fds. */
static int attach_uprobes(struct stacks_mode *m, pid_t pid, __u32 gen, int **fds, int *nfds)
{
	for (int i = 0; i < m->o->nevents; i++) {
		const struct stacks_event *ev = &m->o->events[i];
		char path[PATH_MAX], why[PATH_MAX + 128];
		uint64_t offs[SYM_ELF_MAX_FUNCS];
		size_t noffs = 0;
		int fd, err, *n;

		if (ev->kind != STACKS_EV_UPROBE)
			continue;
		if (stacks_event__uprobe_path(ev, pid > 0 ? pid : 0, path, sizeof(path))) {
			/* a bare name: a process of a traced tree may run another program (a
			 * shell before the program), and its own exec attaches again */
			if (pid > 0) {
				pr_info(m->lc, "event %s: no object '%s' in process %d: not probed "
					"there", ev->spec, ev->path, pid);
				continue;
			}
			pr_err(m->lc, "event %s: no library or program '%s' found: give its path",
			       ev->spec, ev->path);
			/* not -ENOENT: the session would run the process untraced */
			return -EINVAL;
		}
		/* every function of that name: static ones of one name in two files, a C++ name's
		 * overloads (perf probe's rule too); before, one of them, and its calls were
		 * short */
		err = sym_elf_symbol_offsets(path, ev->sym, offs, SYM_ELF_MAX_FUNCS, &noffs);
		if (err) {
			pr_err(m->lc, "event %s: %s", ev->spec,
			       stacks_event__symbol_error(path, ev->sym, err, why, sizeof(why)));
			return -EINVAL;
		}
		for (size_t k = 0; k < noffs; k++) {
			fd = open_uprobe(m, path, offs[k], pid, STACKS_COOKIE(i, gen));
			if (fd < 0) {
				pr_err(m->lc, "event %s: cannot attach a uprobe to %s at 0x%llx: %s",
				       ev->spec, path, (unsigned long long)offs[k], strerror(-fd));
				return fd;
			}
			n = realloc(*fds, (*nfds + 1) * sizeof(**fds));
			if (!n) {
				close(fd);
				return -ENOMEM;
			}
			*fds = n;
			(*fds)[(*nfds)++] = fd;
			pr_info(m->lc, "%s: uprobe %s+0x%llx%s", ev->spec, path,
				(unsigned long long)offs[k], pid > 0 ? "" : " (every process)");
		}
		m->probed[i] = true;
		if (noffs > m->nfuncs[i])
			m->nfuncs[i] = (uint32_t)noffs;
	}
	return 0;
}

static int stacks_attach(void *mp, pid_t pid, enum mode_attach how, int *status)
{
	struct stacks_mode *m = mp;
	struct proc_info *p = proc_table__add(m->base.procs, pid);
	struct proc_uprobes *u;
	__u32 key = pid, gen;
	int err;

	if (status)
		*status = -1;
	if (p && !p->priv)
		p->priv = calloc(1, sizeof(struct proc_uprobes));
	if (!p || !p->priv)
		return -ENOMEM;
	u = p->priv;
	/* after an exec the probes' files are the old program's */
	if (how == MODE_ATTACH_EXEC)
		close_ufds(m, p);
	snapshot(m, p);
	unwinder__load(m->base.unwinder, pid, NULL);
	/*
	 * Held at its loader's hook (abi/unwind.h) while ebprof traces it: the libraries the loader
	 * maps after this look (a launched command's libc) are read into a snapshot before their
	 * code runs. Otherwise only the BPF side's note of code it met (unwind_stale) has them
	 * read, later: a program that exec'd another meanwhile (env's setlocale opens, then its
	 * exec of grep) had its libc frames in no snapshot, its stacks cut at the leaf's caller
	 * (unwind_outside_code). Once per process: the link follows it across an exec.
	 */
	unwinder__hook(m->base.unwinder, pid);
	/*
	 * A new generation, in force before its probes go in: the old image's links close on the
	 * closer's threads, a grace period each (~115 ms), and fire meanwhile in the new image (the
	 * kernel filters them by process and puts their breakpoints into every mapping of their
	 * file: its libc at a fork, mapped again by the exec). Counted, they doubled the calls of
	 * about one process in two of a launched shell's. Their generation is an old one now, and
	 * so is that of the parent's probes in a vfork child, which runs in the parent's memory.
	 */
	gen = ++m->gen;
	if (bpf_map_update_elem(bpf_map__fd(m->skel->maps.targets), &key, &gen, BPF_ANY)) {
		err = -errno;
		pr_err(m->lc, "cannot trace process %d: the table of traced processes (%d) is full",
		       pid, MAX_TARGETS);
		return err;
	}
	err = attach_uprobes(m, pid, gen, &u->fds, &u->n);
	if (err)
		bpf_map_delete_elem(bpf_map__fd(m->skel->maps.targets), &key);
	return err;
}

static int stacks_attach_all(void *mp)
{
	struct stacks_mode *m = mp;
	int err;

	err = attach_uprobes(m, -1, 0, &m->all_ufds, &m->nall_ufds);
	if (err)
		return err;
	m->skel->bss->trace_all = true;
	return 0;
}

static uint64_t hits_total(struct stacks_mode *m)
{
	int fd = bpf_map__fd(m->skel->maps.hits);
	uint64_t sum = 0;

	for (int i = 0; i < m->o->nevents; i++)
		sum += bpfutil__percpu_sum(fd, i);
	return sum;
}

static uint64_t drops_total(struct stacks_mode *m)
{
	int fd = bpf_map__fd(m->skel->maps.drops);
	uint64_t sum = 0;

	for (__u32 r = 0; r < STACKS_DROP__COUNT; r++)
		sum += bpfutil__percpu_sum(fd, r);
	return sum;
}

static void stacks_progress(void *mp, char *buf, size_t len)
{
	struct stacks_mode *m = mp;

	snprintf(buf, len, "%llu events  drops %llu", (unsigned long long)hits_total(m),
		 (unsigned long long)drops_total(m));
}

/* ---- reading counts into the profile ----------------------------------------------- */

/* Its name: the kernel's at its first event, renewed at each exec (stacks_exec), so its last
 * program's; a read of /proc before an exec said the shell's. /proc's without an event. */
static void name_proc(struct stacks_mode *m, struct proc_info *p)
{
	struct stacks_comm c;
	__u32 k = p->pid;

	if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.comms), &k, &c) == 0) {
		c.comm[sizeof(c.comm) - 1] = '\0';
		snprintf(p->comm, sizeof(p->comm), "%s", c.comm);
	}
	if (!p->comm[0] && p->pid == 0)
		snprintf(p->comm, sizeof(p->comm), "swapper");
}

static void add_count(struct stacks_mode *m, struct proc_info *p, const struct stack_count *c)
{
	struct profile *prof = m->env->prof;
	const struct stacks_event *ev = &m->o->events[c->k.aux];
	struct stack_key k = c->k;
	struct prof_process *pp;
	uint32_t locs[MAX_LOCS], n = 0;
	int64_t v = c->n;

	/* the leaf names the event: the flame graph's tips say which event each stack hit */
	locs[n++] = stacks__named_loc(prof, ev->spec);
	/* a uprobe's first user address is the probed function itself, not a return address */
	if (ev->kind == STACKS_EV_UPROBE)
		k.flags |= STACK_KEY_USER_EXACT;
	/* the programs run in the traced task: the machinery's frames lead its kernel stacks */
	n += stacks__key_locs(prof, m->base.st, k.kstack ? stacks__ksyms(m->lc) : NULL, p->sp,
			      p->pid, &k, true, locs + n);
	/* the same displayed stack as an earlier key's (read before, or one whose kernel stack
	 * differs in the tracing machinery only: another program attached to the tracepoint
	 * meanwhile changes the kernel's path into ours): one site */
	profile__add_to_sample(prof, locs, n, &v, p->pid);
	name_proc(m, p);
	pp = profile__add_process(prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline);
	if (pp)
		prof_process__add_call(prof, pp, ev->spec, c->n);
}

/* Move pid's counts (0: all that are left) into the profile and out of the kernel. */
/* Move pid's counts (0: all), or with take every one taken out in one step each (a count made
 * meanwhile is the next read's), into the profile */
static void drain_how(struct stacks_mode *m, pid_t pid, bool take)
{
	/* a take's: the generation the spill's flip took away (collector__spill) */
	int fd = take ? COLLECTOR_TAKEN_FD(&m->base, m->skel->maps, counts)
		      : COLLECTOR_FD(&m->base, m->skel->maps, counts);
	struct stack_count *v = NULL;
	size_t nv = 0;
	int err;

	err = take ? stack_counts__take(fd, &v, &nv) : stack_counts__read(fd, pid, &v, &nv);
	if (err) {
		pr_warn(m->lc, "cannot read the counted stacks: %s", strerror(-err));
		goto out;
	}
	if (!nv)
		goto out;
	err = stack_table__read(m->base.st, bpf_map__fd(m->skel->maps.stacks));
	if (err)
		pr_warn(m->lc, "cannot read the stack table: %s; stacks are left out",
			strerror(-err));
	for (size_t i = 0; i < nv; i++) {
		const struct stack_count *c = &v[i];
		struct proc_info *p;

		if (c->k.aux >= (__u32)m->o->nevents)
			continue;
		p = proc_table__find(m->base.procs, c->k.tgid);
		if (!p) {
			/* -a: a process first seen here; its mappings if it still runs */
			p = proc_table__add(m->base.procs, c->k.tgid);
			if (!p)
				continue;
			if (p->pid > 0)
				snapshot(m, p);
		}
		add_count(m, p, c);
		if (!take)
			bpf_map_delete_elem(fd, &c->k);
	}
out:
	free(v);
}

static void drain(struct stacks_mode *m, pid_t pid)
{
	drain_how(m, pid, false);
}

static int take_counts(void *mp)
{
	drain_how(mp, 0, true);
	return 0;
}

/* The counts taken into the profile once the keys made since the last time are three quarters
 * of --max-stacks, or a table refused one (then the stacks map is emptied too: no count refers
 * to it), so that a long -a run does not fill up with the keys of processes long gone (a 14 s
 * run of a shell loop lost 32% of its events, from the per-process counts too) */
static void spill(struct stacks_mode *m)
{
	struct spill_check due = {
		.keys = { bpfutil__percpu_sum(bpf_map__fd(m->skel->maps.keys_made), 0) },
		.room = { m->o->max_stacks },
		.refused = drops_total(m),
	};

	collector__spill(&m->base, m->env, &due, take_counts, m);
}

static void stacks_finalize(void *mp, pid_t pid, bool exec)
{
	struct stacks_mode *m = mp;
	struct proc_info *p = proc_table__find(m->base.procs, pid);

	if (!p)
		return;
	/* its mappings now, libraries loaded since attach included, while they are readable */
	snapshot(m, p);
	drain(m, pid);
}

static void stacks_tick(void *mp, int64_t t_ns, bool second)
{
	struct stacks_mode *m = mp;

	spill(m);
	/* -a: each process that turned up, while its mappings are there */
	if (second && m->env->all)
		proc_table__adopt(m->base.procs, bpf_map__fd(m->skel->maps.comms),
				  sizeof(struct stacks_comm));
	unwinder__tick(m->base.unwinder);
}

static void stacks_retire(void *mp, pid_t pid)
{
	struct stacks_mode *m = mp;
	struct proc_info *p = proc_table__find(m->base.procs, pid);

	/* its uprobes: no user code runs after the exit stop */
	if (p)
		close_ufds(m, p);
}

/* Not at its exit stop (retire): the kernel's exit path after it has events of its own
 * (sched_process_exit, the last sched_switch); they are drained at the end. */
static void stacks_reaped(void *mp, pid_t pid)
{
	struct stacks_mode *m = mp;
	__u32 key = pid;

	/* a reused pid is not a target */
	bpf_map_delete_elem(bpf_map__fd(m->skel->maps.targets), &key);
	unwinder__forget(m->base.unwinder, pid);
}

/* tid stopped at its loader's hook (stacks_attach): its new code loaded, its mappings in a
 * snapshot (proc_table's unwinder_maps) */
static bool stacks_held(void *mp, pid_t pid, pid_t tid)
{
	struct stacks_mode *m = mp;

	return unwinder__held(m->base.unwinder, pid, tid);
}

static void stacks_stop(void *mp)
{
	struct stacks_mode *m = mp;

	/* the programs return at once from now on; the slow detach comes after the report */
	m->skel->bss->stopped = true;
}

/* One of the BPF side's single per-CPU counters ([0] of map), summed; with a key, also the run
 * fact of that name (0 included: a fact the report always has). */
static uint64_t counter(struct bpf_map *map, struct profile *prof, const char *key)
{
	uint64_t n = bpfutil__percpu_sum(bpf_map__fd(map), 0);

	if (key)
		profile__add_info(prof, key, "%llu", (unsigned long long)n);
	return n;
}

static void stacks_finish(void *mp)
{
	struct stacks_mode *m = mp;
	struct profile *prof = m->env->prof;
	int fd = bpf_map__fd(m->skel->maps.drops);
	uint64_t v[STACKS_DROP__COUNT];

	drain(m, 0);
	unwinder__add_drops(m->base.unwinder, prof);
	collector__add_drops(prof, fd, drop_names, 0, STACKS_DROP__COUNT, -1, v);
	for (__u32 r = 0; r < STACKS_DROP__COUNT; r++) {
		uint64_t n = v[r];

		if (n && r == STACKS_DROP_COUNTS_FULL)
			profile__add_note(prof, "%llu %s not counted per stack: the table of "
					  "(process, event, stacks) was full (--max-stacks %u); "
					  "raise --max-stacks", (unsigned long long)n,
					  n == 1 ? "event was" : "events were", m->o->max_stacks);
		else if (n)
			profile__add_note(prof, "%llu %s missing: the stack table was full "
					  "(--max-stacks %u); raise --max-stacks", (unsigned long long)n,
					  n == 1 ? "stack is" : "stacks are", m->o->max_stacks);
	}
	if (m->env->all)
		collector__note_reused(prof, bpf_map__fd(m->skel->maps.reused),
				       counter(m->skel->maps.pids_reused, NULL, NULL));
	if (has_kind(m->o, STACKS_EV_SYS_ENTER) || has_kind(m->o, STACKS_EV_SYS_EXIT)) {
		uint64_t n = counter(m->skel->maps.compat_calls, prof, "compat_syscalls");

		if (n)
			profile__add_note(prof, "%llu 32-bit system call%s (int $0x80, an ia32 "
					  "program's) %s made by the traced processes; no "
					  "syscalls: event counts %s, as the kernel's own syscall "
					  "tracepoints do not (their numbers are the ia32 table's: "
					  "its write is x86_64's stat)", (unsigned long long)n,
					  n == 1 ? "" : "s", n == 1 ? "was" : "were",
					  n == 1 ? "it" : "them");
	}
	if (!m->env->all) {
		uint64_t n = counter(m->skel->maps.held_events, prof, "held_by_ebprof");

		if (n)
			profile__add_note(prof, "%llu event%s of the traced threads going into a "
					  "ptrace stop of ebprof's (it holds a launched tree's "
					  "processes at each fork, exec and exit, to follow them: "
					  "their sched_switch) %s ebprof's, not the program's: not "
					  "counted", (unsigned long long)n, n == 1 ? "" : "s",
					  n == 1 ? "is" : "are");
	}
	fd = bpf_map__fd(m->skel->maps.hits);
	for (int i = 0; i < m->o->nevents; i++) {
		const struct stacks_event *ev = &m->o->events[i];

		if (ev->kind == STACKS_EV_UPROBE && !m->probed[i]) {
			/* a bare name no traced process mapped nor needed: its 0 was a wrong zero,
			 * said nowhere (a library dlopen'ed later by a path ebprof cannot guess) */
			session__clear_progress(m->env->s);
			pr_warn(m->lc, "event %s: no traced process mapped or needed an object named "
				"'%s', so it was never probed: give the library's path (a library "
				"loaded with dlopen is found only by its path)", ev->spec, ev->path);
			profile__add_note(prof, "event %s: never probed: no traced process mapped or "
					  "needed an object named '%s' (give its path); its count is "
					  "not a count", ev->spec, ev->path);
			continue;
		}
		unsigned long long hits = bpfutil__percpu_sum(fd, i);
		const char *noun = hits == 1 ? "hit" : "hits";

		if (m->nfuncs[i] > 1)
			profile__add_note(prof, "event %s: %llu %s in the traced processes, in the %u "
					  "functions of that name (each probed)", ev->spec, hits, noun,
					  m->nfuncs[i]);
		else
			profile__add_note(prof, "event %s: %llu %s in the traced processes",
					  ev->spec, hits, noun);
	}
}

static void stacks_detach(void *mp)
{
	struct stacks_mode *m = mp;

	if (!m)
		return;
	for (int i = 0; i < m->nlinks; i++)
		bpf_link__destroy(m->links[i]);
	m->nlinks = 0;
	for (int i = 0; i < m->ntp_fds; i++)
		close(m->tp_fds[i]);
	m->ntp_fds = 0;
	/* uprobes concurrently: one grace period for all rather than one per link */
	for (uint32_t i = 0; m->base.procs && i < proc_table__count(m->base.procs); i++)
		close_ufds(m, proc_table__at(m->base.procs, i));
	for (int i = 0; i < m->nall_ufds; i++)
		fd_closer__close(m->closer, m->all_ufds[i]);
	free(m->all_ufds);
	m->all_ufds = NULL;
	m->nall_ufds = 0;
	unwinder__unhook(m->base.unwinder);
	unwinder__use_closer(m->base.unwinder, NULL);
	fd_closer__free(m->closer);
	m->closer = NULL;
}

static void stacks_close(void *mp)
{
	struct stacks_mode *m = mp;

	if (!m)
		return;
	stacks_detach(m);
	collector__close(&m->base, free_uprobes);
	free(m);
}

_Static_assert(offsetof(struct stacks_mode, base) == 0, "the shared hooks' collector");

const struct mode_ops stacks_mode_ops = {
	.name = "stacks",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = true,	/* a kernel thread's events count by tgid, with kernel stacks */
	.open = stacks_open,
	.close = stacks_close,
	.attach = stacks_attach,
	.attach_all = stacks_attach_all,
	.tick = stacks_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = stacks_progress,
	.finalize = stacks_finalize,
	.retire = stacks_retire,
	.reaped = stacks_reaped,
	.held = stacks_held,
	.stop = stacks_stop,
	.finish = stacks_finish,
	.detach = stacks_detach,
};
