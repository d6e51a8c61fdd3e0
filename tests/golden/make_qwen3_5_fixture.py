#!/usr/bin/env python3
"""The tiny Qwen3.5 checkpoint tests/golden/pretrained/qwen3_5-tiny, written from the formulas of
transformers' modeling_qwen3_5.py (Qwen3_5GatedDeltaNet, Qwen3_5Attention, Qwen3_5RMSNorm) in
float64 torch, without transformers:

- DeltaNet layers: [q | k | v] = in_proj_qkv(x), causal depthwise conv1d (kernel K, no bias) + SiLU,
  q and k L2-normed per key head (eps 1e-6), q x d_k^-1/2, beta = sigmoid(in_proj_b(x)),
  g = -exp(A_log) * softplus(in_proj_a(x) + dt_bias), value head h reading key head h // (Hv / Hk),
  the recurrence S <- e^g S; S <- S + k (beta (v - S^T k))^T; o = S^T q, then RMSNorm(o) * w *
  SiLU(in_proj_z(x)) per value head (plain w) and out_proj;
- full layers: q_proj (B, T, H, 2d) split per head into q and gate, q/k RMSNorm (1 + w) per head,
  RoPE (rotate_half) on the first partial_rotary_factor * d features (mRoPE with text positions),
  GQA, softmax, output x sigmoid(gate), o_proj;
- every other RMSNorm scales by (1 + w).

"attention" in expected.json is, for a DeltaNet layer, its exact effective attention
A[t, s] = beta_s k_s^T M_{s+1} ... M_t q_t (M_r = e^{g_r} (I - beta_r k_r k_r^T)) per value head,
computed by that product (not from the recurrence), and checked here to give the recurrence's o:
sum_s A[t, s] v_s = o_t. A third case of 70 tokens crosses the 64-row chunk of the core's chunked
form (logits only).

Run: /usr/bin/python3 tests/golden/make_qwen3_5_fixture.py (then node tests/golden/write-core-configs.mjs).
"""
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained_fixtures as mp  # noqa: E402
from make_fixtures import seed_for  # noqa: E402

