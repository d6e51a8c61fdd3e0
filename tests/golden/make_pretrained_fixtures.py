#!/usr/bin/python3
"""Writes tiny Hugging Face checkpoints with expected outputs to tests/golden/pretrained/.

Run with Debian's interpreter, which sees python3-torch (1.13) and python3-numpy:
    /usr/bin/python3 tests/golden/make_pretrained_fixtures.py
Optionally also check every tokenizer.json with the npm package @huggingface/tokenizers:
    mkdir -p /tmp/tok-check && (cd /tmp/tok-check && npm install --no-save @huggingface/tokenizers)
    TOK_CHECK_DIR=/tmp/tok-check /usr/bin/python3 tests/golden/make_pretrained_fixtures.py

No transformers, no safetensors package: every forward is written by hand from the formulas of
Hugging Face transformers' modeling code (the source is named above each function) and the
safetensors files are written byte by byte. Each folder holds what a Hugging Face checkpoint
holds (config.json, model.safetensors, tokenizer.json, tokenizer_config.json) plus the same
weights rounded to float16 / bfloat16 (model.f16.safetensors, model.bf16.safetensors) and the
expectations (expected.json from the float32 weights, expected_f16.json / expected_bf16.json
from the 16-bit weights widened back), all computed in float64.

Before anything is written the script checks itself and stops on a mismatch:
  * every architecture's torch float64 forward (HF-shaped: rotate_half, repeat_kv, Conv1D,
    additive finfo.min causal mask) against an independent numpy float64 forward (per-pair
    rotation, per-head loops with kv head h // n_rep, element-wise causal test) to NUMPY_TOL;
  * the bfloat16 rounding by hand (round-to-nearest-even of the float32 bits' top half) against
    torch's .bfloat16(), and float16 numpy against torch;
  * every written safetensors file parsed back by the reader below equals its tensors bit for bit;
  * the greedy generation's top-2 logit margin is at least GEN_MARGIN_MIN at every step;
  * the tokenizer ids (a Python byte-level BPE below) against @huggingface/tokenizers, when
    TOK_CHECK_DIR is set.
Deterministic: weights are drawn after torch.manual_seed(crc32(folder name)) (make_fixtures'
seed_for), numbers are printed with '%.7g'.
"""
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_fixtures import seed_for  # noqa: E402
from lfm2_reference import lfm2_forward, lfm2_tensors, np_lfm2  # noqa: E402
from gemma4_reference import gemma4_forward, gemma4_tensors, np_gemma4  # noqa: E402

OUT_DIR = os.path.join(HERE, "pretrained")
SCRIPT = "tests/golden/make_pretrained_fixtures.py"

VOCAB = 96
HIDDEN = 32
LAYERS = 2
MAX_POS = 64
HEADS = 4
# Fixed inputs: a (1, 7) prompt and a (2, 5) batch (no padding). Ids cover 0, 95 and the
# tokenizers' special ids 94/95 on purpose; the model does not care what they mean.
IDS_1 = [[5, 17, 42, 88, 3, 61, 29]]
IDS_2 = [[95, 0, 33, 71, 12], [8, 8, 50, 94, 23]]
NEW_TOKENS = 6
# torch float64 against numpy float64: max|a - b| / max(1, max|b|) per tensor.
NUMPY_TOL = 1e-9
# Every greedy step's best logit must beat the second best by this much (float32 loaders agree).
GEN_MARGIN_MIN = 1e-3
SIG_FMT = "%.7g"
MAX_FOLDER_BYTES = 1 << 20

torch.set_num_threads(1)


# ================================================================================================
# Tokenizer: a small real byte-level BPE (GPT-2 style) in Hugging Face tokenizers' JSON format
# ================================================================================================
def bytes_to_unicode():
    """GPT-2's byte -> printable character table (openai/gpt-2 encoder.py, also tokenizers'
    ByteLevel): printable latin-1 bytes map to themselves, the others to U+0100 + n in order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) \
        + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}

# The 76 bytes the tiny vocabulary covers (a 96-entry vocabulary cannot hold all 256): space,
# newline, a little punctuation, digits, letters, and the bytes of the two emoji used below
# (U+1F917 = F0 9F A4 97, U+1F600 = F0 9F 98 80). Other bytes have no token: with unk_token null
# tokenizers drops them (as Hugging Face tokenizers' BPE does without an unk token).
ALPHABET_BYTES = sorted(set(b" !',-.?\n0123456789" + bytes(range(65, 91)) + bytes(range(97, 123))
                            + "\U0001F917\U0001F600".encode()))
BASE_VOCAB = 94  # ids 0..93: alphabet + merges; 94/95 are added (special) tokens
TRAIN_TEXT = (
    "Hello world! Hello there, hello world. The world is wide and the sea is deep.\n"
    "Hi there! It's a hello to the world, the sea and the hills.\n"
    "Hello hello world world the the there there sea sea.\n"
)
TOKENIZER_TEXTS = [
    "Hello world!",
    "Hi \U0001F917 there \U0001F600!",
    "The sea is deep.\nIt's 42, wide-ish?",
]
# GPT-2's pre-tokenizer pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# with Python re classes (no `regex` module on Debian's python): \p{L} -> [^\W\d_],
# \p{N} -> \d, [^\s\p{L}\p{N}] -> [^\s\w] or _. Identical on ASCII and emoji (all we encode).
GPT2_SPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def pre_tokenize(text):
    return ["".join(BYTE_CHAR[b] for b in piece.encode("utf-8")) for piece in GPT2_SPLIT.findall(text)]


def train_bpe():
    """Byte-level BPE training on TRAIN_TEXT: merge the most frequent adjacent pair (ties: the
    lexicographically smallest pair) until the base vocabulary has BASE_VOCAB entries."""
    alphabet = sorted(BYTE_CHAR[b] for b in ALPHABET_BYTES)  # GPT-2 orders by code point too
    assert set(TRAIN_TEXT.encode()) <= set(ALPHABET_BYTES)
    counts = {}
    for w in pre_tokenize(TRAIN_TEXT):
        counts[w] = counts.get(w, 0) + 1
    words = {w: list(w) for w in counts}
    vocab = list(alphabet)
    merges = []
    while len(vocab) < BASE_VOCAB:
        pairs = {}
        for w, syms in words.items():
            for a, b in zip(syms, syms[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + counts[w]
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        vocab.append(best[0] + best[1])
        for w, syms in words.items():
            words[w] = apply_merge(syms, best)
    assert len(set(vocab)) == len(vocab)
    return vocab, merges


def apply_merge(syms, pair):
    out, i = [], 0
    while i < len(syms):
        if i + 1 < len(syms) and (syms[i], syms[i + 1]) == pair:
            out.append(syms[i] + syms[i + 1])
            i += 2
        else:
            out.append(syms[i])
            i += 1
    return out


def bpe_encode(text, vocab_ids, ranks):
    """What tokenizers does for this tokenizer.json: split, byte-map, then repeatedly merge the
    adjacent pair of lowest rank; symbols without an id are dropped (unk_token null)."""
    ids = []
    for word in pre_tokenize(text):
        syms = list(word)
        while len(syms) > 1:
            cand = [(ranks[p], p) for p in zip(syms, syms[1:]) if p in ranks]
            if not cand:
                break
            syms = apply_merge(syms, min(cand)[1])
        ids += [vocab_ids[s] for s in syms if s in vocab_ids]
    return ids


def added_token(i, content, normalized):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": normalized, "special": True}


def byte_level(add_prefix_space, trim_offsets, use_regex):
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
            "use_regex": use_regex}


def make_tokenizer(style, vocab, merges):
    """Returns (tokenizer.json dict, tokenizer_config.json dict, encode(text) -> ids, specials)
    for style 'gpt2', 'llama' or 'qwen2', each shaped like that family's real files."""
    vocab_ids = {t: i for i, t in enumerate(vocab)}
    ranks = {m: r for r, m in enumerate(merges)}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
             "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False, "vocab": vocab_ids, "merges": [a + " " + b for a, b in merges]}
    normalizer = None
    if style == "gpt2":   # like openai-community/gpt2
        specials = {"<|endoftext|>": 94}
        added = [added_token(94, "<|endoftext|>", True)]
        post = byte_level(True, False, True)
        config = {"add_bos_token": False, "add_prefix_space": False, "bos_token": "<|endoftext|>",
                  "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
                  "clean_up_tokenization_spaces": False, "model_max_length": MAX_POS,
                  "tokenizer_class": "GPT2Tokenizer"}
        bos = None
    elif style == "llama":  # like Llama 3: byte-level BPE, BOS added by TemplateProcessing
        specials = {"<s>": 94, "</s>": 95}
        added = [added_token(94, "<s>", False), added_token(95, "</s>", False)]
        model["continuing_subword_prefix"] = None
        model["end_of_word_suffix"] = None
        post = {"type": "Sequence", "processors": [
            byte_level(True, False, True),
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {"<s>": {"id": "<s>", "ids": [94], "tokens": ["<s>"]}}}]}
        config = {"bos_token": "<s>", "eos_token": "</s>", "clean_up_tokenization_spaces": False,
                  "model_input_names": ["input_ids", "attention_mask"], "model_max_length": MAX_POS,
                  "tokenizer_class": "PreTrainedTokenizerFast"}
        bos = 94
    elif style == "qwen2":  # like Qwen2: NFC normalizer, merges in the newer [a, b] form
        specials = {"<|endoftext|>": 94}
        added = [added_token(94, "<|endoftext|>", False)]
        model["merges"] = [[a, b] for a, b in merges]
        normalizer = {"type": "NFC"}
        post = byte_level(False, False, False)
        config = {"add_prefix_space": False, "bos_token": None, "eos_token": "<|endoftext|>",
                  "pad_token": "<|endoftext|>", "unk_token": None, "errors": "replace",
                  "clean_up_tokenization_spaces": False, "split_special_tokens": False,
                  "model_max_length": MAX_POS, "tokenizer_class": "Qwen2Tokenizer"}
        bos = None
    else:
        raise ValueError(style)
    config["added_tokens_decoder"] = {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added}
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": normalizer, "pre_tokenizer": byte_level(False, True, True),
           "post_processor": post, "decoder": byte_level(True, True, True), "model": model}

    def encode(text):
        ids = bpe_encode(text, vocab_ids, ranks)
        return ([bos] if bos is not None else []) + ids

    return tok, config, encode, specials


