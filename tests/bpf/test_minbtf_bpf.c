/* The minimal BTF (core/minbtf.h) against libbpf with the kernel's whole BTF, the oracle: each
 * of ebprof's BPF objects is loaded twice in this process, CO-RE-relocated once against
 * /sys/kernel/btf/vmlinux and once against the minimal BTF made for it, and every program the
 * kernel took must read the same: the same instructions after verification (bpf_prog_info's
 * xlated code; map ids, which differ between the two loads, masked). Root required (run by
 * tests/run-e2e.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "core/minbtf.h"
#include "cpu.skel.h"
#include "io.skel.h"
#include "kmem.skel.h"
#include "lock.skel.h"
#include "mem.skel.h"
#include "offcpu.skel.h"
#include "stacks.skel.h"

static struct btf *vmlinux;

/* The xlated instructions of prog, map ids masked; *n of them. NULL if not loaded. */
static struct bpf_insn *xlated(const struct bpf_program *prog, uint32_t *n)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	struct bpf_insn *insns;
	int fd = bpf_program__fd(prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return NULL;
	*n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(*n + 1, sizeof(*insns));
	assert_non_null(insns);
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = *n * sizeof(*insns);
	info.xlated_prog_insns = (uintptr_t)insns;
	len = sizeof(info);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	for (uint32_t i = 0; i < *n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg)
			insns[i].imm = 0;	/* a map's id (or a BTF object's) */
	return insns;
}

/* Load elf against the whole BTF and against the minimal one; compare every program. */
static void check_object(const char *name, const void *elf, size_t size)
{
	char path[] = "/tmp/test_minbtf.XXXXXX";
	struct bpf_object *full, *min;
	struct bpf_program *p;
	struct btf *b = NULL;
	const void *raw;
	uint32_t raw_size;
	int fd, err, compared = 0;

	err = minbtf__build_elf(vmlinux, elf, size, &b);
	if (err == -EOPNOTSUPP) {
		printf("# %s: no minimal BTF (the kernel's own is used)\n", name);
		return;
	}
	assert_int_equal(err, 0);
	raw = btf__raw_data(b, &raw_size);
	assert_non_null(raw);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, raw, raw_size), (int)raw_size);
	close(fd);
	btf__free(b);

	{
		LIBBPF_OPTS(bpf_object_open_opts, o1, .object_name = name);
		LIBBPF_OPTS(bpf_object_open_opts, o2, .object_name = name, .btf_custom_path = path);

		full = bpf_object__open_mem(elf, size, &o1);
		min = bpf_object__open_mem(elf, size, &o2);
	}
	assert_non_null(full);
	assert_non_null(min);
	/* every program, those a collector loads only for some options too (SEC("?...")) */
	bpf_object__for_each_program(p, full)
		bpf_program__set_autoload(p, true);
	bpf_object__for_each_program(p, min)
		bpf_program__set_autoload(p, true);
	err = bpf_object__load(full);
	assert_int_equal(bpf_object__load(min), err);
	unlink(path);	/* libbpf reads it at load */
	if (err) {
		printf("# %s: loads in neither way here (%s): not compared\n", name, strerror(-err));
		goto out;
	}
	bpf_object__for_each_program(p, full) {
		struct bpf_program *q = bpf_object__find_program_by_name(min, bpf_program__name(p));
		struct bpf_insn *a, *c;
		uint32_t na = 0, nc = 0;

		a = xlated(p, &na);
		c = xlated(q, &nc);
		assert_true(!a == !c);
		if (!a)
			continue;
		assert_int_equal(na, nc);
		if (memcmp(a, c, na * sizeof(*a))) {
			for (uint32_t i = 0; i < na; i++)
				if (memcmp(&a[i], &c[i], sizeof(*a)))
					printf("# %s/%s insn %u differs\n", name,
					       bpf_program__name(p), i);
			fail_msg("%s: program %s relocated differently", name,
				 bpf_program__name(p));
		}
		compared++;
		free(a);
		free(c);
	}
	printf("# %s: %d programs the same both ways\n", name, compared);
	assert_true(compared > 0);
out:
	bpf_object__close(full);
	bpf_object__close(min);
}

#define OBJECT(NAME) do {						\
	size_t sz;							\
	const void *elf = NAME##_bpf__elf_bytes(&sz);			\
	check_object(#NAME, elf, sz);					\
} while (0)

static void test_cpu(void **state) { (void)state; OBJECT(cpu); }
static void test_stacks(void **state) { (void)state; OBJECT(stacks); }
static void test_offcpu(void **state) { (void)state; OBJECT(offcpu); }
static void test_io(void **state) { (void)state; OBJECT(io); }
static void test_kmem(void **state) { (void)state; OBJECT(kmem); }
static void test_lock(void **state) { (void)state; OBJECT(lock); }
static void test_mem(void **state) { (void)state; OBJECT(mem); }

/* The cache's file (minbtf__path): made once, found again; a file that is not BTF (a
 * damaged cache) is made again, not given to libbpf, whose load it would fail. */
static void test_cache_file(void **state)
{
	char dir[] = "/tmp/test_minbtf_cache.XXXXXX", buf[4096], again[4096], cmd[4200];
	const char *p;
	struct btf *b;
	size_t sz;
	const void *elf = cpu_bpf__elf_bytes(&sz);
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("EBPROF_CACHE_DIR", dir, 1);	/* read once: this test runs first */
	p = minbtf__path(NULL, elf, sz, buf, sizeof(buf));
	assert_non_null(p);
	assert_int_equal(strncmp(p, dir, strlen(dir)), 0);
	b = btf__parse_raw(p);
	assert_non_null(b);
	btf__free(b);
	assert_ptr_equal(minbtf__path(NULL, elf, sz, again, sizeof(again)), again);
	assert_string_equal(again, buf);

	f = fopen(buf, "w");	/* damaged */
	assert_non_null(f);
	fputs("not BTF", f);
	fclose(f);
	p = minbtf__path(NULL, elf, sz, again, sizeof(again));
	assert_non_null(p);
	b = btf__parse_raw(p);
	assert_non_null(b);
	btf__free(b);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_file),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_offcpu),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_kmem),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_mem),
	};

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux || geteuid()) {
		fprintf(stderr, "test_minbtf_bpf: needs root and /sys/kernel/btf/vmlinux\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
