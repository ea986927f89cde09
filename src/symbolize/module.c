/* Per-ELF-file modules: one libdwfl session per distinct file, its PT_LOAD layout for turning
 * file offsets into ELF virtual addresses, and sorted tables of its functions and of its data
 * objects (for naming data addresses: locks), each built once.
 *
 * Modules are cached by build-id, so the same libc mapped by many processes (or seen through
 * different mount namespaces) is read once, and by file identity (dev, inode, size, mtime) so a
 * known file is not even reopened. elfutils' own dwfl_module_addrinfo scans the symbol table
 * linearly on each call, which is why the table is rebuilt here in sorted form.
 *
 * At most a budget of modules is open (their Dwfl: descriptors, mappings, DWARF, and the tables
 * built from it); the least recently used is closed for room and opened again at its next use
 * (sym_module__open). Separate debug files are found on this machine only, never by debuginfod
 * (find_debuginfo).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gelf.h>
#include <zlib.h>
#include <elfutils/libdwelf.h>

#include "symbolize/sym_internal.h"
#include "symbolize/unwind.h"
#include "util/util.h"

static char *hex_encode(const unsigned char *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(len * 2 + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 0xf];
	}
	s[len * 2] = '\0';
	return s;
}

static int read_segments(Elf *elf, struct sym_module *m)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	m->segs = calloc(phnum ? phnum : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct sym_segment){
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

bool sym_module__file_off_to_vaddr(const struct sym_module *m, uint64_t file_off, uint64_t *vaddr,
				   bool *exec)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_segment *sg = &m->segs[i];

		if (file_off >= sg->offset && file_off - sg->offset < sg->filesz) {
			*vaddr = file_off - sg->offset + sg->vaddr;
			if (exec)
				*exec = sg->exec;
			return true;
		}
	}
	return false;
}

bool sym_module__data_vaddr(const struct sym_module *m, uint64_t file_off, uint64_t *vaddr)
{
	if (sym_module__file_off_to_vaddr(m, file_off, vaddr, NULL))
		return true;
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_segment *sg = &m->segs[i];

		if (file_off >= sg->offset && file_off - sg->offset < sg->memsz) {
			*vaddr = file_off - sg->offset + sg->vaddr;
			return true;
		}
	}
	return false;
}

static void lru_unlink(struct symbolizer *s, struct sym_module *m)
{
	if (m->lru_prev)
		m->lru_prev->lru_next = m->lru_next;
	else
		s->lru_head = m->lru_next;
	if (m->lru_next)
		m->lru_next->lru_prev = m->lru_prev;
	else
		s->lru_tail = m->lru_prev;
	m->lru_prev = m->lru_next = NULL;
}

static void lru_append(struct symbolizer *s, struct sym_module *m)
{
	m->lru_prev = s->lru_tail;
	m->lru_next = NULL;
	if (s->lru_tail)
		s->lru_tail->lru_next = m;
	else
		s->lru_head = m;
	s->lru_tail = m;
}

/* Close m's open part: what libdw holds of its file and debug file, and everything built from
 * it that points into it (names in the symbol tables, DIEs, .dynsym names of GOT slots). What
 * was handed out in results is interned and stays. */
static void module_close(struct sym_module *m)
{
	if (!m->dwfl)
		return;
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->dmod = NULL;
	u64map__free_all(&m->frame_cache);
	u64map__free_all(&m->cu_index);
	u64map__free(&m->qnames);	/* its names are interned: they stay */
	free(m->cu_ranges);
	m->cu_ranges = NULL;
	m->ncu_ranges = 0;
	m->cu_ranges_built = false;
	u64map__free_all(&m->call_cache);
	free(m->got_slots);
	m->got_slots = NULL;
	m->ngot_slots = 0;
	m->got_loaded = false;
	free(m->syms);
	m->syms = NULL;
	m->nsyms = 0;
	m->syms_loaded = false;
	free(m->objs);
	m->objs = NULL;
	m->nobjs = 0;
	m->objs_loaded = false;
	free(m->fdes);
	m->fdes = NULL;
	m->nfdes = 0;
	m->fdes_loaded = false;
	if (m->s) {
		lru_unlink(m->s, m);
		m->s->open_bytes -= m->size;
		m->s->stats.files_open--;
	}
}

void sym_module__free(struct sym_module *m)
{
	if (!m)
		return;
	module_close(m);
	u64map__free_all(&m->frame_cache);
	free(m->build_id);
	free(m->open_path);
	free(m->debuginfo_path);
	free(m->debug_file);
	free(m->debuglink);
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	free(m->image);
	free(m->segs);
	free(m);
}

