/* Kernel text symbols from /proc/kallsyms, sorted once for binary search, each with its region:
 * the core kernel, a module, or BPF programs.
 *
 * The file is read whole into one buffer that also serves as the name storage (lines are cut
 * in place), so loading ~120k lines is one read loop, one parse pass and one sort.
 *
 * kallsyms gives no sizes, so "the closest symbol below" would name the last function of a
 * region for any address past it (data, freed init text, a module loaded after the read). Where
 * the end can be known it is used instead: _etext and _einittext end the core kernel's text
 * and init text, and /proc/modules gives each module's base and size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "symbolize/sym_internal.h"
#include "util/util.h"

#define RANK_END 8	/* _etext, _einittext: where text ends, never a function */

struct ksym {
	uint64_t addr;
	const char *name;
	uint32_t region;	/* index into regions, 0 = the core kernel */
	int rank;		/* lower is preferred among symbols at one address */
};

struct kregion {
	const char *name;	/* NULL: the core kernel; "bpf"; a module's name */
	uint64_t lo, hi;	/* lowest and highest symbol address */
	uint64_t end_mark;	/* highest end marker (core kernel), 0: none */
	uint64_t base, size;	/* from the modules file; size 0: unknown */
	bool any;		/* has symbols */
};

struct ksyms {
	char *buf;
	struct ksym *syms;
	size_t nsyms;
	struct kregion *regions;
	uint32_t nregions, cap_regions;
	/* Read from the cache: the core kernel's symbols only (and module bounds). Any other
	 * address is answered from the whole file, read on first need. */
	bool core_only;
	bool full_tried;
	struct ksyms *full;
	char *kallsyms_path, *modules_path;
	/* from the cache: buf is the file mapped, syms a mapping too (mapped populated, they
	 * cost fewer page faults than read into and built in the heap: ~3.7 -> ~1.5 ms) */
	size_t buf_map, syms_map;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

static int type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	default:
		return 3;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The region named `name` (NULL: the core kernel), added if new; UINT32_MAX on ENOMEM.
 * kallsyms lists a module's symbols together, so the last answer is tried first. */
static uint32_t region_of(struct ksyms *k, const char *name, uint32_t *last)
{
	uint32_t i;

	if (!name)
		return 0;
	if (*last && !strcmp(k->regions[*last].name, name))
		return *last;
	for (i = 1; i < k->nregions; i++)
		if (!strcmp(k->regions[i].name, name))
			return *last = i;
	if (k->nregions == k->cap_regions) {
		uint32_t cap = k->cap_regions * 2;
		struct kregion *n = realloc(k->regions, cap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		k->regions = n;
		k->cap_regions = cap;
	}
	k->regions[k->nregions] = (struct kregion){ .name = name };
	return *last = k->nregions++;
}

/* /proc/modules: "name size refs deps state 0xaddr ...". Bounds of modules without text symbols
 * are kept too: an address in them is still known to be theirs. */
static int load_modules(struct ksyms *k, const char *path, char **buf)
{
	uint32_t last = 0;
	char *line, *save = NULL;

	*buf = util_read_file(path, NULL);
	if (!*buf)
		return 0;
	for (line = strtok_r(*buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[6], *s2 = NULL, *tok;
		unsigned long long size, base;
		uint32_t r;
		int n = 0;

		for (tok = strtok_r(line, " ", &s2); tok && n < 6; tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		if (n < 6)
			continue;
		size = strtoull(f[1], NULL, 10);
		base = strtoull(f[5], NULL, 16);
		if (!size || !base)
			continue;
		r = region_of(k, f[0], &last);
		if (r == UINT32_MAX)
			return -ENOMEM;
		k->regions[r].base = base;
		k->regions[r].size = size;
	}
	return 0;
}

/* Module bounds from `modules`; the names of modules without text symbols are copied out
 * of the file's buffer (ksyms__free frees the names of regions without symbols). */
static int attach_modules(struct ksyms *k, const char *modules)
{
	char *mods_buf = NULL;
	int err = load_modules(k, modules, &mods_buf);

	for (uint32_t i = 1; i < k->nregions; i++) {
		struct kregion *r = &k->regions[i];

		if (r->any || !r->name)
			continue;
		/* after a failure the rest are not copied, and not owned: NULL */
		r->name = err ? NULL : strdup(r->name);
		if (!r->name)
			err = -ENOMEM;
	}
	free(mods_buf);
	return err;
}

struct ksyms *ksyms__load_paths(const char *path, const char *modules)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	size_t len, cap = 0;
	bool any_addr = false;
	uint32_t last = 0;
	char *p, *end;
	int err = -ENOMEM;

	if (!k)
		goto err;
	k->cap_regions = 16;
	k->regions = calloc(k->cap_regions, sizeof(*k->regions));
	if (!k->regions)
		goto err;
	k->nregions = 1;
	k->buf = util_read_file(path ? path : "/proc/kallsyms", &len);
	if (!k->buf) {
		err = -errno;
		goto err;
	}
	/* About 40 bytes per line: a cheap upper bound that avoids regrowing. */
	cap = len / 24 + 16;
	k->syms = malloc(cap * sizeof(*k->syms));
	if (!k->syms)
		goto err;

	p = k->buf;
	end = k->buf + len;
	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p));
		char *q = p, *name, *nend, *mod = NULL;
		uint64_t addr = 0;
		uint32_t region;
		char type;
		int d, rank;

		if (!eol)
			eol = end;
		*eol = '\0';
		/* "ffffffff81000000 T _text" or "... t name\t[module]" */
		while ((d = hexval(*q)) >= 0) {
			addr = (addr << 4) | (uint64_t)d;
			q++;
		}
		if (q == p || q[0] != ' ' || !q[1] || q[2] != ' ')
			goto next;
		type = q[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			goto next;
		name = q + 3;
		nend = name;
		while (*nend && *nend != '\t' && *nend != ' ')
			nend++;
		if (nend == name)
			goto next;
		if (*nend) {
			char *m = nend + 1, *mend;

			while (*m == ' ' || *m == '\t')
				m++;
			if (*m == '[' && (mend = strchr(m, ']')) && mend > m + 1) {
				*mend = '\0';
				mod = m + 1;
			}
		}
		*nend = '\0';
		region = region_of(k, mod, &last);
		if (region == UINT32_MAX)
			goto err;
		/* a system call without arguments has one body for its 64-bit and ia32 entry
		 * points (__x64_sys_getppid, __ia32_sys_getppid): name it as perf does, by the
		 * 64-bit one (the ia32 one won alphabetically) */
		rank = 2 * type_rank(type) + !strncmp(name, "__ia32_", 7);
		if (!mod && (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))) {
			rank = RANK_END;
			if (addr > k->regions[0].end_mark)
				k->regions[0].end_mark = addr;
		}
		if (k->nsyms == cap) {
			struct ksym *n;

			cap *= 2;
			n = realloc(k->syms, cap * sizeof(*n));
			if (!n)
				goto err;
			k->syms = n;
		}
		if (addr)
			any_addr = true;
		k->syms[k->nsyms++] = (struct ksym){ addr, name, region, rank };
next:
		p = eol + 1;
	}
	/* kptr_restrict shows every address as 0: such a table would resolve everything to the
	 * first name, so refuse it. */
	if (k->nsyms && !any_addr) {
		err = -EPERM;
		goto err;
	}
	qsort(k->syms, k->nsyms, sizeof(*k->syms), ksym_cmp);
	for (size_t i = 0; i < k->nsyms; i++) {
		struct kregion *r = &k->regions[k->syms[i].region];

		if (!r->any || k->syms[i].addr < r->lo)
			r->lo = k->syms[i].addr;
		if (!r->any || k->syms[i].addr > r->hi)
			r->hi = k->syms[i].addr;
		r->any = true;
	}
	if (modules) {
		err = attach_modules(k, modules);
		if (err)
			goto err;
	}
	return k;
err:
	ksyms__free(k);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	/* module bounds belong to this kernel only: not with a file standing in for kallsyms */
	return ksyms__load_paths(path, path ? NULL : "/proc/modules");
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	ksyms__free(k->full);
	free(k->kallsyms_path);
	free(k->modules_path);
	for (uint32_t i = 1; i < k->nregions; i++)
		if (!k->regions[i].any)
			free((char *)k->regions[i].name);
	free(k->regions);
	if (k->syms_map)
		munmap(k->syms, k->syms_map);
	else
		free(k->syms);
	if (k->buf_map)
		munmap(k->buf, k->buf_map);
	else
		free(k->buf);
	free(k);
}

