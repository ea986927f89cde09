/* Unwind tables from an ELF object's call frame information (see unwind.h). The FDEs are found
 * through .eh_frame_hdr's sorted table (or by walking .debug_frame), each FDE's rows through
 * libdw's dwarf_cfi_addrframe, one range at a time, and every row is reduced to the few rules
 * the BPF unwinder implements (abi/unwind.h); anything else becomes UNWIND_CFA_UNKNOWN, where
 * the unwinder stops with a truncated mark instead of guessing. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/sym_internal.h"
#include "symbolize/unwind.h"

#define REG_RDX 1
#define REG_RBX 3
#define REG_RDI 5
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA	16

struct rowbuf {
	struct unwind_row *rows;
	uint32_t n, cap;
	bool oom;
};

static void push_row(struct rowbuf *b, const struct unwind_row *r)
{
	if (b->n) {
		struct unwind_row *last = &b->rows[b->n - 1];

		if (r->pc < last->pc)
			return;		/* overlapping FDEs: the first one wins */
		if (unwind_row__same(last, r))
			return;
		if (r->pc == last->pc) {
			*last = *r;
			if (b->n > 1 && unwind_row__same(&b->rows[b->n - 2], last))
				b->n--;
			return;
		}
	}
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 1024;
		struct unwind_row *p = realloc(b->rows, cap * sizeof(*p));

		if (!p) {
			b->oom = true;
			return;
		}
		b->rows = p;
		b->cap = cap;
	}
	b->rows[b->n++] = *r;
}

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* A register rule "saved at CFA + off" ([call_frame_cfa, plus_uconst off]); false otherwise */
static bool at_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* A register rule "saved at rsp + off", as a signal frame's expressions say it
 * ([call_frame_cfa, breg7 off]: the CFA is pushed first and not used) */
static bool at_rsp(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_breg0 + REG_RSP) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* glibc's and binutils' PLT expression: rsp + 8 + ((rip & 15) >= K) << 3 */
static bool plt_expr(const Dwarf_Op *o, size_t n, int64_t *off, int *k)
{
	if (n != 9 || o[0].atom != DW_OP_breg0 + REG_RSP || o[1].atom != DW_OP_breg0 + REG_RA ||
	    o[1].number != 0 || o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit31 || o[5].atom != DW_OP_ge ||
	    o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	*off = (int64_t)o[0].number;
	*k = o[4].atom - DW_OP_lit0;
	return true;
}

/* The rule of the caller's rsp: the CFA, as x86-64's is unless the call frame information says
 * otherwise (libdw: [call_frame_cfa, stack_value]) */
static bool rsp_is_cfa(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	return dwarf_frame_register(f, REG_RSP, mem, &ops, &n) == 0 && n == 2 &&
	       ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_stack_value;
}

/* Where the caller's rbx is (UNWIND_RBX_*). libdw says "undefined" for an rbx the call frame
 * information does not mention (its x86-64 initial rules leave rbx out), which the psABI makes
 * callee-saved: unchanged (an explicit DW_CFA_undefined for rbx reads the same; none of
 * Debian's libc, ld.so, libstdc++ or libm has one). */
static uint8_t rbx_rule(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;

	if (dwarf_frame_register(f, REG_RBX, mem, &ops, &n) != 0)
		return UNWIND_RBX_UNKNOWN;
	if (n == 0)
		return UNWIND_RBX_SAME;
	if (at_cfa(ops, n, &off) && off < 0 && off % 8 == 0 && -off / 8 <= UNWIND_RBX_MAX_K)
		return (uint8_t)(-off / 8);
	return UNWIND_RBX_UNKNOWN;
}

static void frame_row(Dwarf_Frame *f, bool signal, struct unwind_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off, ra, bp;
	bool ra_rdi;
	int k;

	r->cfa = UNWIND_CFA_UNKNOWN;
	r->rbp = UNWIND_RBP_SAME;
	r->rbx = UNWIND_RBX_UNKNOWN;
	r->cfa_off = r->rbp_off = 0;

	if (dwarf_frame_register(f, REG_RA, mem, &ops, &n) != 0)
		return;
	if (n == 0) {
		if (ops == mem)
			r->cfa = UNWIND_CFA_END;	/* undefined: the outermost frame */
		return;
	}
	if (signal) {
		Dwarf_Op *c;
		size_t nc;

		if (!at_rsp(ops, n, &ra) || dwarf_frame_cfa(f, &c, &nc) || nc != 2 ||
		    c[0].atom != DW_OP_breg0 + REG_RSP || c[1].atom != DW_OP_deref)
			return;
		off = (int64_t)c[0].number;
		if (dwarf_frame_register(f, REG_RBP, mem, &ops, &n) || !at_rsp(ops, n, &bp) ||
		    !fits16(off) || ra != off + 8 || !fits16(bp))
			return;
		r->cfa = UNWIND_CFA_SIGNAL;
		r->cfa_off = (int32_t)off;
		r->rbp_off = (int16_t)bp;
		r->rbp = UNWIND_RBP_AT;
		return;
	}
	/* the return address in rdi (__vfork's, from its pop to its ret), the CFA at rsp + off,
	 * rbp unchanged: the rest as any row's (__longjmp's rows, the caller's rsp in r8 and its
	 * return address in rdx, are not followed) */
	ra_rdi = n == 1 && ops[0].atom == DW_OP_regx && ops[0].number == REG_RDI;
	if ((!ra_rdi && (!at_cfa(ops, n, &ra) || ra != -8)) || !rsp_is_cfa(f))
		return;
	r->rbx = rbx_rule(f);

	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &n) != 0)
		return;
	if (n == 0) {
		r->rbp = ops == mem ? UNWIND_RBP_UNDEF : UNWIND_RBP_SAME;
	} else if (at_cfa(ops, n, &bp) && fits16(bp)) {
		r->rbp = UNWIND_RBP_AT;
		r->rbp_off = (int16_t)bp;
	} else {
		return;
	}

	if (dwarf_frame_cfa(f, &ops, &n) != 0 || n == 0)
		return;
	if (ra_rdi) {
		if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == REG_RSP &&
		    fits32((int64_t)ops[0].number2) && r->rbp == UNWIND_RBP_SAME) {
			r->cfa = UNWIND_CFA_RA_RDI;
			r->cfa_off = (int32_t)(int64_t)ops[0].number2;
		}
		return;
	}
	if (n == 1 && ops[0].atom == DW_OP_bregx && fits32((int64_t)ops[0].number2) &&
	    (ops[0].number == REG_RSP || ops[0].number == REG_RBP)) {
		r->cfa = ops[0].number == REG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	} else if (n == 1 && ops[0].atom == DW_OP_bregx && fits32((int64_t)ops[0].number2) &&
		   (ops[0].number == REG_RBX || ops[0].number == REG_RDI ||
		    ops[0].number == REG_RDX)) {
		r->cfa = ops[0].number == REG_RBX ? UNWIND_CFA_RBX :
			 ops[0].number == REG_RDI ? UNWIND_CFA_RDI : UNWIND_CFA_RDX;
		r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	} else if (n == 2 && ops[0].atom == DW_OP_breg0 + REG_RBP && ops[1].atom == DW_OP_deref &&
		   fits32((int64_t)ops[0].number)) {
		r->cfa = UNWIND_CFA_DEREF_RBP;
		r->cfa_off = (int32_t)(int64_t)ops[0].number;
	} else if (plt_expr(ops, n, &off, &k) && fits32(off) && r->rbp == UNWIND_RBP_SAME) {
		r->cfa = UNWIND_CFA_PLT;
		r->cfa_off = (int32_t)off;
		r->rbp_off = (int16_t)k;
	}
}

