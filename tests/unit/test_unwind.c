/* Unit tests of src/symbolize/unwind.c: the unwind table of an object, row by row, against what
 * binutils' `readelf --debug-dump=frames-interp` says of the same file (an independent reader of
 * the same call frame information): the -O2 -fomit-frame-pointer fixture, and glibc (PLT
 * expression, signal frame, outermost frames). No root needed. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <ucontext.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <cmocka.h>

#include "abi/unwind.h"
#include "core/stacks.h"
#include "core/unwind.h"
#include "profile/profile.h"
#include "symbolize/sym_internal.h"
#include "symbolize/unwind.h"
#include "util/util.h"

#include "golden.h"	/* out_dir */

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"

struct cmp_stats {
	unsigned fdes, rows, exps, checked;
	unsigned rsp_rules;	/* rows whose caller's rsp is not the CFA (unknown) */
	unsigned rbx_saved;	/* rows with rbx saved at CFA - 8k */
	unsigned ra_rdi;	/* rows with the return address in rdi */
};

/* The rbx rule readelf's column says (NULL: no column): unchanged ("u": no rule, which the
 * psABI makes unchanged for a callee-saved register; "s"), saved at CFA - 8k, else unknown */
static unsigned want_rbx(const char *rbx)
{
	int off;
	char end;

	if (!rbx || strcmp(rbx, "u") == 0 || strcmp(rbx, "s") == 0)
		return UNWIND_RBX_SAME;
	if (sscanf(rbx, "c%d%c", &off, &end) == 1 && off < 0 && off % 8 == 0 &&
	    -off / 8 <= UNWIND_RBX_MAX_K)
		return (unsigned)(-off / 8);
	return UNWIND_RBX_UNKNOWN;
}

/* A readelf column: "rsp+8", "c-16", "u", "exp", "s", ... */
static void check_row(const struct unwind_table *t, uint64_t loc, const char *cfa,
		      const char *rbp, const char *ra, const char *rbx, const char *rsp,
		      struct cmp_stats *st)
{
	const struct unwind_row *r = unwind_table__find(t, loc);
	char want[64];

