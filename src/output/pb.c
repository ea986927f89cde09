/* Protocol-buffers encoding; see pb.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pb.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void pb__free(struct pb *b)
{
	free(b->buf);
	*b = (struct pb){};
}

static bool reserve(struct pb *b, size_t n)
{
	size_t cap;
	uint8_t *q;

	if (b->err)
		return false;
	if (b->cap - b->len >= n)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2)
			goto nomem;
		cap *= 2;
	}
	q = realloc(b->buf, cap);
	if (!q)
		goto nomem;
	b->buf = q;
	b->cap = cap;
	return true;
nomem:
	b->err = -ENOMEM;
	return false;
}

static size_t varint_enc(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pb_varint(struct pb *b, uint64_t v)
{
	if (reserve(b, 10))
		b->len += varint_enc(b->buf + b->len, v);
}

static void key(struct pb *b, uint32_t field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint64(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	key(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

void pb_int64(struct pb *b, uint32_t field, int64_t v)
{
	/* int64 (not sint64): negatives are ten-byte two's complement varints */
	pb_uint64(b, field, (uint64_t)v);
}

void pb_bool(struct pb *b, uint32_t field, bool v)
{
	pb_uint64(b, field, v);
}

void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len)
{
	key(b, field, WIRE_LEN);
	pb_varint(b, len);
	if (len && reserve(b, len)) {
		memcpy(b->buf + b->len, data, len);
		b->len += len;
	}
}

size_t pb_open(struct pb *b)
{
	return b->len;
}

void pb_close(struct pb *b, uint32_t field, size_t mark)
{
	uint8_t head[20];
	size_t n, body;

	if (b->err)
		return;
	body = b->len - mark;
	n = varint_enc(head, (uint64_t)field << 3 | WIRE_LEN);
	n += varint_enc(head + n, body);
	if (!reserve(b, n))
		return;
	memmove(b->buf + mark + n, b->buf + mark, body);
	memcpy(b->buf + mark, head, n);
	b->len += n;
}
