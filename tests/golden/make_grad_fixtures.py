#!/usr/bin/python3
"""Regenerates the PyTorch autograd fixtures (gradients and training) in tests/golden/fixtures/.

Run with Debian's interpreter, which sees python3-torch (1.13):
    /usr/bin/python3 tests/golden/make_grad_fixtures.py

Same text format, seeding (CRC of the fixture name) and mask convention (1 = MAY attend) as
make_fixtures.py, whose writer this script imports; the names go to a separate index,
fixtures/index_grad.txt, so the forward runners (index.txt) never see them. Families:
  sdpa_bwd_*  float64 plain-torch SDPA (our semantics: fully masked row -> P = 0, our dropout
              mask from the portable counter RNG of src/core/rng.cpp), cast to float32;
  mha_bwd_*   the real nn.MultiheadAttention (+ positional / residual / LayerNorm wrapper) in
              float32 with autograd;
  tiny_*      TinyTransformer (tiny_transformer.py): logits, loss, every gradient, 3 AdamW steps.
Every fixture is re-checked before it is written (see self_check_* below).
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import (FIXTURE_DIR, NEG_INF, FixtureWriter, causal_allowed, f32,  # noqa: E402
                           put_config, randn, random_allowed, randomize_, reference_mha,
                           remove_stale, seed_for)
from tiny_fixtures import TINY_CASES, tiny_case  # noqa: E402

INDEX_FILE = "index_grad.txt"
# float32 results (PyTorch or our cast) against the float64 re-computation, relative to max(1, |ref|∞).
GRAD_CHECK_TOL = 1e-4
# The SDPA float64 autograd against the closed-form backward (both float64).
SDPA_ANALYTIC_TOL = 1e-12
U64 = 0xFFFFFFFFFFFFFFFF


class GradFixtureWriter(FixtureWriter):
    script = "tests/golden/make_grad_fixtures.py"


ALL = []


def fixture(fn):
    ALL.append(fn)
    return fn


def max_rel_err(got, ref):
    ref = ref.detach().double()
    return ((got.detach().double() - ref).abs().max() / max(1.0, ref.abs().max().item())).item()


def assert_close(what, got, ref, tol=GRAD_CHECK_TOL):
    err = max_rel_err(got, ref)
    assert err < tol, "%s differs from its re-computation by %g" % (what, err)


# ----------------------------------------------------------------------------------------------
# Our dropout mask: the portable counter RNG of src/core/rng.cpp, bit for bit
# ----------------------------------------------------------------------------------------------
def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & U64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & U64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & U64
    return x ^ (x >> 31)


def uniform01(seed, counter):
    """float32((mix64(mix64(seed) ^ counter) >> 40)) / 2^24: 24 bits, exact in float32 and here."""
    return (mix64(mix64(seed) ^ counter) >> 40) / 16777216.0


# Values printed by the C++ uniform01 (src/core/rng.cpp) when this port was written.
assert uniform01(0, 0) == f32(0.652448475) and uniform01(0, 3) == f32(0.781499267)


def dropout_multiplier(shape, p, seed):
    """(lead..., Tq, Tk): 0 where uniform01(seed, e) < p (e = flat index), else
    keep_scale = 1.0f / (1.0f - p) computed in float32."""
    p32 = f32(p)
    keep_scale = f32(1.0 / f32(1.0 - p32))  # float64 division of float32s rounds like float32's
    n = math.prod(shape)
    values = [0.0 if uniform01(seed, e) < p32 else keep_scale for e in range(n)]
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


# ----------------------------------------------------------------------------------------------
# A. SDPA backward
# ----------------------------------------------------------------------------------------------
def sdpa_allowed(q, k, mask, additive, causal):
    """(lead..., Tq, Tk) bool: True where query i may attend key j under all masks."""
    shape = q.shape[:-1] + (k.shape[-2],)
    allowed = torch.ones(shape, dtype=torch.bool)
    if mask is not None:
        allowed = allowed & mask
    if additive is not None:
        allowed = allowed & (additive != NEG_INF)
    if causal:
        allowed = allowed & causal_allowed(q.shape[-2], k.shape[-2])
    return allowed


def sdpa_forward64(q, k, v, mask, additive, causal, scale, multiplier):
    """float64, autograd-safe: masked scores become -1e300 (exp underflows to exactly 0 next to
    any allowed key) and rows without an allowed key get P = 0, so every gradient is finite."""
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * s  # (lead..., Tq, Tk)
    if additive is not None:
        scores = scores + additive.double()
    allowed = sdpa_allowed(q, k, mask, additive, causal)
    row_has_key = allowed.any(-1, keepdim=True)  # (lead..., Tq, 1)
    safe = torch.where(allowed, scores, torch.full_like(scores, -1e300))
    weights = torch.softmax(safe, -1) * row_has_key
    used = weights if multiplier is None else weights * multiplier
    return used @ v, weights


def sdpa_backward_closed_form(q, k, v, weights, multiplier, grad_out, scale):
    """dV = Pdᵀ G, dPd = G Vᵀ, dP = dPd ⊙ M, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = s dS K, dK = s dSᵀ Q."""
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    m = torch.ones_like(weights) if multiplier is None else multiplier
    grad_v = (weights * m).transpose(-2, -1) @ grad_out
    grad_p = (grad_out @ v.transpose(-2, -1)) * m
    grad_s = weights * (grad_p - (weights * grad_p).sum(-1, keepdim=True))
    return s * grad_s @ k, s * grad_s.transpose(-2, -1) @ q, grad_v


def sdpa_bwd_case(w, lead, tq, tk, dk, dv, mask=None, additive=None, causal=False, scale=None,
                  dropout_p=0.0, dropout_seed=0):
    q, k, v = randn(*lead, tq, dk), randn(*lead, tk, dk), randn(*lead, tk, dv)
    grad_output = randn(*lead, tq, dv)
    multiplier = None
    if dropout_p > 0:
        multiplier = dropout_multiplier(tuple(lead) + (tq, tk), dropout_p, dropout_seed)
    leaves = [t.double().requires_grad_() for t in (q, k, v)]
    out, weights = sdpa_forward64(*leaves, mask, additive, causal, scale, multiplier)
    (out * grad_output.double()).sum().backward()
    grads = [t.grad for t in leaves]
    for name, g in zip(("q", "k", "v"), grads):
        assert torch.isfinite(g).all(), "grad_%s is not finite" % name
    closed = sdpa_backward_closed_form(*[t.detach() for t in leaves], weights.detach(),
                                       multiplier, grad_output.double(), scale)
    for name, g, c in zip(("q", "k", "v"), grads, closed):
        assert_close("sdpa grad_" + name, g, c, SDPA_ANALYTIC_TOL)

    for name, value in (("q", q), ("k", k), ("v", v), ("grad_output", grad_output)):
        w.put(name, value)
    if mask is not None:
        w.put_bool("mask", mask)
    if additive is not None:
        w.put("additive_mask", additive)
    w.put("causal", float(causal))
    if scale is not None:
        w.put("scale", scale)
    w.put("dropout_p", f32(dropout_p))
    if multiplier is not None:
        w.put("dropout_seed", float(dropout_seed))
        w.put("dropout_multiplier", multiplier)
    w.put("output", out.float())
    w.put("weights", weights.float())
    for name, g in zip(("grad_q", "grad_k", "grad_v"), grads):
        w.put(name, g.float())


@fixture
def sdpa_bwd_no_mask(w):
    w.comment("SDPA backward, no mask: q (3, 5, 3), k (3, 7, 3), v (3, 7, 5), default scale.")
    sdpa_bwd_case(w, (3,), 5, 7, 3, 5)


@fixture
def sdpa_bwd_bool_mask(w):
    w.comment("SDPA backward with a bool mask (3, 5) broadcast over the leading axes (2, 3).")
    sdpa_bwd_case(w, (2, 3), 3, 5, 5, 3, mask=random_allowed((3, 5), 0.6))


@fixture
def sdpa_bwd_additive_mask(w):
    w.comment("SDPA backward with an additive mask (3, 4, 7) holding finite values and -inf "
              "(every row keeps a finite key).")
    additive = randn(3, 4, 7, std=2.0)
    additive[~random_allowed((3, 4, 7), 0.7)] = NEG_INF
    sdpa_bwd_case(w, (3,), 4, 7, 3, 5, additive=additive)


@fixture
def sdpa_bwd_causal_square(w):
    w.comment("SDPA backward, causal, Tq = Tk = 5 (query i attends keys j <= i), lead (2, 3).")
    sdpa_bwd_case(w, (2, 3), 5, 5, 3, 2, causal=True)


@fixture
def sdpa_bwd_causal_wide(w):
    w.comment("SDPA backward, causal with Tq = 3 < Tk = 7, top-left aligned.")
    sdpa_bwd_case(w, (3,), 3, 7, 5, 3, causal=True)


@fixture
def sdpa_bwd_scale(w):
    w.comment("SDPA backward with a custom scale 0.37 (float32), q (3, 5, 3), k/v (3, 5, 3/5).")
    sdpa_bwd_case(w, (3,), 5, 5, 3, 5, scale=f32(0.37))


@fixture
def sdpa_bwd_masked_row(w):
    w.comment("SDPA backward with a bool mask (4, 5) whose row 2 is all zeros: that query row has "
              "P = 0, output 0 and grad_q 0, and contributes nothing to grad_k / grad_v.")
    mask = random_allowed((4, 5), 0.6)
    mask[2] = False
    sdpa_bwd_case(w, (3,), 4, 5, 3, 3, mask=mask)
    assert (w.data["output"][:, 2] == 0).all() and (w.data["grad_q"][:, 2] == 0).all()


@fixture
def sdpa_bwd_dropout(w):
    w.comment("SDPA backward with dropout p = 0.3, seed 12345: out = (P * M) @ V with our "
              "multiplier M (0 or float32(1/(1-p))) from uniform01(seed, flat index); lead (2, 3).")
    sdpa_bwd_case(w, (2, 3), 3, 5, 3, 3, dropout_p=0.3, dropout_seed=12345)


@fixture
def sdpa_bwd_dropout_causal_mask(w):
    w.comment("SDPA backward with dropout p = 0.25, seed 777, causal (Tq 5, Tk 7) and a bool mask "
              "(5, 7) that keeps key 0 for every query.")
    mask = random_allowed((5, 7), 0.7)
    mask[:, 0] = True
    sdpa_bwd_case(w, (3,), 5, 7, 3, 3, mask=mask, causal=True, dropout_p=0.25, dropout_seed=777)


# ----------------------------------------------------------------------------------------------
# B. nn.MultiheadAttention backward
# ----------------------------------------------------------------------------------------------
def make_masks(B, H, tq, tk, causal, bool_mask, additive_mask, key_padding):
    """Our masks (True = may attend / real token) and PyTorch's attn_mask / key_padding_mask."""
    ours, attn_mask, kpm = {}, None, None
    if causal:
        attn_mask = ~causal_allowed(tq, tk)
    if bool_mask is not None:
        ours["mask"] = random_allowed((tq, tk) if bool_mask == "2d" else (B * H, tq, tk), 0.6)
        attn_mask = ~ours["mask"]
    if additive_mask is not None:
        ours["additive_mask"] = randn(tq, tk, std=2.0)
        ours["additive_mask"][~random_allowed((tq, tk), 0.7)] = NEG_INF
        attn_mask = ours["additive_mask"]
    if key_padding:
        ours["key_padding_mask"] = random_allowed((B, tk), 0.7)
        kpm = ~ours["key_padding_mask"]
    return ours, attn_mask, kpm


