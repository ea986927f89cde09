/* Allocator discovery and uprobe attachment.
 *
 * The allocator is found through the target's own /proc/PID/maps and opened through
 * /proc/PID/root, so a process in another mount namespace gets probes on its own copy of libc.
 * Symbols that share an address (glibc: aligned_alloc == memalign) get one probe: two uprobes
 * at one address would count every call twice. All entry points of a process attach as one
 * uprobe_multi link and all return points as another; libbpf 1.1 has no API for these links,
 * so they are created with the raw bpf(2) call. Detaching a link costs one RCU grace period
 * (about 0.1 s here) whatever its size, so two links instead of nineteen matter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "core/probes.h"
#include "symbolize/symbolize.h"

/* From the kernel UAPI of 6.6+; the build headers are older. */
#define EBPROF_BPF_TRACE_UPROBE_MULTI	48
#define EBPROF_BPF_F_UPROBE_MULTI_RETURN 1

const char *const mem_fn_names[MEM_FN__COUNT] = {
	[MEM_FN_MALLOC] = "malloc",
	[MEM_FN_CALLOC] = "calloc",
	[MEM_FN_REALLOC] = "realloc",
	[MEM_FN_REALLOCARRAY] = "reallocarray",
	[MEM_FN_FREE] = "free",
	[MEM_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[MEM_FN_MEMALIGN] = "memalign",
	[MEM_FN_POSIX_MEMALIGN] = "posix_memalign",
	[MEM_FN_VALLOC] = "valloc",
	[MEM_FN_PVALLOC] = "pvalloc",
};

/* On a shared address the earlier entry names the probe: memalign is glibc's own name,
 * aligned_alloc its alias. */
static const enum mem_fn probe_order[MEM_FN__COUNT] = {
	MEM_FN_MALLOC, MEM_FN_FREE, MEM_FN_CALLOC, MEM_FN_REALLOC, MEM_FN_REALLOCARRAY,
	MEM_FN_MEMALIGN, MEM_FN_ALIGNED_ALLOC, MEM_FN_POSIX_MEMALIGN, MEM_FN_VALLOC,
	MEM_FN_PVALLOC,
};

static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || (!strncmp(base, "libc-", 5) && strstr(base, ".so"));
}

/* glibc's free begins with `test %rdi,%rdi; je`: the kernel cannot emulate `test` and
 * single-steps it, about 14 us a call here against under 1 us for the `je` it can emulate.
 * Probing the `je` sees every call with its argument intact (free(NULL) too, and the program
 * ignores that). The general rule, with an instruction decoder, is for other prologues. */
static unsigned long place_free(const char *path, unsigned long off)
{
	unsigned char b[5];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return off;
	n = pread(fd, b, sizeof(b), off);
	close(fd);
	if (n == sizeof(b) && b[0] == 0x48 && b[1] == 0x85 && b[2] == 0xff &&
	    (b[3] == 0x74 || (b[3] == 0x0f && b[4] >= 0x84 && b[4] <= 0x85)))
		return off + 3;
	return off;
}

static int resolve(struct alloc_lib *lib)
{
	uint64_t off[MEM_FN__COUNT], entry[MEM_FN__COUNT];	/* entry: symbol offset per probe */
	bool have[MEM_FN__COUNT] = {};

	for (int i = 0; i < MEM_FN__COUNT; i++)
		have[i] = sym_elf_symbol_offset(lib->open_path, mem_fn_names[i], &off[i]) == 0;
	if (!have[MEM_FN_MALLOC] || !have[MEM_FN_FREE])
		return -ENOENT;

	lib->nprobes = lib->nret = 0;
	lib->aliases[0] = 0;
	memset(lib->alias_of, -1, sizeof(lib->alias_of));
	for (int k = 0; k < MEM_FN__COUNT; k++) {
		enum mem_fn fn = probe_order[k];
		bool dup = false;

		if (!have[fn])
			continue;
		for (uint32_t j = 0; j < lib->nprobes; j++) {
			if (entry[j] != off[fn])
				continue;
			dup = true;
			lib->alias_of[fn] = lib->cookies[j];
			snprintf(lib->aliases + strlen(lib->aliases),
				 sizeof(lib->aliases) - strlen(lib->aliases), "%s%s=%s",
				 lib->aliases[0] ? ", " : "", mem_fn_names[fn],
				 mem_fn_names[lib->cookies[j]]);
		}
		if (dup)
			continue;
		entry[lib->nprobes] = off[fn];
		lib->offsets[lib->nprobes] = fn == MEM_FN_FREE ? place_free(lib->open_path, off[fn])
							       : off[fn];
		lib->cookies[lib->nprobes++] = fn;
		if (fn != MEM_FN_FREE) {
			lib->ret_offsets[lib->nret] = off[fn];
			lib->ret_cookies[lib->nret++] = fn;
		}
	}
	return 0;
}

