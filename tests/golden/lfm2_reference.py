"""LFM2 (transformers/models/lfm2/modeling_lfm2.py, Lfm2ForCausalLM) in float64 for
make_pretrained_fixtures.py: its tensors, a torch forward written from the modeling file's formulas
and an independent numpy forward (explicit loops) that checks it.

Each layer: h += mixer(operator_norm(h)); h += w2(silu(w1(x)) * w3(x)), x = ffn_norm(h). The mixer
is Lfm2Attention (GQA, per-head q_layernorm / k_layernorm before RoPE, rotate_half) on
"full_attention" layers, Lfm2ShortConv elsewhere: B, C, X = in_proj(x).chunk(3) over channels,
conv = Conv1d(groups=E, kernel conv_L_cache, padding K - 1)(B * X)[..., :T], out_proj(C * conv).
The final norm is model.embedding_norm. The "attention" of a conv layer is its channel-mean
mixing map A[t, s] = mean_c C[t, c] * w[c, K - 1 - (t - s)] * B[s, c] (0 outside t - K < s <= t),
shaped (B, 1, T, T), which is what the library returns for it.
"""
import numpy as np
import torch


def lfm2_intermediate(cfg):
    """Lfm2MLP's width: block_auto_adjust_ff_dim, block_ffn_dim_multiplier, block_multiple_of."""
    i = cfg["intermediate_size"]
    if cfg["block_auto_adjust_ff_dim"]:
        i = int(2 * i / 3)
        if cfg["block_ffn_dim_multiplier"] is not None:
            i = int(cfg["block_ffn_dim_multiplier"] * i)
            m = cfg["block_multiple_of"]
            i = m * ((i + m - 1) // m)
    return i


def is_conv(cfg, i):
    return cfg["layer_types"][i] == "conv"


def lfm2_tensors(cfg, vocab):
    """(HF name, shape, kind) in draw order."""
    E, I, K = cfg["hidden_size"], lfm2_intermediate(cfg), cfg["conv_L_cache"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = E // H
    t = [("model.embed_tokens.weight", (vocab, E), "embed")]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        t += [(p + "operator_norm.weight", (E,), "norm")]
        if is_conv(cfg, i):
            t += [(p + "conv.in_proj.weight", (3 * E, E), "qk_linear"),
                  (p + "conv.conv.weight", (E, 1, K), "conv_kernel"),
                  (p + "conv.out_proj.weight", (E, E), "linear")]
        else:
            t += [(p + "self_attn.q_proj.weight", (H * d, E), "qk_linear"),
                  (p + "self_attn.k_proj.weight", (Hkv * d, E), "qk_linear"),
                  (p + "self_attn.v_proj.weight", (Hkv * d, E), "linear"),
                  (p + "self_attn.q_layernorm.weight", (d,), "norm"),
                  (p + "self_attn.k_layernorm.weight", (d,), "norm"),
                  (p + "self_attn.out_proj.weight", (E, H * d), "linear")]
        t += [(p + "ffn_norm.weight", (E,), "norm"),
              (p + "feed_forward.w1.weight", (I, E), "linear"),
              (p + "feed_forward.w3.weight", (I, E), "linear"),
              (p + "feed_forward.w2.weight", (E, I), "linear")]
    t += [("model.embedding_norm.weight", (E,), "norm")]
    return t


def rms(x, w, eps):  # Lfm2RMSNorm
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    n = x.shape[-1] // 2
    return torch.cat((-x[..., n:], x[..., :n]), dim=-1)


def lfm2_forward(w, ids, cfg, hooks=None):
    """Lfm2ForCausalLM's forward (eager attention, no cache, slow_forward's conv). hooks: "resid"
    (i, h) and "z" (i, z (B, H, T, d)) may replace the stream entering block i and an attention
    layer's z; "mlp" (i, m) the MLP's output; "mixer" (i, o) sees the mixer's output."""
    hooks = hooks or {}
    E, H, Hkv, K = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["conv_L_cache"]
    d, eps = E // H, cfg["norm_eps"]
    B, T = ids.shape
    dtype = w["model.embed_tokens.weight"].dtype
    h = w["model.embed_tokens.weight"][ids]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))
    freqs = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    ti, si = torch.arange(T)[:, None], torch.arange(T)[None, :]
    mask = torch.where(si <= ti, torch.zeros((), dtype=dtype), torch.tensor(torch.finfo(dtype).min, dtype=dtype))
    hidden, maps = [], []
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        if "resid" in hooks:  # the stream entering block i (patching)
            h = hooks["resid"](i, h)
        hidden.append(h)
        x = rms(h, w[p + "operator_norm.weight"], eps)
        if is_conv(cfg, i):
            bcx = (x @ w[p + "conv.in_proj.weight"].T).transpose(-1, -2)  # (B, 3E, T)
            b, c, xx = bcx.chunk(3, dim=-2)
            kernel = w[p + "conv.conv.weight"]  # (E, 1, K)
            conv = torch.nn.functional.conv1d(b * xx, kernel, padding=K - 1, groups=E)[..., :T]
            o = (c * conv).transpose(-1, -2) @ w[p + "conv.out_proj.weight"].T
            lag = ti - si  # (T, T): w[c, K - 1 - lag] inside the band
            band = (lag >= 0) & (lag < K)
            wk = kernel[:, 0, :][:, (K - 1 - lag).clamp(0, K - 1)]  # (E, T, T)
            a = torch.einsum("bct,cts,bcs->bts", c, wk * band, b) / E
            maps.append(a[:, None])
        else:
            q = (x @ w[p + "self_attn.q_proj.weight"].T).view(B, T, H, d)
            k = (x @ w[p + "self_attn.k_proj.weight"].T).view(B, T, Hkv, d)
            v = (x @ w[p + "self_attn.v_proj.weight"].T).view(B, T, Hkv, d).transpose(1, 2)
            q = rms(q, w[p + "self_attn.q_layernorm.weight"], eps).transpose(1, 2)
            k = rms(k, w[p + "self_attn.k_layernorm.weight"], eps).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
            s = (q @ k.transpose(2, 3)) * d ** -0.5 + mask
            a = torch.softmax(s, dim=-1)
            maps.append(a)
            z = hooks["z"](i, a @ v) if "z" in hooks else a @ v
            o = z.transpose(1, 2).reshape(B, T, H * d) @ w[p + "self_attn.out_proj.weight"].T
        if "mixer" in hooks:  # the token mixer's output as added to the stream (seen, not changed)
            hooks["mixer"](i, o)
        h = h + o
        y = rms(h, w[p + "ffn_norm.weight"], eps)
        m = (torch.nn.functional.silu(y @ w[p + "feed_forward.w1.weight"].T) * (y @ w[p + "feed_forward.w3.weight"].T)) @ w[p + "feed_forward.w2.weight"].T
        h = h + (hooks["mlp"](i, m) if "mlp" in hooks else m)
    h = rms(h, w["model.embedding_norm.weight"], eps)
    hidden.append(h)
    return {"logits": h @ w["model.embed_tokens.weight"].T, "attention": maps, "hidden_states": hidden}


