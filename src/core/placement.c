/* Probe placement: where a uprobe on an allocator function costs least.
 *
 * The kernel replaces the probed instruction with int3; after the BPF program ran it must
 * execute the original instruction. arch/x86/kernel/uprobes.c emulates a few kinds in the trap
 * handler (branch_setup_xol_ops, push_setup_xol_ops): jmp rel8/rel32, call rel32, jcc
 * rel8/rel32 (none with a 0x66 prefix), push of a 64-bit register (0x50-0x57, or 0x41 and
 * 0x50-0x57), and the kernel's own nop forms (x86_nops[1..8], and any prefixes before 0x90).
 * Every other instruction is single-stepped out of line: a second trap, about 20 us here
 * against 1-2 us (docs/PERFORMANCE.md). endbr64 is not emulated.
 *
 * The rule: probe the entry when its instruction is emulated. Otherwise walk the straight-line
 * code from the entry and probe the first emulated instruction, provided that
 *  - every instruction before it falls through: a branch of any kind ends the walk, and since
 *    every direct branch is emulated, the point is the first branch at the latest. So every
 *    call reaches the point, and nothing returns before it: an early exit such as
 *    free(NULL)'s `je` is itself the point (the program sees free(NULL) and ignores it);
 *  - nothing before it writes an argument register the entry program reads (any part of it),
 *    or stores where the return address may be;
 *  - %rsp moves only by push, pop and add/sub of an immediate (rsp_delta says by how much),
 *    and not at all when a return probe shares the point (the kernel hijacks *(%rsp));
 *  - no direct branch anywhere in the function, and no byte pattern anywhere else in the
 *    executable segment that could be a rel32 (or nearby rel8) branch, lands in
 *    (entry, point]: a loop back into the prologue would make the point fire twice a call.
 * Anything else, or any doubt, is the entry. A return probe goes on the same point as the
 * entry probe, so both fire for exactly the same calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <capstone/capstone.h>
#include "core/placement.h"

/* libcapstone is opened on first use (dlopen), not linked into ebprof: the dynamic loader's
 * relocation of its tables cost every start of every mode ~1 ms, and only mem places probes. */
static struct {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*close)(csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	size_t (*disasm)(csh handle, const uint8_t *code, size_t size, uint64_t address,
			 size_t count, cs_insn **insn);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	cs_insn *(*malloc)(csh handle);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*regs_access)(csh handle, const cs_insn *insn, cs_regs regs_read,
			      uint8_t *regs_read_count, cs_regs regs_write,
			      uint8_t *regs_write_count);
} cs_fn;

/* cs_open, with libcapstone.so.4 opened first (CS_ERR_MEM when it cannot be) */
static cs_err cs_open_lazy(cs_arch arch, cs_mode mode, csh *handle)
{
	static const char *const names[] = {
		"cs_open", "cs_close", "cs_option", "cs_disasm", "cs_disasm_iter", "cs_malloc",
		"cs_free", "cs_regs_access",
	};
	void *fns[sizeof(names) / sizeof(names[0])];
	void *h;

	_Static_assert(sizeof(fns) == sizeof(cs_fn), "one name per function");
	if (!cs_fn.open) {
		h = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return CS_ERR_HANDLE;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!(fns[i] = dlsym(h, names[i])))
				return CS_ERR_HANDLE;
		memcpy(&cs_fn, fns, sizeof(cs_fn));	/* kept open for the run */
	}
	return cs_fn.open(arch, mode, handle);
}

#define cs_open		cs_open_lazy
#define cs_close	cs_fn.close
#define cs_option	cs_fn.option
#define cs_disasm	cs_fn.disasm
#define cs_disasm_iter	cs_fn.disasm_iter
#define cs_malloc	cs_fn.malloc
#define cs_free		cs_fn.free
#define cs_regs_access	cs_fn.regs_access

