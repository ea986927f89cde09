/* Per-site live bytes of one traced process over the run, one column per snapshot: what growth
 * trends are fitted to, and the sites held at the process's peak. No libbpf: sites are keyed by
 * two opaque numbers (the mem collector uses the allocator function and the stack hash). */
#ifndef EBPROF_SNAPSHOTS_H
#define EBPROF_SNAPSHOTS_H

#include <stdbool.h>
#include <stdint.h>

/* Points kept per process; when full, every other one is dropped and the caller should
 * snapshot half as often, so a run of any length keeps between half and all of them. */
#define SNAPSHOTS_MAX 64

struct snapshots;

/* t0_ns: when tracing began, where every site is at 0 bytes. NULL and errno on failure. */
struct snapshots *snapshots__new(int64_t t0_ns);
void snapshots__free(struct snapshots *s);

/* Begin a snapshot at t_ns (after the previous one): every site is at 0 until put. Returns 1
 * when the store was full and was thinned first, 0, or -ENOMEM. */
int snapshots__begin(struct snapshots *s, int64_t t_ns);
/* The site (k1, k2) holds `bytes` in the snapshot begun last. 0 or -ENOMEM. */
int snapshots__put(struct snapshots *s, uint64_t k1, uint64_t k2, int64_t bytes);
/* End the snapshot; the one with the highest total so far is kept as the peak snapshot. */
void snapshots__end(struct snapshots *s);

/* The run's start moved by_ns later (a launched command's release, core/session.c): every
 * time is that much earlier, none before the new start (the process was held until then). */
void snapshots__move_start(struct snapshots *s, int64_t by_ns);
int64_t snapshots__t0(const struct snapshots *s);
uint32_t snapshots__count(const struct snapshots *s);
const int64_t *snapshots__times(const struct snapshots *s);
/* The site's bytes at each of the snapshots__count() points, or NULL if it was never seen;
 * *peak (if not NULL) gets its bytes in the peak snapshot. */
const int64_t *snapshots__site(const struct snapshots *s, uint64_t k1, uint64_t k2,
			       int64_t *peak);
/* The peak snapshot's time and total; false if no snapshot was ended. */
bool snapshots__peak(const struct snapshots *s, int64_t *t_ns, int64_t *total);

#endif
