/* The options every recording mode shares, parsed in one place (see options.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

int cli_usage_err(const struct log_ctx *lc, const char *mode, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", lc->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ebprof %s --help'.\n", mode);
	return 2;
}