/* The object's code (its file's image and executable segments), for the few checks of the
 * instructions themselves */
struct code {
	const uint8_t *img;
	size_t size;
	const struct unwind_table *t;
};

/* n bytes of code at vaddr, NULL when not all in one executable segment */
static const uint8_t *code_at(const struct code *c, uint64_t vaddr, uint64_t n)
{
	for (uint32_t i = 0; c && c->img && i < c->t->nsegs; i++) {
		uint64_t v = c->t->segs[i].vaddr, off;

		if (vaddr < v || vaddr + n > v + c->t->segs[i].filesz)
			continue;
		off = c->t->segs[i].offset + (vaddr - v);
		return off + n <= c->size ? c->img + off : NULL;
	}
	return NULL;
}

/* [pc, end) holds nothing but the padding assemblers put before an aligned function (nop
 * forms: 90, 0f 1f /0 with 66 and 2e prefixes; int3) */
static bool is_padding(const struct code *c, uint64_t pc, uint64_t end)
{
	const uint8_t *p = end > pc && end - pc < 64 ? code_at(c, pc, end - pc) : NULL;
	size_t n = p ? end - pc : 0, i = 0;

	while (p && i < n) {
		size_t j = i, len;
		uint8_t m, mod, rm;

		while (j < n && (p[j] == 0x66 || p[j] == 0x2e))
			j++;
		if (j < n && (p[j] == 0x90 || p[j] == 0xcc)) {
			i = j + 1;
			continue;
		}
		if (j + 2 >= n || p[j] != 0x0f || p[j + 1] != 0x1f)
			return false;
		m = p[j + 2];
		mod = m >> 6;
		rm = m & 7;
		if (((m >> 3) & 7) || mod == 3)
			return false;
		len = 3 + (rm == 4) + (mod == 1 ? 1 : mod == 2 || (mod == 0 && rm == 5) ? 4 : 0);
		if (j + len > n)
			return false;
		i = j + len;
	}
	return p != NULL;
}

