/* The call tree shared by the folded-stacks and flame-graph renderers; see flame.h.
 *
 * Built in one pass over the samples: each location's frames are named once (a location is
 * shared by many samples), frames are interned by name, and a node is found from its parent
 * and frame through a hash table, so a 100k-sample profile costs one hash lookup per frame. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame.h"
#include "output/render.h"
#include "util/util.h"

#define NAME_MAX_LEN 4096

struct node_slot {
	uint64_t key;		/* (parent << 32 | frame) + 1; 0 = free */
	uint32_t node;
};

struct flame_priv {
	uint32_t *frame_hash;	/* open addressing, frame index + 1 (0 = free) */
	uint32_t frame_cap;
	uint32_t frames_cap;	/* allocated frames */
	struct node_slot *node_hash;
	uint32_t node_cap;
	uint32_t nodes_cap;	/* allocated nodes */
	uint32_t *loc_first;	/* per location: first of its frame ids, FLAME_NONE = not yet */
	uint32_t *loc_n;
	uint32_t *loc_ids;	/* frame ids of the locations, root side first */
	uint32_t nids, ids_cap;
	uint32_t lost_frame;
	uint32_t last_pid, last_pid_frame;
	bool merged;		/* no process level (a diff) */
};



/*
 * The folded format is "a;b;c 123": a ';' in a name would split the frame and a newline the
 * line, so they become ':' and ' ' (as do other control characters, which would also make the
 * SVG invalid XML). flamegraph.pl reads a trailing " <number>" before the count as a second
 * (differential) count, so a name that ends that way gets a '_' for its blank.
 */
