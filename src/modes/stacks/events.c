/* Events of `ebprof stacks -e`: parsing, resolution to a way of probing them, listing (-l).
 * See events.h. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <bpf/btf.h>
#include "core/bpfutil.h"
#include "modes/stacks/events.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"
#include "util/util.h"

#define TRACEFS_MAGIC_NR 0x74726163

/* x86_64 syscall numbers, generated at build time from asm/unistd_64.h (see the Makefile) */
static const struct syscall_nr {
	const char *name;
	int nr;
} syscalls[] = {
#include "syscall_table.h"
};

#define NSYSCALLS (sizeof(syscalls) / sizeof(syscalls[0]))

static int syscall_nr(const char *name)
{
	for (size_t i = 0; i < NSYSCALLS; i++)
		if (!strcmp(syscalls[i].name, name))
			return syscalls[i].nr;
	return -1;
}

int stacks_event__parse(struct stacks_event *ev, const char *spec, char *why, size_t len)
{
	const char *c;

	memset(ev, 0, sizeof(*ev));
	ev->nr = -1;
	ev->spec = strdup(spec);
	if (!ev->spec)
		return -ENOMEM;
	if (!strncmp(spec, "uprobe:", 7) || !strncmp(spec, "tracepoint:", 11) ||
	    !strncmp(spec, "t:", 2) || !strncmp(spec, "uretprobe:", 10) ||
	    !strncmp(spec, "kprobe:", 7)) {
		/* bpftrace's spellings: say what ebprof's are */
		snprintf(why, len, "'%s' is bpftrace's spelling: ebprof writes a tracepoint "
			 "CATEGORY:NAME (sched:sched_switch, no 'tracepoint:') and a function's entry "
			 "u:PATH:SYMBOL (u:libc:malloc)%s", spec, !strncmp(spec, "kprobe:", 7) ?
			 "; kprobes are not used (this kernel has none: raw tracepoints only)" :
			 !strncmp(spec, "uretprobe:", 10) ? "; returns are not probed" : "");
		goto inval;
	}
	if (!strncmp(spec, "u:", 2)) {
		const char *p = spec + 2;

		/* the last ':' that is not half of a C++ "::" (u:prog:ns::Acc<long>::run) */
		c = NULL;
		for (const char *q = p; *q; q++) {
			if (*q != ':')
				continue;
			if (q[1] == ':') {
				q++;
				continue;
			}
			c = q;
		}
		if (!c || c == p || !c[1]) {
			snprintf(why, len, "'%s' is not a uprobe event: write u:PATH:SYMBOL, e.g. "
				 "u:/usr/bin/bash:readline or u:libc:malloc", spec);
			goto inval;
		}
		ev->kind = STACKS_EV_UPROBE;
		ev->path = strndup(p, c - p);
		ev->sym = strdup(c + 1);
		return ev->path && ev->sym ? 0 : -ENOMEM;
	}
	ev->kind = STACKS_EV_RAW_TP;
	c = strchr(spec, ':');
	if (!c) {
		/* a bare name: a tracepoint known by its BTF name only (-l without tracefs) */
		if (!*spec)
			goto empty;
		ev->name = strdup(spec);
		return ev->name ? 0 : -ENOMEM;
	}
	if (c == spec || !c[1] || strchr(c + 1, ':') || strchr(spec, '/')) {
empty:
		snprintf(why, len, "'%s' is not an event: write CATEGORY:NAME (e.g. "
			 "sched:sched_switch) or u:PATH:SYMBOL; list them with 'ebprof stacks -l "
			 "PATTERN'", spec);
		goto inval;
	}
	ev->cat = strndup(spec, c - spec);
	ev->name = strdup(c + 1);
	return ev->cat && ev->name ? 0 : -ENOMEM;
inval:
	stacks_event__free(ev);
	return -EINVAL;
}

void stacks_event__free(struct stacks_event *ev)
{
	if (!ev)
		return;
	free(ev->spec);
	free(ev->cat);
	free(ev->name);
	free(ev->path);
	free(ev->sym);
	memset(ev, 0, sizeof(*ev));
}

/* ---- tracefs ------------------------------------------------------------------------- */

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && st.f_type == TRACEFS_MAGIC_NR;
}