def np_lfm2(w, ids, cfg):
    """The same model by explicit loops: per-pair rotation, per-channel convolution sums."""
    E, H, Hkv, K = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["conv_L_cache"]
    d, eps = E // H, cfg["norm_eps"]
    B, T = ids.shape

    def norm(x, wt):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * wt

    h = w["model.embed_tokens.weight"][ids]
    hidden, maps = [], []
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        hidden.append(h.copy())
        x = norm(h, w[p + "operator_norm.weight"])
        o = np.zeros_like(h)
        if is_conv(cfg, i):
            bcx = x @ w[p + "conv.in_proj.weight"].T
            bb, cc, xx = bcx[..., :E], bcx[..., E:2 * E], bcx[..., 2 * E:]
            kern = w[p + "conv.conv.weight"][:, 0, :]
            y = np.zeros_like(bb)
            amap = np.zeros((B, 1, T, T))
            for bi in range(B):
                for t in range(T):
                    for s in range(max(0, t - K + 1), t + 1):
                        wk = kern[:, K - 1 - (t - s)]
                        y[bi, t] += wk * bb[bi, s] * xx[bi, s]
                        amap[bi, 0, t, s] = np.mean(cc[bi, t] * wk * bb[bi, s])
            o = (cc * y) @ w[p + "conv.out_proj.weight"].T
            maps.append(amap)
        else:
            inv = 1.0 / cfg["rope_theta"] ** (np.arange(0, d, 2) / d)
            q = (x @ w[p + "self_attn.q_proj.weight"].T).reshape(B, T, H, d)
            k = (x @ w[p + "self_attn.k_proj.weight"].T).reshape(B, T, Hkv, d)
            v = (x @ w[p + "self_attn.v_proj.weight"].T).reshape(B, T, Hkv, d)
            q, k = norm(q, w[p + "self_attn.q_layernorm.weight"]), norm(k, w[p + "self_attn.k_layernorm.weight"])
            for arr in (q, k):
                for t in range(T):
                    for j in range(d // 2):
                        c, s = np.cos(t * inv[j]), np.sin(t * inv[j])
                        a0, a1 = arr[:, t, :, j].copy(), arr[:, t, :, j + d // 2].copy()
                        arr[:, t, :, j], arr[:, t, :, j + d // 2] = a0 * c - a1 * s, a1 * c + a0 * s
            amap = np.zeros((B, H, T, T))
            z = np.zeros((B, T, H, d))
            for bi in range(B):
                for hh in range(H):
                    kv = hh // (H // Hkv)
                    for t in range(T):
                        sc = np.array([q[bi, t, hh] @ k[bi, s, kv] / np.sqrt(d) for s in range(t + 1)])
                        e = np.exp(sc - sc.max())
                        pr = e / e.sum()
                        amap[bi, hh, t, :t + 1] = pr
                        z[bi, t, hh] = pr @ v[bi, :t + 1, kv]
            o = z.reshape(B, T, H * d) @ w[p + "self_attn.out_proj.weight"].T
            maps.append(amap)
        h = h + o
        y = norm(h, w[p + "ffn_norm.weight"])
        g = y @ w[p + "feed_forward.w1.weight"].T
        m = (g / (1 + np.exp(-g)) * (y @ w[p + "feed_forward.w3.weight"].T)) @ w[p + "feed_forward.w2.weight"].T
        h = h + m
    h = norm(h, w["model.embedding_norm.weight"])
    hidden.append(h)
    return {"logits": h @ w["model.embed_tokens.weight"].T, "attention": maps, "hidden_states": hidden}
