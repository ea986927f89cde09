/* Unit tests of probe placement (core/placement.c) on this machine's allocator libraries: for
 * every malloc-family and C++ operator new/delete entry point each library defines, the point
 * chosen is checked against an independent decoding by objdump (binutils) and this file's
 * own reading of the kernel's emulation rules. No root needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/placement.h"
#include "core/probes.h"
#include "symbolize/symbolize.h"
#include "alloc_fns.h"

struct dis {		/* one instruction as objdump printed it */
	uint64_t addr;
	uint8_t b[16];
	unsigned len;
	char mnem[32];
	char ops[128];
};

/* objdump -d -w of [start, end) (virtual addresses). Returns the count, at most max. */
static int disassemble(const char *lib, uint64_t start, uint64_t end, struct dis *out, int max)
{
	char cmd[512], line[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d -w --start-address=%#lx --stop-address=%#lx '%s' 2>/dev/null",
		 (unsigned long)start, (unsigned long)end, lib);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n < max) {
		char *t1 = strchr(line, '\t'), *t2, *p;
		struct dis *d = &out[n];

		if (!t1 || sscanf(line, " %lx:", (unsigned long *)&d->addr) != 1)
			continue;
		t2 = strchr(t1 + 1, '\t');
		memset(d->b, 0, sizeof(d->b));
		d->len = 0;
		for (p = t1 + 1; (!t2 || p < t2) && d->len < sizeof(d->b);) {
			unsigned v;
			int k;

			if (sscanf(p, "%2x%n", &v, &k) != 1)
				break;
			d->b[d->len++] = v;
			p += k;
			while (*p == ' ')
				p++;
		}
		d->mnem[0] = d->ops[0] = 0;
		if (t2) {
			t2[strcspn(t2, "\n")] = 0;
			sscanf(t2 + 1, "%31s %127[^\n]", d->mnem, d->ops);
			/* "data16 cs nopw ...", "rep stos ...", "bnd jmp": the prefix words go first */
			while (!strcmp(d->mnem, "data16") || !strcmp(d->mnem, "cs") ||
			       !strcmp(d->mnem, "ds") || !strcmp(d->mnem, "bnd") ||
			       !strcmp(d->mnem, "notrack") || !strcmp(d->mnem, "rep") ||
			       !strcmp(d->mnem, "repz") || !strcmp(d->mnem, "repnz") ||
			       !strcmp(d->mnem, "lock")) {
				char rest[128];

				snprintf(rest, sizeof(rest), "%s", d->ops);
				d->ops[0] = 0;
				if (sscanf(rest, "%31s %127[^\n]", d->mnem, d->ops) < 1)
					break;
			}
		}
		if (d->len)
			n++;
	}
	pclose(f);
	return n;
}

