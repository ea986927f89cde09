/* Which function a call site calls through the PLT or the GOT (x86-64), read from the caller's
 * ELF file. glibc makes some allocator entry points aliases of one another (aligned_alloc is
 * memalign), so a uprobe on the shared address cannot tell which name the program called; the
 * caller's call instruction can, through the dynamic relocation of the GOT slot it goes through.
 *
 * Everything is done in the module's ELF virtual addresses: rel32 and rip-relative
 * displacements do not depend on the load address, so no load bias is needed. The bytes come
 * from the file image libelf already holds for the module, never from process memory, so call
 * sites stay decodable after the process has exited.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "symbolize/sym_internal.h"

/* The longest stub decoded: endbr64 (4 bytes), then bnd jmp *disp32(%rip) (7 bytes). */
#define STUB_MAX 11

static const unsigned char ENDBR64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* A cached answer for one return address; name NULL means -ENOENT. */
struct cached_call {
	const char *name;
};

struct image {
	Elf *elf;
	const unsigned char *data;
	size_t size;
};

static bool module_image(struct sym_module *m, struct image *img)
{
	Dwarf_Addr bias;
	char *raw;

	img->elf = !sym_module__open(m) ? dwfl_module_getelf(m->dmod, &bias) : NULL;
	if (!img->elf)
		return false;
	raw = elf_rawfile(img->elf, &img->size);
	img->data = (const unsigned char *)raw;
	return raw != NULL;
}

/* Copy up to n file-backed bytes at ELF vaddr from one PT_LOAD segment (an executable one if
 * `exec`); returns how many could be copied, 0 if vaddr is not in such a segment. */
static size_t read_vaddr(const struct sym_module *m, const struct image *img, uint64_t vaddr,
			 unsigned char *buf, size_t n, bool exec)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_segment *sg = &m->segs[i];
		uint64_t rel, off;

		if ((exec && !sg->exec) || vaddr < sg->vaddr || vaddr - sg->vaddr >= sg->filesz)
			continue;
		rel = vaddr - sg->vaddr;
		if (n > sg->filesz - rel)
			n = (size_t)(sg->filesz - rel);
		off = sg->offset + rel;
		/* A truncated file: program headers may promise more than is there. */
		if (off >= img->size)
			return 0;
		if (n > img->size - off)
			n = (size_t)(img->size - off);
		memcpy(buf, img->data + off, n);
		return n;
	}
	return 0;
}

static int64_t le32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* The GOT slot that a PLT-style stub at `target` jumps through. Covers classic .plt entries
 * (jmp *disp(%rip)), .plt.sec and IBT .plt.got entries (endbr64 first) and MPX-era ones (bnd
 * prefix): what follows the jump (push/jmp to PLT0 for lazy binding, padding) is never
 * executed before the jump and so does not matter. */
static bool stub_slot(const struct sym_module *m, const struct image *img, uint64_t target,
		      uint64_t *slot)
{
	unsigned char b[STUB_MAX];
	size_t n, i = 0;

	n = read_vaddr(m, img, target, b, sizeof(b), true);
	if (n >= sizeof(ENDBR64) && memcmp(b, ENDBR64, sizeof(ENDBR64)) == 0)
		i = sizeof(ENDBR64);
	if (i < n && b[i] == 0xf2)
		i++;
	if (n - i < 6 || b[i] != 0xff || b[i + 1] != 0x25)
		return false;
	*slot = target + i + 6 + (uint64_t)le32(b + i + 2);
	return true;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct sym_got_slot *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return 0;
}

struct slot_vec {
	struct sym_got_slot *v;
	size_t n, cap;
};

static int push_slot(struct slot_vec *v, uint64_t vaddr, const char *name)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;
		struct sym_got_slot *nv = realloc(v->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		v->v = nv;
		v->cap = ncap;
	}
	v->v[v->n++] = (struct sym_got_slot){ .vaddr = vaddr, .name = name };
	return 0;
}

static bool wanted_reloc(const GElf_Rela *r)
{
	unsigned type = GELF_R_TYPE(r->r_info);

	/* IRELATIVE and RELATIVE slots name no symbol. */
	return (type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) && GELF_R_SYM(r->r_info);
}

/* Append the JUMP_SLOT and GLOB_DAT relocations of one SHT_RELA section that refers to a
 * dynamic symbol table. */