/* The debug file that dwfl's search finds first when there is one by build-id: the first
 * DIR/.build-id/xx/rest.debug for each absolute DIR of the search path. NULL: none. */
static char *build_id_debug_file(const struct sym_module *m)
{
	const char *p = m->debuginfo_path;

	while (p && *p) {
		size_t len = strcspn(p, ":");
		char *path;

		if (*p == '/' && asprintf(&path, "%.*s/.build-id/%.2s/%s.debug", (int)len, p,
					   m->build_id, m->build_id + 2) >= 0) {
			if (!access(path, R_OK))
				return path;
			free(path);
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return NULL;
}

/* The CRC-32 of a file's bytes, as .gnu_debuglink holds it (zlib's polynomial); -1: unread. */
static int64_t file_crc32(int fd)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return n < 0 ? -1 : (int64_t)(crc & 0xffffffff);
}

/* path, opened, if it is the debug file of the module (its build-id, else its debuglink's CRC
 * when the binary has no build-id): the fd, else -1. */
static int open_debug_candidate(const char *path, const char *build_id, GElf_Word crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool match = false;

	if (fd < 0)
		return -1;
	if (build_id) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *bid;
		ssize_t len = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
		char *hex = len > 0 ? hex_encode(bid, (size_t)len) : NULL;

		match = hex && !strcmp(hex, build_id);
		free(hex);
		if (elf)
			elf_end(elf);
	} else {
		match = file_crc32(fd) == (int64_t)crc;
	}
	if (!match) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A process in another root (a container): its separate debug file found and opened now,
 * while /proc/PID/root is there, as dwfl's own search would find it (by build-id under our
 * debug directory, then the process's; by .gnu_debuglink beside the file, in its .debug/, and
 * under the process's debug directory). libdw looks at the first DWARF or symbol lookup, after
 * a launched process was released and its /proc/PID/root gone: every frame was an offset. */
static void find_root_debug_file(struct sym_module *m, Elf *elf, const char *open_path,
				 const char *root, const char *dd)
{
	size_t rlen = strlen(root);
	const char *slash = strrchr(open_path, '/');
	/* the file's directory, ours and (under root) the process's */
	int dlen = slash ? (int)(slash - open_path) : 0;
	const char *indir = strncmp(open_path, root, rlen) == 0 ? open_path + rlen : NULL;
	int indlen = indir && slash >= indir ? (int)(slash - indir) : -1;
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
	char *cand[5] = { NULL };
	int n = 0;

	if (m->build_id && strlen(m->build_id) > 2) {
		if (asprintf(&cand[n], "%s/.build-id/%.2s/%s.debug", dd, m->build_id,
			     m->build_id + 2) >= 0)
			n++;
		if (asprintf(&cand[n], "%s%s/.build-id/%.2s/%s.debug", root, dd, m->build_id,
			     m->build_id + 2) >= 0)
			n++;
	}
	if (link && *link && !strchr(link, '/') && slash) {
		if (asprintf(&cand[n], "%.*s/%s", dlen, open_path, link) >= 0)
			n++;
		if (asprintf(&cand[n], "%.*s/.debug/%s", dlen, open_path, link) >= 0)
			n++;
		if (indlen >= 0 && asprintf(&cand[n], "%s%s%.*s/%s", root, dd, indlen, indir,
					    link) >= 0)
			n++;
	}
	for (int i = 0; i < n; i++) {
		if (m->debug_fd < 0 &&
		    (m->debug_fd = open_debug_candidate(cand[i], m->build_id, crc)) >= 0) {
			m->debug_file = cand[i];
			continue;
		}
		free(cand[i]);
	}
}

/* The candidate dir/sub/name ("dir/name" without sub), opened if it is m's debug file (not its
 * own file by another name; its build-id, or when m has none and check is set, the CRC the
 * debug link gives): the fd and *found its name, else -1. */
static int try_debug_name(const struct sym_module *m, const struct stat *main_st, const char *dir,
			  const char *sub, const char *name, bool check, char **found)
{
	struct stat st;
	char *path;
	int fd;

	if ((sub ? asprintf(&path, "%s/%s/%s", dir, sub, name) :
		   asprintf(&path, "%s/%s", dir, name)) < 0)
		return -1;
	if (stat(path, &st) || (main_st && st.st_dev == main_st->st_dev &&
				 st.st_ino == main_st->st_ino)) {
		free(path);
		return -1;
	}
	fd = m->build_id || check ? open_debug_candidate(path, m->build_id, m->debuglink_crc) :
				    open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(path);
		return -1;
	}
	*found = path;
	return fd;
}

