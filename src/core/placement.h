/* Where to put an allocator function's uprobe: at its entry, or at the first instruction the
 * kernel emulates when the entry's must be single-stepped (x86-64, decoded with capstone). */
#ifndef EBPROF_PLACEMENT_H
#define EBPROF_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Argument registers of the SysV x86-64 calling convention, for arg_regs masks. */
enum {
	PLACE_RDI = 1u << 0,
	PLACE_RSI = 1u << 1,
	PLACE_RDX = 1u << 2,
	PLACE_RCX = 1u << 3,
	PLACE_R8 = 1u << 4,
	PLACE_R9 = 1u << 5,
	PLACE_ALL_ARGS = 0x3f,
	/* not an argument: the frame pointer, which an entry-time stack walk starts from */
	PLACE_RBP = 1u << 6,
};

/* The first n argument registers (n >= 6: all of them). */
static inline unsigned placement_arg_mask(unsigned n)
{
	return n >= 6 ? PLACE_ALL_ARGS : (1u << n) - 1;
}

enum placement_flags {
	/* A return probe shares the point: %rsp must be what it was at the entry, so that
	 * *(%rsp) is still the return address the kernel hijacks. */
	PLACE_KEEP_RSP = 1u << 0,
};

/* What the kernel does with the instruction a uprobe replaces (arch/x86/kernel/uprobes.c). */
enum insn_fate {
	INSN_EMULATED,		/* jmp/call rel, jcc, push reg, the kernel's own nop forms */
	INSN_SINGLE_STEPPED,	/* executed out of line with a debug trap: ~20x dearer here */
	INSN_REFUSED,		/* no uprobe can go there (lock/segment prefix, privileged...) */
};

struct placement {
	uint64_t entry;		/* file offset of the function */
	uint64_t offset;	/* file offset of the probe: the entry or a later instruction */
	int32_t rsp_delta;	/* bytes the code before offset pushed: the return address is at
				 * *(%rsp + rsp_delta) when the probe fires */
	bool moved;		/* offset != the entry */
	enum insn_fate entry_fate;	/* of the entry's instruction */
	char insn[64];		/* the probed instruction, "je 0x98fb8" */
	char reason[256];	/* why this point, for -v logs */
};

/* One ELF file's executable code, decoded on demand. NULL and errno on failure. */
struct placer;
struct placer *placer__new(const char *path);
void placer__free(struct placer *p);

/* Choose the probe point of the function at file offset sym_off (sym_size 0: taken from the
 * file's symbol tables). arg_regs: the argument registers the entry program reads, which no
 * instruction before the point may write. Never fails to give an answer: any doubt is the
 * entry, with the reason. Returns 0, or a negative errno when the bytes cannot be read (out
 * then holds the entry). */
int placer__place(struct placer *p, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		  unsigned flags, struct placement *out);

const char *placement_fate_name(enum insn_fate f);
/* Answers of placer__place are kept by file (device, inode, size, mtime) and question for the
 * tracer's lifetime: a placer of a file placed before decodes nothing unless asked something
 * new. loads: files read and decoded so far; hits: answers given from what was kept. */
void placement_memo_stats(size_t *loads, size_t *hits);

/* Both in one call, for a single function. */
int probe_place(const char *path, uint64_t sym_off, uint64_t sym_size, unsigned arg_regs,
		unsigned flags, struct placement *out);

/* The kernel's treatment of the instruction in code[0..len), which must hold one whole
 * instruction (exported for tests). *ilen gets its length, 0 when it does not decode. */
enum insn_fate placement_insn_fate(const uint8_t *code, size_t len, unsigned *ilen);

#endif
