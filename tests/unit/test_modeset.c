/* Several modes in one session (core/modeset.c), with member modes made here (their hooks
 * record what they were asked; no BPF: the composition is what is tested, the real modes are
 * tested end to end in tests/e2e/profile.bats): every hook reaches every member in order, each
 * member fills its own part of the session's profile, a process one member cannot trace is
 * traced by the others (said in that member's part), an optional member that cannot open is
 * left out, the progress line joins the members'; with lead (ebprof top) the first member
 * decides and the others' attach errors are theirs; quiet_others silences the others once
 * open (but at -v); a window has a part per member, in order, empty for one without windows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/modeset.h"
#include "profile/profile.h"

static char calls[1024];
static struct fake *opened[8];	/* the members opened since the last start, in order */
static int nopened;

struct fake_opts {
	const char *name;
	bool fail_open;
	int attach_err;
	int window_err;
};

struct fake {
	const struct fake_opts *o;
	const struct session_env *env;
};

static void note(const char *who, const char *what)
{
	size_t n = strlen(calls);

	snprintf(calls + n, sizeof(calls) - n, "%s%s.%s", n ? " " : "", who, what);
}

static void *f_open(const struct session_env *env, void *opts)
{
	const struct fake_opts *o = opts;
	struct fake *f;

	note(o->name, "open");
	if (o->fail_open)
		return NULL;
	f = calloc(1, sizeof(*f));
	f->o = o;
	f->env = env;
	if (nopened < 8)
		opened[nopened++] = f;
	profile__add_type(env->prof, o->name, "count");
	return f;
}

static void f_close(void *m)
{
	note(((struct fake *)m)->o->name, "close");
	free(m);
}

static int f_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct fake *f = m;

	note(f->o->name, "attach");
	if (f->o->attach_err == -ESRCH)
		*status = 7;
	return f->o->attach_err;
}

static const char *f_why(void *m, pid_t pid)
{
	return "a program it cannot trace";
}

static void f_tick(void *m, int64_t t, bool second)
{
	note(((struct fake *)m)->o->name, "tick");
}

/* what was counted since the last window: one sample of pid 7, 2 s long (A), 3 s (B) */
static int f_window(void *m, struct profile *into)
{
	struct fake *f = m;
	uint32_t map = profile__mapping(into, 7, 0x1000, 0x2000, 0, "/bin/fake", NULL);
	uint32_t loc = profile__location(into, map, 0x1000, 0, NULL, 0);
	int64_t v = 5;

	note(f->o->name, "window");
	profile__add_type(into, f->o->name, "count");
	profile__add_sample(into, &loc, 1, &v, 7);
	into->duration_nanos = f->o->name[0] == 'A' ? 2000000000 : 3000000000;
	return f->o->window_err;
}

static void f_progress(void *m, char *buf, size_t len)
{
	snprintf(buf, len, "%s busy", ((struct fake *)m)->o->name);
}

static void f_finalize(void *m, pid_t pid, bool exec)
{
	note(((struct fake *)m)->o->name, "finalize");
}

static void f_stop(void *m)
{
	note(((struct fake *)m)->o->name, "stop");
}

static void f_detach(void *m)
{
	note(((struct fake *)m)->o->name, "detach");
}

static const struct mode_ops fake_a = {
	.name = "cpu", .open = f_open, .close = f_close, .attach = f_attach,
	.why_untraceable = f_why, .tick = f_tick, .progress = f_progress, .finalize = f_finalize,
	.stop = f_stop, .detach = f_detach, .attach_all = NULL,
};
static const struct mode_ops fake_w = {
	.name = "lock", .open = f_open, .close = f_close, .attach = f_attach,
	.why_untraceable = f_why, .tick = f_tick, .window = f_window, .detach = f_detach,
};
static const struct mode_ops fake_b = {
	.name = "mem", .preflight = 1, .open = f_open, .close = f_close, .attach = f_attach,
	.why_untraceable = f_why, .tick = f_tick, .progress = f_progress, .finalize = f_finalize,
	.stop = f_stop, .detach = f_detach,
};

struct run {
	struct modeset_opts mso;
	struct mode_ops ops;
	struct profile *prof;
	struct session_env env;
	struct log_ctx lc;
	void *m;
};

static void start_with(struct run *r, struct fake_opts *a, struct fake_opts *b, bool optional,
		       bool lead, bool quiet_others)
{
	int verbose = r->lc.verbose;

	calls[0] = '\0';
	nopened = 0;
	memset(r, 0, sizeof(*r));
	r->lc.prog = "ebprof";
	r->lc.verbose = verbose;
	r->mso.lead = lead;
	r->mso.quiet_others = quiet_others;
	r->prof = profile__new("profile");
	assert_non_null(r->prof);
	r->mso.members[0] = (struct modeset_member){ &fake_a, a, optional };
	r->mso.members[1] = (struct modeset_member){ &fake_b, b, optional };
	r->mso.n = 2;
	modeset__ops(&r->ops, &r->mso);
	r->env = (struct session_env){ .lc = &r->lc, .prof = r->prof };
	r->m = r->ops.open(&r->env, &r->mso);
}