NAME = "qwen3_5-tiny"
SCRIPT = "tests/golden/make_qwen3_5_fixture.py"
CONFIG = {
    "architectures": ["Qwen3_5ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 94, "eos_token_id": 95, "full_attention_interval": 3, "head_dim": 16,
    "hidden_act": "silu", "hidden_size": mp.HIDDEN, "initializer_range": 0.02, "intermediate_size": 48,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 8, "linear_num_key_heads": 2,
    "linear_num_value_heads": 4, "linear_value_head_dim": 6, "max_position_embeddings": 128,
    "model_type": "qwen3_5_text", "num_attention_heads": 4, "num_hidden_layers": 3,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
    "rope_parameters": {"mrope_interleaved": True, "mrope_section": [2, 1, 1], "partial_rotary_factor": 0.5,
                        "rope_theta": 10000.0, "rope_type": "default"},
    "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "vocab_size": mp.VOCAB,
}
LAYERS = CONFIG["num_hidden_layers"]
TYPES = ["linear_attention" if (i + 1) % CONFIG["full_attention_interval"] else "full_attention"
         for i in range(LAYERS)]
IDS_LONG = [[(7 * t + 3) % 94 for t in range(70)]]


def tensors():
    """(HF name, shape, kind) in draw order."""
    c = CONFIG
    E, I, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    H, Hkv = c["num_attention_heads"], c["num_key_value_heads"]
    Hk, Hv, dk, dv = (c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"],
                      c["linear_value_head_dim"])
    C = 2 * Hk * dk + Hv * dv
    t = [("model.embed_tokens.weight", (mp.VOCAB, E), "embed")]
    for i, kind in enumerate(TYPES):
        p = "model.layers.%d." % i
        t += [(p + "input_layernorm.weight", (E,), "gemma_norm")]
        if kind == "linear_attention":
            a = p + "linear_attn."
            t += [(a + "in_proj_qkv.weight", (C, E), "qk_linear"), (a + "in_proj_z.weight", (Hv * dv, E), "linear"),
                  (a + "in_proj_b.weight", (Hv, E), "linear"), (a + "in_proj_a.weight", (Hv, E), "linear"),
                  (a + "conv1d.weight", (C, 1, c["linear_conv_kernel_dim"]), "dconv"),
                  (a + "A_log", (Hv,), "a_log"), (a + "dt_bias", (Hv,), "bias"),
                  (a + "norm.weight", (dv,), "norm"), (a + "out_proj.weight", (E, Hv * dv), "linear")]
        else:
            a = p + "self_attn."
            t += [(a + "q_proj.weight", (2 * H * d, E), "qk_linear"), (a + "k_proj.weight", (Hkv * d, E), "qk_linear"),
                  (a + "v_proj.weight", (Hkv * d, E), "linear"), (a + "q_norm.weight", (d,), "gemma_norm"),
                  (a + "k_norm.weight", (d,), "gemma_norm"), (a + "o_proj.weight", (E, H * d), "linear")]
        t += [(p + "post_attention_layernorm.weight", (E,), "gemma_norm"),
              (p + "mlp.gate_proj.weight", (I, E), "linear"), (p + "mlp.up_proj.weight", (I, E), "linear"),
              (p + "mlp.down_proj.weight", (E, I), "linear")]
    t += [("model.norm.weight", (E,), "gemma_norm"), ("lm_head.weight", (mp.VOCAB, E), "head")]
    return t


def draw(shape, kind):
    if kind == "dconv":  # depthwise taps: O(1) sums over K inputs
        return torch.randn(*shape, dtype=torch.float32) * 0.5
    if kind == "a_log":  # decays e^g between ~0.6 and ~0.97 per token: the state remembers
        return torch.log(torch.rand(*shape, dtype=torch.float32) * 0.45 + 0.05)
    return mp.draw(shape, kind)


def rms1p(x, w, eps):  # Qwen3_5RMSNorm: (1 + w)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def silu(x):
    return x * torch.sigmoid(x)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def delta_layer(w, p, x):
    """One DeltaNet layer on normed x (B, T, E): y, its effective attention (B, Hv, T, T), v, o."""
    c = CONFIG
    B, T, _ = x.shape
    Hk, Hv, dk, dv, K = (c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"],
                         c["linear_value_head_dim"], c["linear_conv_kernel_dim"])
    mixed = x @ w[p + "in_proj_qkv.weight"].T  # (B, T, C)
    conv = w[p + "conv1d.weight"][:, 0, :]  # (C, K): tap j reads input t - (K - 1) + j
    pad = torch.cat([torch.zeros(B, K - 1, mixed.shape[-1], dtype=x.dtype), mixed], dim=1)
    mixed = silu(sum(pad[:, j:j + T, :] * conv[:, j] for j in range(K)))
    q, k, v = torch.split(mixed, [Hk * dk, Hk * dk, Hv * dv], dim=-1)
    q, k, v = q.reshape(B, T, Hk, dk), k.reshape(B, T, Hk, dk), v.reshape(B, T, Hv, dv)
    q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + 1e-6) / math.sqrt(dk)
    k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    beta = torch.sigmoid(x @ w[p + "in_proj_b.weight"].T)  # (B, T, Hv)
    a = x @ w[p + "in_proj_a.weight"].T
    g = -torch.exp(w[p + "A_log"]) * torch.nn.functional.softplus(a + w[p + "dt_bias"])
    o = torch.zeros(B, T, Hv, dv, dtype=x.dtype)
    A = torch.zeros(B, Hv, T, T, dtype=x.dtype)
    for b in range(B):
        for h in range(Hv):
            kh = h // (Hv // Hk)  # grouped value heads (repeat_interleave)
            S = torch.zeros(dk, dv, dtype=x.dtype)
            for t in range(T):
                S = S * torch.exp(g[b, t, h])
                delta = beta[b, t, h] * (v[b, t, h] - S.T @ k[b, t, kh])
                S = S + torch.outer(k[b, t, kh], delta)
                o[b, t, h] = S.T @ q[b, t, kh]
            for t in range(T):  # A[t, s] = beta_s k_s . (M_{s+1} ... M_t q_t)
                u = q[b, t, kh].clone()
                for s in range(t, -1, -1):
                    ks = k[b, s, kh]
                    A[b, h, t, s] = beta[b, s, h] * (ks @ u)
                    u = torch.exp(g[b, s, h]) * (u - beta[b, s, h] * ks * (ks @ u))
    back = torch.einsum("bhts,bshd->bthd", A, v)
    err = float((back - o).abs().max() / max(1.0, float(o.abs().max())))
    assert err < 1e-12, ("sum_s A v != o", err)
    z = (x @ w[p + "in_proj_z.weight"].T).reshape(B, T, Hv, dv)
    on = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + c["rms_norm_eps"]) * w[p + "norm.weight"] * silu(z)
    return on.reshape(B, T, Hv * dv) @ w[p + "out_proj.weight"].T, A