/* m's separate debug file by name, where libdw's own search looks (its find_debuginfo_in_path,
 * for the file at file_name): the debug link's name (else the file's name + ".debug") in each
 * element of the search path: "" the file's directory, a relative one a directory under it
 * (.debug), an absolute one (the debug directory) with the file's directory under it, then
 * with fewer of its leading components. -1: none. */
static int find_debug_by_name(const struct sym_module *m, const char *file_name, char **found)
{
	const char *base = strrchr(file_name, '/'), *p = m->debuginfo_path;
	bool check = m->debuglink && m->debuglink_crc;
	char *dirname, *made = NULL;
	const char *link = m->debuglink;
	struct stat main_st;
	int fd = -1;

	if (!base || !p)
		return -1;
	dirname = strndup(file_name, (size_t)(base - file_name));
	base++;
	if (!link && asprintf(&made, "%s.debug", base) >= 0)
		link = made;
	if (!dirname || !link)
		goto out;
	if (stat(file_name, &main_st))
		memset(&main_st, 0, sizeof(main_st));
	while (fd < 0 && p) {
		size_t len = strcspn(p, ":");
		char *elem = strndup(p, len);

		p = p[len] ? p + len + 1 : NULL;
		if (!elem)
			break;
		if (!*elem) {
			fd = try_debug_name(m, &main_st, *dirname ? dirname : "/", NULL, link, check,
					    found);
		} else if (*elem != '/') {
			fd = try_debug_name(m, &main_st, dirname, elem, link, check, found);
			if (fd < 0 && made)
				fd = try_debug_name(m, &main_st, dirname, elem, base, check, found);
		} else if (*dirname == '/') {
			/* /usr/lib/debug/usr/bin/NAME, then .../bin/NAME, then .../NAME */
			for (const char *sub = dirname + 1; fd < 0 && sub;) {
				fd = try_debug_name(m, &main_st, elem, *sub ? sub : NULL, link, check,
						    found);
				if (fd < 0 && made)
					fd = try_debug_name(m, &main_st, elem, *sub ? sub : NULL,
							    base, check, found);
				if (!*sub)
					break;
				sub = strchr(sub, '/');
				sub = sub ? sub + 1 : "";
			}
		}
		free(elem);
	}
out:
	free(dirname);
	free(made);
	return fd;
}

/* The debug file found by build-id, decompressed (debugcache.c) when its DWARF is compressed;
 * or the one a foreign root's module found when it was made; else the local search libdw's
 * dwfl_standard_find_debuginfo makes: by build-id under each debug directory (and a dwz
 * alternate file so), then by name (find_debug_by_name), never its last resort, debuginfod:
 * ebprof does not fetch debug files over the network (DEBUGINFOD_URLS is not used), and the
 * client libdw made for it, per file, held a curl handle and its socket pair (2 descriptors)
 * while the file stayed open. The copy's fd (a duplicate of the found one's) is handed over
 * with the original's name. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct sym_module *m = *userdata;
	/* libdw asks with the file's own debug link (and its CRC) for its debug file, with the
	 * alternate file's name (CRC 0) for a dwz alternate file */
	bool alt = debuglink_file && (!m || !m->debuglink || debuglink_crc != m->debuglink_crc ||
				      strcmp(debuglink_file, m->debuglink));
	char *found = NULL;
	int fd;

	if (!alt && m && m->debug_fd >= 0) {
		char *name = strdup(m->debug_file);

		fd = name ? fcntl(m->debug_fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (fd >= 0) {
			free(*debuginfo_file_name);
			*debuginfo_file_name = name;
			return fd;
		}
		free(name);
	}

	if (!alt && m && m->cache_dir && m->build_id && strlen(m->build_id) > 2) {
		char *orig = build_id_debug_file(m);

		fd = orig ? sym_debug_cache__open(m->cache_dir, orig, m->build_id) : -1;
		if (fd >= 0) {
			free(*debuginfo_file_name);
			*debuginfo_file_name = orig;
			return fd;
		}
		free(orig);
	}
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);
	/* an image (the vdso) has no file of its own to name a debug file after */
	if (fd >= 0 || alt || !m || m->image || !file_name)
		return fd;
	fd = find_debug_by_name(m, file_name, &found);
	if (fd < 0) {
		/* a symbolic link's debug file may be named after its target */
		char *canon = realpath(file_name, NULL);

		if (canon && strcmp(canon, file_name))
			fd = find_debug_by_name(m, canon, &found);
		free(canon);
	}
	if (fd >= 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = found;
	}
	errno = 0;
	return fd;
}

