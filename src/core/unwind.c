/* The collector's side of the BPF unwinder (see unwind.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "abi/unwind.h"
#include "core/bpfutil.h"
#include "core/closer.h"
#include "core/ldso.h"
#include "core/log.h"
#include "core/probes.h"
#include "core/procs.h"
#include "core/stacks.h"
#include "core/target.h"
#include "core/unwind.h"
#include "profile/profile.h"
#include "symbolize/procmaps.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"
#include "util/util.h"

/* An array map's value room: its size rounded up to 8 bytes (the kernel's elem_size) */
#define ROW_ROOM	((sizeof(struct unwind_row) + 7) & ~(size_t)7)

/* An evicted object's rows are taken after an RCU grace period (grace), or where the kernel
 * cannot be asked for one after this long: a walk takes microseconds */
#define UNWIND_QUARANTINE_MS	100

struct unwind_obj {
	uint64_t dev, ino;		/* MKDEV(major, minor) as the kernel's; (0, 0): the vdso */
	char *path;			/* as first seen, for -v */
	bool fp;			/* no table: frame pointers */
	bool noroom;			/* fp only because its table did not fit: tried again
					 * when room could be made (want rows) */
	uint32_t want;
	uint32_t rows, nrows;		/* in the rows map */
	struct unwind_table segs;	/* its segments only (rows freed once in the map) */
	uint32_t users;			/* processes whose unwind_procs entry maps its rows */
	uint32_t used_tick;		/* the unwinder's tick when a load last met it, or its
					 * last user went: the least recent are evicted first */
	uint64_t used_seq;		/* the same, in order within a tick */
	uint64_t load_seq;		/* the load that last met it (u->load_seq: not evicted
					 * during that load) */
};

/* Rows of the map, free: [start, start + n) */
struct row_range {
	uint32_t start, n;
};

/* Free rows below the bump pointer, sorted, neighbours coalesced */
struct row_set {
	struct row_range *r;
	uint32_t n, cap;
};

struct obj_list {
	struct unwind_obj **o;
	uint32_t n, cap;
	bool oom;		/* one could not be added */
};

/* A process in unwind_procs */
struct unwind_pid {
	pid_t pid;
	struct unwind_ident ident;	/* the address space its maps were read from */
	uint64_t hash;		/* of the executable lines of the maps it was loaded from */
	bool stale;		/* the BPF side met an address in none of them */
	bool slow;		/* and the mappings read the same since: looked at each second */
	bool hooked;		/* its loader's hook was looked for (hook_fd: the link, or -1) */
	int hook_fd;
	dev_t hook_dev;		/* the loader file hooked */
	ino_t hook_ino;
	/* the objects with rows its last load met (it is one of their users): those its entry
	 * maps, and the libraries it needs (DT_NEEDED, LD_PRELOAD), built before it maps them */
	struct unwind_obj **objs;
	uint32_t nobjs;
	double loaded_ms;	/* when it was last loaded (mono_ms) */
};

struct unwinder {
	const struct log_ctx *lc;
	int procs_fd, rows_fd, stats_fd;
	int files_fd;		/* unwind_files, -1: none */
	int epoch_fd;		/* unwind_epoch, -1: none */
	uint32_t epoch;		/* changes made to procs_fd: the BPF side's stack cache takes a
				 * hit without looking up the process while it is unchanged */
	uint64_t files_full;	/* objects not in it: their mappings truncated until a load */
	uint32_t preloaded;	/* tables built for libraries before they were mapped */
	struct ring_buffer *stale_rb;	/* unwind_stale */
	struct unwind_pid *pids;
	uint32_t npids, cappids;
	/* processes the BPF side asked for that have no entry (-a: not loaded yet; the map was
	 * full), loaded when asked (the BPF side wakes the session) within UNWIND_LOAD_BUDGET_MS
	 * a tick: the rest wait for the next tick */
	struct { pid_t pid; } asked[UNWIND_ASKED_QUEUE];
	uint32_t nasked;
	uint64_t asks_skipped;	/* asks the queue had no room for: never loaded */
	uint64_t asks_loaded;	/* processes loaded on an ask */
	double tick_ms;		/* time spent loading asked processes since the tick began */
	/* tests only (EBPROF_TEST_UNWIND_RELOAD_MS): a process loaded is not loaded again for
	 * the same program before that many ms, whatever asks (a stale note, a snapshot; an
	 * exec is loaded at once; the maps read still go to the snapshots): a loaded machine's
	 * late reload, made certain, so that what the walk does meanwhile (code mapped since,
	 * by file) can be counted */
	double test_reload_ms;
	/* tests only (EBPROF_TEST_UNWIND_NO_NOTES=1): the BPF side's notes of code met since a
	 * load (unwind_stale) go unanswered: a collector too busy to read a process's maps
	 * before it moves on (execs, unmaps what it mapped), made certain; what the loader's
	 * hook holds is loaded still */
	bool test_no_notes;
	bool running;		/* loading a process met running (not at its exec stop): its
				 * libraries are mapped already, none are preloaded */
	uint32_t ticks;
	uint32_t gen;		/* of the last load (unwind_proc.gen) */
	uint64_t load_seq;	/* unwinder__load's calls: the objects the current one met are
				 * not evicted for another it meets */
	struct obj_list *met;	/* the objects with rows the load going on met (NULL: none) */
	uint64_t use_seq;	/* unwind_obj.used_seq */
	/* the rows map: rows below next_row are objects' or free (freed: evicted, after a grace
	 * period), from next_row on never used */
	uint32_t max_rows, next_row;
	struct row_set free;
	struct unwind_obj **objs;	/* pointers: a process's record holds its objects' */
	uint32_t nobjs, capobjs;
	uint64_t evicted, evicted_rows;	/* objects no process mapped whose rows were reused */
	double evict_ms;	/* evicting them, the grace periods included */
	uint64_t procs_full, rows_full;
	uint64_t rows_missing;	/* the rows of the objects that did not fit */
	uint64_t rows_failed;	/* objects whose rows fitted but could not be stored */
	int rows_err;		/* the last such failure's errno */
	double build_ms;
	/* the loader's hook (abi/unwind.h, UNWIND_HOLD_SIG): unwind_dl_hook's fd (-1: none),
	 * unwind_holds's; links closed off the run loop's thread */
	int hook_prog_fd, holds_fd;
	struct fd_closer *closer;	/* the mode's (unwinder__use_closer); NULL: no hooks */
	uint64_t hooks, holds;	/* processes hooked; stops taken for a hold */
	double hold_ms;		/* loading their new code meanwhile */
	double hook_ms;		/* making the hooks' links */
	void (*on_maps)(void *ctx, pid_t pid, const char *maps);	/* unwinder__on_maps */
	void *on_maps_ctx;
};

int unwind_ident__parse(const char *stat, struct unwind_ident *id)
{
	unsigned long long v[26];
	const char *p = strrchr(stat, ')');	/* after the name, which can hold anything */

	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	while (*p && *p != ' ')		/* the state */
		p++;
	for (int k = 0; k < 26; k++) {	/* fields 4 (ppid) to 29 */
		char *end;

		v[k] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
	}
	id->start_time = v[22 - 4];
	id->end_code = v[27 - 4];
	id->start_stack = v[28 - 4];
	return id->start_stack ? 0 : -ESRCH;	/* no address space (a kernel thread, exiting) */
}

int unwind_ident__read(pid_t pid, struct unwind_ident *id)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	return unwind_ident__parse(buf, id);
}

bool unwind_ident__same(const struct unwind_ident *a, const struct unwind_ident *b)
{
	return a->start_time == b->start_time && a->start_stack == b->start_stack &&
	       a->end_code == b->end_code;
}

