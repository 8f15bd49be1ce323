#!/usr/bin/env python3
"""Makes the model fixtures of tests/models/ (run on a machine with PyTorch and
transformers; the device's python3 has them):

    python3 tests/models/make_fixtures.py tests/models

For each of vit, vit_bf16 (the same ViT stored as bfloat16) and siglip: a tiny
random-initialised Hugging Face model folder (config.json, model.safetensors,
preprocessor_config.json) and PyTorch's fp32 outputs
    input.npy                  pixel_values [2, 3, H, W], fixed random
    last_hidden_state.npy      for input.npy
    pooler_output.npy          for input.npy
    image_pixel_values.npy     image.png through the model's HF image processor [1, 3, H, W]
    image_last_hidden_state.npy, image_pooler_output.npy
and image.png (48 x 40, RGB), shared by all. Parameters are drawn wider than
HF's init (std 0.1, norm weights in [0.5, 1.5]) so that every weight matters.
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image
from transformers import (SiglipImageProcessor, SiglipVisionConfig, SiglipVisionModel, ViTConfig,
                          ViTImageProcessor, ViTModel)


def widen(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ("norm" in name) and name.endswith("weight"):
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)


def save(model, proc, folder, image, pixel, dtype=None):
    os.makedirs(folder, exist_ok=True)
    if dtype is not None:  # store in dtype; the reference runs the rounded weights in fp32
        model = model.to(dtype).to(torch.float32)
        model.to(dtype).save_pretrained(folder, safe_serialization=True)
        model = model.to(torch.float32)
    else:
        model.save_pretrained(folder, safe_serialization=True)
    proc.save_pretrained(folder)
    model.eval()
    with torch.no_grad():
        out = model(pixel_values=torch.from_numpy(pixel))
        np.save(os.path.join(folder, "input.npy"), pixel)
        np.save(os.path.join(folder, "last_hidden_state.npy"), out.last_hidden_state.numpy().astype(np.float32))
        np.save(os.path.join(folder, "pooler_output.npy"), out.pooler_output.numpy().astype(np.float32))
        ip = proc(images=image, return_tensors="np")["pixel_values"].astype(np.float32)
        np.save(os.path.join(folder, "image_pixel_values.npy"), ip)
        out = model(pixel_values=torch.from_numpy(ip))
        np.save(os.path.join(folder, "image_last_hidden_state.npy"), out.last_hidden_state.numpy().astype(np.float32))
        np.save(os.path.join(folder, "image_pooler_output.npy"), out.pooler_output.numpy().astype(np.float32))


def main(root):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    # a 48 x 40 RGB image: gradients plus noise, so resizing filters differ
    y, x = np.mgrid[0:40, 0:48]
    img = np.stack([x * 5, y * 6, (x * y) % 256], axis=-1).astype(np.float64)
    img += rng.normal(0, 20, img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    image = Image.fromarray(img, "RGB")
    image.save(os.path.join(root, "image.png"))

    H = 32
    pixel = rng.standard_normal((2, 3, H, H)).astype(np.float32)

    vit_cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                        image_size=H, patch_size=8, num_channels=3, layer_norm_eps=1e-12, hidden_act="gelu")
    vit = ViTModel(vit_cfg, add_pooling_layer=True)
    widen(vit, 1)
    vit_proc = ViTImageProcessor(size={"height": H, "width": H}, resample=2, do_rescale=True,
                                 rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5, 0.4, 0.3],
                                 image_std=[0.2, 0.25, 0.3])
    save(vit, vit_proc, os.path.join(root, "vit"), image, pixel)
    save(vit, vit_proc, os.path.join(root, "vit_bf16"), image, pixel, dtype=torch.bfloat16)

    sig_cfg = SiglipVisionConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                 image_size=H, patch_size=8, num_channels=3, layer_norm_eps=1e-6,
                                 hidden_act="gelu_pytorch_tanh")
    sig = SiglipVisionModel(sig_cfg)
    widen(sig, 2)
    sig_proc = SiglipImageProcessor(size={"height": H, "width": H}, resample=3, do_rescale=True,
                                    rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5, 0.5, 0.5],
                                    image_std=[0.5, 0.5, 0.5])
    save(sig, sig_proc, os.path.join(root, "siglip"), image, pixel)
    import transformers
    with open(os.path.join(root, "VERSIONS.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "numpy": np.__version__, "PIL": Image.__version__}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
