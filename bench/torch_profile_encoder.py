"""PyTorch's CUDA kernels for one forward of a vision encoder folder (as
bench/torch_models.py writes them), fp32 eager, TF32 off: each kernel's name,
calls and total time, biggest first, and the sum, to set wgnn's --profile
table beside (docs/PERFORMANCE.md).

    python3 bench/torch_profile_encoder.py FOLDER BATCH [--top 14]
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import AutoModel

p = argparse.ArgumentParser()
p.add_argument("folder")
p.add_argument("batch", type=int)
p.add_argument("--top", type=int, default=14)
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
m = AutoModel.from_pretrained(a.folder).eval().cuda()
x = torch.randn(a.batch, 3, 224, 224, device="cuda")
with torch.no_grad():
    for _ in range(5):
        m(pixel_values=x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        m(pixel_values=x)
        torch.cuda.synchronize()
rows = {}
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        r = rows.setdefault(e.name, [0, 0.0])
        r[0] += 1
        r[1] += e.device_time_total / 1000.0
total = sum(r[1] for r in rows.values())
print(f"torch kernels, {a.folder.rstrip('/').split('/')[-1]} batch {a.batch}: {total:.3f} ms summed")
for name, (n, ms) in sorted(rows.items(), key=lambda kv: -kv[1][1])[: a.top]:
    print(f"  {ms:8.3f} ms {n:4d}x  {name[:110]}")