static void region_bounds(const struct kregion *r, uint64_t *start, uint64_t *end)
{
	if (r->size) {
		*start = r->base;
		*end = r->base + r->size;
	} else {
		*start = r->lo;
		*end = r->end_mark && r->end_mark >= r->hi ? r->end_mark : r->hi + 1;
	}
}

void ksyms__core_bounds(const struct ksyms *k, uint64_t *start, uint64_t *end)
{
	*start = *end = 0;
	if (k && k->regions[0].any)
		region_bounds(&k->regions[0], start, end);
}

/* The module whose bounds (from the modules file) hold addr, or NULL. */
static const struct kregion *sized_region_at(const struct ksyms *k, uint64_t addr)
{
	for (uint32_t i = 1; i < k->nregions; i++) {
		const struct kregion *r = &k->regions[i];

		if (r->size && addr >= r->base && addr - r->base < r->size)
			return r;
	}
	return NULL;
}

/* A cached table answers only inside the core kernel's text and outside every module: no
 * other symbol (a module's, a BPF program's, an ftrace or kprobe trampoline's) can be the
 * closest one there. */
static bool core_covers(const struct ksyms *k, uint64_t addr)
{
	uint64_t start, end;

	ksyms__core_bounds(k, &start, &end);
	return addr >= start && addr < end && !sized_region_at(k, addr);
}

