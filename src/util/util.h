/* Small helpers any module may use: whole-file reads, durations and hashing. Depends on nothing
 * else of ebprof, so profile/, symbolize/ and output/ stay independent of each other. */
#ifndef EBPROF_UTIL_H
#define EBPROF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole file, NUL-terminated, in a malloc'd buffer; *len (if not NULL) gets its length.
 * Reads until EOF, so /proc files (which report size 0) work. NULL and errno on failure. */
char *util_read_file(const char *path, size_t *len);

/* The same from an open fd (a pipe, standard input), to its end but not past max bytes: more is
 * NULL and errno EFBIG, found by fstat for a regular file, else once max + 1 bytes are read. */
char *util_read_fd(int fd, size_t max, size_t *len);

/* Levenshtein distance of two short strings (names: typo suggestions); SIZE_MAX when either is
 * 255 bytes or longer. */
size_t util_edit_distance(const char *a, const char *b);

/* A duration as users write it: a decimal number with an optional unit, ns, us, ms, s, m (or
 * min) or h; no unit means seconds ("30s", "500ms", "2m", "1.5"). Rounded to nanoseconds.
 * Returns 0, -EINVAL when s is not a duration ("nan", "inf", "1e-300": no exponents), -ERANGE
 * when it does not fit 64 bits or is not 0 but rounds to 0 ns ("0.1ns"). */
int util_parse_duration(const char *s, uint64_t *ns);

/* CLOCK_MONOTONIC in nanoseconds: the clock of a run's start, windows and stop. */
uint64_t util_mono_ns(void);
/* Wait for an RCU grace period: every BPF program (which cannot sleep) that was running has
 * ended, and what the kernel freed by call_rcu before may be freed now. membarrier's
 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu() (12-16 ms on this project's machine); with one
 * CPU online it returns at once, not waiting for a reader preempted there, and with nohz_full
 * it is refused: then a sleep of fallback_ms. */
void util_rcu_grace(unsigned fallback_ms);
/* argv joined into one line a POSIX shell reads back as the same words: a word of only
 * [A-Za-z0-9_@%+=:,./-] as it is, an empty one '', others in single quotes ('\'' for a quote),
 * and one with a control character (a newline in `python3 -c`'s program) in bash's $'...'
 * with its escapes (\n, \t, \xHH), so that the line is one line. malloc'd; NULL without
 * memory. */
char *util_shell_join(int argc, char *const *argv);
/* In an array of n elements of `size` bytes each, sorted by the uint64_t at offset `off` of
 * each, how many lead it with that value at most key: the index of the first above key. */
size_t util_upper_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key);
/* Wait until every callback the kernel queued by call_rcu() before this call has run (an
 * inode's free, an LSM blob's): rcu_barrier(), through the rcutree.do_rcu_barrier parameter
 * (made for this from userspace; the kernel runs one at most every 1/16 s, a call meanwhile
 * waiting for the next). False where it cannot be asked for (no such parameter: kernels
 * before 6.7, or not root): the caller then waits some other way. */
bool util_rcu_barrier(void);

/* pid -> pointer, for tables that keep every process of a run (a launched build makes tens of
 * thousands, and a scan of them per event made the session's work grow as their square): the
 * newest put of a pid wins (a recycled PID is its latest process). No removal: clear it and put
 * again what is kept. Zero-initialized is empty. */
struct pid_index {
	uint32_t n, cap;		/* entries, slots (a power of two, or 0) */
	struct pid_slot {
		int32_t pid;
		uint32_t used;
		void *v;
	} *slot;
};

/* 0, or -ENOMEM (the index is then unchanged). */
int pid_index__put(struct pid_index *x, int32_t pid, void *v);
void *pid_index__get(const struct pid_index *x, int32_t pid);
void pid_index__clear(struct pid_index *x);
void pid_index__free(struct pid_index *x);

/* FNV-1a over bytes: strings and short keys. */
static inline uint64_t util_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A full-avalanche 64-bit finaliser: keys that differ only in low bits (addresses, small
 * integers, FNV results) spread over all bits, so any slice of the result can index a table. */
static inline uint64_t util_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A string's hash, all bits mixed. */
static inline uint64_t util_hash_str(const char *s)
{
	const char *e = s;

	while (*e)
		e++;
	return util_hash_u64(util_hash_bytes(s, (size_t)(e - s)));
}

#endif