/* The rows of the FDE that starts at start, up to limit (the next FDE's start). Past its end,
 * up to the next FDE: no call frame information (frame pointers), or, when it is only
 * alignment padding, the outermost frame: a return address there (looked up at ip - 1) is the
 * next function's first instruction, which no call pushes. makecontext pushes glibc's
 * __start_context so, the end of every coroutine's stack (gdb walks on into its uc_link). */
static void fde_rows(Dwarf_CFI *cfi, const struct code *c, uint64_t start, uint64_t limit,
		     struct rowbuf *b)
{
	uint64_t pc = start;

	while (pc < limit) {
		struct unwind_row r = { .pc = (uint32_t)pc };
		Dwarf_Frame *f;
		Dwarf_Addr s, e;
		bool signal = false;

		if (dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
			r.cfa = limit < UINT32_MAX && is_padding(c, pc, limit) ? UNWIND_CFA_END :
			        UNWIND_CFA_NONE;
			push_row(b, &r);
			return;
		}
		if (dwarf_frame_info(f, &s, &e, &signal) < 0 || e <= pc) {
			free(f);
			r.cfa = UNWIND_CFA_UNKNOWN;
			push_row(b, &r);
			return;
		}
		frame_row(f, signal, &r);
		free(f);
		push_row(b, &r);
		pc = e;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A pointer of .eh_frame_hdr's encodings in use (absptr, udata4/sdata4/udata8/sdata8, pcrel or
 * datarel); false for anything else. */
static bool read_enc(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t here,
		     uint64_t datarel, uint64_t *out)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (end - *p < 8)
			return false;
		memcpy(&v, *p, 8);
		*p += 8;
		break;
	case DW_EH_PE_udata4: {
		uint32_t u;

		if (end - *p < 4)
			return false;
		memcpy(&u, *p, 4);
		*p += 4;
		v = u;
		break;
	}
	case DW_EH_PE_sdata4: {
		int32_t s;

		if (end - *p < 4)
			return false;
		memcpy(&s, *p, 4);
		*p += 4;
		v = (uint64_t)(int64_t)s;
		break;
	}
	default:
		return false;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += here;
		break;
	case DW_EH_PE_datarel:
		v += datarel;
		break;
	default:
		return false;
	}
	*out = v;
	return true;
}

/* The FDE start addresses of .eh_frame_hdr's table (sorted by the linker) */
static int hdr_starts(Elf_Data *d, uint64_t vaddr, uint64_t **out, size_t *nout)
{
	const uint8_t *p = d->d_buf, *end = p + d->d_size;
	uint64_t ehp, count, *v;
	uint8_t fcenc, tenc;

	if (d->d_size < 4 || p[0] != 1)
		return -1;
	fcenc = p[2];
	tenc = p[3];
	p += 4;
	if (!read_enc(&p, end, ((const uint8_t *)d->d_buf)[1], vaddr + 4, vaddr, &ehp) ||
	    !read_enc(&p, end, fcenc, vaddr + (uint64_t)(p - (const uint8_t *)d->d_buf), vaddr,
		      &count) ||
	    count > (uint64_t)(end - p) / 8 || tenc == DW_EH_PE_omit)
		return -1;
	v = malloc((count ? count : 1) * sizeof(*v));
	if (!v)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t loc, fde;
		uint64_t here = vaddr + (uint64_t)(p - (const uint8_t *)d->d_buf);

		if (!read_enc(&p, end, tenc, here, vaddr, &loc) ||
		    !read_enc(&p, end, tenc, here, vaddr, &fde)) {
			free(v);
			return -1;
		}
		v[i] = loc;
	}
	qsort(v, count, sizeof(*v), cmp_u64);
	*out = v;
	*nout = count;
	return 0;
}