/* How far the walk goes: prologues that matter are a few instructions long. */
#define PLACE_MAX_INSNS	24
#define PLACE_MAX_BYTES	128

/* A file as the kernel's uprobes know it (inode) and as it was when read (size, mtime): a file
 * replaced or rewritten since is another one. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct placer {
	struct file_id id;
	char *path;		/* decoded from only on a memo miss, when the file is known */
	bool loaded;
	int load_err;		/* of that load: 0, or a negative errno */
	csh cs;
	uint8_t *text;		/* the executable segment's bytes */
	uint64_t text_off;	/* its file offset */
	uint64_t text_len;
	struct {
		uint64_t off, size;
	} *syms;		/* function symbols by file offset, for sizes */
	size_t nsyms;
	uint8_t *rel32;		/* bit per segment byte: a rel32 call/jmp/jcc pattern lands on it */
	bool rel32_done;
};

/* x86_nops[] of arch/x86/include/asm/nops.h, 64-bit: emulated as a jump to the next insn. */
static const uint8_t kernel_nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* One-byte opcodes uprobe_init_insn() refuses in 64-bit code (good_insns_64 zeros). */
static bool refused_opcode1(uint8_t op)
{
	switch (op) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f:
	case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60: case 0x61: case 0x62:
	case 0x6c: case 0x6d: case 0x6e: case 0x6f: case 0x82: case 0x9a: case 0xcc:
	case 0xcd: case 0xce: case 0xcf: case 0xd4: case 0xd5: case 0xd6: case 0xe4:
	case 0xe5: case 0xe6: case 0xe7: case 0xea: case 0xec: case 0xed: case 0xee:
	case 0xef: case 0xf1: case 0xf4: case 0xfa: case 0xfb:
		return true;
	}
	return false;
}

/* Two-byte (0f xx) opcodes it refuses (good_2byte_insns zeros). */
static bool refused_opcode2(uint8_t op)
{
	switch (op) {
	case 0x00: case 0x01: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x0b: case 0x30: case 0x34: case 0x35: case 0x37: case 0x78: case 0x79:
	case 0xae:
		return true;
	}
	return false;
}

/* The kernel's decision, from the bytes of one instruction of length len. */
static enum insn_fate fate_of(const uint8_t *b, unsigned len)
{
	unsigned i = 0, npfx;
	bool opsize = false;
	uint8_t rex = 0, op;

	if (len >= 1 && len <= 8 && !memcmp(b, kernel_nops[len], len))
		return INSN_EMULATED;
	for (; i < len; i++) {
		switch (b[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0xf0:
			return INSN_REFUSED;	/* is_prefix_bad() */
		case 0x66:
			opsize = true;
			continue;
		case 0x64: case 0x65: case 0x67: case 0xf2: case 0xf3:
			continue;
		}
		break;
	}
	npfx = i;
	if (i < len && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i >= len)
		return INSN_REFUSED;
	op = b[i];
	if (op == 0xc4 || op == 0xc5)	/* VEX: never emulated, rarely refused */
		return INSN_SINGLE_STEPPED;
	if (refused_opcode1(op))
		return INSN_REFUSED;
	if (op == 0x0f && i + 1 < len && refused_opcode2(b[i + 1]))
		return INSN_REFUSED;
	if (op == 0x8e && i + 1 < len && ((b[i + 1] >> 3) & 7) == 2)
		return INSN_REFUSED;	/* mov to %ss masks exceptions */

	if (op == 0x90) {		/* "prefix* + nop" */
		/* with REX.B it is xchg %eax,%r8d, which the kernel's "nop" would skip: a probe
		 * there breaks the program, so never choose it (6.19 stops emulating it) */
		return rex & 1 ? INSN_REFUSED : INSN_EMULATED;
	}
	if (op == 0xeb || op == 0xe9 || op == 0xe8 || (op >= 0x70 && op <= 0x7f) ||
	    (op == 0x0f && i + 1 < len && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f))
		return opsize ? INSN_REFUSED : INSN_EMULATED;
	if (op >= 0x50 && op <= 0x57 && npfx == 0 && (len == 1 || (len == 2 && rex == 0x41)))
		return INSN_EMULATED;
	return INSN_SINGLE_STEPPED;
}

static const char *const fate_names[] = {
	[INSN_EMULATED] = "emulated",
	[INSN_SINGLE_STEPPED] = "single-stepped",
	[INSN_REFUSED] = "refused by the kernel",
};

enum insn_fate placement_insn_fate(const uint8_t *code, size_t len, unsigned *ilen)
{
	enum insn_fate f = INSN_REFUSED;
	cs_insn *insn = NULL;
	csh cs;

