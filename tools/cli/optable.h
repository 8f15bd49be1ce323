/* optable.h - the op table (include/wgnn.h, "Ops by name") as `wgnn op` and
 * `wgnn bench op` see it: lookup, the --list and --help texts, the command
 * line checked against a row, and the --check comparison. Nothing here
 * names an op: a row added to the library shows up by itself. */
#ifndef WGNN_CLI_OPTABLE_H
#define WGNN_CLI_OPTABLE_H

#include "args.h"

/* --check tolerances per output dtype: |gpu - ref| <= ATOL + RTOL * |ref|
 * (int32: equal). NaN matches NaN, an infinity only the same infinity. */
#define OP_ATOL_F32 1e-4
#define OP_RTOL_F32 1e-3
#define OP_ATOL_F16 2e-3
#define OP_RTOL_F16 2e-3

/* The row named name; when there is none, prints the one line
 * "wgnn: unknown op "x" (`wgnn op --list` lists the ops)" and gives NULL. */
const wgnn_op_info *op_lookup(const char *name);

/* Every row: the name alone on a line, then its summary, inputs and
 * arguments (type, default) indented; a blank line between rows. */
void op_print_list(FILE *f);
/* One row in full: usage (usage_fmt with the op's name for %s), summary,
 * inputs, shape rules, every argument with its type, default and help. */
void op_print_help(FILE *f, const wgnn_op_info *info, const char *usage_fmt);
/* The row's help as a malloc'd string (NULL when out of memory). */
char *op_help_text(const wgnn_op_info *info, const char *usage_fmt);

/* The command line against the row, before any file is opened: n_in within
 * the row's input counts (in_opt names the option, "--in"), every --arg of
 * the form KEY=VALUE with a key of the row given once, every required key
 * given. Values are left to wgnn_op_shapes. On a mismatch prints one line
 * and returns CLI_USAGE. */
int op_check_usage(const char *cmd, const wgnn_op_info *info, int n_in, const char *in_opt, const str_list *args);

uint64_t desc_numel(const wgnn_desc *d);
uint64_t desc_nbytes(const wgnn_desc *d);
/* "float32 [2,3]" */
void desc_str(const wgnn_desc *d, char *buf, size_t cap);
/* {"dtype":"float32","shape":[2,3]} on stdout */
void desc_json(const wgnn_desc *d);

typedef struct op_cmp {
    double max_abs;  /* NaN when a NaN met a number; inf when an infinity did not match */
    uint64_t n_bad;
    double atol, rtol;
    bool pass;
} op_cmp;

/* Runs wgnn_op_ref on the host inputs and compares each GPU output got[i]
 * (host copies, laid out as their descs) with it, into r[i]; with f, prints
 * one line per output ("check: LABEL: ... PASS") naming it by label[i].
 * Returns CLI_OK (mismatches are in r) or CLI_FAIL with err. */
int op_check(const char *op, const wgnn_host_tensor *in, int n_in, const str_list *args,
             const wgnn_host_tensor *got, int n_out, const char *const *label, FILE *f, op_cmp *r, char *err);

#endif /* WGNN_CLI_OPTABLE_H */
