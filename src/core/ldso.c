/* The dynamic loader of a process (see ldso.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/ldso.h"

int ldso__hook_of(const char *path, struct ldso_hook *out)
{
	static struct {
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec mtime;
		struct ldso_hook h;
		bool valid;
	} last;
	struct ldso_hook h = { 0 };
	Elf_Scn *scn = NULL;
	struct stat st;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	if (last.valid && last.dev == st.st_dev && last.ino == st.st_ino &&
	    last.size == st.st_size && last.mtime.tv_sec == st.st_mtim.tv_sec &&
	    last.mtime.tv_nsec == st.st_mtim.tv_nsec) {
		close(fd);
		*out = last.h;
		return 0;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_dl_debug_state") && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				Elf_Scn *in = elf_getscn(elf, sym.st_shndx);
				GElf_Shdr ish;

				h.brk = sym.st_value;
				if (in && gelf_getshdr(in, &ish) && sym.st_value >= ish.sh_addr)
					h.brk_off = sym.st_value - ish.sh_addr + ish.sh_offset;
			}
			else if (!strcmp(name, "_r_debug") && GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
				 sym.st_size >= 32)
				h.rdebug = sym.st_value;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!h.brk || !h.rdebug)
		return -ENOENT;
	last.dev = st.st_dev;
	last.ino = st.st_ino;
	last.size = st.st_size;
	last.mtime = st.st_mtim;
	last.h = h;
	last.valid = true;
	*out = h;
	return 0;
}

int ldso__of(pid_t pid, uint64_t *base, char *path, size_t len)
{
	char fn[64], line[4096 + 128];
	uint64_t av[2];
	FILE *f;
	int fd, err = -ENOENT;

	*base = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/auxv", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_BASE)
			*base = av[1];
	close(fd);
	if (!*base)
		return -ENOENT;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		int pos = 0;

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*u %n", &lo, &off, &pos) < 2 || !pos ||
		    lo != *base || off || line[pos] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		if ((size_t)snprintf(path, len, "/proc/%d/root%s", pid, line + pos) < len)
			err = 0;
		break;
	}
	fclose(f);
	return err;
}

