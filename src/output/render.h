/* Helpers shared by the renderers (not part of the public output API): the order of sites, units
 * for humans, histogram bucket bounds, and what counts as an allocator frame. */
#ifndef EBPROF_OUTPUT_RENDER_H
#define EBPROF_OUTPUT_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdarg.h>
#include <stdio.h>

#include "profile/profile.h"

struct output_opts;

/* What sites are ranked by: a sample type, or the bytes outstanding at exit. */
#define RENDER_KEY_OUTSTANDING (-1)
/* a diff profile's (profile__is_diff) stacks by the size of their change, |delta|, growth
 * before shrinkage of the same size: the order of `ebprof diff`'s table */
#define RENDER_KEY_CHANGE (-3)

/* Sample indices sorted by `key` (a type index, RENDER_KEY_OUTSTANDING or RENDER_KEY_CHANGE) descending, ties by
 * stack (frame names leaf first, then addresses), then pid. Only samples whose key is non-zero
 * when `nonzero`. Returns a malloc'd array (possibly empty, never NULL on success) and its
 * length in *n, or NULL with errno set. */
uint32_t *render__sorted_samples(const struct profile *p, int key, bool nonzero, uint32_t *n);

/* The index of sample s's own leaf: 0, or the frame after a "--" separator (a synthetic frame:
 * no mapping) drawn above the sample's stack, whose frames before it are context, not where
 * the sample's time went (offcpu --wakers: the thread that woke it). */
uint32_t render__own_leaf(const struct profile *p, const struct prof_sample *s);

/* The type counted in objects: the first "*_objects" type, else the first with unit "count",
 * else the default type. */
int render__count_type(const struct profile *p);

/* "512 B", "1.2 KiB", "3.4 MiB", ... */
const char *render__bytes(uint64_t v, char *buf, size_t len);
/* "850 ns", "12.5 us", "150.0 ms", "2.10 s", "3m 05s", "2h 07m" */
const char *render__duration(uint64_t ns, char *buf, size_t len);
/* The run's duration as render__duration() writes it, "unknown" when the profile has none
 * (another tool's heap profile: pprof's duration_nanos unset), never a made-up "0 ns". */
const char *render__run_duration(const struct profile *p, char *buf, size_t len);

/* Bounds of log2 size bucket b of n: bucket 0 is size 0, bucket b > 0 is [2^(b-1), 2^b - 1];
 * the last one is open (returns false: no upper bound). */
bool render__bucket(uint32_t b, uint32_t n, uint64_t *min, uint64_t *max);
/* Labels of log2 buckets: sizes "[64 B, 128 B)", "0 B", ">= 1 GiB"; lifetimes "[1.0 us, 2.0 us)",
 * "0 ns", ">= 2.10 s". */
void render__size_bucket_label(uint32_t b, uint32_t n, char *buf, size_t len);
void render__life_bucket_label(uint32_t b, uint32_t n, char *buf, size_t len);
/* A log2 histogram c[0..n) as labelled bars of '#' (the largest RENDER_BAR_WIDTH wide), one line
 * per non-empty bucket after "<indent><title>:", each line indented two more. */
#define RENDER_BAR_WIDTH 30
typedef void (*render_label_fn)(uint32_t b, uint32_t n, char *buf, size_t len);
void render__text_buckets(FILE *f, const char *indent, const char *title, const uint64_t *c,
			  uint32_t n, render_label_fn label_of);

/* Is this function an allocator entry point (malloc, operator new, ...), i.e. not where the
 * allocation was asked for? */
bool render__is_allocator(const char *name);
/* A site of the --mmap category (a positive mmap_objects value): kept apart from the allocation
 * sites. */
bool render__is_map_sample(const struct profile *p, const struct prof_sample *s);

/* Samples with a growth trend that held memory at some snapshot, fastest growth first (ties:
 * the higher maximum, then the default order). Malloc'd (never NULL on success), *n set; NULL
 * with errno on failure. */
