"""Float64 references of the interpretability tools on qwen3_5-tiny (two gated DeltaNet layers, then
a gated full-attention layer), written into tests/golden/pretrained/qwen3_5-tiny/expected_patch.json:
    /usr/bin/python3 tests/golden/qwen3_5_interp.py
over make_qwen3_5_gradients.forward's hooks (the z of a DeltaNet layer is each value head's gated-norm
output, d_v values; of the full layer the attention output x sigmoid(gate), what o_proj reads):
- Patching (make_interp_fixtures.patch_cases): every head's z (a DeltaNet layer's value heads) and
  every residual position of the corrupted run replaced by the clean run's.
- Direct logit attribution at one position: the embedding, each head's W_out,h . z_h, each MLP's
  output, through the final RMSNorm ((1 + w)) frozen at its input, dotted with
  u = W_U[token] - W_U[against]. The parts must rebuild the final norm's output (1e-12) and add up to
  the forward's logit difference (1e-10).
"""
import json
import os

import numpy as np
import torch

import make_interp_fixtures as mi
import make_pretrained_fixtures as mp
import make_qwen3_5_gradients as qg
import make_qwen3_5_fixture as q

NAME = "qwen3_5-tiny"


def attribution(w, cfg, ids, position, token, against):
    L, H, eps = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["rms_norm_eps"]
    seen = {"z": {}, "mlp": {}}

    def keep(kind):
        def f(i, x):
            seen[kind][i] = x
            return x
        return f

    ref = qg.forward(w, torch.tensor([ids]), cfg, {k: keep(k) for k in seen})
    rows, kinds = [ref["hidden_states"][0][0, position]], [("embed",)]
    for l in range(L):
        delta = q.TYPES[l] == "linear_attention"
        wo = w["model.layers.%d.%s" % (l, "linear_attn.out_proj.weight" if delta else "self_attn.o_proj.weight")]
        z = seen["z"][l][0]  # (H_l, T, d_l)
        d = z.shape[-1]
        for h in range(z.shape[0]):
            rows.append(z[h, position] @ wo[:, h * d:(h + 1) * d].T)
            kinds.append(("head", l, h))
        rows.append(seen["mlp"][l][0, position])
        kinds.append(("mlp", l))
    x = sum(rows)
    g = 1.0 + w["model.norm.weight"]
    s = torch.rsqrt(x.pow(2).mean() + eps)
    assert float((s * x * g - ref["hidden_states"][-1][0, position]).abs().max()) < 1e-12, "the final norm"
    wu = w["lm_head.weight"]
    u = wu[token] - (wu[against] if against is not None else 0)
    out = {"heads": np.full((L, H), np.nan), "mixers": np.full(L, np.nan), "mlp": np.zeros(L), "bias": 0.0}
    for kind, r in zip(kinds, rows):
        v = float((s * r * g) @ u)
        if kind[0] == "embed":
            out["embed"] = v
        elif kind[0] == "head":
            out["heads"][kind[1], kind[2]] = v
        else:
            out["mlp"][kind[1]] = v
    out["total"] = out["embed"] + float(np.nansum(out["heads"])) + float(out["mlp"].sum())
    logits = ref["logits"][0]
    diff = float(logits[position, token] - (logits[position, against] if against is not None else 0))
    assert abs(out["total"] - diff) < 1e-10, (out["total"], diff)
    return {"position": position, "token": token, "against": against, "heads": mi.tjson(out["heads"]),
            "mixers": mi.tjson(out["mixers"]), "mlp": mi.tjson(out["mlp"]), "embed": mi.num(out["embed"]),
            "bias": mi.num(0.0), "total": mi.num(out["total"]), "logitDiff": mi.num(diff)}


def main():
    torch.set_num_threads(1)
    folder = os.path.join(mp.OUT_DIR, NAME)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    tensors, _ = mp.read_safetensors(open(os.path.join(folder, "model.safetensors"), "rb").read())
    w = {n: torch.from_numpy(arr.astype(np.float64)) for n, (dt, _, arr) in tensors.items() if dt == "F32"}
    L, H, V = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["vocab_size"]
    assert H == cfg["linear_num_value_heads"], "every layer has H heads: no NaN entries to write"
    clean = [7, 52, 19, 83, 40, 11, 66, 90]
    run = lambda ids, hooks: qg.forward(w, torch.tensor([ids]), cfg, hooks)["logits"]  # noqa: E731
    cases = mi.patch_cases(run, L, H, clean, V)
    ids = clean + [7, 52]
    logits = run(ids, None)[0]
    last = torch.argsort(logits[-1], descending=True)
    attr = [attribution(w, cfg, ids, len(ids) - 1, int(last[0]), int(last[1])),
            attribution(w, cfg, ids, 3, int(torch.argsort(logits[3], descending=True)[1]), None)]
    doc = {"source": "tests/golden/qwen3_5_interp.py", "model": NAME, "cases": cases, "attribution": attr}
    path = os.path.join(folder, "expected_patch.json")
    mp.write(path, mi.emit(doc) + "\n")
    print("  %s: %d patching cases, %d attributions -> %s" % (NAME, len(cases), len(attr), os.path.relpath(path)))


if __name__ == "__main__":
    main()
