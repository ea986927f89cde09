/* ebprof top's screen (ncurses): draws a top_model, reads the keys. Arrows/j/k select, Enter
 * focuses the selected process (its stacks), Tab or 1-5 switch the view, s cycles the sort
 * column, / filters by name, p pauses, w asks for a file to write the window to, ? helps, q
 * quits. Resize-safe (KEY_RESIZE), no mouse, colour optional. */
#ifndef EBPROF_TOP_VIEW_H
#define EBPROF_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>

struct top_model;
struct top_view;

enum top_action {
	TOP_NONE,	/* nothing for the caller (the view redrew what changed) */
	TOP_QUIT,
	TOP_WRITE,	/* write the shown window to the path given */
};

/* Take over the terminal (stdin, stdout). color: unless --no-color or NO_COLOR. NULL when the
 * terminal cannot be used (said on stderr). */
struct top_view *top_view__new(bool color);
/* Give the terminal back as it was (any number of times; safe after a failed draw). */
void top_view__end(struct top_view *v);
void top_view__free(struct top_view *v);

/* Draw everything: header lines (the first two rows), the table, the panel, the status. */
void top_view__draw(struct top_view *v, struct top_model *m, const char *head1,
		    const char *head2);
/* Draw again with the last header lines (after a message). */
void top_view__redraw(struct top_view *v, struct top_model *m);
/* Read every pending key without waiting; what the caller must do. For TOP_WRITE, the path is
 * copied to path. The view redraws on its own when a key changed it. */
enum top_action top_view__input(struct top_view *v, struct top_model *m, char *path,
				size_t len);
/* A message on the status line until the next key. */
void top_view__status(struct top_view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool top_view__paused(const struct top_view *v);

/* The view names 1-5 switch to, in order. */
extern const char *const top_view_names[5];

#endif