def mha_bwd_case(w, E=6, H=2, B=2, tq=5, tk=None, kdim=None, vdim=None, bias=True,
                 add_bias_kv=False, add_zero_attn=False, self_attention=False, value_is_key=False,
                 key_padding=False, causal=False, bool_mask=None, additive_mask=None,
                 residual=False, layer_norm=False, positional_length=0):
    tk = tq if self_attention else (tk or tq)
    mha = nn.MultiheadAttention(E, H, bias=bias, add_bias_kv=add_bias_kv,
                                add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim,
                                batch_first=True).eval()
    randomize_(mha)
    params = dict(mha.named_parameters())
    names = list(mha.state_dict().keys())
    if layer_norm:
        ln = nn.LayerNorm(E, eps=1e-5)
        with torch.no_grad():
            ln.weight.copy_(1.0 + randn(E, std=0.2))
            ln.bias.copy_(randn(E, std=0.2))
        params.update({"layer_norm.weight": ln.weight, "layer_norm.bias": ln.bias})
        names += ["layer_norm.weight", "layer_norm.bias"]
    inputs = {"query": randn(B, tq, E)}
    if not self_attention:
        inputs["key"] = randn(B, tk, kdim or E)
        if not value_is_key:
            inputs["value"] = randn(B, tk, vdim or E)
    if positional_length:
        inputs["positional"] = randn(positional_length, E, std=0.5)
    for t in inputs.values():
        t.requires_grad_()
    ours, attn_mask, kpm = make_masks(B, H, tq, tk, causal, bool_mask, additive_mask, key_padding)

    # The wrapper: x = query (+ positional[:Tq]); self-attention uses x as key and value.
    x = inputs["query"] + inputs["positional"][:tq] if positional_length else inputs["query"]
    key = x if self_attention else inputs["key"]
    value = key if (self_attention or value_is_key) else inputs["value"]
    out, _ = mha(x, key, value, key_padding_mask=kpm, need_weights=False, attn_mask=attn_mask)
    if residual:
        out = out + x
    if layer_norm:
        out = ln(out)
    grad_output = randn(B, tq, E)
    out.backward(grad_output)
    assert torch.isfinite(out).all(), "a fully masked row slipped into a fixture"

    put_config(w, E, H, kdim, vdim, bias=bias, add_bias_kv=add_bias_kv,
               add_zero_attn=add_zero_attn, causal=causal, need_weights=False,
               residual=residual, layer_norm=layer_norm)
    w.put("self_attention", float(self_attention))
    for name in names:
        w.put(name, params[name])
    for name, t in inputs.items():
        w.put(name, t)
    for name, m in ours.items():
        (w.put_bool if m.dtype == torch.bool else w.put)(name, m)
    w.put("grad_output", grad_output)
    w.put("output", out)
    for name, t in inputs.items():
        w.put("grad_" + name, t.grad)
    for name in names:
        w.put("grad." + name, params[name].grad)