def full_layer(w, p, x):
    c = CONFIG
    B, T, _ = x.shape
    H, Hkv, d, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    qg = (x @ w[p + "q_proj.weight"].T).reshape(B, T, H, 2 * d)
    q, gate = qg[..., :d], qg[..., d:].reshape(B, T, H * d)
    q = rms1p(q, w[p + "q_norm.weight"], eps).transpose(1, 2)
    k = rms1p((x @ w[p + "k_proj.weight"].T).reshape(B, T, Hkv, d), w[p + "k_norm.weight"], eps).transpose(1, 2)
    v = (x @ w[p + "v_proj.weight"].T).reshape(B, T, Hkv, d).transpose(1, 2)
    rope = c["rope_parameters"]
    rd = int(d * rope["partial_rotary_factor"])
    inv = 1.0 / (rope["rope_theta"] ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))
    # mRoPE: the three position rows (t, h, w) are all the token's position for text, so each
    # section's frequencies see the same angle: plain RoPE
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)

    def rot(t):
        r, rest = t[..., :rd], t[..., rd:]
        return torch.cat([r * cos + rotate_half(r) * sin, rest], dim=-1)

    q, k = rot(q), rot(k)
    k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
    s = q @ k.transpose(-1, -2) / math.sqrt(d)
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    P = torch.softmax(s, dim=-1)
    out = (P @ v).transpose(1, 2).reshape(B, T, H * d) * torch.sigmoid(gate)
    return out @ w[p + "o_proj.weight"].T, P