	if (!r) {
		fail_msg("no row at %#llx", (unsigned long long)loc);
		return;
	}
	st->rows++;
	if (ra && strcmp(ra, "u") == 0) {
		if (r->cfa != UNWIND_CFA_END)
			fail_msg("%#llx: ra undefined, row cfa %d", (unsigned long long)loc, r->cfa);
		st->checked++;
		return;
	}
	if (rsp && strcmp(rsp, "u") != 0 &&
	    !(strcmp(rsp, "exp") == 0 && r->cfa == UNWIND_CFA_SIGNAL)) {
		/* the caller's rsp is not the CFA ("s": this frame's rsp, not the CFA either):
		 * the walk would be wrong (a signal frame's expression is its own rule) */
		st->rsp_rules++;
		if (r->cfa != UNWIND_CFA_UNKNOWN)
			fail_msg("%#llx: rsp %s, row cfa %d", (unsigned long long)loc, rsp, r->cfa);
		return;
	}
	if (strcmp(cfa, "exp") == 0) {
		/* an expression: one we implement (checked below for known sites) or UNKNOWN */
		st->exps++;
		if (r->cfa != UNWIND_CFA_PLT && r->cfa != UNWIND_CFA_SIGNAL &&
		    r->cfa != UNWIND_CFA_DEREF_RBP && r->cfa != UNWIND_CFA_UNKNOWN)
			fail_msg("%#llx: exp, row cfa %d", (unsigned long long)loc, r->cfa);
		return;
	}
	if (ra && strcmp(ra, "r5(rdi)") == 0 && strncmp(cfa, "rsp+", 4) == 0 &&
	    (!rbp || strcmp(rbp, "u") == 0 || strcmp(rbp, "s") == 0)) {
		/* the return address in rdi (__vfork's), the CFA at rsp + off */
		snprintf(want, sizeof(want), "rsp+%d", r->cfa_off);
		if (r->cfa != UNWIND_CFA_RA_RDI || strcmp(want, cfa) != 0)
			fail_msg("%#llx: cfa %s ra in rdi, row cfa %d %s", (unsigned long long)loc,
				 cfa, r->cfa, want);
		st->ra_rdi++;
		st->checked++;
		return;
	}
	if (ra && strchr(ra, '(')) {
		/* the return address in another register (a static program's rcx): not
		 * implemented, the stack must end there */
		if (r->cfa != UNWIND_CFA_UNKNOWN)
			fail_msg("%#llx: ra %s, row cfa %d", (unsigned long long)loc, ra, r->cfa);
		return;
	}
	if (strncmp(cfa, "rsp+", 4) == 0 || strncmp(cfa, "rbp+", 4) == 0 ||
	    strncmp(cfa, "rbx+", 4) == 0 || strncmp(cfa, "rdi+", 4) == 0 ||
	    strncmp(cfa, "rdx+", 4) == 0) {
		if ((!ra || strcmp(ra, "c-8") != 0) && strncmp(cfa, "rsp+", 4) != 0 &&
		    strncmp(cfa, "rbp+", 4) != 0) {
			/* a CFA in rbx, rdi, rdx with the return address elsewhere (setcontext's
			 * ucontext at rdi): not implemented */
			if (r->cfa != UNWIND_CFA_UNKNOWN)
				fail_msg("%#llx: cfa %s ra %s, row cfa %d", (unsigned long long)loc,
					 cfa, ra ? ra : "(none)", r->cfa);
			return;
		}
		if (!ra || strcmp(ra, "c-8") != 0) {
			/* the return address elsewhere than CFA - 8: not expected on x86-64 */
			fail_msg("%#llx: ra %s", (unsigned long long)loc, ra ? ra : "(none)");
			return;
		}
		snprintf(want, sizeof(want), "%s%d", r->cfa == UNWIND_CFA_RSP ? "rsp+" :
			 r->cfa == UNWIND_CFA_RBP ? "rbp+" : r->cfa == UNWIND_CFA_RBX ? "rbx+" :
			 r->cfa == UNWIND_CFA_RDI ? "rdi+" : r->cfa == UNWIND_CFA_RDX ? "rdx+" : "?",
			 r->cfa_off);
		if (strcmp(want, cfa) != 0)
			fail_msg("%#llx: readelf cfa %s, table %s (rule %d)",
				 (unsigned long long)loc, cfa, want, r->cfa);
	} else {
		/* rules on other registers (r10, ...): the unwinder must not pretend */
		if (r->cfa != UNWIND_CFA_UNKNOWN)
			fail_msg("%#llx: cfa %s, row cfa %d", (unsigned long long)loc, cfa, r->cfa);
		return;
	}
	if (!rbp || strcmp(rbp, "u") == 0 || strcmp(rbp, "s") == 0) {
		if (r->rbp != UNWIND_RBP_SAME)
			fail_msg("%#llx: rbp %s, row rbp %d", (unsigned long long)loc,
				 rbp ? rbp : "(no column)", r->rbp);
	} else if (rbp[0] == 'c') {
		snprintf(want, sizeof(want), "c%d", r->rbp_off);
		if (r->rbp != UNWIND_RBP_AT || strcmp(want, rbp) != 0)
			fail_msg("%#llx: rbp %s, row rbp %d %s", (unsigned long long)loc, rbp,
				 r->rbp, want);
	}
	if (r->rbx != want_rbx(rbx))
		fail_msg("%#llx: rbx %s, row rbx %d", (unsigned long long)loc, rbx ? rbx : "(none)",
			 r->rbx);
	if (r->rbx != UNWIND_RBX_SAME && r->rbx != UNWIND_RBX_UNKNOWN)
		st->rbx_saved++;
	st->checked++;
}

