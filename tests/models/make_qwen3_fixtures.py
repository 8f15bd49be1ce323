#!/usr/bin/env python3
"""Makes the Qwen3 fixtures of tests/models/ (run on a machine with PyTorch,
transformers and tokenizers; the device's python3 has them):

    python3 tests/models/make_qwen3_fixtures.py tests/models [--gpt2-tiny tests/data/tokenizers/tiny]

Writes
  qwen3/            a tiny random-initialised Qwen3ForCausalLM (2 layers, hidden 64,
                    4 query heads / 2 KV heads of 16, tied embeddings, fp32):
                    config.json, generation_config.json, model.safetensors,
                    tokenizer.json, tokenizer_config.json, and PyTorch's fp32 references:
      <p>_ids.npy              int32 [L]         the prompt's ids (add_special_tokens=False)
      <p>_prefill_logits.npy   float32 [L, V]    logits of every prompt position
      <p>_gen_ids.npy          int32 [n]         greedy continuation (generate, do_sample=False,
                                                 max_new_tokens=24, KV cache); n < 24 when it stopped at EOS
      <p>_step_logits.npy      float32 [n, V]    the logits that chose each generated id: row 0 is
                                                 the prefill's last row, row i the decode step fed gen_ids[i-1]
      fixtures.json            prompts, ids, continuations (text), margins, tolerances
      tokenizer_cases.json     tricky strings with HF's ids and decoded text (ASCII JSON)
      VERSIONS.json            library versions
  qwen3_untied/     the same shapes with tie_word_embeddings false (its own lm_head.weight),
                    the same tokenizer; <p>_ids/_prefill_logits/_gen_ids for two prompts, fixtures.json
and, with --gpt2-tiny DIR, DIR/cases.json: the same strings through that GPT-2
style tokenizer.json.

The tokenizer is a byte-level BPE trained here with `tokenizers` on the small
corpus below, laid out like Qwen2/Qwen3's tokenizer.json (NFC, Qwen2's Split
regex, ByteLevel without regex, BPE without unk or byte fallback, the special
tokens after the BPE vocab). Parameters are drawn wider than HF's init (std
0.2, norm weights in [0.5, 1.5]) so that logits are far from uniform; the seed
is the first whose greedy choices all beat the runner-up by MARGIN.
"""
import argparse
import json
import os
import random
import sys

