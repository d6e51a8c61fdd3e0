#!/usr/bin/env python3
"""PyTorch contender of the training-step benchmark (bench/train.mjs), CPU, one thread.

    /usr/bin/python3 bench/train_torch.py INPUT

INPUT is written by train_setup.mjs writeTorchInput: the model config, optimiser settings, initial
weights under TinyTransformer's state-dict names and the batches. Trains one step per batch in turn
(forward, backward, clip_grad_norm_, AdamW) with the same warm-up/timing policy as bench/harness.mjs
and prints one JSON line: median_ms, runs, losses and grad_norms of every step (the first two are the
agreement check), torch version, thread count and the BLAS library loaded.
"""
import json
import math
import os
import struct
import sys
import time

import torch
from torch import nn

MIN_RUNS = 3
MAX_RUNS = 2000
MIN_WARMUP_MS = 250.0


class Mlp(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))  # GELU with erf (approximate='none')


class Block(nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, bias=True, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = Mlp(d, hidden)

    def forward(self, x, causal):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    """Pre-LN, learned positions, causal: the computation of src/model/tiny_transformer.h."""

    def __init__(self, c):
        super().__init__()
        d = c["dModel"]
        self.tok_emb = nn.Embedding(c["vocabSize"], d)
        self.pos_emb = nn.Embedding(c["maxLength"], d)
        self.blocks = nn.ModuleList(Block(d, c["numHeads"], c["mlpHidden"]) for _ in range(c["numLayers"]))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, c["vocabSize"])

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok_emb(ids) + self.pos_emb.weight[:t]
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)  # True = may not attend
        for block in self.blocks:
            x = block(x, causal)
        return self.head(self.ln_f(x))


def read_input(path):
    with open(path, "rb") as f:
        blob = bytearray(f.read())  # writable: torch.frombuffer warns on read-only buffers
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + length])
    data = memoryview(blob)[8 + length :]
    tensors = {}
    for t in header["tensors"]:
        dtype = torch.float32 if t["dtype"] == "float32" else torch.int32
        count = math.prod(t["shape"])
        flat = torch.frombuffer(data, dtype=dtype, count=count, offset=t["offset"])
        tensors[t["name"]] = flat.reshape(t["shape"]).clone()
    return header, tensors


def main():
    torch.set_num_threads(1)
    header, tensors = read_input(sys.argv[1])
    c, o = header["config"], header["optimizer"]
    model = TinyTransformer(c)
    model.load_state_dict({k: v for k, v in tensors.items() if not k.startswith("batch.")}, strict=True)
    opt = torch.optim.AdamW(model.parameters(), lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"],
                            weight_decay=o["weightDecay"], foreach=False)
    batches = []
    i = 0
    while f"batch.{i}.ids" in tensors:
        batches.append((tensors[f"batch.{i}.ids"].long(), tensors[f"batch.{i}.targets"].long()))
        i += 1
    losses, norms = [], []

    def step():
        ids, targets = batches[len(losses) % len(batches)]
        opt.zero_grad(set_to_none=True)
        logits = model(ids)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), o["clipGradNorm"])
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())

    budget = header["steps"]["budget_ms"]
    fixed = header["steps"]["fixed_runs"]
    times = timed(step, budget, fixed)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    print(json.dumps({"median_ms": median, "runs": n, "losses": losses, "grad_norms": norms,
                      "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "blas": blas_library()}))


def blas_library():
    """The BLAS shared library this process mapped: Debian's python3-torch uses whatever the
    libblas.so.3 alternative points to (the netlib reference BLAS unless OpenBLAS/BLIS is installed)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
        return ", ".join(sorted(os.path.realpath(lib) for lib in libs)) or "none mapped"
    except OSError:
        return "unknown"


def timed(step, budget_ms, fixed_runs):
    """bench/harness.mjs measure(): warm-up of max(10% budget, 250 ms), then calls until the budget."""
    now = lambda: time.perf_counter() * 1e3
    if not fixed_runs:
        spent, last, warm = 0.0, 0.0, 0
        while warm == 0 or (spent < max(0.1 * budget_ms, MIN_WARMUP_MS) and last < 0.05 * budget_ms):
            t0 = now()
            step()
            last = now() - t0
            spent += last
            warm += 1
    times, spent = [], 0.0
    want = fixed_runs or MAX_RUNS
    while len(times) < want and (fixed_runs or spent < budget_ms or len(times) < MIN_RUNS):
        t0 = now()
        step()
        times.append(now() - t0)
        spent += times[-1]
    return times


if __name__ == "__main__":
    main()
