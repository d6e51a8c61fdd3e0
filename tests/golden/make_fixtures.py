#!/usr/bin/python3
"""Regenerates the PyTorch golden fixtures in tests/golden/fixtures/.

Run with Debian's interpreter, which sees python3-torch (1.13):
    /usr/bin/python3 tests/golden/make_fixtures.py

Every fixture is one small text file, one tensor per line (see tests/golden/README.md):
    <name> <ndim> <d0> ... <d_{ndim-1}> : <v0> <v1> ...
Values are printed with '%.9g' (float32 round-trips exactly); scalars have ndim 0; lines starting
with '#' are comments and the first comment says which module and which case.

Conventions of the fixtures (not PyTorch's):
  * Boolean masks are 0/1 floats with 1 = MAY attend (and 1 = real token for key padding).
    nn.MultiheadAttention's bool masks mean the opposite (True = NOT allowed); we convert here.
  * SDPA references are computed in float64 with plain torch ops (torch 1.13 has no
    F.scaled_dot_product_attention) and cast to float32; MHA references come from the real
    nn.MultiheadAttention in float32 eval mode; the tutorial modules are transcribed below.
  * No fixture contains a fully masked row: PyTorch returns NaN there, our core returns zeros
    (tested in tests/cpp/test_golden.cpp without PyTorch).

Each fixture seeds torch from a CRC of its own name, so fixtures do not depend on their order.
Before writing, every MHA-style fixture is re-checked against an independent float64
implementation of OUR documented semantics (reference_mha below), which catches mistakes in the
mask conversion and the state-dict mapping before the C++ core ever sees the files.
"""
import copy
import math
import os
import re
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
# How close the float64 re-check of our semantics must be to the stored float32 expectation.
SELF_CHECK_TOL = 2e-6
NEG_INF = float("-inf")


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------
def fmt(v):
    return "%.9g" % v


class FixtureWriter:
    """Collects named tensors for one fixture and writes them in insertion order."""

    script = "tests/golden/make_fixtures.py"  # named in every file's header; subclasses override

    def __init__(self, name):
        self.name = name
        self.comments = []  # the builder's first comment describes the module and the case
        self.entries = []  # (name, tensor-or-number)
        self.data = {}

    def comment(self, text):
        self.comments.append(text)

    def put(self, name, value):
        assert name not in self.data, name
        if isinstance(value, torch.Tensor):
            value = value.detach().to(torch.float64).contiguous()
        self.entries.append((name, value))
        self.data[name] = value

    def put_bool(self, name, mask):
        """mask: a bool tensor in OUR convention (True = may attend / real token)."""
        assert mask.dtype == torch.bool
        self.put(name, mask.to(torch.float64))

    def text(self):
        lines = ["# %s: %s" % (self.name, self.comments[0])]
        lines += ["# " + c for c in self.comments[1:]]
        lines.append("# Written by %s (torch %s); regenerate, do not edit."
                     % (self.script, torch.__version__))
        for name, value in self.entries:
            if isinstance(value, torch.Tensor):
                dims = list(value.shape)
                vals = value.reshape(-1).tolist()
            else:
                dims, vals = [], [float(value)]
            head = [name, str(len(dims))] + [str(d) for d in dims] + [":"]
            lines.append(" ".join(head + [fmt(v) for v in vals]))
        return "\n".join(lines) + "\n"


ALL = []


def fixture(fn):
    """Registers a fixture builder; the builder's name (without make_) is the file name."""
    ALL.append(fn)
    return fn


def seed_for(name):
    torch.manual_seed(zlib.crc32(name.encode()))


def randn(*shape, std=1.0):
    return torch.randn(*shape, dtype=torch.float32) * std


def f32(x):
    """The float32 value nearest to x, as a Python float (what the C++ core will see)."""
    return float(torch.tensor(x, dtype=torch.float32))


def random_allowed(shape, p_allowed=0.6):
    """A random bool mask (True = may attend) with at least one True in every last-axis row."""
    mask = torch.rand(*shape) < p_allowed
    rows = mask.reshape(-1, shape[-1])
    for r in range(rows.shape[0]):
        if not rows[r].any():
            rows[r, torch.randint(shape[-1], (1,))] = True
    return rows.reshape(shape)


