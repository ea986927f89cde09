/* A minimal vmlinux BTF per BPF object, for its CO-RE relocations (see minbtf.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/log.h"
#include "core/bpfutil.h"
#include "core/minbtf.h"
#include "symbolize/symbolize.h"
#include "symbolize/sym_internal.h"

#define MINBTF_FORMAT	1	/* in the cache key: a change of what is kept makes new files */

/* .BTF.ext's header and a CO-RE relocation record (the kernel's include/uapi/linux/btf.h has
 * no .BTF.ext; its format is in Documentation/bpf/btf.rst and libbpf's sources) */
struct ext_header {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len, line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

struct core_relo {
	uint32_t insn_off, type_id, access_str_off, kind;
};

enum {	/* enum bpf_core_relo_kind */
	RELO_FIELD_BYTE_OFFSET, RELO_FIELD_BYTE_SIZE, RELO_FIELD_EXISTS, RELO_FIELD_SIGNED,
	RELO_FIELD_LSHIFT_U64, RELO_FIELD_RSHIFT_U64, RELO_TYPE_ID_LOCAL, RELO_TYPE_ID_TARGET,
	RELO_TYPE_EXISTS, RELO_TYPE_SIZE, RELO_ENUMVAL_EXISTS, RELO_ENUMVAL_VALUE,
	RELO_TYPE_MATCHES,
};

#define MAX_SPEC 64	/* access string indices (libbpf's own limit) */

struct step {
	const char *name;	/* a member of this name; NULL: an array element */
};

struct mb {
	const struct btf *vm, *loc;
	uint32_t n;		/* vmlinux's types + 1 */
	uint8_t *keep;		/* [n] */
	uint32_t *mbase;	/* [n] first index in mkeep of a composite's members */
	uint8_t *mkeep;		/* a member on an access path */
	uint32_t *stack, nstack;	/* the closure's work list */
	struct cands { uint32_t *ids; int n; } *cands;	/* by local type id, n -1: not yet */
	uint32_t nloc;
};

/* The name without a ___flavor suffix (libbpf: bpf_core_essential_name_len) */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name);

	if (n < 5)
		return n;
	for (size_t i = n - 5;; i--) {
		if (name[i] != '_' && !strncmp(name + i + 1, "___", 3) && name[i + 4] != '_')
			return i + 1;
		if (!i)
			return n;
	}
}

static const struct btf_type *skip_mods(const struct btf *b, uint32_t id, uint32_t *out)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		id = t->type;
		t = btf__type_by_id(b, id);
	}
	if (out)
		*out = id;
	return t;
}

static void mark(struct mb *m, uint32_t id)
{
	if (id && id < m->n && !m->keep[id]) {
		m->keep[id] = 1;
		m->stack[m->nstack++] = id;
	}
}

/* Mark every member named `name` of the composite id (through anonymous composite members,
 * as libbpf searches), and walk the rest of the path from each. */
static void walk(struct mb *m, uint32_t id, const struct step *s, int ns);

static void find_member(struct mb *m, uint32_t id, const struct step *s, int ns)
{
	const struct btf_type *t = btf__type_by_id(m->vm, id);
	const struct btf_member *mem = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, mem++) {
		const char *mn = btf__name_by_offset(m->vm, mem->name_off);
		uint32_t mid;
		const struct btf_type *mt = skip_mods(m->vm, mem->type, &mid);

		if (mn && *mn) {
			if (strcmp(mn, s->name))
				continue;
			m->mkeep[m->mbase[id] + i] = 1;
			walk(m, mem->type, s + 1, ns - 1);
		} else if (mt && btf_is_composite(mt)) {
			/* the member is kept only if something was found under it; kept
			 * anyway: an anonymous member is a few bytes */
			m->mkeep[m->mbase[id] + i] = 1;
			find_member(m, mid, s, ns);
		}
	}
}

static void walk(struct mb *m, uint32_t id, const struct step *s, int ns)
{
	const struct btf_type *t;

	if (!ns)
		return;
	t = skip_mods(m->vm, id, &id);
	if (!t)
		return;
	if (!s->name) {
		if (btf_is_array(t))
			walk(m, btf_array(t)->type, s + 1, ns - 1);
		return;
	}
	if (btf_is_composite(t))
		find_member(m, id, s, ns);
}

