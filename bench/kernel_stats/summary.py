#!/usr/bin/env python3
"""Compact table of `kstat` output (bench/kernel_stats/kstat.c): one row per
pipeline with the statistics that decide occupancy.

usage: summary.py KSTAT_TSV [--all]   (--all: feature probes too)

Statistic names are the driver's; columns are picked by keyword (NVIDIA:
"Register Count", "Binary Size", "Shared Memory Size", "Local Memory
Size"/"Stack Size" or similar), and every statistic stays in the TSV.
"""
import sys

COLS = [("regs", ("register",)), ("code", ("binary", "code size", "instruction")),
        ("smem", ("shared",)), ("local", ("local memory", "spill", "stack"))]

# NVIDIA's driver (580) reports "Local Memory Size" as the bytes a thread
# spills plus 2^36 (2^36 alone: none): the 128 x 128 GEMM tile with a bias
# read 2^36 + 256 while its 64 accumulators lived in local memory.
NV_LOCAL_BASE = 1 << 36


def pick(stats, keys):
    """The first statistic matching the first key that matches any (keys in
    order of preference)."""
    for k in keys:
        for name, val in stats:
            if k in name.lower():
                if k == "local memory" and val.isdigit() and int(val) >= NV_LOCAL_BASE:
                    return str(int(val) - NV_LOCAL_BASE)
                return val
    return "-"


def rows(path, show_all=False):
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.rstrip("\n").split("\t")
            if len(p) < 6 or (not show_all and p[1] == "feature_probe"):
                continue
            stats = []
            for kv in p[5].split(";"):
                if "=" in kv:
                    k, v = kv.rsplit("=", 1)
                    stats.append((k.strip(), v.strip()))
            r = {"seq": p[0], "label": p[1], "consts": p[2], "wg": p[3], "exe": p[4], "raw": p[5]}
            for col, keys in COLS:
                r[col] = pick(stats, keys)
            out.append(r)
    return out


def main(argv):
    if not argv:
        sys.exit(__doc__)
    rs = rows(argv[0], "--all" in argv)
    print("| seq | kernel | workgroup | " + " | ".join(c for c, _ in COLS) + " | constants |")
    print("|---|---|---|" + "---|" * len(COLS) + "---|")
    for r in rs:
        cells = [r[c] for c, _ in COLS]
        if all(c == "-" for c in cells):
            cells[0] = "(no stats)"
        print(f"| {r['seq']} | {r['label']} | {r['wg']} | " + " | ".join(cells) + f" | {r['consts']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
