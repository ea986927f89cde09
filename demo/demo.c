/* demo: the program `make demo` profiles. A toy request-log analyzer, small enough to read in
 * a minute, whose memory behaviour has a story a profile should tell:
 *
 *   - every request is parsed into heap-allocated fields and freed again (churn: many
 *     allocations, nothing outstanding);
 *   - body words are counted in a hash table that grows by rehashing until the vocabulary is
 *     known, then stays flat (growth, then a plateau);
 *   - rendered per-user summaries live in a fixed-size LRU cache (a plateau with steady churn);
 *   - parse_header_leaky() forgets a copy of every X-Debug header it sees: the leak (12 blocks).
 *
 * Deterministic (its own PRNG, fixed seed); about a second of CPU untraced. Prints the top
 * words and the cache hit rate.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORDS		60000
#define WORDS_PER_BODY	400
#define USERS		3000
#define CACHE_SLOTS	256
#define DEBUG_EVERY	5000	/* one request in DEBUG_EVERY carries an X-Debug header */

static uint32_t rng_state = 2463534242u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* A skewed pick in [0, n): small values are much more likely (word and user popularity). */
static uint32_t skewed(uint32_t n)
{
	return (uint32_t)((uint64_t)(rng() % n) * (rng() % n) / n);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "demo: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* ---- generating the input: one request as text in a caller-owned buffer ---- */

static const char *const syllables[] = {
	"ka", "lo", "mi", "ne", "ro", "tu", "sa", "vi", "de", "po", "ri", "xa", "ze", "lu", "bo", "te",
};
#define NSYL (sizeof(syllables) / sizeof(syllables[0]))

static size_t gen_word(char *out)
{
	uint32_t w = skewed(NSYL * NSYL * NSYL);
	size_t len = 0;

	for (int k = 0; k < 3; k++, w /= NSYL) {
		memcpy(out + len, syllables[w % NSYL], 2);
		len += 2;
		if (w < NSYL)
			break;
	}
	return len;
}

static size_t gen_request(char *buf, unsigned seq)
{
	size_t len = sprintf(buf, "GET /items/%u HTTP/1.1\nHost: shop%u.example\nUser: %u\n",
			     rng() % 10000, rng() % 8, skewed(USERS));

	if (seq % DEBUG_EVERY == 17)
		len += sprintf(buf + len, "X-Debug: trace-%08x-verbose\n", rng());
	buf[len++] = '\n';
	for (int i = 0; i < WORDS_PER_BODY; i++) {
		len += gen_word(buf + len);
		buf[len++] = ' ';
	}
	buf[len] = '\0';
	return len;
}

/* ---- parsing: a request becomes a heap object, freed after handling ---- */

struct header {
	char *name;
	char *value;
	struct header *next;
};

struct request {
	char *method;
	char *path;
	struct header *headers;
	const char *body;	/* points into the input */
};

static char *debug_notes_seen;	/* only the newest; the older ones are lost */

static struct header *parse_header_leaky(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	struct header *h;

	if (!colon)
		return NULL;
	h = xmalloc(sizeof(*h));
	h->name = xstrndup(line, colon - line);
	h->value = xstrndup(colon + 2, len - (colon + 2 - line));
	h->next = NULL;
	/* The bug: a copy for a debug log that nobody ever frees. */
	if (!strcmp(h->name, "X-Debug"))
		debug_notes_seen = xstrndup(h->value, strlen(h->value));
	return h;
}

static struct request *parse_request(const char *text)
{
	struct request *r = xmalloc(sizeof(*r));
	const char *p = text, *sp1, *sp2, *nl;
	struct header **tail = &r->headers;

	nl = strchr(p, '\n');
	sp1 = memchr(p, ' ', nl - p);
	sp2 = memchr(sp1 + 1, ' ', nl - sp1 - 1);
	r->method = xstrndup(p, sp1 - p);
	r->path = xstrndup(sp1 + 1, sp2 - sp1 - 1);
	r->headers = NULL;
	for (p = nl + 1; *p != '\n'; p = nl + 1) {
		nl = strchr(p, '\n');
		*tail = parse_header_leaky(p, nl - p);
		if (*tail)
			tail = &(*tail)->next;
	}
	r->body = p + 1;
	return r;
}

static void free_request(struct request *r)
{
	struct header *h, *next;

	for (h = r->headers; h; h = next) {
		next = h->next;
		free(h->name);
		free(h->value);
		free(h);
	}
	free(r->method);
	free(r->path);
	free(r);
}

static const char *header_value(const struct request *r, const char *name)
{
	for (const struct header *h = r->headers; h; h = h->next)
		if (!strcmp(h->name, name))
			return h->value;
	return NULL;
}

/* ---- word counting: a chained hash table that doubles when it gets crowded ---- */

struct word {
	char *text;
	unsigned long count;
	struct word *next;
};

static struct word **buckets;
static size_t nbuckets, nwords;

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void word_table_grow(void)
{
	size_t n = nbuckets ? nbuckets * 2 : 64;
	struct word **nb = calloc(n, sizeof(*nb));

	if (!nb)
		exit(1);
	for (size_t i = 0; i < nbuckets; i++) {
		struct word *w, *next;

		for (w = buckets[i]; w; w = next) {
			size_t j = hash(w->text, strlen(w->text)) & (n - 1);

			next = w->next;
			w->next = nb[j];
			nb[j] = w;
		}
	}
	free(buckets);
	buckets = nb;
	nbuckets = n;
}

static void word_table_add(const char *s, size_t n)
{
	size_t i;
	struct word *w;

	if (nwords + 1 > nbuckets)
		word_table_grow();
	i = hash(s, n) & (nbuckets - 1);
	for (w = buckets[i]; w; w = w->next)
		if (!strncmp(w->text, s, n) && w->text[n] == '\0') {
			w->count++;
			return;
		}
	w = xmalloc(sizeof(*w));
	w->text = xstrndup(s, n);
	w->count = 1;
	w->next = buckets[i];
	buckets[i] = w;
	nwords++;
}

static void index_body(const char *body)
{
	const char *p = body;

	while (*p) {
		const char *end = strchr(p, ' ');

		if (!end)
			end = p + strlen(p);
		if (end > p)
			word_table_add(p, end - p);
		p = *end ? end + 1 : end;
	}
}

/* ---- an LRU cache of rendered user summaries: fixed size, so it plateaus ---- */

struct entry {
	unsigned user;
	char *summary;
	struct entry *prev, *next;	/* LRU list, most recent first */
};

static struct entry *cache_slot[CACHE_SLOTS * 2];	/* open addressing on user id */
static struct entry *lru_head, *lru_tail;
static unsigned cache_used, cache_hits, cache_misses;

static char *render_summary(unsigned user, const struct request *r)
{
	char tmp[256];
	int n = snprintf(tmp, sizeof(tmp), "user %u: last %s %s via %s, tier %s", user, r->method,
			 r->path, header_value(r, "Host"),
			 user % 7 == 0 ? "gold (a long description of benefits and limits)" :
			 "basic");

	return xstrndup(tmp, n);
}

static void lru_unlink(struct entry *e)
{
	*(e->prev ? &e->prev->next : &lru_head) = e->next;
	*(e->next ? &e->next->prev : &lru_tail) = e->prev;
}

static void lru_push(struct entry *e)
{
	e->prev = NULL;
	e->next = lru_head;
	*(lru_head ? &lru_head->prev : &lru_tail) = e;
	lru_head = e;
}

static size_t slot_of(unsigned user)
{
	size_t i = (user * 2654435761u) % (CACHE_SLOTS * 2);

	while (cache_slot[i] && cache_slot[i]->user != user)
		i = (i + 1) % (CACHE_SLOTS * 2);
	return i;
}

static void cache_evict_oldest(void)
{
	struct entry *e = lru_tail;
	size_t i = slot_of(e->user), j;

	lru_unlink(e);
	cache_slot[i] = NULL;
	/* re-place the entries after the hole so lookups still find them */
	for (j = (i + 1) % (CACHE_SLOTS * 2); cache_slot[j]; j = (j + 1) % (CACHE_SLOTS * 2)) {
		struct entry *m = cache_slot[j];

		cache_slot[j] = NULL;
		cache_slot[slot_of(m->user)] = m;
	}
	free(e->summary);
	free(e);
	cache_used--;
}

static const char *cache_get_or_render(unsigned user, const struct request *r)
{
	size_t i = slot_of(user);
	struct entry *e = cache_slot[i];

	if (e) {
		cache_hits++;
		lru_unlink(e);
		lru_push(e);
		return e->summary;
	}
	cache_misses++;
	if (cache_used == CACHE_SLOTS) {
		cache_evict_oldest();
		i = slot_of(user);
	}
	e = xmalloc(sizeof(*e));
	e->user = user;
	e->summary = render_summary(user, r);
	cache_slot[i] = e;
	lru_push(e);
	cache_used++;
	return e->summary;
}

/* ---- the driver ---- */

static unsigned long summary_bytes;

static void handle_request(const char *text)
{
	struct request *r = parse_request(text);
	const char *user = header_value(r, "User");

	index_body(r->body);
	if (user)
		summary_bytes += strlen(cache_get_or_render((unsigned)atoi(user), r));
	free_request(r);
}

static void process_log(unsigned records)
{
	char buf[8192];	/* a request is at most ~3.2 KB */

	for (unsigned seq = 0; seq < records; seq++) {
		gen_request(buf, seq);
		handle_request(buf);
	}
}

static int by_count(const void *a, const void *b)
{
	const struct word *x = *(struct word *const *)a, *y = *(struct word *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

static void report_top_words(int top)
{
	struct word **all = xmalloc(nwords * sizeof(*all));
	size_t n = 0;

	for (size_t i = 0; i < nbuckets; i++)
		for (struct word *w = buckets[i]; w; w = w->next)
			all[n++] = w;
	qsort(all, n, sizeof(*all), by_count);
	printf("%zu distinct words; top %d:\n", n, top);
	for (int i = 0; i < top && (size_t)i < n; i++)
		printf("  %-8s %lu\n", all[i]->text, all[i]->count);
	free(all);
}

static void free_everything(void)
{
	for (size_t i = 0; i < nbuckets; i++) {
		struct word *w, *next;

		for (w = buckets[i]; w; w = next) {
			next = w->next;
			free(w->text);
			free(w);
		}
	}
	free(buckets);
	while (lru_tail)
		cache_evict_oldest();
}

int main(void)
{
	/* A static stdout buffer, so the only blocks left at exit are the program's own leaks. */
	static char outbuf[8192];

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	process_log(RECORDS);
	printf("demo: %u requests, cache %u hits / %u misses, %lu summary bytes served\n",
	       RECORDS, cache_hits, cache_misses, summary_bytes);
	report_top_words(5);
	printf("last debug note: %s\n", debug_notes_seen ? debug_notes_seen : "(none)");
	free_everything();
	return 0;
}
