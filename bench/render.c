/* Rendering benchmark: a synthetic 200,000-site memory profile shaped like a real one (deep
 * stacks sharing prefixes, a few thousand functions in a handful of modules, inline frames,
 * size histograms, outstanding blocks), rendered to every output format. Prints, per format,
 * the wall time and the file size. No root needed.
 *
 *   bench/render OUTDIR [SITES]      (bench/render.sh builds and runs it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "output/output.h"
#include "profile/profile.h"

#define NFUNCS 4000
#define NMODS 8
#define DEPTH_MIN 6
#define DEPTH_MAX 40

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* the renderer's own CPU (user and system: its writes' copies): on a loaded machine the wall
 * time is mostly waiting, for a CPU or for the disk */
static double cpu_now(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static struct profile *build(uint32_t nsites)
{
	struct profile *p = profile__new("mem");
	uint32_t maps[NMODS], funcs[NFUNCS], locs[DEPTH_MAX + 1], leaf;
	char name[128], file[64];
	struct prof_line line[2];

	profile__add_type(p, "alloc_objects", "count");
	profile__add_type(p, "alloc_space", "bytes");
	profile__add_type(p, "inuse_objects", "count");
	profile__add_type(p, "inuse_space", "bytes");
	p->default_type = 1;
	profile__set_meta(p, "./synthetic --sites", "6.18.0", "bench/render", 0, 1000000000);
	for (int m = 0; m < NMODS; m++) {
		snprintf(name, sizeof(name), "/usr/lib/libmodule%d.so", m);
		maps[m] = profile__mapping(p, 1, 0x7f0000000000ULL + m * 0x1000000ULL,
					   0x7f0000000000ULL + m * 0x1000000ULL + 0x800000, 0,
					   name, "0123456789abcdef");
	}
	for (int f = 0; f < NFUNCS; f++) {
		snprintf(name, sizeof(name), "ns%d::Component%d::handle_request_%d(int, char const*)",
			 f % 17, f % 97, f);
		snprintf(file, sizeof(file), "src/component%d.cc", f % 97);
		funcs[f] = profile__function(p, name, name, file);
	}
	line[0] = (struct prof_line){ profile__function(p, "malloc", "malloc", NULL), 0 };
	leaf = profile__location(p, maps[0], 0x7f0000001000ULL, 0x1000, line, 1);
	profile__add_process(p, 1, "synthetic", "./synthetic --sites");
	for (uint32_t s = 0; s < nsites; s++) {
		uint32_t depth = DEPTH_MIN + rnd(DEPTH_MAX - DEPTH_MIN), root = rnd(50);
		uint64_t hist[48] = {};
		int64_t v[4];
		struct prof_sample *ps;

		locs[0] = leaf;
		for (uint32_t d = 1; d <= depth; d++) {
			/* shared prefixes near the root, diversity near the leaf, as real stacks */
			uint32_t f = d < 4 ? (root * 7 + d) % NFUNCS : rnd(NFUNCS);
			uint32_t m = f % NMODS, n = 1;
			uint64_t addr = 0x7f0000000000ULL + m * 0x1000000ULL + 0x1000 + f * 0x40 +
					(d < 4 ? 0 : rnd(16));

			line[0] = (struct prof_line){ funcs[f], 10 + f % 500 };
			if (f % 5 == 0) {	/* an inlined callee */
				line[1] = line[0];
				line[0] = (struct prof_line){ funcs[(f + 1) % NFUNCS], 3 };
				n = 2;
			}
			locs[depth - d + 1] = profile__location(p, maps[m], addr, addr & 0xffffff,
								line, n);
		}
		v[0] = 1 + rnd(1000);
		v[1] = v[0] * (16 + rnd(4096));
		v[2] = rnd(4) ? 0 : rnd((uint32_t)v[0]);
		v[3] = v[2] * 64;
		ps = profile__add_sample(p, locs, depth + 1, v, 1);
		hist[5 + rnd(8)] = v[0];
		prof_sample__set_hist(p, ps, hist, 48);
		if (v[2]) {
			ps->out.count = v[2];
			ps->out.bytes = v[3];
			ps->out.min_age_ns = 1000;
			ps->out.max_age_ns = 1000000000;
			ps->out.sum_age_ns = v[2] * 500000000;
		}
	}
	for (int t = 0; t < 600; t++)
		profile__add_point(p, 1, "live_bytes", "bytes", t * 100000000LL, t * 4096LL);
	profile__add_drop(p, "live_table_full", 0);
	return p;
}

int main(int argc, char **argv)
{
	static const char *const exts[] = {
		"txt", "json", "pb.gz", "folded", "svg", "html", "speedscope.json", "csv",
	};
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	uint32_t nsites = argc > 2 ? strtoul(argv[2], NULL, 0) : 200000;
	struct output_opts o = { .top = 10, .sort = OUTPUT_SORT_BYTES };
	struct profile *p;
	double t0, c0;

	t0 = now();
	p = build(nsites);
	printf("| profile: %u sites, %u locations, %u functions | built in %.2f s |\n\n", nsites,
	       p->nlocations, p->nfunctions, now() - t0);
	printf("| format | time (s) | cpu (s) | size (MB) |\n|---|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		const struct output_ops *ops;
		char path[4096];
		struct stat st;
		int err;

		snprintf(path, sizeof(path), "%s/render-bench.%s", dir, exts[i]);
		ops = output__for_path(path);
		if (!ops) {
			printf("| .%s | (no renderer) | | |\n", exts[i]);
			continue;
		}
		t0 = now();
		c0 = cpu_now();
		err = output__write_path(ops, p, &o, path);
		if (err || stat(path, &st)) {
			printf("| .%s | failed: %s | | |\n", exts[i], strerror(-err));
			continue;
		}
		printf("| .%s | %.2f | %.2f | %.1f |\n", exts[i], now() - t0, cpu_now() - c0,
		       st.st_size / 1e6);
		unlink(path);
	}
	profile__free(p);
	return 0;
}
