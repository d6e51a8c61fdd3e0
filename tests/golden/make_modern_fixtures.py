#!/usr/bin/python3
"""Regenerates the "modern attention" fixtures (modern_*.txt) in tests/golden/fixtures/.

Run with Debian's interpreter, which sees python3-torch (1.13) and python3-numpy:
    /usr/bin/python3 tests/golden/make_modern_fixtures.py

Same text format, seeding (CRC of the fixture name) and writer as make_fixtures.py; the names go
to their own index, fixtures/index_modern.txt, so the forward runners (index.txt) and the
gradient runners (index_grad.txt) never see them. Families:
  modern_rope_*        rotary embeddings ('half' = GPT-NeoX/Llama rotate_half, 'interleaved' =
                       GPT-J/RoFormer), partial rotary, position offset;
  modern_alibi_slopes  ALiBi slopes of the paper for 4, 6, 8, 12 heads;
  modern_sdpa_*        SDPA with ALiBi, grouped/multi-query K/V, sliding windows, bottom-right
                       causal and a position offset;
  modern_mha_*         multi-head attention with num_kv_heads, RoPE, ALiBi, windows;
  modern_mha_cache     a full causal forward a C++ test replays through a KV cache.

torch 1.13 has none of these built in: the references are written by hand with plain torch ops
in float64 (gradients from autograd) and cast to float32. Before a fixture is written, every
forward output and gradient is recomputed from the STORED tensors alone by a separate numpy
float64 implementation (rotation matrices, per-head loops, closed-form backward; see the
"numpy" section, which never calls the torch code) and must agree to NUMPY_CHECK_TOL; the numpy
closed-form backward is itself checked against central finite differences of the numpy forward
(FD_TOL), and modern_mha_cache is replayed in numpy row by row and in chunks (CACHE_TOL).

Semantics (the contract of the C++ core): query row r sits at absolute position
i = position_offset + r, key row c at j = c; causal mode 1 = top-left (j <= i), mode 2 =
bottom-right (position_offset = Tk - Tq); window w allows 0 <= i - j < w (causal) or |i - j| < w;
ALiBi adds -m_h * (i - j) (causal) or -m_h * |i - j| to the scaled scores; query head h uses
kv head floor(h / (H / Hkv)).
"""
import math
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import FIXTURE_DIR, FixtureWriter, f32, randn, remove_stale, seed_for  # noqa: E402

INDEX_FILE = "index_modern.txt"
PREFIX = "modern_"
# torch float64 (autograd) against the independent numpy float64 recomputation, forward and
# gradients, as max|a - b| / max(1, max|b|).
NUMPY_CHECK_TOL = 1e-10
# numpy closed-form gradients against central finite differences of the numpy forward along a
# random direction u: |<grad, u> - (f(x + eps u) - f(x - eps u)) / (2 eps)| / max(1, |<grad, u>|).
FD_TOL = 1e-7
FD_EPS = 1e-5
# The KV-cache replay (rows one at a time and in chunks, numpy) against the full forward.
CACHE_TOL = 1e-12
# Parameters are drawn N(0, PARAM_STD^2) like make_fixtures.randomize_.
PARAM_STD = 0.4
# Every drawn tensor (inputs, parameters, grad_output) is randn rounded to a multiple of
# 1/INPUT_GRID: exact in float32 and float64, and printed in at most 7 characters, which keeps
# the files small (the stored results keep their 9 significant digits).
INPUT_GRID = 16
NEG_INF = float("-inf")


class ModernFixtureWriter(FixtureWriter):
    script = "tests/golden/make_modern_fixtures.py"

    def __init__(self, name):
        super().__init__(name)
        self.ref64 = {}  # float64 torch results of the stored float32 expectations

    def put_result(self, name, value64):
        """Stores float32(value64) and keeps the float64 value for the numpy re-check."""
        self.ref64[name] = value64.detach().to(torch.float64).clone()
        self.put(name, value64.detach().float())


ALL = []


def qrandn(*shape, std=1.0):
    """make_fixtures.randn rounded to a multiple of 1/INPUT_GRID (same random stream)."""
    return torch.round(randn(*shape, std=std) * INPUT_GRID) / INPUT_GRID + 0.0  # no -0


def fixture(fn):
    ALL.append(fn)
    return fn