static void sanitize(char *s)
{
	char *p, *end;

	for (p = s; *p; p++) {
		if (*p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	}
	end = p;
	while (p > s && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))
		p--;
	if (p < end && p > s && p[-1] == ' ')
		p[-1] = '_';
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 64;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > UINT32_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	a = realloc(*arr, (size_t)n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

static int frame_rehash(struct flame *fl)
{
	struct flame_priv *fp = fl->priv;
	uint32_t cap = fp->frame_cap ? fp->frame_cap * 2 : 256, i;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < fl->nframes; i++) {
		uint32_t h = (uint32_t)util_hash_str(fl->frames[i].name) & (cap - 1);

		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = i + 1;
	}
	free(fp->frame_hash);
	fp->frame_hash = t;
	fp->frame_cap = cap;
	return 0;
}

/* The frame named `name` (already sanitized and suffixed), added with the rest if new. */
static uint32_t frame_intern(struct flame *fl, const char *name, uint32_t len,
			     enum flame_kind kind, bool inlined, bool kernel, const char *module)
{
	struct flame_priv *fp = fl->priv;
	struct flame_frame *fr;
	uint32_t h;

	if ((fl->nframes + 1) * 2 > fp->frame_cap && frame_rehash(fl))
		return FLAME_NONE;
	h = (uint32_t)util_hash_str(name) & (fp->frame_cap - 1);
	while (fp->frame_hash[h]) {
		if (strcmp(fl->frames[fp->frame_hash[h] - 1].name, name) == 0)
			return fp->frame_hash[h] - 1;
		h = (h + 1) & (fp->frame_cap - 1);
	}
	if (grow((void **)&fl->frames, &fp->frames_cap, fl->nframes + 1, sizeof(*fl->frames)))
		return FLAME_NONE;
	fr = &fl->frames[fl->nframes];
	*fr = (struct flame_frame){
		.name = strdup(name), .len = len, .kind = kind, .inlined = inlined,
		.kernel = kernel, .module = module,
	};
	if (!fr->name)
		return FLAME_NONE;
	fp->frame_hash[h] = ++fl->nframes;
	return fl->nframes - 1;
}

/* Name a frame from a raw name: sanitize, add the suffix, intern. */
static uint32_t frame_named(struct flame *fl, const char *raw, enum flame_kind kind, bool inlined,
			    bool kernel, const char *module)
{
	char buf[NAME_MAX_LEN + 8];
	size_t len;

	snprintf(buf, NAME_MAX_LEN, "%s", raw && *raw ? raw : "??");
	sanitize(buf);
	len = strlen(buf);
	/* the usual suffixes of perf's stackcollapse, which flame graph tools know */
	if (inlined)
		strcpy(buf + len, "_[i]");
	else if (kernel)
		strcpy(buf + len, "_[k]");
	return frame_intern(fl, buf, len, kind, inlined, kernel, module);
}

/* Frame ids of location `li`, root side (outermost inline frame) first, in *first and *n. */
static int loc_frames(struct flame *fl, uint32_t li, uint32_t *first, uint32_t *n)
{
	struct flame_priv *fp = fl->priv;
	const struct profile *p = fl->p;
	const struct prof_location *loc = &p->locations[li];
	const char *file = loc->mapping != PROF_NONE ? p->mappings[loc->mapping].file : NULL;
	bool kernel = profile__location_is_kernel(p, loc);
	const char *module = render__basename(file);
	uint32_t nl = loc->nlines ? loc->nlines : 1, j;
	char name[NAME_MAX_LEN];

	if (fp->loc_first[li] != FLAME_NONE)
		goto out;
	if (grow((void **)&fp->loc_ids, &fp->ids_cap, fp->nids + nl, sizeof(*fp->loc_ids)))
		return -ENOMEM;
	for (j = 0; j < nl; j++) {
		/* lines are innermost first: the root side is the last line */
		uint32_t line = nl - 1 - j, id;
		enum flame_kind kind = FLAME_UNKNOWN;
		bool inlined = false, alloc = false;

		profile__frame_name(p, loc, line, name, sizeof(name));
		if (profile__location_is_synthetic(loc)) {
			kind = FLAME_SYNTHETIC;
		} else if (loc->nlines) {
			const struct prof_function *f = &p->functions[loc->lines[line].function];

			kind = FLAME_USER;
			inlined = line + 1 < loc->nlines;
			alloc = render__is_allocator(f->name);
		}
		id = frame_named(fl, name, kind, inlined, kernel, module);
		if (id == FLAME_NONE)
			return -ENOMEM;
		if (alloc)
			fl->frames[id].allocator = true;
		fp->loc_ids[fp->nids + j] = id;
	}
	fp->loc_first[li] = fp->nids;
	fp->loc_n[li] = nl;
	fp->nids += nl;
out:
	*first = fp->loc_first[li];
	*n = fp->loc_n[li];
	return 0;
}

static uint32_t process_frame(struct flame *fl, uint32_t pid)
{
	struct flame_priv *fp = fl->priv;
	const struct prof_process *proc;
	char name[512];

	if (fp->last_pid_frame != FLAME_NONE && fp->last_pid == pid)
		return fp->last_pid_frame;
	proc = profile__find_process(fl->p, pid);
	/* the pid keeps two processes of one name apart, and exec'd children from parents */
	snprintf(name, sizeof(name), "%s (%" PRIu32 ")",
		 proc && proc->comm && *proc->comm ? proc->comm : "[unknown]", pid);
	fp->last_pid = pid;
	fp->last_pid_frame = frame_named(fl, name, FLAME_PROCESS, false, false, NULL);
	return fp->last_pid_frame;
}

static int node_rehash(struct flame *fl)
{
	struct flame_priv *fp = fl->priv;
	uint32_t cap = fp->node_cap ? fp->node_cap * 2 : 1024, i;
	struct node_slot *t;

	if (cap < fp->node_cap)
		return -ENOMEM;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < fp->node_cap; i++) {
		uint32_t h;

		if (!fp->node_hash[i].key)
			continue;
		h = (uint32_t)util_hash_u64(fp->node_hash[i].key) & (cap - 1);
		while (t[h].key)
			h = (h + 1) & (cap - 1);
		t[h] = fp->node_hash[i];
	}
	free(fp->node_hash);
	fp->node_hash = t;
	fp->node_cap = cap;
	return 0;
}

static uint32_t new_node(struct flame *fl, uint32_t parent, uint32_t frame)
{
	struct flame_priv *fp = fl->priv;
	struct flame_node *n;

	if (fl->nnodes == FLAME_NONE - 1 ||
	    grow((void **)&fl->nodes, &fp->nodes_cap, fl->nnodes + 1, sizeof(*fl->nodes)))
		return FLAME_NONE;
	n = &fl->nodes[fl->nnodes];
	*n = (struct flame_node){ .frame = frame, .parent = parent, .child = FLAME_NONE,
				  .next = FLAME_NONE };
	if (parent != FLAME_NONE) {
		/* prepended here, put in name order once the tree is complete */
		n->next = fl->nodes[parent].child;
		fl->nodes[parent].child = fl->nnodes;
	}
	return fl->nnodes++;
}