static int read_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

int probes__find_allocator(pid_t pid, struct alloc_lib *lib)
{
	char path[64], line[PATH_MAX + 128], exe[PATH_MAX] = "";
	bool exe_seen = false;
	FILE *f;
	int err = -ENOENT;

	memset(lib, 0, sizeof(*lib));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	read_exe(pid, exe, sizeof(exe));

	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		size_t n;

		if (!file)
			continue;
		n = strlen(file);
		if (n && file[n - 1] == '\n')
			file[--n] = 0;
		/* the executable itself serves malloc when libc is linked statically */
		if (!exe_seen && exe[0] && !strcmp(file, exe)) {
			exe_seen = true;
			snprintf(lib->path, sizeof(lib->path), "%s", file);
			snprintf(lib->open_path, sizeof(lib->open_path), "/proc/%d/root%s", pid, file);
			lib->kind = "static";
			if (resolve(lib) == 0) {
				err = 0;
				break;
			}
		}
		if (is_libc(file)) {
			snprintf(lib->path, sizeof(lib->path), "%s", file);
			snprintf(lib->open_path, sizeof(lib->open_path), "/proc/%d/root%s", pid, file);
			lib->kind = "glibc";
			err = resolve(lib);
			break;
		}
	}
	fclose(f);
	if (err)
		lib->path[0] = lib->open_path[0] = 0;
	return err;
}

static int link_uprobe_multi(int prog_fd, const char *path, const unsigned long *offsets,
			     const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret)
{
	/* union bpf_attr.link_create with the uprobe_multi member of Linux 6.6 */
	struct {
		__u32 prog_fd;
		__u32 target_fd;
		__u32 attach_type;
		__u32 flags;
		__aligned_u64 path;
		__aligned_u64 offsets;
		__aligned_u64 ref_ctr_offsets;
		__aligned_u64 cookies;
		__u32 cnt;
		__u32 um_flags;
		__u32 pid;
		__u32 pad;
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = EBPROF_BPF_TRACE_UPROBE_MULTI;
	attr.path = (unsigned long)path;
	attr.offsets = (unsigned long)offsets;
	attr.cookies = (unsigned long)cookies;
	attr.cnt = cnt;
	attr.um_flags = ret ? EBPROF_BPF_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int probes__attach(int entry_prog_fd, int exit_prog_fd, pid_t pid, const struct alloc_lib *lib,
		   struct probe_links *links)
{
	int fd;

	links->entry_fd = links->exit_fd = -1;
	/* returns first: an entry without its return would leave depth raised on that thread */
	fd = link_uprobe_multi(exit_prog_fd, lib->open_path, lib->ret_offsets, lib->ret_cookies,
			       lib->nret, pid, true);
	if (fd < 0)
		return fd;
	links->exit_fd = fd;
	fd = link_uprobe_multi(entry_prog_fd, lib->open_path, lib->offsets, lib->cookies,
			       lib->nprobes, pid, false);
	if (fd < 0) {
		probes__detach(links);
		return fd;
	}
	links->entry_fd = fd;
	return 0;
}

int probes__attach_entries(int entry_prog_fd, pid_t pid, const struct alloc_lib *lib,
			   uint64_t skip_fns, struct probe_links *links)
{
	unsigned long offsets[MEM_FN__COUNT];
	uint64_t cookies[MEM_FN__COUNT];
	uint32_t n = 0;
	int fd;

	links->entry_fd = links->exit_fd = -1;
	for (uint32_t i = 0; i < lib->nprobes && i < MEM_FN__COUNT; i++) {
		if (lib->cookies[i] < 64 && (skip_fns >> lib->cookies[i] & 1))
			continue;
		offsets[n] = lib->offsets[i];
		cookies[n++] = lib->cookies[i];
	}
	if (!n)
		return -ENOENT;
	fd = link_uprobe_multi(entry_prog_fd, lib->open_path, offsets, cookies, n, pid, false);
	if (fd < 0)
		return fd;
	links->entry_fd = fd;
	return 0;
}

void probes__detach(struct probe_links *links)
{
	if (!links)
		return;
	if (links->entry_fd >= 0)
		close(links->entry_fd);
	if (links->exit_fd >= 0)
		close(links->exit_fd);
	links->entry_fd = links->exit_fd = -1;
}
