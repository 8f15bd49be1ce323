#!/usr/bin/env python3
"""A random-initialised decoder of Qwen3-0.6B's shape (hidden 1024, 28 layers,
16 query / 8 KV heads of 128, MLP 3072, vocab 151936, tied embeddings) and
PyTorch eager fp32 timings on CUDA (TF32 off, no torch.compile):

    python3 bench/torch_llm.py [--prompt 512] [--iters 20] [--decode 32] [--all-logits] [--save DIR]

Prints one JSON line per measurement:
  phase "prefill": one forward over --prompt random ids (use_cache=True, logits
                   of the last position only unless --all-logits); median_ms of --iters
  phase "decode":  single-token forwards with past_key_values after that prefill,
                   greedy, context --prompt .. --prompt + 4 + --decode (4 untimed warm-up
                   steps first); median_ms per token over --decode steps
--save DIR writes the model folder (config.json, generation_config.json, fp32
model.safetensors) with no tokenizer (none here has this vocab: give wgnn
--prompt-ids), plus prompt_ids.npy (int32 [P]), last_logits.npy (float32
[vocab], the prefill's last position) and greedy_ids.npy (int32, the ids the
decode loop chose: the first from the prefill). Weights are HF's init (std 0.02).
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--prompt", type=int, default=512)
p.add_argument("--iters", type=int, default=20)
p.add_argument("--decode", type=int, default=32)
p.add_argument("--all-logits", action="store_true", help="prefill computes the logits of every position")
p.add_argument("--save", metavar="DIR")
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)
dev = "cuda"
WARM = 4

kw = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
          num_key_value_heads=8, head_dim=128, hidden_act="silu", max_position_embeddings=40960, rms_norm_eps=1e-6,
          tie_word_embeddings=True, attention_bias=False, use_sliding_window=False, bos_token_id=151643,
          eos_token_id=151645)
# transformers 5 keeps rope_theta under rope_parameters; 4.x takes a top-level rope_theta
cfg = Qwen3Config(**kw, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
if getattr(cfg, "rope_theta", 1000000.0) != 1000000.0 or (getattr(cfg, "rope_parameters", None) or {}).get(
        "rope_theta") != 1000000.0:
    cfg = Qwen3Config(**kw, rope_theta=1000000.0)
with torch.device(dev):
    model = Qwen3ForCausalLM(cfg)
model = model.to(dev, torch.float32).eval()
assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "embeddings not tied"

ids = torch.randint(0, 151643, (1, a.prompt), generator=torch.Generator().manual_seed(1))
x = ids.to(dev)
keep = 0 if a.all_logits else 1  # 0: every position
info = {"side": "torch", "model": "qwen3_0.6b_shape", "attn": getattr(model.config, "_attn_implementation", None),
        "torch": torch.__version__, "transformers": transformers.__version__}


def timed(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    return r, (time.perf_counter() - t0) * 1e3


def emit(ts, **kv):
    print(json.dumps(dict(info, **kv, median_ms=float(np.median(ts)), min_ms=float(np.min(ts)), iters=len(ts))),
          flush=True)


with torch.inference_mode():
    for _ in range(3):
        model(input_ids=x, use_cache=True, logits_to_keep=keep)
    ts = [timed(lambda: model(input_ids=x, use_cache=True, logits_to_keep=keep))[1] for _ in range(a.iters)]
    emit(ts, phase="prefill", tokens=a.prompt, logits="all" if a.all_logits else "last")

    out = model(input_ids=x, use_cache=True, logits_to_keep=1)
    last = out.logits[0, -1].float().cpu().numpy()
    cache = out.past_key_values
    nxt = out.logits[:, -1].argmax(-1, keepdim=True)
    greedy, ts = [nxt.item()], []
    for i in range(WARM + a.decode):
        out, t = timed(lambda: model(input_ids=nxt, past_key_values=cache, use_cache=True))
        cache = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        greedy.append(nxt.item())
        if i >= WARM:
            ts.append(t)
    emit(ts, phase="decode", context=a.prompt, steps=a.decode)

if a.save:
    model.save_pretrained(a.save, safe_serialization=True, max_shard_size="10GB")
    np.save(os.path.join(a.save, "prompt_ids.npy"), ids[0].numpy().astype(np.int32))
    np.save(os.path.join(a.save, "last_logits.npy"), last.astype(np.float32))
    np.save(os.path.join(a.save, "greedy_ids.npy"), np.asarray(greedy, dtype=np.int32))