static uint32_t child(struct flame *fl, uint32_t parent, uint32_t frame)
{
	struct flame_priv *fp = fl->priv;
	/* + 1: node 0's child of frame 0 would be key 0, which marks a free slot */
	uint64_t key = ((uint64_t)parent << 32 | frame) + 1;
	uint32_t h, n;

	if (frame == FLAME_NONE)
		return FLAME_NONE;
	if ((fl->nnodes + 1) * 2 > fp->node_cap && node_rehash(fl))
		return FLAME_NONE;
	h = (uint32_t)util_hash_u64(key) & (fp->node_cap - 1);
	while (fp->node_hash[h].key) {
		if (fp->node_hash[h].key == key)
			return fp->node_hash[h].node;
		h = (h + 1) & (fp->node_cap - 1);
	}
	n = new_node(fl, parent, frame);
	if (n == FLAME_NONE)
		return FLAME_NONE;
	fp->node_hash[h] = (struct node_slot){ .key = key, .node = n };
	return n;
}

/*
 * The allocator frames of a stack are the run of allocator functions at its leaf end (malloc, or
 * xmalloc then malloc): by name alone, glibc's "__libc_" prefix would also take
 * __libc_start_call_main at the root end for one. The stack's frames are named already.
 */
static void mark_allocators(struct flame *fl, const struct prof_sample *s)
{
	struct flame_priv *fp = fl->priv;
	uint32_t i, j;

	for (i = 0; i < s->nlocs; i++) {
		uint32_t first = fp->loc_first[s->locs[i]];

		/* root side first within a location: the leaf end is the last */
		for (j = fp->loc_n[s->locs[i]]; j-- > 0;) {
			struct flame_frame *fr = &fl->frames[fp->loc_ids[first + j]];

			if (!fr->allocator)
				return;
			fr->kind = FLAME_ALLOC;
		}
	}
}

static int add_sample(struct flame *fl, const struct prof_sample *s, uint64_t v, uint32_t *leaf)
{
	struct flame_priv *fp = fl->priv;
	uint32_t node = 0, i, j, first, n, depth = fp->merged ? 0 : 1;
	int err;

	if (!fp->merged)
		node = child(fl, 0, process_frame(fl, s->pid));
	if (node == FLAME_NONE)
		return -ENOMEM;
	if (!s->nlocs) {
		/* say so rather than credit the bytes to the process itself */
		node = child(fl, node, fp->lost_frame);
		depth++;
	}
	for (i = s->nlocs; i-- > 0 && node != FLAME_NONE;) {
		err = loc_frames(fl, s->locs[i], &first, &n);
		if (err)
			return err;
		for (j = 0; j < n && node != FLAME_NONE; j++, depth++)
			node = child(fl, node, fp->loc_ids[first + j]);
	}
	if (node == FLAME_NONE)
		return -ENOMEM;
	mark_allocators(fl, s);
	if (!fl->nodes[node].self)
		fl->nstacks++;
	fl->nodes[node].self += v;
	*leaf = node;
	if (depth > fl->max_depth)
		fl->max_depth = depth;
	return 0;
}

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct flame *fl = arg;
	const struct flame_node *x = &fl->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &fl->nodes[*(const uint32_t *)b];

	/* siblings have distinct frames, and frames distinct names: a total order */
	return strcmp(fl->frames[x->frame].name, fl->frames[y->frame].name);
}

/* Totals bottom-up (a child's index is above its parent's), children in name order, so both
 * renderers are deterministic whatever the order of the samples. */
static int finish(struct flame *fl)
{
	uint32_t *tmp = NULL, cap = 0, i, k, c;

	for (i = 0; i < fl->nnodes; i++)
		fl->nodes[i].total = fl->nodes[i].self;
	for (i = fl->nnodes; i-- > 1;)
		fl->nodes[fl->nodes[i].parent].total += fl->nodes[i].total;
	for (i = 0; i < fl->nnodes; i++) {
		struct flame_node *n = &fl->nodes[i];

		if (n->child == FLAME_NONE || fl->nodes[n->child].next == FLAME_NONE)
			continue;
		for (k = 0, c = n->child; c != FLAME_NONE; c = fl->nodes[c].next, k++) {
			if (grow((void **)&tmp, &cap, k + 1, sizeof(*tmp))) {
				free(tmp);
				return -ENOMEM;
			}
			tmp[k] = c;
		}
		qsort_r(tmp, k, sizeof(*tmp), cmp_nodes, fl);
		n->child = tmp[0];
		for (c = 0; c + 1 < k; c++)
			fl->nodes[tmp[c]].next = tmp[c + 1];
		fl->nodes[tmp[k - 1]].next = FLAME_NONE;
	}
	free(tmp);
	return 0;
}

