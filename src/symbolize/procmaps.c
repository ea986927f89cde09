/* Parser for the text of /proc/PID/maps: one sym_map per line, with the path split from its
 * " (deleted)" suffix and classified (file, anonymous, special such as [vdso] or [heap]).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_internal.h"

static const char DELETED_SUFFIX[] = " (deleted)";

/* Parse a hex number and require the expected separator after it. */
static bool parse_hex(const char **pp, const char *end, char sep, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (p < end) {
		char c = *p;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		v = (v << 4) | (uint64_t)d;
		p++;
		n++;
	}
	if (!n || n > 16 || p >= end || *p != sep)
		return false;
	*pp = p + 1;
	*out = v;
	return true;
}

static bool parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
		n++;
	}
	if (!n)
		return false;
	*pp = p;
	*out = v;
	return true;
}

/* The path as the file system has it: the kernel writes a newline in a name as "\\012" (and
 * nothing else escaped, not even a backslash), which no open would find (a binary whose path
 * held one was never symbolized). A name holding "\\012" itself reads as a newline: the text
 * cannot tell them apart. */
static char *unescape_path(const char *p, size_t len)
{
	char *out = malloc(len + 1), *q = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\\' && len - i >= 4 && !memcmp(p + i + 1, "012", 3)) {
			*q++ = '\n';
			i += 3;
			continue;
		}
		*q++ = p[i];
	}
	*q = '\0';
	return out;
}

static int parse_line(const char *p, const char *end, struct sym_map *m)
{
	uint64_t maj, min, inode;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&p, end, '-', &m->start) || !parse_hex(&p, end, ' ', &m->end))
		return -EINVAL;
	if (end - p < 5 || p[4] != ' ')
		return -EINVAL;
	memcpy(m->perms, p, 4);
	m->perms[4] = '\0';
	p += 5;
	if (!parse_hex(&p, end, ' ', &m->offset) || !parse_hex(&p, end, ':', &maj) ||
	    !parse_hex(&p, end, ' ', &min) || !parse_dec(&p, end, &inode))
		return -EINVAL;
	if (m->end <= m->start)
		return -EINVAL;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	m->inode = inode;

	/* The path is everything after the padding, spaces included. */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	len = (size_t)(end - p);
	if (!len) {
		m->kind = SYM_MAP_ANON;
		return 0;
	}
	if (len > sizeof(DELETED_SUFFIX) - 1 &&
	    memcmp(p + len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		   sizeof(DELETED_SUFFIX) - 1) == 0) {
		m->deleted = true;
		len -= sizeof(DELETED_SUFFIX) - 1;
	}
	/* Only absolute paths name files we could open; "[heap]", "anon_inode:..." do not. */
	m->kind = p[0] == '/' ? SYM_MAP_FILE : SYM_MAP_SPECIAL;
	m->path = unescape_path(p, len);
	return m->path ? 0 : -ENOMEM;
}

int sym_maps__parse(const char *text, struct sym_map **mapsp, size_t *nmapsp)
{
	struct sym_map *maps = NULL;
	size_t n = 0, cap = 0;
	const char *p = text;
	int err = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		struct sym_map m;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct sym_map *nmaps = realloc(maps, ncap * sizeof(*maps));

			if (!nmaps) {
				err = -ENOMEM;
				goto out;
			}
			maps = nmaps;
			cap = ncap;
		}
		err = parse_line(p, end, &m);
		if (err == -ENOMEM)
			goto out;
		if (!err)
			maps[n++] = m;
		err = 0;
		p = eol ? eol + 1 : end;
	}
out:
	if (err) {
		sym_maps__free(maps, n);
		return err;
	}
	*mapsp = maps;
	*nmapsp = n;
	return 0;
}

void sym_maps__free(struct sym_map *maps, size_t nmaps)
{
	for (size_t i = 0; maps && i < nmaps; i++)
		free(maps[i].path);
	free(maps);
}
