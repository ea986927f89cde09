/* ebprof top's screen (see view.h). The screen is drawn whole each time (erase, then the lines:
 * ncurses sends only what changed), so a resize needs nothing but a redraw at the new size. */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "top/model.h"
#include "top/view.h"

const char *const top_view_names[5] = { "cpu", "mem", "offcpu", "lock", "io" };

enum prompt { PROMPT_NONE, PROMPT_FILTER, PROMPT_WRITE };

struct top_view {
	SCREEN *screen;
	bool active;		/* the terminal is ours */
	bool color;
	bool paused;
	bool focus;		/* the panel shows the selected process's stacks */
	bool help;
	int top;		/* the first row of the table shown (scrolling) */
	enum prompt prompt;
	char input[256];
	size_t ninput;
	char status[256];
	/* what was last drawn, for a redraw after a key */
	char head1[256], head2[256];
};

enum { PAIR_HEAD = 1, PAIR_SEL, PAIR_TITLE, PAIR_WARN };

struct top_view *top_view__new(bool color)
{
	struct top_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	/* newterm, not initscr: an unknown terminal is an error to report, not an exit */
	v->screen = newterm(NULL, stdout, stdin);
	if (!v->screen) {
		fprintf(stderr, "ebprof: cannot use the terminal: TERM='%s' is not a terminal type "
			"this system knows (see /usr/share/terminfo); set TERM, or use --batch\n",
			getenv("TERM") ? getenv("TERM") : "");
		free(v);
		return NULL;
	}
	v->active = true;
	cbreak();		/* Ctrl-C stays a signal: the session ends the run on it */
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);	/* Esc closes a prompt at once, not after a second */
	v->color = color && has_colors();
	if (v->color) {
		start_color();
		use_default_colors();
		init_pair(PAIR_HEAD, COLOR_CYAN, -1);
		init_pair(PAIR_SEL, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_GREEN);
		init_pair(PAIR_WARN, COLOR_RED, -1);
	}
	return v;
}

void top_view__end(struct top_view *v)
{
	if (!v || !v->active)
		return;
	endwin();
	v->active = false;
}

void top_view__free(struct top_view *v)
{
	top_view__end(v);
	if (v && v->screen)
		delscreen(v->screen);
	free(v);
}

bool top_view__paused(const struct top_view *v)
{
	return v->paused;
}

void top_view__status(struct top_view *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->status, sizeof(v->status), fmt, ap);
	va_end(ap);
}

static void style_on(struct top_view *v, int pair, int fallback)
{
	if (v->color)
		attron(COLOR_PAIR(pair));
	else if (fallback)
		attron(fallback);
}

static void style_off(struct top_view *v, int pair, int fallback)
{
	if (v->color)
		attroff(COLOR_PAIR(pair));
	else if (fallback)
		attroff(fallback);
}

/* One line at y, cut at the screen's width, the rest of the line cleared. */
static void line(int y, const char *s)
{
	int w = COLS;

	if (y < 0 || y >= LINES)
		return;
	mvaddnstr(y, 0, s, w);
	clrtoeol();
}

static void draw_help(void)
{
	static const char *const help[] = {
		"ebprof top: keys",
		"",
		"  Up/Down, j/k     select a process (PgUp/PgDn, Home/End)",
		"  Enter            focus the selected process: its hottest stacks (again: functions)",
		"  Tab, 1-5         switch the view: 1 cpu, 2 mem, 3 offcpu, 4 lock, 5 io (those built in)",
		"  s                sort by the next column (then PID)",
		"  /                filter by process name (empty: every process)",
		"  p                pause the view (tracing goes on; p again resumes)",
		"  w                write the window shown to a file: .txt .json .pb.gz .folded .svg",
		"                   .html .speedscope.json .csv",
		"  ?                this help (any key closes it)",
		"  q                quit (Ctrl-C too)",
	};

	erase();
	for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
		line(i, help[i]);
	refresh();
}

