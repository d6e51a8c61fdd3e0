#!/usr/bin/python3
"""Writes PyTorch float64 autograd gradients of a prediction's metric (model.metricGradients,
PretrainedModel::metric_gradients) for every folder of tests/golden/pretrained, as
tests/golden/pretrained/<family>/expected_gradients.json, and for the TinyTransformers of
tests/golden/interp/tiny_transformer.json as tests/golden/gradients/tiny_transformer.json
(gradient_fixtures_tiny.py).

Run with Debian's interpreter (python3-torch 1.13, python3-numpy; no transformers):
    /usr/bin/python3 tests/golden/make_gradient_fixtures.py

The forwards are make_pretrained_fixtures.py's float64 ones (gpt2_forward, llama_forward; LFM2's
lfm2_reference.lfm2_forward, whose conv layers have no z: grad_z (T, 0) there), run on the
committed safetensors weights read with that script's own reader and widened to float64 (the bf16
case: the bfloat16 values widened, as the library computes with them). Its hooks expose hidden
state i (the stream entering block i), each layer's z (B, H, T, d) and the MLP branch as added to the
stream; torch.autograd gives the gradients of the metric M with respect to each of them:
  logit-diff:      logits[position, token] - logits[position, against] (before any final soft-cap);
  probability:     softmax(capped logits[position])[token] (the model's output distribution);
  log-probability: its log.
Stored per case: ids, metric {kind, position, token, against (-1 = none)}, weights (the file), value,
grad_hidden (L + 1 of (T, E); the last after the final norm), grad_z (L of (T, H*d): the concat of
the heads before the output projection), grad_mlp (L of (T, E)), grad_attention (L of (H, T, T),
only where stored). Numbers at 9 significant digits.

Before writing, the script checks itself and stops on a mismatch: the forward on the committed weights
against each folder's expected.json logits, and every case's gradient of hidden state 0 along a random
direction against a central finite difference of the float64 forward.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained_fixtures as mp  # noqa: E402
from gradient_fixtures_tiny import tiny_cases  # noqa: E402
from lfm2_reference import lfm2_forward  # noqa: E402

OUT_DIR = os.path.join(HERE, "pretrained")
SCRIPT = "tests/golden/make_gradient_fixtures.py"
SIG_FMT = "%.9g"
IDS = [5, 17, 42, 88, 3, 61]
# Families whose cases also store ∂M/∂A (attention-weighted views); the one probability family; the
# one family whose bfloat16 weights get a case of their own.
ATTENTION_FAMILIES = ("gpt2-tiny", "gemma2-tiny")
PROBABILITY_FAMILY = "qwen3-tiny"
BF16_FAMILY = "llama-tiny"
MAX_TOTAL_BYTES = 1_500_000
# The self-check's central difference in float64: step and bound (truncation ~ step², rounding ~ 1e-16 / step).
FD_STEP = 1e-5
FD_TOL = 1e-6

torch.set_num_threads(1)


def load_weights(folder, fname):
    """{name: float64 tensor} from one safetensors file ('transformer.' dropped for gpt2_forward)."""
    with open(os.path.join(folder, fname), "rb") as f:
        tensors, _ = mp.read_safetensors(f.read())
    w = {}
    for name, (dt, _shape, a) in tensors.items():
        a32 = mp.bf16_bits_to_f32(a) if dt == "BF16" else a.astype("<f4")
        key = name[len("transformer."):] if name.startswith("transformer.") else name
        w[key] = torch.from_numpy(a32.astype("float64"))
    return w


def pre_cap_logits(w, cfg, out):
    """The logits before any final soft-cap: the last hidden state times the unembedding (Granite:
    divided by logits_scaling)."""
    if cfg["model_type"] == "gpt2":
        head = w["wte.weight"]
    else:
        head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return out["hidden_states"][-1][0] @ head.T / cfg.get("logits_scaling", 1.0)


def metric(w, cfg, out, spec):
    logits = pre_cap_logits(w, cfg, out)[spec["position"]]
    if spec["kind"] == "logit-diff":
        return logits[spec["token"]] - (logits[spec["against"]] if spec["against"] >= 0 else 0.0)
    c = cfg.get("final_logit_softcapping")
    capped = torch.tanh(logits / c) * c if c else logits
    logp = torch.log_softmax(capped, dim=-1)[spec["token"]]
    return logp if spec["kind"] == "log-probability" else torch.exp(logp)


def forward_of(cfg):
    """The family's float64 forward: GPT-2's, LFM2's (lfm2_reference.py: its conv layers have no z,
    their grad_z is stored as (T, 0)), the Llama layout's."""
    return {"gpt2": mp.gpt2_forward, "lfm2": lfm2_forward}.get(cfg["model_type"], mp.llama_forward)