import numpy as np
import safetensors
import tokenizers
import torch
import transformers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
BPE_VOCAB = 1021  # + 3 special tokens = 1024
MARGIN = 1e-2     # wanted top-1 / top-2 logit gap at every greedy step (1e-3 at the least)
NEW_TOKENS = 24

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's a sentence that uses every letter.",
    "I'm sure you'll like it, but we've got to go: they're waiting and he'd said he'd come.",
    "DON'T SHOUT! I can't hear you, and it isn't polite. She's here; you'd better ask her.",
    "In 1984 there were 3 cats, 12 dogs and 1234567 ants. Call 555-0199 or +49 30 1234 5678.",
    "The price is $19.99 (about 18,50 EUR) and the date is 2024-03-15 at 10:45:30.",
    "Machine learning models run inference on the GPU. A decoder predicts the next token.",
    "Attention is all you need: queries, keys and values; softmax(QK^T / sqrt(d)) V.",
    "Once upon a time, a small model learned to speak. It spoke slowly, then quickly.",
    "Hello world! Hello, world. hello WORLD? Goodbye, cruel world...",
    "The weather today is sunny with a chance of rain in the afternoon and evening.",
    "We're testing tokenizers: whitespace   runs,\ttabs,\nnewlines\n\n and\r\nWindows line ends.",
    "def forward(self, x):\n    h = self.norm(x)\n    return x + self.mlp(h)  # residual\n",
    "for (int i = 0; i < n; i++) {\n\tsum += a[i] * b[i];\n}\nreturn sum;\n",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)\nprint(x.shape)\n",
    "if (a && b || !c) { printf(\"%d\\n\", a->b[0]); } else { exit(1); }",
    "SELECT name, age FROM users WHERE age >= 21 ORDER BY name ASC;",
    "<html><body><p class=\"note\">Hi &amp; bye</p></body></html>",
    "{\"key\": [1, 2, 3], \"value\": null, \"ok\": true}",
    "Grüße aus München! Die Straße ist schön, aber der Bär schläft. Übermorgen fahren wir nach Köln.",
    "Ich möchte ein Stück Käse und zwei Brötchen, bitte. Das Wetter ist heute sehr schön.",
    "Où est la bibliothèque ? Ça va très bien, merci. L'été dernier, nous étions à Noël en forêt.",
    "Je m'appelle Hélène ; j'ai vingt-deux ans et j'habite à Montréal. C'est génial !",
    "¿Dónde está el baño? El niño comió piñata en la mañana. Señor Muñoz, ¡qué día!",
    "你好，世界！我们正在测试分词器。今天天气很好，我们去公园散步吧。",
    "人工智能模型在图形处理器上运行。这是一个小型的随机模型，用于测试。",
    "中文文本包括标点符号：逗号、句号。还有数字１２３和英文 mixed text 混合。",
    "日本語のテキストです。カタカナとひらがなと漢字。東京は大きな都市です。",
    "こんにちは、世界！今日はいい天気ですね。ありがとうございます。",
    "안녕하세요, 세계! 한국어 문장입니다. 오늘 날씨가 좋네요. 감사합니다.",
    "Emoji time 😀😃😄 👍 👍🏽 👍🏿 ❤️ 🍕 🎉 🚀 and families 👨‍👩‍👧‍👦 👩‍💻 flags 🇩🇪 🇫🇷 🇯🇵 🏳️‍🌈",
    "I ❤️ pizza 🍕 and 🍣 sushi! 😂😂😂 so good 👌✨",
    "Ελληνικά γράμματα, русский текст, עברית, العربية, हिन्दी, ไทย.",
    "Café, naïve, résumé, coöperate, façade, jalapeño, Zürich, Ångström, ÀÉÎÕÜ, ß ẞ.",
    "Math: x² + y² = z², ½ + ¼ = ¾, π ≈ 3.14159, ∑ ∫ √ ∞ ≠ ≤ ≥ ± × ÷ → ⇒ ∈ ∀ ∃.",
    "Punctuation!!! Really??? Yes... --- *** ### @@@ ~~~ ``` ''' \"\"\" <<< >>> ||| &&&",
    "URLs: https://example.com/path/to/page?query=1&other=two#frag and user@example.org",
    "Chat: <|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\nHello! How can I help?<|im_end|>",
]

WORDS = {
    "en": "the of and to in is it you that he was for on are with as his they be at one have this from or had by "
          "not word but what some we can out other were all there when up use your how said an each she which do "
          "their time if will way about many then them write would like so these her long make thing see him two "
          "has look more day could go come did number sound no most people my over know water than call first who "
          "may down side been now find any new work part take get place made live where after back little only "
          "round man year came show every good me give our under name very through just form sentence great think "
          "say help low line differ turn cause much mean before move right boy old too same tell does set three want "
          "air well also play small end put home read hand port large spell add even land here must big high such",
    "de": "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es an werden aus er "
          "hat dass sie nach wird bei einer um am sind noch wie einem über einen so zum war haben nur oder aber vor "
          "zur bis mehr durch man sein wurde sei Jahr Zeit Mann Frau Kind Haus Stadt Welt Tag Woche Monat Straße "
          "schön groß klein grün weiß müssen können dürfen mögen Übung Ärger Öl",
    "fr": "le de un être et à il avoir ne je son que se qui ce dans en du elle au pour pas que vous par sur faire plus "
          "dire me on mon lui nous comme mais pouvoir avec tout y aller voir en bien où sans tu ou leur homme si deux "
          "mari moi vouloir te femme venir quand grand celui si notre devoir là jour prendre même votre tout rien "
          "été très déjà après français élève père mère frère forêt hôtel garçon",
    "zh": "的 一 是 不 了 人 我 在 有 他 这 中 大 来 上 国 个 到 说 们 为 子 和 你 地 出 道 也 时 年 得 就 那 要 下 以 生 会 "
          "自 着 去 之 过 家 学 对 可 她 里 后 小 么 心 多 天 而 能 好 都 然 没 日 于 起 还 发 成 事 只 作 当 想 看 文 无",
    "ja": "これ それ あれ どれ ここ そこ 私 あなた 彼 彼女 日本 東京 大阪 学校 先生 学生 本 水 山 川 見る 食べる 行く "
          "来る する ある いる なる できる 言う 思う 新しい 古い 大きい 小さい",
    "ko": "나 너 우리 그 이 저 것 수 등 들 및 사람 때 년 한국 서울 학교 선생님 학생 책 물 산 강 보다 먹다 가다 오다 "
          "하다 있다 없다 되다 크다 작다",
}
EMOJI = ["😀", "😂", "🥲", "😍", "🤔", "👍", "👍🏻", "👍🏾", "🙏", "🔥", "✨", "🎉", "❤️", "💙", "🍕", "🍣", "🐍", "🦀",
         "🚀", "🌍", "👨‍👩‍👧", "👩‍🔬", "🧑‍🤝‍🧑", "🇺🇸", "🇨🇳", "🇰🇷", "1️⃣", "#️⃣"]