/* The pointer encoding of FDEs under a CIE: its augmentation's 'R' (absptr without one) */
static uint8_t cie_fde_encoding(const Dwarf_CIE *c)
{
	const uint8_t *d = c->augmentation_data;
	size_t i = 0, n = c->augmentation_data_size;

	if (!c->augmentation || c->augmentation[0] != 'z' || !d)
		return DW_EH_PE_absptr;
	for (const char *a = c->augmentation + 1; *a && i < n; a++) {
		switch (*a) {
		case 'R':
			return d[i];
		case 'L':
			i++;
			break;
		case 'P': {
			/* a personality routine pointer: its encoding, then the pointer */
			uint8_t enc = d[i++];

			switch (enc & 0x0f) {
			case DW_EH_PE_udata2: case DW_EH_PE_sdata2: i += 2; break;
			case DW_EH_PE_udata4: case DW_EH_PE_sdata4: i += 4; break;
			case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: i += 8; break;
			default: return DW_EH_PE_omit;
			}
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return DW_EH_PE_omit;
		}
	}
	return DW_EH_PE_absptr;
}

/* Every FDE of a .eh_frame or a .debug_frame (absolute 8-byte initial locations) at vaddr in
 * the file: its range [start, end) as ELF virtual addresses, sorted by start. Discarded
 * functions' FDEs (a start of 0) are left out; an FDE whose length cannot be read is empty. */
static int cfi_fdes(Elf *elf, Elf_Data *d, bool eh, uint64_t vaddr, struct unwind_fde **out,
		    size_t *nout)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct { Dwarf_Off off; uint8_t enc; } cies[64];
	Dwarf_Off off = 0, next;
	size_t n = 0, cap = 256, ncies = 0;
	struct unwind_fde *v = malloc(cap * sizeof(*v));

	if (!v || !ident || !d) {
		free(v);
		return -1;
	}
	for (;;) {
		Dwarf_CFI_Entry e;
		int rc = dwarf_next_cfi(ident, d, eh, off, &next, &e);

		if (rc == 1)
			break;
		if (rc == 0 && dwarf_cfi_cie_p(&e)) {
			if (ncies < sizeof(cies) / sizeof(cies[0])) {
				cies[ncies].off = off;
				cies[ncies++].enc = eh ? cie_fde_encoding(&e.cie) : DW_EH_PE_absptr;
			}
		} else if (rc == 0) {
			const uint8_t *p = e.fde.start;
			uint8_t enc = DW_EH_PE_omit;
			uint64_t loc, len;

			for (size_t i = 0; i < ncies; i++)
				if (cies[i].off == e.fde.CIE_pointer)
					enc = cies[i].enc;
			if (enc != DW_EH_PE_omit &&
			    read_enc(&p, e.fde.end, enc,
				     vaddr + (uint64_t)(e.fde.start - (const uint8_t *)d->d_buf), 0,
				     &loc) && loc) {	/* 0: a discarded function's FDE */
				/* the range's length: a value of the same size, nothing added to
				 * it; unreadable: an empty range (its start is still a start) */
				if (!read_enc(&p, e.fde.end, enc & 0x0f, 0, 0, &len) ||
				    loc + len < loc)
					len = 0;
				if (n == cap) {
					struct unwind_fde *np = realloc(v, (cap *= 2) * sizeof(*v));

					if (!np) {
						free(v);
						return -1;
					}
					v = np;
				}
				v[n].start = loc;
				v[n++].end = loc + len;
			}
		}
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	qsort(v, n, sizeof(*v), cmp_u64);	/* by start, the first member */
	*out = v;
	*nout = n;
	return 0;
}

/* The FDE start addresses of a .eh_frame (without .eh_frame_hdr: static programs) or a
 * .debug_frame, sorted */
static int cfi_starts(Elf *elf, Elf_Data *d, bool eh, uint64_t vaddr, uint64_t **out,
		      size_t *nout)
{
	struct unwind_fde *f;
	uint64_t *v;
	size_t n;

	if (cfi_fdes(elf, d, eh, vaddr, &f, &n))
		return -1;
	v = malloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; v && i < n; i++)
		v[i] = f[i].start;
	free(f);
	if (!v)
		return -1;
	*out = v;
	*nout = n;
	return 0;
}

/* The rows of b with [from, to) made rule cfa (the rule at to kept from there) */
static void rows_set(struct rowbuf *b, uint64_t from, uint64_t to, uint8_t cfa)
{
	struct rowbuf nb = { 0 };
	struct unwind_row u = { .pc = (uint32_t)from, .cfa = cfa, .rbx = UNWIND_RBX_UNKNOWN },
			  at = { .cfa = UNWIND_CFA_NONE };
	uint32_t i = 0;

	if (from >= to || to >= UINT32_MAX)
		return;
	for (; i < b->n && b->rows[i].pc < from; i++) {
		at = b->rows[i];
		push_row(&nb, &at);
	}
	push_row(&nb, &u);
	for (; i < b->n && b->rows[i].pc < to; i++)
		at = b->rows[i];
	if (i == b->n || b->rows[i].pc != to) {
		at.pc = (uint32_t)to;
		push_row(&nb, &at);
	}
	for (; i < b->n; i++)
		push_row(&nb, &b->rows[i]);
	if (nb.oom) {
		free(nb.rows);
		b->oom = true;
		return;
	}
	free(b->rows);
	*b = nb;
}

static void rows_unknown(struct rowbuf *b, uint64_t from, uint64_t to)
{
	rows_set(b, from, to, UNWIND_CFA_UNKNOWN);
}

/* The ELF entry point, where no FDE covers it (ld.so's _start and _dl_start_user, written
 * without call frame information), up to the next FDE: the outermost frame, where the kernel
 * starts the program and no call returns. Without this row the walk met it by frame pointers
 * with rbp 0, which elsewhere is code that keeps none (a walk's end there is [truncated]). */
static void entry_outermost(struct rowbuf *b, uint64_t entry)
{
	uint32_t i = 0;

	while (i < b->n && b->rows[i].pc <= entry)
		i++;
	/* the next row (an FDE's start) bounds it; at the table's end it would be unbounded */
	if (i == b->n || entry >= UINT32_MAX || (i && b->rows[i - 1].cfa != UNWIND_CFA_NONE))
		return;
	rows_set(b, entry, b->rows[i].pc, UNWIND_CFA_END);
}

