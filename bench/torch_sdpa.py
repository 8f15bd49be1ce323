#!/usr/bin/env python3
"""Times PyTorch's fp32 scaled_dot_product_attention (TF32 off) on CUDA.

usage: torch_sdpa.py B,H,Sq,Skv,D [...]   -> one JSON object per shape per line
Median of --iters CUDA-event-timed calls after warm-up, fresh random inputs.
"""
import json
import sys

import torch
import torch.nn.functional as F


def main(argv):
    iters = 30
    shapes = []
    for a in argv:
        if a.startswith("--iters="):
            iters = int(a.split("=", 1)[1])
        else:
            shapes.append([int(x) for x in a.split(",")])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    for b, h, sq, skv, d in shapes:
        rec = {"impl": "torch", "shape": [b, h, sq, skv, d], "device": torch.cuda.get_device_name(0),
               "torch": torch.__version__}
        try:
            q = torch.randn(b, h, sq, d, device=dev, dtype=torch.float32)
            k = torch.randn(b, h, skv, d, device=dev, dtype=torch.float32)
            v = torch.randn(b, h, skv, d, device=dev, dtype=torch.float32)
            for _ in range(3):
                F.scaled_dot_product_attention(q, k, v)
            torch.cuda.synchronize()
            times = []
            for _ in range(iters):
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                F.scaled_dot_product_attention(q, k, v)
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e))
            times.sort()
            med = times[len(times) // 2]
            rec.update(median_ms=med, min_ms=times[0], max_ms=times[-1],
                       tflops=4.0 * b * h * sq * skv * d / (med * 1e-3) / 1e12)
            del q, k, v
            torch.cuda.empty_cache()
        except Exception as ex:  # OOM at the largest shapes: record it
            rec["error"] = str(ex).splitlines()[0]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
