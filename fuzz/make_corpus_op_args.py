#!/usr/bin/env python3
"""make_corpus_op_args.py - writes the seed corpus for fuzz/fuzz_op_args.c.

    python3 fuzz/make_corpus_op_args.py [OUT_DIR]   (default: fuzz/corpus_op_args)

Each file is the harness's 5-byte header (op row, input count, four 4-bit
desc picks, short error-buffer length) and NUL-separated "key=value"
strings. The op rows are read from src/ops/ops.def (their order is the
table's), so every row gets seeds; the argument strings are the kinds the
parser has to get right or refuse by name (PyTorch's keywords with good,
bad, empty, "none", huge, repeated and list values), not any one op's
arguments, so nothing here changes when an op is added: rerun it to seed
the new rows. Standard library only; deterministic (same bytes every run).
The files are committed; rerun after editing, or when ops.def grows.
"""
import os
import re
import sys

# Desc picks (fuzz_op_args.c's palette): 0 f32 [4,8], 2 f32 [1,2,8,16],
# 3 f32 [1,2,8,8], 5 f32 scalar, 8 f16 [4,8], 9 f16 [1,2,8,16], 11 i32 [6].
PICKS = [
    (0x00, 0x00),  # all f32 [4,8]
    (0x22, 0x22),  # all f32 [1,2,8,16]
    (0x22, 0x32),  # [1,2,8,16] x3, then a [1,2,8,8] (an attention mask)
    (0x99, 0x99),  # all f16 [1,2,8,16]
    (0x29, 0x22),  # f16 then f32: mixed dtypes
    (0xb0, 0x5b),  # f32 [4,8], i32 [6], i32 [6], scalar
]

ARGS = [
    [],
    ["scale=0.5"],
    ["scale=0.5", "impl=fused"],
    ["impl=three-pass"],
    ["scale=none"],
    ["scale=inf"],
    ["scale=-inf"],
    ["scale=nan"],
    ["scale=1e999"],
    ["scale="],
    ["scale= 1"],
    ["scale=1", "scale=2"],
    ["impl=warp"],
    ["impl=none"],
    ["impl"],
    ["=1"],
    ["=", "=="],
    [""],
    ["dim=-1"],
    ["dim=1", "keepdim=true"],
    ["dim=9223372036854775807"],
    ["dim=9223372036854775808"],
    ["dim=-9223372036854775808"],
    ["stride=2,2", "padding=1,1", "dilation=1,1", "groups=1"],
    ["stride=", "padding=,", "dilation=1,,1"],
    ["size=" + ",".join(str(i) for i in range(1, 18))],
    ["kernel_size=3,3", "ceil_mode=True"],
    ["alpha=0.5", "beta=2"],
    ["eps=1e-5", "momentum=0.1", "training=false"],
    ["approximate=tanh"],
    ["approximate=none"],
    ["negative_slope=0.01"],
    ["dtype=float16"],
    ["dtype=torch.int32"],
    ["dtype=float64"],
    ["start=0", "end=4", "step=2"],
    ["split_sizes=2,2", "dim=0"],
    ["dims=0,1,2,3"],
    ["scale_factor=2.0", "align_corners=false"],
    ["pad=1,1,2,2", "value=0"],
    ["padding_idx=-1"],
    ["bogus=1"],
    ["a=1", "b=2", "c=3", "d=4", "e=5", "f=6", "g=7", "h=8", "i=9"],
    ["x" * 300 + "=1"],
    ["scale=" + "9" * 400],
    ["causal=top_left", "enable_gqa=true"],
    ["causal=bottom_right", "impl=fused"],
    ["causal=maybe", "enable_gqa=2"],
]


def op_names(root):
    path = os.path.join(root, "src", "ops", "ops.def")
    with open(path) as f:
        return re.findall(r"^OP\((\w+)\)", f.read(), re.M)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus_op_args")
    os.makedirs(out, exist_ok=True)
    names = op_names(os.path.dirname(here))
    count = 0
    for row, name in enumerate(names):
        for a, args in enumerate(ARGS):
            pick = PICKS[a % len(PICKS)]
            n_in_sel = a % 3  # min_inputs + this % (max - min + 1)
            short = a % 16
            header = bytes([row, n_in_sel, pick[0], pick[1], short])
            body = b"\0".join(s.encode() for s in args)
            with open(os.path.join(out, "%s_%02d" % (name, a)), "wb") as f:
                f.write(header + body)
            count += 1
    print("wrote %d files for %d ops to %s" % (count, len(names), out))


if __name__ == "__main__":
    main()