/* Every row readelf prints for path, compared with the table built from it. */
static void compare_with_readelf(const char *path, struct cmp_stats *st)
{
	struct unwind_table t;
	const char *why;
	char cmd[4200], line[4096], cols[32][16];
	bool in_fde = false;
	int ncols = 0, cfa_col = -1, rbp_col = -1, ra_col = -1, rbx_col = -1, rsp_col = -1;
	FILE *p;

	memset(st, 0, sizeof(*st));
	if (unwind_table__build(path, NULL, NULL, &t, &why) != 0)
		fail_msg("no table for %s: %s", path, why);
	assert_string_equal(t.source, ".eh_frame");
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, b, loc;
		char *s;

		if ((s = strstr(line, " FDE ")) && (s = strstr(line, "pc=")) &&
		    sscanf(s, "pc=%llx..%llx", &a, &b) == 2) {
			st->fdes++;
			in_fde = true;
			if (b > a) {
				const struct unwind_row *r = unwind_table__find(&t, b - 1);

				if (!r || r->cfa == UNWIND_CFA_NONE)
					fail_msg("%s: FDE %#llx..%#llx not covered", path, a, b);
			}
			ncols = 0;
			continue;
		}
		if (strstr(line, " CIE")) {
			ncols = 0;	/* a CIE's initial rows: no address of the file */
			in_fde = false;
			continue;
		}
		if (in_fde == false && strstr(line, " FDE "))
			in_fde = true;
		if (strncmp(line, "   LOC", 6) == 0 && in_fde) {
			char *save, *tok;

			ncols = 0;
			cfa_col = rbp_col = ra_col = rbx_col = rsp_col = -1;
			for (tok = strtok_r(line, " \n", &save); tok && ncols < 32;
			     tok = strtok_r(NULL, " \n", &save)) {
				snprintf(cols[ncols], sizeof(cols[0]), "%s", tok);
				if (strcmp(tok, "CFA") == 0)
					cfa_col = ncols;
				else if (strcmp(tok, "rbp") == 0)
					rbp_col = ncols;
				else if (strcmp(tok, "ra") == 0)
					ra_col = ncols;
				else if (strcmp(tok, "rbx") == 0)
					rbx_col = ncols;
				else if (strcmp(tok, "rsp") == 0)
					rsp_col = ncols;
				ncols++;
			}
			continue;
		}
		if (ncols && sscanf(line, "%llx", &loc) == 1 && line[0] != ' ') {
			char v[32][16], *save, *tok;
			int n = 0;

			/* "r5 (rdi)" (a rule naming a register) is one column: "r5(rdi)" */
			for (tok = strtok_r(line, " \n", &save); tok && n < 32;
			     tok = strtok_r(NULL, " \n", &save))
				if (tok[0] == '(' && n)
					snprintf(v[n - 1] + strlen(v[n - 1]),
						 sizeof(v[0]) - strlen(v[n - 1]), "%s", tok);
				else
					snprintf(v[n++], sizeof(v[0]), "%s", tok);
			if (n != ncols || cfa_col < 0)
				continue;
			check_row(&t, loc, v[cfa_col], rbp_col >= 0 ? v[rbp_col] : NULL,
				  ra_col >= 0 ? v[ra_col] : NULL, rbx_col >= 0 ? v[rbx_col] : NULL,
				  rsp_col >= 0 ? v[rsp_col] : NULL, st);
		}
	}
	pclose(p);
	unwind_table__free(&t);
}

static void test_fixture_rows(void **state)
{
	char path[4096];
	struct cmp_stats st;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/qsortfix", out_dir());
	compare_with_readelf(path, &st);
	print_message("qsortfix: %u FDEs, %u rows, %u checked\n", st.fdes, st.rows, st.checked);
	assert_true(st.fdes >= 5);
	assert_true(st.checked >= 10);
}

/* rbxcfa's hand-written rows: the CFA in rbx, rbx kept in r12, the caller's rsp saved at
 * CFA - 24 (unknown: the walk takes the CFA for it) */
static void test_asm_rows(void **state)
{
	char path[4096];
	struct cmp_stats st;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/rbxcfa", out_dir());
	compare_with_readelf(path, &st);
	print_message("rbxcfa: %u FDEs, %u rows, %u checked, %u with rsp's rule, %u with rbx "
		      "saved\n", st.fdes, st.rows, st.checked, st.rsp_rules, st.rbx_saved);
	assert_int_equal(st.rsp_rules, 1);
	assert_true(st.rbx_saved >= 3);
}

/* A static program has no .eh_frame_hdr: its FDEs are found by walking .eh_frame */
static void test_static_rows(void **state)
{
	char path[4096];
	struct cmp_stats st;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/memfixture_static", out_dir());
	compare_with_readelf(path, &st);
	print_message("memfixture_static: %u FDEs, %u rows, %u checked\n", st.fdes, st.rows,
		      st.checked);
	assert_true(st.fdes > 500);
	assert_true(st.checked > 5000);
}