int unwind_how__parse(const char *s, enum unwind_how *how)
{
	if (strcmp(s, "auto") == 0)
		*how = UNWIND_AUTO;
	else if (strcmp(s, "dwarf") == 0)
		*how = UNWIND_DWARF;
	else if (strcmp(s, "fp") == 0)
		*how = UNWIND_FP;
	else
		return -1;
	return 0;
}

static uint32_t planned_rows;	/* unwind__plan_launch's, 0: none */
static uint32_t procs_limit;	/* --unwind-procs, 0: the mode's */
static uint32_t queue_limit = UNWIND_ASKED_QUEUE;	/* --unwind-queue */
static uint32_t rows_limit;	/* --unwind-rows, 0: planned or the default */

void unwind__set_limits(uint32_t procs, uint32_t queue, uint32_t rows)
{
	procs_limit = procs;
	queue_limit = queue && queue < UNWIND_ASKED_QUEUE ? queue : UNWIND_ASKED_QUEUE;
	rows_limit = rows;
}

int unwind__size_maps(struct bpf_object *obj, enum unwind_how how, uint32_t max_procs,
		      uint32_t max_rows)
{
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "unwind_procs");
	struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");
	struct bpf_map *cache = bpf_object__find_map_by_name(obj, "unwind_cache");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "unwind_files");
	struct bpf_map *asked = bpf_object__find_map_by_name(obj, "unwind_asked");
	struct bpf_map *scache = bpf_object__find_map_by_name(obj, "unwind_scache");
	struct bpf_program *hook = bpf_object__find_program_by_name(obj, "unwind_dl_hook");
	int err, ncpus;

	/* the loader's hook: a uprobe_multi link per process (hook), where the mode asks for it
	 * (unwind__hold_at_loader) */
	if (hook) {
		bpf_program__set_autoload(hook, false);
		bpf_program__set_expected_attach_type(hook, EBPROF_BPF_TRACE_UPROBE_MULTI);
	}
	if (how == UNWIND_FP)
		return 0;
	if (!procs || !rows || !cache)
		return -ENOENT;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	err = bpf_map__set_max_entries(cache, UNWIND_CACHE_SIZE * (uint32_t)ncpus);
	if (!err && scache)
		err = bpf_map__set_max_entries(scache, UNWIND_SCACHE_SIZE);
	if (!err && files)
		err = bpf_map__set_max_entries(files, UNWIND_DEFAULT_OBJS);
	if (!err && asked)
		err = bpf_map__set_max_entries(asked, UNWIND_ASKED_SIZE);
	if (err)
		return err;
	err = bpf_map__set_max_entries(procs, procs_limit ? procs_limit :
					max_procs ? max_procs : UNWIND_DEFAULT_PROCS);
	if (!err)
		err = bpf_map__set_max_entries(rows, rows_limit ? rows_limit :
					       max_rows ? max_rows :
					       planned_rows ? planned_rows : UNWIND_DEFAULT_ROWS);
	return err;
}

/* The rows of path's table and those of the libraries it needs, into *sum, each file once
 * (seen: n of them). -1 when path is not an ELF file, -ENOMEM (anywhere below too). */
static int launch_rows(const char *path, char ***seen, size_t *n, uint64_t *sum, int depth)
{
	struct unwind_table t;
	const char *why;
	char **libs, **p;
	size_t nlibs;
	int err = 0;

	for (size_t i = 0; i < *n; i++)
		if (strcmp((*seen)[i], path) == 0)
			return 0;
	if (depth > 8 || unwind_needed(path, NULL, &libs, &nlibs))
		return -1;
	p = realloc(*seen, (*n + 1) * sizeof(*p));
	if (p)
		*seen = p;
	if (p && (p[*n] = strdup(path)) != NULL)
		(*n)++;
	else
		err = -ENOMEM;
	if (!err && unwind_table__build(path, NULL, sym_cache_dir(), &t, &why) == 0) {
		*sum += t.nrows;
		unwind_table__free(&t);
	}
	for (size_t i = 0; i < nlibs; i++) {
		if (!err && launch_rows(libs[i], seen, n, sum, depth + 1) == -ENOMEM)
			err = -ENOMEM;
		free(libs[i]);
	}
	free(libs);
	return err;
}

void unwind__plan_launch(char *const *argv)
{
	planned_rows = unwind__launch_rows(argv);
}

uint32_t unwind__launch_rows(char *const *argv)
{
	char exe[4096], **seen = NULL;
	uint64_t sum = 0;
	size_t n = 0;
	int err;

	if (!argv || !argv[0] || !sym_cache_dir() || target__find(argv[0], exe, sizeof(exe)))
		return UNWIND_DEFAULT_ROWS;
	err = launch_rows(exe, &seen, &n, &sum, 0);
	for (size_t i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
	if (err)
		return UNWIND_DEFAULT_ROWS;
	sum *= 2;
	return sum < UNWIND_DEFAULT_ROWS ? UNWIND_DEFAULT_ROWS :
	       sum > UNWIND_LAUNCH_MAX_ROWS ? UNWIND_LAUNCH_MAX_ROWS : (uint32_t)sum;
}

static struct unwind_pid *find_pid(struct unwinder *u, pid_t pid)
{
	for (uint32_t i = 0; i < u->npids; i++)
		if (u->pids[i].pid == pid)
			return &u->pids[i];
	return NULL;
}

static int on_stale(void *ctx, void *data, size_t len)
{
	struct unwinder *u = ctx;
	struct unwind_pid *p;
	uint32_t pid;

	if (len < sizeof(pid))
		return 0;
	memcpy(&pid, data, sizeof(pid));
	if (u->test_no_notes)
		return 0;
	p = find_pid(u, (pid_t)pid);
	if (p) {
		/* a new note (a note is sent once per load, or per program): looked at now */
		p->stale = true;
		p->slow = false;
		return 0;
	}
	/* a process without an entry: loaded in turn, now (unwinder__poll) or at a tick */
	for (uint32_t i = 0; i < u->nasked; i++)
		if (u->asked[i].pid == (pid_t)pid)
			return 0;
	if (u->nasked >= queue_limit) {
		u->asks_skipped++;
	} else {
		u->asked[u->nasked++].pid = (pid_t)pid;
	}
	return 0;
}

void unwind__hold_at_loader(struct bpf_object *obj, enum unwind_how how)
{
	struct bpf_program *hook = bpf_object__find_program_by_name(obj, "unwind_dl_hook");

	if (hook)
		bpf_program__set_autoload(hook, how != UNWIND_FP);
}

struct unwinder *unwinder__new(const struct log_ctx *lc, int procs_fd, int rows_fd, int stats_fd,
			       uint32_t max_rows)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	const char *t;

	if (!u)
		return NULL;
	u->lc = lc;
	u->procs_fd = procs_fd;
	u->rows_fd = rows_fd;
	u->stats_fd = stats_fd;
	u->max_rows = max_rows;
	u->files_fd = -1;
	u->epoch_fd = -1;
	u->hook_prog_fd = -1;
	u->holds_fd = -1;
	t = getenv("EBPROF_TEST_UNWIND_RELOAD_MS");
	u->test_reload_ms = t ? atof(t) : 0;
	t = getenv("EBPROF_TEST_UNWIND_NO_NOTES");
	u->test_no_notes = t && !strcmp(t, "1");
	return u;
}

