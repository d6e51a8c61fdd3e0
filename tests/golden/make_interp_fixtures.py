#!/usr/bin/python3
"""Expected head-type scores, attention rollout and (TinyTransformer) direct logit attribution
(issue #27) in float64, from references that share nothing with the JS library:

  * tests/golden/pretrained/<name>/expected_interp.json for each checkpoint of PRETRAINED_MODELS: the weights
    are read from its model.safetensors (F32) by make_pretrained_fixtures.read_safetensors and run
    through that script's hand-written torch forwards (gpt2_forward / llama_forward) in float64; the
    attention is also recomputed by its independent numpy forwards (np_gpt2 / np_llama) and must agree
    to NUMPY_TOL;
  * tests/golden/interp/tiny_transformer.json: TinyTransformers (pre-norm with learned positions,
    post-norm with sinusoidal positions, attention-only without norms) of
    tests/golden/tiny_transformer.py, their float32 weights (printed with '%.9g', so they round-trip
    exactly) and, from the same weights in float64, logits and the expectations; the attention comes
    from nn.MultiheadAttention(need_weights=True, average_attn_weights=False) inside the real module's
    forward. Attribution (tiny_attribution): each head's z recomputed from in_proj (checked against
    nn.MultiheadAttention's output to 1e-12), the components carried as rows of a matrix through each
    LayerNorm frozen at the real forward's input, and their total checked against the module's
    logits to 1e-10. Their `patching` cases: patch_reference below (TinyTransformers through
    tiny_hooked: attention recomputed from in_proj, z and the stream entering each block hooked);
  * tests/golden/pretrained/<name>/expected_patch.json for each checkpoint of PATCH_MODELS: activation
    patching (every patched logit difference of 'head', 'head-position' and 'residual', from full
    float64 forwards of the corrupted ids with one activation replaced through the forwards' hooks)
    and direct logit attribution (pretrained_attribution, checked against the forward's logits).

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
# The checkpoints of tests/golden/pretrained/ (add each new family here once its folder is committed).
PRETRAINED_MODELS = ["gpt2-tiny", "llama-tiny", "qwen2-tiny", "llama3-scaled-tiny"]
RESIDUAL_WEIGHTS = [0.5, 0.0, 0.3]
TINY_RESIDUAL_WEIGHTS = [0.5, 0.3]  # the TinyTransformer file holds its weights too: fewer rollouts
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
    ("tiny_pre_learned", TinyConfig(8, 16, 8, 2, 2, mlp=True, mlp_hidden=16, positional="learned", norm="pre")),
    ("tiny_post_sinusoidal", TinyConfig(8, 16, 8, 2, 2, mlp=True, mlp_hidden=16, positional="sinusoidal", norm="post")),
    ("tiny_none_attn_only", TinyConfig(8, 16, 12, 3, 2, mlp=False, positional="learned", norm="none")),
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


def expectations(ids, attention, weights=RESIDUAL_WEIGHTS):
    scores = head_scores(ids, attention)
    for a in attention:  # every attention row of a causal model sums to 1
        assert np.allclose(a.sum(axis=-1), 1.0, atol=1e-12)
    rolls = {}
    for w in weights:
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


def frozen(ln, x_row, rows, bias):
    """rows (C, E) and the constants' row through LayerNorm `ln` frozen at its actual input x_row:
    c -> s (c - mean c) * gamma; the constants also get beta."""
    s = 1.0 / torch.sqrt(x_row.var(unbiased=False) + ln.eps)
    rows = s * (rows - rows.mean(dim=1, keepdim=True)) * ln.weight
    bias = s * (bias - bias.mean()) * ln.weight + ln.bias
    return rows, bias


def tiny_attribution(model, cfg, ids, position, token, against):
    """Direct logit attribution of the float64 module at one position: the residual components
    (embed, every head's z @ its out_proj columns, every MLP output) as rows of a matrix carried
    through every later LayerNorm frozen at the real forward's input, dotted with
    u = head.weight[token] - head.weight[against]. Heads are recomputed from in_proj and checked
    against nn.MultiheadAttention's output; the total against the module's logits."""
    E, H = cfg.d_model, cfg.num_heads
    d, T = E // H, len(ids)
    ids_t = torch.tensor(ids)
    x = model.tok_emb.weight[ids_t]
    if cfg.positional == "learned":
        x = x + model.pos_emb.weight[:T]
    elif cfg.positional == "sinusoidal":
        x = x + model.sinusoidal[:T]
    rows = [x[position]]
    kinds = [("embed",)]
    bias = torch.zeros(E, dtype=torch.float64)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1) if cfg.causal else None
    for l, block in enumerate(model.blocks):
        a_in = block.ln1(x) if cfg.norm == "pre" else x
        W, b = block.attn.in_proj_weight, block.attn.in_proj_bias
        q, k, v = ((a_in @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]).view(T, H, d).transpose(0, 1) for i in range(3))
        s = q @ k.transpose(1, 2) / math.sqrt(d)
        if blocked is not None:
            s = s.masked_fill(blocked, float("-inf"))
        z = torch.softmax(s, dim=-1) @ v  # (H, T, d)
        Wo, bo = block.attn.out_proj.weight, block.attn.out_proj.bias
        attn_out = z.transpose(0, 1).reshape(T, E) @ Wo.T + bo
        ref = block.attn(a_in, a_in, a_in, attn_mask=blocked, need_weights=False)[0]
        assert float((attn_out - ref).abs().max()) < 1e-12
        for h in range(H):
            rows.append(Wo[:, h * d:(h + 1) * d] @ z[h, position])
            kinds.append(("head", l, h))
        bias = bias + bo
        x = x + attn_out
        if cfg.norm == "post":
            R, bias = frozen(block.ln1, x[position], torch.stack(rows), bias)
            rows = list(R)
            x = block.ln1(x)
        if cfg.mlp:
            m = block.mlp(block.ln2(x) if cfg.norm == "pre" else x)
            rows.append(m[position])
            kinds.append(("mlp", l))
            x = x + m
            if cfg.norm == "post":
                R, bias = frozen(block.ln2, x[position], torch.stack(rows), bias)
                rows = list(R)
                x = block.ln2(x)
    if cfg.norm == "pre":
        R, bias = frozen(model.ln_f, x[position], torch.stack(rows), bias)
        rows = list(R)
    Wu, bu = model.head.weight, model.head.bias
    u = Wu[token] - (Wu[against] if against is not None else 0)
    parts = [float(r @ u) for r in rows]
    out = {"heads": np.zeros((cfg.num_layers, H)), "mlp": np.zeros(cfg.num_layers)}
    for kind, value in zip(kinds, parts):
        if kind[0] == "embed":
            out["embed"] = value
        elif kind[0] == "head":
            out["heads"][kind[1], kind[2]] = value
        else:
            out["mlp"][kind[1]] = value
    out["bias"] = float(bias @ u) + float(bu[token] - (bu[against] if against is not None else 0))
    out["total"] = out["embed"] + out["bias"] + float(out["heads"].sum()) + float(out["mlp"].sum())
    logits = model(ids_t[None])[0]
    diff = float(logits[position, token] - (logits[position, against] if against is not None else 0))
    assert abs(out["total"] - diff) < 1e-10, (out["total"], diff)
    return {"position": position, "token": token, "against": against, "heads": tjson(out["heads"]),
            "mlp": tjson(out["mlp"]), "embed": num(out["embed"]), "bias": num(out["bias"]),
            "total": num(out["total"]), "logitDiff": num(diff)}


# ---- activation patching (issue #27) ---------------------------------------------------------------
# (clean, corrupted, position): the corrupted ids differ from the clean ones in one token k; the second
# case leaves one position after `position` (whose patches must change nothing in a causal model).
PATCH_CASES = [
    ("k5_last", 5, None),
    ("k4_pos6", 4, 6),
]
# The checkpoints whose patching references are written (expected_patch.json): every family.
PATCH_MODELS = ["gpt2-tiny", "llama-tiny", "qwen2-tiny", "llama3-scaled-tiny", "llama-linear-tiny", "qwen3-tiny",
                "mistral-tiny", "qwen2-sliding-tiny", "smollm3-tiny", "olmo2-tiny", "phi3-tiny", "phi4-mini-tiny", "gemma3-tiny", "gemma2-tiny",
                "granite-tiny", "ministral3-tiny"]


def patch_reference(run, L, H, clean, corrupted, position, cap=None):
    """The patched logit differences of every component, each from a full float64 forward of the
    corrupted ids with one activation replaced by the clean run's: run(ids, hooks) -> logits (1, T, V)
    of the reference forward, hooks = {"resid": f(layer, h (1, T, E)), "z": f(layer, z (1, H, T, d))}.
    token = the clean run's top token at `position`, against = the corrupted run's (its runner-up when
    they agree). Positions after `position` are patched too (they must give the corrupted value)."""
    T = len(clean)
    kept = {"resid": {}, "z": {}}

    def keep(kind):
        def f(i, x):
            kept[kind][i] = x.clone()
            return x
        return f

    with torch.no_grad():
        lc = run(clean, {"resid": keep("resid"), "z": keep("z")})[0, position]
        lx = run(corrupted, None)[0, position]
        token = int(lc.argmax())
        order = torch.argsort(lx, descending=True)
        against = int(order[0]) if int(order[0]) != token else int(order[1])

        def ld(logits):
            return float(logits[0, position, token] - logits[0, position, against])

        def prob(logits):  # the output distribution: after any final soft-cap (Gemma 2)
            row = logits[0, position]
            if cap:
                row = torch.tanh(row / cap) * cap
            return float(torch.softmax(row, dim=-1)[token])

        def replace(kind, layer, index):
            def f(i, x):
                if i != layer:
                    return x
                x = x.clone()
                x[index] = kept[kind][layer][index]
                return x
            return f

        head = np.zeros((L, H))
        head_prob = np.zeros((L, H))
        head_pos = np.zeros((L, H, T))
        resid = np.zeros((L, T))
        for l in range(L):
            for h in range(H):
                logits = run(corrupted, {"z": replace("z", l, (0, h))})
                head[l, h], head_prob[l, h] = ld(logits), prob(logits)
                for t in range(T):
                    head_pos[l, h, t] = ld(run(corrupted, {"z": replace("z", l, (0, h, t))}))
            for t in range(T):
                resid[l, t] = ld(run(corrupted, {"resid": replace("resid", l, (0, t))}))
        clean_ld, corrupted_ld = ld(lc[None, None].expand(1, position + 1, -1)), ld(lx[None, None].expand(1, position + 1, -1))
        assert abs(clean_ld - corrupted_ld) > 1e-3, (clean_ld, corrupted_ld)
        # invariants of the references themselves: block 0's residual at k gives the clean run, every
        # other position of block 0 and every position after `position` the corrupted one
        k = [i for i in range(T) if clean[i] != corrupted[i]][0]
        assert abs(resid[0, k] - clean_ld) < 1e-9 and np.abs(np.delete(resid[0], k) - corrupted_ld).max() < 1e-9
        assert np.abs(resid[:, position + 1:] - corrupted_ld).max(initial=0) < 1e-9
        assert np.abs(head_pos[:, :, position + 1:] - corrupted_ld).max(initial=0) < 1e-9
        return {"position": position, "token": token, "against": against,
                "cleanDiff": num(clean_ld), "corruptedDiff": num(corrupted_ld),
                "cleanProbability": num(prob(run(clean, None))), "corruptedProbability": num(prob(run(corrupted, None))),
                "patched": {"head": tjson(head), "head-position": tjson(head_pos), "residual": tjson(resid)},
                "patchedProbability": {"head": tjson(head_prob)}}


def patch_cases(run, L, H, clean, vocab, cap=None):
    cases = []
    for cname, k, position in PATCH_CASES:
        corrupted = list(clean)
        corrupted[k] = (clean[k] + 1 + vocab // 2) % vocab
        pos = len(clean) - 1 if position is None else position
        case = {"name": cname, "clean": clean, "corrupted": corrupted}
        case.update(patch_reference(run, L, H, clean, corrupted, pos, cap))
        cases.append(case)
    return cases


def pretrained_patching(name):
    folder = os.path.join(mp.OUT_DIR, name)
    # Attribution and the logit difference explain the logits before any final soft-capping (Gemma 2):
    # the reference forward runs without it; the probabilities use the output distribution, after the
    # cap (patch_reference's prob).
    full = json.load(open(os.path.join(folder, "config.json")))
    cfg = dict(full, final_logit_softcapping=None)
    tensors, _ = mp.read_safetensors(open(os.path.join(folder, "model.safetensors"), "rb").read())
    is_gpt2 = cfg["model_type"] == "gpt2"
    strip = (lambda n: n[len("transformer."):] if n.startswith("transformer.") else n)
    w64 = {strip(n): torch.from_numpy(arr.astype(np.float64)) for n, (dt, _, arr) in tensors.items() if dt == "F32"}
    forward = mp.gpt2_forward if is_gpt2 else mp.llama_forward
    L = cfg["n_layer"] if is_gpt2 else cfg["num_hidden_layers"]
    H = cfg["n_head"] if is_gpt2 else cfg["num_attention_heads"]
    V = cfg["vocab_size"]
    clean = [7, 52, 19, 83, 40, 11, 66, 90]
    plain = forward(w64, torch.tensor([clean]), cfg)["logits"]
    # the hooks change nothing when they return their input
    same = forward(w64, torch.tensor([clean]), cfg, {"resid": lambda i, h: h, "z": lambda i, z: z})["logits"]
    assert torch.equal(plain, same)
    cases = patch_cases(lambda ids, hooks: forward(w64, torch.tensor([ids]), cfg, hooks)["logits"], L, H, clean, V,
                        full.get("final_logit_softcapping"))
    # attribution: the top token against the runner-up at the last position; the second likeliest
    # token alone at position 3
    ids = clean + [7, 52]
    logits = forward(w64, torch.tensor([ids]), cfg)["logits"][0]
    last = torch.argsort(logits[-1], descending=True)
    attribution = [pretrained_attribution(w64, cfg, forward, ids, len(ids) - 1, int(last[0]), int(last[1])),
                   pretrained_attribution(w64, cfg, forward, ids, 3, int(torch.argsort(logits[3], descending=True)[1]), None)]
    doc = {"source": "tests/golden/make_interp_fixtures.py", "model": name, "cases": cases, "attribution": attribution}
    path = os.path.join(folder, "expected_patch.json")
    mp.write(path, emit(doc) + "\n")
    print("  %s: %d patching cases -> %s" % (name, len(cases), os.path.relpath(path)))


def pretrained_attribution(w, cfg, forward, ids, position, token, against):
    """Direct logit attribution of a checkpoint's float64 reference forward at one position. Each
    head's z comes from the forward (hooks["z"]) and is multiplied by its rows (GPT-2's Conv1D
    c_proj, (in, out)) or columns (o_proj, (out, in)) of the output projection; the MLP outputs are
    recomputed here from the forward's own stream, block by block (GPT-2: c_proj(gelu_new(c_fc(ln_2 x)));
    Llama family: down(silu(gate) * up) of the RMS-normed stream, Phi-3's fused gate_up_proj; OLMo 2:
    no pre-norm, each branch RMS-normed; Gemma 3: GeGLU, both norms, (1 + w)), and the stream rebuilt from the parts must equal the
    forward's hidden states (1e-12). Components frozen through OLMo 2's branch norms and the final norm
    at their actual inputs, dotted with u = W_U[token] - W_U[against]; their total must equal the
    forward's logit difference to 1e-10. Granite: each branch (heads, o bias, MLP) x residual_multiplier,
    u / logits_scaling."""
    gpt2, mt = cfg["model_type"] == "gpt2", cfg["model_type"]
    rm = cfg["residual_multiplier"] if mt == "granite" else 1.0
    L = cfg["n_layer"] if gpt2 else cfg["num_hidden_layers"]
    H = cfg["n_head"] if gpt2 else cfg["num_attention_heads"]
    E = cfg["n_embd"] if gpt2 else cfg["hidden_size"]
    d = E // H if gpt2 else mp.head_dim(cfg)
    eps = cfg["layer_norm_epsilon"] if gpt2 else cfg["rms_norm_eps"]
    gemma = mt in ("gemma3_text", "gemma2")
    post = mt in ("olmo2", "gemma3_text", "gemma2")  # a norm on each branch's output

    def gamma(name):  # Gemma's RMSNorm scales by (1 + w)
        return 1.0 + w[name] if gemma else w[name]

    zs = {}

    def keep(i, z):
        zs[i] = z
        return z

    ref = forward(w, torch.tensor([ids]), cfg, {"z": keep})
    hidden, logits = ref["hidden_states"], ref["logits"][0]
    x = hidden[0][0]  # (T, E)
    rows, kinds = [x[position]], [("embed",)]
    bias = torch.zeros(E, dtype=torch.float64)
    for l in range(L):
        p = ("h.%d." if gpt2 else "model.layers.%d.") % l
        z = zs[l][0]  # (H, T, d)
        if gpt2:
            Wo = w[p + "attn.c_proj.weight"]  # (in, out)
            heads = [z[h] @ Wo[h * d:(h + 1) * d, :] for h in range(H)]
            bo = w[p + "attn.c_proj.bias"]
        else:
            Wo = w[p + "self_attn.o_proj.weight"]  # (out, in)
            heads = [z[h] @ Wo[:, h * d:(h + 1) * d].T for h in range(H)]
            bo = w.get(p + "self_attn.o_proj.bias", torch.zeros(E, dtype=torch.float64))
        attn_out = sum(heads) + bo
        if post:  # x += rms(attn(x)): every head's output frozen at the branch's scale
            g = gamma(p + "post_attention_layernorm.weight")
            s = torch.rsqrt(attn_out[position].pow(2).mean() + eps)
            parts = [s * hh[position] * g for hh in heads]
            branch = mp.rms_norm(attn_out, g, eps)
        else:
            parts = [rm * hh[position] for hh in heads]
            bias = bias + rm * bo
            branch = rm * attn_out
        for h in range(H):
            rows.append(parts[h])
            kinds.append(("head", l, h))
        x = x + branch
        if gpt2:
            u = torch.nn.functional.layer_norm(x, (E,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
            m = mp.gelu_new(u @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        else:
            u = (x if mt == "olmo2" else mp.rms_norm(x, gamma(p + "pre_feedforward_layernorm.weight"), eps) if gemma
                 else mp.rms_norm(x, w[p + "post_attention_layernorm.weight"], eps))
            if mt == "phi3":
                gate, up = (u @ w[p + "mlp.gate_up_proj.weight"].T).chunk(2, dim=-1)
            else:
                gate, up = u @ w[p + "mlp.gate_proj.weight"].T, u @ w[p + "mlp.up_proj.weight"].T
            act = torch.nn.functional.gelu(gate, approximate="tanh") if gemma else torch.nn.functional.silu(gate)
            m = (act * up) @ w[p + "mlp.down_proj.weight"].T
            if post:
                m = mp.rms_norm(m, gamma(p + "post_feedforward_layernorm.weight"), eps)
            m = rm * m
        rows.append(m[position])
        kinds.append(("mlp", l))
        x = x + m
        if l + 1 < L:
            assert float((x - hidden[l + 1][0]).abs().max()) < 1e-12, (l, "the rebuilt stream")
    # the final norm frozen at its input x[position]
    xr = x[position]
    R = torch.stack(rows)
    if gpt2:
        g, beta = w["ln_f.weight"], w["ln_f.bias"]
        s = 1.0 / torch.sqrt(xr.var(unbiased=False) + eps)
        R = s * (R - R.mean(dim=1, keepdim=True)) * g
        bias = s * (bias - bias.mean()) * g + beta
        final = torch.nn.functional.layer_norm(x, (E,), g, beta, eps)
    else:
        g = gamma("model.norm.weight")
        s = torch.rsqrt(xr.pow(2).mean() + eps)
        R, bias = s * R * g, s * bias * g
        final = mp.rms_norm(x, g, eps)
    assert float((final - hidden[-1][0]).abs().max()) < 1e-12, "the final norm"
    Wu = w["wte.weight"] if gpt2 else (w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"])
    u = (Wu[token] - (Wu[against] if against is not None else 0)) / cfg.get("logits_scaling", 1.0)
    out = {"heads": np.zeros((L, H)), "mlp": np.zeros(L)}
    for kind, r in zip(kinds, R):
        v = float(r @ u)
        if kind[0] == "embed":
            out["embed"] = v
        elif kind[0] == "head":
            out["heads"][kind[1], kind[2]] = v
        else:
            out["mlp"][kind[1]] = v
    out["bias"] = float(bias @ u)
    out["total"] = out["embed"] + out["bias"] + float(out["heads"].sum()) + float(out["mlp"].sum())
    diff = float(logits[position, token] - (logits[position, against] if against is not None else 0))
    assert abs(out["total"] - diff) < 1e-10, (out["total"], diff)
    return {"position": position, "token": token, "against": against, "heads": tjson(out["heads"]),
            "mlp": tjson(out["mlp"]), "embed": num(out["embed"]), "bias": num(out["bias"]),
            "total": num(out["total"]), "logitDiff": num(diff)}


def tiny_hooked(model, cfg, ids, hooks):
    """The float64 module's logits (1, T, V) with its attention recomputed from in_proj (each head's
    z (1, H, T, d) through hooks["z"]) and hooks["resid"] on the stream entering each block (a
    forward pre-hook)."""
    hooks = hooks or {}
    E, H = cfg.d_model, cfg.num_heads
    d = E // H
    saved, handles = [], []
    for l, block in enumerate(model.blocks):
        def attention(hh, blocked, l=l, block=block):
            B, T = hh.shape[:2]
            W, b = block.attn.in_proj_weight, block.attn.in_proj_bias
            q, k, v = ((hh @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]).view(B, T, H, d).transpose(1, 2) for i in range(3))
            s = q @ k.transpose(-1, -2) / math.sqrt(d)
            if blocked is not None:
                s = s.masked_fill(blocked, float("-inf"))
            z = torch.softmax(s, dim=-1) @ v
            if "z" in hooks:
                z = hooks["z"](l, z)
            return z.transpose(1, 2).reshape(B, T, E) @ block.attn.out_proj.weight.T + block.attn.out_proj.bias
        saved.append(block.__dict__.get("self_attention"))
        block.self_attention = attention
        if "resid" in hooks:
            handles.append(block.register_forward_pre_hook(lambda mod, args, l=l: (hooks["resid"](l, args[0]), args[1])))
    try:
        return model(torch.tensor([ids]))
    finally:
        for handle in handles:
            handle.remove()
        for block, s in zip(model.blocks, saved):
            if s is None:
                del block.self_attention
            else:
                block.self_attention = s


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
            case.update(expectations(ids, attention, TINY_RESIDUAL_WEIGHTS))
            # attribution: the top token against the runner-up at the last position; the second
            # likeliest token alone at the middle position
            last = torch.argsort(logits[0, -1], descending=True)
            mid = len(ids) // 2
            case["attribution"] = [tiny_attribution(model, cfg, ids, len(ids) - 1, int(last[0]), int(last[1])),
                                   tiny_attribution(model, cfg, ids, mid, int(torch.argsort(logits[0, mid], descending=True)[1]), None)]
            cases.append(case)
        clean = [1, 4, 6, 2, 7, 0, 1, 4]
        plain = model(torch.tensor([clean]))
        assert float((tiny_hooked(model, cfg, clean, None) - plain).abs().max()) < 1e-12
        patching = patch_cases(lambda ids, hooks: tiny_hooked(model, cfg, ids, hooks), cfg.num_layers, cfg.num_heads, clean, cfg.vocab_size)
    conf = {"vocabSize": cfg.vocab_size, "maxLength": cfg.max_length, "dModel": cfg.d_model,
            "numHeads": cfg.num_heads, "numLayers": cfg.num_layers, "mlp": cfg.mlp, "mlpHidden": cfg.hidden(),
            "positional": cfg.positional, "norm": cfg.norm, "causal": cfg.causal}
    weights = {n: tjson(t.numpy(), WEIGHT_FMT) for n, t in sd32.items()}
    for n, t in sd32.items():  # '%.9g' round-trips float32
        back = np.array(weights[n]["data"], dtype=np.float32).reshape(t.shape)
        assert np.array_equal(back, t.numpy()), n
    return {"name": name, "config": conf, "weights": weights, "cases": cases, "patching": patching}


def main():
    torch.set_num_threads(1)
    for name in PRETRAINED_MODELS:
        pretrained(name)
    for name in PATCH_MODELS:
        pretrained_patching(name)
    out_dir = os.path.join(HERE, "interp")
    os.makedirs(out_dir, exist_ok=True)
    doc = {"source": "tests/golden/make_interp_fixtures.py", "kinds": KINDS,
           "models": [tiny(name, cfg) for name, cfg in TINY_MODELS]}
    path = os.path.join(out_dir, "tiny_transformer.json")
    mp.write(path, emit(doc) + "\n")
    print("  TinyTransformer: %d models -> %s (%d bytes)" % (len(doc["models"]), os.path.relpath(path), os.path.getsize(path)))


if __name__ == "__main__":
    main()