# ----------------------------------------------------------------------------------------------
# torch float64 references (plain ops, autograd for the gradients)
# ----------------------------------------------------------------------------------------------
def get_slopes(n):
    """ALiBi slopes of the paper: 2^(-8(h+1)/n) for a power of two n, else the slopes of the
    largest power of two P below n followed by the even-indexed slopes of 2P."""
    if n & (n - 1) == 0:
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    p = 1 << (n.bit_length() - 1)
    return get_slopes(p) + get_slopes(2 * p)[0::2][:n - p]


def apply_rotary(x, base, interleaved, dims, offset):
    """x (..., T, d) float64; row t at position offset + t; features dims.. pass through."""
    assert dims % 2 == 0 and dims <= x.shape[-1]
    half = dims // 2
    pos = torch.arange(x.shape[-2], dtype=torch.float64) + offset
    m = torch.arange(half, dtype=torch.float64)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64), -2.0 * m / dims)
    angle = pos[:, None] * theta[None, :]  # (T, dims/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    rot, rest = x[..., :dims], x[..., dims:]
    if interleaved:
        a, b = rot[..., 0::2], rot[..., 1::2]
        y = torch.stack((a * cos - b * sin, b * cos + a * sin), -1).reshape(rot.shape)
    else:
        a, b = rot[..., :half], rot[..., half:]
        y = torch.cat((a * cos - b * sin, b * cos + a * sin), -1)
    return torch.cat((y, rest), -1)


def effective_offset(causal_mode, position_offset, tq, tk):
    return tk - tq if causal_mode == 2 else position_offset


def attention_pattern(tq, tk, causal_mode, offset, window):
    """(allowed (Tq, Tk) bool, signed distance i - j (Tq, Tk) float64)."""
    i = torch.arange(tq, dtype=torch.float64)[:, None] + offset
    j = torch.arange(tk, dtype=torch.float64)[None, :]
    dist = i - j
    allowed = torch.ones(tq, tk, dtype=torch.bool)
    causal = causal_mode != 0
    if causal:
        allowed &= dist >= 0
    if window:
        allowed &= (dist < window) if causal else (dist.abs() < window)
    assert allowed.any(-1).all(), "a fully masked row slipped into a fixture"
    return allowed, dist


