/* Folded stacks (".folded"): one line per distinct stack, "comm (pid);root;...;leaf VALUE", the
 * input of flamegraph.pl, speedscope, inferno and most flame graph tools. VALUE is the integer
 * value of one sample type (the profile's default, alloc_space for mem, unless
 * output_opts.value_type says otherwise). Lines are sorted bytewise (as `LC_ALL=C sort` would)
 * so two runs of one profile give the same file and diffs of two profiles read well. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame.h"
#include "output/output.h"

struct line {
	char *stack;
	uint64_t value;
};

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

/* "comm (pid);...;leaf" of node n: its path from below the root. */
static char *stack_of(const struct flame *fl, uint32_t n, uint32_t *path)
{
	uint32_t depth = 0, i;
	size_t len = 0;
	char *s, *w;

	for (; n != 0; n = fl->nodes[n].parent) {
		path[depth++] = n;
		len += strlen(fl->frames[fl->nodes[n].frame].name) + 1;
	}
	s = malloc(len ? len : 1);
	if (!s)
		return NULL;
	w = s;
	*w = '\0';
	for (i = depth; i-- > 0;) {
		const char *name = fl->frames[fl->nodes[path[i]].frame].name;
		size_t l = strlen(name);

		memcpy(w, name, l);
		w += l;
		*w++ = i ? ';' : '\0';
	}
	return s;
}

static int folded_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct flame *fl = flame__new(p, o);
	struct line *lines = NULL;
	uint32_t *path = NULL, i, n = 0;
	int err = -ENOMEM;

	if (!fl)
		return -errno;
	lines = calloc(fl->nstacks ? fl->nstacks : 1, sizeof(*lines));
	path = malloc(sizeof(*path) * (fl->max_depth + 1));
	if (!lines || !path)
		goto out;
	/* one node per distinct stack: identical stacks were merged (summed) into it */
	for (i = 1; i < fl->nnodes; i++) {
		if (!fl->nodes[i].self)
			continue;
		lines[n].stack = stack_of(fl, i, path);
		if (!lines[n].stack)
			goto out;
		lines[n++].value = fl->nodes[i].self;
	}
	qsort(lines, n, sizeof(*lines), cmp_lines);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 "\n", lines[i].stack, lines[i].value);
	err = ferror(f) ? -EIO : 0;
out:
	for (i = 0; lines && i < n; i++)
		free(lines[i].stack);
	free(lines);
	free(path);
	flame__free(fl);
	return err;
}

const struct output_ops output_folded = {
	.name = "folded",
	.ext = ".folded",
	.write = folded_write,
};
