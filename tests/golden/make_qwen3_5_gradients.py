#!/usr/bin/env python3
"""tests/golden/pretrained/qwen3_5-tiny/expected_gradients.json: the metric gradients of the tiny
Qwen3.5 checkpoint by float64 torch.autograd, in make_gradient_fixtures.py's cases and layout (its
run_case, specs and JSON), over a forward written here from the same formulas as
make_qwen3_5_fixture.py's with the hook points that script's gradients read:
  "resid"(i, x)  the stream entering block i (the directional self-check moves hidden state 0),
  "z"(i, z)      (B, H, T, d) the rows the output projection reads: a DeltaNet layer's per value head
                 RMSNorm(o) * w * SiLU(in_proj_z(x)) (d = d_v), a full layer's attention output
                 x sigmoid(gate) per head (what o_proj reads),
  "mlp"(i, m)    the MLP's output as added to the stream.
The forward is first held to the committed expected.json logits (check_forward). The delta rule runs
as its recurrence; autograd differentiates through it.

Run: /usr/bin/python3 tests/golden/make_qwen3_5_gradients.py
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_gradient_fixtures as mg  # noqa: E402
import make_pretrained_fixtures as mp  # noqa: E402
import make_qwen3_5_fixture as q  # noqa: E402

NAME = "qwen3_5-tiny"
SCRIPT = "tests/golden/make_qwen3_5_gradients.py"


def delta_z(w, p, x):
    """A DeltaNet layer's z (B, Hv, T, dv) on normed x (B, T, E) and its effective attention."""
    c = q.CONFIG
    B, T, _ = x.shape
    Hk, Hv, dk, dv, K = (c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"],
                         c["linear_value_head_dim"], c["linear_conv_kernel_dim"])
    mixed = x @ w[p + "in_proj_qkv.weight"].T
    conv = w[p + "conv1d.weight"][:, 0, :]
    pad = torch.cat([torch.zeros(B, K - 1, mixed.shape[-1], dtype=x.dtype), mixed], dim=1)
    mixed = q.silu(sum(pad[:, j:j + T, :] * conv[:, j] for j in range(K)))
    qq, k, v = torch.split(mixed, [Hk * dk, Hk * dk, Hv * dv], dim=-1)
    qq, k, v = qq.reshape(B, T, Hk, dk), k.reshape(B, T, Hk, dk), v.reshape(B, T, Hv, dv)
    qq = qq * torch.rsqrt((qq * qq).sum(-1, keepdim=True) + 1e-6) / math.sqrt(dk)
    k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    beta = torch.sigmoid(x @ w[p + "in_proj_b.weight"].T)
    g = -torch.exp(w[p + "A_log"]) * torch.nn.functional.softplus(x @ w[p + "in_proj_a.weight"].T + w[p + "dt_bias"])
    rows, maps = [], []
    for b in range(B):
        for h in range(Hv):
            kh = h // (Hv // Hk)
            S = torch.zeros(dk, dv, dtype=x.dtype)
            for t in range(T):
                S = S * torch.exp(g[b, t, h])
                S = S + torch.outer(k[b, t, kh], beta[b, t, h] * (v[b, t, h] - S.T @ k[b, t, kh]))
                rows.append(S.T @ qq[b, t, kh])
            a = torch.zeros(T, T, dtype=x.dtype)
            for t in range(T):  # A[t, s] = beta_s k_s . (M_{s+1} ... M_t q_t)
                u = qq[b, t, kh]
                for s in range(t, -1, -1):
                    ks = k[b, s, kh]
                    a[t, s] = beta[b, s, h] * (ks @ u)
                    u = torch.exp(g[b, s, h]) * (u - beta[b, s, h] * ks * (ks @ u))
            maps.append(a)
    o = torch.stack(rows).reshape(B, Hv, T, dv)
    z = (x @ w[p + "in_proj_z.weight"].T).reshape(B, T, Hv, dv).transpose(1, 2)
    on = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + c["rms_norm_eps"]) * w[p + "norm.weight"] * q.silu(z)
    return on, torch.stack(maps).reshape(B, Hv, T, T)