	*ilen = 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return INSN_REFUSED;
	if (cs_disasm(cs, code, len, 0, 1, &insn) == 1) {
		*ilen = insn->size;
		f = fate_of(code, insn->size);
		cs_free(insn, 1);
	}
	cs_close(&cs);
	return f;
}

/* The argument-register bit of a general register (any width), or 0. */
static unsigned arg_bit(unsigned reg)
{
	switch (reg) {
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return PLACE_RDI;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return PLACE_RSI;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return PLACE_RDX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return PLACE_RCX;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return PLACE_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return PLACE_R9;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return PLACE_RBP;
	}
	return 0;
}

static bool is_rsp(unsigned reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP ||
	       reg == X86_REG_SPL;
}

static bool is_branch(const cs_insn *in)
{
	const cs_detail *d = in->detail;

	for (uint8_t i = 0; i < d->groups_count; i++)
		switch (d->groups[i]) {
		case CS_GRP_JUMP: case CS_GRP_CALL: case CS_GRP_RET: case CS_GRP_INT:
		case CS_GRP_IRET:
			return true;
		}
	/* system calls and traps leave the straight line too */
	return in->id == X86_INS_SYSCALL || in->id == X86_INS_SYSENTER ||
	       in->id == X86_INS_UD2 || in->id == X86_INS_HLT;
}

/* How an instruction moves %rsp: true with *by set for push/pop/add/sub imm/lea imm(%rsp). */
static bool rsp_step(const cs_insn *in, int32_t *by)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_PUSH:
		*by = 8;
		return x->prefix[2] == 0;	/* a 16-bit push moves it by 2: not worth it */
	case X86_INS_POP:
		*by = -8;
		return x->prefix[2] == 0 && !(x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
					      is_rsp(x->operands[0].reg));
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
		    x->operands[0].reg != X86_REG_RSP || x->operands[1].type != X86_OP_IMM)
			return false;
		*by = (int32_t)(in->id == X86_INS_SUB ? x->operands[1].imm : -x->operands[1].imm);
		return true;
	case X86_INS_LEA:
		if (x->op_count != 2 || x->operands[0].reg != X86_REG_RSP ||
		    x->operands[1].type != X86_OP_MEM || x->operands[1].mem.base != X86_REG_RSP ||
		    x->operands[1].mem.index != X86_REG_INVALID || x->operands[1].mem.segment)
			return false;
		*by = (int32_t)-x->operands[1].mem.disp;
		return true;
	}
	return false;
}

/* Could the instruction store over the return address, which is at %rsp + delta now? */
static bool writes_return_address(const cs_insn *in, int32_t delta)
{
	const cs_x86 *x = &in->detail->x86;

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM || !(op->access & CS_AC_WRITE) ||
		    (op->mem.base != X86_REG_RSP && op->mem.index != X86_REG_RSP))
			continue;
		if (op->mem.index != X86_REG_INVALID || op->mem.base != X86_REG_RSP)
			return true;	/* an index: any address */
		if (op->mem.disp < delta + 8 && op->mem.disp + (op->size ? op->size : 8) > delta)
			return true;
	}
	return false;
}

