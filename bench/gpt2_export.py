#!/usr/bin/python3
"""Writes the GPT-2-small-shaped checkpoint of bench/gpt2_small.mjs (issue #16's benchmark).

    /usr/bin/python3 bench/gpt2_export.py OUTDIR      (Debian's python3-torch 1.13; no transformers)

OUTDIR gets, from one set of seeded random weights (12 layers, 768 wide, 12 heads, vocab 50257,
1024 positions; std 0.02 as GPT-2's initialisation, LayerNorms 1 / 0):
  config.json, model.safetensors  the Hugging Face layout (Conv1D weights (in, out)), float32
  gpt2.onnx                       torch.onnx.export of the same forward (ids (1, T) → logits (1, T, V))
  expected.json                   the torch float32 logits of the last position for the bench's ids
  version.txt                     GENERATOR_VERSION: the bench regenerates when it changes
The forward is tests/golden/make_pretrained_fixtures.py's hand-written GPT-2 (checked there against
an independent numpy version); its safetensors writer is reused too.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
import make_pretrained_fixtures as fx  # noqa: E402

GENERATOR_VERSION = "1"
CONFIG = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_head": 12,
          "n_layer": 12, "n_positions": 1024, "vocab_size": 50257, "n_inner": None,
          "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}
T = 128  # the bench's sequence length; ids below are (1, T)


def bench_ids():
    return [[(i * 7919 + 13) % CONFIG["vocab_size"] for i in range(T)]]


def weights():
    """{name: float32 tensor} in GPT-2's names (no 'transformer.' prefix)."""
    g = torch.Generator().manual_seed(20261124)
    E, V, P, L = CONFIG["n_embd"], CONFIG["vocab_size"], CONFIG["n_positions"], CONFIG["n_layer"]
    shapes = {"wte.weight": (V, E), "wpe.weight": (P, E), "ln_f.weight": (E,), "ln_f.bias": (E,)}
    for i in range(L):
        p = "h.%d." % i
        shapes.update({p + "ln_1.weight": (E,), p + "ln_1.bias": (E,), p + "ln_2.weight": (E,), p + "ln_2.bias": (E,),
                       p + "attn.c_attn.weight": (E, 3 * E), p + "attn.c_attn.bias": (3 * E,),
                       p + "attn.c_proj.weight": (E, E), p + "attn.c_proj.bias": (E,),
                       p + "mlp.c_fc.weight": (E, 4 * E), p + "mlp.c_fc.bias": (4 * E,),
                       p + "mlp.c_proj.weight": (4 * E, E), p + "mlp.c_proj.bias": (E,)})
    w = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            w[name] = 1.0 + 0.02 * torch.randn(shape, generator=g)
        elif len(shape) == 1:
            w[name] = 0.02 * torch.randn(shape, generator=g)
        else:
            w[name] = 0.02 * torch.randn(shape, generator=g)
    return {k: v.float().contiguous() for k, v in w.items()}


class Gpt2(torch.nn.Module):
    """The hand-written forward over registered parameters, so the export holds them as initializers."""

    def __init__(self, w):
        super().__init__()
        self.names = sorted(w)
        self.params = torch.nn.ParameterList([torch.nn.Parameter(w[n], requires_grad=False) for n in self.names])

    def forward(self, ids):
        w = dict(zip(self.names, self.params))
        return fx.gpt2_forward(w, ids, CONFIG)["logits"]


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    w = weights()
    tensors = {"transformer." + n: ("F32", tuple(t.shape), t.numpy().astype("<f4").tobytes()) for n, t in w.items()}
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(fx.safetensors_bytes(tensors))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    model = Gpt2(w).eval()
    ids = torch.tensor(bench_ids(), dtype=torch.int64)
    with torch.no_grad():
        logits = model(ids)
        # torch >= 2.5 defaults to (or offers) the dynamo exporter, which needs onnxscript: keep the
        # TorchScript exporter that Debian's torch 1.13 uses, so both give the same kind of graph.
        legacy = {"dynamo": False} if tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 5) else {}
        torch.onnx.export(model, (ids,), os.path.join(out, "gpt2.onnx"), input_names=["input_ids"],
                          output_names=["logits"], dynamic_axes={"input_ids": {1: "T"}, "logits": {1: "T"}},
                          opset_version=14, do_constant_folding=True, **legacy)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"ids": bench_ids(), "last_logits": np.asarray(logits[0, -1]).astype(float).tolist()}, f)
    with open(os.path.join(out, "version.txt"), "w") as f:
        f.write(GENERATOR_VERSION)
    print("gpt2_export: wrote", out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, ".cache", "gpt2-small"))