/* The kernel's emulation rule (arch/x86/kernel/uprobes.c), read again from raw bytes. */
static bool kernel_emulates(const uint8_t *b, unsigned len)
{
	static const char *const nops[] = {
		"\x90", "\x66\x90", "\x0f\x1f\x00", "\x0f\x1f\x40\x00", "\x0f\x1f\x44\x00\x00",
		"\x66\x0f\x1f\x44\x00\x00", "\x0f\x1f\x80\x00\x00\x00\x00",
		"\x0f\x1f\x84\x00\x00\x00\x00\x00",
	};
	unsigned i = 0;
	bool osz = false;
	uint8_t rex = 0;

	if (len >= 1 && len <= 8 && !memcmp(b, nops[len - 1], len))
		return true;
	for (; i < len; i++) {
		if (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e || b[i] == 0xf0)
			return false;	/* refused outright */
		if (b[i] == 0x66)
			osz = true;
		else if (b[i] != 0xf2 && b[i] != 0xf3 && b[i] != 0x64 && b[i] != 0x65 &&
			 b[i] != 0x67)
			break;
	}
	if (len == 1 && b[0] >= 0x50 && b[0] <= 0x57)
		return true;		/* push %rax..%rdi */
	if (len == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return true;		/* push %r8..%r15 */
	if (i < len && b[i] >= 0x40 && b[i] <= 0x4f)
		rex = b[i++];
	if (i >= len)
		return false;
	if (b[i] == 0x90)	/* but not xchg %eax,%r8d: a probe must never skip it */
		return !(rex & 1);
	if (b[i] == 0xe8 || b[i] == 0xe9 || b[i] == 0xeb || (b[i] >= 0x70 && b[i] <= 0x7f) ||
	    (b[i] == 0x0f && i + 1 < len && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f))
		return !osz;
	return false;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool leaves_straight_line(const struct dis *d)
{
	return d->mnem[0] == 'j' || starts(d->mnem, "call") || starts(d->mnem, "ret") ||
	       starts(d->mnem, "loop") || starts(d->mnem, "syscall") || starts(d->mnem, "int") ||
	       starts(d->mnem, "ud") || starts(d->mnem, "hlt") || starts(d->mnem, "iret");
}

/* The argument-register bits of the registers named in an AT&T operand. */
static unsigned arg_bits_of(const char *opnd)
{
	static const struct {
		const char *name;
		unsigned bit;
	} regs[] = {
		{ "%rdi", PLACE_RDI }, { "%edi", PLACE_RDI }, { "%di", PLACE_RDI },
		{ "%dil", PLACE_RDI }, { "%rsi", PLACE_RSI }, { "%esi", PLACE_RSI },
		{ "%si", PLACE_RSI }, { "%sil", PLACE_RSI }, { "%rdx", PLACE_RDX },
		{ "%edx", PLACE_RDX }, { "%dx", PLACE_RDX }, { "%dl", PLACE_RDX },
		{ "%dh", PLACE_RDX }, { "%rcx", PLACE_RCX }, { "%ecx", PLACE_RCX },
		{ "%cx", PLACE_RCX }, { "%cl", PLACE_RCX }, { "%ch", PLACE_RCX },
		{ "%r8", PLACE_R8 }, { "%r8d", PLACE_R8 }, { "%r8w", PLACE_R8 },
		{ "%r8b", PLACE_R8 }, { "%r9", PLACE_R9 }, { "%r9d", PLACE_R9 },
		{ "%r9w", PLACE_R9 }, { "%r9b", PLACE_R9 },
	};

	if (opnd[0] != '%')	/* memory or immediate: no register written */
		return 0;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(opnd, regs[i].name))
			return regs[i].bit;
	return 0;
}

/* The last operand at the top level (AT&T: the destination). */
static void last_operand(const char *ops, char *out, size_t len)
{
	int depth = 0;
	const char *last = ops;

	for (const char *p = ops; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (*p == ',' && !depth)
			last = p + 1;
	}
	snprintf(out, len, "%s", last);
	out[strcspn(out, " #")] = 0;
}

/* Argument registers an instruction writes; *rsp_by its %rsp step, *rsp_known false when it
 * moves %rsp otherwise. Fails the test on a mnemonic this reading does not know. */
static unsigned writes(const struct dis *d, int *rsp_by, bool *rsp_known)
{
	static const char *const dest_only[] = {
		"mov", "lea", "add", "sub", "and", "or", "xor", "shl", "shr", "sar", "rol", "ror",
		"neg", "not", "inc", "dec", "cmov", "set", "bsf", "bsr", "popcnt", "tzcnt", "lzcnt",
		"adc", "sbb", "bswap", "imul", "shld", "shrd", "sal",
	};
	static const char *const none[] = { "cmp", "test", "nop", "endbr64", "bt", "prefetch" };
	char dst[128];

	*rsp_by = 0;
	*rsp_known = true;
	last_operand(d->ops, dst, sizeof(dst));
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		if (starts(d->mnem, none[i]) && !starts(d->mnem, "cmpxchg"))
			return 0;
	if (starts(d->mnem, "push")) {
		*rsp_by = 8;
		return 0;
	}
	if (starts(d->mnem, "pop")) {
		*rsp_by = -8;
		return arg_bits_of(dst);
	}
	if (starts(d->mnem, "mul") || starts(d->mnem, "div") || starts(d->mnem, "idiv") ||
	    (starts(d->mnem, "imul") && !strchr(d->ops, ',')) || !strcmp(d->mnem, "cqto") ||
	    !strcmp(d->mnem, "cltd"))
		return PLACE_RDX;	/* and %rax, not an argument */
	if (starts(d->mnem, "xchg")) {
		char first[128];

		snprintf(first, sizeof(first), "%s", d->ops);
		first[strcspn(first, ",")] = 0;
		return arg_bits_of(first) | arg_bits_of(dst);
	}
	for (size_t i = 0; i < sizeof(dest_only) / sizeof(dest_only[0]); i++) {
		if (!starts(d->mnem, dest_only[i]))
			continue;
		if (!strcmp(dst, "%rsp") || !strcmp(dst, "%esp")) {
			long imm;

			if ((starts(d->mnem, "sub") || starts(d->mnem, "add")) &&
			    sscanf(d->ops, "$%li", &imm) == 1)
				*rsp_by = starts(d->mnem, "sub") ? (int)imm : -(int)imm;
			else
				*rsp_known = false;
		}
		return arg_bits_of(dst);
	}
	fail_msg("%s: an instruction this test cannot read (%s %s): teach writes() about it",
		 __func__, d->mnem, d->ops);
	return 0;
}

/* A symbol's address and size as nm reads them from the dynamic symbol table. */
static bool nm_symbol(const char *lib, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[512], line[512];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D -S --defined-only '%s' 2>/dev/null", lib);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, s;
		char type, sym[256];

		if (sscanf(line, "%lx %lx %c %255s", &a, &s, &type, sym) != 4)
			continue;
		sym[strcspn(sym, "@")] = 0;
		if (strcmp(sym, name) || (type != 'T' && type != 'W' && type != 'i'))
			continue;
		*addr = a;
		*size = s;
		found = true;
		break;
	}
	pclose(f);
	return found;
}

