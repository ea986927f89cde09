/* Closing file descriptors on worker threads (src/core/closer.c): everything queued is closed
 * by the time fd_closer__free returns, whichever thread closed it; without a closer, at once. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/closer.h"

#define N 200

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

static void test_all_closed_on_free(void **state)
{
	struct fd_closer *cl = fd_closer__new(8);
	int fds[N];

	assert_non_null(cl);
	for (int i = 0; i < N; i += 2) {
		int p[2];

		assert_int_equal(pipe(p), 0);
		fds[i] = p[0];
		fds[i + 1] = p[1];
	}
	for (int i = 0; i < N; i++)
		fd_closer__close(cl, fds[i]);
	fd_closer__close(cl, -1);	/* nothing */
	fd_closer__free(cl);
	for (int i = 0; i < N; i++)
		assert_false(is_open(fds[i]));
}

static void test_no_closer_closes_now(void **state)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	fd_closer__close(NULL, p[0]);
	assert_false(is_open(p[0]));
	assert_true(is_open(p[1]));
	close(p[1]);
	fd_closer__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_closed_on_free),
		cmocka_unit_test(test_no_closer_closes_now),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
