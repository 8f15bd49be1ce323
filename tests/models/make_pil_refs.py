"""PyTorch references for the sample image preprocessed the way Pillow-based
Hugging Face image processors did it (transformers 4.x "slow" processors:
PIL resize to uint8, then float64 rescale, float32 normalize), which is what
wgnn implements bit-exactly. transformers 5 resizes with torchvision instead,
which rounds some pixels one uint8 level differently (image_pixel_values.npy
keeps that output). Run on the device after make_fixtures.py:

    python3 tests/models/make_pil_refs.py tests/models OUTDIR

writes OUTDIR/<model>/pil_{pixel_values,last_hidden_state,pooler_output}.npy
for vit, vit_bf16 and siglip.
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image
from transformers import SiglipVisionModel, ViTModel


def pil_preprocess(img, cfg):
    size = cfg["size"]
    r = np.asarray(img.convert("RGB").resize((size["width"], size["height"]), resample=cfg["resample"]))
    x = (r.astype(np.float64) * cfg["rescale_factor"]).astype(np.float32)
    mean = np.array(cfg["image_mean"], dtype=np.float32)
    std = np.array(cfg["image_std"], dtype=np.float32)
    x = (x - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32))


def main(root, out):
    img = Image.open(os.path.join(root, "image.png"))
    for name, cls in (("vit", ViTModel), ("vit_bf16", ViTModel), ("siglip", SiglipVisionModel)):
        folder = os.path.join(root, name)
        cfg = json.load(open(os.path.join(folder, "preprocessor_config.json")))
        model = cls.from_pretrained(folder).to(torch.float32).eval()
        px = pil_preprocess(img, cfg)
        os.makedirs(os.path.join(out, name), exist_ok=True)
        np.save(os.path.join(out, name, "pil_pixel_values.npy"), px)
        with torch.no_grad():
            o = model(pixel_values=torch.from_numpy(px))
        np.save(os.path.join(out, name, "pil_last_hidden_state.npy"), o.last_hidden_state.numpy().astype(np.float32))
        np.save(os.path.join(out, name, "pil_pooler_output.npy"), o.pooler_output.numpy().astype(np.float32))
        print(name, px.shape, float(np.abs(px - np.load(os.path.join(folder, "image_pixel_values.npy"))).max()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
