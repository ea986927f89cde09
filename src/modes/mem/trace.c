/* mem --trace: every counted call as a JSON line (docs/JSON.md, "The trace file").
 *
 * The kernel writes one struct mem_trace_event per call into a ring buffer without waking us;
 * the run loop's tick drains it. A call names its stack by hash; each (process, stack) is
 * written once, as a "stack" line, when the process is finalized (its mappings are still
 * there to symbolize it), or at the end with addresses only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "abi/mem.h"
#include "abi/stack.h"
#include "abi/unwind.h"
#include "core/probes.h"
#include "core/stacks.h"
#include "modes/mem/trace.h"
#include "output/json_writer.h"

static const char *const result_names[] = {
	[MEM_TRACE_OK] = "ok",
	[MEM_TRACE_FAILED] = "failed",
	[MEM_TRACE_FREED] = "freed",
	[MEM_TRACE_UNKNOWN] = "unknown",
	[MEM_TRACE_INHERITED] = "inherited",
};

/* A (process, stack) a record named; open addressing, never shrinks. */
struct seen {
	uint64_t stack;		/* 0: empty slot */
	uint32_t pid;
	bool written;
};

struct mem_trace {
	FILE *f;
	struct json_writer *w;
	struct ring_buffer *rb;
	int stacks_fd;
	uint64_t start_ns;
	uint64_t calls;
	struct seen *seen;
	uint32_t nseen, cap;	/* cap: a power of two */
};

static uint32_t seen_hash(uint32_t pid, uint64_t stack)
{
	uint64_t h = (stack ^ ((uint64_t)pid << 32 | pid)) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32);
}

static int seen_grow(struct mem_trace *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 1024;
	struct seen *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++) {
		uint32_t j;

		if (!t->seen[i].stack)
			continue;
		for (j = seen_hash(t->seen[i].pid, t->seen[i].stack) & (cap - 1); n[j].stack;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = t->seen[i];
	}
	free(t->seen);
	t->seen = n;
	t->cap = cap;
	return 0;
}

static void seen_add(struct mem_trace *t, uint32_t pid, uint64_t stack)
{
	uint32_t j;

	if (!stack)
		return;
	/* at most half full: probes stay short */
	if (2 * (t->nseen + 1) > t->cap && seen_grow(t))
		return;
	for (j = seen_hash(pid, stack) & (t->cap - 1); t->seen[j].stack; j = (j + 1) & (t->cap - 1))
		if (t->seen[j].stack == stack && t->seen[j].pid == pid)
			return;
	t->seen[j] = (struct seen){ .stack = stack, .pid = pid };
	t->nseen++;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct mem_trace *t = ctx;
	const struct mem_trace_event *e = data;
	struct json_writer *w = t->w;

	if (len < sizeof(*e))
		return 0;
	jsonw_start_object_flat(w);
	jsonw_string_field(w, "type", "call");
	jsonw_int_field(w, "t_ns", (int64_t)(e->ts - t->start_ns));
	jsonw_uint_field(w, "pid", e->pid);
	jsonw_uint_field(w, "tid", e->tid);
	jsonw_string_field(w, "function", e->fn < MEM_FN__COUNT ? mem_fn_names[e->fn] : "?");
	jsonw_uint_field(w, "size", e->size);
	jsonw_hex_field(w, "ptr", e->ptr);
	if (e->arg)
		jsonw_hex_field(w, "arg", e->arg);
	jsonw_string_field(w, "result", e->result <= MEM_TRACE_INHERITED ? result_names[e->result]
								       : "?");
	if (e->stack)
		jsonw_hex_field(w, "stack", e->stack);
	else
		jsonw_null_field(w, "stack");
	jsonw_end_object(w);
	jsonw__end_line(w);
	seen_add(t, e->pid, e->stack);
	t->calls++;
	return 0;
}

