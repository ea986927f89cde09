/* The kernel's BTF as a BPF object's CO-RE relocations need it, and no more.
 *
 * libbpf reads and parses all of /sys/kernel/btf/vmlinux (~5 MB here) for every object it
 * loads, and searches all of its types for each relocation's candidates: ~12 ms of the ~30 of
 * an `ebprof cpu -- true`. A minimal BTF holds only the types the object's relocations can
 * match (every type of the kernel's with a relocated type's name and kind) and what those
 * reach, each copied as it is (names, sizes, offsets, encodings), structs and unions with only
 * the members on a relocation's access path (all members of that name, through anonymous
 * members too): libbpf then finds the same candidates and the same offsets in it as in the
 * whole file, read and searched in ~0.1 ms. It is made once per kernel and object, kept in
 * ebprof's cache directory (sym_cache_dir()) and given to libbpf as btf_custom_path.
 *
 * Any doubt and the object loads against the real file: a relocation kind whose answer is not
 * a copy (a target type id, "type matches"), a relocated type the kernel's BTF does not name
 * (libbpf would look in the modules'), a kind the copy does not know, no cache directory. */
#ifndef EBPROF_CORE_MINBTF_H
#define EBPROF_CORE_MINBTF_H

#include <stddef.h>
#include "core/bpfutil.h"

struct btf;
struct log_ctx;

/* From the object's local BTF and its .BTF.ext section (raw bytes), the minimal BTF of vmlinux
 * for its relocations into *out (a new btf, the caller's). 0; -EOPNOTSUPP when it cannot say
 * exactly (see above), another -errno on bad input or no memory. */
int minbtf__build(const struct btf *vmlinux, const struct btf *local, const void *ext,
		  size_t ext_size, struct btf **out);

/* The same from the object's ELF bytes (a skeleton's elf_bytes). */
int minbtf__build_elf(const struct btf *vmlinux, const void *elf, size_t elf_size,
		      struct btf **out);

/* The minimal BTF's file for the object elf on the running kernel, made now if it is not in the
 * cache yet: path into buf, or NULL (use the kernel's own: no cache, a doubt above, any
 * error). For bpf_object_open_opts.btf_custom_path. Never fails the caller. */
const char *minbtf__path(const struct log_ctx *lc, const void *elf, size_t elf_size, char *buf,
			 size_t len);

/* The cache's file name for this kernel and object (no directory): kernel is the kernel's
 * identity (its build-id, else its uname), btf_size the size of /sys/kernel/btf/vmlinux. */
void minbtf__name(const char *kernel, long long btf_size, const void *elf, size_t elf_size,
		  char *buf, size_t len);

/* NAME__open() of a bpftool skeleton (NAME: e.g. cpu_bpf) with the minimal BTF when there is
 * one (libbpf copies the path at open), and the kernel log level of bpfutil__kernel_log_level;
 * needs <bpf/libbpf.h> and core/bpfutil.h. */
#define MINBTF_OPEN(lc, NAME) ({						\
	char minbtf_path_[4096];						\
	size_t minbtf_size_;							\
	const void *minbtf_elf_ = NAME##__elf_bytes(&minbtf_size_);		\
	LIBBPF_OPTS(bpf_object_open_opts, minbtf_opts_,				\
		    .kernel_log_level = bpfutil__kernel_log_level(),		\
		    .btf_custom_path = minbtf__path(lc, minbtf_elf_, minbtf_size_,	\
						    minbtf_path_,		\
						    sizeof(minbtf_path_)));	\
	NAME##__open_opts(&minbtf_opts_);					\
})

#endif
