"""PyTorch's best case for a vision encoder folder (as bench/torch_models.py
writes them) at one batch size: the forward captured in a CUDA graph and
replayed, so that no kernel launch costs the host anything (fp32, TF32 off,
the input on the device, the outputs left there). Also each block product
alone at the encoder's token count (torch.addmm, what nn.Linear runs), in a
CUDA graph of 20 calls, and the cuBLAS kernel each one ran. This is the
GPU time PyTorch's kernels need, to set beside wgnn's GPU span
(docs/PERFORMANCE.md); eager PyTorch (bench/torch_models.py) adds its
launches on top.

    python3 bench/torch_graph_encoder.py FOLDER BATCH [--iters 50]
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import AutoModel

p = argparse.ArgumentParser()
p.add_argument("folder")
p.add_argument("batch", type=int)
p.add_argument("--iters", type=int, default=50)
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)
name = a.folder.rstrip("/").split("/")[-1]


def graph_ms(fn, reps, iters):
    """median ms of one fn() call, from CUDA-event-timed replays of a graph
    of reps calls"""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / reps)
    ts.sort()
    return ts[len(ts) // 2]


def kernels(fn):
    """(name, us) of each CUDA kernel one fn() runs"""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [(e.name, e.device_time_total) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


m = AutoModel.from_pretrained(a.folder).eval().cuda()
cfg = m.config
x = torch.randn(a.batch, 3, cfg.image_size, cfg.image_size, device="cuda")
with torch.no_grad():
    try:
        ms = graph_ms(lambda: m(pixel_values=x), 1, a.iters)
        print(f"torch CUDA graph, {name} batch {a.batch}: {ms:.3f} ms a forward (median of {a.iters} replays)")
    except Exception as e:  # a model that cannot be captured still gets its products timed
        print(f"torch CUDA graph, {name} batch {a.batch}: capture failed: {e}")
    tokens = (cfg.image_size // cfg.patch_size) ** 2 + (1 if "vit" in cfg.model_type else 0)
    M, Hd, I = a.batch * tokens, cfg.hidden_size, cfg.intermediate_size
    for label, n, k in (("qkv", 3 * Hd, Hd), ("out", Hd, Hd), ("fc1", I, Hd), ("fc2", Hd, I)):
        xa = torch.randn(M, k, device="cuda")
        w = torch.randn(n, k, device="cuda")
        b = torch.randn(n, device="cuda")
        fn = lambda: torch.addmm(b, xa, w.t())  # noqa: E731
        t = graph_ms(fn, 20, a.iters)
        ks = ", ".join(f"{nm[:100]} {us:.1f} us" for nm, us in kernels(fn))
        print(f"  {label} {M}x{n}x{k}: {t * 1e3:.1f} us ({2.0 * M * n * k / t / 1e9:.1f} TFLOP/s); kernels: {ks}")