def forward(w, ids, cfg=None):
    c = CONFIG
    eps = c["rms_norm_eps"]
    x = w["model.embed_tokens.weight"][ids]
    hidden, attention = [x], []
    for i, kind in enumerate(TYPES):
        p = "model.layers.%d." % i
        h = rms1p(x, w[p + "input_layernorm.weight"], eps)
        if kind == "linear_attention":
            y, a = delta_layer(w, p + "linear_attn.", h)
        else:
            y, a = full_layer(w, p + "self_attn.", h)
        x = x + y
        h = rms1p(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + (silu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        attention.append(a)
        hidden.append(x)
    x = rms1p(x, w["model.norm.weight"], eps)
    hidden[-1] = x
    return {"logits": x @ w["lm_head.weight"].T, "attention": attention, "hidden_states": hidden}


def main():
    folder = os.path.join(mp.OUT_DIR, NAME)
    os.makedirs(folder, exist_ok=True)
    seed_for(NAME)
    spec = tensors()
    w32 = {n: draw(shape, kind).numpy() for n, shape, kind in spec}
    files = [("model.safetensors", "F32"), ("model.f16.safetensors", "F16"), ("model.bf16.safetensors", "BF16")]
    for fname, dt in files:
        data = mp.safetensors_bytes({n: (dt, a.shape, mp.encode_tensor(a, dt)) for n, a in w32.items()})
        back, _ = mp.read_safetensors(data)
        assert set(back) == set(w32), fname
        mp.write(os.path.join(folder, fname), data)
    w64 = {n: torch.from_numpy(a.astype(np.float64)) for n, a in w32.items()}
    cases = []
    for cname, ids in (("b1_t7", mp.IDS_1), ("b2_t5", mp.IDS_2), ("b1_t70", IDS_LONG)):
        ref = forward(w64, torch.tensor(ids))
        case = {"name": cname, "input_ids": mp.tensor_json(torch.tensor(ids)), "logits": mp.tensor_json(ref["logits"])}
        if cname != "b1_t70":
            case["attention"] = [mp.tensor_json(a) for a in ref["attention"]]
            case["hidden_states"] = [mp.tensor_json(h) for h in ref["hidden_states"]]
        cases.append(case)
    vocab, merges = mp.train_bpe()
    tok, tok_cfg, encode, specials = mp.make_tokenizer("qwen2", vocab, merges)
    mp.write(os.path.join(folder, "tokenizer.json"), json.dumps(tok, indent=2, ensure_ascii=False) + "\n")
    mp.write(os.path.join(folder, "tokenizer_config.json"), json.dumps(tok_cfg, indent=2, ensure_ascii=False) + "\n")
    tok_cases = [{"text": text, "ids": encode(text)} for text in mp.TOKENIZER_TEXTS]
    mp.write(os.path.join(folder, "config.json"), json.dumps(CONFIG, indent=2, sort_keys=True) + "\n")
    new, margin = mp.greedy(forward, w64, CONFIG, mp.IDS_1[0])
    assert margin >= mp.GEN_MARGIN_MIN, margin
    exp = {
        "model": NAME, "architecture": CONFIG["architectures"][0],
        "generated_by": "%s (torch %s, numpy %s)" % (SCRIPT, torch.__version__, np.__version__),
        "weights": "model.safetensors",
        "precision": "float64 forward of the float32 weights; numbers rounded to 7 significant digits",
        "tensor_format": "{shape, data}: data is the flat row-major array",
        "outputs": "logits (B,T,V); attention[l] (B,H,T,T): softmax probabilities of a full layer, the exact "
                   "effective attention per value head of a DeltaNet layer (signed); hidden_states as HF's "
                   "output_hidden_states; case b1_t70 (past one 64-row chunk): logits only",
        "layer_types": TYPES, "attention_layers": list(range(LAYERS)), "cases": cases,
        "generate": {"input_ids": mp.IDS_1, "max_new_tokens": mp.NEW_TOKENS, "do_sample": False,
                     "new_ids": [new], "min_top2_logit_margin": float("%.3g" % margin)},
        "tokenizer_cases": tok_cases,
    }
    mp.write(os.path.join(folder, "expected.json"), mp.emit(exp) + "\n")
    for fname, dt, out in (("model.f16.safetensors", "F16", "expected_f16.json"),
                           ("model.bf16.safetensors", "BF16", "expected_bf16.json")):
        w16 = {n: torch.from_numpy(mp.widen(a, dt)) for n, a in w32.items()}
        cs = []
        for cname, ids in (("b1_t7", mp.IDS_1), ("b2_t5", mp.IDS_2)):
            ref = forward(w16, torch.tensor(ids))
            cs.append({"name": cname, "input_ids": mp.tensor_json(torch.tensor(ids)),
                       "logits": mp.tensor_json(ref["logits"]), "attention": [mp.tensor_json(ref["attention"][0])]})
        mp.write(os.path.join(folder, out), mp.emit({
            "model": NAME, "architecture": CONFIG["architectures"][0], "generated_by": exp["generated_by"],
            "weights": fname, "precision": "float64 forward of the %s weights widened exactly; 7 significant digits" % dt,
            "tensor_format": exp["tensor_format"], "attention_layers": [0], "cases": cs}) + "\n")
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    assert size <= mp.MAX_FOLDER_BYTES, size
    print("%s: layers %s, greedy %s (margin %.3g), %d bytes" % (NAME, TYPES, new, margin, size))


def vision_language_copy():
    """qwen3_5-vl-tiny: the same model saved as Qwen3_5ForConditionalGeneration (text_config nested,
    the text model under model.language_model., lm_head at the top) with one vision-tower tensor the
    loader must not read; the expectations are the text model's."""
    src, dst = os.path.join(mp.OUT_DIR, NAME), os.path.join(mp.OUT_DIR, NAME.replace("-tiny", "-vl-tiny"))
    os.makedirs(dst, exist_ok=True)
    text = {k: v for k, v in CONFIG.items() if k not in ("architectures", "torch_dtype", "tie_word_embeddings")}
    cfg = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
           "text_config": text, "tie_word_embeddings": False, "torch_dtype": "float32",
           "vision_config": {"depth": 1, "hidden_size": 8, "model_type": "qwen3_5_vision", "out_hidden_size": 32},
           "image_token_id": 90, "video_token_id": 91, "vision_start_token_id": 92, "vision_end_token_id": 93}
    mp.write(os.path.join(dst, "config.json"), json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    seed_for(NAME + "-vision")
    visual = torch.randn(8, 3, 2, 2, 2, dtype=torch.float32).numpy()
    for fname, dt in (("model.safetensors", "F32"), ("model.f16.safetensors", "F16"), ("model.bf16.safetensors", "BF16")):
        back, _ = mp.read_safetensors(open(os.path.join(src, fname), "rb").read())
        tensors = {}
        for n, (d, shape, arr) in back.items():
            to = n if n == "lm_head.weight" else n.replace("model.", "model.language_model.", 1)
            tensors[to] = (d, shape, arr.tobytes())
        tensors["model.visual.patch_embed.proj.weight"] = (dt, visual.shape, mp.encode_tensor(visual, dt))
        mp.write(os.path.join(dst, fname), mp.safetensors_bytes(tensors))
    for f in ("expected.json", "expected_f16.json", "expected_bf16.json", "tokenizer.json", "tokenizer_config.json"):
        data = open(os.path.join(src, f), encoding="utf-8").read()
        if f.startswith("expected"):
            data = data.replace('"Qwen3_5ForCausalLM"', '"Qwen3_5ForConditionalGeneration"').replace(
                '"%s"' % NAME, '"%s"' % os.path.basename(dst))
        mp.write(os.path.join(dst, f), data)
    print("%s: the same model as the vision-language class" % os.path.basename(dst))


if __name__ == "__main__":
    main()
    vision_language_copy()