/* What an ELF file itself holds to name its code (SYM_RICH_*). */
static unsigned elf_richness(Elf *elf)
{
	Elf_Scn *scn = NULL;
	unsigned rich = 0;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB || (name && !strcmp(name, ".gnu_debugdata")))
			rich |= SYM_RICH_SYMTAB;
		else if (sh.sh_type == SHT_PROGBITS && name &&
			 (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			rich |= SYM_RICH_DWARF;
	}
	return rich;
}

static int64_t stat_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Whether a closed m could be opened again now: its bytes are kept (an image), or its path
 * still reaches the file it was opened from. */
static bool reopenable(const struct sym_module *m)
{
	struct stat st;

	if (m->image)
		return true;
	return !stat(m->open_path, &st) && (uint64_t)st.st_dev == m->dev &&
	       (uint64_t)st.st_ino == m->ino && (uint64_t)st.st_size == m->size &&
	       stat_mtime_ns(&st) == m->mtime_ns;
}

/* The open module to close for room (never keep): the least recently used of those that no
 * live snapshot maps and that can be opened again; else of those that can be opened again;
 * else of those no snapshot maps; else the least recently used. A module closed whose file is
 * gone is lost only if an address in it is named later (counted then). */
static struct sym_module *lru_victim(struct symbolizer *s, const struct sym_module *keep)
{
	struct sym_module *m;

	for (int pass = 0; pass < 4; pass++)
		for (m = s->lru_head; m; m = m->lru_next) {
			if (m == keep || ((pass == 0 || pass == 2) && m->refs))
				continue;
			if (pass >= 2 || reopenable(m))
				return m;
		}
	return NULL;
}

/* Room for one more open file of `size` bytes within the budget. */
static void make_room(struct symbolizer *s, const struct sym_module *keep, uint64_t size)
{
	unsigned max_files = s->opts.max_open_files ? s->opts.max_open_files : SYM_MAX_OPEN_FILES;
	uint64_t max_bytes = s->opts.max_open_bytes ? s->opts.max_open_bytes : SYM_MAX_OPEN_BYTES;

	while (s->stats.files_open + 1 > max_files || s->open_bytes + size > max_bytes) {
		struct sym_module *v = lru_victim(s, keep);

		if (!v)
			break;
		module_close(v);
		s->stats.closes++;
	}
}