PROMPTS = [  # (name, text): short, so that the references stay small
    ("english", "The quick brown fox can't jump over 13 lazy dogs."),
    ("chat", "<|im_start|>user\nWhat's 2+2?<|im_end|>\n<|im_start|>assistant\n"),
    ("accents", "Grüße aus Köln, où êtes-vous?"),
    ("cjk", "你好，世界！日本語のテキスト。"),
    ("emoji", "I ❤️ 🍕 and 👨‍👩‍👧 🇫🇷!"),
    ("whitespace", "def f(x):\n\tif x  >  1:\n\t\treturn  x\n\n"),
]
UNTIED_PROMPTS = ["english", "emoji"]

CASES = [
    "", " ", "  ", "   leading", "trailing   ", "a  b   c    d", "  \t\n\n  ", "\r\n", "line1\r\nline2\n\n\nline3",
    "\t\ttabs\tand\t tabs", " \n \n", "a\x0b\x0cb", "a\u0085b\u2028c",
    "I'm", "DON'T", "you'll've", "She's here, they're not; we've, I'd, it'll", "it\u2019s curly", "it'\u017f long s",
    "1234567", "abc123def", "3.14159 and -42 and 1,000,000", "x\u00b2 \u00bd \u2460 \u0661\u0662\u0663",
    "你好，世界", "日本語のテキストです。カタカナ", "안녕하세요 세계", "混合 mixed 文本 text 123",
    "😀", "👨\u200d👩\u200d👧\u200d👦", "🇩🇪🇫🇷", "👍🏽👍🏿", "1\ufe0f\u20e3 keycap", "❤️ ❤", " 🏳️\u200d🌈 flag",
    "e\u0301", "cafe\u0301 vs caf\u00e9", "\u1100\u1161\u11a8", "\u0301 lone accent",
    "<|im_start|>user\nhi<|im_end|>", "<|endoftext|><|endoftext|>", "text<|im_end|>more", "<|im_start", "< |im_end|>",
    "!!!???...", "--- *** ===", "def f(x):\n    return x**2  # square\n", "if (a && b) { return a->c[0]; }",
    "\u00a0nbsp\u00a0", "ideographic\u3000space", "zero\u200bwidth", "\ufeffbom", "Ünïcödé ÀÉÎÕÜ ß ẞ",
    "Ελληνικά Русский עברית العربية", "https://example.com/path?q=1&r=2", "The quick brown fox can't jump.",
]


def corpus():
    rng = random.Random(0)
    lines = list(CORPUS)
    for lang, words in WORDS.items():
        w = words.split()
        sep = "" if lang in ("zh", "ja") else " "
        for _ in range(120):
            s = sep.join(rng.choice(w) for _ in range(rng.randint(4, 12)))
            if rng.random() < 0.3:
                s += " " + rng.choice(EMOJI)
            if rng.random() < 0.3:
                s += " " + str(rng.randint(0, 99999))
            lines.append(s + rng.choice([".", "!", "?", "。", ",", "\n", ""]))
    return lines


