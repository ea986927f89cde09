/* core/bpfutil.c: the kernel's BTF, parsed once per process, and the tracepoints it names
 * (the file is readable without root; a kernel without BTF skips). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include "core/bpfutil.h"

static void test_vmlinux_btf_once(void **state)
{
	struct btf *btf;

	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	btf = bpfutil__vmlinux_btf();
	assert_non_null(btf);
	/* the same parse for every caller */
	assert_ptr_equal(bpfutil__vmlinux_btf(), btf);
	assert_true(btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) > 0);
}

/* sched_switch is in every kernel ebprof runs on (offcpu needs it); the other name in none */
static void test_has_tracepoint(void **state)
{
	char longname[400];

	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	assert_true(bpfutil__has_tracepoint("sched_switch"));
	assert_true(bpfutil__has_tracepoint("sched_process_exit"));
	assert_false(bpfutil__has_tracepoint("ebprof_no_such_tracepoint"));
	/* a struct of the name is not a tracepoint */
	assert_false(bpfutil__has_tracepoint("task_struct"));
	/* a name too long for the lookup: no, not a cut one */
	for (size_t i = 0; i < sizeof(longname) - 1; i++)
		longname[i] = 'a';
	longname[sizeof(longname) - 1] = 0;
	assert_false(bpfutil__has_tracepoint(longname));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmlinux_btf_once),
		cmocka_unit_test(test_has_tracepoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