/* glibc's swapcontext (and setcontext) load the new context's rsp, then push its rip and
 * return into it, under the function's first rule (CFA = rsp + 8, without call frame
 * information for the switch): from the load on, that rule reads a word of the other
 * context's stack as the return address. Those rows are made UNWIND_CFA_UNKNOWN: from the
 * first "mov m64, %rsp" in the function (by its dynamic symbol) to its end. */
static void context_switches(Elf *elf, const struct code *c, struct rowbuf *b)
{
	static const char *const names[] = { "swapcontext", "setcontext" };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			const uint8_t *p;
			bool want = false;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || !sym.st_size || sym.st_size > 4096 ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
				want |= strcmp(name, names[k]) == 0;
			if (!want || !(p = code_at(c, sym.st_value, sym.st_size)))
				continue;
			for (uint64_t j = 0; j + 3 <= sym.st_size; j++) {
				/* REX.W (not .R), 8b, a memory operand with reg = rsp */
				uint8_t m = p[j + 2];
				uint64_t len;

				if ((p[j] & 0xfc) != 0x48 || p[j + 1] != 0x8b || (m & 0x38) != 0x20 ||
				    (m >> 6) == 3)
					continue;
				len = 3 + ((m & 7) == 4) + ((m >> 6) == 1 ? 1 : (m >> 6) == 2 ||
					((m >> 6) == 0 && (m & 7) == 5) ? 4 : 0);
				rows_unknown(b, sym.st_value + j + len, sym.st_value + sym.st_size);
				break;
			}
		}
		break;
	}
}

/* glibc's clone and clone3 end their FDE before the system call ("in the child the unwind
 * info will be wrong") and start the child's outermost frame (its return address undefined)
 * past the parent's return: syscall; test %rax,%rax; jl error; je child; ret. Parent and child
 * both come back after the syscall: the parent with rax not 0 (the child's id, an error, or
 * -ENOSYS in its saved registers while in the call), its frame still the rule before the
 * syscall, CFA = rsp + 8; the child with rax 0 on its new stack, where that rule would read a
 * word past the stack's top as a return address. Those bytes, without call frame information
 * (frame pointers, which the parent's caller does not keep), get UNWIND_CFA_CLONE. Found by
 * their code: clone3 is no dynamic symbol. */
static void clone_returns(const struct code *c, struct rowbuf *b)
{
	static const uint8_t seq[] = { 0x0f, 0x05, 0x48, 0x85, 0xc0, 0x7c, 0, 0x74, 0x01, 0xc3 };

	for (uint32_t i = 1; i + 1 < b->n; i++) {
		struct unwind_row *r = &b->rows[i];
		const struct unwind_row *prev = &b->rows[i - 1], *next = &b->rows[i + 1];
		const uint8_t *p;
		bool same = true;

		if (r->cfa != UNWIND_CFA_NONE || next->cfa != UNWIND_CFA_END ||
		    prev->cfa != UNWIND_CFA_RSP || prev->cfa_off != 8 ||
		    next->pc - r->pc != sizeof(seq) || !(p = code_at(c, r->pc, sizeof(seq))))
			continue;
		for (size_t k = 0; k < sizeof(seq); k++)
			same &= k == 6 || p[k] == seq[k];	/* 6: jl's offset */
		if (!same)
			continue;
		r->cfa = UNWIND_CFA_CLONE;
		r->cfa_off = 8;
		r->rbp = UNWIND_RBP_SAME;
		r->rbx = UNWIND_RBX_SAME;
	}
}

static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static void rows_from(Dwarf_CFI *cfi, const struct code *c, const uint64_t *starts, size_t n,
		      struct rowbuf *b)
{
	for (size_t i = 0; i < n && !b->oom; i++) {
		uint64_t limit = i + 1 < n ? starts[i + 1] : UINT32_MAX;

		if (i && starts[i] == starts[i - 1])
			continue;
		if (starts[i] >= UINT32_MAX)
			break;
		fde_rows(cfi, c, starts[i], limit, b);
	}
}

int sym__open_debug_file(const char *debug_dir, const char *hex)
{
	char path[4096];

	if (strlen(hex) < 3)
		return -1;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir ? debug_dir :
		 "/usr/lib/debug", hex, hex + 2);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int from_debug_frame(Elf *elf, const struct code *c, struct rowbuf *b)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".debug_frame", &sh);
	Dwarf *dw;
	Dwarf_CFI *cfi;
	uint64_t *starts = NULL;
	size_t n = 0;
	int rc = -1;

	if (!scn)
		return -1;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -1;
	cfi = dwarf_getcfi(dw);
	if (cfi && cfi_starts(elf, elf_getdata(scn, NULL), false, sh.sh_addr, &starts, &n) == 0 &&
	    n) {
		rows_from(cfi, c, starts, n, b);
		rc = b->n ? 0 : -1;
	}
	free(starts);
	dwarf_end(dw);
	return rc;
}