/* The target of a direct jmp/jcc/call, or false. */
static bool direct_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_detail *d = in->detail;
	bool br = false;

	for (uint8_t i = 0; i < d->groups_count; i++)
		br |= d->groups[i] == CS_GRP_JUMP || d->groups[i] == CS_GRP_CALL;
	if (!br || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static int load_elf(struct placer *p, const char *path)
{
	Elf *elf = NULL;
	size_t nph;
	int fd, err = -ENOEXEC;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph))
		goto out;
	/* the executable segment (one in every x86-64 ELF the linkers write) */
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		p->text = malloc(ph.p_filesz ? ph.p_filesz : 1);
		if (!p->text) {
			err = -ENOMEM;
			goto out;
		}
		if (pread(fd, p->text, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz) {
			err = -EIO;
			goto out;
		}
		p->text_off = ph.p_offset;
		p->text_len = ph.p_filesz;
		break;
	}
	if (!p->text)
		goto out;
	/* function sizes, for callers that know only an offset */
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t n;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			n = sh.sh_size / sh.sh_entsize;
			for (size_t j = 0; data && j < n; j++) {
				GElf_Sym s;
				Elf_Scn *sec;
				GElf_Shdr ssh;
				void *tmp;

				if (!gelf_getsym(data, j, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    !s.st_size || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
					continue;
				sec = elf_getscn(elf, s.st_shndx);
				if (!sec || !gelf_getshdr(sec, &ssh))
					continue;
				tmp = realloc(p->syms, (p->nsyms + 1) * sizeof(*p->syms));
				if (!tmp) {
					err = -ENOMEM;
					goto out;
				}
				p->syms = tmp;
				p->syms[p->nsyms].off = s.st_value - ssh.sh_addr + ssh.sh_offset;
				p->syms[p->nsyms++].size = s.st_size;
			}
		}
	}
	err = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/*
 * Placements already made, by file and question: a process tree execs the same programs over
 * and over, and each exec placed every probe of its C library again (decoding the whole
 * executable segment for the rel32 map: ~2 ms of the tracer's time per exec, with the traced
 * process stopped meanwhile). Kept for the tracer's lifetime, at most PLACE_MEMO_MAX answers.
 */
#define PLACE_MEMO_MAX 4096

struct place_memo {
	struct file_id id;
	uint64_t sym_off, sym_size;
	unsigned arg_regs, flags;
	int ret;
	struct placement out;
};

