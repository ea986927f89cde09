/* Subcommands of the ebprof binary. Each parses its own options; exit codes: 0 ok, 1 runtime
 * failure, 2 usage error (a launched command's own status passes through). */
#ifndef EBPROF_CLI_H
#define EBPROF_CLI_H

#include "core/log.h"

#define EBPROF_VERSION "0.1.0"

int cmd_mem(int argc, char **argv, struct log_ctx *lc);

#endif