int unwind_fdes(Elf *elf, struct unwind_fde **out, size_t *nout, const char **source)
{
	static const char *const names[] = { ".eh_frame", ".debug_frame" };
	struct unwind_fde *v = NULL;
	size_t n = 0;

	*out = NULL;
	*nout = 0;
	for (size_t k = 0; k < 2; k++) {
		GElf_Shdr sh;
		Elf_Scn *scn = section(elf, names[k], &sh);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
		size_t kept = 0;

		if (!d || cfi_fdes(elf, d, k == 0, sh.sh_addr, &v, &n))
			continue;
		for (size_t i = 0; i < n; i++)	/* the empty ones hold no address */
			if (v[i].end > v[i].start)
				v[kept++] = v[i];
		if (kept) {
			*out = v;
			*nout = kept;
			*source = names[k];
			return 0;
		}
		free(v);
	}
	return -1;
}

/* The cache file of a table: <cache_dir>/unwind/<build-id>.rows, this header then the rows */
struct unwind_cache_hdr {
	char magic[8];
	char build_id[48];
	uint32_t nrows, source;
	uint64_t sum;		/* sym_cache__hash of the rows */
};

#define UNWIND_CACHE_MAGIC "ebpunw" UNWIND_CACHE_FORMAT	/* with its NUL: 8 bytes; a new
					 * format, a new number (unwind.h; 2: rows with the CFA in
					 * rbx, rdi, rdx; 3: where rbx is saved, padding,
					 * swapcontext; 4: clone's return; 5: the entry point) */

static const char *const sources[] = { ".eh_frame", ".debug_frame",
				       ".debug_frame of its debug file" };

static bool cache_path(const char *cache_dir, const struct unwind_table *t, char *buf,
		       size_t len)
{
	return cache_dir && *t->build_id &&
	       (size_t)snprintf(buf, len, "%s/unwind/%s" UNWIND_CACHE_SUFFIX, cache_dir,
				t->build_id) < len;
}

/* t's rows from the cache, if it has them whole for t's build-id */
static bool cache_load(const char *cache_dir, struct unwind_table *t)
{
	struct unwind_cache_hdr h;
	char path[4096], *buf;
	size_t len = 0;

	if (!cache_path(cache_dir, t, path, sizeof(path)))
		return false;
	buf = sym_cache__read(path, &len);
	if (!buf)
		return false;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, UNWIND_CACHE_MAGIC, sizeof(h.magic)) ||
	    strncmp(h.build_id, t->build_id, sizeof(h.build_id)) || !h.nrows ||
	    h.source >= sizeof(sources) / sizeof(sources[0]) ||
	    len != sizeof(h) + (size_t)h.nrows * sizeof(struct unwind_row) ||
	    sym_cache__hash(buf + sizeof(h), len - sizeof(h)) != h.sum)
		goto bad;
	t->rows = malloc(len - sizeof(h));
	if (!t->rows)
		goto bad;
	memcpy(t->rows, buf + sizeof(h), len - sizeof(h));
	t->nrows = h.nrows;
	t->source = sources[h.source];
	t->cached = true;
	free(buf);
	sym_cache__used(path);	/* kept before the tables not used for longest */
	return true;
bad:
	free(buf);
	return false;
}

/* t's rows into the cache (best effort) */
static void cache_store(const char *cache_dir, const struct unwind_table *t)
{
	struct unwind_cache_hdr h = { .magic = UNWIND_CACHE_MAGIC };
	size_t bytes = (size_t)t->nrows * sizeof(struct unwind_row);
	char path[4096], *tmp;
	bool ok;
	int fd;

	if (!cache_path(cache_dir, t, path, sizeof(path)))
		return;
	for (h.source = 0; h.source < sizeof(sources) / sizeof(sources[0]); h.source++)
		if (t->source && strcmp(t->source, sources[h.source]) == 0)
			break;
	if (h.source == sizeof(sources) / sizeof(sources[0]))
		return;
	snprintf(h.build_id, sizeof(h.build_id), "%s", t->build_id);
	h.nrows = t->nrows;
	h.sum = sym_cache__hash(t->rows, bytes);
	if (sizeof(h) + bytes > UNWIND_CACHE_MAX_TOTAL)
		return;
	/* every build-id ever met has a file (a build machine makes new ones all day): the
	 * tables used longest ago go first, past UNWIND_CACHE_MAX_TOTAL in all */
	*strrchr(path, '/') = '\0';
	sym_cache__make_room(path, ".rows", sizeof(h) + bytes, UNWIND_CACHE_MAX_TOTAL);
	path[strlen(path)] = '/';
	fd = sym_cache__create(path, &tmp);
	if (fd < 0)
		return;
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     write(fd, t->rows, bytes) == (ssize_t)bytes;
	sym_cache__commit(fd, tmp, path, ok);
}