static void start(struct run *r, struct fake_opts *a, struct fake_opts *b, bool optional)
{
	r->lc.verbose = 0;
	start_with(r, a, b, optional, false, false);
}

static struct fake *member(int i)
{
	return opened[i];
}

static void test_fan_out(void **state)
{
	struct fake_opts a = { "A" }, b = { "B" };
	struct run r;
	char line[128];
	int st = -1;

	start(&r, &a, &b, false);
	assert_non_null(r.m);
	assert_string_equal(r.ops.name, "profile");
	assert_int_equal(r.ops.preflight, 1);	/* the union of the members' */
	assert_null(r.ops.attach_all);		/* one member has no -a */
	/* a part per member, named by it, with the member's own types */
	assert_int_equal(r.prof->nparts, 2);
	assert_string_equal(r.prof->parts[0]->mode, "cpu");
	assert_string_equal(r.prof->parts[1]->types[0].type, "B");
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_EXEC, &st), 0);
	r.ops.tick(r.m, 100, false);
	r.ops.progress(r.m, line, sizeof(line));
	assert_string_equal(line, "cpu A busy | mem B busy");
	r.ops.finalize(r.m, 42, false);
	r.ops.stop(r.m);
	r.ops.detach(r.m);
	r.ops.close(r.m);
	assert_string_equal(calls, "A.open B.open A.attach B.attach A.tick B.tick A.finalize "
			    "B.finalize A.stop B.stop A.detach B.detach A.close B.close");
	profile__free(r.prof);
}

static void test_attach_partly(void **state)
{
	struct fake_opts a = { "A" }, b = { "B", .attach_err = -ENOENT };
	struct run r;
	int st = -1;

	start(&r, &a, &b, false);
	/* traced by one member: traced; the other says why in its part */
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_PID, &st), 0);
	assert_int_equal(r.prof->parts[1]->nnotes, 1);
	assert_string_equal(r.prof->parts[1]->notes[0], "PID 42 was not traced by 'mem': a program "
			    "it cannot trace");
	assert_int_equal(r.prof->parts[0]->nnotes, 0);
	r.ops.close(r.m);
	profile__free(r.prof);

	/* by none: untraceable */
	a.attach_err = -ENOENT;
	start(&r, &a, &b, false);
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_PID, &st), -ENOENT);
	r.ops.close(r.m);
	profile__free(r.prof);

	/* gone meanwhile: said at once, with its status */
	a.attach_err = -ESRCH;
	start(&r, &a, &b, false);
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_EXEC, &st), -ESRCH);
	assert_int_equal(st, 7);
	r.ops.close(r.m);
	profile__free(r.prof);
}

static void test_open_fails(void **state)
{
	struct fake_opts a = { "A", .fail_open = true }, b = { "B" };
	struct run r;

	/* a member the user named: the run fails, what opened is closed */
	start(&r, &b, &a, false);
	assert_null(r.m);
	assert_string_equal(calls, "B.open A.open B.close");
	profile__free(r.prof);

	/* an optional one: left out, no gap */
	start(&r, &a, &b, true);
	assert_non_null(r.m);
	assert_int_equal(r.prof->nparts, 1);
	assert_string_equal(r.prof->parts[0]->mode, "mem");
	r.ops.tick(r.m, 100, true);
	r.ops.close(r.m);
	assert_string_equal(calls, "A.open B.open B.tick B.close");
	profile__free(r.prof);

	/* none left: fails */
	b.fail_open = true;
	start(&r, &a, &b, true);
	assert_null(r.m);
	assert_int_equal(r.prof->nparts, 0);
	profile__free(r.prof);
}