static struct {
	pthread_mutex_t lock;
	struct place_memo *m;
	size_t n, cap;
	size_t loads, hits;
} memo = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool same_file(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* (under memo.lock) the answer to the question, or NULL */
static struct place_memo *memo_find(const struct file_id *id, uint64_t sym_off, uint64_t sym_size,
				    unsigned arg_regs, unsigned flags)
{
	for (size_t i = 0; i < memo.n; i++) {
		struct place_memo *m = &memo.m[i];

		if (m->sym_off == sym_off && m->sym_size == sym_size && m->arg_regs == arg_regs &&
		    m->flags == flags && same_file(&m->id, id))
			return m;
	}
	return NULL;
}

/* (under memo.lock) whether id's code was read before */
static bool memo_knows(const struct file_id *id)
{
	for (size_t i = 0; i < memo.n; i++)
		if (same_file(&memo.m[i].id, id))
			return true;
	return false;
}

static void memo_put(const struct place_memo *q)
{
	pthread_mutex_lock(&memo.lock);
	if (memo.n == memo.cap && memo.cap < PLACE_MEMO_MAX) {
		size_t cap = memo.cap ? memo.cap * 2 : 32;
		struct place_memo *m = realloc(memo.m, cap * sizeof(*m));

		if (m) {
			memo.m = m;
			memo.cap = cap;
		}
	}
	if (memo.n < memo.cap)
		memo.m[memo.n++] = *q;
	pthread_mutex_unlock(&memo.lock);
}

void placement_memo_stats(size_t *loads, size_t *hits)
{
	pthread_mutex_lock(&memo.lock);
	*loads = memo.loads;
	*hits = memo.hits;
	pthread_mutex_unlock(&memo.lock);
}

/* The decoder and the file's code: 0, or a negative errno (capstone missing: -ELIBACC). */
static int placer_load(struct placer *p)
{
	int err;

	if (p->loaded)
		return p->load_err;
	switch (cs_open(CS_ARCH_X86, CS_MODE_64, &p->cs)) {
	case CS_ERR_OK:
		break;
	case CS_ERR_HANDLE:	/* libcapstone.so.4 missing (apt-get install libcapstone4) */
		return -ELIBACC;
	default:
		return -ENOMEM;
	}
	cs_option(p->cs, CS_OPT_DETAIL, CS_OPT_ON);
	p->loaded = true;
	err = p->load_err = load_elf(p, p->path);
	pthread_mutex_lock(&memo.lock);
	memo.loads++;
	pthread_mutex_unlock(&memo.lock);
	return err;
}

struct placer *placer__new(const char *path)
{
	struct placer *p = calloc(1, sizeof(*p));
	struct stat st;
	bool known;
	int err;

	if (!p)
		return NULL;
	p->path = strdup(path);
	if (!p->path || stat(path, &st)) {
		err = p->path ? errno : ENOMEM;
		free(p->path);
		free(p);
		errno = err;
		return NULL;
	}
	p->id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
				  .mtime = st.st_mtim };
	pthread_mutex_lock(&memo.lock);
	known = memo_knows(&p->id);
	pthread_mutex_unlock(&memo.lock);
	if (known)
		return p;	/* its code was read before: again only if a question is new */
	err = placer_load(p);
	if (err) {
		placer__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void placer__free(struct placer *p)
{
	if (!p)
		return;
	if (p->loaded)
		cs_close(&p->cs);
	free(p->path);
	free(p->text);
	free(p->syms);
	free(p->rel32);
	free(p);
}

static uint64_t symbol_size(const struct placer *p, uint64_t off)
{
	uint64_t size = 0;

	for (size_t i = 0; i < p->nsyms; i++)
		if (p->syms[i].off == off && p->syms[i].size > size)
			size = p->syms[i].size;
	return size;
}

/* The target of a rel32 call/jmp/jcc byte pattern at a, or false. */
static inline bool rel32_at(const struct placer *p, uint64_t a, uint64_t *target)
{
	uint64_t end = p->text_off + p->text_len;
	const uint8_t *b = p->text + (a - p->text_off);
	unsigned n;
	int32_t rel;

	if ((b[0] == 0xe8 || b[0] == 0xe9) && a + 5 <= end)
		n = 1;
	else if (b[0] == 0x0f && a + 6 <= end && b[1] >= 0x80 && b[1] <= 0x8f)
		n = 2;
	else
		return false;
	rel = (int32_t)(b[n] | b[n + 1] << 8 | b[n + 2] << 16 | (uint32_t)b[n + 3] << 24);
	*target = a + n + 4 + rel;
	return true;
}

/* Where every rel32 pattern of the segment lands, as a bitmap: one pass per file, then each
 * function's check reads a few bits (and searches for the sources only on a hit, rare). */
static void collect_rel32(struct placer *p)
{
	uint64_t base = p->text_off, end = p->text_off + p->text_len, t;

	p->rel32_done = true;
	p->rel32 = calloc(p->text_len / 8 + 1, 1);
	if (!p->rel32)
		return;
	for (uint64_t i = 0; i + 5 <= p->text_len; i++) {
		uint8_t c = p->text[i];

		/* the common case first: most bytes start no pattern */
		if (c != 0xe8 && c != 0xe9 && c != 0x0f)
			continue;
		if (rel32_at(p, base + i, &t) && t >= base && t < end)
			p->rel32[(t - base) / 8] |= 1u << ((t - base) % 8);
	}
}

struct range {
	uint64_t s, e;
};

static bool in_known(const struct range *k, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= k[i].s && a < k[i].e)
			return true;
	return false;
}

/* Does a direct branch of the code in [fs, fe), decoded from fs, land in (lo, hi]? Code that
 * does not decode to its end is no proof: it counts as a hit. */
static bool decoded_lands_in(struct placer *p, uint64_t fs, uint64_t fe, uint64_t lo,
			     uint64_t hi, uint64_t *from)
{
	const uint8_t *code = p->text + (fs - p->text_off);
	uint64_t addr = fs, t;
	size_t left = fe - fs;
	cs_insn *in = cs_malloc(p->cs);
	bool hit = false;

	if (!in)
		return true;
	while (left && cs_disasm_iter(p->cs, &code, &left, &addr, in)) {
		if (direct_target(in, &t) && t > lo && t <= hi) {
			*from = in->address;
			hit = true;
			break;
		}
	}
	if (!hit && left) {
		*from = addr;
		hit = true;
	}
	cs_free(in, 1);
	return hit;
}

/* Could a branch land in (lo, hi]? The function [fs, fe) and the functions near enough for a
 * rel8 branch are decoded exactly; everywhere else in the segment any byte pattern of a rel32
 * call/jmp/jcc counts, and near the range any rel8 jmp/jcc pattern outside a known function:
 * decoding unknown code could start at the wrong byte, so this errs towards "yes". */
static bool lands_in(struct placer *p, uint64_t fs, uint64_t fe, uint64_t lo, uint64_t hi,
		     uint64_t *from)
{
	uint64_t base = p->text_off, end = p->text_off + p->text_len, t;
	uint64_t wlo = lo > base + 130 ? lo - 130 : base, whi = hi + 130 < end ? hi + 130 : end;
	struct range known[16];	/* decoded exactly: no byte scan there */
	size_t nknown = 0;

	if (decoded_lands_in(p, fs, fe, lo, hi, from))
		return true;
	known[nknown].s = fs;
	known[nknown++].e = fe;
	/* neighbours: functions overlapping the rel8 window, decoded whole */
	for (size_t i = 0; i < p->nsyms && nknown < sizeof(known) / sizeof(known[0]); i++) {
		uint64_t s = p->syms[i].off, e = s + p->syms[i].size;

		if (e <= wlo || s >= whi || (s == fs && e == fe) || s < base || e > end)
			continue;
		if (decoded_lands_in(p, s, e, lo, hi, from))
			return true;
		known[nknown].s = s;
		known[nknown++].e = e;
	}
	/* rel8 patterns near the range, outside the decoded functions */
	for (uint64_t a = wlo; a + 2 <= whi; a++) {
		const uint8_t *b = p->text + (a - base);

		if (in_known(known, nknown, a) || !(b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f)))
			continue;
		t = a + 2 + (int8_t)b[1];
		if (t > lo && t <= hi) {
			*from = a;
			return true;
		}
	}
	/* rel32 patterns anywhere outside the decoded functions */
	if (!p->rel32_done)
		collect_rel32(p);
	if (!p->rel32)
		return true;
	for (t = lo + 1; t <= hi && t < end; t++) {
		if (!(p->rel32[(t - base) / 8] & (1u << ((t - base) % 8))))
			continue;
		for (uint64_t a = base; a < end; a++) {
			uint64_t to;

			if (rel32_at(p, a, &to) && to == t && !in_known(known, nknown, a)) {
				*from = a;
				return true;
			}
		}
	}
	return false;
}