# ----------------------------------------------------------------------------------------------
# Softmax and LayerNorm
# ----------------------------------------------------------------------------------------------
@fixture
def softmax_worked_example(w):
    x = torch.tensor([1.0, 1.0, 1.0, 5.0])
    w.comment("The tutorial's worked example: softmax([1,1,1,5]) = [0.0174, 0.0174, 0.0174, 0.9479].")
    w.put("x", x)
    w.put("expected", torch.softmax(x.double(), -1).float())


@fixture
def softmax_rows(w):
    x = randn(2, 3, 7, std=2.0)
    x[0, 1] = torch.tensor([1000.0, 1001.0, 999.0, 1000.5, -1000.0, 1002.0, 998.0])  # overflow test
    x[1, 2] = torch.tensor([-80.0, -90.0, -100.0, -85.0, -95.0, -88.0, -99.0])       # underflow test
    w.comment("Softmax over the last axis of a (2, 3, 7) tensor; row [0,1] has values near 1000 "
              "(exp would overflow without max-subtraction), row [1,2] values near -90.")
    w.put("x", x)
    w.put("expected", torch.softmax(x.double(), -1).float())


def layer_norm_case(w, eps):
    x = randn(2, 3, 8, std=1.5) + 0.5
    x[1, 0] = randn(8, std=0.01)        # variance ~1e-4: the value of eps matters here
    x[1, 1] = randn(8, std=0.5) + 3.0   # a mean far from 0 (one-pass variance would lose digits)
    weight, bias = randn(8, std=0.5) + 1.0, randn(8, std=0.3)
    w.comment("nn.LayerNorm(8, eps=%g) with weight and bias over a (2, 3, 8) tensor; row [1,0] has "
              "variance ~1e-4 so a wrong eps shows, row [1,1] has mean ~3." % eps)
    w.put("x", x)
    w.put("weight", weight)
    w.put("bias", bias)
    w.put("eps", f32(eps))
    ref = F.layer_norm(x.double(), (8,), weight.double(), bias.double(), eps)
    w.put("expected", ref.float())


@fixture
def layer_norm_eps1e5(w):
    layer_norm_case(w, 1e-5)


@fixture
def layer_norm_eps1e6(w):
    layer_norm_case(w, 1e-6)


# ----------------------------------------------------------------------------------------------
# Scaled dot-product attention (float64 reference with plain torch ops)
# ----------------------------------------------------------------------------------------------
def causal_allowed(tq, tk):
    """Top-left aligned causal pattern: query i may attend key j iff j <= i."""
    return torch.ones(tq, tk, dtype=torch.bool).tril()


def sdpa_reference(q, k, v, mask=None, additive=None, causal=False, scale=None):
    """softmax(q @ k^T * scale + additive, masked with -inf) @ v in float64; mask True = may attend."""
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q.double() @ k.double().transpose(-2, -1) * s
    if additive is not None:
        scores = scores + additive.double()
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    if causal:
        scores = scores.masked_fill(~causal_allowed(q.shape[-2], k.shape[-2]), NEG_INF)
    weights = torch.softmax(scores, -1)
    assert not torch.isnan(weights).any(), "a fully masked row slipped into a fixture"
    return (weights @ v.double()).float(), weights.float()


def sdpa_case(w, lead, tq, tk, dk, dv, mask=None, additive=None, causal=False, scale=None):
    q, k, v = randn(*lead, tq, dk), randn(*lead, tk, dk), randn(*lead, tk, dv)
    w.put("q", q)
    w.put("k", k)
    w.put("v", v)
    if mask is not None:
        w.put_bool("mask", mask)
    if additive is not None:
        w.put("additive_mask", additive)
    w.put("causal", 1.0 if causal else 0.0)
    if scale is not None:
        w.put("scale", scale)
    out, weights = sdpa_reference(q, k, v, mask, additive, causal, scale)
    w.put("expected", out)
    w.put("weights", weights)


