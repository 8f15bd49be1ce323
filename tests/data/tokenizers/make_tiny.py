#!/usr/bin/env python3
"""Writes tests/data/tokenizers/tiny/tokenizer.json: a GPT-2 style byte-level
BPE (ids 0..255 are the bytes, in GPT-2's bytes_to_unicode order of bytes,
id = byte value) with nine merges that spell "Hello" and " world", and
<|endoftext|> as a special added token. By hand: "Hello world" -> 262 264,
"<|endoftext|>" -> 265."""
import json, os

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))

B = bytes_to_unicode()
vocab = {B[b]: b for b in range(256)}
merges = [("H", "e"), ("l", "l"), ("He", "ll"), ("o", "r"), ("\u0120", "w"), ("l", "d"), ("Hell", "o"),
          ("\u0120w", "or"), ("\u0120wor", "ld")]
for a, b in merges:
    vocab[a + b] = len(vocab)
tok = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
              "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": vocab, "merges": [a + " " + b for a, b in merges]},
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny", "tokenizer.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(tok, f, ensure_ascii=False, indent=1)
    f.write("\n")