static bool have_objdump(void)
{
	return system("objdump --version >/dev/null 2>&1") == 0 &&
	       system("nm --version >/dev/null 2>&1") == 0;
}

/* Everything the placement of fn in lib must satisfy, checked from objdump's decoding. */
static void check_one(const char *lib, const struct alloc_fn *fn, int *moved, int *checked)
{
	struct dis d[4096];
	struct placement pl;
	uint64_t off, vaddr, size, bias, point;
	int n, rsp = 0;
	unsigned args = placement_arg_mask(fn->nargs);

	if (sym_elf_symbol_offset(lib, fn->name, &off) || !nm_symbol(lib, fn->name, &vaddr, &size))
		return;		/* not defined by this library */
	bias = vaddr - off;
	assert_int_equal(probe_place(lib, off, size, args, test_place_flags(fn), &pl), 0);
	print_message("  %-40s %-28s %s\n", strrchr(lib, '/') + 1, fn->name, pl.reason);
	(*checked)++;
	assert_int_equal(pl.entry, off);
	n = disassemble(lib, vaddr, vaddr + (size ? size : 64), d, 4096);
	assert_true(n > 0);
	assert_int_equal(d[0].addr, vaddr);

	if (pl.offset == off) {
		assert_false(pl.moved);
		if (kernel_emulates(d[0].b, d[0].len)) {
			assert_non_null(strstr(pl.reason, "is emulated"));
			assert_int_equal(pl.entry_fate, INSN_EMULATED);
			return;
		}
		/* a documented fallback; where it names a culprit register, objdump agrees */
		assert_true(starts(pl.reason, "entry: "));
		assert_int_not_equal(pl.entry_fate, INSN_EMULATED);
		if (strstr(pl.reason, "an argument")) {
			unsigned long at;
			const char *w = strstr(pl.reason, " writes %");
			const char *a = strstr(pl.reason, " at +");
			bool found = false;

			assert_non_null(w);
			assert_non_null(a);
			at = strtoul(a + 5, NULL, 16);
			for (int i = 0; i < n; i++) {
				int by;
				bool known;
				char reg[8];

				if (d[i].addr != vaddr + at)
					continue;
				snprintf(reg, sizeof(reg), "%%%.*s", (int)strcspn(w + 9, ","), w + 9);
				assert_true(writes(&d[i], &by, &known) & arg_bits_of(reg) & args);
				found = true;
			}
			assert_true(found);
		}
		return;
	}

	/* moved: the point is the first emulated instruction of a straight line from the entry */
	(*moved)++;
	assert_true(pl.moved);
	point = pl.offset + bias;
	for (int i = 0; i < n; i++) {
		int by;
		bool known;

		if (d[i].addr == point) {
			assert_true(kernel_emulates(d[i].b, d[i].len));
			assert_int_equal(rsp, pl.rsp_delta);
			if (fn->returns)
				assert_int_equal(rsp, 0);	/* *(%rsp) is the return address */
			break;
		}
		assert_true(d[i].addr < point);
		assert_false(kernel_emulates(d[i].b, d[i].len));
		assert_false(leaves_straight_line(&d[i]));
		assert_int_equal(writes(&d[i], &by, &known) & args, 0);
		assert_true(known);
		rsp += by;
	}
	/* no branch of the function lands between the entry and the point (or on it) */
	for (int i = 0; i < n; i++) {
		unsigned long t;

		if (d[i].mnem[0] != 'j' && !starts(d[i].mnem, "call"))
			continue;
		if (sscanf(d[i].ops, "%lx", &t) == 1)
			assert_false(t > vaddr && t <= point);
	}
}