static void test_libc_rows(void **state)
{
	struct cmp_stats st;

	(void)state;
	compare_with_readelf(LIBC, &st);
	print_message("libc: %u FDEs, %u rows (%u expressions), %u checked, %u with rbx saved, "
		      "%u with the return address in rdi\n", st.fdes, st.rows, st.exps, st.checked,
		      st.rbx_saved, st.ra_rdi);
	assert_true(st.rbx_saved > 1000);
	assert_int_equal(st.ra_rdi, 2);	/* __vfork's, around its system call */
	assert_true(st.fdes > 1000);
	assert_true(st.checked > 10000);
}

/* ld.so's rows as readelf prints them, among them _dl_runtime_resolve's (and
 * _dl_tlsdesc_dynamic's) CFA in rbx, which the BPF unwinder implements in the first frame */
static void test_ldso_rows(void **state)
{
	struct cmp_stats st;
	struct unwind_table t;
	const char *why;
	unsigned rbx = 0;

	(void)state;
	compare_with_readelf(LDSO, &st);
	print_message("ld.so: %u FDEs, %u rows (%u expressions), %u checked\n", st.fdes, st.rows,
		      st.exps, st.checked);
	assert_true(st.checked > 1000);
	assert_int_equal(unwind_table__build(LDSO, NULL, NULL, &t, &why), 0);
	for (uint32_t i = 0; i < t.nrows; i++)
		if (t.rows[i].cfa == UNWIND_CFA_RBX)
			rbx++;
	print_message("ld.so: %u rows with the CFA in rbx\n", rbx);
	assert_true(rbx >= 3);	/* _dl_runtime_resolve_fxsave, _xsave, _xsavec */
	/* its entry point (_start, then _dl_start_user: no FDE) is outermost; before, a walk
	 * met it by frame pointers, rbp 0 taken for the end (now [truncated] elsewhere) */
	{
		Elf64_Ehdr eh;
		FILE *f = fopen(LDSO, "rb");
		const struct unwind_row *r;

		assert_non_null(f);
		assert_int_equal(fread(&eh, sizeof(eh), 1, f), 1);
		fclose(f);
		r = unwind_table__find(&t, eh.e_entry);
		assert_non_null(r);
		assert_int_equal(r->cfa, UNWIND_CFA_END);
		/* _dl_start_user's return from _dl_init, 0x30 bytes on in bookworm's */
		r = unwind_table__find(&t, eh.e_entry + 0x30 - 1);
		assert_non_null(r);
		assert_int_equal(r->cfa, UNWIND_CFA_END);
	}
	unwind_table__free(&t);
}

/* glibc's special rows: the PLT's expression, __restore_rt's signal frame, _start-like
 * outermost frames (the return address undefined) */
static void test_libc_special(void **state)
{
	struct unwind_table t;
	const char *why;
	unsigned plt = 0, sig = 0, end = 0, unknown = 0, clones = 0;

	(void)state;
	assert_int_equal(unwind_table__build(LIBC, NULL, NULL, &t, &why), 0);
	for (uint32_t i = 0; i < t.nrows; i++) {
		const struct unwind_row *r = &t.rows[i];

		if (i)
			assert_true(r->pc > t.rows[i - 1].pc);
		if (i)
			assert_false(unwind_row__same(r, &t.rows[i - 1]));
		switch (r->cfa) {
		case UNWIND_CFA_PLT:
			plt++;
			assert_int_equal(r->cfa_off, 8);
			assert_int_equal(r->rbp_off, 11);
			break;
		case UNWIND_CFA_SIGNAL:
			sig++;
			/* offsets in the ucontext: uc_mcontext.gregs[REG_RSP, REG_RBP] (REG_RIP after REG_RSP) */
			assert_int_equal(r->cfa_off, 160);
			assert_int_equal(r->rbp_off, 120);
			break;
		case UNWIND_CFA_END:
			end++;
			break;
		case UNWIND_CFA_UNKNOWN:
			unknown++;
			break;
		case UNWIND_CFA_CLONE:
			/* the parent's rule before the system call, up to the child's FDE */
			clones++;
			assert_int_equal(r->cfa_off, 8);
			assert_true(i + 1 < t.nrows && t.rows[i + 1].cfa == UNWIND_CFA_END);
			assert_int_equal(t.rows[i + 1].pc - r->pc, 10);
			break;
		}
	}
	print_message("libc: %u rows: %u PLT, %u signal, %u outermost, %u clone returns, "
		      "%u unknown\n", t.nrows, plt, sig, end, clones, unknown);
	assert_true(plt >= 1);
	assert_int_equal(sig, 1);
	assert_true(end >= 2);	/* clone, clone3 */
	assert_int_equal(clones, 2);	/* clone, clone3: where parent and child return */
	unwind_table__free(&t);
}