static int add_rela_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slot_vec *v)
{
	Elf_Data *rdata, *sdata;
	Elf_Scn *symscn;
	GElf_Shdr ssh;
	size_t count;

	symscn = elf_getscn(elf, sh->sh_link);
	if (!sh->sh_entsize || !symscn || !gelf_getshdr(symscn, &ssh) ||
	    ssh.sh_type != SHT_DYNSYM)
		return 0;
	rdata = elf_getdata(scn, NULL);
	sdata = elf_getdata(symscn, NULL);
	if (!rdata || !sdata)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		const char *name;
		GElf_Rela r;
		GElf_Sym sym;

		if (!gelf_getrela(rdata, (int)i, &r))
			break;
		if (!wanted_reloc(&r))
			continue;
		if (!gelf_getsym(sdata, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		name = elf_strptr(elf, ssh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (push_slot(v, r.r_offset, name))
			return -ENOMEM;
	}
	return 0;
}

/* File offset of `size` file-backed bytes at ELF vaddr, or false. */
static bool vaddr_to_off(const struct sym_module *m, const struct image *img, uint64_t vaddr,
			 uint64_t size, uint64_t *off)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_segment *sg = &m->segs[i];

		if (vaddr < sg->vaddr || vaddr - sg->vaddr >= sg->filesz ||
		    size > sg->filesz - (vaddr - sg->vaddr))
			continue;
		*off = sg->offset + (vaddr - sg->vaddr);
		return *off <= img->size && size <= img->size - *off;
	}
	return false;
}

struct dyn_info {
	uint64_t rela, relasz, jmprel, pltrelsz, pltrel, symtab, strtab, strsz;
};

static bool read_dynamic(const struct image *img, struct dyn_info *d)
{
	Elf_Data *dyn = NULL;
	size_t phnum;

	if (elf_getphdrnum(img->elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum && !dyn; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(img->elf, (int)i, &ph) && ph.p_type == PT_DYNAMIC &&
		    ph.p_offset <= img->size && ph.p_filesz <= img->size - ph.p_offset)
			dyn = elf_getdata_rawchunk(img->elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ELF_T_DYN);
	}
	for (int i = 0; dyn; i++) {
		GElf_Dyn e;

		if (!gelf_getdyn(dyn, i, &e) || e.d_tag == DT_NULL)
			break;
		if (e.d_tag == DT_RELA)
			d->rela = e.d_un.d_ptr;
		else if (e.d_tag == DT_RELASZ)
			d->relasz = e.d_un.d_val;
		else if (e.d_tag == DT_JMPREL)
			d->jmprel = e.d_un.d_ptr;
		else if (e.d_tag == DT_PLTRELSZ)
			d->pltrelsz = e.d_un.d_val;
		else if (e.d_tag == DT_PLTREL)
			d->pltrel = e.d_un.d_val;
		else if (e.d_tag == DT_SYMTAB)
			d->symtab = e.d_un.d_ptr;
		else if (e.d_tag == DT_STRTAB)
			d->strtab = e.d_un.d_ptr;
		else if (e.d_tag == DT_STRSZ)
			d->strsz = e.d_un.d_val;
	}
	return dyn != NULL;
}

static Elf_Data *file_chunk(const struct sym_module *m, const struct image *img, uint64_t vaddr,
			    uint64_t size, Elf_Type type)
{
	uint64_t off;

	if (!vaddr || !size || !vaddr_to_off(m, img, vaddr, size, &off))
		return NULL;
	return elf_getdata_rawchunk(img->elf, (int64_t)off, size, type);
}

/* Relocations of a file without section headers, found the way ld.so finds them: through
 * PT_DYNAMIC (DT_RELA, DT_JMPREL, DT_SYMTAB, DT_STRTAB hold vaddrs as the linker wrote them). */
static int add_dynamic_relocs(const struct sym_module *m, const struct image *img,
			      struct slot_vec *v)
{
	size_t sym_size = gelf_fsize(img->elf, ELF_T_SYM, 1, EV_CURRENT);
	struct dyn_info d = { 0 };
	Elf_Data *rel[2], *syms;
	uint64_t max_sym = 0, str_off;
	GElf_Rela r;

	if (!sym_size || !read_dynamic(img, &d) || !d.strsz ||
	    !vaddr_to_off(m, img, d.strtab, d.strsz, &str_off))
		return 0;
	rel[0] = file_chunk(m, img, d.rela, d.relasz, ELF_T_RELA);
	rel[1] = d.pltrel == DT_RELA ? file_chunk(m, img, d.jmprel, d.pltrelsz, ELF_T_RELA) : NULL;