@fixture
def sdpa_no_mask(w):
    w.comment("SDPA, no mask: q (2, 4, 8), k (2, 6, 8), v (2, 6, 5); default scale 1/sqrt(8).")
    sdpa_case(w, (2,), 4, 6, 8, 5)


@fixture
def sdpa_bool_mask(w):
    w.comment("SDPA with a boolean mask (4, 6) broadcast over the leading batch axis of q (3, 4, 8).")
    sdpa_case(w, (3,), 4, 6, 8, 5, mask=random_allowed((4, 6)))


@fixture
def sdpa_additive_mask(w):
    w.comment("SDPA with an additive float mask (2, 4, 6) holding finite values and -inf.")
    additive = randn(2, 4, 6, std=2.0)
    additive[~random_allowed((2, 4, 6), 0.7)] = NEG_INF
    sdpa_case(w, (2,), 4, 6, 8, 5, additive=additive)


@fixture
def sdpa_causal_square(w):
    w.comment("SDPA, causal with Tq == Tk == 5: query i attends keys j <= i.")
    sdpa_case(w, (2,), 5, 5, 4, 6, causal=True)


@fixture
def sdpa_causal_wide(w):
    w.comment("SDPA, causal with Tq = 3 < Tk = 6, top-left aligned: query i attends keys j <= i.")
    sdpa_case(w, (2,), 3, 6, 4, 6, causal=True)


@fixture
def sdpa_causal_tall(w):
    w.comment("SDPA, causal with Tq = 6 > Tk = 4, top-left aligned: query i attends keys j <= i.")
    sdpa_case(w, (2,), 6, 4, 4, 6, causal=True)


@fixture
def sdpa_causal_and_mask(w):
    w.comment("SDPA, causal combined with a boolean mask (5, 5); every row keeps key 0 allowed.")
    mask = random_allowed((5, 5), 0.7)
    mask[:, 0] = True
    sdpa_case(w, (2,), 5, 5, 4, 3, mask=mask, causal=True)


@fixture
def sdpa_scale(w):
    temperature = 1.7
    w.comment("SDPA with a custom scale: temperature %g, scale = 1/temperature (float32)." % temperature)
    sdpa_case(w, (2,), 4, 5, 6, 3, scale=f32(1.0 / temperature))


@fixture
def sdpa_leading_axes(w):
    w.comment("SDPA on (B, H, T, d) = q (2, 3, 4, 5), k/v (2, 3, 6, 5/7) with a key-padding style "
              "boolean mask (2, 1, 1, 6) broadcast over heads and queries.")
    sdpa_case(w, (2, 3), 4, 6, 5, 7, mask=random_allowed((2, 1, 1, 6), 0.6))


