"""The tiny_* fixtures of make_grad_fixtures.py: TinyTransformer logits, loss, every gradient and
three clip_grad_norm_ + AdamW steps on the same batch, re-checked in float64."""
import copy

import torch

from make_fixtures import f32
from tiny_transformer import (IGNORE_INDEX, NORM_CODES, POSITIONAL_CODES, TinyConfig,
                              TinyTransformer, randomize_tiny_)

# float32 logits / loss / grads against the same module in float64, relative to max(1, |ref|∞).
TINY_CHECK_TOL = 1e-4
# After 3 AdamW steps: Adam divides by sqrt(v) + eps, which amplifies float32 rounding of small
# gradients, so the float64 re-run of the steps is only asked to agree to this (in units of lr).
TINY_STEP_TOL = 0.01
NUM_STEPS = 3
# Hyperparameters, rounded to float32 first so PyTorch runs with exactly the stored values.
# eps is 1e-5, not AdamW's 1e-8: the key third of every in_proj_bias has a gradient that is zero
# in exact arithmetic (softmax ignores a per-row shift of the scores), so its float32 gradient is
# rounding noise (~1e-9); with eps 1e-8 Adam turns that noise into steps of up to ±lr that no other
# implementation could reproduce, with 1e-5 they stay below 1e-3·lr.
LR, BETA1, BETA2, EPS, WEIGHT_DECAY = f32(1e-2), f32(0.9), f32(0.95), f32(1e-5), f32(0.1)
# Every step's clip factor clip / (norm + 1e-6) must be at least this far from 1, so that float32
# differences in another implementation's norm cannot flip the clip-or-not decision.
CLIP_MARGIN = 0.005

# (fixture name, keyword arguments of tiny_case)
TINY_CASES = [
    ("tiny_pre_mlp_learned", dict(
        cfg=TinyConfig(7, 6, 8, 2, 2, mlp=True, mlp_hidden=8, positional="learned", norm="pre"),
        B=2, T=5, note="pre-norm, MLP hidden 8, learned positions, 2 layers")),
    ("tiny_post_mlp_sinusoidal", dict(
        cfg=TinyConfig(7, 5, 8, 2, 1, mlp=True, mlp_hidden=12, positional="sinusoidal",
                       norm="post"),
        B=3, T=5, note="post-norm, MLP hidden 12, sinusoidal positions, 1 layer")),
    ("tiny_none_mlp_nopos", dict(
        cfg=TinyConfig(9, 7, 8, 2, 1, mlp=True, mlp_hidden=12, positional="none", norm="none"),
        B=2, T=6, note="no LayerNorm, MLP hidden 12, no positions, 1 layer")),
    ("tiny_pre_attn_learned", dict(
        cfg=TinyConfig(9, 7, 8, 2, 2, mlp=False, positional="learned", norm="pre"),
        B=2, T=6, note="pre-norm, attention only (no mlp, no ln2), learned positions, 2 layers")),
    ("tiny_post_attn_nopos", dict(
        cfg=TinyConfig(7, 5, 12, 3, 1, mlp=False, positional="none", norm="post"),
        B=3, T=5, note="post-norm, attention only, no positions, d 12 with 3 heads, 1 layer")),
    ("tiny_none_attn_sinusoidal", dict(
        cfg=TinyConfig(10, 7, 8, 2, 1, mlp=False, positional="sinusoidal", norm="none"),
        B=2, T=7, note="no LayerNorm, attention only, sinusoidal positions, 1 layer")),
    ("tiny_noncausal", dict(
        cfg=TinyConfig(7, 6, 8, 2, 1, mlp=True, mlp_hidden=12, positional="learned", norm="pre",
                       causal=False),
        B=2, T=5, note="NOT causal (every query sees every key), pre-norm, MLP hidden 12, learned")),
]


def put_tiny_config(w, cfg):
    for name, value in (("vocab_size", cfg.vocab_size), ("max_length", cfg.max_length),
                        ("d_model", cfg.d_model), ("num_heads", cfg.num_heads),
                        ("num_layers", cfg.num_layers), ("mlp", cfg.mlp),
                        ("mlp_hidden", cfg.hidden()),
                        ("positional", POSITIONAL_CODES[cfg.positional]),
                        ("norm", NORM_CODES[cfg.norm]), ("causal", cfg.causal)):
        w.put(name, float(value))


def random_batch(cfg, B, T):
    """ids (B, T) in [0, V); targets (B, T) with about a quarter IGNORE_INDEX, at least one per row
    scored and at least one ignored overall."""
    ids = torch.randint(cfg.vocab_size, (B, T))
    targets = torch.randint(cfg.vocab_size, (B, T))
    ignored = torch.rand(B, T) < 0.25
    ignored[0, 1] = True
    ignored[:, 0] = False
    targets[ignored] = IGNORE_INDEX
    return ids, targets


