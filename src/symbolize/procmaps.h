/* /proc/PID/maps parsed into mappings; used by the symbolizer and by the leak scan. */
#ifndef EBPROF_PROCMAPS_H
#define EBPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_module;

enum sym_map_kind {
	SYM_MAP_FILE,		/* backed by a path we can try to open */
	SYM_MAP_ANON,		/* no path */
	SYM_MAP_SPECIAL,	/* [vdso], [heap], [stack], [anon:name], anon_inode:... */
};

struct sym_map {
	uint64_t start, end, offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];
	bool deleted;		/* the path had a " (deleted)" suffix (not kept in path) */
	enum sym_map_kind kind;
	char *path;		/* as shown in maps, NULL for SYM_MAP_ANON */

	/* Filled lazily by the facade on the first address that falls in this mapping. */
	const char *display;	/* interned module name reported in sym_result */
	struct sym_module *mod;
	bool mod_tried;
};

/* Parse maps text. Lines that do not parse are skipped (the kernel's format is fixed; garbage
 * only comes from tests or truncated reads). Returns 0 or negative errno. */
int sym_maps__parse(const char *text, struct sym_map **maps, size_t *nmaps);
void sym_maps__free(struct sym_map *maps, size_t nmaps);

#endif
