"""Gemma 4's text model (transformers' models/gemma4/modeling_gemma4.py, Gemma4ForCausalLM) written
from its formulas for make_pretrained_fixtures.py: a float64 torch forward and an independent numpy
re-check. Embeddings x sqrt(E); per-layer inputs (table rows x sqrt(P) + RMSNorm_P(W_model x / sqrt(E)),
then / sqrt(2)); each layer: RMSNorm (plain w), attention with per-head q/k RMSNorm, a weightless
RMSNorm of v, scale 1, RoPE per layer type (sliding: default over head_dim; full: proportional over
global_head_dim, the first partial_rotary_factor share of the frequencies, the rest 0), the last
num_kv_shared_layers layers attending over the keys and values of the last earlier layer of their
type; post-norms, GeGLU (double width on shared layers with use_double_wide_mlp), the per-layer
branch h += RMSNorm(W_proj(gelu_tanh(W_gate h) * pl[l])), the stream x layer_scalar; final norm,
tied head, final logit soft-cap."""
import math

import numpy as np
import torch


def layout(cfg):
    """Per layer: (is_sliding, head_dim, kv source layer, MLP width)."""
    L, types = cfg["num_hidden_layers"], cfg["layer_types"]
    first_shared = L - cfg["num_kv_shared_layers"]
    out = []
    for i in range(L):
        sliding = types[i] == "sliding_attention"
        d = cfg["head_dim"] if sliding else cfg["global_head_dim"]
        src = i
        if i >= first_shared:
            src = max(j for j in range(first_shared) if types[j] == types[i])
        wide = cfg["use_double_wide_mlp"] and i >= first_shared > 0
        out.append((sliding, d, src, cfg["intermediate_size"] * (2 if wide else 1)))
    return out


def gemma4_tensors(cfg, vocab):
    E, H, Hkv, P, L = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                       cfg["hidden_size_per_layer_input"], cfg["num_hidden_layers"])
    t = [("model.embed_tokens.weight", (vocab, E), "embed"),
         ("model.embed_tokens_per_layer.weight", (vocab, L * P), "embed"),
         ("model.per_layer_model_projection.weight", (L * P, E), "linear"),
         ("model.per_layer_projection_norm.weight", (P,), "norm")]
    for i, (sliding, d, src, inter) in enumerate(layout(cfg)):
        p = "model.layers.%d." % i
        t += [(p + "input_layernorm.weight", (E,), "norm"), (p + "self_attn.q_proj.weight", (H * d, E), "qk_linear")]
        if src == i:
            t += [(p + "self_attn.k_proj.weight", (Hkv * d, E), "qk_linear"),
                  (p + "self_attn.v_proj.weight", (Hkv * d, E), "linear")]
        t += [(p + "self_attn.q_norm.weight", (d,), "norm")]
        if src == i:
            t += [(p + "self_attn.k_norm.weight", (d,), "norm")]
        t += [(p + "self_attn.o_proj.weight", (E, H * d), "linear"),
              (p + "post_attention_layernorm.weight", (E,), "norm"),
              (p + "pre_feedforward_layernorm.weight", (E,), "norm"),
              (p + "post_feedforward_layernorm.weight", (E,), "norm"),
              (p + "mlp.gate_proj.weight", (inter, E), "linear"), (p + "mlp.up_proj.weight", (inter, E), "linear"),
              (p + "mlp.down_proj.weight", (E, inter), "linear"),
              (p + "per_layer_input_gate.weight", (P, E), "linear"),
              (p + "per_layer_projection.weight", (E, P), "linear"),
              (p + "post_per_layer_input_norm.weight", (E,), "norm"),
              (p + "layer_scalar", (1,), "norm")]
    t += [("model.norm.weight", (E,), "norm")]
    return t


