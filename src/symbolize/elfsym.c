/* File offset of a function symbol in an ELF file, which is what a uprobe is attached at.
 * Read straight from .symtab / .dynsym with libelf, no Dwfl session; a name the object's own
 * tables lack (a local function of a stripped library: glibc's __libc_start_call_main, an
 * IFUNC's implementations such as __memmove_avx_unaligned_erms) from the .symtab of its
 * separate debug file by build-id under /usr/lib/debug, at the object's own offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

enum match {
	MATCH_NONE,
	MATCH_HIDDEN_VERSION,	/* name@VERSION: a compat symbol, only if nothing better */
	MATCH_DEFAULT_VERSION,	/* name@@VERSION */
	MATCH_EXACT,
};

static enum match match_name(const char *sym, const char *want, size_t want_len)
{
	if (strncmp(sym, want, want_len))
		return MATCH_NONE;
	if (!sym[want_len])
		return MATCH_EXACT;
	if (sym[want_len] != '@')
		return MATCH_NONE;
	return sym[want_len + 1] == '@' ? MATCH_DEFAULT_VERSION : MATCH_HIDDEN_VERSION;
}

/* A C++ name as a person writes it ("ns::Acc<long>::run", with or without its parameters)
 * against a mangled symbol: its demangled form is that name, or that name and a parameter
 * list. *others counts the further functions matched (overloads named without parameters). */
static enum match match_demangled(const char *sym, const char *want, size_t want_len)
{
	enum match mt = MATCH_NONE;
	char *d;

	if (strncmp(sym, "_Z", 2) || !(d = sym_demangle(sym)))
		return MATCH_NONE;
	if (!strcmp(d, want) || (!strncmp(d, want, want_len) && d[want_len] == '(' &&
				 !strchr(want, '(')))
		mt = MATCH_EXACT;
	free(d);
	return mt;
}

/* The functions that match a name best, over the symbol tables: their file offsets, distinct
 * (.symtab and .dynsym list a global function twice). */
struct found {
	enum match best;
	bool ifunc;
	size_t n, max;
	uint64_t *off;
};

static void found_add(struct found *f, enum match mt, bool ifunc, uint64_t off)
{
	/* a plain function beats an IFUNC of equal match (the IFUNC is its resolver) */
	if (mt > f->best || (mt == f->best && f->ifunc && !ifunc)) {
		f->best = mt;
		f->ifunc = ifunc;
		f->n = 0;
	} else if (mt < f->best || ifunc != f->ifunc || (mt != MATCH_EXACT && f->n)) {
		return;
	}
	for (size_t i = 0; i < f->n; i++)
		if (f->off[i] == off)
			return;
	if (f->n < f->max)
		f->off[f->n++] = off;
}

/* The file offset of vaddr in elf: in the PT_LOAD segment whose file bytes hold it */
static bool vaddr_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* One symbol table section's functions named name into f. A C++ name (with "::" or a
 * parameter list) also matches demangled symbols. Every function of that exact name counts:
 * static functions of one name in two files, a C++ name's overloads. load: the object a
 * separate debug file's table describes (its sections hold no bytes: offsets are the
 * object's, by its segments); NULL: the table is the object's own. */
static void search_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			 Elf_Data *versym, Elf *load, struct found *f)
{
	bool cxx = strstr(name, "::") || strchr(name, '(');
	size_t want_len = strlen(name), n;
	Elf_Data *data;

	data = elf_getdata(scn, NULL);
	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr tsh;
		GElf_Sym sym;
		const char *sname;
		enum match mt;
		Elf_Scn *tscn;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sname)
			continue;
		mt = match_name(sname, name, want_len);
		if (mt == MATCH_NONE && cxx)
			mt = match_demangled(sname, name, want_len);
		/* .dynsym's names carry no version: a hidden one (a compat symbol, such as
		 * memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14) is in .gnu.version */
		if (mt == MATCH_EXACT && versym) {
			GElf_Versym vs;

			if (gelf_getversym(versym, (int)i, &vs) && (vs & 0x8000))
				mt = MATCH_HIDDEN_VERSION;
		}
		if (mt == MATCH_NONE)
			continue;
		if (load) {
			uint64_t off;

			if (vaddr_offset(load, sym.st_value, &off))
				found_add(f, mt, type == STT_GNU_IFUNC, off);
			continue;
		}
		tscn = elf_getscn(elf, sym.st_shndx);
		if (!tscn || !gelf_getshdr(tscn, &tsh))
			continue;
		found_add(f, mt, type == STT_GNU_IFUNC, sym.st_value - tsh.sh_addr + tsh.sh_offset);
	}
}

