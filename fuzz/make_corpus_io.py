#!/usr/bin/env python3
"""make_corpus_io.py - writes the seed corpora for fuzz/fuzz_safetensors.c
and fuzz/fuzz_json.c.

    python3 fuzz/make_corpus_io.py [OUT_DIR]   (default: fuzz/, writing
                                                corpus_safetensors/ and corpus_json/)

Safetensors: small valid files (F32, F16, BF16, integer dtypes, a scalar,
an empty tensor, __metadata__, padded headers) and near-valid ones that must
be refused for one reason each (bad dtype, rank 9, overlap, duplicate name,
offsets past the data, header length past the end, ...). JSON: configs
shaped like the ones wgnn reads (config.json, preprocessor_config.json)
plus broken ones. Standard library only; deterministic. The files are
committed; rerun after editing.
"""
import json
import os
import struct
import sys


def st_file(entries, data, metadata=None, pad=0, raw_header=None, hlen=None):
    """entries: list of (name, dtype, shape, [begin, end]) in header order."""
    if raw_header is None:
        parts = []
        if metadata is not None:
            parts.append('"__metadata__": ' + json.dumps(metadata))
        for name, dtype, shape, offs in entries:
            parts.append('%s: {"dtype": %s, "shape": %s, "data_offsets": %s}' % (
                json.dumps(name), json.dumps(dtype), json.dumps(shape), json.dumps(offs)))
        raw_header = "{" + ", ".join(parts) + "}"
    h = raw_header.encode("utf-8") + b" " * pad
    n = len(h) if hlen is None else hlen
    return struct.pack("<Q", n) + h + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def f16(*v):
    return struct.pack("<%de" % len(v), *v)


def bf16(*v):
    return b"".join(struct.pack("<f", x)[2:] for x in v)  # truncation: exact for these values


def safetensors_files():
    w = f32(1.0, -2.0, 0.5, 3.25, 65520.0, 1e-8)
    yield "f32_2x3", st_file([("w", "F32", [2, 3], [0, 24])], w)
    yield "f16_4", st_file([("h", "F16", [4], [0, 8])], f16(1.0, -2.5, 6e-8, float("inf")))
    yield "bf16_3", st_file([("b", "BF16", [3], [0, 6])], bf16(1.0, -3.0, 0.5))
    yield "mixed_metadata", st_file(
        [("embeddings.cls_token", "F32", [1, 1, 2], [0, 8]),
         ("encoder.layer.0.weight", "BF16", [2, 2], [8, 16]),
         ("encoder.layer.0.bias", "F16", [2], [16, 20]),
         ("position_ids", "I64", [1, 2], [20, 36]),
         ("mask", "BOOL", [3], [36, 39]),
         ("scale", "F64", [], [39, 47]),
         ("empty", "F32", [0, 3], [47, 47])],
        f32(0.25, -0.25) + bf16(1, 2, 3, 4) + f16(0.5, -0.5) + struct.pack("<2q", 0, 1) + b"\x01\x00\x01" +
        struct.pack("<d", 2.0),
        metadata={"format": "pt"}, pad=5)
    yield "all_dtypes", st_file(
        [(d, d, [1], [8 * i, 8 * i + s]) for i, (d, s) in enumerate([
            ("F64", 8), ("F32", 4), ("F16", 2), ("BF16", 2), ("I64", 8), ("I32", 4), ("I16", 2), ("I8", 1),
            ("U8", 1), ("BOOL", 1), ("F8_E4M3", 1), ("F8_E5M2", 1), ("U16", 2), ("U32", 4), ("U64", 8)])],
        bytes(range(120)))
    yield "rank8", st_file([("r", "F16", [1, 1, 1, 1, 1, 1, 2, 2], [0, 8])], f16(1, 2, 3, 4))
    yield "empty_header", st_file([], b"", raw_header="{}")
    yield "metadata_only", st_file([], b"", metadata={"format": "pt", "note": "x"})
    # refused, one reason each
    yield "bad_dtype", st_file([("w", "F33", [1], [0, 4])], f32(1))
    yield "bad_rank9", st_file([("w", "F32", [1] * 9, [0, 4])], f32(1))
    yield "bad_negative_dim", st_file([("w", "F32", [-1], [0, 4])], f32(1))
    yield "bad_size_mismatch", st_file([("w", "F32", [2], [0, 4])], f32(1, 2))
    yield "bad_past_data", st_file([("w", "F32", [2], [0, 8])], f32(1))
    yield "bad_overlap", st_file([("a", "F32", [2], [0, 8]), ("b", "F32", [2], [4, 12])], f32(1, 2, 3))
    yield "bad_begin_after_end", st_file([("w", "F32", [0], [8, 4])], f32(1, 2))
    yield "bad_duplicate", st_file([("w", "F32", [1], [0, 4]), ("w", "F32", [1], [4, 8])], f32(1, 2))
    yield "bad_numel_overflow", st_file([("w", "F32", [4294967296, 4294967296, 16], [0, 4])], f32(1))
    yield "bad_metadata_value", st_file([], b"", metadata={"format": 3})
    yield "bad_not_object", st_file([], b"", raw_header="[1, 2, 3]")
    yield "bad_json", st_file([], f32(1), raw_header='{"w": {"dtype": "F32", "shape": [1], ')
    yield "bad_hlen_past_end", st_file([("w", "F32", [1], [0, 4])], f32(1), hlen=100000)
    yield "bad_short", b"\x02\x00\x00"