# ----------------------------------------------------------------------------------------------
# nn.MultiheadAttention (real module, float32, eval mode)
# ----------------------------------------------------------------------------------------------
def randomize_(module, std=0.4):
    """nn.MultiheadAttention starts with zero biases: draw every parameter so each one matters."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * std)


def put_config(w, E, H, kdim=None, vdim=None, head_dim=None, value_head_dim=None, bias=True,
               add_bias_kv=False, add_zero_attn=False, causal=False, need_weights=True,
               average_weights=True, residual=False, layer_norm=False, layer_norm_eps=1e-5):
    head_dim = head_dim or E // H
    config = [("embed_dim", E), ("num_heads", H), ("kdim", kdim or E), ("vdim", vdim or E),
              ("head_dim", head_dim), ("value_head_dim", value_head_dim or head_dim),
              ("bias", bias), ("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn),
              ("residual", residual), ("layer_norm", layer_norm),
              ("layer_norm_eps", f32(layer_norm_eps)), ("causal", causal),
              ("need_weights", need_weights), ("average_weights", average_weights)]
    for name, value in config:
        w.put(name, float(value))


def mha_case(w, E=8, H=2, B=2, tq=5, tk=None, kdim=None, vdim=None, bias=True, add_bias_kv=False,
             add_zero_attn=False, self_attention=False, key_padding=False, causal=False,
             bool_mask=None, additive_mask=None, need_weights=True, average_weights=True):
    """bool_mask: None, '2d' or '3d' (random, converted to PyTorch's True = NOT allowed);
    additive_mask: None or '2d'."""
    tk = tq if self_attention else (tk or tq)
    mha = nn.MultiheadAttention(E, H, bias=bias, add_bias_kv=add_bias_kv,
                                add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim,
                                batch_first=True).eval()
    randomize_(mha)
    query = randn(B, tq, E)
    key = query if self_attention else randn(B, tk, kdim or E)
    value = query if self_attention else randn(B, tk, vdim or E)

    # 1. Masks in OUR convention (True = may attend / real token), then PyTorch's from them.
    attn_mask = None
    ours = {}
    if causal:
        attn_mask = ~causal_allowed(tq, tk)
    if bool_mask is not None:
        shape = (tq, tk) if bool_mask == "2d" else (B * H, tq, tk)
        ours["mask"] = random_allowed(shape, 0.6)
        attn_mask = ~ours["mask"]
    if additive_mask is not None:
        ours["additive_mask"] = randn(tq, tk, std=2.0)
        ours["additive_mask"][~random_allowed((tq, tk), 0.7)] = NEG_INF
        attn_mask = ours["additive_mask"]
    kpm = None
    if key_padding:
        ours["key_padding_mask"] = random_allowed((B, tk), 0.7)
        kpm = ~ours["key_padding_mask"]

    # 2. The PyTorch forward pass.
    with torch.no_grad():
        out, weights = mha(query, key, value, key_padding_mask=kpm, need_weights=need_weights,
                           attn_mask=attn_mask, average_attn_weights=average_weights)
    assert not torch.isnan(out).any()

    # 3. Write config, state dict (PyTorch's names), inputs, masks, expectations.
    put_config(w, E, H, kdim, vdim, bias=bias, add_bias_kv=add_bias_kv,
               add_zero_attn=add_zero_attn, causal=causal, need_weights=need_weights,
               average_weights=average_weights)
    w.put("self_attention", float(self_attention))
    for name, tensor in mha.state_dict().items():
        w.put(name, tensor)
    w.put("query", query)
    w.put("key", key)
    w.put("value", value)
    for name in ("mask", "additive_mask", "key_padding_mask"):
        if name in ours:
            if ours[name].dtype == torch.bool:
                w.put_bool(name, ours[name])
            else:
                w.put(name, ours[name])
    w.put("expected", out)
    if need_weights:
        w.put("weights", weights)


@fixture
def mha_self(w):
    w.comment("nn.MultiheadAttention(8, 2, batch_first=True), self-attention, B=2, T=5, "
              "head-averaged weights.")
    mha_case(w, self_attention=True)


@fixture
def mha_cross(w):
    w.comment("nn.MultiheadAttention(8, 2), cross-attention with Tq = 3, Tk = 6.")
    mha_case(w, tq=3, tk=6)


@fixture
def mha_no_bias(w):
    w.comment("nn.MultiheadAttention(8, 2, bias=False): no in_proj_bias, no out_proj.bias.")
    mha_case(w, tq=4, tk=5, bias=False)


@fixture
def mha_kdim_vdim(w):
    w.comment("nn.MultiheadAttention(8, 2, kdim=6, vdim=10): separate q/k/v_proj_weight.")
    mha_case(w, tq=4, tk=5, kdim=6, vdim=10)


@fixture
def mha_key_padding(w):
    w.comment("nn.MultiheadAttention(8, 2) with key_padding_mask (B, Tk); ours: 1 = real token.")
    mha_case(w, tq=4, tk=6, key_padding=True)


@fixture
def mha_causal(w):
    w.comment("nn.MultiheadAttention(12, 3) self-attention, attn_mask = the causal pattern "
              "(stored as causal = 1, no mask tensor).")
    mha_case(w, E=12, H=3, tq=5, self_attention=True, causal=True)


@fixture
def mha_additive_mask(w):
    w.comment("nn.MultiheadAttention(8, 2) with an additive float attn_mask (Tq, Tk) holding -inf.")
    mha_case(w, tq=4, tk=5, additive_mask="2d")


@fixture
def mha_bool_mask_3d(w):
    w.comment("nn.MultiheadAttention(8, 2) with a per-head bool attn_mask (B*H, Tq, Tk), index "
              "b*H + h; stored in our convention (1 = may attend).")
    mha_case(w, tq=4, tk=5, bool_mask="3d")


@fixture
def mha_bias_kv(w):
    w.comment("nn.MultiheadAttention(8, 2, add_bias_kv=True) with key_padding_mask: the appended "
              "bias_k/bias_v key is never masked; weights (B, Tq, Tk + 1).")
    mha_case(w, tq=4, tk=5, add_bias_kv=True, key_padding=True)


@fixture
def mha_zero_attn(w):
    w.comment("nn.MultiheadAttention(8, 2, add_zero_attn=True) with a 2-D bool attn_mask: the "
              "appended zero key is never masked; weights (B, Tq, Tk + 1).")
    mha_case(w, tq=4, tk=5, add_zero_attn=True, bool_mask="2d")


@fixture
def mha_bias_kv_zero_attn(w):
    w.comment("nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True) with a 3-D bool "
              "mask and key padding; per-head weights (B, H, Tq, Tk + 2).")
    mha_case(w, tq=3, tk=4, add_bias_kv=True, add_zero_attn=True, bool_mask="3d",
             key_padding=True, average_weights=False)


@fixture
def mha_weights_per_head(w):
    w.comment("nn.MultiheadAttention(12, 4), need_weights=True, average_attn_weights=False: "
              "weights (B, H, Tq, Tk).")
    mha_case(w, E=12, H=4, tq=3, tk=5, average_weights=False)


@fixture
def mha_weights_averaged(w):
    w.comment("nn.MultiheadAttention(12, 4), need_weights=True, average_attn_weights=True: "
              "weights (B, Tq, Tk), the mean over heads.")
    mha_case(w, E=12, H=4, tq=3, tk=5, average_weights=True)


@fixture
def mha_no_weights(w):
    w.comment("nn.MultiheadAttention(8, 2) self-attention with need_weights=False: output only.")
    mha_case(w, tq=5, self_attention=True, need_weights=False)


# ----------------------------------------------------------------------------------------------
# The three tutorial modules, transcribed as their authors wrote them
# ----------------------------------------------------------------------------------------------
class WCombineMultiHeadAttention(nn.Module):
    """(a) The w_q / w_k / w_v / w_combine module: four nn.Linear with bias, heads split with
    view + transpose, score.masked_fill(mask == 0, -10000)."""

    def __init__(self, d_model, n_head):
        super(WCombineMultiHeadAttention, self).__init__()
        self.n_head = n_head
        self.d_model = d_model
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_combine = nn.Linear(d_model, d_model)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, q, k, v, mask=None):
        batch, time, dimension = q.shape
        n_d = self.d_model // self.n_head
        q, k, v = self.w_q(q), self.w_k(k), self.w_v(v)
        q = q.view(batch, time, self.n_head, n_d).transpose(1, 2)
        k = k.view(batch, k.shape[1], self.n_head, n_d).transpose(1, 2)
        v = v.view(batch, v.shape[1], self.n_head, n_d).transpose(1, 2)
        score = q @ k.transpose(2, 3) / math.sqrt(n_d)
        if mask is not None:
            score = score.masked_fill(mask == 0, -10000)
        score = self.softmax(score)
        self.attn = score  # kept so the fixture can store the per-head weights
        score = score @ v
        score = score.transpose(1, 2).contiguous().view(batch, time, dimension)
        output = self.w_combine(score)
        return output


def clones(module, N):
    "Produce N identical layers."
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    """(b) The Annotated Transformer's module: four linears (with bias) via clones, -1e9 fill."""

    def __init__(self, h, d_model, dropout=0.1):
        "Take in model size and number of heads."
        super(MultiHeadedAttention, self).__init__()
        assert d_model % h == 0
        # We assume d_v always equals d_k
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            # Same mask applied to all h heads.
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)

        # 1) Do all the linear projections in batch from d_model => h x d_k
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value))
        ]

        # 2) Apply attention on all the projected vectors in batch.
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)

        # 3) "Concat" using a view and apply a final linear.
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        del query
        del key
        del value
        return self.linears[-1](x)