const char *stacks_tracefs(const struct log_ctx *lc, bool quiet)
{
	static const char *dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (is_tracefs(dirs[i]))
			return dirs[i];
	/* classic tracepoints are attached through tracefs's event ids (libbpf reads them
	 * there), and a fresh machine has it unmounted */
	if (mount("nodev", dirs[0], "tracefs", 0, NULL)) {
		if (!quiet)
			pr_err(lc, "cannot mount tracefs at %s (%s): classic tracepoints need it; "
			       "mount it yourself (mount -t tracefs nodev %s) or use an event with a "
			       "raw tracepoint (ebprof stacks -l lists them)", dirs[0],
			       strerror(errno), dirs[0]);
		return NULL;
	}
	pr_info(lc, "mounted tracefs at %s (classic tracepoints need it); it stays mounted",
		dirs[0]);
	return dirs[0];
}

/* ---- BTF ----------------------------------------------------------------------------- */

static struct btf *vmlinux_btf(void)
{
	return bpfutil__vmlinux_btf();
}

static bool btf_has_tp(const char *name)
{
	return bpfutil__has_tracepoint(name);
}

/* ---- candidate names, for -l and for close matches ---------------------------------- */

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *ns, const char *s, size_t len)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 1024;
		char **v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n] = strndup(s, len);
	return ns->v[ns->n] ? (ns->n++, 0) : -ENOMEM;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every usable event: tracefs's available_events when tracefs is there (mounting it if
 * `mount` allows), else the BTF tracepoint names and the syscalls from our table. *from
 * says which. */
static int collect_names(struct names *ns, bool mount, const struct log_ctx *lc,
			 const char **from)
{
	const char *dir = NULL;
	char path[PATH_MAX];
	char *text, *p;

	if (mount) {
		dir = stacks_tracefs(lc, true);
	} else if (is_tracefs("/sys/kernel/tracing")) {
		dir = "/sys/kernel/tracing";
	}
	if (dir) {
		snprintf(path, sizeof(path), "%s/available_events", dir);
		text = util_read_file(path, NULL);
		if (text) {
			for (p = text; *p;) {
				char *e = strchrnul(p, '\n');

				if (e > p && names_add(ns, p, e - p)) {
					free(text);
					return -ENOMEM;
				}
				p = *e ? e + 1 : e;
			}
			free(text);
			*from = "tracefs";
			goto sort;
		}
	}
	{
		struct btf *btf = vmlinux_btf();
		char buf[128];

		if (!btf) {
			pr_err(lc, "cannot list events: tracefs is not mounted and the kernel's BTF "
			       "(/sys/kernel/btf/vmlinux) cannot be read");
			return -ENOENT;
		}
		for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
			const struct btf_type *t = btf__type_by_id(btf, id);
			const char *n;

			if (!btf_is_typedef(t))
				continue;
			n = btf__name_by_offset(btf, t->name_off);
			if (n && !strncmp(n, "btf_trace_", 10) &&
			    names_add(ns, n + 10, strlen(n + 10)))
				return -ENOMEM;
		}
		for (size_t i = 0; i < NSYSCALLS; i++) {
			int l = snprintf(buf, sizeof(buf), "syscalls:sys_enter_%s", syscalls[i].name);

			if (names_add(ns, buf, l))
				return -ENOMEM;
			l = snprintf(buf, sizeof(buf), "syscalls:sys_exit_%s", syscalls[i].name);
			if (names_add(ns, buf, l))
				return -ENOMEM;
		}
		*from = "btf";
	}
sort:
	qsort(ns->v, ns->n, sizeof(*ns->v), cmp_str);
	return 0;
}

static bool matches(const char *pattern, const char *s)
{
	if (!pattern || !*pattern)
		return true;
	if (strpbrk(pattern, "*?["))
		return fnmatch(pattern, s, 0) == 0;
	return strstr(s, pattern) != NULL;
}

int stacks_events__list(const char *pattern, FILE *f, const struct log_ctx *lc)
{
	struct names ns = {};
	const char *from = NULL;
	size_t shown = 0;
	int err;

	err = collect_names(&ns, true, lc, &from);
	if (err) {
		names_free(&ns);
		return 1;
	}
	if (!strcmp(from, "btf"))
		fprintf(stderr, "%s: tracefs is unavailable: listing the tracepoints with a BTF type "
			"(use them by bare name, e.g. -e sched_switch) and the syscalls\n", lc->prog);
	for (size_t i = 0; i < ns.n; i++) {
		if (!matches(pattern, ns.v[i]))
			continue;
		fprintf(f, "%s\n", ns.v[i]);
		shown++;
	}
	if (!pattern || !*pattern || matches(pattern, "u:PATH:SYMBOL")) {
		fprintf(f, "u:PATH:SYMBOL\n");	/* any user function */
		shown++;
	}
	if (!shown)
		fprintf(stderr, "%s: no tracepoint matches '%s'\n", lc->prog, pattern);
	names_free(&ns);
	return 0;
}