static void test_every_allocator_entry_point(void **state)
{
	int libs = 0;

	if (!have_objdump()) {
		fprintf(stderr, "skip: objdump (binutils) is not installed\n");
		skip();
	}
	for (size_t l = 0; l < TEST_NLIBS; l++) {
		int moved = 0, checked = 0;

		if (access(test_alloc_libs[l], R_OK)) {
			print_message("  %s: not installed (scripts/install-deps.sh installs it)\n",
				      test_alloc_libs[l]);
			continue;
		}
		libs++;
		for (size_t f = 0; f < TEST_NFNS; f++)
			check_one(test_alloc_libs[l], &test_alloc_fns[f], &moved, &checked);
		print_message("  %s: %d entry points, %d probed past their first instruction\n",
			      test_alloc_libs[l], checked, moved);
		assert_true(checked > 0);
	}
	assert_true(libs > 0);
}

/* glibc's free: `test %rdi,%rdi` is single-stepped, the `je` after it is the point. */
static void test_glibc_free_goes_on_its_je(void **state)
{
	const char *libc = test_alloc_libs[0];
	uint8_t code[16];
	struct placement pl;
	uint64_t off;
	FILE *f;

	assert_int_equal(sym_elf_symbol_offset(libc, "free", &off), 0);
	f = fopen(libc, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fread(code, 1, sizeof(code), f), sizeof(code));
	fclose(f);
	if (!(code[0] == 0x48 && code[1] == 0x85 && code[2] == 0xff)) {
		fprintf(stderr, "skip: this glibc's free does not begin with test %%rdi,%%rdi\n");
		skip();
	}
	assert_int_equal(probe_place(libc, off, 0, PLACE_RDI, 0, &pl), 0);
	assert_int_equal(pl.offset, off + 3);
	assert_int_equal(pl.rsp_delta, 0);
	assert_int_equal(pl.entry_fate, INSN_SINGLE_STEPPED);
	assert_true(starts(pl.insn, "je"));
}