class ScaledDotProductAttention(nn.Module):
    """(c) "Official paper" code: Scaled Dot-Product Attention with a temperature."""

    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)

    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q / self.temperature, k.transpose(2, 3))
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        output = torch.matmul(attn, v)
        return output, attn


class MultiHeadAttention(nn.Module):
    """(c) "Official paper" Multi-Head Attention: no-bias projections, separate d_k and d_v,
    residual add and LayerNorm(eps=1e-6) after the output projection."""

    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__()
        self.n_head = n_head
        self.d_k = d_k
        self.d_v = d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k, bias=False)
        self.w_ks = nn.Linear(d_model, n_head * d_k, bias=False)
        self.w_vs = nn.Linear(d_model, n_head * d_v, bias=False)
        self.fc = nn.Linear(n_head * d_v, d_model, bias=False)
        self.attention = ScaledDotProductAttention(temperature=d_k ** 0.5)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, q, k, v, mask=None):
        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, len_k, len_v = q.size(0), q.size(1), k.size(1), v.size(1)
        residual = q
        # Pass through the pre-attention projection: b x lq x (n*dv)
        # Separate different heads: b x lq x n x dv
        q = self.w_qs(q).view(sz_b, len_q, n_head, d_k)
        k = self.w_ks(k).view(sz_b, len_k, n_head, d_k)
        v = self.w_vs(v).view(sz_b, len_v, n_head, d_v)
        # Transpose for attention dot product: b x n x lq x dv
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if mask is not None:
            mask = mask.unsqueeze(1)  # For head axis broadcasting.
        q, attn = self.attention(q, k, v, mask=mask)
        # Transpose to move the head dimension back: b x lq x n x dv
        # Combine the last two dimensions to concatenate all the heads together: b x lq x (n*dv)
        q = q.transpose(1, 2).contiguous().view(sz_b, len_q, -1)
        q = self.dropout(self.fc(q))
        q += residual
        q = self.layer_norm(q)
        return q, attn