def run_case(folder, cfg, fname, spec, attention):
    """One forward with the hooks keeping every watched tensor, one backward of M."""
    # the weights require grad only so that autograd tracks the activations (their grads are unused)
    w = {k: v.requires_grad_(True) for k, v in load_weights(folder, fname).items()}
    forward = forward_of(cfg)
    kept = {"z": {}, "mlp": {}}

    def keep(kind):
        def hook(i, t):
            t.retain_grad()
            kept[kind][i] = t
            return t
        return hook

    out = forward(w, torch.tensor([IDS]), cfg, hooks={"z": keep("z"), "mlp": keep("mlp")})
    for t in out["hidden_states"] + out["attention"]:
        t.retain_grad()
    value = metric(w, cfg, out, spec)
    value.backward()
    L, T = len(out["attention"]), len(IDS)
    case = {"ids": IDS, "weights": fname, "metric": spec, "value": float(value)}
    case["grad_hidden"] = [t.grad[0] for t in out["hidden_states"]]
    check_directional(w, cfg, forward, spec, out["hidden_states"][0].grad)
    case["grad_z"] = [kept["z"][i].grad[0].transpose(0, 1).reshape(T, -1) if i in kept["z"]
                      else torch.zeros(T, 0, dtype=torch.float64) for i in range(L)]
    case["grad_mlp"] = [kept["mlp"][i].grad[0] for i in range(L)]
    if attention:
        case["grad_attention"] = [t.grad[0] for t in out["attention"]]
    return case


def check_directional(w, cfg, forward, spec, grad0):
    """Self-check: autograd's ∂M/∂(hidden state 0) along a random direction against a central finite
    difference of the float64 forward (hidden state 0 moved through the "resid" hook of block 0)."""
    gen = torch.Generator().manual_seed(0)
    direction = torch.randn(grad0.shape, generator=gen, dtype=torch.float64)

    def moved(eps):
        hook = {"resid": lambda i, h: h + eps * direction if i == 0 else h}
        with torch.no_grad():
            return float(metric(w, cfg, forward(w, torch.tensor([IDS]), cfg, hooks=hook), spec))

    fd = (moved(FD_STEP) - moved(-FD_STEP)) / (2 * FD_STEP)
    exact = float((grad0 * direction).sum())
    assert abs(fd - exact) <= FD_TOL * max(1.0, abs(exact)), (spec, fd, exact)


def specs_for(name):
    """(weights file, metric spec, with attention) per case of one family."""
    T = len(IDS)
    cases = [("model.safetensors", {"kind": "logit-diff", "position": T - 1, "token": 7, "against": 40},
              name in ATTENTION_FAMILIES),
             ("model.safetensors", {"kind": "log-probability", "position": 2, "token": 61, "against": -1}, False)]
    if name == PROBABILITY_FAMILY:
        cases.append(("model.safetensors", {"kind": "probability", "position": T - 1, "token": 12, "against": -1},
                      True))
    if name == BF16_FAMILY:
        cases.append(("model.bf16.safetensors", {"kind": "logit-diff", "position": 3, "token": 20, "against": -1},
                      False))
    return cases


def check_forward(folder, cfg):
    """The forward on the committed weights reproduces the committed expected.json logits (to their 7 digits)."""
    with open(os.path.join(folder, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)["cases"][0]
    w = load_weights(folder, "model.safetensors")
    forward = forward_of(cfg)
    ids = expected["input_ids"]["data"]
    logits = forward(w, torch.tensor([ids]), cfg)["logits"].reshape(-1)
    want = torch.tensor(expected["logits"]["data"], dtype=torch.float64)
    err = float((logits - want).abs().max() / max(1.0, float(want.abs().max())))
    assert err < 1e-5, (folder, err)


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(SIG_FMT % v) for v in t.detach().reshape(-1).tolist()]}


def case_json(case):
    out = {}
    for k, v in case.items():
        out[k] = [tensor_json(t) for t in v] if k.startswith("grad_") else v
    return out


def main():
    total = 0
    for name in sorted(os.listdir(OUT_DIR)):
        folder = os.path.join(OUT_DIR, name)
        if not os.path.exists(os.path.join(folder, "config.json")):
            continue
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        check_forward(folder, cfg)
        cases = [case_json(run_case(folder, cfg, *s)) for s in specs_for(name)]
        doc = {"model": name, "generated_by": SCRIPT, "precision": "float64 (torch.autograd)",
               "layout": "grad_hidden L+1 of (T,E); grad_z L of (T,H*d); grad_mlp L of (T,E); "
                         "grad_attention L of (H,T,T)", "cases": cases}
        mp.SIG_FMT = SIG_FMT
        text = mp.emit(doc) + "\n"
        mp.write(os.path.join(folder, "expected_gradients.json"), text)
        print("  %s: %d cases, %d bytes" % (name, len(cases), len(text)))
        total += len(text)
    tiny_dir = os.path.join(HERE, "gradients")
    os.makedirs(tiny_dir, exist_ok=True)
    doc = {"source": SCRIPT, "precision": "float64 (torch.autograd)", "cases": tiny_cases(tensor_json)}
    text = mp.emit(doc) + "\n"
    mp.write(os.path.join(tiny_dir, "tiny_transformer.json"), text)
    print("  TinyTransformer: %d cases, %d bytes" % (len(doc["cases"]), len(text)))
    total += len(text)
    print("all: %d bytes" % total)
    assert total <= MAX_TOTAL_BYTES, total


if __name__ == "__main__":
    main()