/* The rules on hand-made code: every case names what it proves. */
static void test_emulation_rules(void **state)
{
	static const struct {
		const char *bytes;
		unsigned len;
		enum insn_fate fate;
	} cases[] = {
		{ "\x55", 1, INSN_EMULATED },				/* push %rbp */
		{ "\x41\x54", 2, INSN_EMULATED },			/* push %r12 */
		{ "\x74\x10", 2, INSN_EMULATED },			/* je rel8 */
		{ "\x0f\x84\x10\x00\x00\x00", 6, INSN_EMULATED },	/* je rel32 */
		{ "\xe8\x00\x00\x00\x00", 5, INSN_EMULATED },		/* call rel32 */
		{ "\xe9\x00\x00\x00\x00", 5, INSN_EMULATED },		/* jmp rel32 */
		{ "\xeb\x00", 2, INSN_EMULATED },			/* jmp rel8 */
		{ "\x90", 1, INSN_EMULATED },				/* nop */
		{ "\x0f\x1f\x44\x00\x00", 5, INSN_EMULATED },		/* nopl 0(%rax,%rax) */
		{ "\xf2\xe9\x00\x00\x00\x00", 6, INSN_EMULATED },	/* bnd jmp */
		{ "\x48\x85\xff", 3, INSN_SINGLE_STEPPED },		/* test %rdi,%rdi */
		{ "\xf3\x0f\x1e\xfa", 4, INSN_SINGLE_STEPPED },		/* endbr64 */
		{ "\x48\x89\xf8", 3, INSN_SINGLE_STEPPED },		/* mov %rdi,%rax */
		{ "\x48\x83\xec\x08", 4, INSN_SINGLE_STEPPED },		/* sub $8,%rsp */
		{ "\x48\x50", 2, INSN_SINGLE_STEPPED },			/* rex.W push %rax */
		{ "\x66\x50", 2, INSN_SINGLE_STEPPED },			/* push %ax */
		{ "\xc3", 1, INSN_SINGLE_STEPPED },			/* ret */
		{ "\xff\xe0", 2, INSN_SINGLE_STEPPED },			/* jmp *%rax */
		{ "\x66\x0f\x1f\x84\x00\x00\x00\x00\x00", 9, INSN_SINGLE_STEPPED }, /* nopw */
		{ "\x3e\xff\xe0", 3, INSN_REFUSED },			/* notrack jmp *%rax */
		{ "\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00", 9, INSN_REFUSED }, /* cs nopl */
		{ "\xf0\x48\x0f\xb1\x0e", 5, INSN_REFUSED },		/* lock cmpxchg */
		{ "\x0f\x05", 2, INSN_REFUSED },			/* syscall */
		{ "\xcc", 1, INSN_REFUSED },				/* int3 */
		{ "\x41\x90", 2, INSN_REFUSED },	/* xchg %eax,%r8d: the kernel would skip it */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned len;
		enum insn_fate f = placement_insn_fate((const uint8_t *)cases[i].bytes,
						       cases[i].len, &len);

		if (f != cases[i].fate)
			fail_msg("case %zu: %s, expected %s", i, placement_fate_name(f),
				 placement_fate_name(cases[i].fate));
		assert_int_equal(len, cases[i].len);
		assert_int_equal(kernel_emulates((const uint8_t *)cases[i].bytes, len),
				 cases[i].fate == INSN_EMULATED);
	}
}

/* probes.c: every probe at its placement, a return probe on the same point as its entry. */
static void test_probes_use_the_placement(void **state)
{
	struct alloc_lib lib;

	assert_int_equal(probes__find_allocator(getpid(), &lib), 0);
	for (uint32_t o = 0; o < lib.nobjs; o++) {
		const struct alloc_obj *ob = &lib.objs[o];

		for (uint32_t i = 0; i < ob->nprobes; i++) {
			assert_true(ob->entries[i] <= ob->offsets[i]);
			assert_true(ob->reasons[i][0]);
			for (uint32_t r = 0; r < ob->nret; r++)
				if (ob->ret_cookies[r] == ob->cookies[i])
					assert_int_equal(ob->ret_offsets[r], ob->offsets[i]);
		}
	}
}