def sdpa(q, k, v, causal_mode=0, offset=0, window=0, slopes=None):
    """q (B, H, Tq, d), k/v (B, Hkv, Tk, d), float64 -> (output, weights (B, H, Tq, Tk))."""
    H, hkv = q.shape[1], k.shape[1]
    assert H % hkv == 0
    k = k.repeat_interleave(H // hkv, dim=1)  # Hugging Face repeat_kv order
    v = v.repeat_interleave(H // hkv, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed, dist = attention_pattern(q.shape[-2], k.shape[-2], causal_mode, offset, window)
    if slopes is not None:
        d = dist if causal_mode else dist.abs()
        scores = scores - torch.tensor(slopes, dtype=torch.float64)[:, None, None] * d
    weights = torch.softmax(scores.masked_fill(~allowed, NEG_INF), -1)
    assert not torch.isnan(weights).any()
    return weights @ v, weights


def mha(params, query, key, value, cfg):
    """The modern MHA of the contract, float64. cfg: the config scalars as Python numbers."""
    H, hkv, dk = cfg["num_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    B, tq, tk = query.shape[0], query.shape[1], key.shape[1]
    bq, bk, bv = torch.split(params["in_proj_bias"], [H * dk, hkv * dk, hkv * dk])
    q = (query @ params["q_proj_weight"].T + bq).reshape(B, tq, H, dk).transpose(1, 2)
    k = (key @ params["k_proj_weight"].T + bk).reshape(B, tk, hkv, dk).transpose(1, 2)
    v = (value @ params["v_proj_weight"].T + bv).reshape(B, tk, hkv, dk).transpose(1, 2)
    off = effective_offset(cfg["causal_mode"], cfg["position_offset"], tq, tk)
    if cfg["rope"]:
        rope = (cfg["rope_base"], cfg["rope_interleaved"], cfg["rope_dims"])
        q = apply_rotary(q, *rope, off)
        k = apply_rotary(k, *rope, 0)
    slopes = get_slopes(H) if cfg["alibi"] else None
    ctx, _ = sdpa(q, k, v, cfg["causal_mode"], off, cfg["window"], slopes)
    ctx = ctx.transpose(1, 2).reshape(B, tq, H * dk)
    return ctx @ params["out_proj.weight"].T + params["out_proj.bias"]


# ----------------------------------------------------------------------------------------------
# numpy float64: an independent implementation (never calls the torch code above)
# ----------------------------------------------------------------------------------------------
def np_slopes(n):
    """The ALiBi paper's own code: a geometric sequence starting at 2^(-2^-(log2(n) - 3))."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + np_slopes(2 * closest)[0::2][:n - closest]


def np_rotation(pos, d, dims, base, interleaved):
    """The (d, d) matrix R with y = R x for one row at position pos."""
    R = np.eye(d)
    for m in range(dims // 2):
        angle = pos * float(base) ** (-(2.0 * m) / dims)
        c, s = math.cos(angle), math.sin(angle)
        a, b = (2 * m, 2 * m + 1) if interleaved else (m, m + dims // 2)
        R[a, a], R[a, b], R[b, a], R[b, b] = c, -s, s, c
    return R


def np_rope(x, base, interleaved, dims, offset, grad=None):
    """Forward y = R_t x_t per row; with grad (dL/dy), returns dL/dx = R_tᵀ g instead."""
    out = np.empty_like(x if grad is None else grad)
    T, d = out.shape[-2], out.shape[-1]
    for t in range(T):
        R = np_rotation(offset + t, d, dims, base, interleaved)
        out[..., t, :] = (x[..., t, :] @ R.T) if grad is None else (grad[..., t, :] @ R)
    return out


def np_pattern(tq, tk, causal_mode, offset, window, slopes, h):
    """(allowed (Tq, Tk) bool, bias (Tq, Tk)) for query head h, element by element."""
    allowed = np.zeros((tq, tk), dtype=bool)
    bias = np.zeros((tq, tk))
    for r in range(tq):
        i = offset + r
        for j in range(tk):
            if causal_mode:
                ok = j <= i and (not window or i - j < window)
                dist = i - j
            else:
                ok = not window or abs(i - j) < window
                dist = abs(i - j)
            allowed[r, j] = ok
            if slopes is not None:
                bias[r, j] = -slopes[h] * dist
    return allowed, bias


def np_sdpa(q, k, v, causal_mode, offset, window, slopes, grad_out=None):
    """Per (batch, query head) loops; kv head g = h // (H / Hkv). Returns output, weights and,
    with grad_out, the closed-form (grad_q, grad_k, grad_v)."""
    B, H, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    group = H // hkv
    scale = 1.0 / math.sqrt(d)
    out = np.zeros((B, H, tq, v.shape[-1]))
    P_all = np.zeros((B, H, tq, tk))
    gq, gk, gv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for h in range(H):
        g = h // group
        allowed, bias = np_pattern(tq, tk, causal_mode, offset, window, slopes, h)
        for b in range(B):
            S = q[b, h] @ k[b, g].T * scale + bias
            S = np.where(allowed, S, -np.inf)
            E = np.exp(S - S.max(axis=1, keepdims=True))
            P = E / E.sum(axis=1, keepdims=True)
            P_all[b, h] = P
            out[b, h] = P @ v[b, g]
            if grad_out is not None:
                G = grad_out[b, h]
                dP = G @ v[b, g].T
                dS = P * (dP - (P * dP).sum(axis=1, keepdims=True))
                gq[b, h] = scale * dS @ k[b, g]
                gk[b, g] += scale * dS.T @ q[b, h]
                gv[b, g] += P.T @ G
    return out, P_all, (gq, gk, gv)


def np_cfg(d):
    names = ("embed_dim", "num_heads", "num_kv_heads", "head_dim", "causal_mode",
             "position_offset", "window", "alibi", "rope", "rope_base", "rope_interleaved",
             "rope_dims")
    cfg = {n: int(round(float(d[n]))) for n in names}
    cfg["rope_base"] = float(d["rope_base"])
    return cfg


def np_mha(d, cfg, grad_out=None):
    """d: numpy float64 arrays (query, key, value, state dict). Returns (output, grads) where
    grads maps 'query'/'key'/'value' and the parameter names to closed-form gradients."""
    H, hkv, dk = cfg["num_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    xq, xk, xv = d["query"], d["key"], d["value"]
    tq, tk = xq.shape[1], xk.shape[1]
    off = tk - tq if cfg["causal_mode"] == 2 else cfg["position_offset"]
    Wq, Wk, Wv = d["q_proj_weight"], d["k_proj_weight"], d["v_proj_weight"]
    b = d["in_proj_bias"]
    bq, bk, bv = b[:H * dk], b[H * dk:(H + hkv) * dk], b[(H + hkv) * dk:]
    Wo, bo = d["out_proj.weight"], d["out_proj.bias"]

    def heads(x, n):  # (B, T, n*dk) -> (B, n, T, dk)
        return x.reshape(x.shape[0], x.shape[1], n, dk).transpose(0, 2, 1, 3)

    def unheads(x):  # (B, n, T, dk) -> (B, T, n*dk)
        return x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)

    q0, k0, v = heads(xq @ Wq.T + bq, H), heads(xk @ Wk.T + bk, hkv), heads(xv @ Wv.T + bv, hkv)
    rope = (cfg["rope_base"], cfg["rope_interleaved"], cfg["rope_dims"])
    q = np_rope(q0, *rope, off) if cfg["rope"] else q0
    k = np_rope(k0, *rope, 0) if cfg["rope"] else k0
    slopes = np_slopes(H) if cfg["alibi"] else None
    g_ctx_heads = None
    if grad_out is not None:
        g_ctx = grad_out @ Wo  # (B, Tq, H*dk)
        g_ctx_heads = heads(g_ctx, H)
    ctx, _, (gq, gk, gv) = np_sdpa(q, k, v, cfg["causal_mode"], off, cfg["window"], slopes,
                                   g_ctx_heads)
    ctx = unheads(ctx)
    out = ctx @ Wo.T + bo
    if grad_out is None:
        return out, None
    if cfg["rope"]:
        gq = np_rope(None, *rope, off, grad=gq)
        gk = np_rope(None, *rope, 0, grad=gk)
    gq, gk, gv = unheads(gq), unheads(gk), unheads(gv)

    def wgrad(g, x):
        return np.einsum("bto,bti->oi", g, x)

    grads = {
        "q_proj_weight": wgrad(gq, xq), "k_proj_weight": wgrad(gk, xk),
        "v_proj_weight": wgrad(gv, xv),
        "in_proj_bias": np.concatenate([gq.sum((0, 1)), gk.sum((0, 1)), gv.sum((0, 1))]),
        "out_proj.weight": wgrad(grad_out, ctx), "out_proj.bias": grad_out.sum((0, 1)),
        "query": gq @ Wq, "key": gk @ Wk, "value": gv @ Wv,
    }
    return out, grads


# ----------------------------------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------------------------------
def rel_err(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    return float(np.abs(got - ref).max() / max(1.0, float(np.abs(ref).max())))


NUMPY_WORST = [0.0]


def check_numpy(w, name, ref_np):
    """The float64 torch value of stored result `name` against the numpy float64 value."""
    err = rel_err(w.ref64[name].numpy(), ref_np)
    NUMPY_WORST[0] = max(NUMPY_WORST[0], err)
    assert err < NUMPY_CHECK_TOL, "%s: %s differs from numpy by %g" % (w.name, name, err)


def fd_rng(w):
    return np.random.default_rng(zlib.crc32(w.name.encode()))


FD_WORST = [0.0]


def check_fd(w, loss, inputs, grads):
    """Central differences of loss(inputs) along one random direction per input."""
    rng = fd_rng(w)
    for n in sorted(inputs):
        u = rng.standard_normal(inputs[n].shape)
        u /= np.linalg.norm(u)
        plus = dict(inputs, **{n: inputs[n] + FD_EPS * u})
        minus = dict(inputs, **{n: inputs[n] - FD_EPS * u})
        fd = (loss(plus) - loss(minus)) / (2 * FD_EPS)
        an = float((grads[n] * u).sum())
        err = abs(fd - an) / max(1.0, abs(an))
        FD_WORST[0] = max(FD_WORST[0], err)
        assert err < FD_TOL, "%s: finite differences of %s off by %g" % (w.name, n, err)


def stored(w):
    """The stored tensors as numpy float64 (what a loader sees), scalars as floats."""
    return {n: (v.numpy().astype(np.float64) if isinstance(v, torch.Tensor) else float(v))
            for n, v in w.data.items()}


# ----------------------------------------------------------------------------------------------
# 1. RoPE
# ----------------------------------------------------------------------------------------------
def rope_case(w, shape, base, interleaved, dims, offset):
    x = qrandn(*shape)
    grad_output = qrandn(*shape)
    leaf = x.double().requires_grad_()
    out = apply_rotary(leaf, base, interleaved, dims, offset)
    (out * grad_output.double()).sum().backward()
    w.put("x", x)
    w.put("base", f32(base))
    w.put("interleaved", float(interleaved))
    w.put("dims", float(dims))
    w.put("offset", float(offset))
    w.put_result("output", out)
    w.put("grad_output", grad_output)
    w.put_result("grad_x", leaf.grad)


def check_rope(w):
    d = stored(w)
    args = (d["base"], int(d["interleaved"]), int(d["dims"]), int(d["offset"]))
    out = np_rope(d["x"], *args)
    grad_x = np_rope(None, *args, grad=d["grad_output"])
    check_numpy(w, "output", out)
    check_numpy(w, "grad_x", grad_x)
    check_fd(w, lambda t: float((np_rope(t["x"], *args) * d["grad_output"]).sum()),
             {"x": d["x"]}, {"x": grad_x})


@fixture
def modern_rope_half(w):
    w.comment("RoPE, 'half' style (GPT-NeoX/Llama rotate_half): x (2, 3, 5, 8), dims 8, "
              "base 10000, offset 0.")
    rope_case(w, (2, 3, 5, 8), 10000, 0, 8, 0)


@fixture
def modern_rope_interleaved(w):
    w.comment("RoPE, 'interleaved' style (GPT-J/RoFormer pairs (2m, 2m+1)): x (2, 5, 8), dims 8, "
              "base 10000, offset 0.")
    rope_case(w, (2, 5, 8), 10000, 1, 8, 0)


@fixture
def modern_rope_partial_offset(w):
    w.comment("RoPE, 'half' style, partial: x (1, 2, 6, 10), dims 6 (features 6..9 pass "
              "through), base 500, offset 7 (rows at positions 7..12).")
    rope_case(w, (1, 2, 6, 10), 500, 0, 6, 7)


# ----------------------------------------------------------------------------------------------
# 2. ALiBi slopes
# ----------------------------------------------------------------------------------------------
SLOPE_HEADS = (4, 6, 8, 12)


@fixture
def modern_alibi_slopes(w):
    w.comment("ALiBi slopes get_slopes(H) of the paper, float32, for H = 4, 6, 8, 12: "
              "2^(-8(h+1)/H) for a power of two; else get_slopes(P), P the largest power of "
              "two below H, then get_slopes(2P)[0::2][:H-P]. Forward only.")
    for H in SLOPE_HEADS:
        w.put_result("slopes_%d" % H, torch.tensor(get_slopes(H), dtype=torch.float64))


def check_alibi_slopes(w):
    for H in SLOPE_HEADS:
        check_numpy(w, "slopes_%d" % H, np.array(np_slopes(H)))


# ----------------------------------------------------------------------------------------------
# 3. SDPA: ALiBi, GQA/MQA, windows, bottom-right causal, position offset
# ----------------------------------------------------------------------------------------------
SDPA_D = 3  # head size of the SDPA cases (odd: catches vector-tail bugs)


def sdpa_case(w, B, H, tq, tk, hkv=None, causal_mode=0, position_offset=0, window=0,
              alibi=False):
    hkv = hkv or H
    q, k, v = qrandn(B, H, tq, SDPA_D), qrandn(B, hkv, tk, SDPA_D), qrandn(B, hkv, tk, SDPA_D)
    grad_output = qrandn(B, H, tq, SDPA_D)
    off = effective_offset(causal_mode, position_offset, tq, tk)
    slopes = get_slopes(H) if alibi else None
    leaves = [t.double().requires_grad_() for t in (q, k, v)]
    out, weights = sdpa(*leaves, causal_mode, off, window, slopes)
    (out * grad_output.double()).sum().backward()
    for name, value in (("q", q), ("k", k), ("v", v), ("grad_output", grad_output)):
        w.put(name, value)
    w.put("causal_mode", float(causal_mode))
    w.put("position_offset", float(off))
    w.put("window", float(window))
    w.put("alibi", float(alibi))
    w.put("enable_gqa", float(hkv != H))
    if alibi:
        w.put_result("alibi_slopes", torch.tensor(slopes, dtype=torch.float64))
    w.put_result("output", out)
    w.put_result("weights", weights)
    for name, leaf in zip(("grad_q", "grad_k", "grad_v"), leaves):
        w.put_result(name, leaf.grad)


def check_sdpa(w):
    d = stored(w)
    H = d["q"].shape[1]
    assert int(d["enable_gqa"]) == int(d["k"].shape[1] != H)
    slopes = np_slopes(H) if d["alibi"] else None
    if slopes is not None:
        check_numpy(w, "alibi_slopes", np.array(slopes))
    args = (int(d["causal_mode"]), int(d["position_offset"]), int(d["window"]), slopes)
    out, P, (gq, gk, gv) = np_sdpa(d["q"], d["k"], d["v"], *args, d["grad_output"])
    for name, ref in (("output", out), ("weights", P), ("grad_q", gq), ("grad_k", gk),
                      ("grad_v", gv)):
        check_numpy(w, name, ref)

    def loss(t):
        return float((np_sdpa(t["q"], t["k"], t["v"], *args)[0] * d["grad_output"]).sum())
    check_fd(w, loss, {n: d[n] for n in ("q", "k", "v")}, {"q": gq, "k": gk, "v": gv})


@fixture
def modern_sdpa_alibi_h4(w):
    w.comment("SDPA with ALiBi (4 heads), causal: q/k/v (1, 4, 6, 3); bias -m_h (i - j).")
    sdpa_case(w, 1, 4, 6, 6, causal_mode=1, alibi=True)


@fixture
def modern_sdpa_alibi_h6(w):
    w.comment("SDPA with ALiBi (6 heads, non power of two), not causal: q (1, 6, 5, 3), "
              "k/v (1, 6, 7, 3); bias -m_h |i - j|.")
    sdpa_case(w, 1, 6, 5, 7, alibi=True)


@fixture
def modern_sdpa_alibi_h8(w):
    w.comment("SDPA with ALiBi (8 heads), causal: q/k/v (1, 8, 5, 3).")
    sdpa_case(w, 1, 8, 5, 5, causal_mode=1, alibi=True)


@fixture
def modern_sdpa_gqa(w):
    w.comment("SDPA, grouped-query: q (1, 8, 5, 3), k/v (1, 2, 5, 3) (query head h uses kv head "
              "h // 4), causal; grad_k/grad_v summed over the sharing query heads.")
    sdpa_case(w, 1, 8, 5, 5, hkv=2, causal_mode=1)


@fixture
def modern_sdpa_mqa(w):
    w.comment("SDPA, multi-query: q (1, 4, 3, 3), k/v (1, 1, 6, 3), no mask.")
    sdpa_case(w, 1, 4, 3, 6, hkv=1)


@fixture
def modern_sdpa_window_causal(w):
    w.comment("SDPA, causal sliding window 3 (0 <= i - j < 3): q/k/v (1, 2, 9, 3).")
    sdpa_case(w, 1, 2, 9, 9, causal_mode=1, window=3)


@fixture
def modern_sdpa_window_bidir(w):
    w.comment("SDPA, bidirectional window 2 (|i - j| < 2), not causal: q/k/v (1, 2, 7, 3).")
    sdpa_case(w, 1, 2, 7, 7, window=2)


@fixture
def modern_sdpa_bottom_right(w):
    w.comment("SDPA, causal_mode 2 (bottom-right): q (1, 2, 3, 3), k/v (1, 2, 8, 3); queries at "
              "positions 5..7 (position_offset stores the effective Tk - Tq = 5).")
    sdpa_case(w, 1, 2, 3, 8, causal_mode=2)


@fixture
def modern_sdpa_offset(w):
    w.comment("SDPA, causal_mode 1 with position_offset 5 (queries at 5..8), window 4, ALiBi: "
              "q (1, 2, 4, 3), k/v (1, 2, 9, 3).")
    sdpa_case(w, 1, 2, 4, 9, causal_mode=1, position_offset=5, window=4, alibi=True)


@fixture
def modern_sdpa_gqa_alibi_window(w):
    w.comment("SDPA, grouped-query (H 4, Hkv 2) + ALiBi (4-head slopes, per query head) + "
              "causal window 3: q (2, 4, 6, 3), k/v (2, 2, 6, 3).")
    sdpa_case(w, 2, 4, 6, 6, hkv=2, causal_mode=1, window=3, alibi=True)


# ----------------------------------------------------------------------------------------------
# 4. and 5. Multi-head attention with num_kv_heads, RoPE, ALiBi, windows; the KV-cache case
# ----------------------------------------------------------------------------------------------
PARAM_NAMES = ("q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
               "out_proj.weight", "out_proj.bias")


def mha_case(w, E=16, H=4, hkv=4, B=2, tq=5, tk=None, causal_mode=0, position_offset=0,
             window=0, alibi=False, rope=False, rope_base=10000, rope_interleaved=False,
             rope_dims=None, backward=True):
    dk = E // H
    cross = tk is not None
    tk = tk if cross else tq
    params = {
        "q_proj_weight": qrandn(H * dk, E, std=PARAM_STD),
        "k_proj_weight": qrandn(hkv * dk, E, std=PARAM_STD),
        "v_proj_weight": qrandn(hkv * dk, E, std=PARAM_STD),
        "in_proj_bias": qrandn(H * dk + 2 * hkv * dk, std=PARAM_STD),
        "out_proj.weight": qrandn(E, H * dk, std=PARAM_STD),
        "out_proj.bias": qrandn(E, std=PARAM_STD),
    }
    inputs = {"query": qrandn(B, tq, E)}
    if cross:
        inputs["key"], inputs["value"] = qrandn(B, tk, E), qrandn(B, tk, E)
    grad_output = qrandn(B, tq, E) if backward else None
    cfg = {"embed_dim": E, "num_heads": H, "num_kv_heads": hkv, "head_dim": dk,
           "causal_mode": causal_mode,
           "position_offset": effective_offset(causal_mode, position_offset, tq, tk),
           "window": window, "alibi": int(alibi), "rope": int(rope),
           "rope_base": rope_base, "rope_interleaved": int(rope_interleaved),
           "rope_dims": (rope_dims or dk) if rope else 0}
    leaves = {n: t.double().requires_grad_(backward) for n, t in {**params, **inputs}.items()}
    key = leaves.get("key", leaves["query"])
    value = leaves.get("value", leaves["query"])
    out = mha(leaves, leaves["query"], key, value, cfg)
    if backward:
        (out * grad_output.double()).sum().backward()
    for n, number in cfg.items():
        w.put(n, f32(number))  # small integers and the RoPE base: exact
    for n in PARAM_NAMES:
        w.put(n, params[n])
    for n, t in inputs.items():
        w.put(n, t)
    if backward:
        w.put("grad_output", grad_output)
    w.put_result("output", out)
    if backward:
        for n in inputs:
            w.put_result("grad_" + n, leaves[n].grad)
        for n in PARAM_NAMES:
            w.put_result("grad." + n, leaves[n].grad)


def np_mha_inputs(d):
    t = {n: d[n] for n in PARAM_NAMES + ("query",)}
    t["key"] = d.get("key", d["query"])
    t["value"] = d.get("value", d["query"])
    return t


def check_mha(w):
    d = stored(w)
    cfg = np_cfg(d)
    assert cfg["embed_dim"] == cfg["num_heads"] * cfg["head_dim"]
    t = np_mha_inputs(d)
    if "grad_output" not in d:
        check_numpy(w, "output", np_mha(t, cfg)[0])
        return
    G = d["grad_output"]
    out, grads = np_mha(t, cfg, G)
    check_numpy(w, "output", out)
    cross = "key" in d
    if not cross:  # self-attention: query feeds all three projections
        grads["query"] = grads["query"] + grads["key"] + grads["value"]
    for n in ("query", "key", "value") if cross else ("query",):
        check_numpy(w, "grad_" + n, grads[n])
    for n in PARAM_NAMES:
        check_numpy(w, "grad." + n, grads[n])

    def loss(x):
        x = dict(x)
        if not cross:
            x["key"] = x["value"] = x["query"]
        return float((np_mha(x, cfg)[0] * G).sum())
    leaves = {n: t[n] for n in PARAM_NAMES + (("query", "key", "value") if cross else ("query",))}
    check_fd(w, loss, leaves, grads)


@fixture
def modern_mha_gqa(w):
    w.comment("Multi-head self-attention with grouped-query K/V: E 16, H 4, num_kv_heads 2 "
              "(head_dim 4), B 2, T 5, causal.")
    mha_case(w, hkv=2, causal_mode=1)


@fixture
def modern_mha_mqa(w):
    w.comment("Multi-head self-attention, multi-query (num_kv_heads 1): E 16, H 4, B 2, T 5, "
              "no mask.")
    mha_case(w, hkv=1)


@fixture
def modern_mha_rope_half(w):
    w.comment("Multi-head self-attention with RoPE 'half' on all 4 features of each head's q and "
              "k (base 10000): E 16, H 4, num_kv_heads 4, B 2, T 5, causal.")
    mha_case(w, causal_mode=1, rope=True)


@fixture
def modern_mha_rope_interleaved_partial(w):
    w.comment("Multi-head self-attention with RoPE 'interleaved' on the first 2 of each head's 4 "
              "features, base 100: E 16, H 4, num_kv_heads 2, B 2, T 5, causal, "
              "position_offset 0.")
    mha_case(w, hkv=2, causal_mode=1, rope=True, rope_base=100, rope_interleaved=True,
             rope_dims=2)


@fixture
def modern_mha_alibi_window(w):
    w.comment("Multi-head self-attention with ALiBi (4-head slopes) and a causal window 2: E 16, "
              "H 4, num_kv_heads 4, B 2, T 5.")
    mha_case(w, causal_mode=1, window=2, alibi=True)


@fixture
def modern_mha_cross_gqa_rope(w):
    w.comment("Multi-head cross-attention: query (2, 5, 16), key/value (2, 7, 16), H 4, "
              "num_kv_heads 2, RoPE 'half' full head_dim (base 10000), causal_mode 2 "
              "(bottom-right): queries at positions 2..6 (position_offset stores the effective 2), "
              "keys at 0..6.")
    mha_case(w, hkv=2, tk=7, causal_mode=2, rope=True)


CACHE_CHUNKS = ((0, 4), (4, 5), (5, 9))


@fixture
def modern_mha_cache(w):
    w.comment("KV-cache equivalence: multi-head self-attention E 16, H 4, num_kv_heads 2, RoPE "
              "'half' (base 10000, full head_dim), causal, B 1, T 9; output of the full forward "
              "over all 9 rows. Feeding rows to a KV cache one at a time (query row t at "
              "position t, keys 0..t) or in chunks must reproduce it. Forward only.")
    mha_case(w, B=1, tq=9, hkv=2, causal_mode=1, rope=True, backward=False)


def check_mha_cache(w):
    """Replays the cache in numpy: each step's queries at positions start..end-1 see keys
    0..end-1 (causal_mode 1, position_offset start), which must equal the full forward."""
    check_mha(w)
    d = stored(w)
    cfg = np_cfg(d)
    t = np_mha_inputs(d)
    full = np_mha(t, cfg)[0]
    T = d["query"].shape[1]
    for steps in ([(s, s + 1) for s in range(T)], CACHE_CHUNKS):
        for start, end in steps:
            x = dict(t, query=t["query"][:, start:end], key=t["key"][:, :end],
                     value=t["value"][:, :end])
            part = np_mha(x, dict(cfg, causal_mode=1, position_offset=start))[0]
            err = rel_err(part, full[:, start:end])
            assert err < CACHE_TOL, "%s: cache rows %d..%d off by %g" % (w.name, start, end, err)


CHECKS = {"modern_rope_": check_rope, "modern_alibi_slopes": check_alibi_slopes,
          "modern_sdpa_": check_sdpa, "modern_mha_cache": check_mha_cache,
          "modern_mha_": check_mha}


def check(w):
    for prefix, fn in CHECKS.items():
        if w.name.startswith(prefix):
            fn(w)
            return
    raise AssertionError("no check for " + w.name)


# ----------------------------------------------------------------------------------------------
def main():
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    names, total = [], 0
    for builder in ALL:
        name = builder.__name__
        assert name.startswith(PREFIX), name
        seed_for(name)
        w = ModernFixtureWriter(name)
        builder(w)
        check(w)
        text = w.text()
        with open(os.path.join(FIXTURE_DIR, name + ".txt"), "w") as f:
            f.write(text)
        names.append(name)
        total += len(text)
        print("%-40s %7d bytes" % (name, len(text)))
    with open(os.path.join(FIXTURE_DIR, INDEX_FILE), "w") as f:
        f.write("# Modern attention fixtures written by tests/golden/make_modern_fixtures.py, "
                "one name per line.\n")
        f.write("\n".join(names) + "\n")
    # Only this script's own files that it no longer writes; the other scripts' stay.
    remove_stale(ModernFixtureWriter.script, {n + ".txt" for n in names} | {INDEX_FILE})
    print("self-checks passed: torch vs numpy <= %.3g (tol %g), finite differences <= %.3g "
          "(tol %g), KV-cache replay (tol %g)"
          % (NUMPY_WORST[0], NUMPY_CHECK_TOL, FD_WORST[0], FD_TOL, CACHE_TOL))
    print("wrote %d fixtures, %d bytes, to %s" % (len(names), total, FIXTURE_DIR))


if __name__ == "__main__":
    main()
