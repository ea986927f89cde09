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

/* The renderer for an output spec, or NULL: "FORMAT:PATH" names it (txt or text, json, pb.gz,
 * pb or pprof, folded, svg, csv, html, speedscope.json or speedscope; PATH may be "-" or
 * /dev/stdout), else PATH's extension does (".txt", ".json", ".pb.gz", ".pb", ".folded",
 * ".svg", ".speedscope.json", ".csv", ".html"); "-", /dev/stdout, /dev/stderr and /dev/null
 * alone are text. Every output__ function that takes a path takes such a spec. */
const struct output_ops *output__for_path(const char *path);
/* What to do when output__for_path finds no format, for "cannot tell the format of 'X': " */
#define OUTPUT_FORMAT_HINT                                                                        \
	"use a .txt, .json, .pb.gz, .folded, .svg, .html, .speedscope.json or .csv file name, "   \
	"or FORMAT:PATH (e.g. folded:- for folded stacks on standard output)"
/* The file of a spec: what follows "FORMAT:", or the spec itself. */
const char *output__file(const char *spec);
/* A renderer that shows every part of a run of several modes in one document (text, JSON,
 * HTML); the others write one file per part. */
bool output__shows_parts(const struct output_ops *ops);
/* Does spec name standard output or error ("-", "folded:-", "/dev/stdout", "/dev/stderr")? */
bool output__is_stream(const char *spec);
/* The file of one part: "out.pb.gz" -> "out.cpu.pb.gz" (the mode before the format's
 * extension; "svg:out" -> "svg:out.cpu"; a stream ("folded:-") is the spec itself: it holds
 * one part, and a run of several modes refuses it, ebprof profile's check). 0, -EINVAL (no
 * known extension) or -ENAMETOOLONG. */
int output__part_path(const char *path, const char *part, char *buf, size_t len);
/* Render to a path ("-" = stdout): a regular file is written whole or not at all (a temporary
 * file renamed over it); a FIFO, /dev/null, /dev/stdout and /dev/stderr are written in place;
 * any other file that is not regular, or a symbolic link to one, is refused (-EPERM, -ELOOP).
 * Returns 0 or a negative errno; the message is left to the caller. */
int output__write_path(const struct output_ops *ops, const struct profile *p,
		       const struct output_opts *o, const char *path);
/* Can a report be written to path? Checked before a run, so that it does not end in a lost
 * profile: a directory that exists and takes new files, a path that is not a directory, and
 * nothing but a regular file, a FIFO, /dev/null or /dev/stdout (output__write_path's rules).
 * Returns 0, or a negative errno with why a phrase ("directory '/x' does not exist"). */
int output__check_path(const char *path, char *why, size_t len);

#endif