	/* The dynamic section does not give the symbol count: the highest index used bounds what
	 * is read of the symbol table. */
	for (int t = 0; t < 2; t++)
		for (int i = 0; rel[t] && gelf_getrela(rel[t], i, &r); i++)
			if (wanted_reloc(&r) && GELF_R_SYM(r.r_info) > max_sym)
				max_sym = GELF_R_SYM(r.r_info);
	if (!max_sym)
		return 0;
	syms = file_chunk(m, img, d.symtab, (max_sym + 1) * sym_size, ELF_T_SYM);
	if (!syms)
		return 0;

	for (int t = 0; t < 2; t++) {
		for (int i = 0; rel[t] && gelf_getrela(rel[t], i, &r); i++) {
			const char *name;
			GElf_Sym sym;

			if (!wanted_reloc(&r) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !sym.st_name || sym.st_name >= d.strsz)
				continue;
			name = (const char *)img->data + str_off + sym.st_name;
			/* The name must end inside the string table. */
			if (!memchr(name, '\0', d.strsz - sym.st_name))
				continue;
			if (push_slot(v, r.r_offset, name))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Build the sorted slot -> name table once per module: from the SHT_RELA sections that refer
 * to .dynsym, or from PT_DYNAMIC when the file has no section headers. */
static int load_got_slots(struct sym_module *m, const struct image *img)
{
	struct slot_vec v = { 0 };
	Elf_Scn *scn = NULL;
	size_t shnum, j = 0;
	int err = 0;

	if (elf_getshdrnum(img->elf, &shnum) || !shnum) {
		err = add_dynamic_relocs(m, img, &v);
	} else {
		while (!err && (scn = elf_nextscn(img->elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
				err = add_rela_section(img->elf, scn, &sh, &v);
		}
	}
	if (err) {
		free(v.v);
		return err;
	}
	if (v.n) {
		qsort(v.v, v.n, sizeof(*v.v), slot_cmp);
		/* One slot has one relocation in a sane file; keep the first if not. */
		for (size_t i = 0; i < v.n; i++)
			if (!j || v.v[j - 1].vaddr != v.v[i].vaddr)
				v.v[j++] = v.v[i];
	}
	m->got_slots = v.v;
	m->ngot_slots = j;
	m->got_loaded = true;
	return 0;
}

static const char *slot_name(const struct sym_module *m, uint64_t slot)
{
	size_t lo = 0, hi = m->ngot_slots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->got_slots[mid].vaddr < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ngot_slots && m->got_slots[lo].vaddr == slot ? m->got_slots[lo].name : NULL;
}

static int decode_call(struct sym_module *m, uint64_t ret, const char **name)
{
	unsigned char b[6];
	struct image img;
	GElf_Ehdr eh;
	uint64_t slot;
	int err;

	if (!module_image(m, &img) || !gelf_getehdr(img.elf, &eh))
		return -ENOENT;
	if (eh.e_machine != EM_X86_64)
		return -EOPNOTSUPP;
	if (!m->got_loaded) {
		err = load_got_slots(m, &img);
		if (err)
			return err;
	}
	if (!m->ngot_slots || ret < 5 || read_vaddr(m, &img, ret - 5, b + 1, 5, true) != 5)
		return -ENOENT;
	if (b[1] == 0xe8) {
		/* call rel32: its target is code of this same module, a PLT-style stub when the
		 * callee lives in another one. */
		if (!stub_slot(m, &img, ret + (uint64_t)le32(b + 2), &slot))
			return -ENOENT;
	} else if (b[1] == 0x15 && ret >= 6 && read_vaddr(m, &img, ret - 6, b, 1, true) == 1 &&
		   b[0] == 0xff) {
		/* call *disp32(%rip), as -fno-plt compiles calls to other modules */
		slot = ret + (uint64_t)le32(b + 2);
	} else {
		return -ENOENT;
	}
	*name = slot_name(m, slot);
	return *name ? 0 : -ENOENT;
}

int sym_module__called_symbol(struct sym_module *m, uint64_t ret_vaddr, const char **name)
{
	struct cached_call *c;
	const char *found = NULL;
	int err;

	c = u64map__get(&m->call_cache, ret_vaddr);
	if (c) {
		*name = c->name;
		return c->name ? 0 : -ENOENT;
	}
	err = decode_call(m, ret_vaddr, &found);
	if (err && err != -ENOENT)
		return err;
	/* Without memory we only lose the cache entry. */
	c = malloc(sizeof(*c));
	if (c) {
		c->name = found;
		if (u64map__put(&m->call_cache, ret_vaddr, c))
			free(c);
	}
	*name = found;
	return err;
}

/* Bytes after the FF opcode of `call r/m64` (ModRM, SIB, displacement), or -1 if they do not
 * fit in avail. */
static int modrm_len(const unsigned char *m, size_t avail)
{
	unsigned int mod = m[0] >> 6, rm = m[0] & 7;
	int len = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return -1;
		len++;
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;	/* SIB with no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* rip-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/* Does a call instruction end exactly at b + n (b holds the n bytes before a return address)?
 * Every x86-64 near call: E8 rel32, or [3E] [REX] FF /2 with any addressing form. */
static bool ends_in_call(const unsigned char *b, size_t n)
{
	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (size_t k = 2; k <= n && k <= 9; k++) {
		const unsigned char *ins = b + n - k;
		size_t o = 0;
		int ml;

		if (ins[o] == 0x3e && k > 2)
			o++;		/* notrack (IBT) */
		if ((ins[o] & 0xf0) == 0x40 && o + 2 < k)
			o++;		/* REX */
		if (ins[o] != 0xff || ((ins[o + 1] >> 3) & 7) != 2)
			continue;
		ml = modrm_len(ins + o + 1, k - o - 1);
		if (ml > 0 && o + 1 + (size_t)ml == k)
			return true;
	}
	return false;
}

int sym_module__follows_call(struct sym_module *m, uint64_t ret_vaddr)
{
	unsigned char b[9];
	struct image img;
	size_t n;

	if (!module_image(m, &img) || ret_vaddr < 2)
		return -ENOENT;
	/* the longest call is 9 bytes; fewer are readable at the start of a segment */
	for (n = ret_vaddr < sizeof(b) ? ret_vaddr : sizeof(b); n >= 2; n--)
		if (read_vaddr(m, &img, ret_vaddr - n, b, n, true) == n)
			return ends_in_call(b, n);
	return -ENOENT;
}

int sym_module__follows_syscall(struct sym_module *m, uint64_t vaddr)
{
	unsigned char b[2];
	struct image img;

	if (!module_image(m, &img) || vaddr < 2 || read_vaddr(m, &img, vaddr - 2, b, 2, true) != 2)
		return -ENOENT;
	/* syscall, sysenter, int $0x80 */
	return (b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34)) || (b[0] == 0xcd && b[1] == 0x80);
}

/* The ranges of .plt, .plt.sec and .plt.got, from the section headers (none without them). */
static void load_plt(struct sym_module *m, const struct image *img)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(img->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(img->elf, scn)) && m->nplt < sizeof(m->plt) / sizeof(m->plt[0])) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		name = elf_strptr(img->elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".plt") && strcmp(name, ".plt.sec") &&
			      strcmp(name, ".plt.got")))
			continue;
		m->plt[m->nplt++] = (struct sym_plt_sec){
			.start = sh.sh_addr, .end = sh.sh_addr + sh.sh_size,
			/* 16 bytes a stub (8 in a .plt.got without IBT, as its entsize says) */
			.entsize = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16,
		};
	}
}

