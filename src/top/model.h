/* ebprof top's model of the screen, without the screen: one row per process made from the
 * windows (core/mode.h's window hook) of the modes it shows, each mode adding its columns and
 * its panel; the sort, the name filter, the selection, the panel of the selected process's
 * hottest functions or stacks, and the batch output (top -b). No ncurses, no BPF: unit-tested
 * (tests/unit/test_top.c). */
#ifndef EBPROF_TOP_MODEL_H
#define EBPROF_TOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct profile;

/* How a column is made from a process's stat (struct prof_process stats) in a window. */
enum top_col_kind {
	TOP_COL_SHARE,		/* nanoseconds of the window: percent of one CPU ("CPU%") */
	TOP_COL_RATE,		/* per second of the window ("ALLOC/s") */
	TOP_COL_GAUGE,		/* as it is, the value at the window's end ("LIVE") */
	TOP_COL_MEAN,		/* divided by the stat `per` of the same window ("IOLAT") */
};

/* How a column's numbers are written. */
enum top_unit {
	TOP_UNIT_PERCENT,	/* 99.5 */
	TOP_UNIT_COUNT,		/* 1234, 99999, 123.5k, 4.5M */
	TOP_UNIT_BYTES,		/* 1.5M (binary) */
	TOP_UNIT_NS,		/* 1.20s, 15.0ms */
};

struct top_col {
	const char *title;	/* "CPU%": at most 10 characters */
	const char *stat;	/* the process stat it is made of, "cpu_ns" */
	enum top_col_kind kind;
	enum top_unit unit;
	const char *per;	/* TOP_COL_MEAN: the stat it is divided by ("requests") */
};

#define TOP_MAX_SOURCES 5
#define TOP_MAX_COLS 16		/* every source's together */

/* What a mode adds to the view: its columns and its panel. One per mode top runs. */
struct top_source {
	const char *name;		/* the view's name, a mode's: "cpu", "mem", "offcpu", ... */
	const struct top_col *cols;
	int ncols;
	const char *panel_type;		/* the sample type the panel ranks by ("cpu") */
	enum top_unit panel_unit;	/* how the panel writes it (TOP_UNIT_PERCENT: of one CPU) */
};

struct top_row {
	pid_t pid;
	char comm[16];
	double v[TOP_MAX_COLS];		/* by column, every source's in order */
	bool has[TOP_MAX_COLS];		/* the source saw the process in the window */
};

/* One line of the panel: a function (self and total) or a stack (its value). */
struct top_panel_line {
	char text[512];		/* the function, or the stack leaf first, " < " between frames */
	double self, total;	/* in the panel's unit (share: percent of one CPU) */
};

struct top_model;

/* The sources are borrowed (static tables). NULL and errno on failure. */
struct top_model *top_model__new(const struct top_source *const *src, int nsrc);
void top_model__free(struct top_model *m);

/* A new window of every source: wins[i] the window of source i (owned by the model now; NULL:
 * none), over secs seconds. Rows are made again; the selection stays on its process. 0 or
 * -ENOMEM. */
int top_model__update(struct top_model *m, struct profile **wins, double secs);

/* The rows shown, sorted and filtered (valid until the next call that changes them). */
uint32_t top_model__nrows(const struct top_model *m);
const struct top_row *top_model__row(const struct top_model *m, uint32_t i);
/* The columns, every source's in order. */
int top_model__ncols(const struct top_model *m);
const struct top_col *top_model__col(const struct top_model *m, int c);
/* The source of column c. */
int top_model__col_source(const struct top_model *m, int c);

/* Sort by column c (descending; -1: by PID, ascending). */
void top_model__sort(struct top_model *m, int c);
/* The next column in turn (the last wraps to PID). Returns the new sort column. */
int top_model__cycle_sort(struct top_model *m);
int top_model__sort_col(const struct top_model *m);
/* Show only processes whose name contains s ("" or NULL: every process). */
void top_model__filter(struct top_model *m, const char *s);
const char *top_model__filter_text(const struct top_model *m);

/* The selection: an index into the rows shown (moves by delta, clamped), its process. */
void top_model__move(struct top_model *m, int delta);
int top_model__selected(const struct top_model *m);
pid_t top_model__selected_pid(const struct top_model *m);

/* The view: the source whose panel shows and whose first column sorts when it is chosen. */
void top_model__set_view(struct top_model *m, int src);
int top_model__view(const struct top_model *m);
int top_model__nsources(const struct top_model *m);
const struct top_source *top_model__source(const struct top_model *m, int i);
/* Source i's last window (NULL: none yet). */
const struct profile *top_model__window(const struct top_model *m, int i);
double top_model__secs(const struct top_model *m);
/* The drops of every source's last window: their sum, and in why each that is not 0 as
 * "SOURCE REASON N" joined by ", " (what fits in len; "" when none). */
uint64_t top_model__drops(const struct top_model *m, char *why, size_t len);

/* The panel of the view for process pid (0: every process): its functions ranked by self
 * (stacks == false) or its stacks ranked by value, at most max lines into out. Returns how many. */
uint32_t top_model__panel(const struct top_model *m, pid_t pid, bool stacks,
			  struct top_panel_line *out, uint32_t max);

/* A number in a unit, for a column of width w ("99.5", "12.3k", "1.5M", "15.0ms"). */
const char *top_format(double v, enum top_unit u, char *buf, size_t len);

/* top -b: one header line (`header`), the column titles, then every row shown (at most max,
 * 0: all) with their values ("-" where a source did not see the process), then an empty
 * line. */
void top_model__print(const struct top_model *m, FILE *f, const char *header, uint32_t max);

#endif