/* The named steps of a field relocation's access string over the local type (anonymous
 * members are not matched by name: libbpf skips them in its spec too). -1: not a path. */
static int local_steps(const struct btf *loc, uint32_t id, const char *acc, struct step *s)
{
	const struct btf_type *t = skip_mods(loc, id, &id);
	int ns = 0, k = 0;

	while (*acc) {
		char *end;
		unsigned long idx = strtoul(acc, &end, 10);

		if (end == acc || (*end && *end != ':'))
			return -1;
		acc = *end ? end + 1 : end;
		if (k++ == 0)
			continue;	/* the root's own index (an array of it) */
		if (!t || ns >= MAX_SPEC)
			return -1;
		if (btf_is_composite(t)) {
			const struct btf_member *mem;
			const char *mn;

			if (idx >= btf_vlen(t))
				return -1;
			mem = btf_members(t) + idx;
			mn = btf__name_by_offset(loc, mem->name_off);
			if (mn && *mn)
				s[ns++].name = mn;
			t = skip_mods(loc, mem->type, &id);
		} else if (btf_is_array(t)) {
			s[ns++].name = NULL;
			t = skip_mods(loc, btf_array(t)->type, &id);
		} else {
			return -1;
		}
	}
	return ns;
}

/* vmlinux's types with the local type's kind and essential name: libbpf's candidates */
static int candidates(struct mb *m, const struct btf_type *lt, const char *lname, uint32_t **c)
{
	size_t len = essential_len(lname);
	uint32_t nc = 0, cap = 0;

	*c = NULL;
	for (uint32_t i = 1; i < m->n; i++) {
		const struct btf_type *t = btf__type_by_id(m->vm, i);
		const char *name = btf__name_by_offset(m->vm, t->name_off);

		if (!name || name[0] != lname[0] || !btf_kind_core_compat(t, lt) ||
		    strncmp(name, lname, len) || essential_len(name) != len)
			continue;
		if (nc == cap) {
			uint32_t *p = realloc(*c, (cap = cap ? 2 * cap : 4) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*c = p;
		}
		(*c)[nc++] = i;
	}
	return (int)nc;
}

static int relocation(struct mb *m, const struct core_relo *r)
{
	const struct btf_type *lt;
	const char *lname, *acc;
	struct step steps[MAX_SPEC];
	uint32_t *c;
	int nc, ns = 0;

	switch (r->kind) {
	case RELO_TYPE_ID_LOCAL:
		return 0;	/* the object's own type: nothing of the kernel's */
	case RELO_FIELD_BYTE_OFFSET: case RELO_FIELD_BYTE_SIZE: case RELO_FIELD_EXISTS:
	case RELO_FIELD_SIGNED: case RELO_FIELD_LSHIFT_U64: case RELO_FIELD_RSHIFT_U64:
	case RELO_TYPE_EXISTS: case RELO_TYPE_SIZE:
	case RELO_ENUMVAL_EXISTS: case RELO_ENUMVAL_VALUE:
		break;
	default:
		/* a target type id would be the copy's, not the kernel's; "matches" compares
		 * whole types */
		return -EOPNOTSUPP;
	}
	lt = btf__type_by_id(m->loc, r->type_id);
	lname = lt ? btf__name_by_offset(m->loc, lt->name_off) : NULL;
	acc = btf__name_by_offset(m->loc, r->access_str_off);
	if (!lt || !lname || !*lname || !acc)
		return -EOPNOTSUPP;
	if (r->kind <= RELO_FIELD_RSHIFT_U64) {
		if (!btf_is_composite(lt))
			return -EOPNOTSUPP;
		ns = local_steps(m->loc, r->type_id, acc, steps);
		if (ns < 0)
			return -EOPNOTSUPP;
	}
	if (r->type_id >= m->nloc)
		return -EINVAL;
	/* one search of vmlinux's types per relocated type (a struct is relocated often) */
	if (m->cands[r->type_id].n < 0) {
		nc = candidates(m, lt, lname, &c);
		if (nc < 0) {
			free(c);
			return nc;
		}
		m->cands[r->type_id].ids = c;
		m->cands[r->type_id].n = nc;
	}
	c = m->cands[r->type_id].ids;
	nc = m->cands[r->type_id].n;
	if (!nc)
		return -EOPNOTSUPP;	/* none in vmlinux: libbpf would search the modules' */
	for (int i = 0; i < nc; i++) {
		mark(m, c[i]);
		walk(m, c[i], steps, ns);
	}
	return 0;
}

/* Everything the kept types refer to (a composite: through its kept members only). */
static int closure(struct mb *m)
{
	while (m->nstack) {
		uint32_t id = m->stack[--m->nstack];
		const struct btf_type *t = btf__type_by_id(m->vm, id);

		switch (btf_kind(t)) {
		case BTF_KIND_INT: case BTF_KIND_FLOAT: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		case BTF_KIND_FWD:
			break;
		case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
			mark(m, t->type);
			break;
		case BTF_KIND_ARRAY:
			mark(m, btf_array(t)->type);
			mark(m, btf_array(t)->index_type);
			break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION:
			for (int i = 0; i < btf_vlen(t); i++)
				if (m->mkeep[m->mbase[id] + i])
					mark(m, btf_members(t)[i].type);
			break;
		case BTF_KIND_FUNC_PROTO:
			mark(m, t->type);
			for (int i = 0; i < btf_vlen(t); i++)
				mark(m, btf_params(t)[i].type);
			break;
		default:
			return -EOPNOTSUPP;	/* not reached from a type a relocation names */
		}
	}
	return 0;
}

static int copy(struct mb *m, struct btf *out)
{
	uint32_t *nid = calloc(m->n, sizeof(*nid)), next = 1;
	int err = 0;

	if (!nid)
		return -ENOMEM;
	for (uint32_t i = 1; i < m->n; i++)
		if (m->keep[i])
			nid[i] = next++;
	for (uint32_t i = 1; i < m->n && err >= 0; i++) {
		const struct btf_type *t = btf__type_by_id(m->vm, i);
		const char *name = btf__name_by_offset(m->vm, t->name_off);

		if (!m->keep[i])
			continue;
		switch (btf_kind(t)) {
		case BTF_KIND_INT: case BTF_KIND_FLOAT: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
			err = btf__add_type(out, m->vm, t);	/* no type ids in them */
			break;
		case BTF_KIND_FWD:
			err = btf__add_fwd(out, name, btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
			break;
		case BTF_KIND_PTR:
			err = btf__add_ptr(out, nid[t->type]);
			break;
		case BTF_KIND_TYPEDEF:
			err = btf__add_typedef(out, name, nid[t->type]);
			break;
		case BTF_KIND_VOLATILE:
			err = btf__add_volatile(out, nid[t->type]);
			break;
		case BTF_KIND_CONST:
			err = btf__add_const(out, nid[t->type]);
			break;
		case BTF_KIND_RESTRICT:
			err = btf__add_restrict(out, nid[t->type]);
			break;
		case BTF_KIND_TYPE_TAG:
			err = btf__add_type_tag(out, name, nid[t->type]);
			break;
		case BTF_KIND_ARRAY:
			err = btf__add_array(out, nid[btf_array(t)->index_type],
					     nid[btf_array(t)->type], btf_array(t)->nelems);
			break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION:
			err = btf_is_struct(t) ? btf__add_struct(out, name, t->size)
					       : btf__add_union(out, name, t->size);
			for (int k = 0; k < btf_vlen(t) && err >= 0; k++) {
				const struct btf_member *mem = btf_members(t) + k;

				if (!m->mkeep[m->mbase[i] + k])
					continue;
				err = btf__add_field(out, btf__name_by_offset(m->vm, mem->name_off),
						     nid[mem->type], btf_member_bit_offset(t, k),
						     btf_member_bitfield_size(t, k));
			}
			break;
		case BTF_KIND_FUNC_PROTO:
			err = btf__add_func_proto(out, nid[t->type]);
			for (int k = 0; k < btf_vlen(t) && err >= 0; k++)
				err = btf__add_func_param(out, btf__name_by_offset(m->vm,
							  btf_params(t)[k].name_off),
							  nid[btf_params(t)[k].type]);
			break;
		default:
			err = -EOPNOTSUPP;
		}
	}
	free(nid);
	return err < 0 ? err : 0;
}

int minbtf__build(const struct btf *vmlinux, const struct btf *local, const void *ext,
		  size_t ext_size, struct btf **out)
{
	const struct ext_header *h = ext;
	struct mb m = { .vm = vmlinux, .loc = local };
	const uint8_t *p, *end;
	uint32_t rec_size, nmem = 0;
	struct btf *b = NULL;
	int err = -EOPNOTSUPP;

	*out = NULL;
	if (!ext || ext_size < offsetof(struct ext_header, core_relo_off) || h->magic != 0xeB9F ||
	    h->hdr_len > ext_size)
		return -EINVAL;
	if (h->hdr_len < sizeof(*h) || !h->core_relo_len)
		return -EOPNOTSUPP;	/* no relocations: nothing to gain either */
	if ((uint64_t)h->hdr_len + h->core_relo_off + h->core_relo_len > ext_size ||
	    h->core_relo_len < 4)
		return -EINVAL;
	p = (const uint8_t *)ext + h->hdr_len + h->core_relo_off;
	end = p + h->core_relo_len;
	memcpy(&rec_size, p, 4);
	p += 4;
	if (rec_size < sizeof(struct core_relo))
		return -EINVAL;

	m.n = btf__type_cnt(vmlinux);
	m.keep = calloc(m.n, 1);
	m.mbase = calloc(m.n, sizeof(*m.mbase));
	m.stack = calloc(m.n, sizeof(*m.stack));
	m.nloc = btf__type_cnt(local);
	m.cands = calloc(m.nloc, sizeof(*m.cands));
	if (!m.keep || !m.mbase || !m.stack || !m.cands) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 1; i < m.n; i++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, i);

		m.mbase[i] = nmem;
		if (btf_is_composite(t))
			nmem += btf_vlen(t);
	}
	for (uint32_t i = 0; i < m.nloc; i++)
		m.cands[i].n = -1;
	m.mkeep = calloc(nmem + 1, 1);
	if (!m.mkeep) {
		err = -ENOMEM;
		goto out;
	}
	while (p < end) {
		uint32_t hdr[2];	/* sec_name_off, num_info */

		if (end - p < 8) {
			err = -EINVAL;
			goto out;
		}
		memcpy(hdr, p, 8);
		p += 8;
		if ((uint64_t)hdr[1] * rec_size > (uint64_t)(end - p)) {
			err = -EINVAL;
			goto out;
		}
		for (uint32_t i = 0; i < hdr[1]; i++, p += rec_size) {
			struct core_relo r;

			memcpy(&r, p, sizeof(r));
			err = relocation(&m, &r);
			if (err)
				goto out;
		}
	}
	err = closure(&m);
	if (err)
		goto out;
	b = btf__new_empty();
	if (!b) {
		err = -errno;
		goto out;
	}
	err = copy(&m, b);
	if (!err)
		*out = b;
	else
		btf__free(b);
out:
	free(m.keep);
	free(m.mbase);
	free(m.mkeep);
	free(m.stack);
	for (uint32_t i = 0; m.cands && i < m.nloc; i++)
		free(m.cands[i].ids);
	free(m.cands);
	return err;
}

