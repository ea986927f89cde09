/* Subcommands of the ebprof binary. Each parses its own options; exit codes: 0 ok, 1 runtime
 * failure, 2 usage error (a launched command's own status passes through). */
#ifndef EBPROF_CLI_H
#define EBPROF_CLI_H

#include "core/log.h"

#define EBPROF_VERSION "0.1.0"

int cmd_mem(int argc, char **argv, struct log_ctx *lc);
int cmd_cpu(int argc, char **argv, struct log_ctx *lc);
int cmd_stacks(int argc, char **argv, struct log_ctx *lc);
int cmd_kmem(int argc, char **argv, struct log_ctx *lc);
int cmd_io(int argc, char **argv, struct log_ctx *lc);
int cmd_top(int argc, char **argv, struct log_ctx *lc);
int cmd_agent(int argc, char **argv, struct log_ctx *lc);
int cmd_lock(int argc, char **argv, struct log_ctx *lc);
int cmd_profile(int argc, char **argv, struct log_ctx *lc);
int cmd_offcpu(int argc, char **argv, struct log_ctx *lc);
int cmd_report(int argc, char **argv, struct log_ctx *lc);
int cmd_diff(int argc, char **argv, struct log_ctx *lc);

/* The recording modes (cli/options.h), for `ebprof profile` */
struct mode_def;
extern const struct mode_def mem_def, cpu_def, stacks_def, kmem_def, io_def, lock_def;
extern const struct mode_def offcpu_def;

struct profile;
struct output_opts;

/* Shared by report and diff (cmd_report.c). Load a pprof file, or say why not and return NULL. */
struct profile *cli_load_profile(const struct log_ctx *lc, const char *path);
/* "alloc_objects, alloc_space, ..." (or "none"), for messages. */
const char *cli_type_list(const struct profile *p, char *buf, size_t len);
#endif
