/* ebprof top's model of the screen (see model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "top/model.h"
#include "util/util.h"

struct top_model {
	const struct top_source *src[TOP_MAX_SOURCES];
	int nsrc;
	int colsrc[TOP_MAX_COLS];	/* the source of each column */
	const struct top_col *cols[TOP_MAX_COLS];
	int ncols;
	struct profile *win[TOP_MAX_SOURCES];
	double secs;
	struct top_row *rows;		/* every process of the windows */
	uint32_t nrows, caprows;
	uint32_t *shown;		/* indices of the rows shown, in order */
	uint32_t nshown;
	int sort;			/* column, -1: PID */
	char filter[64];
	int sel;			/* index into shown, -1: none */
	pid_t sel_pid;
	int view;
};

struct top_model *top_model__new(const struct top_source *const *src, int nsrc)
{
	struct top_model *m;

	if (nsrc < 1 || nsrc > TOP_MAX_SOURCES) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	for (int i = 0; i < nsrc; i++) {
		m->src[i] = src[i];
		for (int c = 0; c < src[i]->ncols; c++) {
			if (m->ncols == TOP_MAX_COLS) {
				free(m);
				errno = E2BIG;
				return NULL;
			}
			m->colsrc[m->ncols] = i;
			m->cols[m->ncols++] = &src[i]->cols[c];
		}
	}
	m->nsrc = nsrc;
	m->sel = -1;
	m->sort = m->ncols ? 0 : -1;
	return m;
}

void top_model__free(struct top_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nsrc; i++)
		profile__free(m->win[i]);
	free(m->rows);
	free(m->shown);
	free(m);
}

static struct top_row *row_of(struct top_model *m, pid_t pid)
{
	for (uint32_t i = 0; i < m->nrows; i++)
		if (m->rows[i].pid == pid)
			return &m->rows[i];
	if (m->nrows == m->caprows) {
		uint32_t cap = m->caprows ? m->caprows * 2 : 64;
		struct top_row *n = realloc(m->rows, cap * sizeof(*n));

		if (!n)
			return NULL;
		m->rows = n;
		m->caprows = cap;
	}
	memset(&m->rows[m->nrows], 0, sizeof(m->rows[0]));
	m->rows[m->nrows].pid = pid;
	return &m->rows[m->nrows++];
}

static double col_value(const struct top_col *c, uint64_t v, double secs)
{
	switch (c->kind) {
	case TOP_COL_SHARE:
		return secs > 0 ? v / (secs * 1e9) * 100 : 0;
	case TOP_COL_RATE:
		return secs > 0 ? v / secs : 0;
	case TOP_COL_GAUGE:
	case TOP_COL_MEAN:
		break;
	}
	return v;
}

static int cmp_model_sort;
static const struct top_row *cmp_rows;

