/* bpf/lib/log2.bpf.h: the programs' branch-free log2 and histogram buckets, against a plain
 * loop, at every power of two, on each side of it, and on pseudo-random values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <cmocka.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "bpf/lib/log2.bpf.h"

static __u32 ref_ilog2(__u64 v)
{
	__u32 b = 0;

	while (v >>= 1)
		b++;
	return b;
}

static __u32 ref_bucket(__u64 v, __u32 n)
{
	__u32 b = v ? ref_ilog2(v) + 1 : 0;

	return b < n ? b : n - 1;
}

static void check(__u64 v)
{
	if (v)
		assert_int_equal(ilog2(v), ref_ilog2(v));
	assert_int_equal(log2_bucket_n(v, 32), ref_bucket(v, 32));
	assert_int_equal(log2_bucket_n(v, 65), ref_bucket(v, 65));
}

static void test_powers_and_neighbours(void **state)
{
	(void)state;
	check(0);
	for (int i = 0; i < 64; i++) {
		__u64 p = 1ULL << i;

		check(p);
		check(p - 1);
		check(p + 1);
		check(p | (p >> 1));
		check(p | (p - 1));
	}
	check(~0ULL);
	assert_int_equal(ilog2(0), 0);
}

static void test_random(void **state)
{
	__u64 x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* every magnitude, not only the top bits' */
		check(x >> (i % 64));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_powers_and_neighbours),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