void top_view__draw(struct top_view *v, struct top_model *m, const char *head1,
		    const char *head2)
{
	int h = LINES, w = COLS, ncols = top_model__ncols(m), y = 0;
	int table_h, panel_h, sel = top_model__selected(m);
	uint32_t nrows = top_model__nrows(m);
	const struct top_source *vs = top_model__source(m, top_model__view(m));
	pid_t pid = top_model__selected_pid(m);
	struct top_panel_line *pl;
	char buf[1024];
	size_t len;
	uint32_t np;

	if (!v->active)
		return;
	if (head1 != v->head1)
		snprintf(v->head1, sizeof(v->head1), "%s", head1);
	if (head2 != v->head2)
		snprintf(v->head2, sizeof(v->head2), "%s", head2);
	if (v->help) {
		draw_help();
		return;
	}
	erase();
	style_on(v, PAIR_HEAD, A_BOLD);
	line(y++, v->head1);
	style_off(v, PAIR_HEAD, A_BOLD);
	line(y++, v->head2);
	len = snprintf(buf, sizeof(buf), "view:");
	for (int i = 0; i < top_model__nsources(m); i++)
		len += snprintf(buf + len, sizeof(buf) - len, i == top_model__view(m) ? " [%s]" :
				" %s", top_model__source(m, i)->name);
	len += snprintf(buf + len, sizeof(buf) - len, "   sort: %s",
			top_model__sort_col(m) < 0 ? "PID" :
			top_model__col(m, top_model__sort_col(m))->title);
	if (*top_model__filter_text(m))
		len += snprintf(buf + len, sizeof(buf) - len, "   filter: %s",
				top_model__filter_text(m));
	if (v->paused)
		snprintf(buf + len, sizeof(buf) - len, "   [paused]");
	line(y++, buf);

	/* the table takes what the panel leaves, at least 3 rows */
	panel_h = (h - y - 2) / 2;
	table_h = h - y - 2 - panel_h - 1;
	if (table_h < 3) {
		table_h = h - y - 2;
		panel_h = 0;
	}
	len = snprintf(buf, sizeof(buf), "%7s %-16s", "PID", "COMMAND");
	for (int c = 0; c < ncols && len < sizeof(buf); c++)
		len += snprintf(buf + len, sizeof(buf) - len, " %10s", top_model__col(m, c)->title);
	style_on(v, PAIR_TITLE, A_REVERSE);
	mvhline(y, 0, ' ', w);
	line(y++, buf);
	style_off(v, PAIR_TITLE, A_REVERSE);
	if (sel >= 0 && sel < v->top)
		v->top = sel;
	if (sel >= v->top + table_h - 1)
		v->top = sel - (table_h - 1) + 1;
	if (v->top > 0 && v->top + table_h - 1 > (int)nrows)
		v->top = nrows > (uint32_t)table_h - 1 ? nrows - (table_h - 1) : 0;
	for (int i = 0; i < table_h - 1; i++) {
		const struct top_row *r = top_model__row(m, v->top + i);

		if (!r)
			break;
		len = snprintf(buf, sizeof(buf), "%7d %-16s", (int)r->pid, r->comm);
		for (int c = 0; c < ncols && len < sizeof(buf); c++) {
			char num[32];

			len += snprintf(buf + len, sizeof(buf) - len, " %10s", r->has[c] ?
					top_format(r->v[c], top_model__col(m, c)->unit, num,
						   sizeof(num)) : "-");
		}
		if (v->top + i == sel)
			style_on(v, PAIR_SEL, A_REVERSE);
		line(y + i, buf);
		if (v->top + i == sel)
			style_off(v, PAIR_SEL, A_REVERSE);
	}
	y += table_h - 1;

	if (panel_h > 1 && vs) {
		const struct top_row *r = sel >= 0 ? top_model__row(m, sel) : NULL;
		bool share = vs->panel_unit == TOP_UNIT_PERCENT;

		if (v->focus)
			snprintf(buf, sizeof(buf), "%s: hottest stacks of %s %d (%s)%s", vs->name,
				 r ? r->comm : "", (int)pid, share ? "% of one CPU, leaf first" :
				 "per second, leaf first", r ? "" : " (none selected)");
		else
			snprintf(buf, sizeof(buf), "%8s %8s  %s: hottest functions of %s %d", share ?
				 "SELF%" : "SELF/s", share ? "TOTAL%" : "TOTAL/s", vs->name,
				 r ? r->comm : "", (int)pid);
		style_on(v, PAIR_TITLE, A_REVERSE);
		mvhline(y, 0, ' ', w);
		line(y++, buf);
		style_off(v, PAIR_TITLE, A_REVERSE);
		pl = calloc(panel_h, sizeof(*pl));
		np = pl && pid ? top_model__panel(m, pid, v->focus, pl, panel_h - 1) : 0;
		for (uint32_t i = 0; i < np; i++) {
			char a[32], b[32];

			if (v->focus)
				snprintf(buf, sizeof(buf), "%8s  %s",
					 top_format(pl[i].self, vs->panel_unit, a, sizeof(a)),
					 pl[i].text);
			else
				snprintf(buf, sizeof(buf), "%8s %8s  %s",
					 top_format(pl[i].self, vs->panel_unit, a, sizeof(a)),
					 top_format(pl[i].total, vs->panel_unit, b, sizeof(b)),
					 pl[i].text);
			line(y + i, buf);
		}
		free(pl);
		if (!np && pid) {
			const struct profile *w = top_model__window(m, top_model__view(m));

			line(y, w && !w->nsamples ? "  (no stacks in this view's windows: this mode "
			     "gives the table its columns only, for now)" :
			     "  (nothing counted for it in the window shown)");
		}
		y += panel_h - 1;
	}

	/* the last line: a prompt, a message, or the keys */
	if (v->prompt == PROMPT_FILTER)
		snprintf(buf, sizeof(buf), "filter by name (Enter: apply, Esc: cancel): %s",
			 v->input);
	else if (v->prompt == PROMPT_WRITE)
		snprintf(buf, sizeof(buf), "write the window to (Enter: write, Esc: cancel): %s",
			 v->input);
	else if (v->status[0])
		snprintf(buf, sizeof(buf), "%s", v->status);
	else
		snprintf(buf, sizeof(buf), "q quit  ? help  arrows select  Enter stacks  Tab view  "
			 "s sort  / filter  p pause  w write");
	if (v->status[0] && v->prompt == PROMPT_NONE)
		style_on(v, PAIR_WARN, A_BOLD);
	line(h - 1, buf);
	if (v->status[0] && v->prompt == PROMPT_NONE)
		style_off(v, PAIR_WARN, A_BOLD);
	refresh();
}