/* After each change of procs_fd (abi/unwind.h: the stack cache's epoch) */
static void procs_changed(struct unwinder *u)
{
	uint32_t key = 0;

	u->epoch++;
	if (u->epoch_fd >= 0)
		bpf_map_update_elem(u->epoch_fd, &key, &u->epoch, BPF_ANY);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (uint32_t i = 0; i < u->nobjs; i++) {
		free(u->objs[i]->path);
		free(u->objs[i]);
	}
	unwinder__unhook(u);
	for (uint32_t i = 0; i < u->npids; i++)
		free(u->pids[i].objs);
	free(u->objs);
	free(u->free.r);
	free(u->pids);
	ring_buffer__free(u->stale_rb);
	free(u);
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* [start, start + n) into s, kept sorted with neighbours coalesced: 0 (*merged, may be NULL:
 * the length of the range it is part of now), -ENOMEM */
static int row_set__add(struct row_set *s, uint32_t start, uint32_t n, uint32_t *merged)
{
	uint32_t i = 0;
	bool prev, next;

	while (i < s->n && s->r[i].start < start)
		i++;
	prev = i > 0 && s->r[i - 1].start + s->r[i - 1].n == start;
	next = i < s->n && start + n == s->r[i].start;
	if (prev && next) {
		s->r[i - 1].n += n + s->r[i].n;
		memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1) * sizeof(*s->r));
		s->n--;
		i--;
	} else if (prev) {
		s->r[--i].n += n;
	} else if (next) {
		s->r[i].start = start;
		s->r[i].n += n;
	} else {
		if (s->n == s->cap) {
			uint32_t cap = s->cap ? s->cap * 2 : 16;
			struct row_range *r = realloc(s->r, cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			s->r = r;
			s->cap = cap;
		}
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
		s->r[i].start = start;
		s->r[i].n = n;
		s->n++;
	}
	if (merged)
		*merged = s->r[i].n;
	return 0;
}

/* n rows from the first free range that holds them, else from the untouched tail: the first in
 * *at; -ENOSPC */
static int take_rows(struct unwinder *u, uint32_t n, uint32_t *at)
{
	struct row_set *s = &u->free;

	for (uint32_t i = 0; i < s->n; i++) {
		if (s->r[i].n < n)
			continue;
		*at = s->r[i].start;
		s->r[i].start += n;
		s->r[i].n -= n;
		if (!s->r[i].n) {
			memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1) * sizeof(*s->r));
			s->n--;
		}
		return 0;
	}
	if (n > u->max_rows - u->next_row)
		return -ENOSPC;
	*at = u->next_row;
	u->next_row += n;
	return 0;
}

/* Rows nothing can read any more back among the free ones (a range that ends the used part
 * gives the tail back) */
static void give_rows(struct unwinder *u, uint32_t at, uint32_t n)
{
	struct row_set *s = &u->free;

	if (!n || row_set__add(s, at, n, NULL))
		return;		/* (out of memory: those rows are lost to the run) */
	if (s->r[s->n - 1].start + s->r[s->n - 1].n == u->next_row)
		u->next_row = s->r[--s->n].start;
}

/* o met by the load going on: the most recently used, not evicted during it, and one of the
 * process's objects when it has rows (its entry maps them, or the process needs them) */
static void touch(struct unwinder *u, struct unwind_obj *o)
{
	struct obj_list *l = u->met;
	uint32_t i = 0;

	o->used_tick = u->ticks;
	o->used_seq = ++u->use_seq;
	o->load_seq = u->load_seq;
	if (!l || o->fp)
		return;
	while (i < l->n && l->o[i] != o)
		i++;
	if (i < l->n)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 32;
		struct unwind_obj **p = realloc(l->o, cap * sizeof(*p));

		if (!p) {
			/* an object its entry maps, not counted, could be evicted under it: the
			 * load fails (unwinder__load) */
			l->oom = true;
			return;
		}
		l->o = p;
		l->cap = cap;
	}
	l->o[l->n++] = o;
}

/* The objects whose rows pid's entry stopped mapping (its entry deleted or replaced): an
 * object left without users is as recently used as now */
static void release_objs(struct unwinder *u, struct unwind_pid *rec)
{
	for (uint32_t i = 0; i < rec->nobjs; i++) {
		struct unwind_obj *o = rec->objs[i];

		if (o->users && --o->users == 0) {
			o->used_tick = u->ticks;
			o->used_seq = ++u->use_seq;
		}
	}
	free(rec->objs);
	rec->objs = NULL;
	rec->nobjs = 0;
}

/* Whose rows may be taken for another's: no process's entry maps them, and the load going on
 * did not meet it (it is about to map it, or needed it before its mapping) */
static bool evictable(const struct unwinder *u, const struct unwind_obj *o)
{
	return !o->fp && o->nrows && !o->users && o->load_seq != u->load_seq;
}

static int by_use(const void *a, const void *b)
{
	const struct unwind_obj *x = *(struct unwind_obj *const *)a;
	const struct unwind_obj *y = *(struct unwind_obj *const *)b;

	if (x->used_tick != y->used_tick)
		return x->used_tick < y->used_tick ? -1 : 1;
	return x->used_seq < y->used_seq ? -1 : x->used_seq > y->used_seq;
}

/* The objects to evict for n rows in a row: those no process maps, the least recently used
 * first, until their rows, the free ones and the tail hold n together; of those, the ones in
 * the n rows that will be taken (the first range that holds them, as take_rows takes). 0 with
 * them in *out (k of them; out NULL: only whether room can be made), -ENOSPC when even all of
 * them would not make room (fragments between objects in use), -ENOMEM. */
