/* DWARF lookups for one address: source file:line and the chain of inlined calls, through libdw.
 *
 * dwarf_getscopes would do, but it walks the whole DIE tree of the compilation unit on every
 * call (80 us per address in glibc's large CUs), and above an inlined instance it continues with
 * the scopes of the inlined function's abstract definition, not with its caller. So each CU gets
 * a sorted index of its concrete functions' address ranges, built on first use; a lookup binary
 * searches it and then descends only inside the one function, following the DIEs that contain
 * the address. Each DW_TAG_inlined_subroutine on that path is a frame; its DW_AT_call_file and
 * DW_AT_call_line are where the next outer frame stands.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <elfutils/libdw.h>

#include "symbolize/sym_internal.h"

/* Deeper nesting than this (blocks within inlines within blocks...) is cut off at the
 * innermost levels. */
#define MAX_CHAIN 64
#define MAX_INDEX_DEPTH 16

struct cu_func {
	uint64_t low, high;	/* DWARF addresses, high exclusive */
	Dwarf_Die die;
};

struct cu_index {
	size_t n;
	struct cu_func funcs[];
};

/* A CU's address range, for a file without .debug_aranges (Go's linker writes none, and
 * libdw 0.188's dwfl_module_addrdie then finds no CU): from each CU DIE's ranges, once */
struct sym_cu_range {
	uint64_t low, high;	/* DWARF addresses, high exclusive */
	Dwarf_Off die;		/* the CU DIE's offset */
};

struct func_vec {
	struct cu_func *v;
	size_t n, cap;
	bool oom;
};

static void add_func_ranges(Dwarf_Die *die, struct func_vec *fv)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	/* Declarations and abstract (inline-only) definitions have no ranges: skipped here. */
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (fv->n == fv->cap) {
			size_t ncap = fv->cap ? fv->cap * 2 : 64;
			struct cu_func *nv = realloc(fv->v, ncap * sizeof(*nv));

			if (!nv) {
				fv->oom = true;
				return;
			}
			fv->v = nv;
			fv->cap = ncap;
		}
		fv->v[fv->n++] = (struct cu_func){ start, end, *die };
	}
}

/* Concrete functions sit at CU level, or inside namespaces and classes (C++, Fortran modules),
 * or in a partial unit pulled in with DW_TAG_imported_unit (dwz). */
static void index_children(Dwarf_Die *parent, struct func_vec *fv, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_INDEX_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		Dwarf_Attribute attr;
		Dwarf_Die unit;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			add_func_ranges(&child, fv);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			index_children(&child, fv, depth + 1);
			break;
		case DW_TAG_imported_unit:
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit))
				index_children(&unit, fv, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cu_func_cmp(const void *a, const void *b)
{
	const struct cu_func *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return 0;
}

static struct cu_index *cu_index_get(struct sym_module *m, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu);
	struct func_vec fv = { 0 };
	struct cu_index *idx;

	idx = u64map__get(&m->cu_index, key);
	if (idx)
		return idx;
	index_children(cu, &fv, 0);
	if (fv.oom) {
		free(fv.v);
		return NULL;
	}
	qsort(fv.v, fv.n, sizeof(*fv.v), cu_func_cmp);
	idx = malloc(sizeof(*idx) + fv.n * sizeof(idx->funcs[0]));
	if (idx) {
		idx->n = fv.n;
		for (size_t i = 0; i < fv.n; i++)
			idx->funcs[i] = fv.v[i];
		if (u64map__put(&m->cu_index, key, idx)) {
			free(idx);
			idx = NULL;
		}
	}
	free(fv.v);
	return idx;
}

static const struct cu_func *cu_index_find(const struct cu_index *idx, uint64_t pc)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->funcs[mid].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A few steps back in case ranges nest (a nested function inside its parent's range). */
	for (size_t i = lo; i > 0 && lo - i < 4; i--)
		if (pc < idx->funcs[i - 1].high)
			return &idx->funcs[i - 1];
	return NULL;
}

static bool may_contain_pc(int tag)
{
	switch (tag) {
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_subprogram:	/* GNU C nested function */
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	default:
		return false;
	}
}

/* Path of DIEs from the function down to the innermost one containing pc. Returns its length;
 * chain[0] is the (innermost) real function. */