static const struct ksyms *full_table(const struct ksyms *k)
{
	struct ksyms *m = (struct ksyms *)k;	/* the lazily read part is ours to fill */

	if (!m->full_tried) {
		m->full_tried = true;
		m->full = ksyms__load_paths(m->kallsyms_path, m->modules_path);
	}
	return m->full;
}

int ksyms__lookup(const struct ksyms *k, uint64_t addr, struct ksym_info *info)
{
	const struct kregion *in, *r;
	const struct ksym *s;
	size_t lo = 0, hi;
	uint64_t base;

	memset(info, 0, sizeof(*info));
	if (!k)
		return -ENOENT;
	if (k->core_only && !core_covers(k, addr)) {
		const struct ksyms *f = full_table(k);

		if (f)
			return ksyms__lookup(f, addr, info);
	}
	in = sized_region_at(k, addr);
	hi = k->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		goto region_only;
	/* First (preferred) entry among aliases at that address. */
	base = k->syms[lo - 1].addr;
	lo--;
	while (lo > 0 && k->syms[lo - 1].addr == base)
		lo--;
	s = &k->syms[lo];
	r = &k->regions[s->region];
	/* past the end of the text the symbol is in: not that function */
	if (s->rank == RANK_END || (in && in != r) || (r->size && addr - r->base >= r->size))
		goto region_only;
	info->name = s->name;
	info->offset = addr - base;
	info->module = r->name;
	region_bounds(r, &info->start, &info->end);
	return 0;
region_only:
	if (in) {
		info->module = in->name;
		region_bounds(in, &info->start, &info->end);
	}
	return -ENOENT;
}

const char *ksyms__resolve_mod(const struct ksyms *k, uint64_t addr, uint64_t *offset,
			       const char **module)
{
	struct ksym_info info;

	ksyms__lookup(k, addr, &info);
	if (offset)
		*offset = info.offset;
	if (module)
		*module = info.module;
	return info.name;
}

const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	return ksyms__resolve_mod(k, addr, offset, NULL);
}

/* ---- the cache of the core kernel's symbols ----
 *
 * Reading /proc/kallsyms costs ~50 ms of kernel CPU (it formats ~120k lines on every read),
 * nearly all of it for the core kernel's symbols, which do not change while the system is up.
 * So they are kept in a file, valid for one boot: its key is the boot id, the release and the
 * first line of /proc/kallsyms whose address is not 0 (proof that this reader sees addresses
 * at all; reading one page formats only that much). Module, BPF program and
 * trampoline symbols come and go: they are not in the file, and an address outside the core
 * kernel's text, or inside a module's bounds, is answered from the whole /proc/kallsyms, read
 * then. The file is native-endian binary, written to a temporary name and renamed into place,
 * owned by the user and readable by no one else (kernel addresses are secrets); one whose
 * size, layout or checksum is wrong is not trusted and is replaced.
 *
 * Layout: struct kcache_hdr, the key (key_len bytes, padded to 8), nsyms struct kcache_sym,
 * the names (strtab_len bytes, each NUL-terminated).
 */