def train_tokenizer():
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False, ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=BPE_VOCAB, min_frequency=2, show_progress=False, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer=trainer)
    # the special tokens after the BPE vocab, as in Qwen's files
    tok.add_special_tokens([AddedToken(s, single_word=False, lstrip=False, rstrip=False, normalized=False,
                                       special=True) for s in SPECIALS])
    # Qwen2's exact layout (the bindings do not set every field of it)
    d = json.loads(tok.to_str())
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    d["normalizer"] = {"type": "NFC"}
    d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated", "invert": False}, bl]}
    d["post_processor"] = dict(bl)
    d["decoder"] = dict(bl)
    d["model"].update({"dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
                       "fuse_unk": False, "byte_fallback": False, "ignore_merges": False})
    tok = Tokenizer.from_str(json.dumps(d))
    n_bpe = len(d["model"]["vocab"])
    assert all(b in d["model"]["vocab"] for b in pre_tokenizers.ByteLevel.alphabet()), "a byte has no token"
    assert [t["id"] for t in d["added_tokens"]] == [n_bpe, n_bpe + 1, n_bpe + 2], d["added_tokens"]
    return tok


def save_tokenizer(tok, folder):
    os.makedirs(folder, exist_ok=True)
    tok.save(os.path.join(folder, "tokenizer.json"), pretty=True)
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    cfg = {
        "add_bos_token": False, "add_prefix_space": False,
        "added_tokens_decoder": {str(ids[s]): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                                               "single_word": False, "special": True} for s in SPECIALS},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "chat_template": "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                         "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
                         "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
        "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>", "errors": "replace",
        "model_max_length": 256, "pad_token": "<|endoftext|>", "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f, indent=1)


def tokenizer_cases(tok, hf, label):
    """HF's ids and decoded text for CASES; tok (the `tokenizers` object read
    from tokenizer.json) is the reference, hf (transformers' AutoTokenizer, or
    None) must agree with it."""
    out, disagree = [], 0
    for s in CASES:
        ids = tok.encode(s, add_special_tokens=False).ids
        text = tok.decode(ids, skip_special_tokens=False)
        case = {"text": s, "ids": ids, "decoded": text}
        if hf is not None:
            hid = hf.encode(s, add_special_tokens=False)
            htext = hf.decode(ids, skip_special_tokens=False)
            if hid != ids or htext != text:
                disagree += 1
                case.update(transformers_ids=hid, transformers_decoded=htext)
                print(f"{label}: transformers and tokenizers disagree on {s!r}: {hid} / {ids}, "
                      f"{htext!r} / {text!r}")
        out.append(case)
    print(f"{label}: {len(out)} cases, {disagree} where transformers' tokenizer disagrees with tokenizers")
    return {"tokenizer": "tokenizer.json", "reference": f"tokenizers {tokenizers.__version__} "
            "Tokenizer.encode(text, add_special_tokens=False).ids / decode(ids, skip_special_tokens=False)",
            "transformers_disagreements": disagree, "cases": out}


def dump_json(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, ensure_ascii=True, indent=1)


def widen(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied lm_head.weight is embed_tokens.weight: listed once
            if "norm" in name:
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)


