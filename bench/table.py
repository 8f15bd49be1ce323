#!/usr/bin/env python3
"""Prints a markdown table from JSON lines written by `wgnn bench sdpa --json`
and bench/torch_sdpa.py: one row per shape, median ms per impl, ratios."""
import json
import sys
from collections import OrderedDict


def main(paths):
    rows = OrderedDict()
    impls = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                key = tuple(r["shape"])
                name = r.get("label") or r.get("impl_requested") or r["impl"]
                if name not in impls:
                    impls.append(name)
                rows.setdefault(key, {})[name] = r
    hdr = "| B,H,Sq,Skv,D | " + " | ".join(f"{i} ms" for i in impls)
    if "torch" in impls:
        hdr += " | " + " | ".join(f"torch/{i}" for i in impls if i != "torch")
    print(hdr + " |")
    print("|" + "---|" * hdr.count("|"))
    for key, r in rows.items():
        cells = []
        for i in impls:
            x = r.get(i)
            if x is None:
                cells.append("-")
            elif "error" in x:
                cells.append("error")
            else:
                cells.append(f"{x['median_ms']:.3f}")
        if "torch" in impls:
            t = r.get("torch", {}).get("median_ms")
            for i in impls:
                if i == "torch":
                    continue
                x = r.get(i, {})
                cells.append(f"{t / x['median_ms']:.2f}x" if t and "median_ms" in x else "-")
        print("| " + ",".join(map(str, key)) + " | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
