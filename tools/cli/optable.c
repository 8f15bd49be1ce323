/* optable.c - the op table as the CLI sees it; see optable.h. */
#include "optable.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const wgnn_op_info *op_lookup(const char *name) {
    const wgnn_op_info *info = wgnn_op_find(name);
    if (!info) fprintf(stderr, "wgnn: unknown op \"%s\" (`wgnn op --list` lists the ops)\n", name);
    return info;
}

/* ---- --list and --help ----------------------------------------------------- */

#define WRAP_COLS 100

/* Prints label padded to indent columns, then text wrapped at WRAP_COLS with
 * continuation lines indented as far. A word longer than a line stays whole. */
static void print_wrapped(FILE *f, int indent, const char *label, const char *text) {
    int col = fprintf(f, "%-*s", indent, label);
    if (label[0] && (int)strlen(label) >= indent) {
        fputc('\n', f);
        col = fprintf(f, "%*s", indent, "");
    }
    bool first = true;
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t len = strcspn(p, " ");
        if (!first && col + 1 + (int)len > WRAP_COLS) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            first = true;
        }
        col += fprintf(f, "%s%.*s", first ? "" : " ", (int)len, p);
        first = false;
        p += len;
    }
    fputc('\n', f);
}

/* "(float, optional)", "(int, required)", "(auto|fused, default auto)" */
static void arg_kind(const wgnn_op_arg_info *a, char *buf, size_t cap) {
    if (!a->def) snprintf(buf, cap, "%s, required", a->type);
    else if (!a->def[0]) snprintf(buf, cap, "%s, optional", a->type);
    else snprintf(buf, cap, "%s, default %s", a->type, a->def);
}

void op_print_list(FILE *f) {
    for (int i = 0; i < wgnn_op_count(); i++) {
        const wgnn_op_info *info = wgnn_op_info_at(i);
        if (!info) continue;
        fprintf(f, "%s%s\n", i ? "\n" : "", info->name);
        print_wrapped(f, 4, "", info->summary);
        print_wrapped(f, 12, "    inputs:", info->inputs);
        char args[2048] = "none";
        size_t used = 0;
        for (int j = 0; j < info->n_args && used < sizeof args; j++) {
            char kind[256];
            arg_kind(&info->args[j], kind, sizeof kind);
            used += (size_t)snprintf(args + used, sizeof args - used, "%s%s (%s)", j ? ", " : "", info->args[j].name,
                                     kind);
        }
        print_wrapped(f, 12, "    args:", args);
    }
}

void op_print_help(FILE *f, const wgnn_op_info *info, const char *usage_fmt) {
    fprintf(f, usage_fmt, info->name);
    print_wrapped(f, 2, "", info->summary);
    char line[512];
    if (info->min_inputs == info->max_inputs)
        snprintf(line, sizeof line, "%d .npy file%s, one --in each, in this order: %s", info->min_inputs,
                 info->min_inputs == 1 ? "" : "s", info->inputs);
    else
        snprintf(line, sizeof line, "%d to %d .npy files, one --in each, in this order: %s (trailing optional inputs "
                 "are left out)", info->min_inputs, info->max_inputs, info->inputs);
    print_wrapped(f, 12, "inputs:", line);
    print_wrapped(f, 12, "shapes:", info->shapes);
    if (info->n_args == 0) {
        print_wrapped(f, 12, "arguments:", "none");
    } else {
        fprintf(f, "arguments (--arg KEY=VALUE):\n");
        for (int j = 0; j < info->n_args; j++) {
            const wgnn_op_arg_info *a = &info->args[j];
            char kind[256], name[64];
            arg_kind(a, kind, sizeof kind);
            snprintf(name, sizeof name, "  %s", a->name);
            print_wrapped(f, 12, name, kind);
            if (a->help && a->help[0]) print_wrapped(f, 12, "", a->help);
        }
    }
    print_wrapped(f, 12, "outputs:", "one --out per output, in order");
}

char *op_help_text(const wgnn_op_info *info, const char *usage_fmt) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    op_print_help(f, info, usage_fmt);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- the command line against the row ------------------------------------------ */

int op_check_usage(const char *cmd, const wgnn_op_info *info, int n_in, const char *in_opt, const str_list *args) {
    if (n_in < info->min_inputs || n_in > info->max_inputs) {
        char want[32];
        if (info->min_inputs == info->max_inputs) snprintf(want, sizeof want, "%d", info->min_inputs);
        else snprintf(want, sizeof want, "%d to %d", info->min_inputs, info->max_inputs);
        fprintf(stderr, "wgnn: %s: takes %s inputs (%s); %d %s given\n", cmd, want, info->inputs, n_in, in_opt);
        return CLI_USAGE;
    }
    bool given[64] = {false};
    for (int i = 0; i < args->n; i++) {
        const char *kv = args->v[i], *eq = strchr(kv, '=');
        if (!eq || eq == kv) {
            fprintf(stderr, "wgnn: %s: --arg '%s' is not of the form KEY=VALUE\n", cmd, kv);
            return CLI_USAGE;
        }
        size_t kl = (size_t)(eq - kv);
        int j = 0;
        while (j < info->n_args && !(strlen(info->args[j].name) == kl && strncmp(info->args[j].name, kv, kl) == 0)) j++;
        if (j == info->n_args) {
            char known[512] = "";
            size_t m = 0;
            for (int q = 0; q < info->n_args && m < sizeof known; q++)
                m += (size_t)snprintf(known + m, sizeof known - m, "%s%s", q ? ", " : "", info->args[q].name);
            fprintf(stderr, "wgnn: %s: unknown argument \"%.*s\" (%s%s)\n", cmd, (int)kl, kv,
                    info->n_args ? "it takes: " : "it takes none", known);
            return CLI_USAGE;
        }
        if (j < (int)NSPECS(given)) {
            if (given[j]) {
                fprintf(stderr, "wgnn: %s: --arg %s given twice\n", cmd, info->args[j].name);
                return CLI_USAGE;
            }
            given[j] = true;
        }
    }
    for (int j = 0; j < info->n_args && j < (int)NSPECS(given); j++)
        if (!info->args[j].def && !given[j]) {
            fprintf(stderr, "wgnn: %s: needs --arg %s=VALUE (%s)\n", cmd, info->args[j].name, info->args[j].type);
            return CLI_USAGE;
        }
    return CLI_OK;
}