static int plan_eviction(struct unwinder *u, uint32_t n, struct unwind_obj ***out, uint32_t *k)
{
	struct row_set s = { 0 };
	struct unwind_obj **c;
	uint32_t nc = 0, best = 0, i, j, m, at = 0;
	int err = 0;

	c = malloc((u->nobjs ? u->nobjs : 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < u->nobjs; i++)
		if (evictable(u, u->objs[i]))
			c[nc++] = u->objs[i];
	qsort(c, nc, sizeof(*c), by_use);
	for (i = 0; !err && i < u->free.n; i++)
		err = row_set__add(&s, u->free.r[i].start, u->free.r[i].n, &m);
	if (!err && u->next_row < u->max_rows)
		err = row_set__add(&s, u->next_row, u->max_rows - u->next_row, NULL);
	for (i = 0; i < s.n; i++)
		best = s.r[i].n > best ? s.r[i].n : best;
	for (i = 0; !err && best < n && i < nc; i++) {
		err = row_set__add(&s, c[i]->rows, c[i]->nrows, &m);
		best = m > best ? m : best;
	}
	for (j = 0; j < s.n; j++) {
		if (s.r[j].n >= n) {
			at = s.r[j].start;
			break;
		}
	}
	free(s.r);
	if (!err && best < n)
		err = -ENOSPC;
	if (err || !out) {
		free(c);
		return err;
	}
	/* the others chosen are left alone: their rows would not be taken */
	nc = i;
	for (i = j = 0; i < nc; i++)
		if (c[i]->rows < at + n && c[i]->rows + c[i]->nrows > at)
			c[j++] = c[i];
	*out = c;
	*k = j;
	return 0;
}

/* n rows could be had: free, or by evicting */
static bool room_for(struct unwinder *u, uint32_t n)
{
	return plan_eviction(u, n, NULL, NULL) == 0;
}

/* Wait until no BPF program that could have found rows just made unreachable is still running.
 * Every walk runs in a program that cannot sleep: under rcu_read_lock() (uprobes) or with
 * preemption off (perf events, tracepoints), so that an RCU grace period is enough
 * (util_rcu_grace; UNWIND_QUARANTINE_MS where it cannot be waited for). */
static void grace(void)
{
	util_rcu_grace(UNWIND_QUARANTINE_MS);
}

static void drop_obj(struct unwinder *u, struct unwind_obj *o)
{
	for (uint32_t i = 0; i < u->nobjs; i++) {
		if (u->objs[i] != o)
			continue;
		u->objs[i] = u->objs[--u->nobjs];
		break;
	}
	free(o->path);
	free(o);
}

/* Room for n rows (for name's table), made from the objects no process maps, the least
 * recently used first: 0, or -ENOSPC when even all of them would not make it (none evicted).
 * Nothing may read an evicted object's rows as its own when they are taken: no process's
 * entry maps them (users 0; a process gone is forgotten first), its unwind_files entry is
 * deleted, then a grace period lets a walk that found either before end. The BPF side's caches
 * cannot give them back either: the row cache's entries hold a process entry's gen, the stack
 * cache's its gen or unwind_epoch's count, and an entry deleted or replaced takes both away for
 * good (gens are never used twice; the deletion bumped the epoch). */
static int evict_for(struct unwinder *u, uint32_t n, const char *name)
{
	struct unwind_obj **ev;
	double t0 = mono_ms();
	uint32_t k;

	if (plan_eviction(u, n, &ev, &k))
		return -ENOSPC;
	for (uint32_t i = 0; i < k && u->files_fd >= 0; i++) {
		struct unwind_file_key key = { .dev = ev[i]->dev, .ino = ev[i]->ino };

		if (key.dev || key.ino)
			bpf_map_delete_elem(u->files_fd, &key);
	}
	grace();
	for (uint32_t i = 0; i < k; i++) {
		struct unwind_obj *o = ev[i];

		pr_info(u->lc, "unwind: %s: evicted (no process maps it, last met %u ticks ago): its "
			"%u rows for %s's table", o->path, u->ticks - o->used_tick, o->nrows, name);
		give_rows(u, o->rows, o->nrows);
		u->evicted++;
		u->evicted_rows += o->nrows;
		drop_obj(u, o);
	}
	free(ev);
	u->evict_ms += mono_ms() - t0;
	return 0;
}

static uint32_t forget_gone(struct unwinder *u);

/* Room for n rows (name's table): their first row in *at; -ENOSPC */
static int alloc_rows(struct unwinder *u, uint32_t n, const char *name, uint32_t *at)
{
	if (!take_rows(u, n, at))
		return 0;
	/* the processes gone since the last look let go of their objects */
	forget_gone(u);
	if (evict_for(u, n, name))
		return -ENOSPC;
	return take_rows(u, n, at);
}

/* t's rows into the rows map from row at: 0, or a negative errno when storing them failed */
static int upload_rows(struct unwinder *u, const struct unwind_table *t, uint32_t at)
{
	enum { CHUNK = 4096 };
	uint32_t keys[CHUNK];
	size_t first, off, len;
	void *mem;

	/* the map is mmapable: an array's values are in its mapping, each in 8-byte-aligned
	 * room; the part they go in is mapped (mapping all 16 MiB costs ~1.5 ms) and they are
	 * stored, not sent by bpf_map_update_batch (libc's 28,000 rows: ~4 ms). The process's
	 * entry, which points the BPF side at them, is written after. */
	first = (size_t)at * ROW_ROOM;
	off = first & ~(size_t)4095;
	len = first + (size_t)t->nrows * ROW_ROOM - off;
	mem = t->nrows ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, u->rows_fd,
			      (off_t)off) : MAP_FAILED;
	if (mem != MAP_FAILED) {
		for (uint32_t k = 0; k < t->nrows; k++)
			memcpy((char *)mem + (first - off) + (size_t)k * ROW_ROOM, &t->rows[k],
			       sizeof(*t->rows));
		munmap(mem, len);
		return 0;
	}
	for (uint32_t done = 0; done < t->nrows;) {
		uint32_t n = t->nrows - done < CHUNK ? t->nrows - done : CHUNK, count = n;

		for (uint32_t k = 0; k < n; k++)
			keys[k] = at + done + k;
		if (bpf_map_update_batch(u->rows_fd, keys, t->rows + done, &count, NULL))
			return errno == ENOSPC ? -EIO : -errno;
		if (count != n)
			return -EIO;
		done += n;
	}
	return 0;
}

static uint64_t kdev(uint32_t major, uint32_t minor)
{
	return (uint64_t)major << 20 | minor;
}

static struct unwind_obj *find_obj(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < u->nobjs; i++)
		if (u->objs[i]->dev == dev && u->objs[i]->ino == ino)
			return u->objs[i];
	return NULL;
}

/* The object of file (dev, ino) when it needs no load (met now): known, and not left to
 * frame pointers for want of room that could now be made (evicting what no process maps) */
static struct unwind_obj *ready_obj(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	struct unwind_obj *o = find_obj(u, dev, ino);

	if (!o || (o->noroom && room_for(u, o->want)))
		return NULL;
	touch(u, o);
	return o;
}

/* o into unwind_files, for the BPF side's mappings its process's entry lacks */
static void publish(struct unwinder *u, const struct unwind_obj *o)
{
	struct unwind_file_key k = { .dev = o->dev, .ino = o->ino };
	struct unwind_file f = { .rows = o->fp ? UNWIND_MAP_FP : o->rows, .nrows = o->nrows };

	if (u->files_fd < 0 || (!o->dev && !o->ino))
		return;
	for (uint32_t i = 0; !o->fp && i < o->segs.nsegs && i < UNWIND_FILE_SEGS; i++) {
		f.segs[i].offset = o->segs.segs[i].offset;
		f.segs[i].vaddr = o->segs.segs[i].vaddr;
		f.segs[i].filesz = o->segs.segs[i].filesz;
		f.nsegs = i + 1;
	}
	if (bpf_map_update_elem(u->files_fd, &k, &f, BPF_ANY))
		u->files_full++;
}

/* The object of file (dev, ino), its table built from the file open at fd. Only what the file
 * holds decides that it has no table (frame pointers, for the rest of the run): a file that
 * cannot be opened (unmapped, deleted) makes no object, and its caller tries again later. A
 * table that does not fit leaves it to frame pointers until room can be made (ready_obj). */
static struct unwind_obj *object_at(struct unwinder *u, uint64_t dev, uint64_t ino,
				    const char *name, int fd)
{
	struct unwind_table t;
	struct unwind_obj *o = ready_obj(u, dev, ino);
	const char *why = NULL;
	uint32_t at = 0;
	bool again;
	double t0, ev0, ms;
	int err;

	if (o)
		return o;
	o = find_obj(u, dev, ino);
	again = o != NULL;	/* one that did not fit, tried again */
	if (!o) {
		if (u->nobjs == u->capobjs) {
			uint32_t cap = u->capobjs ? u->capobjs * 2 : 32;
			struct unwind_obj **p = realloc(u->objs, cap * sizeof(*p));

			if (!p)
				return NULL;
			u->objs = p;
			u->capobjs = cap;
		}
		o = calloc(1, sizeof(*o));
		if (!o || !(o->path = strdup(name))) {
			free(o);
			return NULL;
		}
		o->dev = dev;
		o->ino = ino;
		o->fp = true;	/* until its rows are in */
		u->objs[u->nobjs++] = o;
	}
	touch(u, o);

	t0 = mono_ms();
	ev0 = u->evict_ms;
	if (unwind_table__build_fd(fd, NULL, sym_cache_dir(), &t, &why) != 0) {
		o->fp = true;
		o->noroom = false;
	} else if ((err = alloc_rows(u, t.nrows, o->path, &at)) ||
		   (err = upload_rows(u, &t, at))) {
		if (err == -ENOSPC) {
			why = "the unwind rows map is full";
			if (!o->noroom) {
				u->rows_full++;
				u->rows_missing += t.nrows;
			}
			o->noroom = true;
			o->want = t.nrows;
		} else {
			/* not a matter of room: --unwind-rows would not help */
			give_rows(u, at, t.nrows);	/* nothing points at them */
			why = "its rows could not be stored in the unwind rows map";
			u->rows_failed++;
			u->rows_err = -err;
			o->noroom = false;
		}
		o->fp = true;
		unwind_table__free(&t);
	} else {
		o->fp = false;
		o->noroom = false;
		o->rows = at;
		o->nrows = t.nrows;
		free(t.rows);
		t.rows = NULL;
		o->segs = t;
		touch(u, o);	/* the process's now */
	}
	ms = mono_ms() - t0 - (u->evict_ms - ev0);	/* the evictions are said apart */
	u->build_ms += ms;
	if (o->fp && again)
		pr_debug(u->lc, "unwind: %s: frame pointers still (%s)", o->path, why);
	else if (o->fp)
		pr_info(u->lc, "unwind: %s: frame pointers (%s)", o->path, why ? why : "no table");
	else
		pr_info(u->lc, "unwind: %s: %u rows from its %s (%s, %.1f ms)", o->path, o->nrows,
			o->segs.source, o->segs.cached ? "cached" : "built", ms);
	publish(u, o);
	return o;
}