def inv_freq(cfg, sliding, dtype=torch.float64):
    """The sliding layers' default RoPE over head_dim; the full layers' proportional RoPE over
    global_head_dim (transformers' _compute_proportional_rope_parameters)."""
    rp = cfg["rope_parameters"]["sliding_attention" if sliding else "full_attention"]
    base = rp["rope_theta"]
    if sliding:
        d = cfg["head_dim"]
        return 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype) / d)
    d = cfg["global_head_dim"]
    angles = int(rp.get("partial_rotary_factor", 1.0) * d // 2)
    f = 1.0 / base ** (torch.arange(0, 2 * angles, 2, dtype=dtype) / d)
    return torch.cat([f, torch.zeros(d // 2 - angles, dtype=dtype)])


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def rms(x, w, eps):
    y = x * torch.pow(x.pow(2).mean(-1, keepdim=True) + eps, -0.5)
    return y if w is None else y * w


def rotate(x, f, t0=0):  # x (B, T, heads, d), rotate_half with the frequencies f (d/2)
    T = x.shape[1]
    ang = torch.arange(t0, t0 + T, dtype=x.dtype)[:, None] * f[None, :]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
    h = x.shape[-1] // 2
    rot = torch.cat([-x[..., h:], x[..., :h]], -1)
    return x * cos[None, :, None, :] + rot * sin[None, :, None, :]


def gemma4_forward(w, ids, cfg, hooks=None):
    dt = w["model.embed_tokens.weight"].dtype
    B, T = ids.shape
    E, H, Hkv, P, L = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                       cfg["hidden_size_per_layer_input"], cfg["num_hidden_layers"])
    eps, win = cfg["rms_norm_eps"], cfg["sliding_window"]
    x = w["model.embed_tokens.weight"][ids] * torch.tensor(E ** 0.5, dtype=dt)
    tok = w["model.embed_tokens_per_layer.weight"][ids].reshape(B, T, L, P) * torch.tensor(P ** 0.5, dtype=dt)
    ctx = (x @ w["model.per_layer_model_projection.weight"].T * E ** -0.5).reshape(B, T, L, P)
    pl = (rms(ctx, w["model.per_layer_projection_norm.weight"], eps) + tok) * 2.0 ** -0.5
    hidden, attn, kv = [x], [], {}
    i_, j_ = torch.arange(T)[:, None], torch.arange(T)[None, :]
    for i, (sliding, d, src, inter) in enumerate(layout(cfg)):
        p = "model.layers.%d." % i
        f = inv_freq(cfg, sliding, dt)
        h = rms(x, w[p + "input_layernorm.weight"], eps)
        q = rms((h @ w[p + "self_attn.q_proj.weight"].T).view(B, T, H, d), w[p + "self_attn.q_norm.weight"], eps)
        q = rotate(q, f)
        if src == i:
            k = rms((h @ w[p + "self_attn.k_proj.weight"].T).view(B, T, Hkv, d), w[p + "self_attn.k_norm.weight"], eps)
            v = rms((h @ w[p + "self_attn.v_proj.weight"].T).view(B, T, Hkv, d), None, eps)
            kv[i] = (rotate(k, f), v)
        k, v = kv[src]
        k, v = k.repeat_interleave(H // Hkv, 2), v.repeat_interleave(H // Hkv, 2)
        s = torch.einsum("bqhd,bkhd->bhqk", q, k)  # scaling 1.0
        allowed = (j_ <= i_) & ((i_ - j_ < win) if sliding else True)
        a = torch.softmax(s.masked_fill(~allowed, float("-inf")), -1)
        attn.append(a)
        o = torch.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, H * d) @ w[p + "self_attn.o_proj.weight"].T
        x = x + rms(o, w[p + "post_attention_layernorm.weight"], eps)
        h = rms(x, w[p + "pre_feedforward_layernorm.weight"], eps)
        m = (gelu_tanh(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        x = x + rms(m, w[p + "post_feedforward_layernorm.weight"], eps)
        g = gelu_tanh(x @ w[p + "per_layer_input_gate.weight"].T) * pl[:, :, i, :]
        x = x + rms(g @ w[p + "per_layer_projection.weight"].T, w[p + "post_per_layer_input_norm.weight"], eps)
        x = x * w[p + "layer_scalar"]
        if i + 1 < L:
            hidden.append(x)
    x = rms(x, w["model.norm.weight"], eps)
    hidden.append(x)
    logits = x @ w["model.embed_tokens.weight"].T
    cap = cfg["final_logit_softcapping"]
    if cap is not None:
        logits = torch.tanh(logits / cap) * cap
    return {"logits": logits, "attention": attn, "hidden_states": hidden}


def np_gemma4(w, ids, cfg):
    """The same model row by row in numpy (loops over positions and heads), as a re-check."""
    B, T = ids.shape
    E, H, Hkv, P, L = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                       cfg["hidden_size_per_layer_input"], cfg["num_hidden_layers"])
    eps, win, G = cfg["rms_norm_eps"], cfg["sliding_window"], H // Hkv

    def norm(v, g):
        y = v / np.sqrt(np.mean(v * v) + eps)
        return y if g is None else y * g

    def gelu(v):
        return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * v ** 3)))

    def rope(vec, pos, f):
        h = len(vec) // 2
        c, s = np.cos(pos * f), np.sin(pos * f)
        return np.concatenate([vec[:h] * c - vec[h:] * s, vec[h:] * c + vec[:h] * s])

    logits = np.zeros((B, T, w["model.embed_tokens.weight"].shape[0]))
    attn = [np.zeros((B, H, T, T)) for _ in range(L)]
    hidden = [np.zeros((B, T, E)) for _ in range(L + 1)]
    lay = layout(cfg)
    for b in range(B):
        x = np.stack([w["model.embed_tokens.weight"][t] * np.sqrt(E) for t in ids[b]])
        pl = np.zeros((T, L, P))
        for t in range(T):
            ctx = w["model.per_layer_model_projection.weight"] @ x[t] / np.sqrt(E)
            for l in range(L):
                tok = w["model.embed_tokens_per_layer.weight"][ids[b][t]][l * P:(l + 1) * P] * np.sqrt(P)
                pl[t, l] = (norm(ctx[l * P:(l + 1) * P], w["model.per_layer_projection_norm.weight"]) + tok) / np.sqrt(2)
        hidden[0][b] = x
        keys, vals = {}, {}
        for i, (sliding, d, src, inter) in enumerate(lay):
            p = "model.layers.%d." % i
            f = inv_freq(cfg, sliding).numpy()
            hn = np.stack([norm(x[t], w[p + "input_layernorm.weight"]) for t in range(T)])
            if src == i:
                kk, vv = np.zeros((T, Hkv, d)), np.zeros((T, Hkv, d))
                for t in range(T):
                    kr, vr = w[p + "self_attn.k_proj.weight"] @ hn[t], w[p + "self_attn.v_proj.weight"] @ hn[t]
                    for g in range(Hkv):
                        kk[t, g] = rope(norm(kr[g * d:(g + 1) * d], w[p + "self_attn.k_norm.weight"]), t, f)
                        vv[t, g] = norm(vr[g * d:(g + 1) * d], None)
                keys[i], vals[i] = kk, vv
            out = np.zeros((T, H * d))
            for t in range(T):
                qr = w[p + "self_attn.q_proj.weight"] @ hn[t]
                for hh in range(H):
                    q = rope(norm(qr[hh * d:(hh + 1) * d], w[p + "self_attn.q_norm.weight"]), t, f)
                    lo = max(0, t - win + 1) if sliding else 0
                    sc = np.array([q @ keys[src][j, hh // G] for j in range(lo, t + 1)])
                    e = np.exp(sc - sc.max())
                    a = e / e.sum()
                    attn[i][b, hh, t, lo:t + 1] = a
                    out[t, hh * d:(hh + 1) * d] = sum(a[j - lo] * vals[src][j, hh // G] for j in range(lo, t + 1))
            for t in range(T):
                x[t] = x[t] + norm(w[p + "self_attn.o_proj.weight"] @ out[t], w[p + "post_attention_layernorm.weight"])
                hm = norm(x[t], w[p + "pre_feedforward_layernorm.weight"])
                m = w[p + "mlp.down_proj.weight"] @ (gelu(w[p + "mlp.gate_proj.weight"] @ hm) * (w[p + "mlp.up_proj.weight"] @ hm))
                x[t] = x[t] + norm(m, w[p + "post_feedforward_layernorm.weight"])
                g = gelu(w[p + "per_layer_input_gate.weight"] @ x[t]) * pl[t, i]
                x[t] = (x[t] + norm(w[p + "per_layer_projection.weight"] @ g, w[p + "post_per_layer_input_norm.weight"])) * w[p + "layer_scalar"][0]
            if i + 1 < L:
                hidden[i + 1][b] = x
        xf = np.stack([norm(x[t], w["model.norm.weight"]) for t in range(T)])
        hidden[L][b] = xf
        lg = xf @ w["model.embed_tokens.weight"].T
        cap = cfg["final_logit_softcapping"]
        logits[b] = np.tanh(lg / cap) * cap if cap is not None else lg
    return {"logits": logits, "attention": attn, "hidden_states": hidden}
