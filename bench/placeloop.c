/* placeloop: what probe placement saves, per call (bench/placement.sh runs it, as root).
 * A tight loop of N allocate/free pairs, with one counting uprobe (perf uprobe event, no BPF)
 * on one glibc function: at its entry, or where core/placement.c puts ebprof's probe.
 *
 * Usage: placeloop FUNCTION MODE [N]
 *   FUNCTION  free (malloc(64)/free pairs, free probed), memalign, posix_memalign, valloc,
 *             pvalloc (that function and free, that function probed)
 *   MODE      none | entry | point
 * Prints "FUNCTION MODE OFFSET: X ns/pair, H hits" (OFFSET from the function's entry).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "core/placement.h"
#include "symbolize/symbolize.h"

static int open_uprobe(const char *path, uint64_t off)
{
	struct perf_event_attr a;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = off;
	a.disabled = 1;
	return syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	const char *fn = argc > 2 ? argv[1] : NULL, *mode = argc > 2 ? argv[2] : NULL;
	long n = argc > 3 ? atol(argv[3]) : 200000;
	unsigned args = 1, flags = PLACE_KEEP_RSP;
	struct placement pl;
	struct timespec a, b;
	uint64_t entry, hits = 0;
	Dl_info di;
	int fd = -1, which;

	if (!fn || n <= 0 || (strcmp(mode, "none") && strcmp(mode, "entry") && strcmp(mode, "point"))) {
		fprintf(stderr, "usage: placeloop free|memalign|posix_memalign|valloc|pvalloc "
			"none|entry|point [N]\n");
		return 2;
	}
	which = !strcmp(fn, "free") ? 0 : !strcmp(fn, "memalign") ? 1 :
		!strcmp(fn, "posix_memalign") ? 2 : !strcmp(fn, "valloc") ? 3 :
		!strcmp(fn, "pvalloc") ? 4 : -1;
	if (which < 0) {
		fprintf(stderr, "placeloop: unknown function %s\n", fn);
		return 2;
	}
	if (which == 0)
		flags = 0;
	if (which == 1)
		args = 2;
	if (which == 2)
		args = 3;
	if (!dladdr((void *)free, &di) || sym_elf_symbol_offset(di.dli_fname, fn, &entry) ||
	    probe_place(di.dli_fname, entry, 0, placement_arg_mask(args), flags, &pl)) {
		fprintf(stderr, "placeloop: cannot place a probe on %s\n", fn);
		return 1;
	}
	if (strcmp(mode, "none")) {
		fd = open_uprobe(di.dli_fname, !strcmp(mode, "entry") ? entry : pl.offset);
		if (fd < 0) {
			fprintf(stderr, "placeloop: perf uprobe on %s: %s (root?)\n", fn,
				strerror(errno));
			return 1;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		void *p = NULL;

		switch (which) {
		case 0: p = malloc(64); break;
		case 1: p = memalign(64, 64); break;
		case 2: if (posix_memalign(&p, 64, 64)) p = NULL; break;
		case 3: p = valloc(64); break;
		case 4: p = pvalloc(64); break;
		}
		/* p escapes: the compiler may not drop the pair */
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
			hits = 0;
	}
	printf("%s %s +%#lx: %.1f ns/pair, %lu hits\n", fn, mode,
	       (unsigned long)(!strcmp(mode, "point") ? pl.offset - entry : 0),
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n,
	       (unsigned long)hits);
	return 0;
}