int unwind_table__build_fd(int fd, const char *debug_dir, const char *cache_dir,
			   struct unwind_table *t, const char **why)
{
	struct rowbuf b = { 0 };
	struct code code = { .t = t };
	int rc = -1;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	const void *bid;
	ssize_t bidlen;
	size_t nph;
	GElf_Shdr sh;
	Elf_Scn *hdr, *ehf;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	*why = "it is not an x86-64 ELF file";
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		goto out;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		goto out;
	bidlen = dwelf_elf_gnu_build_id(elf, &bid);
	if (bidlen > 0 && bidlen <= 20)
		for (ssize_t i = 0; i < bidlen; i++)
			sprintf(t->build_id + 2 * i, "%02x", ((const uint8_t *)bid)[i]);
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && t->nsegs < UNWIND_MAX_SEGS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			t->segs[t->nsegs].offset = ph.p_offset;
			t->segs[t->nsegs].vaddr = ph.p_vaddr;
			t->segs[t->nsegs++].filesz = ph.p_filesz;
		}
	*why = "it has no executable segment";
	if (!t->nsegs)
		goto out;
	if (cache_load(cache_dir, t)) {
		*why = NULL;
		rc = 0;
		goto out;
	}

	code.img = (const uint8_t *)elf_rawfile(elf, &code.size);

	/* .eh_frame_hdr if there is one (sh is then its header), else .eh_frame's */
	hdr = section(elf, ".eh_frame_hdr", &sh);
	ehf = hdr ? hdr : section(elf, ".eh_frame", &sh);
	if (ehf) {
		Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
		Elf_Data *d = elf_getdata(ehf, NULL);
		uint64_t *starts = NULL;
		size_t n = 0;

		/* the FDEs from .eh_frame_hdr's sorted table, or (static programs have none) by
		 * walking .eh_frame */
		*why = "its .eh_frame cannot be read";
		if (cfi && d && (hdr ? hdr_starts(d, sh.sh_addr, &starts, &n) :
				 cfi_starts(elf, d, true, sh.sh_addr, &starts, &n)) == 0) {
			rows_from(cfi, &code, starts, n, &b);
			t->source = ".eh_frame";
		}
		free(starts);
		if (cfi)
			dwarf_cfi_end(cfi);
	}
	if (!b.n && !b.oom) {
		/* .debug_frame: in the file, or in its separate debug file */
		int dfd;

		*why = "it has no .eh_frame or .debug_frame";
		if (from_debug_frame(elf, &code, &b) == 0) {
			t->source = ".debug_frame";
		} else if (*t->build_id && (dfd = sym__open_debug_file(debug_dir, t->build_id)) >= 0) {
			Elf *de = elf_begin(dfd, ELF_C_READ_MMAP, NULL);

			if (de && from_debug_frame(de, &code, &b) == 0)
				t->source = ".debug_frame of its debug file";
			elf_end(de);
			close(dfd);
		}
	}
	if (b.n && !b.oom) {
		context_switches(elf, &code, &b);
		clone_returns(&code, &b);
		if (eh.e_entry)
			entry_outermost(&b, eh.e_entry);
	}
	if (b.oom) {
		*why = "out of memory";
		goto out;
	}
	if (!b.n)
		goto out;
	t->rows = b.rows;
	t->nrows = b.n;
	b.rows = NULL;
	*why = NULL;
	rc = 0;
	cache_store(cache_dir, t);
out:
	free(b.rows);
	elf_end(elf);
	return rc;
}

int unwind_table__build(const char *path, const char *debug_dir, const char *cache_dir,
			struct unwind_table *t, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		memset(t, 0, sizeof(*t));
		*why = "it cannot be opened";
		return -1;
	}
	rc = unwind_table__build_fd(fd, debug_dir, cache_dir, t, why);
	close(fd);
	return rc;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t pc)
{
	uint32_t lo = 0, hi = t->nrows;

	if (pc >= UINT32_MAX || !t->nrows || pc < t->rows[0].pc)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

bool unwind_table__bias(const struct unwind_table *t, uint64_t start, uint64_t pgoff,
			uint64_t *bias)
{
	for (uint32_t i = 0; i < t->nsegs; i++) {
		uint64_t so = t->segs[i].offset & ~0xfffULL;

		if (pgoff >= so && pgoff < t->segs[i].offset + t->segs[i].filesz) {
			*bias = start - pgoff + t->segs[i].offset - t->segs[i].vaddr;
			return true;
		}
	}
	return false;
}

/* dir with $ORIGIN / ${ORIGIN} replaced by origin, into out; false when it does not fit */
static bool expand_origin(const char *dir, size_t len, const char *origin, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		size_t skip = strncmp(dir + i, "${ORIGIN}", 9) == 0 ? 9 :
			      strncmp(dir + i, "$ORIGIN", 7) == 0 ? 7 : 0;
		const char *s = skip ? origin : dir + i;
		size_t n = skip ? strlen(origin) : 1;

		if (o + n >= cap)
			return false;
		memcpy(out + o, s, n);
		o += n;
		i += skip ? skip : 1;
	}
	out[o] = '\0';
	return true;
}