def full_z(w, p, x):
    """A full layer's z (B, H, T, d): softmax attention x sigmoid(gate), and its weights."""
    c = q.CONFIG
    B, T, _ = x.shape
    H, Hkv, d, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    qg = (x @ w[p + "q_proj.weight"].T).reshape(B, T, H, 2 * d)
    qq, gate = qg[..., :d], qg[..., d:].transpose(1, 2)
    qq = q.rms1p(qq, w[p + "q_norm.weight"], eps).transpose(1, 2)
    k = q.rms1p((x @ w[p + "k_proj.weight"].T).reshape(B, T, Hkv, d), w[p + "k_norm.weight"], eps).transpose(1, 2)
    v = (x @ w[p + "v_proj.weight"].T).reshape(B, T, Hkv, d).transpose(1, 2)
    rope = c["rope_parameters"]
    rd = int(d * rope["partial_rotary_factor"])
    inv = 1.0 / (rope["rope_theta"] ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)

    def rot(t):
        r, rest = t[..., :rd], t[..., rd:]
        return torch.cat([r * cos + q.rotate_half(r) * sin, rest], dim=-1)

    qq, k = rot(qq), rot(k)
    k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
    s = qq @ k.transpose(-1, -2) / math.sqrt(d)
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    P = torch.softmax(s, dim=-1)
    return (P @ v) * torch.sigmoid(gate), P


def forward(w, ids, cfg=None, hooks=None):
    hooks = hooks or {}
    c = q.CONFIG
    eps = c["rms_norm_eps"]
    x = w["model.embed_tokens.weight"][ids]
    hidden, attention = [], []
    for i, kind in enumerate(q.TYPES):
        p = "model.layers.%d." % i
        if "resid" in hooks:
            x = hooks["resid"](i, x)
        hidden.append(x)
        h = q.rms1p(x, w[p + "input_layernorm.weight"], eps)
        delta = kind == "linear_attention"
        z, a = delta_z(w, p + "linear_attn.", h) if delta else full_z(w, p + "self_attn.", h)
        if "z" in hooks:
            z = hooks["z"](i, z)
        B, H, T, d = z.shape
        out = w[p + ("linear_attn.out_proj.weight" if delta else "self_attn.o_proj.weight")]
        x = x + z.transpose(1, 2).reshape(B, T, H * d) @ out.T
        h = q.rms1p(x, w[p + "post_attention_layernorm.weight"], eps)
        m = (q.silu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[
            p + "mlp.down_proj.weight"].T
        x = x + (hooks["mlp"](i, m) if "mlp" in hooks else m)
        attention.append(a)
    x = q.rms1p(x, w["model.norm.weight"], eps)
    hidden.append(x)
    return {"logits": x @ w["lm_head.weight"].T, "attention": attention, "hidden_states": hidden}


def main():
    folder = os.path.join(mg.OUT_DIR, NAME)
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    mg.forward_of = lambda _cfg: forward  # run_case's and check_forward's forward: this one
    # the self-check's unit direction is large beside this model's stream (its second-order term at
    # step 1e-5 is ~1e-6 relative, measured): a smaller step, its rounding ~1e-16 / 1e-6 still far
    # inside FD_TOL
    mg.FD_STEP = 1e-6
    mg.check_forward(folder, cfg)
    cases = [mg.case_json(mg.run_case(folder, cfg, *s)) for s in mg.specs_for(NAME)]
    doc = {"model": NAME, "generated_by": SCRIPT, "precision": "float64 (torch.autograd)",
           "layout": "grad_hidden L+1 of (T,E); grad_z L of (T,H*d) (a DeltaNet layer: H_v*d_v, its value "
                     "heads' gated-norm output); grad_mlp L of (T,E)", "cases": cases}
    mp.SIG_FMT = mg.SIG_FMT
    text = mp.emit(doc) + "\n"
    mp.write(os.path.join(folder, "expected_gradients.json"), text)
    print("  %s: %d cases, %d bytes" % (NAME, len(cases), len(text)))


if __name__ == "__main__":
    main()
