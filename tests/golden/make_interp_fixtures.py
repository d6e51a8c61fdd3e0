#!/usr/bin/python3
"""Expected head-type scores and attention rollout (issue #27) in float64, from references that share
nothing with the JS library:

  * tests/golden/pretrained/<name>/expected_interp.json for every tiny checkpoint there: the weights
    are read from its model.safetensors (F32) by make_pretrained_fixtures.read_safetensors and run
    through that script's hand-written torch forwards (gpt2_forward / llama_forward) in float64; the
    attention is also recomputed by its independent numpy forwards (np_gpt2 / np_llama) and must agree
    to NUMPY_TOL;
  * tests/golden/interp/tiny_transformer.json: TinyTransformers (pre-norm with learned positions,
    post-norm with sinusoidal positions) of tests/golden/tiny_transformer.py, their float32 weights
    (printed with '%.9g', so they round-trip exactly) and, from the same weights in float64, logits and
    the expectations; the attention comes from nn.MultiheadAttention(need_weights=True,
    average_attn_weights=False) inside the real module's forward.

Run with Debian's interpreter (python3-torch 1.13):
    /usr/bin/python3 tests/golden/make_interp_fixtures.py

The scores are computed here as masked sums (a (T, T) 0/1 matrix per kind, rows that qualify = rows
with a 1), not as the JS library's per-row loops:
  previous-token  M[i, j] = 1 iff j = i - 1                     (rows i = 1 .. T-1)
  duplicate-token M[i, j] = 1 iff j < i and ids[j] = ids[i]
  induction       M[i, j] = 1 iff 1 <= j < i and ids[j-1] = ids[i]
  score[l, h] = mean over qualifying rows i of sum_j M[i, j] A[l, h, i, j]; no qualifying row: NaN
(written as null in JSON). Rollout: Â = (1 - w) mean_h A + w I, rows divided by their sums;
R_0 = Â_0, R_l = Â_l @ R_{l-1}. Deterministic: numbers printed with '%.7g' (weights '%.9g').
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
from tiny_transformer import TinyConfig, TinyTransformer, randomize_tiny_  # noqa: E402

KINDS = ["previous-token", "duplicate-token", "induction"]
RESIDUAL_WEIGHTS = [0.5, 0.0, 0.3]
NUMPY_TOL = 1e-9
SIG_FMT = "%.7g"
WEIGHT_FMT = "%.9g"

# (case name, ids): a repeated random block (induction rows), a sequence with several copies of few
# tokens, the no-duplicate prompt of expected.json (duplicate/induction NaN) and T = 1 (all NaN).
PRETRAINED_CASES = [
    ("repeat_t16", [7, 52, 19, 83, 40, 11, 66, 90, 7, 52, 19, 83, 40, 11, 66, 90]),
    ("dups_t9", [3, 3, 3, 70, 3, 70, 70, 9, 3]),
    ("distinct_t7", [5, 17, 42, 88, 3, 61, 29]),
    ("single_t1", [42]),
]
TINY_CASES = [
    ("repeat_t12", [1, 4, 6, 2, 7, 0, 1, 4, 6, 2, 7, 0]),
    ("dups_t7", [3, 3, 5, 3, 5, 5, 2]),
    ("distinct_t5", [0, 1, 2, 3, 4]),
    ("single_t1", [5]),
]
TINY_MODELS = [
    ("tiny_pre_learned", TinyConfig(8, 16, 12, 3, 2, mlp=True, mlp_hidden=24, positional="learned", norm="pre")),
    ("tiny_post_sinusoidal", TinyConfig(8, 16, 12, 3, 2, mlp=True, mlp_hidden=24, positional="sinusoidal", norm="post")),
]


def masks(ids):
    """{kind: (T, T) float64 0/1 matrix} of the definitions above."""
    ids = np.asarray(ids)
    T = len(ids)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    prev_ids = np.concatenate([[-1], ids[:-1]])  # ids[j - 1], -1 (no token) at j = 0
    return {
        "previous-token": (j == i - 1).astype(np.float64),
        "duplicate-token": ((j < i) & (ids[None, :] == ids[:, None])).astype(np.float64),
        "induction": ((j >= 1) & (j < i) & (prev_ids[None, :] == ids[:, None])).astype(np.float64),
    }


def head_scores(ids, attention):
    """attention: list of (H, T, T) float64 arrays -> {kind: (L, H) array with NaN where undefined}."""
    A = np.stack(attention)  # (L, H, T, T)
    out = {}
    for kind, m in masks(ids).items():
        rows = m.sum(axis=1) > 0
        if not rows.any():
            out[kind] = np.full(A.shape[:2], np.nan)
            continue
        per_row = (A * m[None, None]).sum(axis=-1)  # (L, H, T)
        out[kind] = per_row[:, :, rows].mean(axis=-1)
    return out


def rollout(attention, w):
    R = None
    out = []
    for a in attention:
        T = a.shape[-1]
        hat = (1.0 - w) * a.mean(axis=0) + w * np.eye(T)
        hat = hat / hat.sum(axis=1, keepdims=True)
        R = hat if R is None else hat @ R
        out.append(R)
    return np.stack(out)


def num(v, fmt=SIG_FMT):
    return None if math.isnan(v) else float(fmt % v)


def tjson(a, fmt=SIG_FMT):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [num(v, fmt) for v in a.reshape(-1).tolist()]}


def emit(o, indent=0):
    """JSON with objects indented and every list of numbers (null for NaN) on one line."""
    pad = "  " * indent
    if isinstance(o, dict):
        items = ['%s  %s: %s' % (pad, json.dumps(k), emit(v, indent + 1)) for k, v in o.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
    if isinstance(o, list):
        if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in o):
            return "[" + ",".join("null" if v is None else (json.dumps(v) if isinstance(v, int) else repr(v)) for v in o) + "]"
        return "[\n" + ",\n".join(pad + "  " + emit(v, indent + 1) for v in o) + "\n" + pad + "]"
    return json.dumps(o, ensure_ascii=False)


def expectations(ids, attention):
    scores = head_scores(ids, attention)
    for a in attention:  # every attention row of a causal model sums to 1
        assert np.allclose(a.sum(axis=-1), 1.0, atol=1e-12)
    rolls = {}
    for w in RESIDUAL_WEIGHTS:
        r = rollout(attention, w)
        assert np.allclose(r.sum(axis=-1), 1.0, atol=1e-12)
        rolls[repr(w)] = tjson(r)
    return {"head_scores": {k: tjson(v) for k, v in scores.items()}, "rollout": rolls}


def pretrained(name):
    folder = os.path.join(mp.OUT_DIR, name)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    tensors, _ = mp.read_safetensors(open(os.path.join(folder, "model.safetensors"), "rb").read())
    is_gpt2 = cfg["model_type"] == "gpt2"
    strip = (lambda n: n[len("transformer."):] if n.startswith("transformer.") else n)
    wnp = {strip(n): arr.astype(np.float64) for n, (dt, _, arr) in tensors.items() if dt == "F32"}
    w64 = {n: torch.from_numpy(a) for n, a in wnp.items()}
    forward = mp.gpt2_forward if is_gpt2 else mp.llama_forward
    np_forward = mp.np_gpt2 if is_gpt2 else mp.np_llama
    cases = []
    worst = 0.0
    for cname, ids in PRETRAINED_CASES:
        ref = forward(w64, torch.tensor([ids]), cfg)
        chk = np_forward(wnp, np.array([ids]), cfg)
        attention = [a[0].numpy() for a in ref["attention"]]
        other = [np.asarray(a)[0] for a in chk["attention"]]
        for a, b in zip(attention, other):
            worst = max(worst, float(np.abs(a - b).max()))
        s1, s2 = head_scores(ids, attention), head_scores(ids, other)
        for k in KINDS:
            assert np.allclose(s1[k], s2[k], atol=NUMPY_TOL, equal_nan=True), (name, cname, k)
        cases.append(dict({"name": cname, "input_ids": ids}, **expectations(ids, attention)))
    assert worst <= NUMPY_TOL, (name, worst)
    doc = {"source": "tests/golden/make_interp_fixtures.py", "model": name, "kinds": KINDS, "cases": cases}
    path = os.path.join(folder, "expected_interp.json")
    mp.write(path, emit(doc) + "\n")
    print("  %s: %d cases, torch vs numpy attention max |diff| %.1e -> %s" % (name, len(cases), worst, os.path.relpath(path)))


class Recorder:
    """Wraps a Block's self_attention to keep its per-head weights (B, H, T, T)."""

    def __init__(self, block):
        self.block, self.weights = block, None

    def __call__(self, h, blocked):
        out, w = self.block.attn(h, h, h, attn_mask=blocked, need_weights=True, average_attn_weights=False)
        self.weights = w
        return out


