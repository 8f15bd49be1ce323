#!/usr/bin/env python3
"""Tables of bench/h200_sdpa_sweep.sh's output folder: time per candidate
and shape against PyTorch's, the sdpa_fused pipeline each run built (tile
and the driver's register count, code size, local memory), and the checks.

usage: sdpa_sweep_table.py OUT_DIR
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_stats"))
from summary import rows as kstat_rows  # noqa: E402


def jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def shape_key(r):
    return ",".join(map(str, r.get("shape", [])))


def tile_of(consts):
    c = dict(kv.split("=", 1) for kv in consts.split() if "=" in kv)
    t = "x".join(c.get(k, "?") for k in ("TY", "TX", "KE", "RG"))
    if c.get("LEAN") == "1":
        t += " L" + ("u" + c["JU"] if "JU" in c else "")
    if c.get("SPLIT") == "1":
        t += " split"
    if c.get("SACC") == "1":
        t += " sacc"
    if c.get("USE_SG") == "0":
        t += " nosg"
    return t


def fused_stats(out, run):
    path = os.path.join(out, "kstat", run + ".tsv")
    if not os.path.exists(path):
        return None
    for r in kstat_rows(path):
        if r["label"] == "sdpa_fused":
            return r
    return None


def main(argv):
    if not argv:
        sys.exit(__doc__)
    out = argv[0]
    wg = jsonl(os.path.join(out, "wgnn.jsonl"))
    torch = {shape_key(r): r for r in jsonl(os.path.join(out, "torch.jsonl"))}
    labels, shapes = [], []
    by = {}
    for r in wg:
        lab, sk = r.get("label", "?"), shape_key(r)
        if lab not in labels:
            labels.append(lab)
        if sk and sk not in shapes:
            shapes.append(sk)
        by[(lab, sk)] = r

    print("## Time (median ms; torch/wgnn in parentheses, above 1 = wgnn faster)\n")
    print("| B,H,Sq,Skv,D | torch | " + " | ".join(labels) + " |")
    print("|---|---|" + "---|" * len(labels))
    for sk in shapes:
        t = torch.get(sk, {}).get("median_ms")
        cells = []
        for lab in labels:
            r = by.get((lab, sk))
            if r is None:
                cells.append("-")
            elif "median_ms" not in r:
                cells.append("error")
            else:
                ms = r["median_ms"]
                cells.append(f"{ms:.3f} ({t / ms:.2f}x)" if t else f"{ms:.3f}")
        print(f"| {sk} | " + (f"{t:.3f}" if t else "-") + " | " + " | ".join(cells) + " |")

    print("\n## sdpa_fused pipeline per run: tile TYxTXxKExRG (L: LEAN, uN: unroll), registers / code / local memory\n")
    print("| B,H,Sq,Skv,D | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for sk in shapes:
        cells = []
        for lab in labels:
            r = by.get((lab, sk))
            st = fused_stats(out, r["run"]) if r and "run" in r else None
            if st is None:
                cells.append("-")
            elif st["regs"] == "-":
                cells.append(f"{tile_of(st['consts'])}: no stats")
            else:
                cells.append(f"{tile_of(st['consts'])}: {st['regs']} r / {st['code']} / {st['local']}")
        print(f"| {sk} | " + " | ".join(cells) + " |")
    for path in sorted(glob.glob(os.path.join(out, "kstat", "robust_*.tsv"))):
        for st in kstat_rows(path):
            if st["label"] == "sdpa_fused":
                print(f"\nrobust buffer access on, {os.path.basename(path)[7:-4]}: {tile_of(st['consts'])}: "
                      f"{st['regs']} registers, code {st['code']}, local {st['local']}")

    checks = jsonl(os.path.join(out, "checks.jsonl"))
    if checks:
        cshapes, clabs, cby = [], [], {}
        for r in checks:
            sk = shape_key(r) + (" mask" if r.get("mask") else "") + (" f16" if r.get("dtype") == "float16" else "")
            if sk not in cshapes:
                cshapes.append(sk)
            if r.get("label") not in clabs:
                clabs.append(r.get("label"))
            cby[(r.get("label"), sk)] = r
        print("\n## --check against the CPU reference (max abs error)\n")
        print("| candidate | " + " | ".join(cshapes) + " |")
        print("|---|" + "---|" * len(cshapes))
        for lab in clabs:
            cells = []
            for sk in cshapes:
                r = cby.get((lab, sk))
                if r is None:
                    cells.append("-")
                elif "check" in r:
                    cells.append(f"{r['check']} {r.get('max_abs_err', 0):.1e}")
                else:
                    cells.append("error: " + str(r.get("error", "?"))[:60])
            print(f"| {lab} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