struct flame *flame__new(const struct profile *p, const struct output_opts *o)
{
	struct flame_priv *fp;
	struct flame *fl;
	uint32_t i;
	int err = -ENOMEM;

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	fl = calloc(1, sizeof(*fl));
	fp = calloc(1, sizeof(*fp));
	if (!fl || !fp) {
		free(fl);
		free(fp);
		errno = ENOMEM;
		return NULL;
	}
	fl->p = p;
	fl->priv = fp;
	fp->last_pid_frame = FLAME_NONE;
	fp->merged = profile__is_diff(p);
	if (o && o->value_type) {
		fl->type = profile__type_index(p, o->value_type);
		if (fl->type < 0) {
			err = -EINVAL;
			goto fail;
		}
	} else {
		fl->type = p->ntypes ? (int)p->default_type : -1;
	}

	fp->loc_first = malloc(sizeof(*fp->loc_first) * (p->nlocations + 1));
	fp->loc_n = malloc(sizeof(*fp->loc_n) * (p->nlocations + 1));
	if (!fp->loc_first || !fp->loc_n)
		goto fail;
	memset(fp->loc_first, 0xff, sizeof(*fp->loc_first) * (p->nlocations + 1));
	fl->leaf = malloc(sizeof(*fl->leaf) * (p->nsamples + 1));
	if (!fl->leaf)
		goto fail;
	memset(fl->leaf, 0xff, sizeof(*fl->leaf) * (p->nsamples + 1));
	if (frame_intern(fl, "all", 3, FLAME_ROOT, false, false, NULL) == FLAME_NONE ||
	    new_node(fl, FLAME_NONE, 0) == FLAME_NONE)
		goto fail;
	fp->lost_frame = frame_named(fl, "[no stack]", FLAME_LOST, false, false, NULL);
	if (fp->lost_frame == FLAME_NONE)
		goto fail;

	for (i = 0; fl->type >= 0 && i < p->nsamples; i++) {
		int64_t v = p->samples[i].values[fl->type];

		/* nothing to draw for 0; a negative value (a diff) has no width either */
		if (v <= 0)
			continue;
		err = add_sample(fl, &p->samples[i], (uint64_t)v, &fl->leaf[i]);
		if (err)
			goto fail;
	}
	err = finish(fl);
	if (err)
		goto fail;
	return fl;
fail:
	flame__free(fl);
	errno = -err;
	return NULL;
}

void flame__free(struct flame *fl)
{
	struct flame_priv *fp;
	uint32_t i;

	if (!fl)
		return;
	fp = fl->priv;
	for (i = 0; i < fl->nframes; i++)
		free(fl->frames[i].name);
	free(fl->frames);
	free(fl->nodes);
	free(fl->leaf);
	if (fp) {
		free(fp->frame_hash);
		free(fp->node_hash);
		free(fp->loc_first);
		free(fp->loc_n);
		free(fp->loc_ids);
		free(fp);
	}
	free(fl);
}

const char *flame__amount(const struct flame *fl, uint64_t v, char *buf, size_t len)
{
	const char *unit = fl->type >= 0 ? fl->p->types[fl->type].unit : "count";
	char h[32];

	if (strcmp(unit, "bytes") == 0 && v >= 1024)
		snprintf(buf, len, "%s (%" PRIu64 " bytes)", render__bytes(v, h, sizeof(h)), v);
	else if (strcmp(unit, "bytes") == 0)
		snprintf(buf, len, "%s", render__bytes(v, h, sizeof(h)));
	else if (strcmp(unit, "nanoseconds") == 0)
		snprintf(buf, len, "%s", render__duration(v, h, sizeof(h)));
	else if (strcmp(unit, "count") == 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 " %s", v, unit);
	return buf;
}
