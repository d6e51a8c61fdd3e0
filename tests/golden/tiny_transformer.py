"""TinyTransformer: the plain-torch model the tiny_* gradient/training fixtures are written from.

It implements exactly the spec in tests/golden/README.md ("tiny_*"), with the state-dict names the
C++/JS model loads: tok_emb, pos_emb (learned only), blocks.{i}.attn (nn.MultiheadAttention),
blocks.{i}.ln1 / ln2 / mlp.fc1 / mlp.fc2, ln_f (pre-norm only), head.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

POSITIONAL_CODES = {"none": 0, "learned": 1, "sinusoidal": 2}
NORM_CODES = {"none": 0, "pre": 1, "post": 2}
LAYER_NORM_EPS = 1e-5
IGNORE_INDEX = -100


@dataclass
class TinyConfig:
    vocab_size: int
    max_length: int
    d_model: int
    num_heads: int
    num_layers: int
    mlp: bool = True
    mlp_hidden: int = 0  # 0 = 4 * d_model
    positional: str = "learned"  # none | learned | sinusoidal
    norm: str = "pre"  # none | pre | post
    causal: bool = True

    def hidden(self):
        return self.mlp_hidden or 4 * self.d_model


def sinusoidal_table(length, d_model, base=10000.0):
    """PE[pos, 2i] = sin(pos * base^(-2i/d)), PE[pos, 2i+1] = cos(same); float64, then float32."""
    table = torch.zeros(length, d_model, dtype=torch.float64)
    for pos in range(length):
        for col in range(d_model):
            pair = col - (col % 2)  # 2i
            angle = pos * base ** (-pair / d_model)
            table[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table.to(torch.float32)


class Mlp(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, h):
        return self.fc2(F.gelu(self.fc1(h)))  # exact erf GELU (approximate='none')


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = cfg.norm
        self.attn = nn.MultiheadAttention(cfg.d_model, cfg.num_heads, bias=True, batch_first=True)
        if cfg.norm != "none":
            self.ln1 = nn.LayerNorm(cfg.d_model, eps=LAYER_NORM_EPS)
        self.has_mlp = cfg.mlp
        if cfg.mlp:
            self.mlp = Mlp(cfg.d_model, cfg.hidden())
            if cfg.norm != "none":
                self.ln2 = nn.LayerNorm(cfg.d_model, eps=LAYER_NORM_EPS)

    def self_attention(self, h, blocked):
        return self.attn(h, h, h, attn_mask=blocked, need_weights=False)[0]

    def forward(self, x, blocked):
        """blocked: PyTorch's bool attn_mask (True = NOT allowed) or None."""
        if self.norm == "pre":
            x = x + self.self_attention(self.ln1(x), blocked)
            if self.has_mlp:
                x = x + self.mlp(self.ln2(x))
        elif self.norm == "post":
            x = self.ln1(x + self.self_attention(x, blocked))
            if self.has_mlp:
                x = self.ln2(x + self.mlp(x))
        else:
            x = x + self.self_attention(x, blocked)
            if self.has_mlp:
                x = x + self.mlp(x)
        return x


class TinyTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.positional == "learned":
            self.pos_emb = nn.Embedding(cfg.max_length, cfg.d_model)
        if cfg.positional == "sinusoidal":  # a buffer outside the state dict, not a parameter
            self.register_buffer("sinusoidal", sinusoidal_table(cfg.max_length, cfg.d_model),
                                 persistent=False)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.num_layers)])
        if cfg.norm == "pre":
            self.ln_f = nn.LayerNorm(cfg.d_model, eps=LAYER_NORM_EPS)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)

    def forward(self, ids):
        """ids (B, T) int64 -> logits (B, T, V)."""
        T = ids.shape[1]
        x = self.tok_emb(ids)  # (B, T, d)
        if self.cfg.positional == "learned":
            x = x + self.pos_emb.weight[:T]
        elif self.cfg.positional == "sinusoidal":
            x = x + self.sinusoidal[:T]
        blocked = None
        if self.cfg.causal:  # query t sees keys <= t
            blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
        for block in self.blocks:
            x = block(x, blocked)
        if self.cfg.norm == "pre":
            x = self.ln_f(x)
        return self.head(x)

    def loss(self, logits, targets):
        V = self.cfg.vocab_size
        return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=IGNORE_INDEX)


def randomize_tiny_(model, weight_std=0.3, bias_std=0.05, ln_noise=0.1):
    """Redraws every parameter so nothing is trivially zero or one: weights ~N(0, 0.3^2), biases
    ~N(0, 0.05^2), LayerNorm weights 1 + N(0, 0.1^2) and biases N(0, 0.1^2)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            is_ln = ".ln" in "." + name
            if is_ln and name.endswith("weight"):
                p.copy_(1.0 + torch.randn_like(p) * ln_noise)
            elif is_ln:
                p.copy_(torch.randn_like(p) * ln_noise)
            elif name.endswith("bias") and p.dim() == 1:
                p.copy_(torch.randn_like(p) * bias_std)
            else:
                p.copy_(torch.randn_like(p) * weight_std)
