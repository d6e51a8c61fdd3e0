"""The TinyTransformer part of make_gradient_fixtures.py: PyTorch float64 autograd gradients of a
prediction's metric for the TinyTransformers of tests/golden/interp/tiny_transformer.json (their
float32 weights, copied into the fixture, widened to float64), written to
tests/golden/gradients/tiny_transformer.json.

The forward is tiny_transformer.py's module in float64 with each block's attention recomputed from
in_proj (as make_interp_fixtures.tiny_hooked does) so that each head's z and softmax A are tensors
autograd can keep; hidden state l is the stream entering block l (a forward pre-hook), the last one
ln_f's output (pre-norm) or the last block's output (no ln_f); the MLP branch is the Mlp module's
output (a post-norm block adds it before its norm: x = ln2(x + mlp(x))).
"""
import json
import math
import os

import torch

from tiny_transformer import TinyConfig, TinyTransformer, sinusoidal_table

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "interp", "tiny_transformer.json")
# (model name, ids, metric spec, with attention) of every case
TINY_CASES = [
    ("tiny_pre_learned", [1, 4, 2, 7, 4, 0], {"kind": "logit-diff", "position": 5, "token": 3, "against": 6}, True),
    ("tiny_post_sinusoidal", [6, 2, 2, 5, 1], {"kind": "log-probability", "position": 3, "token": 0, "against": -1},
     True),
    ("tiny_none_attn_only", [3, 1, 0, 3, 5, 2], {"kind": "probability", "position": 5, "token": 1, "against": -1},
     False),
]


def model_from(m):
    c = m["config"]
    cfg = TinyConfig(c["vocabSize"], c["maxLength"], c["dModel"], c["numHeads"], c["numLayers"], mlp=c["mlp"],
                     mlp_hidden=c["mlpHidden"], positional=c["positional"], norm=c["norm"], causal=c["causal"])
    model = TinyTransformer(cfg)
    # the fixture's numbers as float32 (what the C++ and JS load), then widened exactly
    sd = {n: torch.tensor(t["data"], dtype=torch.float32).reshape(t["shape"]).double() for n, t in m["weights"].items()}
    model = model.double()
    model.load_state_dict(sd)
    if cfg.positional == "sinusoidal":  # the float32 table, as the C++ core's, widened
        model.sinusoidal = sinusoidal_table(cfg.max_length, cfg.d_model).double()
    return model, cfg


def hooked_forward(model, cfg, ids):
    """Logits (1, T, V) and the kept tensors {hidden, z, attention, mlp}, each with retain_grad."""
    E, H = cfg.d_model, cfg.num_heads
    d = E // H
    kept = {"hidden": {}, "z": {}, "attention": {}, "mlp": {}}

    def keep(kind, i, t):
        t.retain_grad()
        kept[kind][i] = t
        return t

    def attention_of(l, block):
        def attention(hh, blocked):
            B, T = hh.shape[:2]
            W, b = block.attn.in_proj_weight, block.attn.in_proj_bias
            q, k, v = ((hh @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]).view(B, T, H, d).transpose(1, 2)
                       for i in range(3))
            s = q @ k.transpose(-1, -2) / math.sqrt(d)
            if blocked is not None:
                s = s.masked_fill(blocked, float("-inf"))
            z = keep("z", l, keep("attention", l, torch.softmax(s, dim=-1)) @ v)
            return z.transpose(1, 2).reshape(B, T, E) @ block.attn.out_proj.weight.T + block.attn.out_proj.bias
        return attention

    L = len(model.blocks)
    for l, block in enumerate(model.blocks):
        block.self_attention = attention_of(l, block)
        block.register_forward_pre_hook(lambda mod, args, l=l: (keep("hidden", l, args[0]), args[1]))
        if block.has_mlp:
            block.mlp.register_forward_hook(lambda mod, args, out, l=l: keep("mlp", l, out))
    last = model.ln_f if cfg.norm == "pre" else model.blocks[-1]
    last.register_forward_hook(lambda mod, args, out: keep("hidden", L, out))
    return model(torch.tensor([ids])), kept


def metric(logits, spec):
    row = logits[0, spec["position"]]
    if spec["kind"] == "logit-diff":
        return row[spec["token"]] - (row[spec["against"]] if spec["against"] >= 0 else 0.0)
    logp = torch.log_softmax(row, dim=-1)[spec["token"]]
    return logp if spec["kind"] == "log-probability" else torch.exp(logp)


def tiny_case(m, ids, spec, attention, tensor_json):
    model, cfg = model_from(m)
    logits, kept = hooked_forward(model, cfg, ids)
    value = metric(logits, spec)
    value.backward()
    L, T = cfg.num_layers, len(ids)
    grads = lambda kind, n: [kept[kind][i].grad[0] for i in range(n)]  # noqa: E731
    case = {"model": m["name"], "config": m["config"], "weights": m["weights"], "ids": ids, "metric": spec,
            "value": float(value)}
    case["grad_hidden"] = [tensor_json(g) for g in grads("hidden", L + 1)]
    case["grad_z"] = [tensor_json(g.transpose(0, 1).reshape(T, -1)) for g in grads("z", L)]
    case["grad_mlp"] = [tensor_json(g) for g in grads("mlp", L)] if cfg.mlp else []
    if attention:
        case["grad_attention"] = [tensor_json(g) for g in grads("attention", L)]
    check_directional(m, ids, spec, kept["hidden"][0].grad)
    return case


def check_directional(m, ids, spec, grad0):
    """Self-check: ∂M/∂(hidden state 0) along a random direction against a central finite difference."""
    direction = torch.randn(grad0.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def moved(eps):
        model, cfg = model_from(m)
        model.blocks[0].register_forward_pre_hook(lambda mod, args: (args[0] + eps * direction, args[1]))
        with torch.no_grad():
            return float(metric(model(torch.tensor([ids])), spec))

    step = 1e-5
    fd = (moved(step) - moved(-step)) / (2 * step)
    exact = float((grad0 * direction).sum())
    assert abs(fd - exact) <= 1e-6 * max(1.0, abs(exact)), (m["name"], fd, exact)


def tiny_cases(tensor_json):
    with open(SOURCE, encoding="utf-8") as f:
        models = {m["name"]: m for m in json.load(f)["models"]}
    return [tiny_case(models[name], ids, spec, attention, tensor_json) for name, ids, spec, attention in TINY_CASES]