static int descend(const Dwarf_Die *func, uint64_t pc, Dwarf_Die *chain)
{
	int n = 1;

	chain[0] = *func;
	while (n < MAX_CHAIN) {
		Dwarf_Die child;
		bool found = false;

		if (dwarf_child(&chain[n - 1], &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (!may_contain_pc(tag) || dwarf_haspc(&child, pc) <= 0)
				continue;
			/* A nested function is not called from its parent's body at this pc: it is
			 * the function here. */
			if (tag == DW_TAG_subprogram)
				n = 0;
			chain[n++] = child;
			found = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

static bool is_frame_tag(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
}

static const char *die_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;

	/* integrate: names live on the abstract origin / specification, not the instance */
	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

static bool is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		return true;
	default:
		return false;
	}
}

/* The DIE that carries a function's name where it is declared: an instance's abstract origin,
 * then a definition's declaration (DW_AT_specification), which lies in its namespace or
 * class. */
static void decl_die(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (int i = 0; i < 8; i++) {
		Dwarf_Attribute a;
		Dwarf_Die next;

		if (!dwarf_attr(out, DW_AT_abstract_origin, &a) &&
		    !dwarf_attr(out, DW_AT_specification, &a))
			return;
		if (!dwarf_formref_die(&a, &next))
			return;
		*out = next;
	}
}

/* A C++ function without a linkage name (internal linkage: a static or anonymous-namespace
 * function, a template instantiated with a lambda or another local type, as std::sort with a
 * lambda is) has only its last component in DW_AT_name: "sort<...>". Qualified by the
 * namespaces and classes around its declaration, as gdb names it: "std::sort<...>". A class
 * local to a function starts the name afresh (gdb would prefix the function). Cached by the
 * declaration's DIE: finding a DIE's scopes walks its CU from the top. */
static const char *qualified_name(struct symbolizer *s, struct sym_module *m, Dwarf_Die *die,
				  const char *name)
{
	Dwarf_Die decl, *scopes = NULL;
	Dwarf_Addr bias;
	char buf[1024];
	const char *q;
	uint64_t key;
	size_t len = 0;
	int n;

	if (!name || !is_cxx(die))
		return name;
	decl_die(die, &decl);
	/* a DIE of a dwz-shared file (.gnu_debugaltlink) has offsets of that file's own */
	key = dwarf_dieoffset(&decl) |
	      (dwarf_cu_getdwarf(decl.cu) != dwfl_module_getdwarf(m->dmod, &bias) ? 1ULL << 63 : 0);
	q = u64map__get(&m->qnames, key);
	if (q)
		return q;
	n = dwarf_getscopes_die(&decl, &scopes);
	/* scopes[0] is decl itself, scopes[n - 1] its CU */
	for (int i = n - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *part = dwarf_diename(&scopes[i]);
		int w;

		switch (tag) {
		case DW_TAG_namespace:
			if (!part)
				part = "(anonymous namespace)";
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (part)
				break;
			len = 0;	/* an unnamed class (a lambda's): no name to go by */
			continue;
		default:
			len = 0;	/* a function's or a block's: a local class's scope */
			continue;
		}
		w = snprintf(buf + len, sizeof(buf) - len, "%s::", part);
		if (w < 0 || (size_t)w >= sizeof(buf) - len) {
			len = 0;	/* too long to qualify: the plain name */
			break;
		}
		len += (size_t)w;
	}
	free(scopes);
	if (n <= 0 || !len)
		q = name;
	else if (snprintf(buf + len, sizeof(buf) - len, "%s", name) >= (int)(sizeof(buf) - len) ||
		 !(q = strpool__intern(&s->pool, buf)))
		q = name;
	u64map__put(&m->qnames, key, (void *)q);
	return q;
}

static void die_names(struct symbolizer *s, struct sym_module *m, Dwarf_Die *die,
		      struct sym_frame *f)
{
	const char *linkage = die_string(die, DW_AT_linkage_name);
	const char *name = die_string(die, DW_AT_name);

	if (!linkage)
		linkage = die_string(die, DW_AT_MIPS_linkage_name);
	if (!linkage)
		name = qualified_name(s, m, die, name);
	f->system_name = linkage ? linkage : name;
	f->function = name ? name : linkage;
	/* A mangled linkage name demangles to the qualified name with parameters, where
	 * DW_AT_name is only the last component. An unmangled one is an asm rename (glibc's
	 * __GI_ aliases): DW_AT_name is what the source calls it. */
	if (linkage && !s->opts.no_demangle) {
		const char *d = sym__demangle_interned(s, linkage);

		if (d != linkage)
			f->function = d;
	}
}

static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char **file,
		      int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0)
		*line = (int)v;
	/* DWARF 5 numbers files from 0, DWARF 4 from 1 with a placeholder at 0; libdw's file
	 * table is laid out so the attribute value indexes it directly in both. */
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0 &&
	    v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

static void cu_ranges_build(struct sym_module *m, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	m->cu_ranges_built = true;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die die;
		ptrdiff_t r = 0;

		if (dwarf_offdie(dw, off + hsize, &die)) {
			while ((r = dwarf_ranges(&die, r, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (m->ncu_ranges == cap) {
					size_t nc = cap ? cap * 2 : 64;
					struct sym_cu_range *v = realloc(m->cu_ranges,
									 nc * sizeof(*v));

					if (!v)
						goto out;
					m->cu_ranges = v;
					cap = nc;
				}
				m->cu_ranges[m->ncu_ranges++] =
					(struct sym_cu_range){ .low = lo, .high = hi, .die = off + hsize };
			}
		}
		off = next;
	}
out:
	if (m->ncu_ranges)
		qsort(m->cu_ranges, m->ncu_ranges, sizeof(*m->cu_ranges), cu_range_cmp);
}

/* The CU whose ranges hold addr (a Dwfl address), into *die, when dwfl_module_addrdie found
 * none; NULL if none does */
static Dwarf_Die *cu_by_ranges(struct sym_module *m, Dwarf_Addr addr, Dwarf_Die *die,
			       Dwarf_Addr *dwbias)
{
	Dwarf *dw = dwfl_module_getdwarf(m->dmod, dwbias);
	size_t lo = 0, hi;
	uint64_t pc;

	if (!dw)
		return NULL;
	if (!m->cu_ranges_built)
		cu_ranges_build(m, dw);
	pc = addr - *dwbias;
	hi = m->ncu_ranges;
	while (lo < hi) {	/* the first range starting above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (m->cu_ranges[mid].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= m->cu_ranges[lo - 1].high)
		return NULL;
	return dwarf_offdie(dw, m->cu_ranges[lo - 1].die, die);
}

uint32_t sym_dwarf__frames(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			   struct sym_frame *frames, uint32_t max)
{
	Dwarf_Addr addr = vaddr + m->bias, dwbias = 0;
	Dwarf_Die chain[MAX_CHAIN];
	const struct cu_func *fn;
	struct sym_frame *tmp = NULL;
	Dwarf_Files *files = NULL;
	struct cu_index *idx;
	const char *file = NULL;
	size_t nfiles = 0;
	uint32_t k = 0, n = 0;
	int nchain, line = 0;
	Dwarf_Line *dl;
	Dwarf_Die *cu, cu_die;
	uint64_t pc;

	if (m->dwarf_failed || !max || sym_module__open(m))
		return 0;
	cu = dwfl_module_addrdie(m->dmod, addr, &dwbias);
	if (!cu) {
		Dwarf_Addr b;

		/* Remember "no DWARF at all" so stripped modules stop paying for the search. */
		if (!dwfl_module_getdwarf(m->dmod, &b)) {
			m->dwarf_failed = true;
			return 0;
		}
		cu = cu_by_ranges(m, addr, &cu_die, &dwbias);
		if (!cu)
			return 0;
	}
	pc = addr - dwbias;
	dl = dwarf_getsrc_die(cu, pc);
	if (dl) {
		file = dwarf_linesrc(dl, NULL, NULL);
		if (dwarf_lineno(dl, &line))
			line = 0;
	}

	idx = cu_index_get(m, cu);
	fn = idx ? cu_index_find(idx, pc) : NULL;
	if (!fn) {
		/* No function DIE (hand-written assembly without one, or padding): the line
		 * table alone, for the caller to name from the symbol table. */
		if (!file)
			return 0;
		frames[0] = (struct sym_frame){ .file = file, .line = line };
		return 1;
	}
	nchain = descend(&fn->die, pc, chain);

	for (int i = 0; i < nchain; i++)
		if (is_frame_tag(dwarf_tag(&chain[i])))
			k++;
	tmp = calloc(k, sizeof(*tmp));
	if (!tmp)
		return 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;

	/* Innermost first: walk the chain bottom-up. */
	for (int i = nchain - 1, j = 0; i >= 0; i--) {
		int tag = dwarf_tag(&chain[i]);

		if (!is_frame_tag(tag))
			continue;
		die_names(s, m, &chain[i], &tmp[j]);
		tmp[j].file = file;
		tmp[j].line = line;
		j++;
		if (tag == DW_TAG_inlined_subroutine)
			call_site(&chain[i], files, nfiles, &file, &line);
	}
	/* Too deep: keep the innermost frames and the outermost, which names the symbol. */
	n = k <= max ? k : max;
	for (uint32_t j = 0; j + 1 < n; j++)
		frames[j] = tmp[j];
	if (n)
		frames[n - 1] = tmp[k - 1];
	free(tmp);
	return n;
}
