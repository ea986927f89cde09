/* Small libbpf helpers every collector needs (see bpfutil.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/log.h"

#define BATCH 1024

static int map_batches(int fd, size_t ksz, size_t vsz, bpfutil_map_cb cb, void *ctx, bool take);

int bpfutil__map_for_each(int fd, size_t ksz, size_t vsz, bpfutil_map_cb cb, void *ctx)
{
	return map_batches(fd, ksz, vsz, cb, ctx, false);
}

int bpfutil__map_take(int fd, size_t ksz, size_t vsz, bpfutil_map_cb cb, void *ctx)
{
	return map_batches(fd, ksz, vsz, cb, ctx, true);
}

static int map_batches(int fd, size_t ksz, size_t vsz, bpfutil_map_cb cb, void *ctx, bool take)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char *keys = malloc(ksz * BATCH), *vals = malloc(vsz * BATCH);
	__u32 in = 0, out = 0, count;
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (!done) {
		count = BATCH;
		err = take ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys,
							      vals, &count, &opts)
			   : bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count,
						  &opts);
		if (err == -ENOENT) {
			done = true;
			err = 0;
		} else if (err) {
			goto out;
		}
		for (__u32 i = 0; i < count; i++) {
			err = cb(keys + i * ksz, vals + i * vsz, ctx);
			if (err)
				goto out;
		}
		in = out;
		first = false;
	}
out:
	free(keys);
	free(vals);
	return err;
}

int bpfutil__map_delete_keys(int fd, const void *keys, size_t ksz, uint32_t n)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	const char *k = keys;
	bool batch = true;
	int err = 0;

	for (uint32_t i = 0; i < n;) {
		__u32 count = n - i < BATCH ? n - i : BATCH;
		int e;

		if (batch) {
			e = bpf_map_delete_batch(fd, k + i * ksz, &count, &opts);
			/* the kernel's ENOTSUPP (524) for a map type without the batch */
			if (e == -EINVAL || e == -EOPNOTSUPP || e == -524) {
				batch = false;	/* not for this map or kernel: one at a time */
				continue;
			}
			/* the batch stops at a key it cannot delete: count of them went */
			i += count;
			if (!e)
				continue;
		} else {
			e = bpf_map_delete_elem(fd, k + i * ksz);
		}
		i++;	/* past the key that failed (or that went, one at a time) */
		if (e && e != -ENOENT && !err)
			err = e;
	}
	return err;
}

uint64_t bpfutil__percpu_sum(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, sum = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && bpf_map_lookup_elem(fd, &key, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t bpfutil__percpu_sum_range(int fd, uint32_t first, uint32_t end)
{
	uint64_t sum = 0;

	for (uint32_t key = first; key < end; key++)
		sum += bpfutil__percpu_sum(fd, key);
	return sum;
}

/* Attach the iterator prog (with opts, or none), read it through, detach. 0 or -errno. */
static int run_iter(struct bpf_program *prog, const struct bpf_iter_attach_opts *opts)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, opts);
	char buf[64];
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		err = -errno;
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return err;
}

int bpfutil__run_task_iter(struct bpf_program *prog, pid_t pid)
{
	union bpf_iter_link_info linfo = { .task.pid = (__u32)pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));

	return run_iter(prog, pid ? &opts : NULL);
}

int bpfutil__wait_programs(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	int inner, outer, err = 0;
	__u32 key = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ebprof_wait_in", 4, 4, 1, NULL);
	if (inner < 0)
		return -errno;
	o.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "ebprof_wait", 4, 4, 1, &o);
	if (outer < 0)
		err = -errno;
	/* the update returns after the grace period (kernel/bpf/syscall.c,
	 * maybe_wait_bpf_programs) */
	else if (bpf_map_update_elem(outer, &key, &inner, BPF_ANY))
		err = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	return err;
}

static bool libbpf_verbose;

unsigned int bpfutil__kernel_log_level(void)
{
	const char *v = getenv("EBPROF_VERIFIER_STATS");

	if (v && !strcmp(v, "full"))
		return 2 | 4;
	return v && *v ? 4 : 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* a program's load log (libbpf prints it whole, at debug level, when a log level was
	 * asked for: bpfutil__kernel_log_level) */
	if (level == LIBBPF_DEBUG && bpfutil__kernel_log_level() &&
	    strstr(fmt, "-- BEGIN PROG LOAD LOG --"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG || !libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bpfutil__libbpf_messages(const struct log_ctx *lc)
{
	libbpf_verbose = lc && lc->verbose >= 2;
	libbpf_set_print(libbpf_print);
}

uint64_t bpfutil__prog_recursion_misses(const struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.recursion_misses : 0;
}

uint64_t bpfutil__recursion_misses(const struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, obj)
		n += bpfutil__prog_recursion_misses(prog);
	return n;
}

struct btf *bpfutil__vmlinux_btf(void)
{
	static struct btf *vm;
	static bool tried;

	if (!tried) {
		tried = true;
		vm = btf__load_vmlinux_btf();	/* NULL on failure (libbpf 1.x) */
	}
	return vm;
}

bool bpfutil__has_tracepoint(const char *name)
{
	struct btf *btf = bpfutil__vmlinux_btf();
	char type[256];

	if (!btf || snprintf(type, sizeof(type), "btf_trace_%s", name) >= (int)sizeof(type))
		return false;
	return btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) > 0;
}