/* Each rule on a hand-written prologue (tests/fixtures/placement_cases.S). */
static void test_rules_on_written_prologues(void **state)
{
	static const struct {
		const char *fn;
		unsigned flags;
		int64_t at;		/* -1: the entry */
		int32_t rsp_delta;
		const char *why;	/* in the reason */
	} cases[] = {
		{ "pc_plain", PLACE_KEEP_RSP, 6, 0, "first emulated" },
		{ "pc_back_edge", PLACE_KEEP_RSP, -1, 0, "may land within" },
		{ "pc_writes_arg", PLACE_KEEP_RSP, -1, 0, "writes %rdi" },
		{ "pc_rsp_moves", PLACE_KEEP_RSP, -1, 0, "rsp moves by 8" },
		{ "pc_rsp_moves", 0, 7, 8, "first emulated" },
		{ "pc_endbr", PLACE_KEEP_RSP, 4, 0, "endbr64 is single-stepped" },
		{ "pc_returns_first", 0, -1, 0, "leaves the straight line" },
		{ "pc_target", 0, -1, 0, "may land within" },
		{ "pc_stores_ret", 0, -1, 0, "store over the return address" },
	};
	const char *out = getenv("OUT");
	char path[4096];

	snprintf(path, sizeof(path), "%s/fixtures/placement_cases.so", out ? out : "build");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct placement pl;
		uint64_t off;

		assert_int_equal(sym_elf_symbol_offset(path, cases[i].fn, &off), 0);
		assert_int_equal(probe_place(path, off, 0, PLACE_RDI, cases[i].flags, &pl), 0);
		print_message("  %-18s %s\n", cases[i].fn, pl.reason);
		if (!strstr(pl.reason, cases[i].why))
			fail_msg("%s: '%s' does not say '%s'", cases[i].fn, pl.reason, cases[i].why);
		assert_int_equal(pl.offset, cases[i].at < 0 ? off : off + cases[i].at);
		assert_int_equal(pl.moved, cases[i].at >= 0);
		assert_int_equal(pl.rsp_delta, cases[i].rsp_delta);
	}
}

/* One placement of off in path (KEEP_RSP, %rdi read) by a placer of its own; the memo's
 * counts after it. */
static void place_once(const char *path, uint64_t off, struct placement *out, size_t *loads,
		       size_t *hits)
{
	struct placer *pl = placer__new(path);

	assert_non_null(pl);
	assert_int_equal(placer__place(pl, off, 0, PLACE_RDI, PLACE_KEEP_RSP, out), 0);
	placer__free(pl);
	placement_memo_stats(loads, hits);
}

/* Answers are kept by file and question: a placer of a file placed before decodes nothing
 * and gives the same answer; the file rewritten (same inode and size, another mtime) is read
 * again and answered from its new code. */
static void test_placements_kept_by_file(void **state)
{
	static const uint8_t xor_edi[3] = { 0x31, 0xff, 0x90 };	/* xor %edi,%edi; nop */
	const char *out = getenv("OUT");
	char src[4096], path[4096], cmd[8300];
	struct placement a, b, c;
	size_t loads0, hits0, loads1, hits1, loads2, hits2;
	struct timespec ts[2];
	uint64_t off;
	int fd;

	snprintf(src, sizeof(src), "%s/fixtures/placement_cases.so", out ? out : "build");
	snprintf(path, sizeof(path), "%s/fixtures/placement_memo.XXXXXX", out ? out : "build");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(sym_elf_symbol_offset(path, "pc_plain", &off), 0);

	placement_memo_stats(&loads0, &hits0);
	place_once(path, off, &a, &loads1, &hits1);
	assert_int_equal(loads1, loads0 + 1);
	assert_int_equal(a.offset, off + 6);		/* the je, as in the rules' test */

	place_once(path, off, &b, &loads2, &hits2);
	assert_int_equal(loads2, loads1);		/* not read again */
	assert_int_equal(hits2, hits1 + 1);
	assert_memory_equal(&a, &b, sizeof(a));

	/* its first instruction now writes %rdi: the entry, from the code as it is now */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, xor_edi, sizeof(xor_edi), (off_t)off), (ssize_t)sizeof(xor_edi));
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec += 100;
	ts[1] = ts[0];
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
	place_once(path, off, &c, &loads2, &hits2);
	assert_int_equal(loads2, loads1 + 1);
	assert_int_equal(c.offset, off);
	if (!strstr(c.reason, "writes %rdi"))
		fail_msg("rewritten file: '%s'", c.reason);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulation_rules),
		cmocka_unit_test(test_glibc_free_goes_on_its_je),
		cmocka_unit_test(test_rules_on_written_prologues),
		cmocka_unit_test(test_probes_use_the_placement),
		cmocka_unit_test(test_every_allocator_entry_point),
		cmocka_unit_test(test_placements_kept_by_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
