/* Files ebprof keeps between runs (the core kernel's symbols, decompressed debug files): where
 * they live and how they are opened and written. A cache file is trusted only if it is a
 * regular file owned by this user that no one else can read or write, in directories no one
 * else can write into; it is written under a temporary name and renamed into place, so a
 * reader sees a whole file or none. Each kind checks its own content (key, size, checksum).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/sym_internal.h"

const char *sym_cache_dir(void)
{
	static char path[4096];
	static bool done;
	const char *dir = getenv("EBPROF_CACHE_DIR"), *base;
	int n = -1;

	if (done)
		return *path ? path : NULL;
	done = true;
	if (dir) {
		if (*dir == '/')
			n = snprintf(path, sizeof(path), "%s", dir);
	} else if (geteuid() == 0) {
		n = snprintf(path, sizeof(path), "/var/cache/ebprof");
	} else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/') {
		n = snprintf(path, sizeof(path), "%s/ebprof", base);
	} else if ((base = getenv("HOME")) && *base == '/') {
		n = snprintf(path, sizeof(path), "%s/.cache/ebprof", base);
	}
	if (n <= 0 || (size_t)n >= sizeof(path))
		*path = '\0';
	return *path ? path : NULL;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 29);
}

uint64_t sym_cache__hash(const void *p, size_t len)
{
	const unsigned char *c = p;
	/* four independent lanes: the multiplications overlap (~1 ms for 10 MB) */
	uint64_t h[4] = { 0x9e3779b97f4a7c15ULL, 0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL,
			  0x2545f4914f6cdd1dULL };
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		uint64_t w[4];

		memcpy(w, c + i, 32);
		h[0] = mix(h[0], w[0]);
		h[1] = mix(h[1], w[1]);
		h[2] = mix(h[2], w[2]);
		h[3] = mix(h[3], w[3]);
	}
	h[0] = mix(h[0], h[1]);
	h[0] = mix(h[0], h[2]);
	h[0] = mix(h[0], h[3]);
	for (; i < len; i++)
		h[0] = (h[0] ^ c[i]) * 0x100000001b3ULL;
	h[0] = mix(h[0], len);
	h[0] *= 0xc4ceb9fe1a85ec53ULL;
	return h[0] ^ (h[0] >> 33);
}

int sym_cache__open(const char *path, struct stat *st)
{
	struct stat tmp;
	int fd;

	if (!st)
		st = &tmp;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & 077)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

char *sym_cache__read(const char *path, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd = sym_cache__open(path, &st);

	if (fd < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* dir exists (made 0700 if it did not), is a directory of ours, and only we can write in it */
static int private_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* private_dir, making missing parents first (at most `up` levels) */
static int make_dir(char *dir, int up)
{
	char *slash;
	int rc;

	if (!private_dir(dir))
		return 0;
	if (errno != ENOENT || !up || !(slash = strrchr(dir, '/')) || slash == dir)
		return -1;
	*slash = '\0';
	rc = make_dir(dir, up - 1);
	*slash = '/';
	return rc ? rc : private_dir(dir);
}

int sym_cache__create(const char *path, char **tmp)
{
	char *dir = strdup(path), *slash;
	int fd = -1;

	*tmp = NULL;
	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		goto out;
	*slash = '\0';
	if (make_dir(dir, 2))
		goto out;
	if (asprintf(tmp, "%s.XXXXXX", path) < 0) {
		*tmp = NULL;
		goto out;
	}
	fd = mkstemp(*tmp);	/* O_EXCL, 0600 */
	if (fd < 0) {
		free(*tmp);
		*tmp = NULL;
	}
out:
	free(dir);
	return fd;
}

int sym_cache__commit(int fd, char *tmp, const char *path, bool ok)
{
	int rc = -1;

	if (close(fd))
		ok = false;
	if (ok && !rename(tmp, path))
		rc = 0;
	else
		unlink(tmp);
	free(tmp);
	return rc;
}

struct cached_file {
	char *name;
	uint64_t bytes;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

void sym_cache__make_room(const char *dir, const char *suffix, uint64_t need,
			  uint64_t max_total)
{
	struct cached_file *f = NULL;
	size_t n = 0, cap = 0, slen = strlen(suffix);
	uint64_t total = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.' || len <= slen || strcmp(e->d_name + len - slen, suffix) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		if (n == cap) {
			struct cached_file *g = realloc(f, (cap = cap ? 2 * cap : 64) * sizeof(*g));

			if (!g)
				break;
			f = g;
		}
		f[n].name = strdup(e->d_name);
		f[n].bytes = (uint64_t)st.st_size;
		f[n].mtime = st.st_mtim;
		if (f[n].name)
			n++;
	}
	if (total + need > max_total && n) {
		qsort(f, n, sizeof(*f), older_first);
		for (size_t i = 0; i < n && total + need > max_total; i++)
			if (!unlinkat(dirfd(d), f[i].name, 0))
				total -= f[i].bytes;
	}
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
	closedir(d);
}

void sym_cache__used(const char *path)
{
	/* the modification time: reads do not change it, and relatime leaves access times */
	utimensat(AT_FDCWD, path, NULL, 0);
}
