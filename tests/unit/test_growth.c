/* Growth of sites over a run: the least-squares slope, the later half, the trend rule and its
 * edges (src/profile/growth.c); the store of snapshots (src/core/snapshots.c); and durations as
 * --min-age takes them (src/util/duration.c). Every expected value is worked out by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/snapshots.h"
#include "profile/profile.h"
#include "util/util.h"

#define S 1000000000LL	/* one second in ns */

/* ---- slope ------------------------------------------------------------------------------ */

static void test_slope_exact_line(void **state)
{
	/* 100 + 250 B/s, unevenly spaced: least squares gives the line's slope exactly */
	int64_t t[] = { 0, S / 2, 2 * S, 3 * S + S / 5 };
	int64_t v[] = { 100, 225, 600, 900 };

	assert_float_equal(prof_growth__slope(t, v, 4), 250.0, 1e-9);
	/* the same line far from 0 (CLOCK_MONOTONIC values): no precision lost */
	for (int i = 0; i < 4; i++)
		t[i] += 86400 * S;
	assert_float_equal(prof_growth__slope(t, v, 4), 250.0, 1e-6);
}

static void test_slope_least_squares(void **state)
{
	/* x = 0, 1, 2 s; y = 0, 10, 8: mean x 1, mean y 6; sxy = (-1)(-6) + 0 + (1)(2) = 8,
	 * sxx = 2: slope 4 */
	int64_t t[] = { 0, S, 2 * S };
	int64_t v[] = { 0, 10, 8 };

	assert_float_equal(prof_growth__slope(t, v, 3), 4.0, 1e-12);
}

static void test_slope_degenerate(void **state)
{
	int64_t t[] = { 5 * S, 5 * S };
	int64_t v[] = { 1, 1000 };

	assert_float_equal(prof_growth__slope(t, v, 0), 0.0, 0);
	assert_float_equal(prof_growth__slope(t, v, 1), 0.0, 0);
	/* two points at one time: no slope, not a division by zero */
	assert_float_equal(prof_growth__slope(t, v, 2), 0.0, 0);
}

static void test_later_half(void **state)
{
	int64_t t[] = { 1 * S, 2 * S, 3 * S, 4 * S, 4 * S + S / 10 };

	/* window [0, 4.1 s]: the later half starts at 2.05 s, the point at 3 s */
	assert_int_equal(prof_growth__later_half(t, 5, 0), 2);
	/* window [2 s, 4.1 s]: from 3.05 s, the point at 4 s */
	assert_int_equal(prof_growth__later_half(t, 5, 2 * S), 3);
	/* a point exactly at the middle belongs to the later half */
	assert_int_equal(prof_growth__later_half(t, 4, 0), 1);
	assert_int_equal(prof_growth__later_half(t, 0, 0), 0);
}

/* ---- trends ----------------------------------------------------------------------------- */

/* The growfixture's three sites, as snapshots at 1, 2, 3, 4 and 4.1 s of a run from 0 s. */
static const int64_t run_t[] = { 1 * S, 2 * S, 3 * S, 4 * S, 4 * S + S / 10 };