/* The bytes of the section called name, or NULL */
static const void *elf_section(Elf *e, size_t shstrndx, const char *name, size_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return NULL;
		*size = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

int minbtf__build_elf(const struct btf *vmlinux, const void *elf, size_t elf_size,
		      struct btf **out)
{
	const void *btf_data, *ext;
	size_t btf_size = 0, ext_size = 0, shstrndx;
	struct btf *local = NULL;
	Elf *e;
	int err = -EINVAL;

	*out = NULL;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)elf, elf_size);
	if (!e)
		return -EINVAL;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out;
	btf_data = elf_section(e, shstrndx, ".BTF", &btf_size);
	ext = elf_section(e, shstrndx, ".BTF.ext", &ext_size);
	if (!btf_data || !ext) {
		err = -EOPNOTSUPP;
		goto out;
	}
	local = btf__new(btf_data, btf_size);
	if (!local) {
		err = -errno;
		goto out;
	}
	err = minbtf__build(vmlinux, local, ext, ext_size, out);
out:
	btf__free(local);
	elf_end(e);
	return err;
}

/* The running kernel's identity: the GNU build-id note of /sys/kernel/notes, else uname */
static void kernel_identity(char *buf, size_t len)
{
	struct utsname u;
	char notes[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, notes, sizeof(notes)) : -1;

	if (fd >= 0)
		close(fd);
	for (ssize_t off = 0; n > 0 && off + 12 <= n;) {
		uint32_t nh[3];	/* namesz, descsz, type */
		size_t name_at = off + 12, desc_at;

		memcpy(nh, notes + off, 12);
		desc_at = name_at + ((nh[0] + 3) & ~3u);
		if (desc_at + nh[1] > (size_t)n)
			break;
		if (nh[2] == 3 && nh[0] == 4 && !memcmp(notes + name_at, "GNU", 4) && nh[1] &&
		    nh[1] <= 64) {
			size_t k = 0;

			k += snprintf(buf, len, "build-id:");
			for (uint32_t i = 0; i < nh[1] && k + 3 < len; i++)
				k += snprintf(buf + k, len - k, "%02x",
					      (unsigned char)notes[desc_at + i]);
			return;
		}
		off = desc_at + ((nh[1] + 3) & ~3u);
	}
	if (uname(&u) == 0)
		snprintf(buf, len, "uname:%s %s %s", u.release, u.version, u.machine);
	else
		snprintf(buf, len, "unknown");
}