/* ", perhaps you meant X or Y" when some names are close, else "" */
static void close_matches(const char *spec, const struct log_ctx *lc, char *out, size_t len)
{
	struct names ns = {};
	const char *from, *best[3] = {}, *name = strrchr(spec, ':');
	size_t bestd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, lim = strlen(spec) / 5;
	size_t o = 0;

	out[0] = '\0';
	if (lim < 2)
		lim = 2;
	name = name ? name + 1 : spec;
	if (collect_names(&ns, false, lc, &from)) {
		names_free(&ns);
		return;
	}
	for (size_t i = 0; i < ns.n; i++) {
		const char *cn = strrchr(ns.v[i], ':');
		/* a bare name (a BTF tracepoint's) against the names without their category:
		 * "sched_swtich" was as far from "sched:sched_switch" as any */
		size_t d = util_edit_distance(name == spec && cn ? name : spec,
					      name == spec && cn ? cn + 1 : ns.v[i]);

		/* the right name under another category is as close as it gets */
		if (!strcmp(cn ? cn + 1 : ns.v[i], name))
			d = 0;
		if (d > lim)
			continue;
		for (int k = 0; k < 3; k++) {
			if (d < bestd[k]) {
				for (int m = 2; m > k; m--) {
					best[m] = best[m - 1];
					bestd[m] = bestd[m - 1];
				}
				best[k] = ns.v[i];
				bestd[k] = d;
				break;
			}
		}
	}
	for (int k = 0; k < 3 && best[k] && o < len; k++)
		o += snprintf(out + o, len - o, "%s%s", k ? (k == 2 || !best[k + 1] ? " or " : ", ")
						      : " (did you mean ", best[k]);
	if (best[0] && o < len)
		snprintf(out + o, len - o, "?)");
	names_free(&ns);
}

static int unknown(const struct stacks_event *ev, const struct log_ctx *lc, const char *what)
{
	char near[512];

	close_matches(ev->spec, lc, near, sizeof(near));
	pr_err(lc, "unknown event '%s': %s%s; list the events with 'ebprof stacks -l PATTERN'",
	       ev->spec, what, near);
	return -ENOENT;
}

int stacks_event__resolve(struct stacks_event *ev, const struct log_ctx *lc)
{
	char path[PATH_MAX];
	const char *dir;

	if (ev->kind == STACKS_EV_UPROBE)
		return 0;
	if (ev->cat && !strcmp(ev->cat, "syscalls")) {
		bool enter = !strncmp(ev->name, "sys_enter_", 10);

		if (enter || !strncmp(ev->name, "sys_exit_", 9)) {
			ev->nr = syscall_nr(ev->name + (enter ? 10 : 9));
			if (ev->nr >= 0) {
				ev->kind = enter ? STACKS_EV_SYS_ENTER : STACKS_EV_SYS_EXIT;
				return 0;
			}
			/* not in the table built from this build's headers: a system call newer
			 * than them (mseal, listmount...) or the kernel's own name of one
			 * (newstat, sendfile64): its tracefs event, as `-l` lists it */
			dir = stacks_tracefs(lc, true);
			snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", dir ? dir : "",
				 ev->name);
			if (!dir || access(path, R_OK))
				return unknown(ev, lc, "no x86_64 syscall has that name");
			ev->kind = STACKS_EV_TRACEFS;
			return 0;
		}
	}
	if (btf_has_tp(ev->name)) {
		/* the category is checked when tracefs can tell (some raw tracepoints have no
		 * tracefs event at all: those pass) */
		if (ev->cat && is_tracefs("/sys/kernel/tracing")) {
			struct stat st;

			snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s", ev->cat,
				 ev->name);
			if (stat(path, &st)) {
				snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", ev->cat);
				if (stat(path, &st) == 0)
					return unknown(ev, lc, "no such tracepoint in that category");
			}
		}
		ev->kind = STACKS_EV_RAW_TP;
		return 0;
	}
	if (!ev->cat)
		return unknown(ev, lc, "the kernel's BTF has no tracepoint of that name");
	dir = stacks_tracefs(lc, false);
	if (!dir)
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, ev->cat, ev->name);
	if (access(path, R_OK))
		return unknown(ev, lc, "no such tracepoint in this kernel");
	ev->kind = STACKS_EV_TRACEFS;
	return 0;
}