def json_files():
    yield "config_vit", json.dumps({
        "architectures": ["ViTModel"], "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 64, "hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": 32,
        "patch_size": 8, "num_channels": 3, "qkv_bias": True, "model_type": "vit"}, indent=2)
    yield "config_siglip_nested", json.dumps({
        "model_type": "siglip", "text_config": {"hidden_size": 32, "vocab_size": 100},
        "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "hidden_act": "gelu_pytorch_tanh",
                          "layer_norm_eps": 1e-6, "patch": {"size": 8}}}, indent=2)
    yield "preprocessor", json.dumps({
        "do_normalize": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "resample": 2, "rescale_factor": 0.00392156862745098, "size": {"height": 32, "width": 32}}, indent=2)
    yield "wrong_types", json.dumps({
        "num_hidden_layers": 2.5, "hidden_size": "abc", "layer_norm_eps": None, "hidden_act": 3,
        "qkv_bias": "yes", "image_mean": [0.5, "x"], "size": 7, "a": {"b": {"c": [1, 2, 3, 4, 5, 6, 7, 8, 9]}}})
    yield "duplicates_unicode", '{"a": 1, "a": {"b": "\\u00e9\\ud83d\\ude00"}, "hidden_act": "\\u0000x"}'
    yield "big_numbers", '{"num_hidden_layers": 1e400, "hidden_size": -1e400, "layer_norm_eps": 1e-400, ' \
        '"size": 9223372036854775808, "image_mean": [1e308, -1e308, 5e-324]}'
    yield "bad_trailing_comma", '{\n  "a": 1,\n}\n'
    yield "bad_unterminated", '{"hidden_act": "gel'
    yield "bad_trailing_text", '{"a": 1} x'
    yield "deep", "[" * 200 + "]" * 200


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else here
    for sub, gen, ext in (("corpus_safetensors", safetensors_files, ".safetensors"),
                          ("corpus_json", json_files, ".json")):
        d = os.path.join(out, sub)
        os.makedirs(d, exist_ok=True)
        count = 0
        for name, data in gen():
            if isinstance(data, str):
                data = data.encode("utf-8")
            with open(os.path.join(d, name + ext), "wb") as f:
                f.write(data)
            count += 1
        print("wrote %d files to %s" % (count, d))


if __name__ == "__main__":
    main()