@fixture
def tutorial_w_combine(w):
    E, H, B, T = 8, 2, 2, 5
    w.comment("Tutorial module (a): w_q/w_k/w_v/w_combine (nn.Linear with bias), "
              "masked_fill(mask == 0, -10000); self-attention with a 2-D mask (T, T).")
    module = WCombineMultiHeadAttention(E, H).eval()
    randomize_(module)
    x = randn(B, T, E)
    mask = random_allowed((T, T), 0.6)  # the tutorial's convention: 1 = keep, as ours
    with torch.no_grad():
        out = module(x, x, x, mask=mask.float())
    put_config(w, E, H, bias=True, average_weights=False)
    w.put("self_attention", 1.0)
    w.put("in_proj_weight", torch.cat([module.w_q.weight, module.w_k.weight, module.w_v.weight]))
    w.put("in_proj_bias", torch.cat([module.w_q.bias, module.w_k.bias, module.w_v.bias]))
    w.put("out_proj.weight", module.w_combine.weight)
    w.put("out_proj.bias", module.w_combine.bias)
    w.put("query", x)
    w.put("key", x)
    w.put("value", x)
    w.put_bool("mask", mask)
    w.put("expected", out)
    w.put("weights", module.attn)


@fixture
def tutorial_annotated(w):
    E, H, B, TQ, TK = 8, 2, 2, 4, 6
    w.comment("Tutorial module (b): the Annotated Transformer's MultiHeadedAttention (4 linears via "
              "clones, masked_fill(mask == 0, -1e9), dropout in eval mode); cross-attention with a "
              "source padding mask (B, 1, Tk) stored as key_padding_mask (B, Tk).")
    module = MultiHeadedAttention(H, E).eval()
    randomize_(module)
    query, memory = randn(B, TQ, E), randn(B, TK, E)
    src_mask = random_allowed((B, TK), 0.7)
    with torch.no_grad():
        out = module(query, memory, memory, mask=src_mask.unsqueeze(1))
    put_config(w, E, H, bias=True, average_weights=False)
    w.put("self_attention", 0.0)
    lin = module.linears
    w.put("in_proj_weight", torch.cat([lin[0].weight, lin[1].weight, lin[2].weight]))
    w.put("in_proj_bias", torch.cat([lin[0].bias, lin[1].bias, lin[2].bias]))
    w.put("out_proj.weight", lin[3].weight)
    w.put("out_proj.bias", lin[3].bias)
    w.put("query", query)
    w.put("key", memory)
    w.put("value", memory)
    w.put_bool("key_padding_mask", src_mask)
    w.put("expected", out)
    w.put("weights", module.attn)


