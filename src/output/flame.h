/* The call tree behind the folded-stacks and flame-graph renderers (not part of the public output
 * API): every sample's stack, root first, under a frame for its process, identical paths merged
 * and valued by one sample type. Frames are named the way the folded format wants them (inline
 * frames expanded and suffixed "_[i]", kernel frames "_[k]", separators replaced), so both
 * renderers show the same names and a search in the SVG matches what the folded file holds. */
#ifndef EBPROF_OUTPUT_FLAME_H
#define EBPROF_OUTPUT_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/output.h"
#include "profile/profile.h"

#define FLAME_NONE UINT32_MAX

enum flame_kind {
	FLAME_ROOT,	/* "all": every sample */
	FLAME_PROCESS,	/* "comm (pid)" */
	FLAME_USER,	/* a symbolized function */
	FLAME_ALLOC,	/* an allocator entry point (malloc, operator new, ...) at a leaf */
	FLAME_UNKNOWN,	/* unsymbolized: "module+0xoff" or "0xaddr" */
	FLAME_LOST,	/* "[no stack]": the sample's stack could not be recorded */
	/* a name a mode puts in a stack, not code: a thread "NAME [TID]", a lock, an event,
	 * "[truncated]" (profile__location_is_synthetic) */
	FLAME_SYNTHETIC,
};

struct flame_frame {
	char *name;		/* folded name: sanitized, with its "_[i]"/"_[k]" suffix */
	uint32_t len;		/* length of the name without the suffix, for display */
	enum flame_kind kind;
	bool inlined;		/* inlined into the next frame towards the root */
	bool kernel;		/* kernel code (profile__mapping_is_kernel) */
	bool allocator;		/* named like an allocator; FLAME_ALLOC once seen at a leaf */
	const char *module;	/* base name of the mapped file (in the profile), or NULL */
};

struct flame_node {
	uint32_t frame;		/* index into frames */
	uint32_t parent;	/* FLAME_NONE for the root */
	uint32_t child;		/* first child; children in strcmp order of their names */
	uint32_t next;		/* next sibling */
	uint64_t self;		/* value of the stacks that end here */
	uint64_t total;		/* self plus the children's totals */
};

struct flame {
	const struct profile *p;
	int type;			/* sample type measured; -1 when the profile has none */
	struct flame_frame *frames;	/* interned by folded name: one name, one frame */
	uint32_t nframes;
	struct flame_node *nodes;	/* nodes[0] is the root; parents before their children */
	uint32_t nnodes;
	uint32_t nstacks;		/* nodes with self > 0: the distinct stacks */
	uint32_t max_depth;		/* the root is depth 0, processes depth 1 */
	uint32_t *leaf;			/* per sample of p: the node its value went to, or
					 * FLAME_NONE when it was left out */
	void *priv;
};

/* Build the tree of the sample type o->value_type (NULL or o NULL: the profile's default type).
 * Samples whose value is not positive are left out. A diff profile (profile__is_diff()) has no
 * process level: its stacks are those of all processes merged. NULL with errno set on failure:
 * EINVAL for a value_type the profile does not have, ENOMEM. */
struct flame *flame__new(const struct profile *p, const struct output_opts *o);
void flame__free(struct flame *fl);

/* A value in the unit of the measured type, for humans: "3.1 MiB (3276800 bytes)",
 * "512 B", "12.5 ms", "1200", "17 widgets". */
const char *flame__amount(const struct flame *fl, uint64_t v, char *buf, size_t len);

/* ---- diff_svg.c: what svg.c draws differently for a diff profile (profile__is_diff()) ---- */

struct flame_diff;

struct flame_legend {
	uint32_t rgb;
	const char *label;	/* plain text, nothing to escape */
};

/* Base and new values of every node of fl, which must be built from a diff profile. NULL with
 * errno set on failure. free accepts NULL. */
struct flame_diff *flame_diff__new(const struct flame *fl);
void flame_diff__free(struct flame_diff *fd);
/* Node n's colour: red if it grew, blue if it shrank, deeper the larger the change relative to
 * the larger of its two values; grey if unchanged. */
uint32_t flame_diff__rgb(const struct flame_diff *fd, uint32_t n);
/* Node n's values for its tooltip: "base 1.0 KiB, new 2.0 KiB, delta +1.0 KiB (+100.0%)". */
const char *flame_diff__values(const struct flame_diff *fd, uint32_t n, char *buf, size_t len);
/* The totals for the subtitle, short. */
const char *flame_diff__summary(const struct flame_diff *fd, char *buf, size_t len);
/* The legend's entries, *n of them. */
const struct flame_legend *flame_diff__legend(size_t *n);

#endif