#define KCACHE_MAGIC "EBPKSYM\n"
#define KCACHE_VERSION 2	/* 2: ranks of ia32 aliases */
#define KCACHE_KEY_MAX 1024

struct kcache_hdr {
	char magic[8];
	uint32_t version, key_len;
	uint64_t nsyms, strtab_len;
	uint64_t hash;	/* over everything after the header */
};

struct kcache_sym {
	uint64_t addr;
	uint32_t name_off;
	int32_t rank;
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* "boot id\nrelease\nline\n" in key, line the first line of kallsyms with an address that is
 * not 0 (the first lines can be per-CPU offsets, 0 for anyone); its length, or 0 when there is
 * none: no boot id, an unreadable kallsyms, or one that shows every address as 0 (kptr_restrict
 * hides them from this reader). Reading a page's worth formats only that much. */
static size_t kcache_key(const char *kallsyms, const char *boot_id, char *key, size_t cap)
{
	char buf[4096], *line = NULL, *p, *bid;
	struct utsname u;
	ssize_t r;
	int fd, n;

	bid = util_read_file(boot_id, NULL);
	if (!bid)
		return 0;
	bid[strcspn(bid, "\n")] = '\0';
	fd = open(kallsyms, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(bid);
		return 0;
	}
	do
		r = read(fd, buf, sizeof(buf) - 1);
	while (r < 0 && errno == EINTR);
	close(fd);
	if (r <= 0 || uname(&u) || !*bid) {
		free(bid);
		return 0;
	}
	buf[r] = '\0';
	/* whole lines only: the last one may be cut */
	for (p = buf; !line && *p;) {
		char *nl = strchr(p, '\n');

		if (!nl)
			break;
		*nl = '\0';
		if (strspn(p, "0") < strcspn(p, " "))
			line = p;
		p = nl + 1;
	}
	if (!line) {
		free(bid);
		return 0;
	}
	n = snprintf(key, cap, "%s\n%s\n%s\n", bid, u.release, line);
	free(bid);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The cached table if `cache` holds one for `key`, else NULL. */
static struct ksyms *kcache_read(const char *cache, const char *key, size_t key_len)
{
	struct kcache_hdr h;
	struct ksyms *k = NULL;
	const struct kcache_sym *rec;
	size_t len, off_syms, off_str;
	struct stat st;
	char *buf;
	int fd;

	/* only a file that no one else could have written or read */
	fd = sym_cache__open(cache, &st);
	if (fd < 0)
		return NULL;
	len = (size_t)st.st_size;
	buf = len >= sizeof(h) ? mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
			       : MAP_FAILED;
	close(fd);
	if (buf == MAP_FAILED)
		return NULL;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, KCACHE_MAGIC, 8) || h.version != KCACHE_VERSION ||
	    h.key_len != key_len || !h.nsyms || h.nsyms > len / sizeof(*rec) ||
	    h.strtab_len > len || !h.strtab_len)
		goto bad;
	off_syms = sizeof(h) + pad8(h.key_len);
	off_str = off_syms + h.nsyms * sizeof(*rec);
	if (off_str + h.strtab_len != len || buf[len - 1] != '\0' ||
	    memcmp(buf + sizeof(h), key, key_len) ||
	    sym_cache__hash(buf + sizeof(h), len - sizeof(h)) != h.hash)
		goto bad;