/* ---- descs ---------------------------------------------------------------------- */

uint64_t desc_numel(const wgnn_desc *d) {
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= (uint64_t)d->dims[i];
    return n;
}

uint64_t desc_nbytes(const wgnn_desc *d) { return desc_numel(d) * wgnn_dtype_size(d->dtype); }

void desc_str(const wgnn_desc *d, char *buf, size_t cap) {
    char dims[160];
    dims_str(d->rank, d->dims, dims, sizeof dims);
    snprintf(buf, cap, "%s %s", wgnn_dtype_name(d->dtype), dims);
}

void desc_json(const wgnn_desc *d) {
    printf("{\"dtype\":\"%s\",\"shape\":[", wgnn_dtype_name(d->dtype));
    for (int i = 0; i < d->rank; i++) printf("%s%" PRId64, i ? "," : "", d->dims[i]);
    printf("]}");
}

/* ---- --check ---------------------------------------------------------------------- */

static double half(const void *p, uint64_t i) {
    float x;
    wgnn_f16_to_f32((const uint16_t *)p + i, &x, 1);
    return x;
}

static void compare(const wgnn_desc *d, const void *got, const void *ref, op_cmp *r) {
    uint64_t n = desc_numel(d);
    *r = (op_cmp){0.0, 0, 0.0, 0.0, true};
    if (d->dtype == WGNN_F32) {
        r->atol = OP_ATOL_F32;
        r->rtol = OP_RTOL_F32;
    } else if (d->dtype == WGNN_F16) {
        r->atol = OP_ATOL_F16;
        r->rtol = OP_RTOL_F16;
    }
    for (uint64_t i = 0; i < n; i++) {
        double g, f;
        if (d->dtype == WGNN_I32) {
            g = ((const int32_t *)got)[i];
            f = ((const int32_t *)ref)[i];
        } else if (d->dtype == WGNN_F16) {
            g = half(got, i);
            f = half(ref, i);
        } else {
            g = ((const float *)got)[i];
            f = ((const float *)ref)[i];
        }
        double diff;
        bool ok;
        if (g == f || (isnan(g) && isnan(f))) {
            diff = 0.0;
            ok = true;
        } else if (isnan(g) || isnan(f)) {
            diff = NAN;
            ok = false;
        } else if (isinf(g) || isinf(f)) {
            diff = INFINITY;
            ok = false;
        } else {
            diff = fabs(g - f);
            ok = diff <= r->atol + r->rtol * fabs(f);
        }
        if (!ok) r->n_bad++;
        if (isnan(diff) || isnan(r->max_abs)) r->max_abs = NAN;
        else if (diff > r->max_abs) r->max_abs = diff;
    }
    r->pass = r->n_bad == 0;
}

int op_check(const char *op, const wgnn_host_tensor *in, int n_in, const str_list *args,
             const wgnn_host_tensor *got, int n_out, const char *const *label, FILE *f, op_cmp *r, char *err) {
    wgnn_host_tensor ref[MAX_LIST];
    int rc = CLI_OK;
    if (n_out > MAX_LIST) return set_err(err, "%s: more than %d outputs", op, MAX_LIST);
    memset(ref, 0, sizeof ref);
    for (int i = 0; i < n_out && rc == CLI_OK; i++) {
        ref[i].desc = got[i].desc;
        uint64_t bytes = desc_nbytes(&got[i].desc);
        if (bytes > SIZE_MAX || !(ref[i].data = malloc(bytes ? (size_t)bytes : 1)))
            rc = set_err(err, "%s: --check: out of host memory for the reference's output %d", op, i);
    }
    if (rc == CLI_OK) {
        char msg[ERR_LEN] = "";
        wgnn_status s = wgnn_op_ref(op, in, n_in, args->v, args->n, ref, n_out, msg, sizeof msg);
        if (s != WGNN_OK) rc = set_err(err, "--check: %s", msg[0] ? msg : wgnn_status_str(s));
    }
    for (int i = 0; i < n_out && rc == CLI_OK; i++) {
        compare(&got[i].desc, got[i].data, ref[i].data, &r[i]);
        if (!f) continue;
        char ds[200];
        desc_str(&got[i].desc, ds, sizeof ds);
        fprintf(f, "check: %s (%s): max_abs_err=%.3g ", label[i], ds, r[i].max_abs);
        if (r[i].pass) fprintf(f, "PASS\n");
        else if (got[i].desc.dtype == WGNN_I32)
            fprintf(f, "FAIL: %" PRIu64 " of %" PRIu64 " elements differ\n", r[i].n_bad, desc_numel(&got[i].desc));
        else
            fprintf(f, "FAIL: %" PRIu64 " of %" PRIu64 " elements off (|gpu - ref| <= %g + %g*|ref|)\n", r[i].n_bad,
                    desc_numel(&got[i].desc), r[i].atol, r[i].rtol);
    }
    for (int i = 0; i < n_out; i++) free(ref[i].data);
    return rc;
}