/* The tables of the libraries the file at path (real: its path as mapped) needs, and theirs,
 * built before they are mapped: a launched program maps its libraries right after the exec
 * it was loaded at, before the collector could look again (unwind_rule_by_file finds them). */
static void preload_needed(struct unwinder *u, const char *path, const char *real, int depth);

/* The table of the library at path, not mapped yet, and those of the libraries it needs */
static void preload_lib(struct unwinder *u, const char *path, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint64_t dev;

	if (fd < 0)
		return;
	dev = fstat(fd, &st) == 0 ? kdev(major(st.st_dev), minor(st.st_dev)) : 0;
	if (dev && !ready_obj(u, dev, st.st_ino) && object_at(u, dev, st.st_ino, path, fd)) {
		u->preloaded++;
		preload_needed(u, path, NULL, depth + 1);
	}
	close(fd);
}

static void preload_needed(struct unwinder *u, const char *path, const char *real, int depth)
{
	char **libs;
	size_t n;

	if (depth > 8 || unwind_needed(path, real, &libs, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		preload_lib(u, libs[i], depth);
		free(libs[i]);
	}
	free(libs);
}

/* The tables of the libraries ld.so preloads into pid (LD_PRELOAD in its environment,
 * /etc/ld.so.preload) and of those they need: not in the program's DT_NEEDED, they are mapped
 * after the exec the process is loaded at, and may be on its first stacks (a constructor). */
static void preload_preloads(struct unwinder *u, pid_t pid)
{
	char path[64], cwd[64], *env, *file, **libs = NULL;
	size_t len = 0, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", pid);
	env = util_read_file(path, &len);
	file = util_read_file("/etc/ld.so.preload", NULL);
	if ((env && len) || file)
		unwind_preloads(env, env ? len : 0, file, cwd, &libs, &n);
	for (size_t i = 0; i < n; i++) {
		preload_lib(u, libs[i], 0);
		free(libs[i]);
	}
	free(libs);
	free(env);
	free(file);
}

static struct unwind_obj *object(struct unwinder *u, pid_t pid, const struct sym_map *m)
{
	bool vdso = m->kind == SYM_MAP_SPECIAL;
	uint64_t dev = vdso ? 0 : kdev(m->dev_major, m->dev_minor);
	uint64_t ino = vdso ? 0 : m->inode;
	struct unwind_obj *o = ready_obj(u, dev, ino);
	char path[96];
	int fd;

	if (o)
		return o;
	if (vdso) {
		/* not read (the process is gone, -a): not known as "no table" for good either */
		fd = sym_vdso__memfd(pid, m->start, m->end);
	} else {
		/* the mapped file itself, whatever mount namespace it is in, opened once and
		 * read through that descriptor (a check of the path, then an open: unmapped
		 * between the two, the file was taken for one without a table for the rest of
		 * the run). Unmapped since the maps were read (the process exec'd, dlclose: a
		 * library opened and closed in a loop is, at any moment, one or the other): not
		 * known as "no table" for good; its mapping is left out (the BPF side ends
		 * stacks there in [truncated]) until a later load. */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid,
			 (unsigned long)m->start, (unsigned long)m->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	o = object_at(u, dev, ino, vdso ? "[vdso]" : m->path, fd);
	if (o && !vdso && !u->running) {
		/* the libraries it needs, read from the same file (o, met by this load, is not
		 * evicted for them) */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		preload_needed(u, path, m->path, 0);
	}
	close(fd);
	return o;
}

/* Processes gone out of unwind_procs (-a: forgotten on exit); how many */
static uint32_t forget_gone(struct unwinder *u)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < u->npids;) {
		if (kill(u->pids[i].pid, 0) && errno == ESRCH) {
			unwinder__forget(u, u->pids[i].pid);	/* moves the last one to i */
			n++;
		} else {
			i++;
		}
	}
	return n;
}

/* pid's tracer (TracerPid in /proc/PID/status), 0: none, -1: unknown */
static pid_t tracer_of(pid_t pid)
{
	char path[64], *text, *at;
	pid_t tracer = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = util_read_file(path, NULL);
	at = text ? strstr(text, "\nTracerPid:") : NULL;
	if (at)
		tracer = (pid_t)strtol(at + 11, NULL, 10);
	free(text);
	return tracer;
}

/* The loader's hook of a process this collector traces (abi/unwind.h), once per process: a
 * uprobe_multi link for it alone on its loader's _dl_debug_state, in a mode that asked for it
 * (unwind__hold_at_loader, unwinder__use_closer). A process another tracer holds, or none (-p
 * without ptrace, -a), or without a loader (static), is not hooked: the code it maps waits
 * for the BPF side's ask or a tick. The link follows the pid across an exec (the filter is
 * its task's memory): the new program's loader has the hook too when it is the same file. */
static void hook(struct unwinder *u, struct unwind_pid *rec)
{
	char path[4096 + 64];
	struct ldso_hook h;
	unsigned long off;
	struct stat st;
	uint64_t base;
	double t0;
	int fd;

	rec->hooked = true;
	if (u->hook_prog_fd < 0 || !u->closer || tracer_of(rec->pid) != getpid() ||
	    ldso__of(rec->pid, &base, path, sizeof(path)) || ldso__hook_of(path, &h) || !h.brk_off)
		return;
	if (stat(path, &st))
		return;
	off = h.brk_off;
	t0 = mono_ms();
	fd = probes__link_uprobe_multi(u->hook_prog_fd, path, &off, NULL, 1, rec->pid, false);
	u->hook_ms += mono_ms() - t0;
	if (fd < 0) {
		pr_debug(u->lc, "unwind: process %d: no hold at its loader's hook (%s): code it "
			 "maps is walked by file until the BPF side's ask loads it", rec->pid,
			 strerror(-fd));
		return;
	}
	rec->hook_fd = fd;
	rec->hook_dev = st.st_dev;
	rec->hook_ino = st.st_ino;
	u->hooks++;
}

void unwinder__hook(struct unwinder *u, pid_t pid)
{
	struct unwind_pid *rec = u ? find_pid(u, pid) : NULL;

	if (rec && !rec->hooked)
		hook(u, rec);
}

void unwinder__use_closer(struct unwinder *u, struct fd_closer *cl)
{
	if (u)
		u->closer = cl;
}

void unwinder__unhook(struct unwinder *u)
{
	if (!u)
		return;
	for (uint32_t i = 0; i < u->npids; i++) {
		fd_closer__close(u->closer, u->pids[i].hook_fd);
		u->pids[i].hook_fd = -1;
	}
}

