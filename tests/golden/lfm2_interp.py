"""Float64 references of the interpretability tools on lfm2-tiny (a short-convolution layer, then an
attention layer), written into tests/golden/pretrained/lfm2-tiny/expected_patch.json:
    /usr/bin/python3 tests/golden/lfm2_interp.py
- Patching (make_interp_fixtures.patch_cases over lfm2_reference.lfm2_forward's hooks): every
  head's z and every residual position of the corrupted run replaced by the clean run's. The conv
  layer has no heads: its (layer, head) entries are NaN (null), as the library gives them.
- Direct logit attribution at one position: the embedding, the conv layer's output (one component,
  `mixers`), each attention head's W_O,h · z_h, each MLP's output, through the final RMSNorm frozen
  at its input, dotted with u = W_U[token] - W_U[against]; heads of the conv layer NaN. The parts
  must rebuild the final norm's output (1e-12) and add up to the forward's logit difference (1e-10).
"""
import json
import os

import numpy as np
import torch

import make_interp_fixtures as mi
import make_pretrained_fixtures as mp
from lfm2_reference import is_conv, lfm2_forward

NAME = "lfm2-tiny"


def attribution(w, cfg, ids, position, token, against):
    L, E, H = cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"]
    d, eps = E // H, cfg["norm_eps"]
    seen = {"z": {}, "mixer": {}, "mlp": {}}

    def keep(kind):
        def f(i, x):
            seen[kind][i] = x
            return x
        return f

    ref = lfm2_forward(w, torch.tensor([ids]), cfg, {k: keep(k) for k in seen})
    rows, kinds = [ref["hidden_states"][0][0, position]], [("embed",)]
    for l in range(L):
        if is_conv(cfg, l):
            rows.append(seen["mixer"][l][0, position])
            kinds.append(("mixer", l))
        else:
            wo = w["model.layers.%d.self_attn.out_proj.weight" % l]  # (out, in)
            for h in range(H):
                rows.append(seen["z"][l][0, h, position] @ wo[:, h * d:(h + 1) * d].T)
                kinds.append(("head", l, h))
        rows.append(seen["mlp"][l][0, position])
        kinds.append(("mlp", l))
    x = sum(rows)
    g = w["model.embedding_norm.weight"]
    s = torch.rsqrt(x.pow(2).mean() + eps)
    assert float((s * x * g - ref["hidden_states"][-1][0, position]).abs().max()) < 1e-12, "the final norm"
    wu = w["model.embed_tokens.weight"]  # tied
    u = wu[token] - (wu[against] if against is not None else 0)
    out = {"heads": np.full((L, H), np.nan), "mixers": np.full(L, np.nan), "mlp": np.zeros(L), "bias": 0.0}
    for kind, r in zip(kinds, rows):
        v = float((s * r * g) @ u)
        if kind[0] == "embed":
            out["embed"] = v
        elif kind[0] == "head":
            out["heads"][kind[1], kind[2]] = v
        else:
            out[{"mixer": "mixers", "mlp": "mlp"}[kind[0]]][kind[1]] = v
    out["total"] = out["embed"] + float(np.nansum(out["heads"])) + float(np.nansum(out["mixers"])) + float(out["mlp"].sum())
    logits = ref["logits"][0]
    diff = float(logits[position, token] - (logits[position, against] if against is not None else 0))
    assert abs(out["total"] - diff) < 1e-10, (out["total"], diff)
    return {"position": position, "token": token, "against": against, "heads": mi.tjson(out["heads"]),
            "mixers": mi.tjson(out["mixers"]), "mlp": mi.tjson(out["mlp"]), "embed": mi.num(out["embed"]),
            "bias": mi.num(0.0), "total": mi.num(out["total"]), "logitDiff": mi.num(diff)}


def headless(cases, cfg):
    """NaN (null) in every (layer, head) entry of a conv layer: it has no heads to patch."""
    L, H = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    conv = [l for l in range(L) if is_conv(cfg, l)]
    for c in cases:
        for t in (c["patched"]["head"], c["patchedProbability"]["head"], c["patched"]["head-position"]):
            per = t["shape"][2] if len(t["shape"]) == 3 else 1
            for l in conv:
                t["data"][l * H * per:(l + 1) * H * per] = [None] * (H * per)
    return cases


def main():
    torch.set_num_threads(1)
    folder = os.path.join(mp.OUT_DIR, NAME)
    cfg = json.load(open(os.path.join(folder, "config.json")))
    tensors, _ = mp.read_safetensors(open(os.path.join(folder, "model.safetensors"), "rb").read())
    w = {n: torch.from_numpy(arr.astype(np.float64)) for n, (dt, _, arr) in tensors.items() if dt == "F32"}
    L, H, V = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["vocab_size"]
    clean = [7, 52, 19, 83, 40, 11, 66, 90]
    run = lambda ids, hooks: lfm2_forward(w, torch.tensor([ids]), cfg, hooks)["logits"]  # noqa: E731
    cases = headless(mi.patch_cases(run, L, H, clean, V), cfg)
    ids = clean + [7, 52]
    logits = run(ids, None)[0]
    last = torch.argsort(logits[-1], descending=True)
    attr = [attribution(w, cfg, ids, len(ids) - 1, int(last[0]), int(last[1])),
            attribution(w, cfg, ids, 3, int(torch.argsort(logits[3], descending=True)[1]), None)]
    doc = {"source": "tests/golden/lfm2_interp.py", "model": NAME, "cases": cases, "attribution": attr}
    path = os.path.join(folder, "expected_patch.json")
    mp.write(path, mi.emit(doc) + "\n")
    print("  %s: %d patching cases, %d attributions -> %s" % (NAME, len(cases), len(attr), os.path.relpath(path)))


if __name__ == "__main__":
    main()