def self_check_mha(w):
    """Our float64 semantics (make_fixtures.reference_mha) with autograd, from the stored tensors."""
    d = dict(w.data)
    names = [n for n in d if n.startswith("grad.")]
    leaves = {n: d[n].clone().requires_grad_() for n in ("query", "key", "value", "positional")
              if n in d}
    leaves.update({n[5:]: d[n[5:]].clone().requires_grad_() for n in names})
    d.update(leaves)
    tq = d["query"].shape[1]
    x = d["query"] + d["positional"][:tq] if "positional" in d else d["query"]
    d["query"] = x
    d.setdefault("key", x)
    d.setdefault("value", d["key"])
    out, _ = reference_mha(d)
    (out * d["grad_output"]).sum().backward()
    assert_close(w.name + " output", w.data["output"], out)
    for n, leaf in leaves.items():
        stored = w.data["grad_" + n] if ("grad_" + n) in w.data else w.data["grad." + n]
        assert_close(w.name + " grad of " + n, stored, leaf.grad)


@fixture
def mha_bwd_self(w):
    w.comment("nn.MultiheadAttention(6, 2) self-attention backward, B 2, T 5: only grad_query.")
    mha_bwd_case(w, self_attention=True)


@fixture
def mha_bwd_cross(w):
    w.comment("nn.MultiheadAttention(6, 2) cross-attention backward, B 3, Tq 3, Tk 5.")
    mha_bwd_case(w, B=3, tq=3, tk=5)