struct mem_trace *mem_trace__new(const char *path, int rb_fd, int stacks_fd, uint64_t start_ns)
{
	struct mem_trace *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->stacks_fd = stacks_fd;
	t->start_ns = start_ns;
	t->f = fopen(path, "w");
	if (!t->f)
		goto fail;
	t->w = jsonw__new(t->f, false);
	t->rb = ring_buffer__new(rb_fd, on_record, t, NULL);
	if (!t->w || !t->rb)
		goto fail;
	return t;
fail:
	err = errno ? errno : ENOMEM;
	mem_trace__free(t);
	errno = err;
	return NULL;
}

void mem_trace__set_start(struct mem_trace *t, uint64_t start_ns)
{
	if (t)
		t->start_ns = start_ns;
}

int mem_trace__poll(struct mem_trace *t)
{
	return t ? ring_buffer__consume(t->rb) : 0;
}

static void write_stack(struct mem_trace *t, const struct seen *s, struct sym_proc *sp)
{
	struct json_writer *w = t->w;
	struct mem_stack st;
	struct sym_result r;

	if (bpf_map_lookup_elem(t->stacks_fd, &s->stack, &st))
		st.nr = 0;
	jsonw_start_object_flat(w);
	jsonw_string_field(w, "type", "stack");
	jsonw_uint_field(w, "pid", s->pid);
	jsonw_hex_field(w, "id", s->stack);
	jsonw_name(w, "frames");
	jsonw_start_array_flat(w);
	for (uint32_t i = 0; i < st.nr && i < MEM_MAX_STACK; i++) {
		bool sym;

		if (stacks__is_end(st.ips[i])) {
			/* the walk ended before the outermost frame: said, as in the profile */
			jsonw_start_object_flat(w);
			jsonw_hex_field(w, "address", st.ips[i]);
			jsonw_string_field(w, "function", "[truncated]");
			jsonw_end_object(w);
			break;
		}
		/* every address is a return address (the first one too: the probe's caller's) */
		sym = sp && sym_proc__resolve(sp, st.ips[i], true, &r) == 0;

		for (uint32_t k = 0; k < (sym && r.nframes ? r.nframes : 1); k++) {
			jsonw_start_object_flat(w);
			jsonw_hex_field(w, "address", st.ips[i]);
			jsonw_string_field(w, "function", sym && r.nframes ? r.frames[k].function
									  : NULL);
			if (sym && r.nframes && r.frames[k].file) {
				jsonw_string_field(w, "file", r.frames[k].file);
				if (r.frames[k].line > 0)
					jsonw_uint_field(w, "line", r.frames[k].line);
			}
			if (sym && r.module)
				jsonw_string_field(w, "module", r.module);
			if (sym && r.nframes && r.frames[k].cfi_named)
				jsonw_bool_field(w, "cfi_named", true);
			jsonw_end_object(w);
		}
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
	jsonw__end_line(w);
}

void mem_trace__stacks(struct mem_trace *t, pid_t pid, struct sym_proc *sp)
{
	for (uint32_t i = 0; t && i < t->cap; i++) {
		struct seen *s = &t->seen[i];

		if (s->stack && !s->written && (pid < 0 || s->pid == (uint32_t)pid)) {
			write_stack(t, s, sp);
			s->written = true;
		}
	}
}

int mem_trace__finish(struct mem_trace *t, uint64_t dropped)
{
	if (!t)
		return 0;
	mem_trace__poll(t);
	mem_trace__stacks(t, -1, NULL);
	jsonw_start_object_flat(t->w);
	jsonw_string_field(t->w, "type", "end");
	jsonw_uint_field(t->w, "calls", t->calls);
	jsonw_uint_field(t->w, "dropped", dropped);
	jsonw_end_object(t->w);
	jsonw__end_line(t->w);
	return fflush(t->f) || ferror(t->f) || jsonw__error(t->w) ? -EIO : 0;
}

uint64_t mem_trace__calls(const struct mem_trace *t)
{
	return t ? t->calls : 0;
}

void mem_trace__free(struct mem_trace *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	jsonw__free(t->w);
	if (t->f)
		fclose(t->f);
	free(t->seen);
	free(t);
}