/* In the code of libc at sw (swapcontext): the first "mov ...,%rsp", the instruction after it
 * and the next ret, by objdump */
static void swap_rsp_load(uint64_t sw, uint64_t *loadp, uint64_t *nextp, uint64_t *endp)
{
	uint64_t load = 0, next = 0, end = 0;
	char cmd[512], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn --start-address=%#llx "
		 "--stop-address=%#llx %s", (unsigned long long)sw, (unsigned long long)sw + 512,
		 LIBC);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;

		if (sscanf(line, " %llx:", &a) != 1)
			continue;
		if (load && !next)
			next = a;
		if (!load && strstr(line, "mov ") && strstr(line, "),%rsp"))
			load = a;
		if (next && strstr(line, "\tret")) {
			end = a;
			break;
		}
	}
	pclose(p);
	*loadp = load;
	*nextp = next;
	*endp = end;
}

static void ctx_fn(void)
{
}

/* glibc's context switches. makecontext pushes __start_context (found here from this process's
 * own makecontext: the word it leaves at the new context's rsp) as the coroutine's return
 * address, after alignment padding: looked up at the address - 1, the stack ends there
 * (outermost), and __start_context's own rows are its FDE's. swapcontext loads the new
 * context's rsp without call frame information (objdump finds the "mov ...,%rsp"): its rows
 * are unknown from the next instruction to its end, and its first rule before. */
static void test_libc_contexts(void **state)
{
	static char stack[16384];
	struct unwind_table t;
	const struct unwind_row *r;
	const char *why;
	ucontext_t uc;
	Dl_info di;
	uint64_t start, sw, load, next, end;

	(void)state;
	assert_int_equal(getcontext(&uc), 0);
	uc.uc_stack.ss_sp = stack;
	uc.uc_stack.ss_size = sizeof(stack);
	uc.uc_link = NULL;
	makecontext(&uc, ctx_fn, 0);
	start = *(uint64_t *)uc.uc_mcontext.gregs[REG_RSP];
	assert_true(dladdr((void *)start, &di));
	assert_true(strstr(di.dli_fname, "libc.so.6") != NULL);
	start -= (uint64_t)di.dli_fbase;
	assert_int_equal(unwind_table__build(LIBC, NULL, NULL, &t, &why), 0);
	r = unwind_table__find(&t, start - 1);
	assert_non_null(r);
	assert_int_equal(r->cfa, UNWIND_CFA_END);
	r = unwind_table__find(&t, start);
	assert_non_null(r);
	assert_int_equal(r->cfa, UNWIND_CFA_RSP);
	assert_int_equal(r->cfa_off, 8);

	sw = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "swapcontext");
	assert_true(sw && dladdr((void *)sw, &di));
	sw -= (uint64_t)di.dli_fbase;
	swap_rsp_load(sw, &load, &next, &end);
	print_message("__start_context at %#llx; swapcontext at %#llx, loads rsp at %#llx\n",
		      (unsigned long long)start, (unsigned long long)sw, (unsigned long long)load);
	assert_true(load > sw && next > load && end > next);
	r = unwind_table__find(&t, load);
	assert_non_null(r);
	assert_int_equal(r->cfa, UNWIND_CFA_RSP);
	for (uint64_t a = next; a <= end; a++) {
		r = unwind_table__find(&t, a);
		assert_non_null(r);
		assert_int_equal(r->cfa, UNWIND_CFA_UNKNOWN);
	}
	unwind_table__free(&t);
}

static void test_bias(void **state)
{
	struct unwind_table t;
	const char *why;
	uint64_t bias = 0;

	(void)state;
	assert_int_equal(unwind_table__build(LIBC, NULL, NULL, &t, &why), 0);
	assert_true(t.nsegs >= 1);
	/* libc's text: offset 0x26000 at vaddr 0x26000, mapped at 0x7f0000026000 */
	assert_true(unwind_table__bias(&t, 0x7f0000026000ULL, 0x26000, &bias));
	assert_int_equal(bias, 0x7f0000000000ULL);
	assert_false(unwind_table__bias(&t, 0x7f0000000000ULL, 0, &bias));
	assert_int_equal(strlen(t.build_id), 40);
	unwind_table__free(&t);
}

