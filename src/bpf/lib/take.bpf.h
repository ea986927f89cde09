/* SPDX-License-Identifier: GPL-2.0 */
/* Count tables the collector takes out of the kernel as the run goes (a spill, a window), kept
 * twice: the programs count into generation `take_gen & 1`, a global the collector owns, and
 * the collector flips it, waits until no program can still be counting into the other
 * (core/collector.h: collector__flip, one RCU grace period) and then takes that one whole, no
 * writer left. A take of the live table lost every add a program made through a value pointer
 * it had looked up just before the kernel copied the row (tests/bpf/test_stacks_bpf.c: 30-62
 * of 200,000 system calls). TAKE_TABLE(name, ...) makes the two tables, name_0 and name_1
 * (their fds and sizes are the collector's: both sized alike), and the array of maps
 * name_gens the programs reach them through: take_table(&name_gens), NULL never in practice
 * (checked for the verifier). Include after vmlinux.h and libbpf's headers. */
#ifndef EBPROF_BPF_LIB_TAKE_H
#define EBPROF_BPF_LIB_TAKE_H

/* Its own section, so that the collector finds it in any mode's object (".data.take") and
 * writes it through the map's mapping. */
volatile __u32 take_gen SEC(".data.take");

#define TAKE_TABLE(name, map_type, ktype, vtype, size)					\
	struct name##_table {								\
		__uint(type, map_type);							\
		__uint(max_entries, size);						\
		__type(key, ktype);							\
		__type(value, vtype);							\
	};										\
	struct name##_table name##_0 SEC(".maps"), name##_1 SEC(".maps");		\
	struct {									\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);				\
		__uint(max_entries, 2);							\
		__type(key, __u32);							\
		__array(values, struct name##_table);					\
	} name##_gens SEC(".maps") = { .values = { &name##_0, &name##_1 } }

/* The table of the generation being counted now. */
static __always_inline void *take_table(void *outer)
{
	__u32 g = take_gen & 1;

	return bpf_map_lookup_elem(outer, &g);
}

#endif