bool unwinder__hooked(struct unwinder *u, pid_t pid, const char *ldso)
{
	struct unwind_pid *p = u ? find_pid(u, pid) : NULL;
	struct stat st;

	return p && p->hook_fd >= 0 && stat(ldso, &st) == 0 && st.st_dev == p->hook_dev &&
	       st.st_ino == p->hook_ino;
}

bool unwinder__take_hold(struct unwinder *u, pid_t tid)
{
	uint32_t key = (uint32_t)tid;

	if (!u || u->holds_fd < 0 || bpf_map_delete_elem(u->holds_fd, &key))
		return false;
	u->holds++;
	return true;
}

bool unwinder__held(struct unwinder *u, pid_t pid, pid_t tid)
{
	double t0;

	if (!unwinder__take_hold(u, tid))
		return false;
	t0 = mono_ms();
	unwinder__load(u, pid, NULL);	/* nothing when its code mappings are the same */
	u->hold_ms += mono_ms() - t0;
	return true;
}

/* The pages of code m counts in its address space's mm->exec_vm: executable and not
 * writable; not [vsyscall] (no mapping of the process's own) nor [uprobes] (not copied at a
 * fork: a child forked since counts it no more, and its parent's entry still serves it) */
static uint32_t exec_pages(const struct sym_map *m)
{
	if (m->perms[1] == 'w' || (m->kind == SYM_MAP_SPECIAL && m->path &&
				   (strcmp(m->path, "[vsyscall]") == 0 ||
				    strcmp(m->path, "[uprobes]") == 0)))
		return 0;
	return (uint32_t)((m->end - m->start) >> 12);
}

int unwinder__load(struct unwinder *u, pid_t pid, const char *maps_text)
{
	struct unwind_proc *p;
	struct unwind_pid *rec;
	struct obj_list met = { 0 };	/* its objects (touch) */
	struct unwind_ident id, id2;
	struct sym_map *maps = NULL;
	size_t nmaps = 0, skipped = 0, gone = 0;
	char *own = NULL, path[64];
	uint32_t key = (uint32_t)pid;
	uint64_t h;
	int err;

	if (!u)
		return 0;
	if (unwind_ident__read(pid, &id))
		return -ESRCH;
	rec = find_pid(u, pid);
	/* the same program with the same executable mappings as last time: nothing to load */
	if (rec && maps_text && unwind_ident__same(&rec->ident, &id) &&
	    rec->hash == (proc_maps__exec_hash(maps_text) | 1)) {
		rec->slow = rec->stale;
		return 0;
	}
	/* the maps read between two reads of the identity that agree are that program's (the
	 * caller's text may be older than the first: read again) */
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	own = util_read_file(path, NULL);
	if (!own || !*own) {
		free(own);
		return -ESRCH;
	}
	if (unwind_ident__read(pid, &id2) || !unwind_ident__same(&id, &id2)) {
		/* it exec'd meanwhile: its new program is asked for by the BPF side */
		free(own);
		return -EAGAIN;
	}
	h = proc_maps__exec_hash(own) | 1;
	if (rec && unwind_ident__same(&rec->ident, &id) && rec->hash == h) {
		free(own);
		rec->slow = rec->stale;
		return 0;
	}
	/* every read goes to the caller's snapshots: new code (dlopen), and with -a a process's
	 * first load or its load after an exec, whose libraries the caller's snapshot, taken at
	 * its first event or its exec, may not have (python's frames in libpython were bare).
	 * An earlier program's frames resolve in the snapshots of before, unless the new one
	 * maps code at their addresses (programs built without PIE: one a shell's child runs
	 * between its fork and its exec) */
	if (u->on_maps)
		u->on_maps(u->on_maps_ctx, pid, own);
	if (rec && u->test_reload_ms > 0 && unwind_ident__same(&rec->ident, &id) &&
	    mono_ms() < rec->loaded_ms + u->test_reload_ms) {
		free(own);
		return -EAGAIN;	/* still stale: tried again at each tick */
	}
	p = calloc(1, sizeof(*p));
	err = p ? sym_maps__parse(own, &maps, &nmaps) : -ENOMEM;
	free(own);
	if (err) {
		free(p);
		return err;
	}
	u->met = &met;
	/* the objects it maps are met first, all of them: a table that needs room now (one
	 * that did not fit before, a library it needs) is not given a mapped one's rows (libc,
	 * which an entry of its loaded before the mapping does not name yet) */
	u->load_seq++;
	for (size_t i = 0; i < nmaps; i++) {
		const struct sym_map *m = &maps[i];
		struct unwind_obj *o = NULL;

		if (m->perms[2] == 'x' && m->kind == SYM_MAP_FILE)
			o = find_obj(u, kdev(m->dev_major, m->dev_minor), m->inode);
		if (o)
			touch(u, o);
	}
	if (!u->running)	/* loaded on an ask: its preloads are mapped already */
		preload_preloads(u, pid);
	for (size_t i = 0; i < nmaps; i++) {
		const struct sym_map *m = &maps[i];
		struct unwind_map *e;
		struct unwind_obj *o = NULL;
		uint64_t bias;

		if (m->perms[2] != 'x')
			continue;
		p->exec_pages += exec_pages(m);
		if (p->nmaps == UNWIND_MAX_MAPS) {
			skipped++;
			continue;
		}
		e = &p->maps[p->nmaps];
		e->start = m->start;
		e->end = m->end;
		e->rows = UNWIND_MAP_FP;
		if (m->kind == SYM_MAP_FILE ||
		    (m->kind == SYM_MAP_SPECIAL && m->path && strcmp(m->path, "[vdso]") == 0))
			o = object(u, pid, m);
		if (!o && m->kind == SYM_MAP_FILE) {
			gone++;
			continue;
		}
		if (o && !o->fp && unwind_table__bias(&o->segs, m->start, m->offset, &bias)) {
			e->bias = bias;
			e->rows = o->rows;
			e->nrows = o->nrows;
		}
		p->nmaps++;
	}
	sym_maps__free(maps, nmaps);
	u->met = NULL;
	if (met.oom) {
		free(met.o);
		free(p);
		return -ENOMEM;
	}
	if (skipped)
		pr_info(u->lc, "unwind: process %d: %zu executable mappings past the first %d "
			"have no table", pid, skipped, UNWIND_MAX_MAPS);
	p->gen = ++u->gen;
	p->ident = id;
	err = bpf_map_update_elem(u->procs_fd, &key, p, BPF_ANY) ? -errno : 0;
	/* full: the processes gone since make room (-a) */
	if ((err == -E2BIG || err == -ENOMEM) && forget_gone(u))
		err = bpf_map_update_elem(u->procs_fd, &key, p, BPF_ANY) ? -errno : 0;
	procs_changed(u);
	free(p);
	if (err == -E2BIG || err == -ENOMEM) {
		u->procs_full++;
		pr_info(u->lc, "unwind: process %d: walked by file alone (the unwind process map "
			"is full)", pid);
	}
	if (err) {
		free(met.o);	/* its entry, if any, is the one before */
		return err;
	}
	/* found again: forgetting the processes gone (for room) moves records */
	rec = find_pid(u, pid);
	if (!rec && u->npids == u->cappids) {
		uint32_t cap = u->cappids ? u->cappids * 2 : 16;
		struct unwind_pid *np = realloc(u->pids, cap * sizeof(*np));

		if (!np) {
			bpf_map_delete_elem(u->procs_fd, &key);
			procs_changed(u);
			free(met.o);
			return -ENOMEM;
		}
		u->pids = np;
		u->cappids = cap;
	}
	if (!rec) {
		rec = &u->pids[u->npids++];
		rec->hooked = false;
		rec->hook_fd = -1;
		rec->objs = NULL;
		rec->nobjs = 0;
	}
	/* the new entry's objects, then the old one's let go */
	for (uint32_t i = 0; i < met.n; i++)
		met.o[i]->users++;
	release_objs(u, rec);
	rec->objs = met.o;
	rec->nobjs = met.n;
	rec->pid = pid;
	rec->ident = id;
	/* a mapping left out (its file could not be read): loaded again when its code is met */
	rec->hash = gone ? 0 : h;
	rec->stale = rec->slow = false;
	rec->loaded_ms = mono_ms();
	return 0;
}