	k = calloc(1, sizeof(*k));
	if (!k)
		goto bad;
	k->buf = buf;
	k->buf_map = len;
	k->core_only = true;
	k->cap_regions = 16;
	k->nregions = 1;
	k->regions = calloc(k->cap_regions, sizeof(*k->regions));
	k->syms_map = h.nsyms * sizeof(*k->syms);
	k->syms = mmap(NULL, k->syms_map, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (k->syms == MAP_FAILED) {
		k->syms = NULL;
		k->syms_map = 0;
	}
	if (!k->regions || !k->syms)
		goto bad_k;
	rec = (const struct kcache_sym *)(buf + off_syms);	/* 8-aligned: mapped, padded */
	for (size_t i = 0; i < h.nsyms; i++) {
		struct kregion *r = &k->regions[0];

		if (rec[i].name_off >= h.strtab_len || (i && rec[i].addr < rec[i - 1].addr) ||
		    rec[i].rank < 0 || rec[i].rank > RANK_END)
			goto bad_k;
		k->syms[i] = (struct ksym){ rec[i].addr, buf + off_str + rec[i].name_off, 0,
					    rec[i].rank };
		if (rec[i].rank == RANK_END && rec[i].addr > r->end_mark)
			r->end_mark = rec[i].addr;
		if (!r->any)
			r->lo = rec[i].addr;
		r->hi = rec[i].addr;
		r->any = true;
	}
	k->nsyms = h.nsyms;
	return k;
bad_k:
	k->buf = NULL;
	k->buf_map = 0;
	ksyms__free(k);
bad:
	munmap(buf, len);
	return NULL;
}

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t w = write(fd, c, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Write the core kernel's part of the whole table `full` for `key`; quietly nothing when the
 * directory cannot be made ours or a symbol of another region lies inside the core text. */
static void kcache_write(const char *cache, const char *key, size_t key_len,
			 const struct ksyms *full)
{
	struct kcache_hdr h = { .version = KCACHE_VERSION, .key_len = (uint32_t)key_len };
	uint64_t start, end;
	size_t n = 0, strtab = 0, off_syms, off_str, len, pos = 0;
	char *tmp, *out = NULL;
	struct kcache_sym *rec;
	int fd;

	ksyms__core_bounds(full, &start, &end);
	if (start == end)
		return;
	for (size_t i = 0; i < full->nsyms; i++) {
		const struct ksym *s = &full->syms[i];

		if (s->region == 0) {
			n++;
			strtab += strlen(s->name) + 1;
		} else if (s->addr >= start && s->addr < end) {
			return;
		}
	}
	if (!n || strtab > UINT32_MAX)
		return;

	off_syms = sizeof(h) + pad8(key_len);
	off_str = off_syms + n * sizeof(*rec);
	len = off_str + strtab;
	out = calloc(1, len);
	if (!out)
		goto out;
	memcpy(out + sizeof(h), key, key_len);
	rec = (struct kcache_sym *)(out + off_syms);
	for (size_t i = 0, j = 0; i < full->nsyms; i++) {
		const struct ksym *s = &full->syms[i];
		size_t l;

		if (s->region != 0)
			continue;
		l = strlen(s->name) + 1;
		rec[j++] = (struct kcache_sym){ s->addr, (uint32_t)pos, s->rank };
		memcpy(out + off_str + pos, s->name, l);
		pos += l;
	}
	memcpy(h.magic, KCACHE_MAGIC, 8);
	h.nsyms = n;
	h.strtab_len = strtab;
	h.hash = sym_cache__hash(out + sizeof(h), len - sizeof(h));
	memcpy(out, &h, sizeof(h));
	fd = sym_cache__create(cache, &tmp);
	if (fd >= 0)
		sym_cache__commit(fd, tmp, cache, !write_all(fd, out, len));
out:
	free(out);
}

struct ksyms *ksyms__load_cached(const char *kallsyms, const char *modules, const char *boot_id,
				 const char *cache, enum ksyms_from *from)
{
	char key[KCACHE_KEY_MAX];
	size_t key_len = cache ? kcache_key(kallsyms, boot_id, key, sizeof(key)) : 0;
	struct ksyms *k = NULL, *full;

	if (from)
		*from = KSYMS_FROM_KALLSYMS;
	if (key_len)
		k = kcache_read(cache, key, key_len);
	if (k) {
		k->kallsyms_path = strdup(kallsyms);
		k->modules_path = modules ? strdup(modules) : NULL;
		if (!k->kallsyms_path || (modules && !k->modules_path) ||
		    (modules && attach_modules(k, modules))) {
			ksyms__free(k);
			errno = ENOMEM;
			return NULL;
		}
		if (from)
			*from = KSYMS_FROM_CACHE;
		return k;
	}
	full = ksyms__load_paths(kallsyms, modules);
	if (full && key_len)
		kcache_write(cache, key, key_len, full);
	return full;
}

const char *ksyms__cache_path(void)
{
	static char path[4200];
	const char *dir = sym_cache_dir();

	if (!dir)
		return NULL;
	if (!*path)
		snprintf(path, sizeof(path), "%s/kallsyms", dir);
	return path;
}

struct ksyms *ksyms__load_system(enum ksyms_from *from)
{
	return ksyms__load_cached("/proc/kallsyms", "/proc/modules",
				  "/proc/sys/kernel/random/boot_id", ksyms__cache_path(), from);
}
