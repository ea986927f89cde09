/* SPDX-License-Identifier: GPL-2.0 */
/* Count tables the collector takes out of the kernel as the run goes (a spill, a window), kept
 * twice: the programs count into generation `take_gen & 1`, a global the collector owns, and
 * the collector flips it, waits until no program can still be counting into the other
 * (core/collector.h: collector__flip: an update of `take_barrier`, which the kernel makes wait
 * for an RCU grace period) and then takes that one whole, no writer left. A take of the live
 * table lost every add a program made through a value pointer it had looked up just before the
 * kernel copied the row (tests/bpf/test_stacks_bpf.c: 30-112 of 200,000 system calls).
 * TAKE_TABLE(name, ...) makes the two tables, name_0 and name_1 (their fds and sizes are the
 * collector's: both sized alike); take_table(name, g) is the one of generation g
 * (take_gen_now(), read once per event). Include after vmlinux.h and libbpf's headers.
 *
 * Two plain tables picked by the generation, not an array of maps over them: libbpf fills
 * such an array at load with one update a slot, and each update waits for a grace period
 * (15-20 ms here: 4 to 6 of them made every mode's start 60-120 ms slower). */
#ifndef EBPROF_BPF_LIB_TAKE_H
#define EBPROF_BPF_LIB_TAKE_H

/* Its own section, so that the collector finds it in any mode's object (".data.take") and
 * writes it through the map's mapping. */
volatile __u32 take_gen SEC(".data.take");

/* The flip's wait: never read by a program; the collector puts a table in its slot at each
 * flip (any update of an array of maps waits for the programs running). */
struct take_barrier_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct take_barrier_inner);
} take_barrier SEC(".maps");

#define TAKE_TABLE(name, map_type, ktype, vtype, size)					\
	struct name##_table {								\
		__uint(type, map_type);							\
		__uint(max_entries, size);						\
		__type(key, ktype);							\
		__type(value, vtype);							\
	};										\
	struct name##_table name##_0 SEC(".maps"), name##_1 SEC(".maps")

/* The generation counted now: read once per event, and every table the event counts into
 * picked by that one value (take_table(name, g)): the verifier then follows two paths through
 * the event, not two per table (lock's three tables read apart were 2^3, its start 0.2 s
 * slower). */
static __always_inline __u32 take_gen_now(void)
{
	return take_gen & 1;
}

#define take_table(name, g) ((g) ? (void *)&name##_1 : (void *)&name##_0)

#endif
