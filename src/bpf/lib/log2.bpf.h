/* SPDX-License-Identifier: GPL-2.0 */
/* log2 buckets for the programs' histograms, without a branch: a branchy floor(log2) (a test
 * per halving) gave the verifier a known constant on each of its 64 paths, and the histogram's
 * index made each one a state of its own until the index was used, so that the code between
 * was checked up to 64 times (kmem's allocation programs: ~38,000 of their ~73,000
 * instructions, docs/PERFORMANCE.md). Here each step adds a bit computed by arithmetic: the
 * verifier knows the result only as a number in [0, 63], one state.
 * Plain C on __u32/__u64 (vmlinux.h's, or <linux/types.h>): tests/unit/test_log2.c checks it. */
#ifndef EBPROF_BPF_LIB_LOG2_H
#define EBPROF_BPF_LIB_LOG2_H

/* (x != 0) << sh for x < 2^w: x + 2^w - 1 reaches 2^w exactly when x >= 1 */
#define LOG2_BIT_(x, w, sh)	((((x) + ((1ULL << (w)) - 1)) >> (w)) << (sh))

/* floor(log2(v)) for v > 0 (0 for v 0) */
static __always_inline __u32 ilog2(__u64 v)
{
	__u64 s, b;

	s = LOG2_BIT_(v >> 32, 32, 5);	/* v >> 32 < 2^32 */
	v >>= s;
	b = s;
	s = LOG2_BIT_(v >> 16, 16, 4);	/* v < 2^32 now */
	v >>= s;
	b += s;
	s = LOG2_BIT_(v >> 8, 8, 3);
	v >>= s;
	b += s;
	s = LOG2_BIT_(v >> 4, 4, 2);
	v >>= s;
	b += s;
	s = LOG2_BIT_(v >> 2, 2, 1);
	v >>= s;
	b += s;
	return (__u32)(b + (v >> 1));	/* v < 4 */
}

/* Bucket 0 holds 0, bucket b holds [2^(b-1), 2^b); the last of nbuckets is open-ended. */
static __always_inline __u32 log2_bucket_n(__u64 v, __u32 nbuckets)
{
	__u32 b;

	if (v == 0)
		return 0;
	b = ilog2(v) + 1;
	return b < nbuckets ? b : nbuckets - 1;
}

#endif
