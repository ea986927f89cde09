/* Leveled logging to stderr: errors and warnings always, -v info, -vv debug. */
#include <stdarg.h>
#include "core/log.h"

void log_print(const struct log_ctx *lc, int level, const char *fmt, ...)
{
	va_list ap;

	if ((level > 0 && (!lc || lc->verbose < level)) || (lc && lc->silent))
		return;
	/* one line at a time: the agent's sender thread logs too */
	flockfile(stderr);
	fprintf(stderr, "%s: ", lc && lc->prog ? lc->prog : "ebprof");
	if (level == LOG_WARN)
		fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