/* ---- uprobe paths ------------------------------------------------------------------- */

static bool name_matches(const char *base, const char *want)
{
	size_t l = strlen(want);

	return !strncmp(base, want, l) && (!base[l] || base[l] == '.' || base[l] == '-');
}

static int from_maps(pid_t pid, const char *want, char *out, size_t len)
{
	char path[64], *text, *line;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = util_read_file(path, NULL);
	if (!text)
		return -ENOENT;
	for (line = text; *line && err; ) {
		char *e = strchrnul(line, '\n'), *file, *base;
		char save = *e;

		*e = '\0';
		file = strchr(line, '/');
		if (file && strstr(line, " r-xp ")) {
			size_t fl = strlen(file), dl = strlen(" (deleted)");
			bool deleted = fl > dl && !strcmp(file + fl - dl, " (deleted)");

			if (deleted)
				file[fl - dl] = '\0';
			base = strrchr(file, '/') + 1;
			if (name_matches(base, want) && deleted) {
				/* deleted or replaced since it was mapped (a library upgraded
				 * under a running process): the path names another file or
				 * none; the mapping's map_files link names the inode it maps,
				 * which a uprobe attaches to */
				snprintf(out, len, "/proc/%d/map_files/%.*s", pid,
					 (int)strcspn(line, " "), line);
				err = 0;
			} else if (name_matches(base, want)) {
				snprintf(out, len, "/proc/%d/root%s", pid, file);
				err = 0;
			}
		}
		*e = save;
		line = *e ? e + 1 : e;
	}
	free(text);
	return err;
}

static bool is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);
	close(fd);
	return ok;
}

static int from_dirs(const char *want, char *out, size_t len)
{
	static const char *dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
				      "/lib64", "/usr/lib", "/usr/local/lib" };
	/* the runtime library before the development link (libc.so is a linker script) */
	static const char *forms[] = { "%s/%s", "%s/%s.so.*", "%s/%s.so", "%s/%s-*.so" };
	char pat[PATH_MAX];

	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
			glob_t g;
			int found = 0;

			snprintf(pat, sizeof(pat), forms[f], dirs[d], want);
			if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc && !found; i++) {
					struct stat st;

					if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode) &&
					    is_elf(g.gl_pathv[i])) {
						snprintf(out, len, "%s", g.gl_pathv[i]);
						found = 1;
					}
				}
				globfree(&g);
			}
			if (found)
				return 0;
		}
	}
	return -ENOENT;
}

/* want among the libraries process pid needs (its program's DT_NEEDED and theirs, a few levels
 * deep, as ld.so finds them: DT_RPATH, DT_RUNPATH with $ORIGIN, Debian's directories) and in
 * the directories of its LD_LIBRARY_PATH: a launched command at its exec has mapped only its
 * program and the loader, and a library found only through RUNPATH or LD_LIBRARY_PATH was
 * not probed (0 hits, exit 0). */