/* name found in the ':'-separated dirs (NULL: none) into out: true when a file is there */
static bool find_in(const char *dirs, const char *origin, const char *name, char *out, size_t cap)
{
	while (dirs && *dirs) {
		const char *end = strchr(dirs, ':');
		size_t len = end ? (size_t)(end - dirs) : strlen(dirs);
		char dir[4096];

		if (len && expand_origin(dirs, len, origin, dir, sizeof(dir)) &&
		    (size_t)snprintf(out, cap, "%s/%s", dir, name) < cap && access(out, R_OK) == 0)
			return true;
		dirs = end ? end + 1 : NULL;
	}
	return false;
}

/* where Debian's ld.so.cache and default paths point for x86-64 */
static const char *const lib_dirs = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:"
				    "/usr/lib64:/lib:/usr/lib:/usr/local/lib";

int unwind_needed(const char *path, const char *real_path, char ***out, size_t *n)
{
	const char *dflt = lib_dirs;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	char origin[4096], **v = NULL;
	size_t nv = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return -1;
	snprintf(origin, sizeof(origin), "%s", real_path ? real_path : path);
	if (strrchr(origin, '/'))
		*strrchr(origin, '/') = '\0';
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	rc = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *runpath = NULL, *rpath = NULL;
		GElf_Dyn e;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
			continue;
		for (int i = 0; gelf_getdyn(d, i, &e) && e.d_tag != DT_NULL; i++) {
			if (e.d_tag == DT_RUNPATH)
				runpath = elf_strptr(elf, sh.sh_link, e.d_un.d_val);
			else if (e.d_tag == DT_RPATH)
				rpath = elf_strptr(elf, sh.sh_link, e.d_un.d_val);
		}
		for (int i = 0; gelf_getdyn(d, i, &e) && e.d_tag != DT_NULL; i++) {
			const char *name;
			char found[4096], **nvv;

			if (e.d_tag != DT_NEEDED || !(name = elf_strptr(elf, sh.sh_link, e.d_un.d_val)))
				continue;
			if (strchr(name, '/')) {
				if (!expand_origin(name, strlen(name), origin, found, sizeof(found)))
					continue;
			} else if (!(!runpath && find_in(rpath, origin, name, found, sizeof(found))) &&
				   !find_in(runpath, origin, name, found, sizeof(found)) &&
				   !find_in(dflt, origin, name, found, sizeof(found))) {
				continue;
			}
			nvv = realloc(v, (nv + 1) * sizeof(*v));
			if (!nvv)
				break;
			v = nvv;
			if ((v[nv] = strdup(found)))
				nv++;
		}
		break;
	}
out:
	elf_end(elf);
	close(fd);
	*out = v;
	*n = nv;
	return rc;
}

/* the value of variable name in env (len bytes of NUL-terminated strings), NULL if absent */
static const char *env_value(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < len;) {
		const char *e = env + i;
		size_t el = strnlen(e, len - i);

		if (el > nl && e[nl] == '=' && strncmp(e, name, nl) == 0 && i + el < len)
			return e + nl + 1;
		i += el + 1;
	}
	return NULL;
}

/* Each name of list (separated by any of seps) as ld.so finds it, appended to *v */
static int preload_list(const char *list, const char *seps, const char *libpath, const char *cwd,
			char ***v, size_t *nv)
{
	while (list && *list) {
		size_t len = strcspn(list, seps);
		char name[4096], found[8200], **nvv;
		bool ok;

		if (len && len < sizeof(name)) {
			memcpy(name, list, len);
			name[len] = '\0';
			if (strchr(name, '/')) {
				if (name[0] == '/' || !cwd)
					snprintf(found, sizeof(found), "%s", name);
				else
					snprintf(found, sizeof(found), "%s/%s", cwd, name);
				ok = access(found, R_OK) == 0;
			} else {
				ok = find_in(libpath, "", name, found, sizeof(found)) ||
				     find_in(lib_dirs, "", name, found, sizeof(found));
			}
			if (ok) {
				nvv = realloc(*v, (*nv + 1) * sizeof(**v));
				if (!nvv || !(nvv[*nv] = strdup(found))) {
					if (nvv)
						*v = nvv;
					return -ENOMEM;
				}
				*v = nvv;
				(*nv)++;
			}
		}
		list += len;
		list += strspn(list, seps);
	}
	return 0;
}

int unwind_preloads(const char *env, size_t len, const char *file, const char *cwd,
		    char ***out, size_t *n)
{
	const char *libpath = env ? env_value(env, len, "LD_LIBRARY_PATH") : NULL;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (env)
		rc = preload_list(env_value(env, len, "LD_PRELOAD"), " :", libpath, cwd, out, n);
	if (!rc && file)
		rc = preload_list(file, " :\t\n", libpath, cwd, out, n);
	return rc;
}