/* Open m's part that can be closed, from fd (its file, or an image's memfd: consumed). */
static int module_open(struct sym_module *m, int fd)
{
	struct symbolizer *s = m->s;
	Dwarf_Addr bias = 0;
	void **ud;

	make_room(s, m, m->size);
	m->dwfl = dwfl_begin(&m->callbacks);
	if (!m->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(m->dwfl);
	/* Base 0 with add_p_vaddr: Dwfl addresses equal ELF vaddrs for ET_EXEC and ET_DYN alike
	 * (bias is read back below rather than assumed). */
	m->dmod = dwfl_report_elf(m->dwfl, m->name, m->open_path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dmod)
		close(fd);	/* consumed only on success */
	if (!m->dmod || !dwfl_module_getelf(m->dmod, &bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->dmod = NULL;
		return -EINVAL;
	}
	dwfl_module_info(m->dmod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = m;
	m->bias = bias;
	lru_append(s, m);
	s->open_bytes += m->size;
	s->stats.opens++;
	if (++s->stats.files_open > s->stats.files_open_max)
		s->stats.files_open_max = s->stats.files_open;
	return 0;
}

/* A new memfd holding len bytes of buf; -1 (errno) on failure. */
static int image_memfd(const void *buf, size_t len)
{
	int fd = memfd_create("ebprof-image", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		errno = EIO;
		return -1;
	}
	return fd;
}

int sym_module__open(struct sym_module *m)
{
	struct symbolizer *s = m->s;
	struct stat st;
	int fd, err;

	if (m->dwfl) {
		/* the most recently used from now on */
		if (s->lru_tail != m) {
			lru_unlink(s, m);
			lru_append(s, m);
		}
		return 0;
	}
	if (m->gone)
		return -ENOENT;
	/* the file it was opened from (or, for a copy replaced by another copy, the same
	 * build-id with as much to name code with), else nothing: another file's symbols
	 * would name this one's addresses wrong */
	if (m->image) {
		fd = image_memfd(m->image, m->image_len);
		err = fd < 0 ? -errno : 0;
	} else {
		fd = open(m->open_path, O_RDONLY | O_CLOEXEC);
		err = fd < 0 ? -errno : 0;
		if (!err && fstat(fd, &st))
			err = -errno;
		if (!err && ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino ||
			     (uint64_t)st.st_size != m->size || stat_mtime_ns(&st) != m->mtime_ns)) {
			Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			const void *bid;
			ssize_t len = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
			char *hex = len > 0 ? hex_encode(bid, (size_t)len) : NULL;

			if (!m->build_id || !hex || strcmp(hex, m->build_id) ||
			    elf_richness(elf) != m->richness) {
				err = -ESTALE;
			} else {
				/* that file from now on (reopenable() looks for it) */
				m->dev = (uint64_t)st.st_dev;
				m->ino = (uint64_t)st.st_ino;
				m->size = (uint64_t)st.st_size;
				m->mtime_ns = stat_mtime_ns(&st);
			}
			free(hex);
			if (elf)
				elf_end(elf);
		}
	}
	if (!err)
		err = module_open(m, fd);
	else if (fd >= 0)
		close(fd);
	if (err) {
		if (err != -ENOMEM) {
			m->gone = true;
			s->stats.files_gone++;
		}
		return err;
	}
	s->stats.reopens++;
	return 0;
}

/* A module for the ELF file elf (read from fd, whose stat is st: both the caller's), open. */
static struct sym_module *module_new(struct symbolizer *s, Elf *elf, int fd, const struct stat *st,
				     const char *open_path, const char *root, const char *display,
				     char *build_id)
{
	struct sym_module *m = calloc(1, sizeof(*m));
	const char *dd = s->debug_dir;
	int err = -ENOMEM, dfd;

	if (!m)
		goto err;
	m->s = s;
	m->debug_fd = -1;
	m->build_id = build_id;
	m->name = display;
	m->richness = elf_richness(elf);
	m->dev = (uint64_t)st->st_dev;
	m->ino = (uint64_t)st->st_ino;
	m->size = (uint64_t)st->st_size;
	m->mtime_ns = stat_mtime_ns(st);
	m->open_path = strdup(open_path);
	/* Empty element: the file's own directory, then its .debug/ subdirectory (debuglink
	 * lookups); absolute elements are roots for .build-id/ and for the file's own path.
	 * A foreign mount namespace gets its own debug root searched too. */
	if (root && *root) {
		if (asprintf(&m->debuginfo_path, ":.debug:%s:%s%s", dd, root, dd) < 0)
			m->debuginfo_path = NULL;
	} else {
		if (asprintf(&m->debuginfo_path, ":.debug:%s", dd) < 0)
			m->debuginfo_path = NULL;
	}
	if (!m->open_path || !m->debuginfo_path)
		goto err;
	{
		GElf_Word crc = 0;
		const char *link = dwelf_elf_gnu_debuglink(elf, &crc);

		if (link && !(m->debuglink = strdup(link)))
			goto err;
		m->debuglink_crc = crc;
	}
	if (root && *root)
		find_root_debug_file(m, elf, open_path, root, dd);
	err = read_segments(elf, m);
	if (err)
		goto err;
	/* for find_debuginfo: the cache is for DWARF (not without line lookups), and for this
	 * mount namespace's debug files only (another's could claim any build-id) */
	if (!s->opts.no_lines && (!root || !*root))
		m->cache_dir = s->opts.cache_dir;

	m->callbacks.find_elf = dwfl_build_id_find_elf;
	m->callbacks.find_debuginfo = find_debuginfo;
	m->callbacks.section_address = dwfl_offline_section_address;
	m->callbacks.debuginfo_path = &m->debuginfo_path;
	/* libdw's own descriptor of the file, the one examined (the path may name another
	 * file by now) */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	err = dfd < 0 ? -errno : module_open(m, dfd);
	if (err)
		goto err;
	return m;
err:
	if (m) {
		m->build_id = NULL;	/* owned by the caller on failure */
		sym_module__free(m);
	}
	errno = -err;
	return NULL;
}

static struct sym_file_key *find_key(struct symbolizer *s, const struct stat *st)
{
	for (size_t i = 0; i < s->nkeys; i++) {
		struct sym_file_key *k = &s->keys[i];

		if (k->dev == st->st_dev && k->ino == st->st_ino &&
		    k->size == (uint64_t)st->st_size &&
		    k->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec)
			return k;
	}
	return NULL;
}

static void add_key(struct symbolizer *s, const struct stat *st, struct sym_module *mod)
{
	if (s->nkeys == s->keys_cap) {
		size_t ncap = s->keys_cap ? s->keys_cap * 2 : 32;
		struct sym_file_key *nk = realloc(s->keys, ncap * sizeof(*nk));

		/* Losing a cache entry only costs a reopen later. */
		if (!nk)
			return;
		s->keys = nk;
		s->keys_cap = ncap;
	}
	s->keys[s->nkeys++] = (struct sym_file_key){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.mod = mod,
	};
}

unsigned symbolizer__trim(struct symbolizer *s, unsigned keep)
{
	struct sym_module **pm = &s->modules, *m;
	unsigned freed = 0;
	size_t kept = 0;

	/* files that were not ELF: a reopen tells again */
	for (size_t i = 0; i < s->nkeys; i++)
		if (s->keys[i].mod)
			s->keys[kept++] = s->keys[i];
	s->nkeys = kept;
	while ((m = *pm)) {
		bool used = m->refs;

		/* a richer module of a build-id is used by the poorer ones' mappings too */
		for (struct sym_module *k = s->modules; k && !used; k = k->next)
			used = k->better == m && k->refs;
		if (used || ++m->idle < keep) {
			if (used)
				m->idle = 0;
			pm = &m->next;
			continue;
		}
		*pm = m->next;
		kept = 0;
		for (size_t i = 0; i < s->nkeys; i++)
			if (s->keys[i].mod != m)
				s->keys[kept++] = s->keys[i];
		s->nkeys = kept;
		for (struct sym_module *k = s->modules; k; k = k->next)
			if (k->better == m)
				k->better = NULL;
		sym_module__free(m);
		freed++;
	}
	return freed;
}

struct sym_module *sym_module__get(struct symbolizer *s, const char *open_path, const char *root,
				   const char *display)
{
	struct sym_module *m = NULL;
	struct sym_file_key *key;
	char *build_id = NULL;
	Elf *elf = NULL;
	struct stat st;
	const void *bid;
	ssize_t bid_len;
	int fd, err;

	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	key = find_key(s, &st);
	if (key) {
		m = key->mod;
		/* the file of a closed module whose own path no longer leads to it (its process
		 * ended: /proc/PID/root, map_files), reached again: opened from here next time */
		if (m && !m->dwfl && !m->image && (uint64_t)st.st_dev == m->dev &&
		    (uint64_t)st.st_ino == m->ino && (m->gone || !reopenable(m))) {
			char *path = strdup(open_path);

			if (path) {
				free(m->open_path);
				m->open_path = path;
				m->gone = false;
			}
		}
		err = m ? 0 : -ENOEXEC;
		goto out;
	}

	err = -ENOEXEC;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		add_key(s, &st, NULL);
		goto out;
	}
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	if (bid_len > 0) {
		err = -ENOMEM;
		build_id = hex_encode(bid, (size_t)bid_len);
		if (!build_id)
			goto out;
		for (m = s->modules; m; m = m->next)
			if (m->build_id && strcmp(m->build_id, build_id) == 0)
				break;
		/* the same code in a file that holds no more than the module has (a copy, or a
		 * stripped one): that module; a richer file (the full binary met after its
		 * stripped copy) is read for its own symbols, and names the poorer ones' code */
		if (m && elf_richness(elf) <= sym_module__best(m)->richness) {
			add_key(s, &st, m);
			err = 0;
			goto out;
		}
	}

	m = module_new(s, elf, fd, &st, open_path, root, display, build_id);
	if (!m) {
		err = -errno;
		if (err != -ENOMEM)
			add_key(s, &st, NULL);
		goto out;
	}
	build_id = NULL;
	for (struct sym_module *k = s->modules; m->build_id && k; k = k->next)
		if (k->build_id && !strcmp(k->build_id, m->build_id) &&
		    sym_module__best(k)->richness < m->richness)
			k->better = m;
	m->next = s->modules;
	s->modules = m;
	add_key(s, &st, m);
	err = 0;
out:
	free(build_id);
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		errno = -err;
		return NULL;
	}
	return m;
}