@fixture
def mha_bwd_cross_value_is_key(w):
    w.comment("nn.MultiheadAttention(6, 2) cross-attention with value omitted (value = key): "
              "no 'value' tensor, grad_key holds the key and the value path; Tq 5, Tk 3.")
    mha_bwd_case(w, tq=5, tk=3, value_is_key=True)


@fixture
def mha_bwd_no_bias(w):
    w.comment("nn.MultiheadAttention(6, 2, bias=False) backward, Tq 5, Tk 3.")
    mha_bwd_case(w, tq=5, tk=3, bias=False)


@fixture
def mha_bwd_kdim_vdim(w):
    w.comment("nn.MultiheadAttention(6, 2, kdim=5, vdim=7) backward: grads of q/k/v_proj_weight.")
    mha_bwd_case(w, tq=3, tk=5, kdim=5, vdim=7)


@fixture
def mha_bwd_key_padding(w):
    w.comment("nn.MultiheadAttention(6, 2) backward with key_padding_mask (B 3, Tk 7), 1 = real.")
    mha_bwd_case(w, B=3, tq=3, tk=7, key_padding=True)


@fixture
def mha_bwd_causal(w):
    w.comment("nn.MultiheadAttention(9, 3) self-attention backward, causal (stored as "
              "causal 1), T 5.")
    mha_bwd_case(w, E=9, H=3, tq=5, self_attention=True, causal=True)