/* The processes asked for without an entry, in turn, for at most UNWIND_LOAD_BUDGET_MS a tick
 * (-a on a machine with many short processes: the rest wait; a gone one costs a failed open) */
static void load_asked(struct unwinder *u)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < u->nasked; i++) {
		pid_t pid = u->asked[i].pid;
		double t0;
		int err;

		if (u->tick_ms >= UNWIND_LOAD_BUDGET_MS) {
			u->asked[n++] = u->asked[i];	/* later */
			continue;
		}
		if (find_pid(u, pid))
			continue;	/* loaded since (attached: its snapshot) */
		t0 = mono_ms();
		u->running = true;
		err = unwinder__load(u, pid, NULL);
		u->running = false;
		u->tick_ms += mono_ms() - t0;
		if (!err)
			u->asks_loaded++;
		else if (err == -EAGAIN)	/* it exec'd while read: at the next look */
			u->asked[n++] = u->asked[i];
	}
	u->nasked = n;
}

static void reload_stale(struct unwinder *u, bool slow_too)
{
	if (u->stale_rb)
		ring_buffer__consume(u->stale_rb);
	for (uint32_t i = 0; i < u->npids; i++) {
		struct unwind_pid *p = &u->pids[i];

		/* a process whose mappings read the same as loaded stays stale in the kernel (no
		 * more notes): looked at again once a second */
		if (!p->stale || (p->slow && !slow_too))
			continue;
		unwinder__load(u, p->pid, NULL);
	}
	load_asked(u);
}

void unwinder__on_maps(struct unwinder *u, void (*fn)(void *ctx, pid_t pid, const char *maps),
		       void *ctx)
{
	if (!u)
		return;
	u->on_maps = fn;
	u->on_maps_ctx = ctx;
}

void unwinder__tick(struct unwinder *u)
{
	if (!u)
		return;
	u->ticks++;
	u->tick_ms = 0;
	reload_stale(u, u->ticks % 10 == 0);
	/* once a second, the processes gone since out of unwind_procs (their PIDs may come back
	 * as other programs: the BPF side would not use their entries, but they take room) */
	if (u->ticks % 10 == 0)
		forget_gone(u);
}

int unwinder__fd(struct unwinder *u)
{
	return u && u->stale_rb ? ring_buffer__epoll_fd(u->stale_rb) : -1;
}

void unwinder__poll(struct unwinder *u)
{
	if (u)
		reload_stale(u, false);
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	struct unwind_pid *p;

	if (!u)
		return;
	bpf_map_delete_elem(u->procs_fd, &key);
	procs_changed(u);
	p = find_pid(u, pid);
	if (!p)
		return;
	if (p->hook_fd >= 0)
		fd_closer__close(u->closer, p->hook_fd);
	release_objs(u, p);
	*p = u->pids[--u->npids];
}

/* The loader's hook on, when obj has it (abi/unwind.h): the BPF side holds only threads
 * this process traces */
static void hold_setup(struct unwinder *u, struct bpf_object *obj)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "unwind_dl_hook");
	struct bpf_map *holds = bpf_object__find_map_by_name(obj, "unwind_holds");
	struct bpf_map *tracer = bpf_object__find_map_by_name(obj, "unwind_tracer");
	uint32_t key = 0, me = (uint32_t)getpid();

	if (!prog || !holds || !tracer || bpf_program__fd(prog) < 0 ||
	    bpf_map_update_elem(bpf_map__fd(tracer), &key, &me, BPF_ANY))
		return;
	u->hook_prog_fd = bpf_program__fd(prog);
	u->holds_fd = bpf_map__fd(holds);
}

struct unwinder *unwinder__open(const struct log_ctx *lc, enum unwind_how how,
				struct bpf_object *obj)
{
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "unwind_procs");
	struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");
	struct bpf_map *stats = bpf_object__find_map_by_name(obj, "unwind_stats");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "unwind_files");
	struct bpf_map *epoch = bpf_object__find_map_by_name(obj, "unwind_epoch");

	if (how == UNWIND_FP) {
		pr_info(lc, "unwind: frame pointers only (--unwind fp)");
		return NULL;
	}
	struct bpf_map *stale = bpf_object__find_map_by_name(obj, "unwind_stale");
	struct unwinder *u;

	if (!procs || !rows || !stats || !stale)
		return NULL;
	u = unwinder__new(lc, bpf_map__fd(procs), bpf_map__fd(rows), bpf_map__fd(stats),
			  bpf_map__max_entries(rows));
	if (u) {
		u->stale_rb = ring_buffer__new(bpf_map__fd(stale), on_stale, u, NULL);
		u->files_fd = files ? bpf_map__fd(files) : -1;
		u->epoch_fd = epoch ? bpf_map__fd(epoch) : -1;
		hold_setup(u, obj);
	}
	return u;
}

/* "1 stack ends", "2 stacks end": the notes' numbers agree with their words */
#define ENDS(n) ((n) == 1 ? " ends" : "s end")
#define ITS(n) ((n) == 1 ? "its" : "their")