struct sym_module *sym_module__get_image(struct symbolizer *s, const void *buf, size_t len,
					 const char *display)
{
	struct sym_module *m;
	char *build_id = NULL, path[64];
	const void *bid;
	ssize_t bid_len;
	Elf *elf = NULL;
	struct stat st;
	int fd, err;

	for (m = s->modules; m; m = m->next)
		if (m->image && m->image_len == len && !memcmp(m->image, buf, len))
			return m;
	/* a file for libdw (it is handed its own descriptor of it) */
	fd = image_memfd(buf, len);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	err = -ENOEXEC;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	err = -ENOMEM;
	if (bid_len > 0 && !(build_id = hex_encode(bid, (size_t)bid_len)))
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	m = module_new(s, elf, fd, &st, path, "", display, build_id);
	if (!m) {
		err = -errno;
		goto out;
	}
	build_id = NULL;
	m->image = malloc(len);
	if (!m->image) {
		sym_module__free(m);
		m = NULL;
		goto out;
	}
	memcpy(m->image, buf, len);
	m->image_len = len;
	m->next = s->modules;
	s->modules = m;
	err = 0;
out:
	free(build_id);
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		errno = -err;
		return NULL;
	}
	return m;
}

/* ---- symbol table ---- */

struct raw_sym {
	uint64_t start, size;
	uint64_t sec_end;	/* the end of its section (UINT64_MAX: not known) */
	const char *name;
	int rank;		/* lower is preferred among symbols at the same address */
};