@fixture
def mha_bwd_additive_mask(w):
    w.comment("nn.MultiheadAttention(6, 2) backward with an additive attn_mask (Tq 5, Tk 3) "
              "holding -inf.")
    mha_bwd_case(w, tq=5, tk=3, additive_mask="2d")


@fixture
def mha_bwd_bool_mask_3d(w):
    w.comment("nn.MultiheadAttention(6, 2) backward with a per-head bool mask (B*H, Tq, Tk), "
              "index b*H + h.")
    mha_bwd_case(w, tq=3, tk=5, bool_mask="3d")


@fixture
def mha_bwd_bias_kv(w):
    w.comment("nn.MultiheadAttention(6, 2, add_bias_kv=True) backward with key padding: "
              "grad.bias_k, grad.bias_v.")
    mha_bwd_case(w, B=3, tq=3, tk=5, add_bias_kv=True, key_padding=True)


@fixture
def mha_bwd_zero_attn(w):
    w.comment("nn.MultiheadAttention(6, 2, add_zero_attn=True) backward with a 2-D bool "
              "mask (3, 5).")
    mha_bwd_case(w, tq=3, tk=5, add_zero_attn=True, bool_mask="2d")


@fixture
def mha_bwd_bias_kv_zero_attn(w):
    w.comment("nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True) backward with a "
              "3-D bool mask and key padding.")
    mha_bwd_case(w, tq=3, tk=5, add_bias_kv=True, add_zero_attn=True, bool_mask="3d",
                 key_padding=True)


@fixture
def mha_bwd_residual_layer_norm(w):
    w.comment("nn.MultiheadAttention(6, 2) self-attention backward with residual and "
              "LayerNorm(eps 1e-5): out = LN(mha(x) + x); grad.layer_norm.weight / bias.")
    mha_bwd_case(w, B=3, tq=5, self_attention=True, residual=True, layer_norm=True)


@fixture
def mha_bwd_positional_self(w):
    w.comment("nn.MultiheadAttention(6, 2) self-attention backward, causal, positional (7, 6) "
              "added to the query (Tq 5): x = query + positional[:5] is query, key, value and "
              "residual; grad_positional.")
    mha_bwd_case(w, tq=5, self_attention=True, residual=True, causal=True, positional_length=7)


@fixture
def mha_bwd_positional_cross(w):
    w.comment("nn.MultiheadAttention(6, 2) cross-attention backward with positional (5, 6) "
              "added to the query only (memory taken as encoded), then LayerNorm, no residual.")
    mha_bwd_case(w, B=3, tq=3, tk=5, layer_norm=True, positional_length=5)


# ----------------------------------------------------------------------------------------------
# C. TinyTransformer (cases in tiny_fixtures.py)
# ----------------------------------------------------------------------------------------------
for _name, _kwargs in TINY_CASES:
    def _builder(w, _kwargs=_kwargs):
        tiny_case(w, **_kwargs)
    _builder.__name__ = _name
    fixture(_builder)


def main():
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    names, total = [], 0
    for builder in ALL:
        name = builder.__name__
        seed_for(name)
        w = GradFixtureWriter(name)
        builder(w)
        if name.startswith("mha_bwd_"):
            self_check_mha(w)
        text = w.text()
        with open(os.path.join(FIXTURE_DIR, name + ".txt"), "w") as f:
            f.write(text)
        names.append(name)
        total += len(text)
        print("%-36s %7d bytes" % (name, len(text)))
    with open(os.path.join(FIXTURE_DIR, INDEX_FILE), "w") as f:
        f.write("# Gradient fixtures written by tests/golden/make_grad_fixtures.py, one name per line.\n")
        f.write("\n".join(names) + "\n")
    # Only this script's own files that it no longer writes; the other scripts' stay.
    remove_stale(GradFixtureWriter.script, {n + ".txt" for n in names} | {INDEX_FILE})
    print("wrote %d fixtures, %d bytes, to %s" % (len(names), total, FIXTURE_DIR))


if __name__ == "__main__":
    main()
