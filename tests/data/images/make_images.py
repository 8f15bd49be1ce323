#!/usr/bin/env python3
"""make_images.py - reference images for tests/test_image.c, made with Pillow.

    python3 tests/data/images/make_images.py [OUT_DIR]   (default: this folder)

Writes (all small, committed; rerun after editing, deterministic):
  src.png                  23 x 17 RGB, gradients plus noise
  rs_<f>_<w>x<h>.png       src.png through Image.resize((w, h), f) for every
                           filter f (0 nearest, 1 lanczos, 2 bilinear,
                           3 bicubic, 4 box, 5 hamming) and sizes up, down,
                           one side only, 1 x 1: the bit-exact reference
  dec_<kind>.png / .jpg    decoder inputs: grey, grey+alpha, RGBA, palette,
                           palette with transparency, 16-bit grey and RGB
                           (written by hand: Pillow cannot write 16-bit RGB),
                           baseline / progressive / grey JPEG
  want_<kind>.png          what each should decode to: Pillow's
                           convert("RGB"), except 16-bit input, where the
                           high byte is kept (as Pillow does for RGB; it
                           clamps 16-bit grey instead, which wgnn does not
                           copy); for JPEG Pillow's (libjpeg's) decode, which
                           stb_image matches only approximately
  pp_short.json, pp_short.npy
                           a preprocessor config with size.shortest_edge,
                           bicubic, and what transformers' slow (numpy / PIL)
                           path makes of ../models/image.png with it:
                           resize, (x.astype(float64) * factor).astype(float32),
                           (x - mean) / std with float32 mean / std
  pp_nearest.json, pp_nearest.npy
                           the same with size {height, width} and nearest
  huge_ihdr.png            a valid-looking PNG header declaring 100000 x 100000
Needs Pillow and numpy (Debian: python3-pil python3-numpy); VERSIONS.txt
records which Pillow made the files.
"""
import json
import os
import struct
import sys
import zlib

import numpy as np
import PIL
from PIL import Image

SIZES = [(7, 5), (11, 13), (40, 31), (23, 9), (31, 17), (1, 1), (64, 3), (3, 50)]


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_raw(w, h, bit_depth, color_type, rows):
    """A PNG from raw scanlines (filter 0 each)."""
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0)
    raw = b"".join(b"\x00" + r for r in rows)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def save_png(arr, path):
    Image.fromarray(arr, "RGB").save(path, optimize=False)


