"""Random-initialised ViT-B/16 and SigLIP-B/16 vision encoders (Hugging Face
configs at their real sizes), saved as model folders for `wgnn run`, with
inputs, PyTorch's fp32 outputs, and PyTorch eager timings (CUDA, TF32 off).

    python3 bench/torch_models.py OUTDIR [--batches 1,8,32] [--iters 30]

Writes OUTDIR/{vit_b16,siglip_b16}/ (config.json, model.safetensors,
preprocessor_config.json), OUTDIR/<model>_x<B>.npy (pixel_values),
OUTDIR/<model>_last<B>.npy / _pool<B>.npy (PyTorch's outputs) and prints one
JSON line per (model, batch) with PyTorch's median wall time per call: with
the input already on the device and the outputs left there (median_ms), and
host to host, the input copied in and both outputs copied out
(h2h_median_ms).
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from transformers import SiglipVisionConfig, SiglipVisionModel, ViTConfig, ViTModel

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--batches", default="1,8,32")
p.add_argument("--iters", type=int, default=30)
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)
dev = "cuda"

models = {
    "vit_b16": ViTModel(ViTConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                  intermediate_size=3072, image_size=224, patch_size=16)),
    "siglip_b16": SiglipVisionModel(SiglipVisionConfig(hidden_size=768, num_hidden_layers=12,
                                                       num_attention_heads=12, intermediate_size=3072,
                                                       image_size=224, patch_size=16)),
}
pre = {"do_normalize": True, "do_rescale": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5],
       "image_std": [0.5, 0.5, 0.5], "resample": 2, "rescale_factor": 1 / 255,
       "size": {"height": 224, "width": 224}}
for name, m in models.items():
    folder = os.path.join(a.out, name)
    m.eval()
    m.save_pretrained(folder, safe_serialization=True)
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(dict(pre, image_processor_type="ViTImageProcessor"), f)
    m.to(dev)
    for b in [int(x) for x in a.batches.split(",")]:
        x = torch.randn(b, 3, 224, 224, generator=torch.Generator().manual_seed(b))
        np.save(os.path.join(a.out, f"{name}_x{b}.npy"), x.numpy())
        xd = x.to(dev)
        with torch.no_grad():
            out = m(pixel_values=xd)
            np.save(os.path.join(a.out, f"{name}_last{b}.npy"), out.last_hidden_state.float().cpu().numpy())
            np.save(os.path.join(a.out, f"{name}_pool{b}.npy"), out.pooler_output.float().cpu().numpy())
            for _ in range(5):
                m(pixel_values=xd)
            torch.cuda.synchronize()
            ts = []
            for _ in range(a.iters):
                t0 = time.perf_counter()
                m(pixel_values=xd)
                torch.cuda.synchronize()
                ts.append((time.perf_counter() - t0) * 1e3)
            # host to host, as `wgnn run`'s pipelined runs: the input copied
            # to the device and both outputs back each call
            th = []
            for _ in range(a.iters):
                t0 = time.perf_counter()
                o = m(pixel_values=x.to(dev))
                o.last_hidden_state.cpu()
                o.pooler_output.cpu()
                th.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"side": "torch", "model": name, "batch": b, "median_ms": float(np.median(ts)),
                          "min_ms": float(np.min(ts)), "h2h_median_ms": float(np.median(th)),
                          "torch": torch.__version__}), flush=True)
    m.to("cpu")
