/* floor: run a command under uprobes that do nothing, placed exactly as ebprof places its own
 * (the bench's "floor": the cost of the traps alone, which no uprobe-based tracer can go under).
 *
 * Usage: floor [--entry-only | --malloc-uprobe | --raw-tp NAME] [--count] -- CMD [ARGS...]
 *   default       empty entry probes on every malloc-family entry point and empty return
 *                 probes on the allocating ones, from src/core/probes.c (the same offsets,
 *                 free past its first instruction, the same two uprobe_multi links);
 *   --entry-only  empty entry probes on the allocating entry points only, no return and no
 *                 free probe: the floor of `ebprof mem --alloc-only`, attached as it attaches
 *                 its own (probes__attach_entries: the same offsets, one uprobe_multi link per
 *                 object);
 *   --malloc-uprobe one bare uprobe on malloc, a plain (perf-event) one as a user attaches it
 *                 with libbpf or bpftrace, at the offset probes.c resolved: the comparison
 *                 issue 6 names for --alloc-only (its dispatch costs more than a uprobe_multi
 *                 link's);
 *   --raw-tp NAME no uprobe: one empty program on raw tracepoint NAME (sys_enter, sched_switch),
 *                 attached before the command starts, for every task as ebprof stacks attaches
 *                 its own (bench/stacks.sh): what the tracepoint's dispatch alone costs;
 *   --count       the programs count their hits, printed to stderr at the end (a check that
 *                 the probes fire; not for timing).
 * The command is forked, its allocator found and the probes attached for its pid, and only then
 * is it released to exec. The probes are resolved in the forked child, i.e. in this program's
 * own libc, which the command then maps again after exec: the command must use the system libc
 * (true of every bench workload; `--count` shows it). Exits with the command's status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "core/probes.h"
#include "bench/floor.skel.h"

#define FLOOR_BPF_TRACE_UPROBE_MULTI 48	/* enum bpf_attach_type of Linux 6.6+ */

static int usage(void)
{
	fprintf(stderr, "usage: floor [--entry-only | --malloc-uprobe | --raw-tp NAME] [--count] "
		"-- CMD [ARGS...]\n");
	return 2;
}

static void print_hits(struct floor_bpf *skel, bool raw_tp)
{
	int ncpu = libbpf_num_possible_cpus();
	const char *names[4] = { "alloc_entry", "free", "return", "raw_tp" };

	for (__u32 k = raw_tp ? 3 : 0; k < (raw_tp ? 4 : 3); k++) {
		__u64 v[ncpu > 0 ? ncpu : 1], sum = 0;

		if (ncpu <= 0 || bpf_map__lookup_elem(skel->maps.hits, &k, sizeof(k), v,
						      sizeof(__u64) * ncpu, 0))
			continue;
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
		fprintf(stderr, "floor: %s %llu\n", names[k], (unsigned long long)sum);
	}
}

/* One plain uprobe at malloc's probe point, wherever probes.c put it. */
static int attach_malloc_uprobe(struct floor_bpf *skel, pid_t pid, const struct alloc_lib *lib,
				struct bpf_link **link)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = MEM_FN_MALLOC);

	for (uint32_t i = 0; i < lib->nobjs; i++)
		for (uint32_t j = 0; j < lib->objs[i].nprobes; j++) {
			if ((uint32_t)lib->objs[i].cookies[j] != MEM_FN_MALLOC)
				continue;
			*link = bpf_program__attach_uprobe_opts(skel->progs.floor_enter, pid,
								lib->objs[i].open_path,
								lib->objs[i].offsets[j], &uo);
			return *link ? 0 : -errno;
		}
	return -ENOENT;
}

int main(int argc, char **argv)
{
	bool entry_only = false, malloc_uprobe = false, count = false;
	struct bpf_link *link = NULL;
	struct floor_bpf *skel = NULL;
	const char *raw_tp = NULL;
	struct probe_links links = { .n = 0 };
	struct alloc_lib lib;
	int pfd[2], i, err, status, rc = 1;
	pid_t child;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--entry-only"))
			entry_only = true;
		else if (!strcmp(argv[i], "--malloc-uprobe"))
			malloc_uprobe = true;
		else if (!strcmp(argv[i], "--raw-tp") && i + 1 < argc)
			raw_tp = argv[++i];
		else if (!strcmp(argv[i], "--count"))
			count = true;
		else
			return usage();
	}
	if (i + 1 >= argc || (raw_tp && (entry_only || malloc_uprobe)))
		return usage();
	argv += i + 1;

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->count_hits = count;
	bpf_program__set_autoload(skel->progs.floor_raw_tp, raw_tp != NULL);
	/* probes.c makes uprobe_multi links, as ebprof does (libbpf 1.1 lacks the attach type's
	 * name) */
	if (!malloc_uprobe) {
		bpf_program__set_expected_attach_type(skel->progs.floor_enter,
						      FLOOR_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.floor_exit,
						      FLOOR_BPF_TRACE_UPROBE_MULTI);
	}
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: cannot load the BPF programs: %s (run as root)\n",
			strerror(-err));
		goto out;
	}
	if (raw_tp) {
		link = bpf_program__attach_raw_tracepoint(skel->progs.floor_raw_tp, raw_tp);
		if (!link) {
			fprintf(stderr, "floor: cannot attach to raw tracepoint %s: %s\n", raw_tp,
				strerror(errno));
			goto out;
		}
	}

	if (pipe(pfd)) {
		perror("floor: pipe");
		goto out;
	}
	child = fork();
	if (child < 0) {
		perror("floor: fork");
		goto out;
	}
	if (child == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(1);	/* the parent could not attach */
		execvp(argv[0], argv);
		fprintf(stderr, "floor: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(pfd[0]);

	/* (--raw-tp: its program is attached already, for every task) */
	err = raw_tp ? 0 : probes__find_allocator(child, &lib);
	if (!err && !raw_tp && malloc_uprobe)
		err = attach_malloc_uprobe(skel, child, &lib, &link);
	else if (!err && !raw_tp && entry_only)
		err = probes__attach_entries(bpf_program__fd(skel->progs.floor_enter), child, &lib,
					     PROBES_FREE_FNS, &links);
	else if (!err && !raw_tp)
		err = probes__attach(bpf_program__fd(skel->progs.floor_enter),
				     bpf_program__fd(skel->progs.floor_exit), child, &lib, &links);
	if (err) {
		fprintf(stderr, "floor: cannot attach the probes to process %d: %s\n", child,
			strerror(-err));
		close(pfd[1]);
		waitpid(child, NULL, 0);
		goto out;
	}
	if (write(pfd[1], "g", 1) != 1) {
		perror("floor: cannot release the command");
		kill(child, SIGKILL);
	}
	close(pfd[1]);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("floor: waitpid");
			goto out;
		}
	}
	if (count)
		print_hits(skel, raw_tp != NULL);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	probes__detach(&links);
	bpf_link__destroy(link);
	floor_bpf__destroy(skel);
	return rc;
}
