/* A minimal protocol-buffers encoder into a growable memory buffer: just what pprof needs
 * (varints, length-delimited fields, nested messages, packed repeated varints).
 *
 * Nested messages are written in place: pb_open() marks the start, the fields follow, and
 * pb_close() moves them up to make room for the tag and length, which are only known at the end.
 * The moves are bounded by the size of each nested message, which for pprof is small.
 * Errors are sticky: after an allocation failure every call is a no-op and pb.err is -ENOMEM.
 */
#ifndef EBPROF_OUTPUT_PB_H
#define EBPROF_OUTPUT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *buf;
	size_t len, cap;
	int err;
};

void pb__free(struct pb *b);

void pb_varint(struct pb *b, uint64_t v);
/* Field encoders. Zero scalars are omitted, as proto3 does: they decode as the default. */
void pb_uint64(struct pb *b, uint32_t field, uint64_t v);
void pb_int64(struct pb *b, uint32_t field, int64_t v);
void pb_bool(struct pb *b, uint32_t field, bool v);
void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len);	/* always written */

/* A nested message or a packed repeated field: mark, write the contents, close with its field
 * number. */
size_t pb_open(struct pb *b);
void pb_close(struct pb *b, uint32_t field, size_t mark);

#endif
