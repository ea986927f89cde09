/* A small streaming JSON writer: every JSON the project emits goes through it, so escaping and
 * layout are decided in one place.
 *
 * Strings are escaped per RFC 8259; bytes that are not valid UTF-8 (comm is cut at 15 bytes, maybe
 * inside a character) become U+FFFD so the output always parses. Pretty mode indents by two
 * spaces; a "flat" container is laid out on one line, which keeps small records such as stack
 * frames readable. Misuse (a value without a name inside an object, unbalanced ends, nesting too
 * deep) is recorded as -EINVAL and nothing more is written.
 */
#ifndef EBPROF_JSON_WRITER_H
#define EBPROF_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

/* NULL and errno set on failure. */
struct json_writer *jsonw__new(FILE *f, bool pretty);
void jsonw__free(struct json_writer *w);
/* 0, or the first error: -EINVAL for misuse, -EIO when the stream failed. */
int jsonw__error(const struct json_writer *w);
/* JSON Lines: end the top-level value (it must be complete) with a newline; another may follow. */
void jsonw__end_line(struct json_writer *w);

void jsonw_start_object(struct json_writer *w);
void jsonw_start_array(struct json_writer *w);
/* One-line containers in pretty mode; everything nested inside is one-line too. */
void jsonw_start_object_flat(struct json_writer *w);
void jsonw_start_array_flat(struct json_writer *w);
void jsonw_end_object(struct json_writer *w);
void jsonw_end_array(struct json_writer *w);

/* The name of the next member of the current object. */
void jsonw_name(struct json_writer *w, const char *name);

void jsonw_string(struct json_writer *w, const char *s);	/* NULL writes null */
void jsonw_uint(struct json_writer *w, uint64_t v);
void jsonw_int(struct json_writer *w, int64_t v);
void jsonw_bool(struct json_writer *w, bool v);
void jsonw_null(struct json_writer *w);
void jsonw_hex(struct json_writer *w, uint64_t v);		/* "0x1a2b" */

/* name + value */
void jsonw_string_field(struct json_writer *w, const char *name, const char *s);
void jsonw_uint_field(struct json_writer *w, const char *name, uint64_t v);
void jsonw_int_field(struct json_writer *w, const char *name, int64_t v);
void jsonw_bool_field(struct json_writer *w, const char *name, bool v);
void jsonw_null_field(struct json_writer *w, const char *name);
void jsonw_hex_field(struct json_writer *w, const char *name, uint64_t v);

/* Write s as a JSON string literal (quotes included). Exposed for tests and one-off use. */
void jsonw_escape(FILE *f, const char *s);

#endif
