#!/usr/bin/env python3
"""Times the PyTorch side of bench/ops_cases.txt on CUDA (fp32, TF32 off).

usage: torch_ops.py [--iters=N] [LABEL ...]   -> one JSON object per case per line
Median of CUDA-event-timed calls after warm-up; also the device-to-device
copy bandwidth of a 256 MiB tensor (label "copy_256MiB"), the ceiling the
bandwidth-bound ops are compared with.
"""
import json
import os
import sys

import torch


def cases():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "ops_cases.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            label, wgnn, flops, expr = [x.strip() for x in line.split("|")]
            shapes = []
            toks = wgnn.split()
            for i, t in enumerate(toks):
                if t == "--in-shape":
                    dt, dims = toks[i + 1].split(":")
                    shapes.append((dt, [int(x) for x in dims.split("{")[0].split(",")]))
            yield label, shapes, int(flops), expr


def timed(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def main(argv):
    iters = 30
    want = []
    for a in argv:
        if a.startswith("--iters="):
            iters = int(a.split("=", 1)[1])
        else:
            want.append(a)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    dts = {"f32": torch.float32, "f16": torch.float16, "i32": torch.int32}
    x = torch.empty(64 << 20, device=dev, dtype=torch.float32)
    ms = timed(lambda: x.clone(), iters)
    print(json.dumps({"impl": "torch", "label": "copy_256MiB", "ms": ms, "GBps": 2 * x.numel() * 4 / ms / 1e6}))
    del x
    for label, shapes, flops, expr in cases():
        if want and label not in want:
            continue
        env = {"torch": torch}
        for i, (dt, dims) in enumerate(shapes):
            env["x%d" % i] = torch.randn(*dims, device=dev).to(dts[dt])
        fn = eval("lambda: " + expr, env)
        ms = timed(fn, iters)
        rec = {"impl": "torch", "label": label, "ms": ms, "torch": torch.__version__}
        if flops:
            rec["TFLOPs"] = flops / ms / 1e9
        print(json.dumps(rec), flush=True)
        for i in range(len(shapes)):
            del env["x%d" % i]
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])
