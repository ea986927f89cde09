/* The allocator libraries of this machine and the entry points each may define, with their
 * signatures: the placement tests (unit: tests/unit/test_placement.c, kernel:
 * tests/bpf/test_placement_kernel.c) go through all of them. */
#ifndef EBPROF_TEST_ALLOC_FNS_H
#define EBPROF_TEST_ALLOC_FNS_H

#include "core/placement.h"

static const char *const test_alloc_libs[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
	"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
	"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",	/* operator new/delete under glibc */
};

#include "../fixtures/alloc_kinds.h"

struct alloc_fn {
	const char *name;
	enum call_kind kind;
	unsigned nargs;		/* integer argument registers an entry program may read */
	bool returns;		/* allocates: a return probe shares its point */
};

static const struct alloc_fn test_alloc_fns[] = {
	{ "malloc", K_SZ, 1, true },
	{ "calloc", K_N_SZ, 2, true },
	{ "realloc", K_P_SZ, 2, true },
	{ "reallocarray", K_P_N_SZ, 3, true },
	{ "free", K_FREE, 1, false },
	{ "aligned_alloc", K_AL_SZ, 2, true },
	{ "memalign", K_AL_SZ, 2, true },
	{ "posix_memalign", K_PP_AL_SZ, 3, true },
	{ "valloc", K_SZ, 1, true },
	{ "pvalloc", K_SZ, 1, true },
	{ "_Znwm", K_SZ, 1, true },
	{ "_Znam", K_SZ, 1, true },
	{ "_ZnwmRKSt9nothrow_t", K_SZ_NT, 2, true },
	{ "_ZnamRKSt9nothrow_t", K_SZ_NT, 2, true },
	{ "_ZnwmSt11align_val_t", K_SZ_AL, 2, true },
	{ "_ZnamSt11align_val_t", K_SZ_AL, 2, true },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", K_SZ_AL_NT, 3, true },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", K_SZ_AL_NT, 3, true },
	{ "_ZdlPv", K_FREE, 1, false },
	{ "_ZdaPv", K_FREE, 1, false },
	{ "_ZdlPvm", K_FREE_SZ, 2, false },
	{ "_ZdaPvm", K_FREE_SZ, 2, false },
	{ "_ZdlPvRKSt9nothrow_t", K_FREE_NT, 2, false },
	{ "_ZdaPvRKSt9nothrow_t", K_FREE_NT, 2, false },
	{ "_ZdlPvSt11align_val_t", K_FREE_AL, 2, false },
	{ "_ZdaPvSt11align_val_t", K_FREE_AL, 2, false },
	{ "_ZdlPvmSt11align_val_t", K_FREE_SZ_AL, 3, false },
	{ "_ZdaPvmSt11align_val_t", K_FREE_SZ_AL, 3, false },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", K_FREE_AL_NT, 3, false },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", K_FREE_AL_NT, 3, false },
	{ "mallocx", K_SZ_FL, 2, true },
	{ "rallocx", K_P_SZ_FL, 3, true },
	{ "dallocx", K_FREE_FL, 2, false },
	{ "sdallocx", K_FREE_SZ_FL, 3, false },
};

#define TEST_NLIBS (sizeof(test_alloc_libs) / sizeof(test_alloc_libs[0]))
#define TEST_NFNS (sizeof(test_alloc_fns) / sizeof(test_alloc_fns[0]))

static inline unsigned test_place_flags(const struct alloc_fn *f)
{
	return f->returns ? PLACE_KEEP_RSP : 0;
}

#endif