static void put_file(const char *dir, const char *name, size_t bytes, time_t mtime)
{
	char path[4200], buf[512] = { 0 };
	struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, bytes, f), bytes);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool has_file(const char *dir, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* The cache's tables have a total: past it, those used longest ago go first (an agent on a
 * build machine wrote 2,517 of them, 252 MB, in 13 hours, and none ever went); a hit marks
 * its file used; files of other kinds are left alone. */
static void test_cache_room(void **state)
{
	char dir[] = "/tmp/ebprof-cache-room.XXXXXX", cmd[4300], path[4200];

	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file(dir, "a.v4.rows", 100, 1000);
	put_file(dir, "b.v4.rows", 100, 2000);
	put_file(dir, "c.v3.rows", 100, 3000);
	put_file(dir, "keep.tmp", 400, 500);
	/* 300 bytes, room for 150 more within 300: the two oldest go */
	sym_cache__make_room(dir, ".rows", 150, 300);
	assert_false(has_file(dir, "a.v4.rows"));
	assert_false(has_file(dir, "b.v4.rows"));
	assert_true(has_file(dir, "c.v3.rows"));
	assert_true(has_file(dir, "keep.tmp"));
	/* used now: the newest, so the other goes first */
	put_file(dir, "d.v4.rows", 100, 4000);
	snprintf(path, sizeof(path), "%s/c.v3.rows", dir);
	sym_cache__used(path);
	sym_cache__make_room(dir, ".rows", 100, 200);
	assert_true(has_file(dir, "c.v3.rows"));
	assert_false(has_file(dir, "d.v4.rows"));
	/* within the total: nothing goes */
	sym_cache__make_room(dir, ".rows", 10, 200);
	assert_true(has_file(dir, "c.v3.rows"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Tables are kept by build-id under the cache directory: the second build reads the same rows
 * back; a damaged file is not used (and is replaced) */
static void test_cache(void **state)
{
	char dir[] = "/tmp/ebprof-unwind-cache.XXXXXX", file[4200], cmd[4300];
	struct unwind_table a, b, c;
	const char *why;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unwind_table__build(LIBC, NULL, dir, &a, &why), 0);
	assert_false(a.cached);
	snprintf(file, sizeof(file), "%s/unwind/%s" UNWIND_CACHE_SUFFIX, dir, a.build_id);
	f = fopen(file, "r");
	assert_non_null(f);
	fclose(f);
	{
		/* another format's file of the same object (an older ebprof's name, this
		 * build-id): neither read nor replaced (the two would rebuild each other's) */
		char other[4200], got[16] = "";

		snprintf(other, sizeof(other), "%s/unwind/%s.rows", dir, a.build_id);
		f = fopen(other, "w");
		assert_non_null(f);
		fputs("older format", f);
		fclose(f);
		assert_int_equal(unwind_table__build(LIBC, NULL, dir, &b, &why), 0);
		assert_true(b.cached);
		unwind_table__free(&b);
		f = fopen(other, "r");
		assert_non_null(f);
		assert_non_null(fgets(got, sizeof(got), f));
		fclose(f);
		assert_string_equal(got, "older format");
	}
	assert_int_equal(unwind_table__build(LIBC, NULL, dir, &b, &why), 0);
	assert_true(b.cached);
	assert_int_equal(b.nrows, a.nrows);
	assert_memory_equal(b.rows, a.rows, a.nrows * sizeof(a.rows[0]));
	assert_string_equal(b.source, a.source);
	assert_int_equal(b.nsegs, a.nsegs);
	/* a flipped byte in the rows: built again */
	f = fopen(file, "r+");
	assert_non_null(f);
	fseek(f, -5, SEEK_END);
	fputc(0x5a, f);
	fclose(f);
	assert_int_equal(unwind_table__build(LIBC, NULL, dir, &c, &why), 0);
	assert_false(c.cached);
	assert_memory_equal(c.rows, a.rows, a.nrows * sizeof(a.rows[0]));
	unwind_table__free(&a);
	unwind_table__free(&b);
	unwind_table__free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_no_table(void **state)
{
	struct unwind_table t;
	const char *why = NULL;

	(void)state;
	assert_int_equal(unwind_table__build("/nonexistent", NULL, NULL, &t, &why), -1);
	assert_non_null(why);
	assert_int_equal(unwind_table__build("/etc/passwd", NULL, NULL, &t, &why), -1);
	assert_string_equal(why, "it is not an x86-64 ELF file");
}

/* DT_NEEDED as ld.so resolves it: $ORIGIN in DT_RUNPATH, then Debian's library directories
 * (the same answers as ldd gives for these files) */
static void test_needed(void **state)
{
	char path[4096], want[4096], **libs;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/cxxlate", out_dir());
	assert_int_equal(unwind_needed(path, NULL, &libs, &n), 0);
	assert_int_equal(n, 2);
	snprintf(want, sizeof(want), "%s/fixtures/libcxxlate.so", out_dir());
	assert_string_equal(libs[0], want);
	assert_string_equal(libs[1], LIBC);
	free(libs[0]);
	free(libs[1]);
	free(libs);
	/* $ORIGIN is the mapped path's directory when the file is read through another one */
	assert_int_equal(unwind_needed(path, "/nonexistent/cxxlate", &libs, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(libs[0], LIBC);
	free(libs[0]);
	free(libs);
	/* libc needs the dynamic linker */
	assert_int_equal(unwind_needed(LIBC, NULL, &libs, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(libs[0], "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	free(libs[0]);
	free(libs);
	assert_int_equal(unwind_needed("/etc/passwd", NULL, &libs, &n), -1);
	assert_int_equal(n, 0);
}

/* /proc/PID/stat -> the identity the BPF unwinder compares (core/unwind.c) */
static void test_ident(void **state)
{
	/* a name with ") " in it; tpgid -1; starttime 777, endcode, startstack (fields 22, 27,
	 * 28) as a kernel 6 prints them */
	static const char line[] = "1234 (a) b (c) R 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 "
		"20 0 1 0 777 1000000 200 18446744073709551615 93824992235520 93824992236857 "
		"140737488348784 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	static const char kthread[] = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 "
		"0 3 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 0 0 0 0 0 0\n";
	struct unwind_ident id;
	char *self;

	(void)state;
	assert_int_equal(unwind_ident__parse(line, &id), 0);
	assert_int_equal(id.start_time, 777);
	assert_int_equal(id.end_code, 93824992236857ULL);
	assert_int_equal(id.start_stack, 140737488348784ULL);
	assert_int_equal(unwind_ident__parse(kthread, &id), -ESRCH);
	assert_int_equal(unwind_ident__parse("1234 (x) R 1 2", &id), -EINVAL);
	assert_int_equal(unwind_ident__parse("no name", &id), -EINVAL);
	/* this process: its stack starts above its text's end */
	self = util_read_file("/proc/self/stat", NULL);
	assert_non_null(self);
	assert_int_equal(unwind_ident__parse(self, &id), 0);
	assert_true(id.start_stack > id.end_code);
	free(self);
}

/* LD_PRELOAD and /etc/ld.so.preload as ld.so reads them: names separated by spaces or colons,
 * a path as it is (a relative one from cwd), a bare name in LD_LIBRARY_PATH then Debian's
 * directories; names not found left out */
static void test_preloads(void **state)
{
	char env[8192], rel[4096], fixdir[PATH_MAX], want[PATH_MAX + 32], **libs;
	size_t n, len;

	(void)state;
	/* the absolute path of the fixtures' directory (relative names are from out_dir) */
	snprintf(rel, sizeof(rel), "%s/fixtures", out_dir());
	assert_non_null(realpath(rel, fixdir));
	len = (size_t)snprintf(env, sizeof(env), "HOME=/root%cLD_LIBRARY_PATH=/nonexistent:%s%c"
			       "LD_PRELOAD=libcxxlate.so  nosuch.so:libc.so.6 fixtures/ctoralloc.so"
			       ":%s/ctoralloc.so%cLD_PRELOAD_X=libc.so.6", 0, fixdir, 0, fixdir, 0);
	assert_int_equal(unwind_preloads(env, len + 1, NULL, out_dir(), &libs, &n), 0);
	assert_int_equal(n, 4);
	snprintf(want, sizeof(want), "%s/libcxxlate.so", fixdir);
	assert_string_equal(libs[0], want);
	assert_string_equal(libs[1], LIBC);
	snprintf(want, sizeof(want), "%s/fixtures/ctoralloc.so", out_dir());
	assert_string_equal(libs[2], want);
	snprintf(want, sizeof(want), "%s/ctoralloc.so", fixdir);
	assert_string_equal(libs[3], want);
	for (size_t i = 0; i < n; i++)
		free(libs[i]);
	free(libs);
	/* the file's names (any white space between them), after the environment's */
	len = (size_t)snprintf(env, sizeof(env), "LD_PRELOAD=libc.so.6");
	assert_int_equal(unwind_preloads(env, len + 1, "\tlibc.so.6\nlibnosuch.so\n", NULL,
					 &libs, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(libs[0], LIBC);
	assert_string_equal(libs[1], LIBC);
	for (size_t i = 0; i < n; i++)
		free(libs[i]);
	free(libs);
	/* none */
	len = (size_t)snprintf(env, sizeof(env), "PATH=/bin");
	assert_int_equal(unwind_preloads(env, len + 1, NULL, NULL, &libs, &n), 0);
	assert_int_equal(n, 0);
	free(libs);
}

static bool has_note(const struct profile *p, const char *part, uint32_t *count)
{
	for (uint32_t i = 0; i < p->nnotes; i++) {
		if (strstr(p->notes[i], part)) {
			*count = p->note_counts[i];
			return true;
		}
	}
	return false;
}

/* The symbolizer's drops have notes, once however many unwinders state them (cpu --offcpu):
 * the drops line sends the reader to notes that unwind_outside_code and unwind_fp_broken never
 * had; and a process with no mappings read (gone first) is a counted drop, not silent bare
 * addresses */
static void test_drop_notes(void **state)
{
	struct profile *p = profile__new("cpu");
	const __u64 ips[2] = { 0x401000, 0x402000 };
	uint32_t locs[4], n, count = 0;

	(void)state;
	assert_non_null(p);
	n = stacks__user_locs(p, NULL, 4242, ips, 2, true, locs);
	assert_int_equal(n, 2);
	assert_int_equal(profile__drop(p, STACKS_DROP_NO_MAPPINGS), 1);
	assert_int_equal(profile__add_drop(p, STACKS_DROP_FP_BROKEN, 3), 0);
	unwinder__add_drops(NULL, p);
	unwinder__add_drops(NULL, p);
	/* one stack is one (it said "1 stacks are of processes") */
	assert_true(has_note(p, "1 stack is of a process whose mappings were never read (gone "
			     "before ebprof looked: with -a, a process that lived a few "
			     "milliseconds): its user frames are bare addresses", &count));
	assert_int_equal(count, 1);
	assert_true(has_note(p, "3 stacks end in [truncated] where a walk by frame pointers", &count));
	assert_int_equal(count, 1);
	assert_true(has_note(p, "that is no frame, a return address no call precedes): their "
			     "events count", &count));
	assert_false(has_note(p, "(unwind_outside_code)", &count));
	assert_int_equal(profile__drop(p, STACKS_DROP_OUTSIDE), 0);
	profile__free(p);

	/* and a single one of each: "1 stack ends ...: its events count" */
	p = profile__new("cpu");
	assert_non_null(p);
	assert_int_equal(profile__add_drop(p, STACKS_DROP_FP_BROKEN, 1), 0);
	assert_int_equal(profile__add_drop(p, STACKS_DROP_OUTSIDE, 1), 0);
	assert_int_equal(profile__add_drop(p, STACKS_DROP_AMBIGUOUS, 1), 0);
	unwinder__add_drops(NULL, p);
	assert_true(has_note(p, "1 stack ends in [truncated] where a walk by frame pointers met "
			     "code that keeps none (a saved frame pointer that is no frame, a "
			     "return address no call precedes): its events count", &count));
	assert_true(has_note(p, "1 stack ends in [truncated] at a return address in code", &count));
	assert_true(has_note(p, "(a library mapped and unmapped between two looks): its events "
			     "count", &count));
	assert_true(has_note(p, "1 stack has a frame at an address where two files had code",
			     &count));
	assert_false(has_note(p, "1 stacks", &count));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_notes),
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_fixture_rows),
		cmocka_unit_test(test_asm_rows),
		cmocka_unit_test(test_static_rows),
		cmocka_unit_test(test_libc_rows),
		cmocka_unit_test(test_libc_special),
		cmocka_unit_test(test_ldso_rows),
		cmocka_unit_test(test_libc_contexts),
		cmocka_unit_test(test_bias),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_cache_room),
		cmocka_unit_test(test_no_table),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_preloads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
