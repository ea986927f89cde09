/* Several modes in one session: core/modeset.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "core/modeset.h"
#include "output/findings.h"
#include "profile/profile.h"

struct member_run {
	const struct mode_ops *ops;
	void *m;			/* the member's state, NULL once closed */
	struct session_env env;		/* the session's, with the member's own profile */
};

struct modeset {
	const struct session_env *env;
	const struct modeset_opts *o;
	struct member_run r[MODESET_MAX];
	int n;
	int wake_fd;			/* epoll over the members' wake fds; -1: none (yet) */
	bool wake_made;
	struct log_ctx others;		/* the members' after the first, with quiet_others: the
					 * session's, silent once they are open */
};

#define EACH(ms, r) for (struct member_run *r = (ms)->r; r < (ms)->r + (ms)->n; r++)

static void set_close(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->m)
			r->ops->close(r->m);
	if (ms->wake_fd >= 0)
		close(ms->wake_fd);
	free(ms);
}

static void *set_open(const struct session_env *env, void *opts)
{
	const struct modeset_opts *o = opts;
	struct modeset *ms = calloc(1, sizeof(*ms));

	if (!ms) {
		pr_err(env->lc, "out of memory");
		return NULL;
	}
	ms->env = env;
	ms->o = o;
	ms->wake_fd = -1;
	ms->others = *env->lc;
	for (int i = 0; i < o->n; i++) {
		struct member_run *r = &ms->r[ms->n];	/* members left out leave no gap */
		struct profile *part = profile__new(o->members[i].ops->name);

		if (!part || profile__add_part(env->prof, part)) {
			profile__free(part);
			pr_err(env->lc, "out of memory");
			set_close(ms);
			return NULL;
		}
		r->ops = o->members[i].ops;
		r->env = *env;
		r->env.prof = part;
		if (o->quiet_others && i > 0)
			r->env.lc = &ms->others;	/* members keep the pointer */
		ms->n++;
		r->m = r->ops->open(&r->env, o->members[i].opts);
		if (r->m)
			continue;
		/* the member said why */
		if (!o->members[i].optional) {
			set_close(ms);
			return NULL;
		}
		pr_warn(env->lc, "the %s mode is left out of this run (see above); --modes "
			"chooses the modes", r->ops->name);
		profile__free(part);
		env->prof->nparts--;
		ms->n--;
	}
	if (!ms->n) {
		pr_err(env->lc, "no mode could be set up");
		set_close(ms);
		return NULL;
	}
	ms->others.silent = env->lc->verbose < 1;
	return ms;
}

/* A process is traced when at least one member traces it (with lead: when the first does); a
 * member that cannot says so in its own part of the report (with lead: at -v). */
static int set_attach(void *v, pid_t pid, enum mode_attach how, int *status)
{
	struct modeset *ms = v;
	int traced = 0;

	EACH(ms, r) {
		int err = r->ops->attach(r->m, pid, how, status);
		const char *why;

		if (!err) {
			traced++;
			continue;
		}
		if (ms->o->lead && err != -ESRCH && r > ms->r) {
			why = err == -ENOENT && r->ops->why_untraceable ?
			      r->ops->why_untraceable(r->m, pid) : NULL;
			pr_info(ms->env->lc, "PID %d is not traced by the %s mode: %s", (int)pid,
				r->ops->name, why ? why : err == -ENOENT ? "not supported" :
				strerror(-err));
			continue;
		}
		if (err != -ENOENT || ms->o->lead)
			return err;	/* -ESRCH (gone: *status set) or fatal (said) */
		why = r->ops->why_untraceable ? r->ops->why_untraceable(r->m, pid) : NULL;
		profile__add_note(r->env.prof, "PID %d was not traced by '%s': %s", (int)pid,
				  r->ops->name, why ? why : "not supported");
	}
	return traced ? 0 : -ENOENT;
}

static const char *set_why(void *v, pid_t pid)
{
	struct modeset *ms = v;

	EACH(ms, r) {
		const char *why = r->ops->why_untraceable ? r->ops->why_untraceable(r->m, pid)
							   : NULL;
		if (why || ms->o->lead)
			return why;	/* with lead: the first's -ENOENT is the one said */
	}
	return NULL;
}

static int set_attach_all(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r) {
		int err = r->ops->attach_all(r->m);

		if (err)
			return err;
	}
	return 0;
}

/* The members' wake fds (the unwinder's news of new code) as one the session can poll: an
 * epoll set, made at the first call (the members' fds exist once they are open). */
static int set_wake_fd(void *v)
{
	struct modeset *ms = v;

	if (ms->wake_made)
		return ms->wake_fd;
	ms->wake_made = true;
	EACH(ms, r) {
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = r->ops->wake_fd ? r->ops->wake_fd(r->m) : -1;

		if (fd < 0)
			continue;
		if (ms->wake_fd < 0)
			ms->wake_fd = epoll_create1(EPOLL_CLOEXEC);
		if (ms->wake_fd < 0 || epoll_ctl(ms->wake_fd, EPOLL_CTL_ADD, fd, &ev))
			pr_warn(ms->env->lc, "the %s mode's news of new code is read each tick "
				"only: %s", r->ops->name, strerror(errno));
	}
	return ms->wake_fd;
}

static void set_wake(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->wake)
			r->ops->wake(r->m);
}