void minbtf__name(const char *kernel, long long btf_size, const void *elf, size_t elf_size,
		  char *buf, size_t len)
{
	char key[512];
	int n = snprintf(key, sizeof(key), "%d %s %lld %016llx", MINBTF_FORMAT, kernel, btf_size,
			 (unsigned long long)sym_cache__hash(elf, elf_size));

	snprintf(buf, len, "%016llx.btf",
		 (unsigned long long)sym_cache__hash(key, n > 0 && (size_t)n < sizeof(key) ?
						     (size_t)n : strlen(key)));
}

/* vmlinux's BTF, parsed at most once per process (only when a file is missing) */
static struct btf *vmlinux_btf(void)
{
	return bpfutil__vmlinux_btf();
}

const char *minbtf__path(const struct log_ctx *lc, const void *elf, size_t elf_size, char *buf,
			 size_t len)
{
	const char *dir = sym_cache_dir();
	char kernel[256], name[64], *tmp;
	struct stat st;
	struct btf *b;
	const void *raw;
	__u32 raw_size;
	int fd, err;
	bool ok;

	if (!dir || stat("/sys/kernel/btf/vmlinux", &st))
		return NULL;
	kernel_identity(kernel, sizeof(kernel));
	minbtf__name(kernel, (long long)st.st_size, elf, elf_size, name, sizeof(name));
	if (snprintf(buf, len, "%s/btf/%s", dir, name) >= (int)len)
		return NULL;
	fd = sym_cache__open(buf, &st);
	if (fd >= 0) {
		close(fd);
		/* an empty file: made once, and the object needs the kernel's own */
		if (!st.st_size)
			return NULL;
		/* a file libbpf cannot parse would fail the load: made again (~0.1 ms to
		 * check: a few KB) */
		b = btf__parse_raw(buf);
		if (b) {
			btf__free(b);
			return buf;
		}
		pr_debug(lc, "minimal BTF: %s is not BTF: made again", buf);
		unlink(buf);
	}
	if (!vmlinux_btf())
		return NULL;
	err = minbtf__build_elf(vmlinux_btf(), elf, elf_size, &b);
	if (err && err != -EOPNOTSUPP) {
		pr_debug(lc, "minimal BTF: cannot make one: %s", strerror(-err));
		return NULL;
	}
	raw = b ? btf__raw_data(b, &raw_size) : NULL;
	if (b && !raw) {
		btf__free(b);
		return NULL;
	}
	fd = sym_cache__create(buf, &tmp);
	if (fd < 0) {
		btf__free(b);
		return NULL;
	}
	ok = !raw || write(fd, raw, raw_size) == (ssize_t)raw_size;
	btf__free(b);
	if (sym_cache__commit(fd, tmp, buf, ok))
		return NULL;
	pr_debug(lc, "minimal BTF: %s (%u bytes)%s", buf, raw ? raw_size : 0,
		 raw ? "" : ": the object needs the kernel's whole BTF");
	return raw ? buf : NULL;
}
