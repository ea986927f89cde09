/* A cgroup's CPU quota throttling: core/cgthrottle.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/cgthrottle.h"

/* Does the comma-separated list have the word w? */
static bool has_word(const char *list, size_t len, const char *w)
{
	size_t wl = strlen(w);

	for (const char *p = list; p < list + len;) {
		const char *e = memchr(p, ',', (size_t)(list + len - p));
		size_t l = e ? (size_t)(e - p) : (size_t)(list + len - p);

		if (l == wl && !memcmp(p, w, wl))
			return true;
		p += l + 1;
	}
	return false;
}

int cg_throttle__read(struct cg_throttle *t)
{
	char path[sizeof(t->dir) + 16], key[64];
	unsigned long long v;
	bool n = false, ns = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", t->dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		if (!strcmp(key, "nr_throttled")) {
			t->n = v;
			n = true;
		} else if (!strcmp(key, "throttled_time")) {	/* v1: ns */
			t->ns = v;
			ns = true;
		} else if (!strcmp(key, "throttled_usec")) {	/* v2 */
			t->ns = v * 1000;
			ns = true;
		}
	}
	fclose(f);
	return n && ns ? 0 : -ENOENT;
}

/* The cgroup of a /proc/PID/cgroup line for v1's cpu controller (its list of controllers
 * names cpu) or v2 (hierarchy 0, no controllers named): the directory it is under root, if
 * its cpu.stat counts throttling. */
static int try_line(const char *root, const char *line, struct cg_throttle *t)
{
	const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	static const char *const v1_dirs[] = { "cpu", "cpu,cpuacct", "cpuacct,cpu" };
	size_t plen;
	const char *path;

	if (!c2)
		return -ENOENT;
	path = c2 + 1;
	plen = strcspn(path, "\n");
	if (plen >= sizeof(t->dir) / 2)
		return -ENAMETOOLONG;
	if (!strncmp(line, "0::", 3)) {
		/* v2 alone at root, or beside v1 (hybrid: its own mount, "unified") */
		snprintf(t->dir, sizeof(t->dir), "%s%.*s", root, (int)plen, path);
		if (!cg_throttle__read(t))
			return 0;
		snprintf(t->dir, sizeof(t->dir), "%s/unified%.*s", root, (int)plen, path);
		return cg_throttle__read(t);
	}
	if (!has_word(c1 + 1, (size_t)(c2 - c1 - 1), "cpu"))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(v1_dirs) / sizeof(v1_dirs[0]); i++) {
		snprintf(t->dir, sizeof(t->dir), "%s/%s%.*s", root, v1_dirs[i], (int)plen, path);
		if (!cg_throttle__read(t))
			return 0;
	}
	return -ENOENT;
}

int cg_throttle__read_pid(const char *root, pid_t pid, struct cg_throttle *t)
{
	char path[64], line[1024];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* v1's cpu controller first: where both exist, it is the one enforcing a quota */
	while (err && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3))
			err = try_line(root ? root : "/sys/fs/cgroup", line, t);
	rewind(f);
	while (err && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			err = try_line(root ? root : "/sys/fs/cgroup", line, t);
	fclose(f);
	return err;
}