@fixture
def tutorial_official(w):
    E, H, DK, DV, B, T = 8, 2, 3, 5, 2, 5
    w.comment("Tutorial module (c): the 'official paper' MultiHeadAttention (w_qs/w_ks/w_vs/fc "
              "without bias, d_k=3, d_v=5, temperature d_k**0.5, -1e9 fill, residual + "
              "LayerNorm(eps=1e-6)); self-attention with a per-batch mask (B, T, T) = padding & "
              "subsequent, stored per head as (B*H, T, T).")
    module = MultiHeadAttention(H, E, DK, DV).eval()
    randomize_(module)
    x = randn(B, T, E)
    pad = random_allowed((B, 1, T), 0.8)
    pad[:, :, 0] = True  # every query keeps key 0, so no row is fully masked after the &
    mask = pad & causal_allowed(T, T).unsqueeze(0)  # (B, T, T), the tutorial's decoder mask
    with torch.no_grad():
        out, attn = module(x, x, x, mask=mask)
    put_config(w, E, H, head_dim=DK, value_head_dim=DV, bias=False, average_weights=False,
               residual=True, layer_norm=True, layer_norm_eps=1e-6)
    w.put("self_attention", 1.0)
    w.put("q_proj_weight", module.w_qs.weight)
    w.put("k_proj_weight", module.w_ks.weight)
    w.put("v_proj_weight", module.w_vs.weight)
    w.put("out_proj.weight", module.fc.weight)
    w.put("layer_norm.weight", module.layer_norm.weight)
    w.put("layer_norm.bias", module.layer_norm.bias)
    w.put("query", x)
    w.put("key", x)
    w.put("value", x)
    w.put_bool("mask", mask.repeat_interleave(H, dim=0))  # (B*H, T, T), index b*H + h
    w.put("expected", out)
    w.put("weights", attn)


# ----------------------------------------------------------------------------------------------
# Self-check: OUR semantics in float64, from the stored tensors only
# ----------------------------------------------------------------------------------------------
def reference_mha(d):
    """Recomputes an MHA-style fixture from its stored tensors with our documented semantics
    (src/core/multi_head.h), in float64. Returns (output, weights-or-None)."""
    E, H = int(d["embed_dim"]), int(d["num_heads"])
    dk, dv = int(d["head_dim"]), int(d["value_head_dim"])
    x, key, value = d["query"], d["key"], d["value"]
    B, tq = x.shape[0], x.shape[1]
    # 1. Projections (nn.Linear: y = x W^T + b).
    if "in_proj_weight" in d:
        wq, wk, wv = torch.split(d["in_proj_weight"], [H * dk, H * dk, H * dv])
    else:
        wq, wk, wv = d["q_proj_weight"], d["k_proj_weight"], d["v_proj_weight"]
    bq, bk, bv = (torch.split(d["in_proj_bias"], [H * dk, H * dk, H * dv])
                  if "in_proj_bias" in d else (0.0, 0.0, 0.0))
    q, k, v = x @ wq.T + bq, key @ wk.T + bk, value @ wv.T + bv
    # 2. Extra keys: bias_k/bias_v, then a zero key/value; never masked.
    extra = 0
    if d["add_bias_kv"]:
        k = torch.cat([k, d["bias_k"].expand(B, 1, H * dk)], 1)
        v = torch.cat([v, d["bias_v"].expand(B, 1, H * dv)], 1)
        extra += 1
    if d["add_zero_attn"]:
        k = torch.cat([k, torch.zeros(B, 1, H * dk, dtype=k.dtype)], 1)
        v = torch.cat([v, torch.zeros(B, 1, H * dv, dtype=v.dtype)], 1)
        extra += 1
    tk = k.shape[1]
    # 3. Heads: (B, H, T, d).
    q = q.view(B, tq, H, dk).transpose(1, 2)
    k = k.view(B, tk, H, dk).transpose(1, 2)
    v = v.view(B, tk, H, dv).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(dk)  # (B, H, Tq, Tk')
    # 4. Masks (ours: 1 = may attend), padded with "allowed" for the extra keys.
    allowed = torch.ones(B, H, tq, tk, dtype=torch.bool)
    def pad(m, value):
        return F.pad(m, (0, extra), value=value)

    if "mask" in d:
        m = pad(d["mask"], 1.0) > 0.5
        allowed &= m.view(B, H, tq, tk) if m.dim() == 3 else m
    if "key_padding_mask" in d:
        allowed &= (pad(d["key_padding_mask"], 1.0) > 0.5).view(B, 1, 1, tk)
    if d["causal"]:
        allowed &= causal_allowed(tq, tk)
    if "additive_mask" in d:
        scores = scores + pad(d["additive_mask"], 0.0)
    weights = torch.softmax(scores.masked_fill(~allowed, NEG_INF), -1)
    # 5. Context, concat, output projection, residual, LayerNorm.
    concat = (weights @ v).transpose(1, 2).reshape(B, tq, H * dv)
    out = concat @ d["out_proj.weight"].T
    if "out_proj.bias" in d:
        out = out + d["out_proj.bias"]
    if d["residual"]:
        out = out + x
    if d["layer_norm"]:
        out = F.layer_norm(out, (E,), d["layer_norm.weight"], d["layer_norm.bias"],
                           d["layer_norm_eps"])
    if not d["need_weights"]:
        return out, None
    return out, (weights if not d["average_weights"] else weights.mean(1))


