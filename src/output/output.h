/* Renderers: one file each behind one small ops struct. Every renderer renders any profile. */
#ifndef EBPROF_OUTPUT_H
#define EBPROF_OUTPUT_H

#include <stdio.h>
#include <stdint.h>
#include "profile/profile.h"

enum output_sort {
	OUTPUT_SORT_BYTES,	/* by the profile's default sample type (alloc_space for mem) */
	OUTPUT_SORT_COUNT,	/* by the first "..._objects"/count type */
};

struct output_opts {
	uint32_t top;		/* sites to show in text; 0 = all */
	enum output_sort sort;
	bool color;		/* ANSI colour in text (only when stdout is a terminal) */
	/* Sample type that folded stacks and flame graphs measure, by name ("alloc_space",
	 * "alloc_objects", ...); NULL = the profile's default type. Unknown names: -EINVAL. */
	const char *value_type;
	bool inverted;		/* flame graph as an icicle graph: root at the top */
};

struct output_ops {
	const char *name;	/* "text", "json", "pprof", "folded", "svg" */
	const char *ext;	/* ".txt", ".json", ".pb.gz", ".folded", ".svg" */
	/* Write the whole profile to f. Returns 0 or a negative errno. */
	int (*write)(const struct profile *p, const struct output_opts *o, FILE *f);
};

extern const struct output_ops output_text;
extern const struct output_ops output_json;
extern const struct output_ops output_pprof;
extern const struct output_ops output_folded, output_svg;
extern const struct output_ops output_speedscope;
extern const struct output_ops output_csv;
extern const struct output_ops output_html;
/* The text report of a diff profile (profile__is_diff(), `ebprof diff`); not chosen by
 * output__for_path(): for a diff, ".txt" means this one. */
extern const struct output_ops output_diff_text;

/* The renderer for a file name by its extension, or NULL (".txt", ".json", ".pb.gz", ".pb",
 * ".folded", ".svg", ".speedscope.json", ".csv", ".html"). */
const struct output_ops *output__for_path(const char *path);
/* Render to a path ("-" = stdout). Returns 0 or a negative errno; on error errno-style
 * message is left to the caller. */
int output__write_path(const struct output_ops *ops, const struct profile *p,
		       const struct output_opts *o, const char *path);

#endif