static int leading_underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* deterministic among equals */
	return strcmp(x->name, y->name);
}

/* Among aliases at one address prefer, in order: a sized symbol, not one of glibc's internal
 * __GI_ aliases (hidden_def in glibc; they would otherwise win as often as not), global over
 * weak over local, a default-version name over a compat "name@VERSION", the name users call
 * (malloc over __libc_malloc). */
static int sym_rank(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	const char *at = strchr(name, '@');
	int rank = 0;

	if (GELF_ST_TYPE(sym->st_info) == STT_NOTYPE)
		rank += 20000;
	if (!sym->st_size)
		rank += 10000;
	if (strncmp(name, "__GI_", 5) == 0)
		rank += 1000;
	if (bind == STB_WEAK)
		rank += 100;
	else if (bind != STB_GLOBAL)
		rank += 200;
	if (at && at[1] != '@')
		rank += 50;
	rank += leading_underscores(name) * 10;
	return rank;
}

static uint64_t exec_segment_end(const struct sym_module *m, uint64_t vaddr)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_segment *sg = &m->segs[i];

		if (vaddr >= sg->vaddr && vaddr - sg->vaddr < sg->memsz)
			return sg->vaddr + sg->memsz;
	}
	return vaddr + 1;
}

static int load_symbols(struct sym_module *m)
{
	struct raw_sym *raw = NULL;
	size_t nraw = 0, n = 0;
	int count, err = 0;

	m->syms_loaded = true;
	count = dwfl_module_getsymtab(m->dmod);
	if (count <= 0)
		return 0;
	raw = calloc((size_t)count, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	for (int i = 0; i < count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Dwarf_Addr sbias = 0;
		Elf *selff = NULL;
		Elf_Scn *scn;
		GElf_Shdr sh;
		const char *name;
		uint64_t sec_end = UINT64_MAX;
		int type;

		name = dwfl_module_getsym_info(m->dmod, i, &sym, &addr, &shndx, &selff, &sbias);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (shndx == SHN_UNDEF)
			continue;
		/* a label without a type in code (hand-written assembly: ld.so's _start and
		 * _dl_start_user, under every constructor's stack) names the code up to the next
		 * symbol, as gdb does; below any function at its address (sym_rank) */
		if (type == STT_NOTYPE &&
		    !(selff && shndx < SHN_LORESERVE && (scn = elf_getscn(selff, shndx)) &&
		      gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR)))
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		/* a zero-size symbol reaches no further than its section: _init's (.init) not
		 * over the PLT that follows it */
		if (!sym.st_size && selff && shndx < SHN_LORESERVE &&
		    (scn = elf_getscn(selff, shndx)) && gelf_getshdr(scn, &sh) &&
		    sym.st_value >= sh.sh_addr && sym.st_value - sh.sh_addr <= sh.sh_size)
			sec_end = addr - m->bias + (sh.sh_addr + sh.sh_size - sym.st_value);
		raw[nraw++] = (struct raw_sym){
			.start = addr - m->bias,
			.size = sym.st_size,
			.sec_end = sec_end,
			.name = name,
			.rank = sym_rank(&sym, name),
		};
	}
	if (!nraw)
		goto out;
	qsort(raw, nraw, sizeof(*raw), raw_sym_cmp);

	err = -ENOMEM;
	m->syms = calloc(nraw, sizeof(*m->syms));
	if (!m->syms)
		goto out;
	for (size_t i = 0; i < nraw; i++) {
		/* After sorting the preferred alias comes first at each address. */
		if (n && m->syms[n - 1].start == raw[i].start)
			continue;
		m->syms[n++] = (struct sym_symbol){
			.start = raw[i].start,
			/* zero-size: its section's end for now, narrowed below */
			.end = raw[i].size ? raw[i].start + raw[i].size : raw[i].sec_end,
			.name = raw[i].name,
			.sized = raw[i].size != 0,
		};
	}
	/* Zero-size symbols (hand-written assembly, _init) reach up to the next symbol, but not
	 * beyond the end of their section or segment. */
	for (size_t i = 0; i < n; i++) {
		struct sym_symbol *sy = &m->syms[i];
		uint64_t seg_end;

		if (sy->sized)
			continue;
		seg_end = exec_segment_end(m, sy->start);
		if (sy->end > seg_end)	/* also UINT64_MAX: no section known */
			sy->end = seg_end;
		if (i + 1 < n && m->syms[i + 1].start < sy->end)
			sy->end = m->syms[i + 1].start;
		/* a label inside a sized function (a jump target in its assembly) names none
		 * of it: the function does */
		for (size_t j = i; j > 0 && i - j < 8; j--)
			if (m->syms[j - 1].sized && sy->start < m->syms[j - 1].end) {
				sy->end = sy->start;
				break;
			}
	}
	m->nsyms = n;
	err = 0;
out:
	free(raw);
	return err;
}

