/* core/bpfutil.c against real maps in the kernel: bpfutil__map_delete_keys deletes exactly the
 * keys it is given, across batches, passing over keys not in the map; a map without a batch
 * delete gets the keys one at a time and the kernel's answer. core/stacks.c's
 * stack_map__reclaim empties a stacks map but for the stacks still referred to, whole. Root
 * required (run by tests/run-e2e.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include "core/bpfutil.h"
#include "core/stacks.h"

struct key {
	uint32_t pid;
	uint32_t fn;
	uint64_t stack;
};

#define NKEYS 3000	/* more than one batch of the helper's (1,024) */

static int count_keys(int fd)
{
	struct key k, next, *prev = NULL;
	int n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

static void test_delete_keys(void **state)
{
	struct key *del = calloc(NKEYS, sizeof(*del));
	uint64_t one = 1;
	int fd, n = 0;

	(void)state;
	assert_non_null(del);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bpfutil_test", sizeof(struct key),
			    sizeof(uint64_t), NKEYS, NULL);
	if (fd < 0 && (errno == EPERM || errno == EACCES)) {
		fprintf(stderr, "test_bpfutil_bpf: skipped: needs root (creates BPF maps)\n");
		skip();
	}
	assert_true(fd >= 0);
	for (uint32_t i = 0; i < NKEYS; i++) {
		struct key k = { .pid = 100 + i % 3, .fn = i, .stack = (uint64_t)i << 32 };

		assert_int_equal(bpf_map_update_elem(fd, &k, &one, BPF_NOEXIST), 0);
	}
	/* pid 101's keys, with a key the map does not hold after every tenth (a batch stops at
	 * it in the kernel: the rest must go all the same) */
	for (uint32_t i = 0; i < NKEYS; i++) {
		if (i % 3 != 1)
			continue;
		del[n++] = (struct key){ .pid = 101, .fn = i, .stack = (uint64_t)i << 32 };
		if (n % 10 == 0)
			del[n++] = (struct key){ .pid = 999, .fn = i };
	}
	assert_int_equal(bpfutil__map_delete_keys(fd, del, sizeof(*del), n), 0);
	assert_int_equal(count_keys(fd), NKEYS - NKEYS / 3);
	for (uint32_t i = 0; i < NKEYS; i++) {
		struct key k = { .pid = 100 + i % 3, .fn = i, .stack = (uint64_t)i << 32 };
		uint64_t v;

		assert_int_equal(bpf_map_lookup_elem(fd, &k, &v) == 0, i % 3 != 1);
	}
	/* nothing to delete */
	assert_int_equal(bpfutil__map_delete_keys(fd, del, sizeof(*del), 0), 0);
	close(fd);
	free(del);
}

/* An array has no batch delete and refuses deletes: the kernel's error, no loop forever */
static void test_delete_keys_array(void **state)
{
	uint32_t keys[3] = { 0, 1, 2 };
	int fd;

	(void)state;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bpfutil_arr", sizeof(uint32_t), sizeof(uint64_t),
			    4, NULL);
	if (fd < 0 && (errno == EPERM || errno == EACCES)) {
		fprintf(stderr, "test_bpfutil_bpf: skipped: needs root (creates BPF maps)\n");
		skip();
	}
	assert_true(fd >= 0);
	assert_int_equal(bpfutil__map_delete_keys(fd, keys, sizeof(keys[0]), 3), -EINVAL);
	close(fd);
}

/* The stacks a count or a wait still refers to go back whole; the others
 * leave; a stack a program interned again meanwhile is kept as it is; the copy is emptied. */
static int refs_two(void *ctx, struct stack_refs *r)
{
	int fd = *(int *)ctx;
	struct stack_trace st = { .nr = 1, .ips = { 0x999 } };
	__u64 h = 3000;

	/* a program interned 3000 again after the take: its value stays */
	assert_int_equal(bpf_map_update_elem(fd, &h, &st, BPF_NOEXIST), 0);
	return stack_refs__add(r, 7) ?: stack_refs__add(r, 3000) ?: stack_refs__add(r, 0) ?:
	       stack_refs__add(r, 123456);	/* 0 and an unknown hash: passed over */
}

static void test_stack_map_reclaim(void **state)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(__u64), sizeof(struct stack_trace),
				4096, NULL);
	struct stack_table *t = stack_table__new();
	struct stack_trace st = { 0 }, got;
	__u64 h, next, *prev = NULL;
	int n = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(t);
	for (h = 1; h <= 3000; h++) {
		st.nr = 1 + h % 5;
		for (uint32_t i = 0; i < st.nr; i++)
			st.ips[i] = h * 16 + i;
		assert_int_equal(bpf_map_update_elem(fd, &h, &st, BPF_NOEXIST), 0);
		assert_int_equal(stack_table__add(t, h, &st), 0);
	}
	assert_int_equal(stack_map__reclaim(fd, t, refs_two, &fd), 1);
	assert_int_equal(stack_table__count(t), 0);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		h = next;
		prev = &h;
		n++;
	}
	assert_int_equal(n, 2);
	h = 7;
	assert_int_equal(bpf_map_lookup_elem(fd, &h, &got), 0);
	assert_int_equal(got.nr, 3);
	assert_true(got.ips[0] == 7 * 16 && got.ips[2] == 7 * 16 + 2 && got.ips[3] == 0);
	h = 3000;
	assert_int_equal(bpf_map_lookup_elem(fd, &h, &got), 0);
	assert_true(got.nr == 1 && got.ips[0] == 0x999);
	/* no refs: emptied */
	stack_map__clear(fd, NULL);
	assert_int_not_equal(bpf_map_get_next_key(fd, NULL, &next), 0);
	stack_table__free(t);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_keys),
		cmocka_unit_test(test_delete_keys_array),
		cmocka_unit_test(test_stack_map_reclaim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