void unwinder__add_drops(struct unwinder *u, struct profile *prof)
{
	struct unwind_counts c;

	int64_t outside, broken, nomaps, ambiguous;

	/* the symbolizer's (stacks__user_locs), listed at 0 with frame pointers too, and said
	 * once (cpu --offcpu has two unwinders) */
	profile__add_drop(prof, STACKS_DROP_OUTSIDE, 0);
	profile__add_drop(prof, STACKS_DROP_FP_BROKEN, 0);
	profile__add_drop(prof, STACKS_DROP_NO_MAPPINGS, 0);
	profile__add_drop(prof, STACKS_DROP_AMBIGUOUS, 0);
	ambiguous = profile__drop(prof, STACKS_DROP_AMBIGUOUS);
	outside = profile__drop(prof, STACKS_DROP_OUTSIDE);
	broken = profile__drop(prof, STACKS_DROP_FP_BROKEN);
	nomaps = profile__drop(prof, STACKS_DROP_NO_MAPPINGS);
	if (outside > 0)
		profile__add_note_once(prof, "%lld stack%s in [truncated] at a return address in "
				       "code no look at the process's mappings saw as code (a library "
				       "mapped and unmapped between two looks): %s events count, "
				       "under the frames found (" STACKS_DROP_OUTSIDE ")",
				       (long long)outside, ENDS(outside), ITS(outside));
	if (broken > 0)
		profile__add_note_once(prof, "%lld stack%s in [truncated] where a walk by frame "
				       "pointers met code that keeps none (a saved frame pointer "
				       "that is no frame, a return address no call precedes): %s "
				       "events count, under the frames found (" STACKS_DROP_FP_BROKEN
				       ")", (long long)broken, ENDS(broken), ITS(broken));
	if (nomaps > 0)
		profile__add_note_once(prof, "%lld %s never read (gone before ebprof looked: "
				       "with -a, a process that lived a few milliseconds): %s user "
				       "frames are bare addresses (" STACKS_DROP_NO_MAPPINGS ")",
				       (long long)nomaps, nomaps == 1 ?
				       "stack is of a process whose mappings were" :
				       "stacks are of processes whose mappings were", ITS(nomaps));
	if (ambiguous > 0)
		profile__add_note_once(prof, "%lld stack%s a frame at an address where two "
				       "files had code during the run (a library closed, replaced "
				       "and opened again at the same place): the kernel counts "
				       "addresses without time, so which one ran is not known, and "
				       "the frame is named from neither, [ambiguous: A or B] ("
				       STACKS_DROP_AMBIGUOUS ")", (long long)ambiguous,
				       ambiguous == 1 ? " has" : "s have");
	if (!u)
		return;
	unwinder__counts(u, &c);
	profile__add_drop(prof, "unwind_truncated", c.truncated);
	profile__add_drop(prof, "unwind_unmapped", c.unmapped);
	profile__add_drop(prof, "unwind_files_full", c.files_full);
	profile__add_drop(prof, "unwind_too_deep", c.depth);
	profile__add_drop(prof, "unwind_procs_full", c.procs_full);
	profile__add_drop(prof, "unwind_rows_full", c.rows_full);
	profile__add_drop(prof, "unwind_loads_skipped", c.asks_skipped);
	/* the drops line sends the reader to the notes: each says what it left out */
	if (c.truncated)
		profile__add_note(prof, "%llu stack%s in [truncated] at a frame the unwinder could "
				  "not go past (code walked by frame pointers that keeps none, or "
				  "whose leaf's caller it cannot tell, a rule "
				  "it does not follow, a thread sampled as it exits, its memory let go "
				  "already; with -a, a second file in a stack of a process met before "
				  "its tables were loaded): %s events count, under the "
				  "frames found (unwind_truncated)",
				  (unsigned long long)c.truncated, ENDS(c.truncated),
				  ITS(c.truncated));
	if (c.unmapped)
		profile__add_note(prof, "%llu stack%s in [truncated] at code whose unwind table "
				  "was not loaded yet (a library just mapped; with -a a process met "
				  "before its tables were, at its first stacks): %s events count, "
				  "under the frames found "
				  "(unwind_unmapped)", (unsigned long long)c.unmapped,
				  ENDS(c.unmapped), ITS(c.unmapped));
	if (c.depth)
		profile__add_note(prof, "%llu stack%s deeper than %d frames: %s outermost "
				  "frames are left out, [truncated] (unwind_too_deep)",
				  (unsigned long long)c.depth, c.depth == 1 ? " was" : "s were",
				  STACK_MAX_DEPTH, ITS(c.depth));
	if (c.procs_full || c.files_full || c.asks_skipped)
		profile__add_note(prof, "stacks walked by file or frame pointers instead of a "
				  "process's tables: %llu for want of room for its process "
				  "(unwind_procs_full: raise --unwind-procs), %llu of objects not "
				  "found by file (unwind_files_full), %llu of processes whose load "
				  "was skipped (unwind_loads_skipped: raise --unwind-queue)",
				  (unsigned long long)c.procs_full, (unsigned long long)c.files_full,
				  (unsigned long long)c.asks_skipped);
	if (u->rows_full)
		profile__add_note(prof, "%llu object%s walked by frame pointers: %s unwind "
				  "table%s did not fit the rows map (%u rows); raise --unwind-rows "
				  "to %llu or more", (unsigned long long)u->rows_full,
				  u->rows_full == 1 ? " was" : "s were",
				  u->rows_full == 1 ? "its" : "their", u->rows_full == 1 ? "" : "s",
				  u->max_rows, (unsigned long long)u->max_rows + u->rows_missing);
	if (u->rows_failed)
		profile__add_note(prof, "%llu object%s walked by frame pointers: %s unwind "
				  "table%s could not be stored in the rows map (%s)",
				  (unsigned long long)u->rows_failed,
				  u->rows_failed == 1 ? " was" : "s were",
				  u->rows_failed == 1 ? "its" : "their", u->rows_failed == 1 ? "" : "s",
				  strerror(u->rows_err));
	pr_info(u->lc, "unwind: %llu stacks complete, %llu truncated, %llu at the depth limit, "
		"%llu truncated at code mapped since the process's load without a table yet; "
		"%llu frames by frame pointers, %llu by the table of a file mapped since the load "
		"(%llu mappings found kept from an earlier stack, %llu kept not used: the address "
		"space changed since); "
		"%u tables (%u of them for a library needed (DT_NEEDED, LD_PRELOAD) before its "
		"mapping was seen; %llu rows, %.1f ms to build), %u objects by frame pointers; "
		"%llu complete stacks from the stack cache; %llu truncated at a frame above the "
		"first whose CFA is in rbx, rdi or rdx; %llu stacks of a process without its "
		"tables (%llu of them with another program's: an exec or a reused PID since; "
		"%llu a child's forked without exec, walked with its parent's), "
		"%llu processes loaded when their stacks were met, %llu not (the queue was full)",
		(unsigned long long)c.complete, (unsigned long long)c.truncated,
		(unsigned long long)c.depth, (unsigned long long)c.unmapped,
		(unsigned long long)c.fp_frames, (unsigned long long)c.by_file,
		(unsigned long long)c.vma_cached, (unsigned long long)c.vma_stale, c.objects,
		c.preloaded, (unsigned long long)c.rows, c.build_ms, c.objects_fp,
		(unsigned long long)c.cached, (unsigned long long)c.reg_cfa,
		(unsigned long long)c.no_proc, (unsigned long long)c.other_prog,
		(unsigned long long)c.parent, (unsigned long long)c.asks_loaded, (unsigned long long)c.asks_skipped);
	if (u->evicted)
		pr_info(u->lc, "unwind: %llu tables evicted (objects no process mapped) to make room "
			"for others: %llu rows, %.1f ms with the grace periods; %llu rows of %u in use",
			(unsigned long long)c.evicted, (unsigned long long)c.evicted_rows, u->evict_ms,
			(unsigned long long)c.rows, u->max_rows);
	if (u->hook_prog_fd >= 0)
		pr_info(u->lc, "unwind: %llu processes hooked at their loader (%.1f ms); %llu "
			"threads held there (%llu stops taken) while their new code was loaded "
			"(%.1f ms)", (unsigned long long)u->hooks, u->hook_ms,
			(unsigned long long)c.held, (unsigned long long)u->holds, u->hold_ms);
}

void unwinder__counts(struct unwinder *u, struct unwind_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (!u)
		return;
	c->complete = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_COMPLETE);
	c->truncated = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_TRUNCATED);
	c->depth = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_DEPTH);
	c->fp_frames = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_FP_FRAMES);
	c->unmapped = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_UNMAPPED);
	c->by_file = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_BY_FILE);
	c->vma_cached = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_VMA_CACHED);
	c->vma_stale = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_VMA_STALE);
	c->no_proc = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_NO_PROC);
	c->other_prog = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_OTHER_PROG);
	c->parent = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_PARENT);
	c->asks_loaded = u->asks_loaded;
	c->asks_skipped = u->asks_skipped;
	c->cached = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_CACHED);
	c->reg_cfa = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_REG_CFA);
	c->held = bpfutil__percpu_sum(u->stats_fd, UNWIND_STAT_HELD);
	c->holds = u->holds;
	c->files_full = u->files_full;
	c->preloaded = u->preloaded;
	c->procs_full = u->procs_full;
	c->rows_full = u->rows_full;
	for (uint32_t i = 0; i < u->nobjs; i++) {
		if (u->objs[i]->fp) {
			c->objects_fp++;
		} else {
			c->objects++;
			c->rows += u->objs[i]->nrows;
		}
	}
	c->evicted = u->evicted;
	c->evicted_rows = u->evicted_rows;
	c->build_ms = u->build_ms;
}