/* top's rule: the first member decides; the others' errors leave only them without it */
static void test_lead(void **state)
{
	struct fake_opts a = { "A" }, b = { "B", .attach_err = -EPERM };
	struct run r;
	int st = -1;

	/* profile's rule first: another error of any member is the run's */
	start(&r, &a, &b, false);
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_PID, &st), -EPERM);
	r.ops.close(r.m);
	profile__free(r.prof);

	start_with(&r, &a, &b, false, true, false);
	assert_int_equal(r.ops.attach(r.m, 42, MODE_ATTACH_PID, &st), 0);
	assert_int_equal(r.prof->parts[1]->nnotes, 0);	/* said at -v, not in the report */
	b.attach_err = -ENOENT;
	assert_int_equal(r.ops.attach(r.m, 43, MODE_ATTACH_PID, &st), 0);
	b.attach_err = -ESRCH;		/* gone: said at once, whoever saw it */
	assert_int_equal(r.ops.attach(r.m, 44, MODE_ATTACH_EXEC, &st), -ESRCH);
	assert_int_equal(st, 7);
	b.attach_err = 0;
	a.attach_err = -ENOENT;		/* the first cannot: untraceable, though B could */
	assert_int_equal(r.ops.attach(r.m, 45, MODE_ATTACH_PID, &st), -ENOENT);
	assert_string_equal(r.ops.why_untraceable(r.m, 45), "a program it cannot trace");
	a.attach_err = -EPERM;		/* the first's error is the run's */
	assert_int_equal(r.ops.attach(r.m, 46, MODE_ATTACH_PID, &st), -EPERM);
	r.ops.close(r.m);
	profile__free(r.prof);
}

/* quiet_others: the members after the first log through a context that is silent once they
 * are open, unless -v */
static void test_quiet_others(void **state)
{
	struct fake_opts a = { "A" }, b = { "B" };
	struct run r = { 0 };

	start_with(&r, &a, &b, false, false, true);
	assert_false(member(0)->env->lc->silent);
	assert_true(member(1)->env->lc->silent);
	r.ops.close(r.m);
	profile__free(r.prof);

	start_with(&r, &a, &b, false, false, false);
	assert_false(member(1)->env->lc->silent);
	r.ops.close(r.m);
	profile__free(r.prof);

	r.lc.verbose = 1;
	start_with(&r, &a, &b, false, false, true);	/* keeps r.lc */
	assert_false(member(1)->env->lc->silent);
	r.ops.close(r.m);
	profile__free(r.prof);
}

/* a window: a part per member in member order, the window-less member's empty; the counting
 * goes on (each member's own window hook is called once per window) */
static void test_window(void **state)
{
	struct fake_opts a = { "A" }, w = { "W" }, b = { "B" };
	struct run r;
	struct profile *into;

	calls[0] = '\0';
	memset(&r, 0, sizeof(r));
	r.lc.prog = "ebprof";
	r.prof = profile__new("profile");
	r.mso.members[0] = (struct modeset_member){ &fake_w, &a, false };
	r.mso.members[1] = (struct modeset_member){ &fake_b, &b, false };
	r.mso.members[2] = (struct modeset_member){ &fake_w, &w, false };
	r.mso.n = 3;
	modeset__ops(&r.ops, &r.mso);
	assert_non_null(r.ops.window);
	r.env = (struct session_env){ .lc = &r.lc, .prof = r.prof };
	r.m = r.ops.open(&r.env, &r.mso);
	assert_non_null(r.m);
	into = profile__new("profile");
	assert_int_equal(r.ops.window(r.m, into), 0);
	assert_int_equal(into->nparts, 3);
	assert_string_equal(into->parts[0]->mode, "lock");
	assert_int_equal(into->parts[0]->nsamples, 1);
	assert_string_equal(into->parts[0]->types[0].type, "A");
	assert_string_equal(into->parts[1]->mode, "mem");	/* no windows: empty, there */
	assert_int_equal(into->parts[1]->nsamples, 0);
	assert_int_equal(into->parts[1]->nnotes, 1);
	assert_string_equal(into->parts[1]->notes[0], "the mem mode has no windows yet");
	assert_int_equal(into->parts[2]->nsamples, 1);
	assert_string_equal(into->parts[2]->types[0].type, "W");
	assert_int_equal(into->duration_nanos, 3000000000);	/* the longest part's */
	assert_int_equal(r.prof->parts[0]->nsamples, 0);	/* not the run's */
	profile__free(into);
	/* a member whose window fails: its error, the others' windows kept */
	a.window_err = -EIO;
	into = profile__new("profile");
	assert_int_equal(r.ops.window(r.m, into), -EIO);
	assert_int_equal(into->nparts, 3);
	assert_int_equal(into->parts[2]->nsamples, 1);
	profile__free(into);
	r.ops.close(r.m);
	assert_string_equal(calls, "A.open B.open W.open A.window W.window A.window W.window "
			    "A.close B.close W.close");
	profile__free(r.prof);

	/* no member with windows: the set has none */
	start(&r, &a, &b, false);
	assert_null(r.ops.window);
	r.ops.close(r.m);
	profile__free(r.prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fan_out),
		cmocka_unit_test(test_attach_partly),
		cmocka_unit_test(test_open_fails),
		cmocka_unit_test(test_lead),
		cmocka_unit_test(test_quiet_others),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