static int row_cmp(const void *a, const void *b)
{
	const struct top_row *x = &cmp_rows[*(const uint32_t *)a];
	const struct top_row *y = &cmp_rows[*(const uint32_t *)b];
	int c = cmp_model_sort;

	if (c >= 0) {
		double vx = x->has[c] ? x->v[c] : -1, vy = y->has[c] ? y->v[c] : -1;

		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The rows shown again: filtered, sorted, the selection kept on its process. */
static int reshape(struct top_model *m)
{
	uint32_t *shown = realloc(m->shown, (m->nrows ? m->nrows : 1) * sizeof(*shown));

	if (!shown)
		return -ENOMEM;
	m->shown = shown;
	m->nshown = 0;
	for (uint32_t i = 0; i < m->nrows; i++)
		if (!m->filter[0] || strstr(m->rows[i].comm, m->filter))
			m->shown[m->nshown++] = i;
	cmp_model_sort = m->sort;
	cmp_rows = m->rows;
	qsort(m->shown, m->nshown, sizeof(*m->shown), row_cmp);
	if (!m->nshown) {
		m->sel = -1;
		return 0;
	}
	for (uint32_t i = 0; m->sel_pid && i < m->nshown; i++) {
		if (m->rows[m->shown[i]].pid == m->sel_pid) {
			m->sel = i;
			return 0;
		}
	}
	/* its process is gone or filtered out: the same place, another process */
	if (m->sel < 0)
		m->sel = 0;
	if (m->sel >= (int)m->nshown)
		m->sel = m->nshown - 1;
	m->sel_pid = m->rows[m->shown[m->sel]].pid;
	return 0;
}

int top_model__update(struct top_model *m, struct profile **wins, double secs)
{
	m->nrows = 0;
	m->secs = secs;
	for (int i = 0; i < m->nsrc; i++) {
		profile__free(m->win[i]);
		m->win[i] = wins[i];
		wins[i] = NULL;
	}
	for (int c = 0; c < m->ncols; c++) {
		const struct profile *w = m->win[m->colsrc[c]];

		for (uint32_t i = 0; w && i < w->nprocesses; i++) {
			const struct prof_process *pp = &w->processes[i];
			struct top_row *r = row_of(m, pp->pid);
			uint64_t v;

			if (!r)
				return -ENOMEM;
			if (!r->comm[0] && pp->comm)
				snprintf(r->comm, sizeof(r->comm), "%s", pp->comm);
			if (!prof_process__stat(pp, m->cols[c]->stat, &v))
				continue;
			if (m->cols[c]->kind == TOP_COL_MEAN) {
				uint64_t per;

				/* no mean of nothing: the column stays empty */
				if (!m->cols[c]->per || !prof_process__stat(pp, m->cols[c]->per, &per) ||
				    !per)
					continue;
				r->v[c] = (double)v / per;
			} else {
				r->v[c] = col_value(m->cols[c], v, secs);
			}
			r->has[c] = true;
		}
	}
	return reshape(m);
}

uint32_t top_model__nrows(const struct top_model *m)
{
	return m->nshown;
}

const struct top_row *top_model__row(const struct top_model *m, uint32_t i)
{
	return i < m->nshown ? &m->rows[m->shown[i]] : NULL;
}

int top_model__ncols(const struct top_model *m)
{
	return m->ncols;
}

const struct top_col *top_model__col(const struct top_model *m, int c)
{
	return c >= 0 && c < m->ncols ? m->cols[c] : NULL;
}

int top_model__col_source(const struct top_model *m, int c)
{
	return c >= 0 && c < m->ncols ? m->colsrc[c] : -1;
}

void top_model__sort(struct top_model *m, int c)
{
	m->sort = c >= 0 && c < m->ncols ? c : -1;
	reshape(m);
}

int top_model__cycle_sort(struct top_model *m)
{
	top_model__sort(m, m->sort + 1 < m->ncols ? m->sort + 1 : -1);
	return m->sort;
}

int top_model__sort_col(const struct top_model *m)
{
	return m->sort;
}

void top_model__filter(struct top_model *m, const char *s)
{
	snprintf(m->filter, sizeof(m->filter), "%s", s ? s : "");
	reshape(m);
}

const char *top_model__filter_text(const struct top_model *m)
{
	return m->filter;
}

void top_model__move(struct top_model *m, int delta)
{
	long sel = (long)m->sel + delta;

	if (!m->nshown)
		return;
	if (sel < 0)
		sel = 0;
	if (sel >= (long)m->nshown)
		sel = m->nshown - 1;
	m->sel = sel;
	m->sel_pid = m->rows[m->shown[sel]].pid;
}

int top_model__selected(const struct top_model *m)
{
	return m->sel;
}

pid_t top_model__selected_pid(const struct top_model *m)
{
	return m->sel >= 0 ? m->sel_pid : 0;
}

void top_model__set_view(struct top_model *m, int src)
{
	if (src < 0 || src >= m->nsrc)
		return;
	m->view = src;
	for (int c = 0; c < m->ncols; c++) {
		if (m->colsrc[c] == src) {
			top_model__sort(m, c);
			break;
		}
	}
}

int top_model__view(const struct top_model *m)
{
	return m->view;
}

int top_model__nsources(const struct top_model *m)
{
	return m->nsrc;
}

const struct top_source *top_model__source(const struct top_model *m, int i)
{
	return i >= 0 && i < m->nsrc ? m->src[i] : NULL;
}

const struct profile *top_model__window(const struct top_model *m, int i)
{
	return i >= 0 && i < m->nsrc ? m->win[i] : NULL;
}

double top_model__secs(const struct top_model *m)
{
	return m->secs;
}

uint64_t top_model__drops(const struct top_model *m, char *why, size_t len)
{
	uint64_t sum = 0;
	size_t n = 0;

	if (len)
		why[0] = '\0';
	for (int i = 0; i < top_model__nsources(m); i++) {
		const struct profile *w = top_model__window(m, i);

		for (uint32_t j = 0; w && j < w->ndrops; j++) {
			if (!w->drops[j].value)
				continue;
			sum += w->drops[j].value;
			if (n < len)
				n += snprintf(why + n, len - n, "%s%s %s %llu", n ? ", " : "",
					      top_model__source(m, i)->name, w->drops[j].key,
					      (unsigned long long)w->drops[j].value);
		}
	}
	return sum;
}

/* ---- the panel -------------------------------------------------------------------------- */

struct fn_agg {
	char *name;
	int64_t self, total;
	uint32_t seen;		/* the sample that last added to total (+1) */
};

struct fn_table {
	struct fn_agg *v;
	uint32_t n, cap;	/* cap a power of two; load at most one half */
};

static struct fn_agg *fn_get(struct fn_table *t, const char *name)
{
	uint32_t j;

	if ((t->n + 1) * 2 > t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct fn_agg *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (uint32_t i = 0; i < t->cap; i++) {
			if (!t->v[i].name)
				continue;
			j = util_hash_str(t->v[i].name) & (cap - 1);
			while (v[j].name)
				j = (j + 1) & (cap - 1);
			v[j] = t->v[i];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	j = util_hash_str(name) & (t->cap - 1);
	while (t->v[j].name && strcmp(t->v[j].name, name))
		j = (j + 1) & (t->cap - 1);
	if (!t->v[j].name) {
		t->v[j].name = strdup(name);
		if (!t->v[j].name)
			return NULL;
		t->n++;
	}
	return &t->v[j];
}

static double panel_value(const struct top_source *s, int64_t v, double secs)
{
	if (secs <= 0)
		return 0;
	return s->panel_unit == TOP_UNIT_PERCENT ? v / (secs * 1e9) * 100 : v / secs;
}

static int line_cmp(const void *a, const void *b)
{
	const struct top_panel_line *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* A location's frames: one per line, the innermost (an inlined callee) first; one for a
 * location without lines (its address). */
static uint32_t frames_of(const struct profile *p, uint32_t loc)
{
	return p->locations[loc].nlines ? p->locations[loc].nlines : 1;
}

static const char *frame_of(const struct profile *p, uint32_t loc, uint32_t line, char *buf,
			    size_t len)
{
	return profile__frame_name(p, &p->locations[loc], line, buf, len);
}

static uint32_t panel_stacks(const struct top_model *m, const struct profile *w, int type,
			     pid_t pid, struct top_panel_line *out, uint32_t max)
{
	const struct top_source *s = m->src[m->view];
	struct top_panel_line *all = calloc(w->nsamples ? w->nsamples : 1, sizeof(*all));
	uint32_t n = 0;

	if (!all)
		return 0;
	for (uint32_t i = 0; i < w->nsamples; i++) {
		const struct prof_sample *sm = &w->samples[i];
		size_t len = 0;

		if ((pid && sm->pid != (uint32_t)pid) || !sm->values[type])
			continue;
		all[n].self = all[n].total = panel_value(s, sm->values[type], m->secs);
		for (uint32_t f = 0; f < sm->nlocs && len + 4 < sizeof(all[n].text); f++) {
			for (uint32_t l = 0; l < frames_of(w, sm->locs[f]) &&
					     len + 4 < sizeof(all[n].text); l++) {
				char name[256];

				len += snprintf(all[n].text + len, sizeof(all[n].text) - len,
						"%s%s", len ? " < " : "",
						frame_of(w, sm->locs[f], l, name, sizeof(name)));
			}
		}
		if (!sm->nlocs)
			snprintf(all[n].text, sizeof(all[n].text), "[no stack]");
		n++;
	}
	qsort(all, n, sizeof(*all), line_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}

uint32_t top_model__panel(const struct top_model *m, pid_t pid, bool stacks,
			  struct top_panel_line *out, uint32_t max)
{
	const struct top_source *s = m->src[m->view];
	const struct profile *w = m->win[m->view];
	struct fn_table t = { 0 };
	struct top_panel_line *all;
	uint32_t n = 0;
	int type;

	if (!w || !max)
		return 0;
	type = profile__type_index(w, s->panel_type);
	if (type < 0)
		type = w->default_type;
	if (stacks)
		return panel_stacks(m, w, type, pid, out, max);
	for (uint32_t i = 0; i < w->nsamples; i++) {
		const struct prof_sample *sm = &w->samples[i];
		int64_t v = sm->values[type];
		char name[256];

		if ((pid && sm->pid != (uint32_t)pid) || !v)
			continue;
		/* every frame, an inlined function's too (its caller's total has it) */
		for (uint32_t f = 0; f < sm->nlocs; f++) {
			/* a synthetic frame is a function only as the leaf (text_stacks.c) */
			if (f && profile__location_is_synthetic(&w->locations[sm->locs[f]]))
				continue;
			for (uint32_t l = 0; l < frames_of(w, sm->locs[f]); l++) {
				struct fn_agg *a = fn_get(&t, frame_of(w, sm->locs[f], l, name,
								       sizeof(name)));

				if (!a)
					goto out;
				if (f == 0 && l == 0)
					a->self += v;
				/* a recursive function counts once per sample in its total */
				if (a->seen != i + 1) {
					a->total += v;
					a->seen = i + 1;
				}
			}
		}
		if (!sm->nlocs) {
			struct fn_agg *a = fn_get(&t, "[no stack]");

			if (!a)
				goto out;
			a->self += v;
			a->total += v;
		}
	}
	all = calloc(t.n ? t.n : 1, sizeof(*all));
	if (!all)
		goto out;
	for (uint32_t i = 0; i < t.cap; i++) {
		if (!t.v[i].name)
			continue;
		snprintf(all[n].text, sizeof(all[n].text), "%s", t.v[i].name);
		all[n].self = panel_value(s, t.v[i].self, m->secs);
		all[n].total = panel_value(s, t.v[i].total, m->secs);
		n++;
	}
	qsort(all, n, sizeof(*all), line_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
out:
	for (uint32_t i = 0; i < t.cap; i++)
		free(t.v[i].name);
	free(t.v);
	return n;
}

/* ---- text --------------------------------------------------------------------------------- */

const char *top_format(double v, enum top_unit u, char *buf, size_t len)
{
	static const char *const si[] = { "", "k", "M", "G", "T" };
	static const char *const bin[] = { "B", "K", "M", "G", "T" };
	int i = 0;

	switch (u) {
	case TOP_UNIT_PERCENT:
		snprintf(buf, len, "%.1f", v);
		break;
	case TOP_UNIT_COUNT:
		/* whole up to 99999 (a rate times its window is the count) */
		if (v < 99999.5) {
			snprintf(buf, len, "%.0f", v);
			break;
		}
		while (v >= 1000 && i < 4) {
			v /= 1000;
			i++;
		}
		snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", v, si[i]);
		break;
	case TOP_UNIT_BYTES:
		while (v >= 1024 && i < 4) {
			v /= 1024;
			i++;
		}
		snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", v, bin[i]);
		break;
	case TOP_UNIT_NS:
		if (v >= 1e9)
			snprintf(buf, len, "%.2fs", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, len, "%.1fms", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, len, "%.1fus", v / 1e3);
		else
			snprintf(buf, len, "%.0fns", v);
		break;
	}
	return buf;
}

void top_model__print(const struct top_model *m, FILE *f, const char *header, uint32_t max)
{
	uint32_t n = m->nshown;

	if (max && n > max)
		n = max;
	fprintf(f, "%s\n%7s %-16s", header, "PID", "COMMAND");
	for (int c = 0; c < m->ncols; c++)
		fprintf(f, " %10s", m->cols[c]->title);
	fputc('\n', f);
	for (uint32_t i = 0; i < n; i++) {
		const struct top_row *r = &m->rows[m->shown[i]];

		fprintf(f, "%7d %-16s", (int)r->pid, r->comm[0] ? r->comm : "?");
		for (int c = 0; c < m->ncols; c++) {
			char buf[32];

			fprintf(f, " %10s", r->has[c] ? top_format(r->v[c], m->cols[c]->unit, buf,
								   sizeof(buf)) : "-");
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	fflush(f);
}