/* The data objects: sized STT_OBJECTs (a zero-size one names no bytes; STT_TLS values are
 * offsets in each thread's TLS block, which no address of the file's mapping is), one per
 * address, the preferred alias first (sym_rank: global over weak over local, not __GI_). */
static int load_objects(struct sym_module *m)
{
	struct raw_sym *raw = NULL;
	size_t nraw = 0, n = 0;
	int count;

	m->objs_loaded = true;
	count = dwfl_module_getsymtab(m->dmod);
	if (count <= 0)
		return 0;
	raw = calloc((size_t)count, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	for (int i = 0; i < count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(m->dmod, i, &sym, &addr, &shndx, NULL,
							   NULL);

		if (!name || !*name || shndx == SHN_UNDEF || !sym.st_size ||
		    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		raw[nraw++] = (struct raw_sym){
			.start = addr - m->bias,
			.size = sym.st_size,
			.name = name,
			.rank = sym_rank(&sym, name),
		};
	}
	if (nraw)
		qsort(raw, nraw, sizeof(*raw), raw_sym_cmp);
	m->objs = nraw ? calloc(nraw, sizeof(*m->objs)) : NULL;
	for (size_t i = 0; m->objs && i < nraw; i++) {
		if (n && m->objs[n - 1].start == raw[i].start)
			continue;
		m->objs[n++] = (struct sym_symbol){
			.start = raw[i].start,
			.end = raw[i].start + raw[i].size,
			.name = raw[i].name,
			.sized = true,
		};
	}
	m->nobjs = n;
	free(raw);
	return nraw && !m->objs ? -ENOMEM : 0;
}

/* The symbol of table[0..n) holding vaddr: the last one starting at or before it, or one of a
 * few before that (a symbol nested inside a larger sized one). */
static const struct sym_symbol *table_find(const struct sym_symbol *table, size_t n,
					   uint64_t vaddr)
{
	size_t lo = 0, hi = n, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && lo - i < 8; i--) {
		const struct sym_symbol *sy = &table[i - 1];

		if (vaddr < sy->end)
			return sy;
	}
	return NULL;
}

const struct sym_symbol *sym_module__find_symbol(struct sym_module *m, uint64_t vaddr)
{
	if (sym_module__open(m) || (!m->syms_loaded && load_symbols(m)))
		return NULL;
	return table_find(m->syms, m->nsyms, vaddr);
}

const struct sym_symbol *sym_module__find_object(struct sym_module *m, uint64_t vaddr)
{
	if (sym_module__open(m) || (!m->objs_loaded && load_objects(m)))
		return NULL;
	return table_find(m->objs, m->nobjs, vaddr);
}

bool sym_module__fde_range(struct sym_module *m, uint64_t vaddr, uint64_t *start,
			   uint64_t *end)
{
	size_t lo;

	if (sym_module__open(m))
		return false;
	if (!m->fdes_loaded) {
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(m->dmod, &bias);
		const char *source;

		m->fdes_loaded = true;
		if (!elf || unwind_fdes(elf, &m->fdes, &m->nfdes, &source))
			m->nfdes = 0;
	}
	/* the last FDE starting at or before vaddr, or one of a few before it (ranges a
	 * compiler writes do not overlap, hand-written ones might) */
	lo = util_upper_bound_u64(m->fdes, m->nfdes, sizeof(*m->fdes),
				  offsetof(struct unwind_fde, start), vaddr);
	for (size_t i = lo; i > 0 && lo - i < 8; i--) {
		if (vaddr < m->fdes[i - 1].end) {
			*start = m->fdes[i - 1].start;
			*end = m->fdes[i - 1].end;
			return true;
		}
	}
	return false;
}
