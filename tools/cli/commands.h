/* commands.h - the commands main.c dispatches to (one cmd_<name>.c each),
 * with their usage texts. Each returns an exit status (CLI_*). */
#ifndef WGNN_CLI_COMMANDS_H
#define WGNN_CLI_COMMANDS_H

#include "args.h"

extern const char k_usage_info[], k_usage_sdpa[], k_usage_rand[], k_usage_bench[], k_usage_demo[], k_usage_op[], k_usage_run[],
    k_usage_tokenize[], k_usage_generate[];

int cmd_info(const global_opts *g, int argc, char **argv);
int cmd_sdpa(const global_opts *g, int argc, char **argv);
int cmd_rand(const global_opts *g, int argc, char **argv);
int cmd_bench(const global_opts *g, int argc, char **argv);
int cmd_demo(const global_opts *g, int argc, char **argv);
int cmd_op(const global_opts *g, int argc, char **argv);
int cmd_run(const global_opts *g, int argc, char **argv);
int cmd_tokenize(const global_opts *g, int argc, char **argv);
int cmd_generate(const global_opts *g, int argc, char **argv);
/* `wgnn bench op ...`: argv starts after "op" */
int cmd_bench_op(const global_opts *g, int argc, char **argv);

#endif /* WGNN_CLI_COMMANDS_H */