void top_view__redraw(struct top_view *v, struct top_model *m)
{
	top_view__draw(v, m, v->head1, v->head2);
}

/* A key while a prompt is open: line editing, Enter, Esc. */
static enum top_action prompt_key(struct top_view *v, struct top_model *m, int k, char *path,
				  size_t len)
{
	enum prompt p = v->prompt;

	if (k == 27) {
		v->prompt = PROMPT_NONE;
		return TOP_NONE;
	}
	if (k == '\n' || k == '\r' || k == KEY_ENTER) {
		v->prompt = PROMPT_NONE;
		if (p == PROMPT_FILTER) {
			top_model__filter(m, v->input);
			return TOP_NONE;
		}
		if (!v->ninput)
			return TOP_NONE;
		snprintf(path, len, "%s", v->input);
		return TOP_WRITE;
	}
	if (k == KEY_BACKSPACE || k == 127 || k == 8) {
		if (v->ninput)
			v->input[--v->ninput] = 0;
		return TOP_NONE;
	}
	if (k >= 32 && k < 127 && v->ninput + 1 < sizeof(v->input)) {
		v->input[v->ninput++] = k;
		v->input[v->ninput] = 0;
	}
	return TOP_NONE;
}

static void switch_view(struct top_view *v, struct top_model *m, const char *name)
{
	for (int i = 0; i < top_model__nsources(m); i++) {
		if (!strcmp(top_model__source(m, i)->name, name)) {
			top_model__set_view(m, i);
			return;
		}
	}
	top_view__status(v, "no %s view: 'ebprof top' does not show that mode yet", name);
}

enum top_action top_view__input(struct top_view *v, struct top_model *m, char *path,
				size_t len)
{
	enum top_action a = TOP_NONE;
	bool changed = false;
	int k;

	if (!v->active)
		return TOP_NONE;
	while (a == TOP_NONE && (k = getch()) != ERR) {
		changed = true;
		if (k == KEY_RESIZE)
			continue;
		if (v->prompt != PROMPT_NONE) {
			a = prompt_key(v, m, k, path, len);
			continue;
		}
		v->status[0] = 0;
		if (v->help) {
			v->help = false;
			continue;
		}
		switch (k) {
		case 'q':
		case 'Q':
			a = TOP_QUIT;
			break;
		case KEY_DOWN:
		case 'j':
			top_model__move(m, 1);
			break;
		case KEY_UP:
		case 'k':
			top_model__move(m, -1);
			break;
		case KEY_NPAGE:
			top_model__move(m, LINES / 4);
			break;
		case KEY_PPAGE:
			top_model__move(m, -LINES / 4);
			break;
		case KEY_HOME:
			top_model__move(m, -(int)top_model__nrows(m));
			break;
		case KEY_END:
			top_model__move(m, top_model__nrows(m));
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
			v->focus = !v->focus;
			break;
		case '\t':
			top_model__set_view(m, (top_model__view(m) + 1) % top_model__nsources(m));
			break;
		case '1': case '2': case '3': case '4': case '5':
			switch_view(v, m, top_view_names[k - '1']);
			break;
		case 's':
			top_model__cycle_sort(m);
			break;
		case '/':
			v->prompt = PROMPT_FILTER;
			snprintf(v->input, sizeof(v->input), "%s", top_model__filter_text(m));
			v->ninput = strlen(v->input);
			break;
		case 'p':
			v->paused = !v->paused;
			break;
		case 'w':
			v->prompt = PROMPT_WRITE;
			v->input[0] = 0;
			v->ninput = 0;
			break;
		case '?':
		case 'h':
			v->help = true;
			break;
		default:
			break;
		}
	}
	if (changed && a != TOP_QUIT)
		top_view__draw(v, m, v->head1, v->head2);
	return a;
}