uint32_t *render__growth_order(const struct profile *p, uint32_t *n);
/* A growth rate: "+1.2 KiB/s", "-512 B/s", "0 B/s". */
const char *render__rate(double bytes_per_sec, char *buf, size_t len);

/* An amount in its unit for humans: nanoseconds as a duration ("1.20 s"), bytes in binary
 * units ("1.5 KiB"), counts as the number, any other unit as "N unit". */
const char *render__amount(int64_t v, const char *unit, char *buf, size_t len);
/* Is p a report of allocations (mode "mem" or "kmem", a diff, or another tool's heap profile with
 * alloc_objects and alloc_space), or of stacks with values such as CPU time or events? */
bool render__is_alloc_profile(const struct profile *p);
/* Whether the sites' outstanding allocations are known: in a run, and in a mem or kmem profile
 * read back (its inuse values); not in another tool's heap profile or a diff read back. */
bool render__outstanding_known(const struct profile *p);
/* The terminal columns s takes (a table's name cells: a process "prög" is 4 wide, not 6): under
 * the user's locale (LC_ALL, LC_CTYPE, LANG) by wcswidth, a CJK character 2; without a multibyte
 * one, or for bytes that are not text in it, one per UTF-8 code point. */
int render__width(const char *s);
/* The printf field width ("%-*s", "%*s") that pads s to cols columns. */
int render__pad(const char *s, int cols);
/* A run of several modes (p->nparts > 0) as one text, JSON or HTML document (set.c) */
int render__set_text(const struct profile *p, const struct output_opts *o, FILE *f);
int render__set_json(const struct profile *p, const struct output_opts *o, FILE *f);
int render__set_html(const struct profile *p, const struct output_opts *o, FILE *f);
/* Does p trace functions whose calls every process lists, zeros included (mem and other
 * tools' heap profiles; not kmem, whose events are per-process statistics)? */
bool render__traces_calls(const struct profile *p);
/* The text report of a profile that is not of allocations (text_stacks.c). */
int render__text_stacks(const struct profile *p, const struct output_opts *o, FILE *f);
/* Its table of the processes (text_stacks.c): each one's samples summed per type, ranked by the
 * default type (--sort count: the count type), --top of them, then by command when a name has
 * several processes. Also the text report's of a saved profile of allocations, whose processes
 * lost their statistics (pprof has no field for them). 0 or a negative errno. */
int render__text_process_sums(const struct profile *p, const struct output_opts *o, FILE *f);
/* Its groups (text_groups.c): a table of their labels and numbers, then their histograms.
 * Nothing without groups. 0 or a negative errno. */
int render__text_groups(FILE *f, const struct profile *p, bool color, uint32_t top);
/* One group histogram as render__text_buckets draws it, log2 buckets labelled by its unit
 * (durations, sizes, counts): the text report's and the HTML page's. */
void render__hist_text(FILE *f, const char *indent, const char *title,
		       const struct prof_hist *hi);

/* Last path component ("libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6"). */
const char *render__basename(const char *path);
/* One frame line of the text reports: "#NO name (file:line) [module] [inlined] [k]" after
 * indent spaces: the module when the frame is symbolized (an unsymbolized one names it
 * already; a bracketed one, [kernel.kallsyms] or [vdso], as it is), kernel frames marked as in
 * the folded stacks. */
void render__text_frame(FILE *f, const struct profile *p, unsigned int indent, uint32_t no,
			const struct prof_location *loc, uint32_t line);

/* Text reports (text.c, text_stacks.c): the run's header (mode, command, start in UTC,
 * duration, kernel, the run's facts in one column, the sampling or the period the profile
 * states), a heading line (bold with colour), the drops line
 * ("Drops: none", or every reason counted with `tail` after it: what the drops mean for the
 * numbers above), and the notes. */
void render__text_header(FILE *f, const struct profile *p, bool color);
void render__text_vheading(FILE *f, bool color, const char *fmt, va_list ap);
void render__text_drops(FILE *f, const struct profile *p, bool color, const char *tail);
void render__text_notes(FILE *f, const struct profile *p, bool color);

#endif