static void set_tick(void *v, int64_t t_ns, bool second)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->tick)
			r->ops->tick(r->m, t_ns, second);
}

/* "cpu 1234 samples | mem 12 MB ...": each member's own line, as much as fits */
static void set_progress(void *v, char *buf, size_t len)
{
	struct modeset *ms = v;
	size_t used = 0;

	buf[0] = '\0';
	EACH(ms, r) {
		char one[256] = "";
		int n;

		if (!r->ops->progress)
			continue;
		r->ops->progress(r->m, one, sizeof(one));
		n = snprintf(buf + used, len - used, "%s%s %s", used ? " | " : "", r->ops->name,
			     one);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += n;
	}
}

static int set_inspect(void *v, pid_t pid, bool at_exit, int *leader_status)
{
	struct modeset *ms = v;
	int rc = 0;

	*leader_status = -1;
	EACH(ms, r) {
		int err;

		if (!r->ops->inspect)
			continue;
		err = r->ops->inspect(r->m, pid, at_exit, leader_status);
		if (err && !rc)
			rc = err;
		if (*leader_status != -1)
			break;	/* it exited meanwhile: nothing more to read from it */
	}
	return rc;
}

static void set_thread_exit(void *v, pid_t pid, pid_t tid)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->thread_exit)
			r->ops->thread_exit(r->m, pid, tid);
}

/* Every member's unwinder takes its own note: each one's tables load */
static bool set_held(void *v, pid_t pid, pid_t tid)
{
	struct modeset *ms = v;
	bool held = false;

	EACH(ms, r)
		if (r->ops->held && r->ops->held(r->m, pid, tid))
			held = true;
	return held;
}

/* Each member's window into its own part of `into`, in member order, so that part i is member
 * i's; a member without a window hook leaves its part empty, with a note saying so. The
 * window's duration is its longest part's. */
static int set_window(void *v, struct profile *into)
{
	struct modeset *ms = v;
	int rc = 0;

	EACH(ms, r) {
		struct profile *part = profile__new(r->ops->name);
		int err;

		if (!part || profile__add_part(into, part)) {
			profile__free(part);
			return -ENOMEM;
		}
		if (!r->ops->window) {
			profile__add_note(part, "the %s mode has no windows yet", r->ops->name);
			continue;
		}
		/* one that fails said why; what it took is kept */
		err = r->ops->window(r->m, part);
		if (err && !rc)
			rc = err;
		if (part->duration_nanos > into->duration_nanos)
			into->duration_nanos = part->duration_nanos;
	}
	return rc;
}

static void set_finalize(void *v, pid_t pid, bool exec)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->finalize)
			r->ops->finalize(r->m, pid, exec);
}

static void set_retire(void *v, pid_t pid)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->retire)
			r->ops->retire(r->m, pid);
}

static void set_reaped(void *v, pid_t pid)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->reaped)
			r->ops->reaped(r->m, pid);
}

static void set_started(void *v, uint64_t start_ns)
{
	struct modeset *ms = v;

	EACH(ms, r) {
		r->env.start_ns = start_ns;
		if (r->ops->started)
			r->ops->started(r->m, start_ns);
	}
}

static void set_stop(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->stop)
			r->ops->stop(r->m);
}

static void set_finish(void *v)
{
	struct modeset *ms = v;
	int err;

	EACH(ms, r)
		if (r->ops->finish)
			r->ops->finish(r->m);
	if (!ms->o->findings)
		return;
	/* the run's duration, as the session set it before finish: from the start to the
	 * end of tracing, not the modes' loading or reading out */
	err = findings__compute(ms->env->prof, ms->env->prof->duration_nanos,
				ms->env->all);
	if (err)
		pr_warn(ms->env->lc, "the findings could not be computed: %s", strerror(-err));
}

static int set_verdict(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r) {
		int rc = r->ops->verdict ? r->ops->verdict(r->m) : 0;

		if (rc)
			return rc;
	}
	return 0;
}

static void set_detach(void *v)
{
	struct modeset *ms = v;

	EACH(ms, r)
		if (r->ops->detach)
			r->ops->detach(r->m);
}

void modeset__ops(struct mode_ops *ops, const struct modeset_opts *o)
{
	bool all = true, vfork = true;

	*ops = (struct mode_ops){
		.name = "profile",
		.open = set_open,
		.close = set_close,
		.attach = set_attach,
		.why_untraceable = set_why,
		.tick = set_tick,
		.wake_fd = set_wake_fd,
		.wake = set_wake,
		.progress = set_progress,
		.inspect = set_inspect,
		.thread_exit = set_thread_exit,
		.held = set_held,
		.finalize = set_finalize,
		.retire = set_retire,
		.reaped = set_reaped,
		.started = set_started,
		.stop = set_stop,
		.finish = set_finish,
		.verdict = set_verdict,
		.detach = set_detach,
	};
	for (int i = 0; i < o->n; i++) {
		ops->preflight |= o->members[i].ops->preflight;
		ops->ptrace_pid |= o->members[i].ops->ptrace_pid;
		if (o->members[i].ops->window)
			ops->window = set_window;
		if (!o->members[i].ops->attach_all)
			all = false;
		if (!o->members[i].ops->vfork_children)
			vfork = false;	/* one member cannot: the set attaches it at its exec */
	}
	ops->vfork_children = vfork;
	if (all)
		ops->attach_all = set_attach_all;
}