static int from_needed(pid_t pid, const char *want, char *out, size_t len)
{
	char exe[64], real[PATH_MAX], path[PATH_MAX + 64], **todo = NULL, *env;
	size_t ntodo = 0, envlen = 0;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = util_read_file(path, &envlen);
	for (size_t i = 0; env && i < envlen && err;) {
		const char *e = env + i;
		size_t el = strnlen(e, envlen - i);

		if (!strncmp(e, "LD_LIBRARY_PATH=", 16) && i + el < envlen) {
			char *dirs = strdup(e + 16), *save, *d;

			for (d = dirs ? strtok_r(dirs, ":;", &save) : NULL; d && err;
			     d = strtok_r(NULL, ":;", &save)) {
				glob_t g;

				snprintf(path, sizeof(path), "/proc/%d/root%s/%s.so*", pid, d, want);
				if (d[0] == '/' && glob(path, 0, NULL, &g) == 0) {
					for (size_t k = 0; k < g.gl_pathc && err; k++)
						if (is_elf(g.gl_pathv[k]) &&
						    name_matches(strrchr(g.gl_pathv[k], '/') + 1,
								 want)) {
							snprintf(out, len, "%s", g.gl_pathv[k]);
							err = 0;
						}
					globfree(&g);
				}
			}
			free(dirs);
		}
		i += el + 1;
	}
	free(env);
	if (!err)
		return 0;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (!realpath(exe, real))
		return -ENOENT;
	/* breadth first over the needed libraries, each file once (at most 64) */
	todo = malloc(sizeof(*todo));
	if (!todo || !(todo[0] = strdup(real))) {
		free(todo);
		return -ENOMEM;
	}
	ntodo = 1;
	for (size_t i = 0; i < ntodo && i < 64 && err; i++) {
		char **needed = NULL;
		size_t nneeded = 0;

		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, todo[i]);
		if (unwind_needed(path, todo[i], &needed, &nneeded))
			continue;
		for (size_t k = 0; k < nneeded; k++) {
			const char *base = strrchr(needed[k], '/');
			bool seen = false;
			char **n;

			base = base ? base + 1 : needed[k];
			if (err && name_matches(base, want)) {
				snprintf(out, len, "/proc/%d/root%s", pid, needed[k]);
				err = 0;
			}
			for (size_t j = 0; j < ntodo && !seen; j++)
				seen = !strcmp(todo[j], needed[k]);
			if (!seen && ntodo < 64 && (n = realloc(todo, (ntodo + 1) * sizeof(*n)))) {
				todo = n;
				todo[ntodo++] = needed[k];
				needed[k] = NULL;
			}
			free(needed[k]);
		}
		free(needed);
	}
	for (size_t i = 0; i < ntodo; i++)
		free(todo[i]);
	free(todo);
	return err;
}

static int from_path_env(const char *want, char *out, size_t len)
{
	const char *env = getenv("PATH");
	char *dup, *tok, *save;
	int err = -ENOENT;

	if (!env)
		return -ENOENT;
	dup = strdup(env);
	for (tok = dup ? strtok_r(dup, ":", &save) : NULL; tok && err;
	     tok = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", tok, want);
		if (access(out, X_OK) == 0)
			err = 0;
	}
	free(dup);
	return err;
}

int stacks_event__uprobe_path(const struct stacks_event *ev, pid_t pid, char *out, size_t len)
{
	const char *p = ev->path;

	if (strchr(p, '/')) {
		char abs[PATH_MAX];

		if (p[0] != '/') {
			if (!realpath(p, abs))
				return -ENOENT;
			p = abs;
		}
		/* uprobes attach to an inode: a process in another mount namespace sees its own */
		if (pid > 0)
			snprintf(out, len, "/proc/%d/root%s", pid, p);
		else
			snprintf(out, len, "%s", p);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	if (pid > 0 && from_maps(pid, p, out, len) == 0)
		return 0;
	if (pid > 0 && from_needed(pid, p, out, len) == 0)
		return 0;
	/* a library not mapped yet (a launched command at its exec has only the program and
	 * the dynamic loader) */
	if (from_dirs(p, out, len) == 0)
		return 0;
	return from_path_env(p, out, len);
}

const char *stacks_event__symbol_error(const char *path, const char *sym, int err, char *buf,
				       size_t len)
{
	const char *shown = path;
	char near[256];

	if (!strncmp(path, "/proc/", 6)) {
		const char *r = strstr(path, "/root/");

		if (r)
			shown = r + 5;
	}
	if (err == -ENOENT && strchr(sym, '+'))
		snprintf(buf, len, "no function '%s' in %s: u:PATH:SYMBOL probes a function's "
			 "entry, not an offset in it", sym, shown);
	else if (err == -ENOENT && !sym_elf_close_function(path, sym, near, sizeof(near)))
		snprintf(buf, len, "no function '%s' in %s (did you mean %s?)", sym, shown, near);
	else if (err == -ENOENT)
		snprintf(buf, len, "no function '%s' in %s (nm or nm -D lists its symbols; the "
			 "object may be stripped)", sym, shown);
	else if (err == -EOPNOTSUPP)
		snprintf(buf, len, "'%s' in %s is an IFUNC: its address is the resolver, which runs "
			 "once when the object is loaded and picks one of its implementations for "
			 "this CPU; probed, it would count that, not the calls. Probe its "
			 "implementations by their names (the object's symbols, or its debug file's "
			 "by build-id under /usr/lib/debug: for glibc, libc6-dbg's, e.g. "
			 "__memmove_avx_unaligned_erms), or its callers", sym, shown);
	else
		snprintf(buf, len, "cannot read %s as an ELF file to find '%s': %s", shown, sym,
			 strerror(-err));
	return buf;
}