def decode_ids(ids, vocab):
    return bytes(CHAR_BYTE[c] for i in ids if i < len(vocab) for c in vocab[i]).decode("utf-8")


# ================================================================================================
# Architectures: configs and the order in which weights are drawn
# ================================================================================================
def gpt2_tensors():
    """(HF name without the 'transformer.' prefix, shape, kind) in draw order; Conv1D weights
    are (in, out)."""
    E = HIDDEN
    t = [("wte.weight", (VOCAB, E), "embed"), ("wpe.weight", (MAX_POS, E), "pos")]
    for i in range(LAYERS):
        p = "h.%d." % i
        t += [(p + "ln_1.weight", (E,), "norm"), (p + "ln_1.bias", (E,), "bias"),
              (p + "attn.c_attn.weight", (E, 3 * E), "qk_conv"), (p + "attn.c_attn.bias", (3 * E,), "bias"),
              (p + "attn.c_proj.weight", (E, E), "conv"), (p + "attn.c_proj.bias", (E,), "bias"),
              (p + "ln_2.weight", (E,), "norm"), (p + "ln_2.bias", (E,), "bias"),
              (p + "mlp.c_fc.weight", (E, 4 * E), "conv"), (p + "mlp.c_fc.bias", (4 * E,), "bias"),
              (p + "mlp.c_proj.weight", (4 * E, E), "conv"), (p + "mlp.c_proj.bias", (E,), "bias")]
    t += [("ln_f.weight", (E,), "norm"), ("ln_f.bias", (E,), "bias")]
    return t


def llama_tensors(cfg):
    """(HF name, shape, kind) in draw order; nn.Linear weights are (out, in)."""
    E, I = cfg["hidden_size"], cfg["intermediate_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, mt = head_dim(cfg), cfg["model_type"]
    bias = mt == "qwen2"
    t = [("model.embed_tokens.weight", (VOCAB, E), "embed")]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        norm = "gemma_norm" if is_gemma(cfg) else "norm"  # Gemma scales by (1 + w)
        if mt != "olmo2":  # OLMo 2 has no pre-norms
            t += [(p + "input_layernorm.weight", (E,), norm)]
        if mt == "phi3":  # Phi3Attention.qkv_proj: [q; k; v] rows
            t += [(p + "self_attn.qkv_proj.weight", ((H + 2 * Hkv) * d, E), "qk_linear")]
        else:
            t += [(p + "self_attn.q_proj.weight", (H * d, E), "qk_linear"),
                  (p + "self_attn.k_proj.weight", (Hkv * d, E), "qk_linear"),
                  (p + "self_attn.v_proj.weight", (Hkv * d, E), "linear")]
        if bias:
            t += [(p + "self_attn.q_proj.bias", (H * d,), "bias"), (p + "self_attn.k_proj.bias", (Hkv * d,), "bias"),
                  (p + "self_attn.v_proj.bias", (Hkv * d,), "bias")]
        if mt in ("qwen3", "gemma3_text"):  # Qwen3RMSNorm / Gemma3RMSNorm(head_dim) on each head
            t += [(p + "self_attn.q_norm.weight", (d,), norm), (p + "self_attn.k_norm.weight", (d,), norm)]
        if mt == "olmo2":  # Olmo2RMSNorm over all heads
            t += [(p + "self_attn.q_norm.weight", (H * d,), "norm"), (p + "self_attn.k_norm.weight", (Hkv * d,), "norm")]
        t += [(p + "self_attn.o_proj.weight", (E, H * d), "linear"),
              (p + "post_attention_layernorm.weight", (E,), norm)]
        if is_gemma(cfg):
            t += [(p + "pre_feedforward_layernorm.weight", (E,), norm)]
        if mt == "olmo2" or is_gemma(cfg):
            t += [(p + "post_feedforward_layernorm.weight", (E,), norm)]
        if mt == "phi3":  # Phi3MLP.gate_up_proj: [gate; up] rows
            t += [(p + "mlp.gate_up_proj.weight", (2 * I, E), "linear")]
        else:
            t += [(p + "mlp.gate_proj.weight", (I, E), "linear"), (p + "mlp.up_proj.weight", (I, E), "linear")]
        t += [(p + "mlp.down_proj.weight", (E, I), "linear")]
    t += [("model.norm.weight", (E,), "gemma_norm" if is_gemma(cfg) else "norm")]
    if not cfg["tie_word_embeddings"]:
        t += [("lm_head.weight", (VOCAB, E), "head")]
    return t


def draw(shape, kind):
    """float32 weights, not on a grid (so float16 / bfloat16 rounding changes them). Scales give
    O(1) activations, peaked attention and spread-out logits."""
    r = torch.randn(*shape, dtype=torch.float32)
    fan_in = shape[0] if kind in ("conv", "qk_conv") else (shape[-1] if len(shape) == 2 else 1)
    if kind == "embed":
        return r * 1.0
    if kind == "pos":
        return r * 0.5
    if kind == "norm":
        return 1.0 + 0.2 * r
    if kind == "gemma_norm":  # Gemma's RMSNorm multiplies by (1 + w): the same spread around 1
        return 0.2 * r
    if kind == "bias":
        return 0.2 * r
    if kind in ("qk_conv", "qk_linear"):
        return r * (2.5 / math.sqrt(fan_in))
    if kind in ("conv", "linear"):
        return r * (1.0 / math.sqrt(fan_in))
    if kind == "head":
        return r * (3.0 / math.sqrt(fan_in))
    if kind == "conv_kernel":  # LFM2's depthwise (E, 1, K) kernel
        return r * 0.8
    raise ValueError(kind)


GPT2_CONFIG = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
    "bos_token_id": 94, "embd_pdrop": 0.1, "eos_token_id": 94, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": MAX_POS, "n_embd": HIDDEN,
    "n_head": HEADS, "n_inner": None, "n_layer": LAYERS, "n_positions": MAX_POS,
    "reorder_and_upcast_attn": False, "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False,
    "scale_attn_weights": True, "tie_word_embeddings": True, "torch_dtype": "float32",
    "use_cache": True, "vocab_size": VOCAB,
}
LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 94, "eos_token_id": 95, "head_dim": HIDDEN // HEADS, "hidden_act": "silu",
    "hidden_size": HIDDEN, "initializer_range": 0.02, "intermediate_size": 64,
    "max_position_embeddings": MAX_POS, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2,
    "pretraining_tp": 1, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "vocab_size": VOCAB,
}
QWEN2_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 94,
    "eos_token_id": 94, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "max_window_layers": LAYERS,
    "model_type": "qwen2", "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0,
    "sliding_window": MAX_POS, "tie_word_embeddings": True, "torch_dtype": "float32",
    "use_cache": True, "use_sliding_window": False, "vocab_size": VOCAB,
}
LLAMA3_CONFIG = dict(LLAMA_CONFIG, rope_theta=500000.0, rope_scaling={
    "factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
    "original_max_position_embeddings": 16, "rope_type": "llama3"})
# Linear ("position interpolation") RoPE scaling: every frequency divided by the factor.
LLAMA_LINEAR_CONFIG = dict(LLAMA_CONFIG, rope_theta=10000.0, rope_scaling={"factor": 4.0, "rope_type": "linear"})