/* The function of one table closest to name (version suffixes aside), for sym_elf_close_function */
static void closest_in(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
		       char *out, size_t len, size_t *bestd)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		char plain[256];
		const char *sname;
		GElf_Sym sym;
		size_t d;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sname || !*sname || strlen(sname) >= sizeof(plain))
			continue;
		snprintf(plain, sizeof(plain), "%.*s", (int)strcspn(sname, "@"), sname);
		d = util_edit_distance(name, plain);
		/* ties: the first seen (.symtab before .dynsym; shortest distance wins) */
		if (d < *bestd) {
			*bestd = d;
			snprintf(out, len, "%s", plain);
		}
	}
}

int sym_elf_close_function(const char *path, const char *name, char *out, size_t len)
{
	size_t lim = strlen(name) / 5, bestd;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd;

	if (!path || !name || !out || !len)
		return -EINVAL;
	lim = lim < 2 ? 2 : lim;
	bestd = lim + 1;
	out[0] = '\0';
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && elf_kind(elf) == ELF_K_ELF && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			closest_in(elf, scn, &sh, name, out, len, &bestd);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return out[0] && bestd ? 0 : -ENOENT;
}

/* The object's separate debug file by build-id (/usr/lib/debug/.build-id/xx/rest.debug, as
 * gdb and libdw look for it; Debian's -dbg and -dbgsym packages install theirs there), opened
 * as ELF; NULL when there is none. *fd its descriptor. */
static Elf *debug_file(Elf *elf, int *fd)
{
	char *hex = sym__build_id_hex(elf);
	Elf *d;

	*fd = hex ? sym__open_debug_file(NULL, hex) : -1;
	free(hex);
	if (*fd < 0)
		return NULL;
	d = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (d && elf_kind(d) == ELF_K_ELF)
		return d;
	if (d)
		elf_end(d);
	close(*fd);
	*fd = -1;
	return NULL;
}

/* Names the object's tables lack, from its debug file's .symtab (a local function of a
 * stripped library), at the object's offsets; only an exact match beats what they had. */
static void search_debug_file(Elf *elf, const char *name, struct found *f)
{
	struct found d = { .best = MATCH_NONE, .max = f->max, .off = f->off + f->n };
	Elf_Scn *scn = NULL;
	Elf *dbg;
	int fd;

	if (f->n >= f->max || !(dbg = debug_file(elf, &fd)))
		return;
	d.max = f->max - f->n;
	while ((scn = elf_nextscn(dbg, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			search_table(dbg, scn, &sh, name, NULL, elf, &d);
	}
	if (d.best == MATCH_EXACT && (f->best != MATCH_EXACT)) {
		/* the debug file's functions replace the weaker matches */
		memmove(f->off, d.off, d.n * sizeof(*f->off));
		f->n = d.n;
		f->best = d.best;
		f->ifunc = d.ifunc;
	}
	elf_end(dbg);
	close(fd);
}

int sym_elf_symbol_offsets(const char *path, const char *name, uint64_t *offsets, size_t max,
			   size_t *n)
{
	static const GElf_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };
	struct found f = { .best = MATCH_NONE, .max = max, .off = offsets };
	Elf *elf = NULL;
	int fd, err;

	if (!path || !name || !*name || !offsets || !max || !n)
		return -EINVAL;
	*n = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -ENOEXEC;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;

	/* .dynsym only when .symtab had no exact match (a stripped object) */
	for (size_t t = 0; t < sizeof(order) / sizeof(order[0]) && f.best != MATCH_EXACT; t++) {
		Elf_Scn *scn = NULL, *vscn = NULL;
		Elf_Data *versym = NULL;

		/* the dynamic symbols' versions, index for index */
		while (order[t] == SHT_DYNSYM && (vscn = elf_nextscn(elf, vscn))) {
			GElf_Shdr vsh;

			if (gelf_getshdr(vscn, &vsh) && vsh.sh_type == SHT_GNU_versym) {
				versym = elf_getdata(vscn, NULL);
				break;
			}
		}

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == order[t])
				search_table(elf, scn, &sh, name, versym, NULL, &f);
		}
	}
	if (f.best != MATCH_EXACT)
		search_debug_file(elf, name, &f);
	*n = f.n;
	/* an IFUNC's address is its resolver, which runs once, when the object is relocated:
	 * probed, it counts that, not the calls (offsets are still set) */
	err = f.best == MATCH_NONE ? -ENOENT : f.ifunc ? -EOPNOTSUPP : 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int sym_elf_symbol_offset(const char *path, const char *name, uint64_t *offset)
{
	uint64_t offs[SYM_ELF_MAX_FUNCS];
	size_t n = 0;
	int err = sym_elf_symbol_offsets(path, name, offs, SYM_ELF_MAX_FUNCS, &n);

	if (n)
		*offset = offs[0];
	return err;
}