def make_config(vocab, tie, ids):
    kw = dict(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, head_dim=16, hidden_act="silu", max_position_embeddings=256,
              initializer_range=0.2, rms_norm_eps=1e-6, use_cache=True, tie_word_embeddings=tie,
              attention_bias=False, use_sliding_window=False, bos_token_id=ids["<|endoftext|>"],
              eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    # transformers 5 keeps rope_theta under rope_parameters (4.x: a top-level rope_theta)
    cfg = Qwen3Config(**kw, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    rp = getattr(cfg, "rope_parameters", None)
    if getattr(cfg, "rope_theta", 1000000.0) != 1000000.0 or not isinstance(rp, dict) or \
            rp.get("rope_theta") != 1000000.0:  # a 4.x config: rope_parameters is no key of its
        cfg = Qwen3Config(**kw, rope_theta=1000000.0)
    return cfg


def check_rope(model):
    inv = getattr(getattr(model.model, "rotary_emb", None), "inv_freq", None)
    if inv is None:
        print("warning: no model.model.rotary_emb.inv_freq to check rope_theta on")
        return
    want = 1.0 / (1000000.0 ** (torch.arange(0, 16, 2, dtype=torch.float32) / 16))
    assert torch.allclose(inv.float().cpu(), want, rtol=1e-5), f"rope inv_freq {inv}, want {want}"


def build(vocab, tie, ids, seed):
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(make_config(vocab, tie, ids)).to(torch.float32)
    if tie:
        model.tie_weights()
    widen(model, seed)
    if tie:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "not tied"
    else:
        assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr(), "tied"
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.bos_token_id = ids["<|endoftext|>"]
    model.generation_config.do_sample = False
    model.eval()
    check_rope(model)
    return model


@torch.no_grad()
def run_prompt(model, ids):
    x = torch.tensor([ids], dtype=torch.long)
    prefill = model(input_ids=x).logits[0].float()
    out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False,
                         max_new_tokens=NEW_TOKENS, use_cache=True, output_logits=True,
                         return_dict_in_generate=True)
    gen = out.sequences[0, len(ids):].tolist()
    steps = torch.stack([l[0].float() for l in out.logits])  # raw logits (output_logits), one row per new id
    assert steps.shape[0] == len(gen), (steps.shape, len(gen))
    top = torch.topk(steps, 2, dim=-1)
    assert top.indices[:, 0].tolist() == gen, "greedy ids are not the argmax of the step logits"
    margins = (top.values[:, 0] - top.values[:, 1]).tolist()
    # the KV-cache steps against one forward over prompt + continuation, no cache
    full = model(input_ids=torch.tensor([ids + gen[:-1]], dtype=torch.long)).logits[0].float()
    cache_diff = (full[len(ids) - 1:] - steps).abs().max().item()
    return {"prefill": prefill.numpy(), "gen": gen, "steps": steps.numpy(), "margins": margins,
            "cache_diff": cache_diff, "prefill_diff": (prefill[-1] - steps[0]).abs().max().item()}


def pick_seed(vocab, tie, ids, prompts, first_seed):
    best = None
    for seed in range(first_seed, first_seed + 64):
        model = build(vocab, tie, ids, seed)
        res = {name: run_prompt(model, pid) for name, pid in prompts}
        m = min(min(r["margins"]) for r in res.values())
        print(f"{'tied' if tie else 'untied'} seed {seed}: min greedy margin {m:.5f}")
        if best is None or m > best[2]:
            best = (seed, model, m, res)
        if m > MARGIN:
            break
    assert best[2] > 1e-3, f"no seed gives greedy margins above 1e-3 (best {best[2]})"
    return best


def save_refs(folder, name, text, ids, r, tok, steps=True):
    np.save(os.path.join(folder, f"{name}_ids.npy"), np.asarray(ids, dtype=np.int32))
    np.save(os.path.join(folder, f"{name}_prefill_logits.npy"), np.ascontiguousarray(r["prefill"], dtype=np.float32))
    np.save(os.path.join(folder, f"{name}_gen_ids.npy"), np.asarray(r["gen"], dtype=np.int32))
    entry = {"name": name, "text": text, "ids": ids, "gen_ids": r["gen"],
             "continuation": tok.decode(r["gen"], skip_special_tokens=False),
             "stopped_at_eos": len(r["gen"]) < NEW_TOKENS, "min_margin": min(r["margins"]),
             "files": {"ids": f"{name}_ids.npy", "prefill_logits": f"{name}_prefill_logits.npy",
                       "gen_ids": f"{name}_gen_ids.npy"}}
    if steps:
        np.save(os.path.join(folder, f"{name}_step_logits.npy"), np.ascontiguousarray(r["steps"], dtype=np.float32))
        entry["files"]["step_logits"] = f"{name}_step_logits.npy"
    print(f"  {name}: {len(ids)} prompt ids, {len(r['gen'])} generated, min margin {min(r['margins']):.5f}, "
          f"KV cache vs full forward {r['cache_diff']:.2e}, prefill vs step 0 {r['prefill_diff']:.2e}: "
          f"{entry['continuation']!r}")
    return entry


def save_model(model, folder, tok, picked, prompts, texts, steps):
    seed, _, m, res = picked
    model.save_pretrained(folder, safe_serialization=True)
    save_tokenizer(tok, folder)
    entries = [save_refs(folder, n, texts[n], pid, res[n], tok, steps) for n, pid in prompts]
    dump_json({"seed": seed, "min_margin": m, "max_new_tokens": NEW_TOKENS, "atol": 1e-3, "rtol": 1e-3,
               "eos_token_id": model.generation_config.eos_token_id,
               "note": "generate(do_sample=False, use_cache=True); step_logits row i chose gen_ids[i] "
                       "(row 0 = the last prefill row)", "prompts": entries},
              os.path.join(folder, "fixtures.json"))
    from safetensors import safe_open
    with safe_open(os.path.join(folder, "model.safetensors"), "pt") as f:
        print(f"  {folder}: safetensors keys {len(list(f.keys()))}, lm_head.weight stored: "
              f"{'lm_head.weight' in f.keys()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--gpt2-tiny", help="a folder with a GPT-2 style tokenizer.json: writes its cases.json")
    a = ap.parse_args()
    torch.manual_seed(0)
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "tokenizers": tokenizers.__version__, "safetensors": safetensors.__version__, "numpy": np.__version__}
    print("versions", json.dumps(versions))
    qdir, udir = os.path.join(a.root, "qwen3"), os.path.join(a.root, "qwen3_untied")

    tok = train_tokenizer()
    save_tokenizer(tok, qdir)
    tok = Tokenizer.from_file(os.path.join(qdir, "tokenizer.json"))  # the reference is the file as saved
    vocab = tok.get_vocab_size(with_added_tokens=True)
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    print(f"tokenizer: vocab {vocab} (BPE {vocab - 3}), specials {ids}")
    try:
        hf = AutoTokenizer.from_pretrained(qdir)
        print("transformers tokenizer:", type(hf).__name__)
    except Exception as e:  # the tokenizers reference still stands
        print("AutoTokenizer failed:", repr(e))
        hf = None
    dump_json(tokenizer_cases(tok, hf, "qwen3"), os.path.join(qdir, "tokenizer_cases.json"))
    if a.gpt2_tiny:
        try:
            t2 = Tokenizer.from_file(os.path.join(a.gpt2_tiny, "tokenizer.json"))
            dump_json(tokenizer_cases(t2, None, "gpt2-tiny"), os.path.join(a.gpt2_tiny, "cases.json"))
        except Exception as e:
            print("gpt2-tiny cases failed:", repr(e))

    texts = dict(PROMPTS)
    prompts = [(n, tok.encode(t, add_special_tokens=False).ids) for n, t in PROMPTS]
    if hf is not None:
        for n, pid in prompts:
            assert hf.encode(texts[n], add_special_tokens=False) == pid, f"prompt {n}: transformers disagrees"
    picked = pick_seed(vocab, True, ids, prompts, 0)
    print(f"qwen3: seed {picked[0]}, min greedy margin {picked[2]:.5f}")
    save_model(picked[1], qdir, tok, picked, prompts, texts, True)

    uprompts = [(n, pid) for n, pid in prompts if n in UNTIED_PROMPTS]
    picked_u = pick_seed(vocab, False, ids, uprompts, 1000)
    print(f"qwen3_untied: seed {picked_u[0]}, min greedy margin {picked_u[2]:.5f}")
    save_model(picked_u[1], udir, tok, picked_u, uprompts, texts, False)

    with open(os.path.join(qdir, "VERSIONS.json"), "w") as f:
        json.dump(versions, f, indent=1)
    print(f"MIN_MARGIN qwen3 {picked[2]:.6f} qwen3_untied {picked_u[2]:.6f}")


if __name__ == "__main__":
    sys.exit(main())