static void test_trend_leak_is_growing(void **state)
{
	/* 1 KiB every 10 ms: 100 KiB/s */
	int64_t v[] = { 102400, 204800, 307200, 409600, 419840 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(run_t, v, 5, 0, 1024, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_GROWING);
	assert_float_equal(g.bytes_per_sec, 102400.0, 1e-6);
	assert_int_equal(g.first_bytes, 307200);
	assert_int_equal(g.last_bytes, 419840);
	assert_int_equal(g.max_bytes, 419840);
	assert_string_equal(prof_trend__name(g.trend), "growing");
}

static void test_trend_cache_is_plateau(void **state)
{
	/* filled at once, then held */
	int64_t v[] = { 8192000, 8192000, 8192000, 8192000, 8192000 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(run_t, v, 5, 0, 4096, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_PLATEAU);
	assert_float_equal(g.bytes_per_sec, 0.0, 1e-9);
	assert_int_equal(g.first_bytes, 8192000);
	assert_int_equal(g.max_bytes, 8192000);
}

static void test_trend_small_drift_is_still_plateau(void **state)
{
	/* 1000 blocks of 1000 B, then 9 more over the later half: 9 KB < 10% of the max */
	int64_t v[] = { 1000000, 1000000, 1000000, 1006000, 1009000 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(run_t, v, 5, 0, 1000, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_PLATEAU);
}

static void test_trend_churn_is_flat(void **state)
{
	/* a malloc/free loop caught with one 256 B block in flight now and then: a change of
	 * one block is under the two-block threshold, and it never held more */
	int64_t zero[] = { 0, 0, 0, 0, 0 };
	int64_t v[] = { 256, 0, 0, 256, 256 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(run_t, zero, 5, 0, 256, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_FLAT);
	assert_int_equal(g.max_bytes, 0);
	assert_int_equal(prof_growth__fit(run_t, v, 5, 0, 256, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_FLAT);
	assert_true(g.bytes_per_sec > 0);
}

static void test_trend_freed_is_shrinking(void **state)
{
	int64_t v[] = { 8192000, 8192000, 8192000, 0, 0 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(run_t, v, 5, 0, 8192, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_SHRINKING);
	assert_true(g.bytes_per_sec < 0);
	assert_int_equal(g.first_bytes, 8192000);
	assert_int_equal(g.last_bytes, 0);
	assert_string_equal(prof_trend__name(g.trend), "shrinking");
}

static void test_trend_edges_of_the_threshold(void **state)
{
	/* two points in the later half, 1 s apart: the change is exactly the fitted slope. Max
	 * 10000, block 100: threshold max(1000, 200) = 1000. A change of 1000 is no trend, 1001
	 * is growth. */
	int64_t t[] = { 1 * S, 3 * S, 4 * S };
	int64_t at[] = { 10000, 9000, 10000 };
	int64_t above[] = { 10000, 8999, 10000 };
	struct prof_growth g;

	assert_int_equal(prof_growth__fit(t, at, 3, 0, 100, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_PLATEAU);
	assert_int_equal(prof_growth__fit(t, above, 3, 0, 100, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_GROWING);
	/* big blocks raise the threshold: block 600 makes it 1200 */
	assert_int_equal(prof_growth__fit(t, above, 3, 0, 600, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_PLATEAU);
	/* plateau needs memory held before the later half: F = 8999 > 1000 here, but one block
	 * of 10000 (threshold 20000) is flat */
	assert_int_equal(prof_growth__fit(t, above, 3, 0, 10000, &g), 0);
	assert_int_equal(g.trend, PROF_TREND_FLAT);
}

static void test_trend_needs_snapshots(void **state)
{
	int64_t t[] = { 1 * S, 2 * S, 9 * S };
	int64_t v[] = { 1, 2, 3 };
	struct prof_growth g = { .trend = PROF_TREND_GROWING };

	/* two snapshots are not enough */
	assert_int_equal(prof_growth__fit(t, v, 2, 0, 1, &g), -EAGAIN);
	assert_int_equal(g.trend, PROF_TREND_NONE);
	/* three, but only the last in the later half [4.5 s, 9 s] */
	assert_int_equal(prof_growth__fit(t, v, 3, 0, 1, &g), -EAGAIN);
	assert_int_equal(g.trend, PROF_TREND_NONE);
	assert_null(prof_trend__name(PROF_TREND_NONE));
}

/* ---- the store of snapshots -------------------------------------------------------------- */

static void test_snapshots_columns_and_peak(void **state)
{
	struct snapshots *s = snapshots__new(S / 10);
	const int64_t *a, *b, *c;
	int64_t t, total, pk;

	assert_non_null(s);
	assert_int_equal(snapshots__t0(s), S / 10);
	assert_false(snapshots__peak(s, &t, &total));

	assert_int_equal(snapshots__begin(s, 1 * S), 0);
	assert_int_equal(snapshots__put(s, 1, 10, 500), 0);
	assert_int_equal(snapshots__put(s, 1, 20, 100), 0);
	snapshots__end(s);
	/* site (1, 20) is gone from the second read: 0 there; (2, 10) is new: 0 before */
	assert_int_equal(snapshots__begin(s, 2 * S), 0);
	assert_int_equal(snapshots__put(s, 1, 10, 300), 0);
	assert_int_equal(snapshots__put(s, 2, 10, 700), 0);
	snapshots__end(s);
	/* a lower total is not the peak */
	assert_int_equal(snapshots__begin(s, 3 * S), 0);
	assert_int_equal(snapshots__put(s, 1, 10, 200), 0);
	snapshots__end(s);

	assert_int_equal(snapshots__count(s), 3);
	assert_int_equal(snapshots__times(s)[2], 3 * S);
	a = snapshots__site(s, 1, 10, &pk);
	assert_non_null(a);
	assert_int_equal(a[0], 500);
	assert_int_equal(a[1], 300);
	assert_int_equal(a[2], 200);
	assert_int_equal(pk, 300);
	b = snapshots__site(s, 1, 20, &pk);
	assert_int_equal(b[0], 100);
	assert_int_equal(b[1], 0);
	assert_int_equal(b[2], 0);
	assert_int_equal(pk, 0);
	c = snapshots__site(s, 2, 10, &pk);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[1], 700);
	assert_int_equal(pk, 700);
	assert_null(snapshots__site(s, 3, 10, &pk));
	assert_int_equal(pk, 0);
	assert_true(snapshots__peak(s, &t, &total));
	assert_int_equal(t, 2 * S);
	assert_int_equal(total, 1000);
	snapshots__free(s);
	snapshots__free(NULL);
}

static void test_snapshots_thin_when_full(void **state)
{
	struct snapshots *s = snapshots__new(0);
	const int64_t *v;
	uint32_t i;

	assert_non_null(s);
	for (i = 0; i < SNAPSHOTS_MAX; i++) {
		assert_int_equal(snapshots__begin(s, (int64_t)(i + 1) * S), 0);
		assert_int_equal(snapshots__put(s, 7, 7, 10 * (i + 1)), 0);
		snapshots__end(s);
	}
	/* full: the even points stay, then the new one */
	assert_int_equal(snapshots__begin(s, 1000 * S), 1);
	assert_int_equal(snapshots__put(s, 7, 7, 5), 0);
	snapshots__end(s);
	assert_int_equal(snapshots__count(s), SNAPSHOTS_MAX / 2 + 1);
	v = snapshots__site(s, 7, 7, NULL);
	for (i = 0; i < SNAPSHOTS_MAX / 2; i++) {
		assert_int_equal(snapshots__times(s)[i], (int64_t)(2 * i + 1) * S);
		assert_int_equal(v[i], 10 * (2 * i + 1));
	}
	assert_int_equal(snapshots__times(s)[SNAPSHOTS_MAX / 2], 1000 * S);
	assert_int_equal(v[SNAPSHOTS_MAX / 2], 5);
	snapshots__free(s);
}

static void test_snapshots_many_sites(void **state)
{
	struct snapshots *s = snapshots__new(0);
	int64_t t, total;
	uint64_t k;

	assert_non_null(s);
	/* past several rehashes of the index */
	assert_int_equal(snapshots__begin(s, S), 0);
	for (k = 0; k < 5000; k++)
		assert_int_equal(snapshots__put(s, k % 10, k, (int64_t)k), 0);
	snapshots__end(s);
	for (k = 0; k < 5000; k++)
		assert_int_equal(snapshots__site(s, k % 10, k, NULL)[0], (int64_t)k);
	assert_true(snapshots__peak(s, &t, &total));
	assert_int_equal(total, 4999 * 5000 / 2);
	snapshots__free(s);
}

/* ---- durations -------------------------------------------------------------------------- */

static void test_duration_units(void **state)
{
	uint64_t ns;

	assert_int_equal(util_parse_duration("30s", &ns), 0);
	assert_int_equal(ns, 30 * S);
	assert_int_equal(util_parse_duration("500ms", &ns), 0);
	assert_int_equal(ns, 500000000);
	assert_int_equal(util_parse_duration("2m", &ns), 0);
	assert_int_equal(ns, 120 * S);
	assert_int_equal(util_parse_duration("2min", &ns), 0);
	assert_int_equal(ns, 120 * S);
	assert_int_equal(util_parse_duration("1h", &ns), 0);
	assert_int_equal(ns, 3600 * S);
	assert_int_equal(util_parse_duration("250us", &ns), 0);
	assert_int_equal(ns, 250000);
	assert_int_equal(util_parse_duration("7ns", &ns), 0);
	assert_int_equal(ns, 7);
	/* plain numbers are seconds; decimals are allowed */
	assert_int_equal(util_parse_duration("45", &ns), 0);
	assert_int_equal(ns, 45 * S);
	assert_int_equal(util_parse_duration("1.5", &ns), 0);
	assert_int_equal(ns, 1500000000);
	assert_int_equal(util_parse_duration("0.25s", &ns), 0);
	assert_int_equal(ns, 250000000);
	assert_int_equal(util_parse_duration(".5ms", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(util_parse_duration("0", &ns), 0);
	assert_int_equal(ns, 0);
}

static void test_duration_rejects(void **state)
{
	static const char *const bad[] = {
		"", "s", "-1s", "+1s", " 1s", "1s ", "1 s", "1S", "1d", "1sec", "inf", "nan",
		"0x10", "1e3", "1..5", "ms", "1ms5",
	};
	uint64_t ns = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (util_parse_duration(bad[i], &ns) != -EINVAL)
			fail_msg("'%s' was taken as a duration", bad[i]);
	}
	assert_int_equal(util_parse_duration(NULL, &ns), -EINVAL);
	assert_int_equal(ns, 42);
	/* 2^64 ns is about 584 years */
	assert_int_equal(util_parse_duration("600y", &ns), -EINVAL);
	assert_int_equal(util_parse_duration("200000000h", &ns), -ERANGE);
	/* asked for, but below a nanosecond: never "no duration" */
	assert_int_equal(util_parse_duration("0.1ns", &ns), -ERANGE);
	assert_int_equal(util_parse_duration("0.0000000001", &ns), -ERANGE);
	assert_int_equal(util_parse_duration("0.0000000001s", &ns), -ERANGE);
	assert_int_equal(util_parse_duration("0.0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(util_parse_duration("1e-300", &ns), -EINVAL);
	assert_int_equal(util_parse_duration("5000000h", &ns), 0);
	assert_int_equal(ns, 5000000ULL * 3600 * S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slope_exact_line),
		cmocka_unit_test(test_slope_least_squares),
		cmocka_unit_test(test_slope_degenerate),
		cmocka_unit_test(test_later_half),
		cmocka_unit_test(test_trend_leak_is_growing),
		cmocka_unit_test(test_trend_cache_is_plateau),
		cmocka_unit_test(test_trend_small_drift_is_still_plateau),
		cmocka_unit_test(test_trend_churn_is_flat),
		cmocka_unit_test(test_trend_freed_is_shrinking),
		cmocka_unit_test(test_trend_edges_of_the_threshold),
		cmocka_unit_test(test_trend_needs_snapshots),
		cmocka_unit_test(test_snapshots_columns_and_peak),
		cmocka_unit_test(test_snapshots_thin_when_full),
		cmocka_unit_test(test_snapshots_many_sites),
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
