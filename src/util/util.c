/* Small helpers any module may use: whole-file reads, the monotonic clock, a pid index. */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/util.h"

uint64_t util_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

char *util_read_fd(int fd, size_t max, size_t *lenp)
{
	size_t len = 0, cap = 64 * 1024;
	char *buf = NULL, *nbuf;
	struct stat st;
	int err = EFBIG;

	/* a regular file's size says at once (a sparse one need not be read to be refused) */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		goto fail;
	for (;;) {
		ssize_t r;

		if (!buf || len == cap) {
			if (len > max) {
				err = EFBIG;
				goto fail;
			}
			/* max + 1 bytes at most: one more than max says there is more */
			if (buf)
				cap = cap > max / 2 ? max + 1 : cap * 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				err = ENOMEM;
				goto fail;
			}
			buf = nbuf;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto fail;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	if (len > max)
		goto fail;
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	free(buf);
	errno = err;
	return NULL;
}

char *util_read_file(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = util_read_fd(fd, SIZE_MAX / 2, lenp);
	saved = errno;
	close(fd);
	errno = saved;
	return buf;
}

size_t util_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[256], cur[256];

	if (la >= 255 || lb >= 255)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t d = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(*prev));
	}
	return prev[lb];
}

void util_rcu_grace(unsigned fallback_ms)
{
	struct timespec ts = { fallback_ms / 1000, (long)(fallback_ms % 1000) * 1000000L };

	if (sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static bool shell_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_@%+=:,./-", c);
}

/* one word into out (NULL: only its length), quoted as util_shell_join says */
static size_t shell_word(const char *w, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)w;
	bool plain = *p, ctl = false;
	size_t n = 0;

#define PUT(c) do { if (out) out[n] = (c); n++; } while (0)
	for (; *p; p++) {
		plain &= shell_safe(*p);
		ctl |= *p < 0x20 || *p == 0x7f;
	}
	p = (const unsigned char *)w;
	if (plain) {
		for (; *p; p++)
			PUT(*p);
	} else if (!ctl) {
		PUT('\'');
		for (; *p; p++) {
			if (*p == '\'') {
				PUT('\''); PUT('\\'); PUT('\''); PUT('\'');
			} else {
				PUT(*p);
			}
		}
		PUT('\'');
	} else {
		PUT('$');
		PUT('\'');
		for (; *p; p++) {
			if (*p == '\n' || *p == '\t' || *p == '\r') {
				PUT('\\');
				PUT(*p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
			} else if (*p < 0x20 || *p == 0x7f) {
				PUT('\\'); PUT('x'); PUT(hex[*p >> 4]); PUT(hex[*p & 15]);
			} else if (*p == '\'' || *p == '\\') {
				PUT('\\');
				PUT(*p);
			} else {
				PUT(*p);
			}
		}
		PUT('\'');
	}
#undef PUT
	return n;
}

char *util_shell_join(int argc, char *const *argv)
{
	size_t len = 1, n = 0;
	char *str;

	for (int i = 0; i < argc; i++)
		len += shell_word(argv[i], NULL) + 1;
	str = malloc(len);
	if (!str)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			str[n++] = ' ';
		n += shell_word(argv[i], str + n);
	}
	str[n] = '\0';
	return str;
}

bool util_rcu_barrier(void)
{
	int fd = open("/sys/module/rcutree/parameters/do_rcu_barrier", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	do
		n = write(fd, "1", 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 1;
}

static uint32_t pid_home(int32_t pid, uint32_t cap)
{
	return (uint32_t)util_hash_u64((uint32_t)pid) & (cap - 1);
}

static struct pid_slot *pid_find(const struct pid_index *x, int32_t pid)
{
	for (uint32_t i = pid_home(pid, x->cap);; i = (i + 1) & (x->cap - 1))
		if (!x->slot[i].used || x->slot[i].pid == pid)
			return &x->slot[i];
}

int pid_index__put(struct pid_index *x, int32_t pid, void *v)
{
	struct pid_slot *e;

	if ((x->n + 1) * 2 > x->cap) {
		uint32_t cap = x->cap ? x->cap * 2 : 64;
		struct pid_index bigger = { .cap = cap, .slot = calloc(cap, sizeof(*x->slot)) };

		if (!bigger.slot)
			return -ENOMEM;
		for (uint32_t i = 0; i < x->cap; i++)
			if (x->slot[i].used) {
				*pid_find(&bigger, x->slot[i].pid) = x->slot[i];
				bigger.n++;
			}
		free(x->slot);
		*x = bigger;
	}
	e = pid_find(x, pid);
	if (!e->used) {
		e->pid = pid;
		e->used = 1;
		x->n++;
	}
	e->v = v;
	return 0;
}

void *pid_index__get(const struct pid_index *x, int32_t pid)
{
	const struct pid_slot *e;

	if (!x->cap)
		return NULL;
	e = pid_find(x, pid);
	return e->used ? e->v : NULL;
}

void pid_index__clear(struct pid_index *x)
{
	if (x->cap)
		memset(x->slot, 0, x->cap * sizeof(*x->slot));
	x->n = 0;
}

void pid_index__free(struct pid_index *x)
{
	free(x->slot);
	*x = (struct pid_index){ 0 };
}

size_t util_upper_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (const char *)base + mid * size + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