def tiny(name, cfg):
    seed_for(name)
    model = TinyTransformer(cfg)
    randomize_tiny_(model)
    sd32 = {n: p.detach().to(torch.float32).clone() for n, p in model.state_dict().items()}
    model = model.double()  # the same float32 values, now computed in float64
    recorders = []
    for block in model.blocks:
        r = Recorder(block)
        block.self_attention = r
        recorders.append(r)
    if cfg.positional == "sinusoidal":  # the float32 table, as the C++ core's, widened
        model.sinusoidal = model.sinusoidal.double()
    cases = []
    with torch.no_grad():
        for cname, ids in TINY_CASES:
            logits = model(torch.tensor([ids]))
            attention = [r.weights[0].numpy() for r in recorders]
            case = {"name": cname, "input_ids": ids, "logits": tjson(logits[0].numpy())}
            case.update(expectations(ids, attention))
            cases.append(case)
    conf = {"vocabSize": cfg.vocab_size, "maxLength": cfg.max_length, "dModel": cfg.d_model,
            "numHeads": cfg.num_heads, "numLayers": cfg.num_layers, "mlp": cfg.mlp, "mlpHidden": cfg.hidden(),
            "positional": cfg.positional, "norm": cfg.norm, "causal": cfg.causal}
    weights = {n: tjson(t.numpy(), WEIGHT_FMT) for n, t in sd32.items()}
    for n, t in sd32.items():  # '%.9g' round-trips float32
        back = np.array(weights[n]["data"], dtype=np.float32).reshape(t.shape)
        assert np.array_equal(back, t.numpy()), n
    return {"name": name, "config": conf, "weights": weights, "cases": cases}


def main():
    torch.set_num_threads(1)
    for name in sorted(os.listdir(mp.OUT_DIR)):
        if os.path.exists(os.path.join(mp.OUT_DIR, name, "model.safetensors")):
            pretrained(name)
    out_dir = os.path.join(HERE, "interp")
    os.makedirs(out_dir, exist_ok=True)
    doc = {"source": "tests/golden/make_interp_fixtures.py", "kinds": KINDS,
           "models": [tiny(name, cfg) for name, cfg in TINY_MODELS]}
    path = os.path.join(out_dir, "tiny_transformer.json")
    mp.write(path, emit(doc) + "\n")
    print("  TinyTransformer: %d models -> %s (%d bytes)" % (len(doc["models"]), os.path.relpath(path), os.path.getsize(path)))


if __name__ == "__main__":
    main()