# The newer families (transformers 5's modeling files; the Llama forward below takes each variant).
# Windows of 3 and 5 keys, so the 7-token inputs cross them.
QWEN3_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 94, "eos_token_id": 95, "head_dim": 16, "hidden_act": "silu", "hidden_size": HIDDEN,
    "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": MAX_POS,
    "max_window_layers": LAYERS, "model_type": "qwen3", "num_attention_heads": HEADS,
    "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": None,
    "rope_theta": 1000000.0, "sliding_window": None, "tie_word_embeddings": True, "torch_dtype": "float32",
    "use_cache": True, "use_sliding_window": False, "vocab_size": VOCAB,
}
# LFM2: a conv layer then an attention layer; intermediate_size 72 → int(2·72/3) = 48 → rounded up
# to block_multiple_of 40: 80 (Lfm2MLP).
LFM2_CONFIG = {
    "architectures": ["Lfm2ForCausalLM"], "block_auto_adjust_ff_dim": True, "block_ffn_dim_multiplier": 1.0,
    "block_multiple_of": 40, "bos_token_id": 94, "conv_L_cache": 3, "conv_bias": False, "eos_token_id": 95,
    "hidden_size": HIDDEN, "initializer_range": 0.02, "intermediate_size": 72,
    "layer_types": ["conv", "full_attention"], "max_position_embeddings": MAX_POS, "model_type": "lfm2",
    "norm_eps": 1e-05, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2,
    "pad_token_id": 0, "rope_theta": 1000000.0, "tie_word_embeddings": True, "torch_dtype": "float32",
    "use_cache": True, "vocab_size": VOCAB,
}
MISTRAL_CONFIG = {
    "architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 94, "eos_token_id": 95,
    "head_dim": HIDDEN // HEADS, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "mistral",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 3, "tie_word_embeddings": False,
    "torch_dtype": "float32", "use_cache": True, "vocab_size": VOCAB,
}
# Qwen2 with its sliding window on: layer 0 full (max_window_layers 1), layer 1 the 3 latest keys.
QWEN2_SLIDING_CONFIG = dict(QWEN2_CONFIG, use_sliding_window=True, sliding_window=3, max_window_layers=1)
SMOLLM3_CONFIG = {
    "architectures": ["SmolLM3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 94, "eos_token_id": 95, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "layer_types": ["full_attention"] * LAYERS, "max_position_embeddings": MAX_POS,
    "max_window_layers": LAYERS, "mlp_bias": False, "model_type": "smollm3", "no_rope_layer_interval": 2,
    "no_rope_layers": [1, 0], "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 0,
    "pretraining_tp": 1, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 2000000.0,
    "sliding_window": None, "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True,
    "use_sliding_window": False, "vocab_size": VOCAB,
}
OLMO2_CONFIG = {
    "architectures": ["Olmo2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": None,
    "eos_token_id": 95, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "olmo2",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 1,
    "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "torch_dtype": "float32", "use_cache": True, "vocab_size": VOCAB,
}
PHI3_CONFIG = {
    "architectures": ["Phi3ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 94, "embd_pdrop": 0.0,
    "eos_token_id": 95, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "phi3",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2,
    "original_max_position_embeddings": MAX_POS, "pad_token_id": 95, "partial_rotary_factor": 0.5,
    "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0,
    "sliding_window": 5, "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True,
    "vocab_size": VOCAB,
}

# Phi-4-mini's shape in small (microsoft/Phi-4-mini-instruct: Phi3ForCausalLM, partial_rotary_factor
# 0.75, 24 heads over 8 kv heads, tied embeddings, LongRoPE with original_max_position_embeddings 4096
# and max_position_embeddings 131072, rope_scaling written with "type"): hidden 64 (a whole number of
# Q8_0 blocks), 4 heads over 2 kv heads of 16 features, 12 of them rotated (6 pairs, each with its own
# short and long factor, float32-exact), max / original = 4 (attention factor sqrt(1 + ln 4 / ln 256)
# = sqrt(1.25)). original 256: llama.cpp pads its context to 256 and picks the short factors while
# the context is <= the original length.
PHI4_CONFIG = dict(PHI3_CONFIG, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                   partial_rotary_factor=0.75, max_position_embeddings=1024,
                   original_max_position_embeddings=256, sliding_window=262144, tie_word_embeddings=True,
                   rope_scaling={"type": "longrope", "short_factor": [1.0, 1.25, 1.5, 2.0, 3.25, 4.5],
                                 "long_factor": [1.5, 2.5, 4.0, 8.0, 12.75, 20.0]})

# Gemma 3 (text): sandwich norms with (1 + w), GeGLU, scaled embeddings, per-head q/k norms,
# query_pre_attn_scalar, layer 0 sliding (3 keys, local RoPE base) and layer 1 full (linear-scaled RoPE).
GEMMA3_CONFIG = {
    "architectures": ["Gemma3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attn_logit_softcapping": None, "bos_token_id": 94, "cache_implementation": "hybrid", "eos_token_id": 95,
    "final_logit_softcapping": None, "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": HIDDEN,
    "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "gemma3_text",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 0,
    "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 2.0, "rope_type": "linear"}, "rope_theta": 1000000.0, "sliding_window": 3,
    "sliding_window_pattern": 2, "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True,
    "vocab_size": VOCAB,
}


# Gemma 2: attention-logit and final-logit soft-capping, no q/k norms, one RoPE, every other layer sliding.
GEMMA2_CONFIG = {
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attn_logit_softcapping": 5.0, "bos_token_id": 94, "cache_implementation": "hybrid", "eos_token_id": 95,
    "final_logit_softcapping": 3.0, "head_dim": 8, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "gemma2",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 0,
    "query_pre_attn_scalar": 8, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000.0,
    "sliding_window": 3, "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True,
    "vocab_size": VOCAB,
}


# Gemma 4 (text): 4 layers sliding/full/sliding/full, head sizes 8 (sliding) and 16 (full, proportional
# RoPE rotating a quarter of it), a 3-key window, the last two layers sharing layers 0's and 1's keys and
# values (with the double-wide MLP), per-layer inputs of width 4, layer scalars, a final soft-cap.
GEMMA4_CONFIG = {
    "architectures": ["Gemma4ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attention_k_eq_v": False, "bos_token_id": 94, "enable_moe_block": False, "eos_token_id": 95,
    "final_logit_softcapping": 20.0, "global_head_dim": 16, "head_dim": 8,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": HIDDEN, "hidden_size_per_layer_input": 4,
    "initializer_range": 0.02, "intermediate_size": 48, "layer_types": [
        "sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    "max_position_embeddings": MAX_POS, "model_type": "gemma4_text", "moe_intermediate_size": None,
    "num_attention_heads": HEADS, "num_experts": None, "num_global_key_value_heads": None,
    "num_hidden_layers": 4, "num_key_value_heads": 2, "num_kv_shared_layers": 2, "pad_token_id": 0,
    "rms_norm_eps": 1e-06, "rope_parameters": {
        "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
    "sliding_window": 3, "tie_word_embeddings": True, "top_k_experts": None, "torch_dtype": "float32",
    "use_bidirectional_attention": None, "use_cache": True, "use_double_wide_mlp": True,
    "vocab_size": VOCAB, "vocab_size_per_layer_input": VOCAB,
}


# Granite: Llama with GQA and its four scalars (embedding_multiplier, residual_multiplier,
# attention_multiplier instead of 1/sqrt(head_dim), logits_scaling), none of them 1.
GRANITE_CONFIG = {
    "architectures": ["GraniteForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attention_multiplier": 0.3, "bos_token_id": 94, "embedding_multiplier": 3.0, "eos_token_id": 95,
    "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02, "intermediate_size": 64,
    "logits_scaling": 2.5, "max_position_embeddings": MAX_POS, "mlp_bias": False, "model_type": "granite",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 0,
    "residual_multiplier": 0.5, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "vocab_size": VOCAB,
}


# Ministral 3 (transformers 5 only: rope_parameters): YaRN with factor 64 / 4 = 16 (transformers'
# max / original), betas that put the ramp across the 4 pairs (correction dims 0 and 2), mscale 1
# over mscale_all_dim 0.5 (attention factor (1 + 0.1 ln 16) / (1 + 0.05 ln 16)), and Llama 4's query
# temperature over an original length of 4 (the 5-10-token inputs cross it twice), beta 0.5.
MINISTRAL3_CONFIG = {
    "architectures": ["Ministral3ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 94, "eos_token_id": 95,
    "head_dim": HIDDEN // HEADS, "hidden_act": "silu", "hidden_size": HIDDEN, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": MAX_POS, "model_type": "ministral3",
    "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": 2, "pad_token_id": 11,
    "rms_norm_eps": 1e-05, "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "float32",
    "use_cache": True, "vocab_size": VOCAB,
    "rope_parameters": {"beta_fast": 0.25, "beta_slow": 0.01, "factor": 16.0, "llama_4_scaling_beta": 0.5,
                        "mscale": 1.0, "mscale_all_dim": 0.5, "original_max_position_embeddings": 4,
                        "rope_theta": 10000.0, "rope_type": "yarn", "type": "yarn"},
}


def with_rope(cfg):
    """A transformers-5 config (rope_parameters) with rope_theta / rope_scaling beside it, as the
    reference forwards read them."""
    rp = cfg.get("rope_parameters")
    return cfg if rp is None else dict(cfg, rope_theta=rp["rope_theta"], rope_scaling=rp)


def query_temperature(cfg, T, dtype=torch.float64):
    """Ministral3Attention (_get_llama_4_attn_scale): 1 + beta * log(1 + floor(pos / original)) per
    position (T, 1); ones for every other family."""
    pos = torch.arange(T, dtype=dtype)[:, None]
    rp = cfg.get("rope_parameters") or {}
    if cfg["model_type"] != "ministral3":
        return torch.ones_like(pos)
    return 1 + rp["llama_4_scaling_beta"] * torch.log(1 + torch.floor(pos / rp["original_max_position_embeddings"]))


def is_gemma(cfg):
    return cfg["model_type"] in ("gemma2", "gemma3_text")


def is_local_gemma_layer(cfg, i):
    """Gemma2Config / Gemma3TextConfig: layer i slides unless (i + 1) % pattern == 0 (Gemma 2: 2)."""
    return is_gemma(cfg) and (i + 1) % cfg.get("sliding_window_pattern", 2) != 0


def layer_rope_cfg(cfg, i):
    """The RoPE settings of layer i: Gemma 3's sliding layers use rope_local_base_freq, unscaled."""
    if cfg["model_type"] == "gemma3_text" and is_local_gemma_layer(cfg, i):
        return dict(cfg, rope_theta=cfg["rope_local_base_freq"], rope_scaling=None)
    return cfg


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def rotary_dim(cfg):
    """Phi-3: int(head_dim * partial_rotary_factor) features rotate; the others pass through."""
    return int(head_dim(cfg) * cfg.get("partial_rotary_factor", 1.0))


def layer_windows(cfg):
    """Each layer's sliding window (None = full), as the configs' __post_init__ and layer_types say."""
    L, mt = cfg["num_hidden_layers"], cfg["model_type"]
    if mt in ("mistral", "phi3"):
        return [cfg.get("sliding_window")] * L
    if is_gemma(cfg):
        return [cfg["sliding_window"] if is_local_gemma_layer(cfg, i) else None for i in range(L)]
    if mt in ("qwen2", "qwen3", "smollm3") and cfg.get("use_sliding_window") and cfg.get("sliding_window"):
        types = cfg.get("layer_types") or ["sliding_attention" if i >= cfg["max_window_layers"] else "full_attention"
                                           for i in range(L)]
        return [cfg["sliding_window"] if t == "sliding_attention" else None for t in types]
    return [None] * L


def rope_layers(cfg):
    """SmolLM3Attention.use_rope = config.no_rope_layers[layer_idx]; RoPE everywhere otherwise."""
    return cfg.get("no_rope_layers") or [1] * cfg["num_hidden_layers"]


def as_transformers5(cfg):
    """The same config as transformers 5 writes it: rope_theta / rope_scaling (and Phi-3's
    partial_rotary_factor) move into rope_parameters."""
    out = {k: v for k, v in cfg.items() if k not in ("rope_theta", "rope_scaling", "partial_rotary_factor", "rope_local_base_freq")}
    rp = {"rope_type": "default"}
    rp.update(cfg.get("rope_scaling") or {})
    if "type" in rp:  # rope_scaling's older spelling of rope_type
        rp["rope_type"] = rp.pop("type")
    rp["rope_theta"] = cfg["rope_theta"]
    if "partial_rotary_factor" in cfg:
        rp["partial_rotary_factor"] = cfg["partial_rotary_factor"]
    if cfg["model_type"] == "gemma3_text":  # one entry per layer type
        rp = {"full_attention": rp, "sliding_attention": {"rope_type": "default", "rope_theta": cfg["rope_local_base_freq"]}}
    out["rope_parameters"] = rp
    out["transformers_version"] = "5.17.0"
    out["dtype"] = out.pop("torch_dtype")
    return out


# ================================================================================================
# Reference forwards in torch, shaped like Hugging Face transformers' eager code
# ================================================================================================
def gelu_new(x):
    # transformers/activations.py NewGELUActivation:
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_forward(w, ids, cfg, hooks=None):
    """transformers/models/gpt2/modeling_gpt2.py, GPT2LMHeadModel in eval mode (dropout off),
    no cache, no attention_mask. w: names without the 'transformer.' prefix. hooks (activation
    patching, make_interp_fixtures.py): {"resid": f(i, h) -> h on the stream entering block i,
    "z": f(i, z) -> z on the heads' z (B, H, T, d) before the output projection, "mlp": f(i, m) -> m on
    the MLP branch as it is added to the stream (after a post-norm; make_gradient_fixtures.py)}."""
    hooks = hooks or {}
    E, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    d = E // H
    B, T = ids.shape
    # GPT2Model.forward: position_ids = arange(T); hidden = wte(input_ids) + wpe(position_ids)
    h = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(T)]
    hidden, attn = [], []
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))  # the attn.bias buffer's [:T, :T]
    for i in range(cfg["n_layer"]):
        p = "h.%d." % i
        if "resid" in hooks:
            h = hooks["resid"](i, h)
        hidden.append(h)                      # all_hidden_states += (hidden_states,) before the block
        # GPT2Block: residual + attn(ln_1(x)); residual + mlp(ln_2(x))
        x = torch.nn.functional.layer_norm(h, (E,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        # Conv1D.forward: addmm(bias, x, weight) with weight (in, out)
        qkv = x @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(E, dim=2)
        # _split_heads: (B, T, H, d) -> (B, H, T, d)
        q, k, v = (t.view(B, T, H, d).permute(0, 2, 1, 3) for t in (q, k, v))
        # _attn (eager): scores / sqrt(d); where(causal, scores, finfo.min); softmax
        s = q @ k.transpose(-1, -2) / (float(d) ** 0.5)
        s = torch.where(causal, s, torch.tensor(torch.finfo(s.dtype).min, dtype=s.dtype))
        a = torch.softmax(s, dim=-1)
        attn.append(a)
        z = hooks["z"](i, a @ v) if "z" in hooks else a @ v
        o = z.permute(0, 2, 1, 3).reshape(B, T, E)  # _merge_heads
        o = o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = h + o
        x = torch.nn.functional.layer_norm(h, (E,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = gelu_new(x @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        m = m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        h = h + (hooks["mlp"](i, m) if "mlp" in hooks else m)
    h = torch.nn.functional.layer_norm(h, (E,), w["ln_f.weight"], w["ln_f.bias"], eps)
    hidden.append(h)                          # after ln_f (replaces the last block's raw output)
    logits = h @ w["wte.weight"].T            # lm_head tied to wte
    return {"logits": logits, "attention": attn, "hidden_states": hidden}


def rope_inv_freq(cfg, dtype=torch.float64):
    """transformers/modeling_rope_utils.py: _compute_default_rope_parameters
    (inv_freq = 1 / base^(arange(0, dim, 2) / dim); attention_factor 1.0) and, for rope_type
    'llama3', _compute_llama3_parameters. transformers evaluates this in float32; here float64."""
    d = rotary_dim(cfg)  # the rotated features (head_dim unless Phi-3's partial_rotary_factor)
    base = cfg["rope_theta"]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))
    rs = cfg.get("rope_scaling")
    if rs is None:
        return inv_freq
    if rope_type(rs) == "linear":  # _compute_linear_scaling_rope_parameters: inv_freq / factor
        return inv_freq / rs["factor"]
    if rope_type(rs) == "yarn":  # _compute_yarn_parameters (factor = max / original when given)
        orig = rs.get("original_max_position_embeddings", cfg["max_position_embeddings"])
        factor = cfg["max_position_embeddings"] / orig if "original_max_position_embeddings" in rs else rs["factor"]

        def corr(rot):
            return (d * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))
        low, high = corr(rs.get("beta_fast") or 32), corr(rs.get("beta_slow") or 1)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(d // 2, dtype=dtype) - low) / (high - low), 0, 1)
        extra_factor = 1 - ramp
        return inv_freq / factor * (1 - extra_factor) + inv_freq * extra_factor
    if rope_type(rs) == "longrope":  # _compute_longrope_parameters (seq_len <= original: short_factor)
        ext = torch.tensor(rs["short_factor"], dtype=dtype)
        return 1.0 / (ext * base ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))
    assert rope_type(rs) == "llama3"
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old_context_len = rs["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low
    high_freq_wavelen = old_context_len / high
    wavelen = 2 * math.pi / inv_freq
    # wavelen < high_freq_wavelen: do nothing; wavelen > low_freq_wavelen: divide by factor
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # otherwise interpolate between the two with a smooth factor
    smooth_factor = (old_context_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def rope_type(rs):
    return rs.get("rope_type", rs.get("type"))


def rope_attention_factor(cfg):
    """_compute_longrope_parameters' attention_factor (cos and sin are multiplied by it): with
    original_max_position_embeddings (Phi-3 always has it) factor = max / original, and
    sqrt(1 + ln(factor) / ln(original)) when factor > 1; 1 for every other rope type."""
    rs = cfg.get("rope_scaling")
    if rs is not None and rope_type(rs) == "yarn":  # _compute_yarn_parameters' get_mscale
        factor = cfg["max_position_embeddings"] / rs["original_max_position_embeddings"]

        def mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        if rs.get("mscale") and rs.get("mscale_all_dim"):
            return mscale(factor, rs["mscale"]) / mscale(factor, rs["mscale_all_dim"])
        return mscale(factor)
    if rs is None or rope_type(rs) != "longrope":
        return 1.0
    if rs.get("attention_factor") is not None:
        return rs["attention_factor"]
    orig = cfg["original_max_position_embeddings"]
    factor = cfg["max_position_embeddings"] / orig
    return 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))


def rotate_half(x):
    # modeling_llama.rotate_half: cat(-x2, x1) of the two halves of the last axis
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    # modeling_llama.repeat_kv: (B, Hkv, T, d) -> (B, Hkv * n_rep, T, d), kv head j repeated n_rep times
    B, Hkv, T, d = x.shape
    return x[:, :, None, :, :].expand(B, Hkv, n_rep, T, d).reshape(B, Hkv * n_rep, T, d)


def rms_norm(x, weight, eps):
    # LlamaRMSNorm / Qwen2RMSNorm: weight * (x * rsqrt(mean(x^2, -1) + eps))
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def llama_forward(w, ids, cfg, hooks=None):
    """transformers/models/llama/modeling_llama.py LlamaForCausalLM (eager attention, no cache);
    Qwen2ForCausalLM (models/qwen2/modeling_qwen2.py) is the same plus q/k/v biases, and the
    newer families differ only where marked: Qwen3 (per-head q_norm/k_norm before RoPE),
    Mistral / Qwen2 sliding / Phi-3 (sliding_window_overlay: key j visible from query i iff
    i - w < j <= i), SmolLM3 (no RoPE where no_rope_layers[i] == 0), OLMo 2 (q_norm/k_norm over all
    heads; post_attention_layernorm / post_feedforward_layernorm on each sub-layer's output, no
    pre-norms), Phi-3 (fused qkv_proj / gate_up_proj, RoPE on the first rotary_dim features),
    Gemma 3 (models/gemma3/modeling_gemma3.py: embeddings x sqrt(hidden), RMSNorm with (1 + w)
    before and after attention and MLP, per-head q/k norms, query_pre_attn_scalar, GeGLU, sliding
    layers with their own RoPE base), Granite (models/granite/modular_granite.py: embeddings x
    embedding_multiplier, scores x attention_multiplier, each branch x residual_multiplier before
    its residual add, logits / logits_scaling). hooks: as gpt2_forward's ("mlp": the MLP branch as
    added to the stream, after Granite's multiplier)."""
    hooks = hooks or {}
    cfg = with_rope(cfg)
    E, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps, mt, rd = head_dim(cfg), cfg["rms_norm_eps"], cfg["model_type"], rotary_dim(cfg)
    B, T = ids.shape
    dtype = w["model.embed_tokens.weight"].dtype
    gemma = is_gemma(cfg)
    h = w["model.embed_tokens.weight"][ids]
    if gemma:  # Gemma3TextScaledWordEmbedding: × sqrt(hidden_size), a float32 constant
        h = h * torch.tensor(E ** 0.5, dtype=torch.float32).to(dtype)
    granite = mt == "granite"
    rm = cfg["residual_multiplier"] if granite else 1.0  # GraniteDecoderLayer: residual + branch * rm
    if granite:  # GraniteModel: inputs_embeds * embedding_multiplier
        h = h * cfg["embedding_multiplier"]
    hidden, attn = [], []
    i_idx, j_idx = torch.arange(T)[:, None], torch.arange(T)[None, :]

    def norm(x, weight):  # Gemma3RMSNorm scales by (1 + w)
        return rms_norm(x, 1.0 + weight if gemma else weight, eps)

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    def rope(x, layer):
        # LlamaRotaryEmbedding: freqs = position_ids x inv_freq; emb = cat(freqs, freqs); cos, sin
        # (Gemma 3: each layer type its own); apply_rotary_pos_emb (Phi-3: on x[..., :rotary_dim],
        # the rest passes): x * cos + rotate_half(x) * sin
        inv_freq = rope_inv_freq(layer_rope_cfg(cfg, layer)).to(dtype)
        freqs = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        af = rope_attention_factor(layer_rope_cfg(cfg, layer))  # LongRoPE: cos, sin x attention_scaling
        cos, sin = emb.cos() * af, emb.sin() * af  # (T, rd), broadcast over (B, H)
        x_rot, x_pass = x[..., :rd], x[..., rd:]
        return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)

    for i, window in enumerate(layer_windows(cfg)):
        p = "model.layers.%d." % i
        if "resid" in hooks:
            h = hooks["resid"](i, h)
        hidden.append(h)
        x = h if mt == "olmo2" else norm(h, w[p + "input_layernorm.weight"])
        if mt == "phi3":
            qkv = x @ w[p + "self_attn.qkv_proj.weight"].T
            q, k, v = qkv[..., :H * d], qkv[..., H * d:(H + Hkv) * d], qkv[..., (H + Hkv) * d:]
        else:
            q, k, v = lin(x, p + "self_attn.q_proj"), lin(x, p + "self_attn.k_proj"), lin(x, p + "self_attn.v_proj")
        if mt == "olmo2":  # Olmo2Attention: q_norm(q_proj(x)) over the whole projection
            q, k = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps), rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = (t.view(B, T, n, d).transpose(1, 2) for t, n in ((q, H), (k, Hkv), (v, Hkv)))
        if mt in ("qwen3", "gemma3_text"):  # Qwen3Attention / Gemma3Attention: q_norm(q_proj(x).view(..., head_dim))
            q, k = norm(q, w[p + "self_attn.q_norm.weight"]), norm(k, w[p + "self_attn.k_norm.weight"])
        if rope_layers(cfg)[i]:
            q, k = rope(q, i), rope(k, i)
        q = q * query_temperature(cfg, T, dtype)  # Ministral 3: after RoPE, q only
        k, v = repeat_kv(k, H // Hkv), repeat_kv(v, H // Hkv)
        # causal (and sliding) mask: 0 where visible, finfo.min elsewhere (added to the scores)
        visible = (j_idx <= i_idx) & ((i_idx - j_idx < window) if window else True)
        mask = torch.where(visible, torch.zeros((), dtype=dtype), torch.tensor(torch.finfo(dtype).min, dtype=dtype))
        scaling = cfg["query_pre_attn_scalar"] ** -0.5 if gemma else d ** -0.5
        if granite:  # GraniteAttention.scaling = config.attention_multiplier
            scaling = cfg["attention_multiplier"]
        s = (q @ k.transpose(2, 3)) * scaling
        if cfg.get("attn_logit_softcapping"):  # Gemma 2: s / c, tanh, * c, before the mask
            s = torch.tanh(s / cfg["attn_logit_softcapping"]) * cfg["attn_logit_softcapping"]
        s = s + mask
        a = torch.softmax(s, dim=-1)
        attn.append(a)
        z = hooks["z"](i, a @ v) if "z" in hooks else a @ v
        o = lin(z.transpose(1, 2).reshape(B, T, H * d), p + "self_attn.o_proj")
        if mt == "olmo2":
            h = h + rms_norm(o, w[p + "post_attention_layernorm.weight"], eps)
            x = h
        elif gemma:  # Gemma2/3DecoderLayer: post_attention_layernorm, then pre_feedforward_layernorm
            h = h + norm(o, w[p + "post_attention_layernorm.weight"])
            x = norm(h, w[p + "pre_feedforward_layernorm.weight"])
        else:
            h = h + o * rm
            x = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        # LlamaMLP: down(silu(gate(x)) * up(x)); Phi3MLP: gate, up = gate_up_proj(x).chunk(2)
        if mt == "phi3":
            gate, up = (x @ w[p + "mlp.gate_up_proj.weight"].T).chunk(2, dim=-1)
        else:
            gate, up = lin(x, p + "mlp.gate_proj"), lin(x, p + "mlp.up_proj")
        act = torch.nn.functional.gelu(gate, approximate="tanh") if gemma else torch.nn.functional.silu(gate)
        m = lin(act * up, p + "mlp.down_proj")
        m = norm(m, w[p + "post_feedforward_layernorm.weight"]) if mt == "olmo2" or gemma else m
        m = m * rm if granite else m
        h = h + (hooks["mlp"](i, m) if "mlp" in hooks else m)
    h = norm(h, w["model.norm.weight"])
    hidden.append(h)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    logits = h @ head.T
    if granite:  # GraniteForCausalLM: logits / config.logits_scaling
        logits = logits / cfg["logits_scaling"]
    if cfg.get("final_logit_softcapping"):  # Gemma2ForCausalLM: logits / c, tanh, * c
        logits = torch.tanh(logits / cfg["final_logit_softcapping"]) * cfg["final_logit_softcapping"]
    return {"logits": logits, "attention": attn, "hidden_states": hidden}


# ================================================================================================
# Independent numpy float64 forwards (no torch, different formulation) for the self-check
# ================================================================================================
def np_softmax_causal(scores_row, i):
    """Softmax of one query row over keys j <= i (keys after i get exactly 0)."""
    out = np.zeros_like(scores_row)
    z = scores_row[: i + 1]
    e = np.exp(z - z.max())
    out[: i + 1] = e / e.sum()
    return out


def np_gpt2(w, ids, cfg):
    E, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    d = E // H
    B, T = ids.shape

    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g + b

    def gelu(x):
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x * x * x)))

    h = np.stack([[w["wte.weight"][ids[b, t]] + w["wpe.weight"][t] for t in range(T)] for b in range(B)])
    hidden, attn = [], []
    for li in range(cfg["n_layer"]):
        p = "h.%d." % li
        hidden.append(h)
        x = ln(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        Wa, ba = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
        ctx = np.zeros((B, T, E))
        A = np.zeros((B, H, T, T))
        for b in range(B):
            for hh in range(H):
                cols = slice(hh * d, (hh + 1) * d)
                q = x[b] @ Wa[:, 0 * E:1 * E][:, cols] + ba[0 * E:1 * E][cols]
                k = x[b] @ Wa[:, 1 * E:2 * E][:, cols] + ba[1 * E:2 * E][cols]
                v = x[b] @ Wa[:, 2 * E:3 * E][:, cols] + ba[2 * E:3 * E][cols]
                for i in range(T):
                    A[b, hh, i] = np_softmax_causal(np.array([q[i] @ k[j] for j in range(T)]) / math.sqrt(d), i)
                    ctx[b, i, cols] = A[b, hh, i] @ v
        attn.append(A)
        h = h + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        x = ln(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        h = h + gelu(x @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
    h = ln(h, w["ln_f.weight"], w["ln_f.bias"])
    hidden.append(h)
    return {"logits": h @ w["wte.weight"].T, "attention": attn, "hidden_states": hidden}


def np_inv_freq(cfg):
    """The llama3 rule written per frequency with if/else (transformers' rule, other form)."""
    d = rotary_dim(cfg)
    out = []
    for m in range(d // 2):
        f = cfg["rope_theta"] ** (-(2.0 * m) / d)
        rs = cfg.get("rope_scaling")
        if rs is not None and rope_type(rs) == "linear":
            f = f / rs["factor"]
        elif rs is not None and rope_type(rs) == "longrope":
            f = f / rs["short_factor"][m]
        elif rs is not None and rope_type(rs) == "yarn":
            # the wavelength form: pair m's rotations over the original length decide its blend
            orig = rs["original_max_position_embeddings"]
            dim_of = lambda r: d * math.log(orig / (r * 2 * math.pi)) / (2 * math.log(cfg["rope_theta"]))  # noqa: E731
            lo, hi = max(math.floor(dim_of(rs["beta_fast"])), 0), min(math.ceil(dim_of(rs["beta_slow"])), d - 1)
            mix = 0.0 if m <= lo else 1.0 if m >= hi else (m - lo) / (hi - lo)  # 1: fully interpolated
            f = (1 - mix) * f + mix * f / (cfg["max_position_embeddings"] / orig)
        elif rs is not None:
            wavelen = 2 * math.pi / f
            old = rs["original_max_position_embeddings"]
            if wavelen < old / rs["high_freq_factor"]:
                pass
            elif wavelen > old / rs["low_freq_factor"]:
                f = f / rs["factor"]
            else:
                s = (old / wavelen - rs["low_freq_factor"]) / (rs["high_freq_factor"] - rs["low_freq_factor"])
                f = (1 - s) * f / rs["factor"] + s * f
        out.append(f)
    return np.array(out)


def np_llama(w, ids, cfg):
    """The Llama family per head and per query row, with each variant written out separately."""
    cfg = with_rope(cfg)
    E, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps, mt, rd = head_dim(cfg), cfg["rms_norm_eps"], cfg["model_type"], rotary_dim(cfg)
    B, T = ids.shape
    gemma = is_gemma(cfg)

    def rms(x, g):  # Gemma: the weight enters as (1 + g)
        return x / np.sqrt((x * x).sum(-1, keepdims=True) / x.shape[-1] + eps) * ((1.0 + g) if gemma else g)

    def rope(vec, pos, layer):
        """Rotate the pairs (m, m + rd/2) by angle pos * inv[m]; features from rd on pass."""
        inv = np_inv_freq(layer_rope_cfg(cfg, layer))
        rs = cfg.get("rope_scaling") or {}
        if rope_type(rs) == "longrope":  # the default attention factor, written out again
            ratio = cfg["max_position_embeddings"] / cfg["original_max_position_embeddings"]
            amp = math.sqrt(1 + math.log(ratio) / math.log(cfg["original_max_position_embeddings"]))
        elif rope_type(rs) == "yarn":  # mscale / mscale_all_dim, both given in the fixture
            ratio = cfg["max_position_embeddings"] / rs["original_max_position_embeddings"]
            amp = (1 + 0.1 * rs["mscale"] * math.log(ratio)) / (1 + 0.1 * rs["mscale_all_dim"] * math.log(ratio))
        else:
            amp = 1.0
        out = vec.copy()
        for m in range(rd // 2):
            c, s = amp * math.cos(pos * inv[m]), amp * math.sin(pos * inv[m])
            a, b = vec[m], vec[m + rd // 2]
            out[m], out[m + rd // 2] = a * c - b * s, b * c + a * s
        return out

    def weight(name, rows):
        if mt == "phi3" and name.endswith(("q_proj", "k_proj", "v_proj")):  # rows of the fused qkv_proj
            first = {"q_proj": 0, "k_proj": H * d, "v_proj": (H + Hkv) * d}[name.rsplit(".", 1)[1]]
            Wf = w[name.rsplit(".", 1)[0] + ".qkv_proj.weight"]
            return Wf[first + rows.start:first + rows.stop], None
        return w[name + ".weight"][rows], (w[name + ".bias"][rows] if name + ".bias" in w else None)

    def proj(x, name, rows):
        W, bias = weight(name, rows)
        y = x @ W.T
        return y if bias is None else y + bias

    def tau(t):  # Ministral 3's query temperature at position t (1 elsewhere)
        rp = cfg.get("rope_parameters")
        if mt != "ministral3":
            return 1.0
        return 1 + rp["llama_4_scaling_beta"] * math.log(1 + t // rp["original_max_position_embeddings"])

    h = np.stack([[w["model.embed_tokens.weight"][ids[b, t]] for t in range(T)] for b in range(B)])
    if gemma:
        h = h * float(np.float32(math.sqrt(E)))
    granite = mt == "granite"
    if granite:
        h = h * cfg["embedding_multiplier"]
    rm = cfg["residual_multiplier"] if granite else 1.0
    hidden, attn = [], []
    windows, ropes = layer_windows(cfg), rope_layers(cfg)
    for li in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % li
        hidden.append(h)
        x = h if mt == "olmo2" else rms(h, w[p + "input_layernorm.weight"])
        ctx = np.zeros((B, T, H * d))
        A = np.zeros((B, H, T, T))
        for b in range(B):
            if mt == "olmo2":  # the whole projections normed first, then cut into heads
                qa = rms(proj(x[b], p + "self_attn.q_proj", slice(0, H * d)), w[p + "self_attn.q_norm.weight"])
                ka = rms(proj(x[b], p + "self_attn.k_proj", slice(0, Hkv * d)), w[p + "self_attn.k_norm.weight"])
            for hh in range(H):
                g = hh // (H // Hkv)  # kv head of query head hh
                if mt == "olmo2":
                    q, k = qa[:, hh * d:(hh + 1) * d], ka[:, g * d:(g + 1) * d]
                else:
                    q = proj(x[b], p + "self_attn.q_proj", slice(hh * d, (hh + 1) * d))
                    k = proj(x[b], p + "self_attn.k_proj", slice(g * d, (g + 1) * d))
                v = proj(x[b], p + "self_attn.v_proj", slice(g * d, (g + 1) * d))
                if mt in ("qwen3", "gemma3_text"):
                    q, k = rms(q, w[p + "self_attn.q_norm.weight"]), rms(k, w[p + "self_attn.k_norm.weight"])
                if ropes[li]:
                    q = np.stack([rope(q[t], t, li) * tau(t) for t in range(T)])
                    k = np.stack([rope(k[t], t, li) for t in range(T)])
                for i in range(T):
                    row = np.array([q[i] @ k[j] for j in range(T)])
                    row = row * cfg["attention_multiplier"] if granite else row / math.sqrt(
                        cfg["query_pre_attn_scalar"] if gemma else d)
                    cap = cfg.get("attn_logit_softcapping")
                    if cap:
                        row = cap * np.tanh(row / cap)
                    lo = 0 if not windows[li] else max(0, i - windows[li] + 1)  # keys lo..i
                    row[:lo] = -np.inf
                    A[b, hh, i] = np_softmax_causal(row, i)
                    ctx[b, i, hh * d:(hh + 1) * d] = A[b, hh, i] @ v
        attn.append(A)
        o = ctx @ w[p + "self_attn.o_proj.weight"].T
        if mt == "olmo2":
            h = h + rms(o, w[p + "post_attention_layernorm.weight"])
            x = h
        elif gemma:
            h = h + rms(o, w[p + "post_attention_layernorm.weight"])
            x = rms(h, w[p + "pre_feedforward_layernorm.weight"])
        else:
            h = h + rm * o
            x = rms(h, w[p + "post_attention_layernorm.weight"])
        if mt == "phi3":
            Wgu = w[p + "mlp.gate_up_proj.weight"]
            I = Wgu.shape[0] // 2
            gate, up = x @ Wgu[:I].T, x @ Wgu[I:].T
        else:
            gate, up = x @ w[p + "mlp.gate_proj.weight"].T, x @ w[p + "mlp.up_proj.weight"].T
        if gemma:  # gelu, tanh form: 0.5·g·(1 + tanh(√(2/π)·(g + 0.044715·g³)))
            act = 0.5 * gate * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (gate + 0.044715 * gate ** 3)))
        else:
            act = gate / (1.0 + np.exp(-gate))
        m = (act * up) @ w[p + "mlp.down_proj.weight"].T
        h = h + (rms(m, w[p + "post_feedforward_layernorm.weight"]) if mt == "olmo2" or gemma else rm * m)
    h = rms(h, w["model.norm.weight"])
    hidden.append(h)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    logits = h @ head.T
    if granite:
        logits = logits / cfg["logits_scaling"]
    cap = cfg.get("final_logit_softcapping")
    return {"logits": cap * np.tanh(logits / cap) if cap else logits, "attention": attn, "hidden_states": hidden}


# ================================================================================================
# safetensors by hand
# ================================================================================================
DTYPES = {"F32": (np.dtype("<f4"), 4), "F16": (np.dtype("<f2"), 2), "BF16": (np.dtype("<u2"), 2)}


def to_bf16_bits(a32):
    """bfloat16 bits of float32 values: round-to-nearest-even of the top 16 bits (no NaN here)."""
    u = np.ascontiguousarray(a32, dtype="<f4").view("<u4").astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view("<f4")


def safetensors_bytes(tensors):
    """tensors: {name: (dtype, shape, raw little-endian bytes)}. Layout of the safetensors crate:
    u64 LE header length, compact JSON header ("__metadata__" first, then the tensors in data
    order = sorted by name since all share one dtype), padded with spaces to a multiple of 8,
    then the data back to back."""
    header = {"__metadata__": {"format": "pt"}}
    blobs, off = [], 0
    for name in sorted(tensors):
        dt, shape, raw = tensors[name]
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    return struct.pack("<Q", len(hb)) + hb + b"".join(blobs)


def read_safetensors(data):
    """Our own reader: returns ({name: (dtype, shape, numpy array of the stored dtype)}, metadata)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode())
    meta = header.pop("__metadata__", None)
    out, ends = {}, []
    for name, info in header.items():
        npdt, size = DTYPES[info["dtype"]]
        b, e = info["data_offsets"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        assert e - b == count * size, name
        ends.append((b, e))
        out[name] = (info["dtype"], tuple(info["shape"]),
                     np.frombuffer(data[8 + n + b:8 + n + e], dtype=npdt).reshape(info["shape"]))
    ends.sort()
    assert ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
    assert 8 + n + ends[-1][1] == len(data)
    return out, meta


def encode_tensor(a32, dt):
    if dt == "F32":
        return np.ascontiguousarray(a32, dtype="<f4").tobytes()
    if dt == "F16":
        return np.ascontiguousarray(a32, dtype="<f4").astype("<f2").tobytes()
    return to_bf16_bits(a32).tobytes()


def widen(a32, dt):
    """The float32 weights as a loader of the dt file sees them, widened to float64."""
    if dt == "F32":
        return a32.astype(np.float64)
    if dt == "F16":
        return a32.astype("<f2").astype(np.float64)
    return bf16_bits_to_f32(to_bf16_bits(a32)).astype(np.float64)


# ================================================================================================
# JSON output
# ================================================================================================
def tensor_json(t):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    if a.dtype.kind in "iu":
        return {"shape": list(a.shape), "data": [int(v) for v in a.reshape(-1).tolist()]}
    return {"shape": list(a.shape), "data": [float(SIG_FMT % v) for v in a.reshape(-1).tolist()]}


def emit(o, indent=0):
    """JSON with objects indented and every list of numbers on one line; floats as '%.7g'."""
    pad = "  " * indent
    if isinstance(o, dict):
        if not o:
            return "{}"
        items = ['%s  %s: %s' % (pad, json.dumps(k), emit(v, indent + 1)) for k, v in o.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in o):
            return "[" + ",".join(emit(v) for v in o) + "]"
        if all(isinstance(v, list) and all(isinstance(x, int) for x in v) for v in o):
            return json.dumps(o, separators=(",", ":"))
        return "[\n" + ",\n".join(pad + "  " + emit(v, indent + 1) for v in o) + "\n" + pad + "]"
    if isinstance(o, float):
        return SIG_FMT % o
    return json.dumps(o, ensure_ascii=False)


def write(path, text_or_bytes):
    mode = "wb" if isinstance(text_or_bytes, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"})) as f:
        f.write(text_or_bytes)


# ================================================================================================
# One architecture
# ================================================================================================
def rel_err(a, b):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def greedy(forward, w, cfg, prompt):
    """Greedy decoding by full recomputation (no KV cache): argmax of the last row each step."""
    seq = list(prompt)
    new, margin = [], float("inf")
    for _ in range(NEW_TOKENS):
        last = forward(w, torch.tensor([seq]), cfg)["logits"][0, -1]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        nxt = int(torch.argmax(last))
        seq.append(nxt)
        new.append(nxt)
    return new, margin


def build(name, cfg, tok_style, vocab, merges, logits_only=False):
    folder = os.path.join(OUT_DIR, name)
    os.makedirs(folder, exist_ok=True)
    is_gpt2, is_gemma4 = cfg["model_type"] == "gpt2", cfg["model_type"] == "gemma4_text"
    spec = gpt2_tensors() if is_gpt2 else gemma4_tensors(cfg, VOCAB) if is_gemma4 else llama_tensors(cfg)
    forward = gpt2_forward if is_gpt2 else gemma4_forward if is_gemma4 else llama_forward
    np_forward = np_gpt2 if is_gpt2 else np_gemma4 if is_gemma4 else np_llama
    if cfg["model_type"] == "lfm2":
        spec, forward, np_forward = lfm2_tensors(cfg, VOCAB), lfm2_forward, np_lfm2
    n_layers = cfg.get("num_hidden_layers", LAYERS)

    seed_for(name)
    w32 = {n: draw(shape, kind).numpy() for n, shape, kind in spec}
    for n, shape, _ in spec:
        assert w32[n].shape == tuple(shape) and w32[n].dtype == np.float32

    # --- the 16-bit roundings, checked against torch's own conversions
    for n, a in w32.items():
        t = torch.from_numpy(a)
        assert np.array_equal(widen(a, "BF16"), t.bfloat16().double().numpy()), n
        assert np.array_equal(widen(a, "F16"), t.half().double().numpy()), n

    # --- safetensors files: (file, dtype, name prefix); GPT-2 F32 keeps 'transformer.', f16 drops it
    files = [("model.safetensors", "F32"), ("model.f16.safetensors", "F16"), ("model.bf16.safetensors", "BF16")]
    tensor_names = {}
    for fname, dt in files:
        prefix = "transformer." if is_gpt2 and dt != "F16" else ""
        tensors = {}
        for n, a in w32.items():
            tensors[prefix + n] = (dt, a.shape, encode_tensor(a, dt))
        if is_gpt2:  # the causal-mask buffer old GPT-2 checkpoints carry; loaders must ignore it
            tri = np.tril(np.ones((MAX_POS, MAX_POS), dtype=np.float32)).reshape(1, 1, MAX_POS, MAX_POS)
            for i in range(LAYERS):
                tensors[prefix + "h.%d.attn.bias" % i] = (dt, tri.shape, encode_tensor(tri, dt))
        data = safetensors_bytes(tensors)
        back, meta = read_safetensors(data)
        assert meta == {"format": "pt"} and set(back) == set(tensors), fname
        for n, (d, shape, raw) in tensors.items():
            bd, bshape, arr = back[n]
            assert bd == d and bshape == tuple(shape) and arr.tobytes() == raw, (fname, n)
            if n.endswith("attn.bias"):
                continue
            src = n[len(prefix):]
            got = arr.astype(np.float64) if dt != "BF16" else bf16_bits_to_f32(arr).astype(np.float64)
            assert np.array_equal(got, widen(w32[src], dt)), (fname, n)
        write(os.path.join(folder, fname), data)
        tensor_names[fname] = sorted(tensors)

    # --- reference forwards in float64; numpy re-check
    w64 = {n: torch.from_numpy(a.astype(np.float64)) for n, a in w32.items()}
    wnp = {n: a.astype(np.float64) for n, a in w32.items()}
    cases = []
    worst = 0.0
    f32_diff = {"logits": 0.0, "attention": 0.0, "hidden_states": 0.0}
    for cname, ids in (("b1_t7", IDS_1), ("b2_t5", IDS_2)):
        ids_t = torch.tensor(ids)
        ref = forward(w64, ids_t, cfg)
        chk = np_forward(wnp, np.array(ids), cfg)
        for key in ("logits",):
            worst = max(worst, rel_err(ref[key], chk[key]))
        for key in ("attention", "hidden_states"):
            for a, b in zip(ref[key], chk[key]):
                worst = max(worst, rel_err(a, b))
        assert len(ref["hidden_states"]) == n_layers + 1 and len(ref["attention"]) == n_layers
        # the same forward in float32 arithmetic: how far a float32 loader may land (a hint)
        r32 = forward({n: torch.from_numpy(a) for n, a in w32.items()}, ids_t, cfg)
        f32_diff["logits"] = max(f32_diff["logits"], float((r32["logits"].double() - ref["logits"]).abs().max()))
        for key in ("attention", "hidden_states"):
            for a, b in zip(r32[key], ref[key]):
                f32_diff[key] = max(f32_diff[key], float((a.double() - b).abs().max()))
        case = {"name": cname, "input_ids": tensor_json(ids_t), "logits": tensor_json(ref["logits"])}
        if not logits_only:
            case["attention"] = [tensor_json(a) for a in ref["attention"]]
            case["hidden_states"] = [tensor_json(h) for h in ref["hidden_states"]]
        cases.append(case)
    assert worst <= NUMPY_TOL, (name, worst)
    print("  %-20s torch vs numpy float64: %.1e (tol %.0e)" % (name, worst, NUMPY_TOL))

    # --- tokenizer
    tok, tok_cfg, encode, specials = make_tokenizer(tok_style, vocab, merges)
    write(os.path.join(folder, "tokenizer.json"), json.dumps(tok, indent=2, ensure_ascii=False) + "\n")
    write(os.path.join(folder, "tokenizer_config.json"), json.dumps(tok_cfg, indent=2, ensure_ascii=False) + "\n")
    tok_cases = []
    for text in TOKENIZER_TEXTS:
        ids = encode(text)
        assert all(0 <= i < VOCAB for i in ids)
        plain = [i for i in ids if i not in specials.values()]
        assert decode_ids(plain, vocab) == text, text   # every byte of the texts has a token
        tok_cases.append({"text": text, "ids": ids})
    TOKENIZER_CHECKS.append((folder, tok_cases))

    write(os.path.join(folder, "config.json"), json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    # the same model as transformers 5 saves it (tests: both layouts, same outputs); Ministral 3 exists
    # in transformers 5 only: its config.json is that layout already
    if not is_gpt2 and "rope_parameters" not in cfg and cfg["model_type"] != "lfm2":
        write(os.path.join(folder, "config.transformers5.json"), json.dumps(as_transformers5(cfg), indent=2, sort_keys=True) + "\n")

    # --- expected.json
    exp = {
        "model": name,
        "architecture": cfg["architectures"][0],
        "generated_by": "%s (torch %s, numpy %s)" % (SCRIPT, torch.__version__, np.__version__),
        "weights": "model.safetensors",
        "precision": "float64 forward of the float32 weights; numbers rounded to 7 significant digits",
        "tensor_format": "{shape, data}: data is the flat row-major array",
        "outputs": "logits (B,T,V)" + ("" if logits_only else
                                       "; attention[l] (B,H,T,T) softmax probabilities of layer l; "
                                       "hidden_states[0] embedding output, [i] output of block i-1 "
                                       "(i = 1..L-1), [L] after the final norm (HF output_hidden_states)"),
        "attention_layers": [] if logits_only else list(range(n_layers)),
        "float32_forward_max_abs_diff": {k: float("%.2g" % v) for k, v in f32_diff.items()
                                         if not (logits_only and k != "logits")},
    }
    rcfg = cfg if is_gemma4 else with_rope(cfg)
    if (rcfg.get("rope_scaling") or not is_gpt2) and not is_gemma4:
        exp["rope_inv_freq"] = tensor_json(rope_inv_freq(rcfg))
        if rcfg.get("rope_scaling"):
            exp["rope_inv_freq_unscaled"] = tensor_json(rope_inv_freq(dict(rcfg, rope_scaling=None)))
        if rope_attention_factor(rcfg) != 1.0:
            exp["rope_attention_factor"] = rope_attention_factor(rcfg)
    exp["cases"] = cases
    new, margin = greedy(forward, w64, cfg, IDS_1[0])
    assert margin >= GEN_MARGIN_MIN, (name, margin)
    exp["generate"] = {"input_ids": IDS_1, "max_new_tokens": NEW_TOKENS, "do_sample": False,
                       "new_ids": [new], "min_top2_logit_margin": float("%.3g" % margin)}
    exp["tokenizer_cases"] = tok_cases
    write(os.path.join(folder, "expected.json"), emit(exp) + "\n")

    # --- expected_f16.json / expected_bf16.json from the widened 16-bit weights
    for fname, dt, out in (("model.f16.safetensors", "F16", "expected_f16.json"),
                           ("model.bf16.safetensors", "BF16", "expected_bf16.json")):
        w16 = {n: torch.from_numpy(widen(a, dt)) for n, a in w32.items()}
        cs = []
        for cname, ids in (("b1_t7", IDS_1), ("b2_t5", IDS_2)):
            ids_t = torch.tensor(ids)
            ref = forward(w16, ids_t, cfg)
            c = {"name": cname, "input_ids": tensor_json(ids_t), "logits": tensor_json(ref["logits"])}
            if not logits_only:
                c["attention"] = [tensor_json(ref["attention"][0])]
            cs.append(c)
        e16 = {"model": name, "architecture": cfg["architectures"][0],
               "generated_by": exp["generated_by"], "weights": fname,
               "precision": "float64 forward of the %s weights widened exactly; 7 significant digits" % dt,
               "tensor_format": exp["tensor_format"],
               "attention_layers": [] if logits_only else [0], "cases": cs}
        write(os.path.join(folder, out), emit(e16) + "\n")
    return tensor_names


# ================================================================================================
# @huggingface/tokenizers check (optional, TOK_CHECK_DIR = a folder where it is npm-installed)
# ================================================================================================
TOKENIZER_CHECKS = []
NODE_CHECK = r"""
import { Tokenizer } from "@huggingface/tokenizers";
import fs from "node:fs";
import path from "node:path";
const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
const out = [];
for (const job of jobs) {
  const tj = JSON.parse(fs.readFileSync(path.join(job.folder, "tokenizer.json"), "utf8"));
  const tc = JSON.parse(fs.readFileSync(path.join(job.folder, "tokenizer_config.json"), "utf8"));
  const tok = new Tokenizer(tj, tc);
  for (const c of job.cases) {
    const enc = tok.encode(c.text);
    const dec = tok.decode(enc.ids, { skip_special_tokens: true });
    out.push({ folder: job.folder, text: c.text, ids: enc.ids, tokens: enc.tokens, decoded: dec });
  }
}
const pkg = JSON.parse(fs.readFileSync("node_modules/@huggingface/tokenizers/package.json", "utf8"));
console.log(JSON.stringify({ version: pkg.version, results: out }));
"""


def check_tokenizers_js():
    where = os.environ.get("TOK_CHECK_DIR")
    if not where:
        print("  tokenizers: TOK_CHECK_DIR not set, @huggingface/tokenizers check skipped")
        return
    jobs = [{"folder": f, "cases": c} for f, c in TOKENIZER_CHECKS]
    res = subprocess.run(["node", "--input-type=module", "-e", NODE_CHECK], cwd=where,
                         input=json.dumps(jobs), capture_output=True, text=True, check=True)
    got = json.loads(res.stdout)
    expect = {(f, c["text"]): c["ids"] for f, cs in TOKENIZER_CHECKS for c in cs}
    for r in got["results"]:
        assert r["ids"] == expect[(r["folder"], r["text"])], (r, expect[(r["folder"], r["text"])])
        assert r["decoded"] == r["text"], r
    print("  tokenizers: @huggingface/tokenizers %s gives the same ids for %d encodings and "
          "decodes them back" % (got["version"], len(got["results"])))
    for r in got["results"][:3]:
        print("    %r -> %s" % (r["text"], r["tokens"]))


def main():
    vocab, merges = train_bpe()
    print("tokenizer: %d base tokens (%d bytes + %d merges)" % (len(vocab), len(ALPHABET_BYTES), len(merges)))
    os.makedirs(OUT_DIR, exist_ok=True)
    archs = [("gpt2-tiny", GPT2_CONFIG, "gpt2", False),
             ("llama-tiny", LLAMA_CONFIG, "llama", False),
             ("qwen2-tiny", QWEN2_CONFIG, "qwen2", False),
             ("llama3-scaled-tiny", LLAMA3_CONFIG, "llama", True),
             ("llama-linear-tiny", LLAMA_LINEAR_CONFIG, "llama", True),
             ("qwen3-tiny", QWEN3_CONFIG, "qwen2", False),
             ("mistral-tiny", MISTRAL_CONFIG, "llama", False),
             ("qwen2-sliding-tiny", QWEN2_SLIDING_CONFIG, "qwen2", False),
             ("smollm3-tiny", SMOLLM3_CONFIG, "llama", False),
             ("olmo2-tiny", OLMO2_CONFIG, "llama", False),
             ("phi3-tiny", PHI3_CONFIG, "llama", False),
             ("phi4-mini-tiny", PHI4_CONFIG, "llama", False),
             ("gemma3-tiny", GEMMA3_CONFIG, "llama", False),
             ("gemma2-tiny", GEMMA2_CONFIG, "llama", False),
             ("granite-tiny", GRANITE_CONFIG, "llama", False),
             ("ministral3-tiny", MINISTRAL3_CONFIG, "llama", False),
             ("lfm2-tiny", LFM2_CONFIG, "qwen2", False),
             ("gemma4-tiny", GEMMA4_CONFIG, "llama", False)]
    if sys.argv[1:]:  # only the folders named (the others' files stay as committed)
        archs = [a for a in archs if a[0] in sys.argv[1:]]
    names = {}
    for name, cfg, style, logits_only in archs:
        names[name] = build(name, cfg, style, vocab, merges, logits_only)
    check_tokenizers_js()
    total = 0
    for name, *_ in archs:
        folder = os.path.join(OUT_DIR, name)
        size = 0
        for f in sorted(os.listdir(folder)):
            n = os.path.getsize(os.path.join(folder, f))
            size += n
            h = hashlib.sha256(open(os.path.join(folder, f), "rb").read()).hexdigest()[:12]
            print("  %s/%-24s %8d bytes  sha256 %s" % (name, f, n, h))
        assert size <= MAX_FOLDER_BYTES, (name, size)
        print("  %s: %d bytes in total" % (name, size))
        total += size
    print("all folders: %d bytes" % total)


if __name__ == "__main__":
    main()
