/* Debug files with compressed DWARF, kept decompressed.
 *
 * libdw inflates every compressed debug section of a file when it opens its DWARF, before the
 * first lookup: for glibc's debug file (libc6-dbg: 2.4 MB of zlib .debug_info, 10 MB
 * decompressed) that is ~40 ms, on every run that symbolizes one glibc frame (every stack has
 * __libc_start_call_main). So a debug file with compressed sections is decompressed once into
 * CACHE_DIR/debug/BUILD-ID.debug, the same ELF file with the same sections, uncompressed, and
 * that copy is handed to libdw instead: its lookups then read only the pages they need.
 *
 * The copy is the ELF file followed by a trailer (libelf ignores bytes past what the ELF
 * headers describe): a magic, the ELF's size and a checksum of it. It is used only if it is
 * private to this user (cache.c), whole (size and checksum), and has the build-id it is named
 * after; anything else is rebuilt. Names and paths stay the original file's, so libdw finds
 * what a debug file refers to (.gnu_debugaltlink) as before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>

#include "symbolize/sym_internal.h"

#define DCACHE_MAGIC "EBPDBG1\n"
#define DCACHE_MAGIC_STAMP "EBPDBG1-checked"
/* Larger decompressed DWARF is not kept (libdw still reads it, inflating it each time). */
#define DCACHE_MAX_FILE (256ULL << 20)
/* Nor any more once the directory holds this much. */
#define DCACHE_MAX_TOTAL (1ULL << 30)

struct dcache_trailer {
	char magic[8];
	uint64_t elf_size;
	uint64_t hash;
};

char *sym__build_id_hex(Elf *elf)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bid;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&bid);
	char *s;

	if (n <= 0 || n > 64)
		return NULL;
	s = malloc((size_t)n * 2 + 1);
	if (!s)
		return NULL;
	for (ssize_t i = 0; i < n; i++) {
		s[2 * i] = digits[bid[i] >> 4];
		s[2 * i + 1] = digits[bid[i] & 0xf];
	}
	s[n * 2] = '\0';
	return s;
}

/* The decompressed size of elf's compressed sections; 0: none. */
static uint64_t compressed_size(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (!gelf_getchdr(scn, &ch))
			return 0;	/* not a format libelf knows: leave the file to libdw */
		total += ch.ch_size;
	}
	return total;
}

/* The stamp of a copy checked whole: its size, mtime and inode, in PATH.ok. A copy is written
 * under another name and renamed into place once whole, so the same file (same inode, size,
 * mtime) checked whole once is whole still: it is not read and hashed again on every run
 * (~10 MB for glibc's, ~1.5 ms). */
static void stamp_text(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "%s %llu %llu %lld %ld\n", DCACHE_MAGIC_STAMP,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
		 (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
}

static bool checked_before(const char *path, const struct stat *st)
{
	char *stamp_path, *got, want[128];
	size_t len;
	bool same;

	if (asprintf(&stamp_path, "%s.ok", path) < 0)
		return false;
	got = sym_cache__read(stamp_path, &len);
	free(stamp_path);
	stamp_text(st, want, sizeof(want));
	same = got && len == strlen(want) && !memcmp(got, want, len);
	free(got);
	return same;
}

static void stamp_checked(const char *path, const struct stat *st)
{
	char *stamp_path, *tmp, text[128];
	int fd;

	if (asprintf(&stamp_path, "%s.ok", path) < 0)
		return;
	fd = sym_cache__create(stamp_path, &tmp);
	if (fd >= 0) {
		stamp_text(st, text, sizeof(text));
		sym_cache__commit(fd, tmp, stamp_path,
				  write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	}
	free(stamp_path);
}

/* path's copy if it is whole and has build-id `bid`: its fd, else -1 */
static int open_copy(const char *path, const char *bid)
{
	struct dcache_trailer t;
	struct stat st;
	bool ok = false;
	void *map;
	Elf *elf;
	int fd = sym_cache__open(path, &st);

	if (fd < 0)
		return -1;
	if ((size_t)st.st_size <= sizeof(t) ||
	    pread(fd, &t, sizeof(t), st.st_size - (off_t)sizeof(t)) != (ssize_t)sizeof(t) ||
	    memcmp(t.magic, DCACHE_MAGIC, 8) || t.elf_size != (uint64_t)st.st_size - sizeof(t))
		goto out;
	if (checked_before(path, &st)) {
		ok = true;
		goto out;
	}
	map = mmap(NULL, t.elf_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	ok = sym_cache__hash(map, t.elf_size) == t.hash;
	if (ok) {
		char *got = NULL;

		elf = elf_memory(map, t.elf_size);
		if (elf)
			got = sym__build_id_hex(elf);
		ok = got && !strcmp(got, bid) && !compressed_size(elf);
		free(got);
		if (elf)
			elf_end(elf);
	}
	munmap(map, t.elf_size);
	if (ok)
		stamp_checked(path, &st);
out:
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint64_t dir_bytes(const char *dir)
{
	uint64_t total = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] != '.' && !fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			total += (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

static int copy_fd(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(from, buf, sizeof(buf), off), w;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			return 0;
		for (ssize_t done = 0; done < r; done += w) {
			w = write(to, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				return -1;
		}
		off += r;
	}
}

/* Write path: the ELF file `src` with its sections decompressed, and the trailer. */
static void build_copy(const char *path, int src)
{
	struct dcache_trailer t = { .magic = DCACHE_MAGIC };
	char *tmp;
	bool ok = false;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	off_t size;
	void *map;
	int fd = sym_cache__create(path, &tmp);

	if (fd < 0)
		return;
	if (copy_fd(src, fd))
		goto out;
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_type != SHT_NOBITS && elf_compress(scn, 0, 0) < 0)
			goto out;
	}
	/* libelf lays the sections out anew (the debug file's program headers only matter for
	 * their addresses, which stay) */
	size = elf_update(elf, ELF_C_WRITE);
	elf_end(elf);
	elf = NULL;
	if (size <= 0 || ftruncate(fd, size))
		goto out;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	t.elf_size = (uint64_t)size;
	t.hash = sym_cache__hash(map, (size_t)size);
	munmap(map, (size_t)size);
	ok = pwrite(fd, &t, sizeof(t), size) == (ssize_t)sizeof(t);
out:
	if (elf)
		elf_end(elf);
	sym_cache__commit(fd, tmp, path, ok);
}

int sym_debug_cache__open(const char *cache_dir, const char *orig, const char *bid)
{
	char *dir = NULL, *path = NULL;
	uint64_t need = 0;
	int cfd = -1, fd;
	Elf *elf;

	if (!cache_dir || !bid)
		return -1;
	if (asprintf(&dir, "%s/debug", cache_dir) < 0) {
		dir = NULL;
		goto out;
	}
	if (asprintf(&path, "%s/%s.debug", dir, bid) < 0) {
		path = NULL;
		goto out;
	}
	cfd = open_copy(path, bid);
	if (cfd >= 0)
		goto out;
	/* none yet (or not whole): decompress the original if it has compressed sections and
	 * is the file with this build-id */
	fd = open(orig, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		char *got = sym__build_id_hex(elf);

		if (got && !strcmp(got, bid))
			need = compressed_size(elf);
		free(got);
	}
	if (elf)
		elf_end(elf);
	if (need && need <= DCACHE_MAX_FILE && dir_bytes(dir) + need <= DCACHE_MAX_TOTAL) {
		build_copy(path, fd);
		cfd = open_copy(path, bid);
	}
	close(fd);
out:
	free(path);
	free(dir);
	return cfd;
}