def forward_backward(model, ids, targets):
    model.zero_grad(set_to_none=True)
    logits = model(ids)
    loss = model.loss(logits, targets)
    loss.backward()
    return logits, loss


def train_steps(model, ids, targets, clip):
    """NUM_STEPS of clip_grad_norm_ + AdamW on the same batch; returns (losses, grad norms)."""
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=LR, betas=(BETA1, BETA2), eps=EPS,
                            weight_decay=WEIGHT_DECAY, foreach=False)
    losses, norms = [], []
    for _ in range(NUM_STEPS):
        _, loss = forward_backward(model, ids, targets)
        norm = torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
    return losses, norms


def clip_margin(norms, clip):
    """How far the step closest to the threshold is from it: min |clip / (norm + 1e-6) - 1|."""
    return min(abs(clip / (n + 1e-6) - 1) for n in norms)


def clips_change(norms, clip):
    """True when the first step clips and the last does not, or the reverse."""
    return (clip / (norms[0] + 1e-6) < 1) != (clip / (norms[-1] + 1e-6) < 1)


def choose_clip(model, ids, targets):
    """The clip, among values between the norms of an unclipped run, whose factor changes between
    the first and the last step with the widest margin (at least CLIP_MARGIN), so a float32
    difference in another implementation's norm cannot flip a decision."""
    _, free = train_steps(copy.deepcopy(model), ids, targets, float("inf"))
    lo, hi = min(free), max(free)
    best, best_margin = None, CLIP_MARGIN
    for i in range(1, 40):
        clip = f32(lo + (hi - lo) * i / 40)
        _, norms = train_steps(copy.deepcopy(model), ids, targets, clip)
        if clips_change(norms, clip) and clip_margin(norms, clip) > best_margin:
            best, best_margin = clip, clip_margin(norms, clip)
    assert best is not None, "no clip value changes the clip factor between steps; norms %s" % free
    return best


def check_float64(w, model, ids, targets, clip, logits, loss):
    """The same module in float64: logits, loss and grads within TINY_CHECK_TOL, parameters after
    the steps within TINY_STEP_TOL * lr."""
    model64 = copy.deepcopy(model).double()
    logits64, loss64 = forward_backward(model64, ids, targets)
    rel = lambda a, b: ((a.double() - b).abs().max() / max(1.0, b.abs().max().item())).item()
    assert rel(logits, logits64) < TINY_CHECK_TOL, "%s: logits" % w.name
    assert abs(loss.item() - loss64.item()) < TINY_CHECK_TOL, "%s: loss" % w.name
    for name, p in model64.named_parameters():
        err = rel(w.data["grad." + name], p.grad)
        assert err < TINY_CHECK_TOL, "%s: grad.%s differs from float64 by %g" % (w.name, name, err)
    train_steps(model64, ids, targets, clip)
    for name, p in model64.named_parameters():
        err = (w.data["after." + name] - p.detach()).abs().max().item() / LR
        assert err < TINY_STEP_TOL, "%s: after.%s differs by %g lr" % (w.name, name, err)


def tiny_case(w, cfg, B, T, note):
    assert T <= cfg.max_length
    w.comment("TinyTransformer V=%d d=%d heads=%d layers=%d, %s; B=%d T=%d; cross-entropy "
              "(ignore -100), grads, %d steps of clip_grad_norm_ + AdamW on the same batch."
              % (cfg.vocab_size, cfg.d_model, cfg.num_heads, cfg.num_layers, note, B, T, NUM_STEPS))
    model = TinyTransformer(cfg)
    randomize_tiny_(model)
    ids, targets = random_batch(cfg, B, T)
    start = copy.deepcopy(model)
    clip = choose_clip(model, ids, targets)

    put_tiny_config(w, cfg)
    w.put("ids", ids.double())
    w.put("targets", targets.double())
    for name, p in model.named_parameters():
        w.put("param." + name, p)
    logits, loss = forward_backward(model, ids, targets)
    w.put("logits", logits)
    w.put("loss", loss.item())
    for name, p in model.named_parameters():
        w.put("grad." + name, p.grad)
    for name, value in (("lr", LR), ("beta1", BETA1), ("beta2", BETA2), ("eps", EPS),
                        ("weight_decay", WEIGHT_DECAY), ("clip", clip)):
        w.put(name, value)
    losses, norms = train_steps(model, ids, targets, clip)
    assert clips_change(norms, clip) and clip_margin(norms, clip) > CLIP_MARGIN, (norms, clip)
    assert losses[0] == loss.item()
    w.put("step_loss", torch.tensor(losses))
    w.put("step_grad_norm", torch.tensor(norms))
    for name, p in model.named_parameters():
        w.put("after." + name, p)
    check_float64(w, start, ids, targets, clip, logits, loss)