/* The PLT section holding vaddr, NULL: none */
static const struct sym_plt_sec *plt_section(struct sym_module *m, uint64_t vaddr)
{
	struct image img;
	GElf_Ehdr eh;

	if (!m->plt_loaded) {	/* once: most addresses are in no PLT, and say so at once */
		m->plt_loaded = true;
		if (module_image(m, &img) && gelf_getehdr(img.elf, &eh) &&
		    eh.e_machine == EM_X86_64)
			load_plt(m, &img);
	}
	for (uint8_t i = 0; i < m->nplt; i++)
		if (vaddr >= m->plt[i].start && vaddr < m->plt[i].end)
			return &m->plt[i];
	return NULL;
}

bool sym_module__in_plt(struct sym_module *m, uint64_t vaddr)
{
	return plt_section(m, vaddr) != NULL;
}

int sym_module__plt_symbol(struct sym_module *m, uint64_t vaddr, const char **name)
{
	const struct sym_plt_sec *ps = plt_section(m, vaddr);
	struct image img;
	uint64_t stub, slot;
	int err;

	if (!ps || !module_image(m, &img))
		return -ENOENT;
	if (!m->got_loaded) {
		err = load_got_slots(m, &img);
		if (err)
			return err;
	}
	/* the stub holding vaddr: any of its instructions belongs to it (a lazy .plt entry's
	 * push and jmp to PLT0 too), its first one jumps through the callee's GOT slot */
	stub = ps->start + (vaddr - ps->start) / ps->entsize * ps->entsize;
	if (!m->ngot_slots || !stub_slot(m, &img, stub, &slot))
		return -ENOENT;
	*name = slot_name(m, slot);
	return *name ? 0 : -ENOENT;
}