def self_check(w):
    if not (w.name.startswith("mha_") or w.name.startswith("tutorial_")):
        return
    out, weights = reference_mha(w.data)
    err = (out - w.data["expected"]).abs().max().item()
    assert err < SELF_CHECK_TOL, "%s: output differs from our semantics by %g" % (w.name, err)
    if weights is not None:
        werr = (weights - w.data["weights"]).abs().max().item()
        assert werr < SELF_CHECK_TOL, "%s: weights differ by %g" % (w.name, werr)


def written_by(path):
    """The script a fixture file names in its header comment ("# Written by <script> (torch ...)",
    or an index's "# ... written by <script>, one name per line."), or None."""
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            m = re.search(r"[Ww]ritten by (tests/golden/[A-Za-z0-9_]+\.py)\b", line)
            if m:
                return m.group(1)
    return None


def remove_stale(script, written):
    """Deletes the *.txt files in FIXTURE_DIR that `script` signed in an earlier run but did not
    write in this one (`written`: the file names it just wrote, its index included). Files another
    script signed (make_grad_fixtures.py, make_modern_fixtures.py, make_adamw_fixture.py) or no
    script signed are never touched, so the fixture scripts give the same files in any order."""
    for old in sorted(os.listdir(FIXTURE_DIR)):
        path = os.path.join(FIXTURE_DIR, old)
        if old.endswith(".txt") and old not in written and written_by(path) == script:
            os.remove(path)


def main():
    torch.set_grad_enabled(False)
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    names, total = [], 0
    for builder in ALL:
        name = builder.__name__
        seed_for(name)
        w = FixtureWriter(name)
        builder(w)
        self_check(w)
        text = w.text()
        with open(os.path.join(FIXTURE_DIR, name + ".txt"), "w") as f:
            f.write(text)
        names.append(name)
        total += len(text)
    with open(os.path.join(FIXTURE_DIR, "index.txt"), "w") as f:
        f.write("# Golden fixtures written by tests/golden/make_fixtures.py, one name per line.\n")
        f.write("\n".join(names) + "\n")
    # Only this script's own files that it no longer writes; the other scripts' stay.
    remove_stale(FixtureWriter.script, {n + ".txt" for n in names} | {"index.txt"})
    print("wrote %d fixtures, %d bytes, to %s" % (len(names), total, FIXTURE_DIR))


if __name__ == "__main__":
    main()
