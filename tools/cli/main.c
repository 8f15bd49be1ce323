/* main.c - the command-line program: global options and the command table.
 *
 * Uses the public API (include/wgnn.h) only. Exit status: 0 success,
 * 1 runtime failure (GPU, file, a check the library made), 2 usage error,
 * 3 a --check comparison with the CPU reference failed.
 */
#include "args.h"
#include "commands.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char k_usage_main[] =
    "usage: wgnn [--adapter X] [--timeout-ms N] [--poll-us N] <command> [options]\n"
    "\n"
    "commands:\n"
    "  info     list the adapters, then the chosen one's limits and features\n"
    "  run      a vision encoder (ViT, SigLIP) from a Hugging Face folder on images\n"
    "  tokenize text to token ids and back with a Hugging Face tokenizer.json\n"
    "  generate text from a decoder LM folder (Qwen3, Qwen2, Llama), streamed\n"
    "  op       run one op of the table on .npy files (`wgnn op --list` lists them)\n"
    "  sdpa     scaled dot-product attention on .npy files\n"
    "  rand     write a float32 .npy of uniform random values\n"
    "  bench    time an op on random inputs (bench sdpa, bench op NAME)\n"
    "  demo     ViT-B/16 attention through each implementation, checked and timed\n"
    "  help [command]\n"
    "\n"
    "global options (before the command):\n"
    "  --adapter X       adapter index or case-insensitive name substring\n"
    "                    (default: $WGNN_ADAPTER, else the high-performance adapter)\n"
    "  --timeout-ms N    longest wait on the GPU, default (and 0) 60000 (600000 on a CPU adapter)\n"
    "  --poll-us N       a wait on the GPU polls for up to N us before it blocks: lower latency,\n"
    "                    a CPU core busy meanwhile (default 0: block; WGNN_WAIT_SPIN=N sets it)\n"
    "\n"
    "`wgnn <command> --help` describes a command.\n"
    "exit status: 0 ok, 1 failure, 2 usage error, 3 --check found a mismatch\n";

typedef int (*cmd_fn)(const global_opts *g, int argc, char **argv);

static const struct command {
    const char *name;
    const char *usage;
    cmd_fn run;
} k_commands[] = {
    {"info", k_usage_info, cmd_info},    {"op", k_usage_op, cmd_op},       {"sdpa", k_usage_sdpa, cmd_sdpa},
    {"rand", k_usage_rand, cmd_rand},    {"bench", k_usage_bench, cmd_bench}, {"demo", k_usage_demo, cmd_demo},
    {"run", k_usage_run, cmd_run},       {"tokenize", k_usage_tokenize, cmd_tokenize},
    {"generate", k_usage_generate, cmd_generate},
};

static const struct command *find_command(const char *name) {
    for (size_t i = 0; i < NSPECS(k_commands); i++)
        if (strcmp(k_commands[i].name, name) == 0) return &k_commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    install_signal_handlers();
    global_opts g = {NULL, 0, 0};
    const opt_spec specs[] = {
        {"--adapter", OPT_STR, &g.adapter, 0, 0, false},
        {"--timeout-ms", OPT_INT, &g.timeout_ms, 0, UINT32_MAX, false},
        {"--poll-us", OPT_INT, &g.poll_us, 0, 10000000, false},
    };
    int next = 0;
    parse_result pr = parse_opts(NULL, k_usage_main, specs, NSPECS(specs), argc - 1, argv + 1, true, &next);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    argc -= 1 + next;
    argv += 1 + next;
    if (argc < 1) return usage_error(NULL, k_usage_main, "missing command");
    if (strcmp(argv[0], "help") == 0) {
        if (argc < 2) {
            fputs(k_usage_main, stdout);
            return CLI_OK;
        }
        const struct command *c = find_command(argv[1]);
        if (!c) return usage_error(NULL, k_usage_main, "unknown command '%s'", argv[1]);
        fputs(c->usage, stdout);
        return CLI_OK;
    }
    const struct command *c = find_command(argv[0]);
    if (!c) return usage_error(NULL, k_usage_main, "unknown command '%s'", argv[0]);
    return c->run(&g, argc - 1, argv + 1);
}