static void describe(const cs_insn *in, char *buf, size_t len)
{
	/* an operand string longer than the buffer is cut: it is only for logs */
	if (snprintf(buf, len, "%s%s%s", in->mnemonic, in->op_str[0] ? " " : "", in->op_str) >=
	    (int)len)
		buf[len - 1] = 0;
}

static const char *const reg_names[] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9", "rbp" };

static int place_now(struct placer *p, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		     unsigned flags, struct placement *out);

int placer__place(struct placer *p, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		  unsigned flags, struct placement *out)
{
	struct place_memo q = { .sym_off = sym_off, .sym_size = sym_size, .arg_regs = arg_regs,
				.flags = flags };
	struct place_memo *m;
	int err;

	if (!p)
		return place_now(p, sym_off, sym_size, arg_regs, flags, out);
	pthread_mutex_lock(&memo.lock);
	m = memo_find(&p->id, sym_off, sym_size, arg_regs, flags);
	if (m) {
		*out = m->out;
		err = m->ret;
		memo.hits++;
	}
	pthread_mutex_unlock(&memo.lock);
	if (m)
		return err;
	err = placer_load(p);
	if (err) {
		/* known before, unreadable now: as a placer that could not be made */
		errno = -err;
		return place_now(NULL, sym_off, sym_size, arg_regs, flags, out);
	}
	q.id = p->id;
	q.ret = place_now(p, sym_off, sym_size, arg_regs, flags, out);
	q.out = *out;
	/* not an allocation failure: that answer is not the file's */
	if (q.ret != -ENOMEM)
		memo_put(&q);
	return q.ret;
}

