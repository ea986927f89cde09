/* Leveled logging. Verbosity lives in a context passed down, not in a global. */
#ifndef EBPROF_LOG_H
#define EBPROF_LOG_H

#include <stdbool.h>
#include <stdio.h>

struct log_ctx {
	int verbose;		/* 0 default, 1 -v, 2 -vv */
	const char *prog;	/* "ebprof" */
	bool silent;		/* nothing at all: a part whose failures its caller words (top) */
	/* the command the user ran when it parses other modes' options (profile, top, agent:
	 * cpu's -F), so that their usage errors point to its --help; NULL: the mode's own */
	const char *cmd;
};

void log_print(const struct log_ctx *lc, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define LOG_ERR   -2
#define LOG_WARN  -1
#define LOG_INFO   1
#define LOG_DEBUG  2

#define pr_err(lc, ...)   log_print(lc, LOG_ERR, __VA_ARGS__)
#define pr_warn(lc, ...)  log_print(lc, LOG_WARN, __VA_ARGS__)
#define pr_info(lc, ...)  log_print(lc, LOG_INFO, __VA_ARGS__)
#define pr_debug(lc, ...) log_print(lc, LOG_DEBUG, __VA_ARGS__)

#endif