def hf_slow(img, w, h, resample, cfg):
    r = np.array(img.resize((w, h), resample=resample, reducing_gap=None))
    x = (r.astype(np.float64) * cfg["rescale_factor"]).astype(np.float32)
    mean = np.array(cfg["image_mean"], dtype=np.float32)
    std = np.array(cfg["image_std"], dtype=np.float32)
    x = (x - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32))


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:17, 0:23]
    a = np.stack([x * 11, y * 15, (x * y * 3) % 256], axis=-1).astype(np.float64)
    a += rng.normal(0, 30, a.shape)
    a = np.clip(a, 0, 255).astype(np.uint8)
    src = Image.fromarray(a, "RGB")
    src.save(os.path.join(out, "src.png"))
    for f in range(6):
        for w, h in SIZES:
            save_png(np.array(src.resize((w, h), resample=f)), os.path.join(out, "rs_%d_%dx%d.png" % (f, w, h)))

    # decoder inputs, 9 x 6
    g = (np.arange(54).reshape(6, 9) * 4 + 10).astype(np.uint8)
    rgba = np.dstack([a[:6, :9], (np.arange(54).reshape(6, 9) * 3).astype(np.uint8)])
    kinds = {
        "grey": Image.fromarray(g, "L"),
        "grey_alpha": Image.fromarray(np.dstack([g, 255 - g]), "LA"),
        "rgba": Image.fromarray(rgba, "RGBA"),
        "palette": Image.fromarray(a[:6, :9], "RGB").quantize(colors=16, dither=Image.Dither.NONE),
    }
    pt = kinds["palette"].copy()
    pt.info["transparency"] = 3
    kinds["palette_trns"] = pt
    for k, im in kinds.items():
        im.save(os.path.join(out, "dec_%s.png" % k))
        save_png(np.array(Image.open(os.path.join(out, "dec_%s.png" % k)).convert("RGB")),
                 os.path.join(out, "want_%s.png" % k))
    g16 = (np.arange(54).reshape(6, 9) * 1201 + 77).astype(">u2")
    with open(os.path.join(out, "dec_grey16.png"), "wb") as fh:
        fh.write(png_raw(9, 6, 16, 0, [r.tobytes() for r in g16]))
    save_png(np.repeat((g16 >> 8).astype(np.uint8)[:, :, None], 3, axis=2), os.path.join(out, "want_grey16.png"))
    rgb16 = (a[:6, :9].astype(np.uint32) * 257 + np.arange(54).reshape(6, 9, 1) * 3).astype(">u2")
    with open(os.path.join(out, "dec_rgb16.png"), "wb") as fh:
        fh.write(png_raw(9, 6, 16, 2, [r.tobytes() for r in rgb16]))
    want16 = (rgb16 >> 8).astype(np.uint8)
    assert (np.array(Image.open(os.path.join(out, "dec_rgb16.png")).convert("RGB")) == want16).all()
    save_png(want16, os.path.join(out, "want_rgb16.png"))

    # JPEG: a smooth 24 x 16 image, so that decoders differ little
    yy, xx = np.mgrid[0:16, 0:24]
    smooth = np.stack([xx * 10, yy * 15, 128 + 0 * xx], axis=-1).astype(np.uint8)
    sm = Image.fromarray(smooth, "RGB")
    jpegs = {
        "jpeg": (sm, dict(quality=90)),
        "jpeg_progressive": (sm, dict(quality=90, progressive=True)),
        "jpeg_444": (sm, dict(quality=95, subsampling=0)),
        "jpeg_grey": (sm.convert("L"), dict(quality=90)),
    }
    for k, (im, kw) in jpegs.items():
        im.save(os.path.join(out, "dec_%s.jpg" % k), **kw)
        save_png(np.array(Image.open(os.path.join(out, "dec_%s.jpg" % k)).convert("RGB")),
                 os.path.join(out, "want_%s.png" % k))

    image = Image.open(os.path.join(out, "..", "..", "models", "image.png")).convert("RGB")
    short = {"do_resize": True, "size": {"shortest_edge": 20}, "resample": 3, "do_rescale": True,
             "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.48145466, 0.4578275, 0.40821073],
             "image_std": [0.26862954, 0.26130258, 0.27577711], "do_convert_rgb": True}
    w, h = image.size  # 48 x 40: short side h
    nw = int(20 * w / h)
    with open(os.path.join(out, "pp_short.json"), "w") as fh:
        json.dump(short, fh, indent=1)
    np.save(os.path.join(out, "pp_short.npy"), hf_slow(image, nw, 20, 3, short))
    near = {"size": {"height": 13, "width": 29}, "resample": 0, "image_mean": 0.25, "image_std": 0.75}
    with open(os.path.join(out, "pp_nearest.json"), "w") as fh:
        json.dump(near, fh, indent=1)
    near_full = dict(near, rescale_factor=1 / 255, image_mean=[0.25] * 3, image_std=[0.75] * 3)
    np.save(os.path.join(out, "pp_nearest.npy"), hf_slow(image, 29, 13, 0, near_full))

    with open(os.path.join(out, "huge_ihdr.png"), "wb") as fh:
        fh.write(png_raw(100000, 100000, 8, 2, [b"\x00\x00\x00"]))
    with open(os.path.join(out, "VERSIONS.txt"), "w") as fh:
        fh.write("Pillow %s\nnumpy %s\n" % (PIL.__version__, np.__version__))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