static int place_now(struct placer *p, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		     unsigned flags, struct placement *out)
{
	const uint8_t *code;
	uint64_t addr = sym_off, from = 0;
	size_t left;
	cs_insn *in;
	int32_t delta = 0;
	char first[sizeof(out->insn) + 32] = "";	/* "test rdi, rdi is single-stepped" */

	memset(out, 0, sizeof(*out));
	out->entry = out->offset = sym_off;
	out->entry_fate = INSN_REFUSED;
	if (!p) {
		snprintf(out->reason, sizeof(out->reason), "%s",
			 errno == ELIBACC ? "entry: libcapstone.so.4 is not installed (libcapstone4)"
					  : "entry: its code could not be read");
		return -EINVAL;
	}
	if (sym_off < p->text_off || sym_off >= p->text_off + p->text_len) {
		snprintf(out->reason, sizeof(out->reason), "entry: not in the executable segment");
		return -ERANGE;
	}
	if (!sym_size)
		sym_size = symbol_size(p, sym_off);
	if (sym_size > p->text_off + p->text_len - sym_off)
		sym_size = p->text_off + p->text_len - sym_off;
	code = p->text + (sym_off - p->text_off);
	left = sym_size ? sym_size : p->text_off + p->text_len - sym_off;
	if (left > PLACE_MAX_BYTES)
		left = PLACE_MAX_BYTES;
	in = cs_malloc(p->cs);
	if (!in)
		return -ENOMEM;

	for (int n = 0; n < PLACE_MAX_INSNS; n++) {
		uint64_t at = addr;
		const uint8_t *bytes = code;
		enum insn_fate fate;
		uint16_t rd[64], wr[64];
		uint8_t nrd = 0, nwr = 0;
		int32_t step;

		if (!cs_disasm_iter(p->cs, &code, &left, &addr, in)) {
			snprintf(out->reason, sizeof(out->reason),
				 "entry: %s%sno instruction decodes at +%#lx", first,
				 first[0] ? ", and " : "",
				 (unsigned long)(at - sym_off));
			break;
		}
		fate = fate_of(bytes, in->size);
		if (n == 0) {
			out->entry_fate = fate;
			describe(in, out->insn, sizeof(out->insn));
			snprintf(first, sizeof(first), "%s is %s", out->insn,
				 placement_fate_name(fate));
		}
		if (fate == INSN_EMULATED) {
			if (n == 0) {
				snprintf(out->reason, sizeof(out->reason), "entry: %s", first);
				break;
			}
			if ((flags & PLACE_KEEP_RSP) && delta) {
				snprintf(out->reason, sizeof(out->reason),
					 "entry: %s, and %%rsp moves by %d before "
					 "the first emulated instruction (a return probe needs it)",
					 first, delta);
				break;
			}
			if (!sym_size) {
				snprintf(out->reason, sizeof(out->reason),
					 "entry: %s, and the function's size is "
					 "unknown (no check that nothing jumps into its prologue)",
					 first);
				break;
			}
			if (lands_in(p, sym_off, sym_off + sym_size, sym_off, at, &from)) {
				snprintf(out->reason, sizeof(out->reason),
					 "entry: %s, and a branch at %#lx may land "
					 "within +0x1..+%#lx", first, (unsigned long)from,
					 (unsigned long)(at - sym_off));
				break;
			}
			out->offset = at;
			out->rsp_delta = delta;
			out->moved = true;
			describe(in, out->insn, sizeof(out->insn));
			snprintf(out->reason, sizeof(out->reason),
				 "+%#lx: %s; %s, the first emulated instruction, "
				 "is reached by every call with the arguments intact",
				 (unsigned long)(at - sym_off), first, out->insn);
			break;
		}
		if (is_branch(in)) {
			snprintf(out->reason, sizeof(out->reason),
				 "entry: %s, and %s at +%#lx leaves the straight "
				 "line first", first, in->mnemonic, (unsigned long)(at - sym_off));
			break;
		}
		if (cs_regs_access(p->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
			snprintf(out->reason, sizeof(out->reason),
				 "entry: %s, and what %s at +%#lx writes is "
				 "unknown", first, in->mnemonic, (unsigned long)(at - sym_off));
			break;
		}
		if (writes_return_address(in, delta)) {
			snprintf(out->reason, sizeof(out->reason),
				 "entry: %s, and %s at +%#lx may store over the "
				 "return address", first, in->mnemonic, (unsigned long)(at - sym_off));
			break;
		}
		for (uint8_t r = 0; r < nwr; r++) {
			unsigned bit = arg_bit(wr[r]);

			if (bit & arg_regs) {
				snprintf(out->reason, sizeof(out->reason),
					 "entry: %s, and %s at +%#lx writes %%%s, "
					 "%s", first, in->mnemonic,
					 (unsigned long)(at - sym_off), reg_names[__builtin_ctz(bit)],
					 bit == PLACE_RBP ? "the frame pointer" : "an argument");
				goto done;
			}
			if (is_rsp(wr[r])) {
				if (!rsp_step(in, &step)) {
					snprintf(out->reason, sizeof(out->reason),
						 "entry: %s, and %s at +%#lx moves "
						 "%%rsp by an unknown amount", first, in->mnemonic,
						 (unsigned long)(at - sym_off));
					goto done;
				}
				delta += step;
			}
		}
		if (n == PLACE_MAX_INSNS - 1 || !left) {
			snprintf(out->reason, sizeof(out->reason),
				 "entry: %s, and no emulated instruction follows "
				 "within %d instructions", first, n + 1);
			break;
		}
	}
done:
	if (!out->moved)
		out->offset = sym_off;
	cs_free(in, 1);
	return 0;
}

int probe_place(const char *path, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		unsigned flags, struct placement *out)
{
	struct placer *p = placer__new(path);
	int err;

	if (!p) {
		err = -errno;
		memset(out, 0, sizeof(*out));
		out->entry = out->offset = sym_off;
		out->entry_fate = INSN_REFUSED;
		snprintf(out->reason, sizeof(out->reason), "entry: %s cannot be read", path);
		return err;
	}
	err = placer__place(p, sym_off, sym_size, arg_regs, flags, out);
	placer__free(p);
	return err;
}

const char *placement_fate_name(enum insn_fate f)
{
	return f <= INSN_REFUSED ? fate_names[f] : "?";
}
