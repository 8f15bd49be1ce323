#!/usr/bin/env python3
"""make_corpus_npy.py - writes the seed corpus for fuzz/fuzz_npy.c.

    python3 fuzz/make_corpus_npy.py [OUT_DIR]     (default: fuzz/corpus_npy)

Small .npy files, valid and near-valid, so that the fuzzer starts from the
inputs the parser has to get right rather than from nothing: every header
version, each dtype wgnn reads, scalars, rank 8, and the things it must
refuse (fortran_order True, big-endian, <f8, rank 9, a zero dim, truncated
or trailing data, a header length past the end, bad magic, version 4).
Standard library only: numpy is not needed. Deterministic: running it again
gives the same bytes. The files are committed; rerun after editing.
"""
import os
import struct
import sys

MAGIC = b"\x93NUMPY"


def header(d, major=1, pad=True, hlen=None):
    """Prefix plus dict text d, padded as numpy pads it (pad=True: spaces and
    '\\n' up to a multiple of 64) or left as it is; hlen overrides the length
    field."""
    body = d.encode("latin-1")
    prefix = 10 if major == 1 else 12
    if pad:
        total = prefix + len(body) + 1
        body += b" " * ((64 - total % 64) % 64) + b"\n"
    n = len(body) if hlen is None else hlen
    length = struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    return MAGIC + bytes([major, 0]) + length + body


def dict_text(descr, shape, fortran=False):
    if len(shape) == 1:
        s = "(%d,)" % shape[0]
    else:
        s = "(" + ", ".join(str(x) for x in shape) + ")"
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", s)


def f4(n, start=0.0):
    return struct.pack("<%df" % n, *[start + 0.5 * i for i in range(n)])


def i4(n):
    return struct.pack("<%di" % n, *[i * 7 - 3 for i in range(n)])


def f2(n):
    # float16 bits of 1.0, 1.5, 2.0, ... written directly (struct 'e' also works)
    return struct.pack("<%dH" % n, *[0x3c00 + 0x200 * i for i in range(n)])


def files():
    good = dict_text("<f4", (2, 3))
    yield "f4_2x3_v1", header(good) + f4(6)
    yield "f4_2x3_v2", header(good, major=2) + f4(6)
    yield "f4_2x3_v3", header(good, major=3) + f4(6)
    yield "i4_3", header(dict_text("<i4", (3,))) + i4(3)
    yield "f2_scalar", header(dict_text("<f2", ())) + f2(1)
    yield "f4_scalar_v2", header(dict_text("<f4", ()), major=2) + f4(1)
    yield "f2_2x2", header(dict_text("<f2", (2, 2))) + f2(4)
    yield "f4_rank8", header(dict_text("<f4", (1, 1, 1, 1, 1, 1, 2, 2))) + f4(4)
    yield "f4_sdpa_1x2x4x8", header(dict_text("<f4", (1, 2, 4, 8))) + f4(64)
    yield "f4_spaces_dquotes", header(
        '  {\n "fortran_order" : False ,\t"shape" :\n( 2 ,\r\n 3 ) ,"descr":"<f4" ,\n}  ') + f4(6)
    yield "f4_no_pad_py2_longs", header(
        "{'shape': (2L, 3L), 'descr': '<f4', 'fortran_order': False}", pad=False) + f4(6)
    # near-valid: each is refused for one reason
    yield "bad_f4_fortran", header(dict_text("<f4", (2, 3), fortran=True)) + f4(6)
    yield "bad_f4_bigendian", header(dict_text(">f4", (2, 3))) + struct.pack(">6f", *range(6))
    yield "bad_f8", header(dict_text("<f8", (2,))) + struct.pack("<2d", 1.0, 2.0)
    yield "bad_rank9", header(dict_text("<f4", (1,) * 8 + (2,))) + f4(2)
    yield "bad_zero_dim", header(dict_text("<f4", (2, 0)))
    yield "bad_truncated", header(good) + f4(6)[:-1]
    yield "bad_trailing", header(good) + f4(6) + b"\0\0\0\0"
    yield "bad_hlen_past_end", header(good, hlen=60000) + f4(6)
    yield "bad_version4", MAGIC + bytes([4, 0]) + header(good)[8:] + f4(6)
    yield "bad_magic", b"\x93NUMPZ" + header(good)[6:] + f4(6)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus_npy")
    os.makedirs(out, exist_ok=True)
    count = 0
    for name, data in files():
        with open(os.path.join(out, name + ".npy"), "wb") as f:
            f.write(data)
        count += 1
    print("wrote %d files to %s" % (count, out))


if __name__ == "__main__":
    main()
