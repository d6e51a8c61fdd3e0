#!/usr/bin/python3
"""Writes tests/golden/fixtures/adamw_clip.txt: three steps of torch.optim.AdamW with
torch.nn.utils.clip_grad_norm_, which tests/cpp/test_adamw.cpp replays with src/train/adamw.h.

Run with Debian's interpreter, which sees python3-torch (1.13):
    /usr/bin/python3 tests/golden/make_adamw_fixture.py

The fixture scripts run in any order: each deletes only stale files it signed itself (the
"Written by" header line), and this file is signed by this script. It is not listed in index.txt:
that index is make_fixtures.py's, and every entry there needs a runner in tests/cpp/test_golden.cpp.

Format: the one of tests/golden/README.md (one tensor per line, '%.9g', scalars with ndim 0).
Names, for step s in 1..3 and parameter tensor i in 0..2:
    lr beta1 beta2 eps weight_decay clip_grad_norm num_steps num_params   scalars
    value0_p{i}              the initial parameter
    grad_s{s}_p{i}           the gradient set before step s (before clipping)
    total_norm_s{s}          what clip_grad_norm_ returned (the norm before clipping)
    clip_factor_s{s}         torch's clamp(max_norm / (total_norm + 1e-6), max=1)
    clipped_grad_s{s}_p{i}   the gradient after clip_grad_norm_
    value_s{s}_p{i}, exp_avg_s{s}_p{i}, exp_avg_sq_s{s}_p{i}   after optimizer.step()
"""
import os
import zlib

import torch

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "adamw_clip.txt")
SHAPES = [(3,), (5, 3), (7,)]  # small odd sizes; flattened by the C++ test
# The total gradient norm before each step: above, below, then above the clip norm again, so the
# clip factor changes between steps (and is exactly 1 at step 2).
TARGET_NORMS = [2.5, 0.6, 1.7]


def f32(x):
    """The float32 value nearest to x: the hyperparameters must be exactly what C++ holds."""
    return float(torch.tensor(x, dtype=torch.float32))


OPTIONS = dict(lr=f32(0.05), beta1=f32(0.9), beta2=f32(0.99), eps=f32(1e-3),
               weight_decay=f32(0.1), clip_grad_norm=f32(1.2))


class Writer:
    """The line format of make_fixtures.FixtureWriter (copied: that class signs its files as
    written by make_fixtures.py)."""

    def __init__(self, name, description):
        self.lines = ["# %s: %s" % (name, description),
                      "# Written by tests/golden/make_adamw_fixture.py (torch %s); regenerate, do not edit."
                      % torch.__version__]
        self.names = set()

    def put(self, name, value):
        assert name not in self.names, name
        self.names.add(name)
        if isinstance(value, torch.Tensor):
            value = value.detach().to(torch.float64).contiguous()
            dims, vals = list(value.shape), value.reshape(-1).tolist()
        else:
            dims, vals = [], [float(value)]
        head = [name, str(len(dims))] + [str(d) for d in dims] + [":"]
        self.lines.append(" ".join(head + ["%.9g" % v for v in vals]))

    def text(self):
        return "\n".join(self.lines) + "\n"


def gradients_with_norm(target):
    grads = [torch.randn(*s) for s in SHAPES]
    grads[2] *= 1e-3  # tiny grads in one tensor: eps and weight decay dominate its update
    total = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
    return [(g.double() * (target / total)).float() for g in grads]


def main():
    torch.manual_seed(zlib.crc32(b"adamw_clip"))
    o = OPTIONS
    w = Writer("adamw_clip", "torch.optim.AdamW(foreach=False) after clip_grad_norm_, 3 steps, "
               "params (3,), (5, 3), (7,); the clip factor is < 1, exactly 1, then < 1 again.")
    for key, value in o.items():
        w.put(key, value)
    w.put("num_steps", len(TARGET_NORMS))
    w.put("num_params", len(SHAPES))
    params = [torch.nn.Parameter(torch.randn(*s)) for s in SHAPES]
    for i, p in enumerate(params):
        w.put("value0_p%d" % i, p)
    opt = torch.optim.AdamW(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                            weight_decay=o["weight_decay"], amsgrad=False, maximize=False, foreach=False)
    for s, target in enumerate(TARGET_NORMS, start=1):
        for i, (p, g) in enumerate(zip(params, gradients_with_norm(target))):
            p.grad = g.clone()
            w.put("grad_s%d_p%d" % (s, i), g)
        total = torch.nn.utils.clip_grad_norm_(params, o["clip_grad_norm"])
        w.put("total_norm_s%d" % s, total)
        w.put("clip_factor_s%d" % s, torch.clamp(o["clip_grad_norm"] / (total + 1e-6), max=1.0))
        opt.step()
        for i, p in enumerate(params):
            state = opt.state[p]
            assert float(state["step"]) == s
            w.put("clipped_grad_s%d_p%d" % (s, i), p.grad)
            w.put("value_s%d_p%d" % (s, i), p)
            w.put("exp_avg_s%d_p%d" % (s, i), state["exp_avg"])
            w.put("exp_avg_sq_s%d_p%d" % (s, i), state["exp_avg_sq"])
    text = w.text()
    with open(FIXTURE, "w") as f:
        f.write(text)
    print("wrote %s (%d bytes)" % (FIXTURE, len(text)))


if __name__ == "__main__":
    main()
