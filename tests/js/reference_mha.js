// An independent float64 multi-head attention in plain JS, written from the documented semantics
// (src/core/multi_head.h, README "Mask convention"), not from the C++: for finite differences of
// the library's MultiHeadAttention.backward. Loops over every index, no tricks.
//
//   x = query (+ positional[0:Tq]);  self-attention: key = value = x;  value omitted: value = key
//   q = x·Wqᵀ + bq,  k = key·Wkᵀ + bk,  v = value·Wvᵀ + bv          (B, T, H·d), head h = columns h·d…
//   k, v get a bias_k / bias_v row (addBiasKV), then a zero row (addZeroAttn): Tk' = Tk + extra
//   per (b, h): s_ij = scale·q_i·k_j (+ additive mask); −∞ where mask / key padding / causal (j > i)
//     forbid (real keys only; the extra keys are never masked); P = softmax_j (a row with no allowed
//     key gives P = 0); P ⊙ keep (dropout multiplier) · v → context (B, Tq, H·dv)
//   out = context·Woᵀ + bo (+ x when residual), then LayerNorm(eps)·w + b when layerNorm
//
// `vars` maps names to Float64Arrays: 'query', 'key', 'value', 'positional' (those used) and every
// state-dict name (in_proj_weight or q/k/v_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias,
// bias_k, bias_v, layer_norm.weight, layer_norm.bias). Sub-weights are views, so perturbing an
// element of vars.in_proj_weight perturbs the reference.

/** y (rows, out) = x (rows, in) · Wᵀ + b, with W (out, in) row-major and b (out) or null. */
function linear(x, rows, inDim, w, b, outDim) {
  const y = new Float64Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outDim; o++) {
      let sum = b ? b[o] : 0;
      for (let c = 0; c < inDim; c++) sum += x[r * inDim + c] * w[o * inDim + c];
      y[r * outDim + o] = sum;
    }
  }
  return y;
}

// The q/k/v projection weights and biases as views into the state dict's arrays.
function projections(cfg, vars) {
  const { embedDim: e, kdim, vdim, numHeads: h, headDim: dk, valueHeadDim: dv } = cfg;
  const qk = h * dk;
  const p = {};
  if (vars.in_proj_weight) {
    p.wq = vars.in_proj_weight.subarray(0, qk * e);
    p.wk = vars.in_proj_weight.subarray(qk * e, 2 * qk * e);
    p.wv = vars.in_proj_weight.subarray(2 * qk * e, (2 * qk + h * dv) * e);
  } else {
    [p.wq, p.wk, p.wv] = [vars.q_proj_weight, vars.k_proj_weight, vars.v_proj_weight];
  }
  const bias = vars.in_proj_bias;
  p.bq = bias ? bias.subarray(0, qk) : null;
  p.bk = bias ? bias.subarray(qk, 2 * qk) : null;
  p.bv = bias ? bias.subarray(2 * qk, 2 * qk + h * dv) : null;
  if (kdim !== e || vdim !== e) assert(!vars.in_proj_weight, 'in_proj_weight needs kdim == vdim == embedDim');
  return p;
}

function assert(ok, message) {
  if (!ok) throw new Error(`reference_mha: ${message}`);
}

// k or v (B, Tk, width) with the extra rows appended per batch: (B, Tk', width).
function withExtraKeys(t, b, tk, width, cfg, biasRow) {
  const extra = (cfg.addBiasKV ? 1 : 0) + (cfg.addZeroAttn ? 1 : 0);
  const tkp = tk + extra;
  const out = new Float64Array(b * tkp * width);
  for (let bi = 0; bi < b; bi++) {
    out.set(t.subarray(bi * tk * width, (bi + 1) * tk * width), bi * tkp * width);
    if (cfg.addBiasKV) out.set(biasRow, (bi * tkp + tk) * width); // the zero row stays zero
  }
  return out;
}

// Whether query i of (b, h) may attend real key j, and the additive term, per the options.
function maskTerm(opts, b, h, i, j, dims) {
  const { H, tq, tk } = dims;
  if (opts.causal && j > i) return -Infinity;
  if (opts.keyPaddingMask && !opts.keyPaddingMask.data[b * tk + j]) return -Infinity;
  const at = (m) => (m.shape.length === 3 ? (b * H + h) * tq * tk : 0) + i * tk + j;
  if (opts.mask && !opts.mask.data[at(opts.mask)]) return -Infinity;
  return opts.additiveMask ? opts.additiveMask.data[at(opts.additiveMask)] : 0;
}

// context (B, Tq, H·dv) from q (B, Tq, H·dk), k (B, Tk', H·dk), v (B, Tk', H·dv).
function attend(q, k, v, dims, cfg, opts) {
  const { B, H, tq, tk, tkp } = dims;
  const { headDim: dk, valueHeadDim: dv } = cfg;
  const scale = opts.scale ?? 1 / Math.sqrt(dk);
  const context = new Float64Array(B * tq * H * dv);
  const s = new Float64Array(tkp);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < tq; i++) {
        let max = -Infinity;
        for (let j = 0; j < tkp; j++) {
          const term = j < tk ? maskTerm(opts, b, h, i, j, dims) : 0;
          let dot = 0;
          for (let c = 0; c < dk; c++)
            dot += q[(b * tq + i) * H * dk + h * dk + c] * k[(b * tkp + j) * H * dk + h * dk + c];
          s[j] = term === -Infinity ? -Infinity : dot * scale + term;
          max = Math.max(max, s[j]);
        }
        if (max === -Infinity) continue; // no allowed key: zero weights, zero context
        let sum = 0;
        for (let j = 0; j < tkp; j++) sum += s[j] = Math.exp(s[j] - max);
        for (let j = 0; j < tkp; j++) {
          const w = (s[j] / sum) * (opts.keep ? opts.keep[((b * H + h) * tq + i) * tkp + j] : 1);
          for (let c = 0; c < dv; c++)
            context[(b * tq + i) * H * dv + h * dv + c] += w * v[(b * tkp + j) * H * dv + h * dv + c];
        }
      }
    }
  }
  return context;
}

function layerNormRows(y, rows, e, w, b, eps) {
  for (let r = 0; r < rows; r++) {
    const row = y.subarray(r * e, (r + 1) * e);
    const mean = row.reduce((a, c) => a + c, 0) / e;
    const variance = row.reduce((a, c) => a + (c - mean) ** 2, 0) / e;
    const rstd = 1 / Math.sqrt(variance + eps);
    for (let c = 0; c < e; c++) row[c] = (row[c] - mean) * rstd * w[c] + b[c];
  }
}

/**
 * The forward output (B·Tq·E, row-major, Float64Array) of the module `cfg` (MultiHeadAttention's
 * config: embedDim, numHeads, kdim, vdim, headDim, valueHeadDim, addBiasKV, addZeroAttn, residual,
 * layerNorm, layerNormEps) on `vars`. `shapes.query` (B, Tq, E) or (Tq, E) and `shapes.key` (when a
 * key is used) give the sizes; opts: { mask, additiveMask, keyPaddingMask (0/1 data, ours: 1 = may
 * attend / real token), causal, scale, keep (B·H·Tq·Tk' dropout multipliers) }.
 */
export function referenceMha(cfg, vars, shapes, opts = {}) {
  const e = cfg.embedDim;
  const batched = shapes.query.length === 3;
  const B = batched ? shapes.query[0] : 1;
  const tq = shapes.query.at(-2);
  const tk = vars.key ? shapes.key.at(-2) : tq;
  const extra = (cfg.addBiasKV ? 1 : 0) + (cfg.addZeroAttn ? 1 : 0);
  const dims = { B, H: cfg.numHeads, tq, tk, tkp: tk + extra };
  const x = Float64Array.from(vars.query);
  if (vars.positional) for (let i = 0; i < x.length; i++) x[i] += vars.positional[i % (tq * e)];
  const keySrc = vars.key ?? x;
  const valueSrc = vars.key ? (vars.value ?? vars.key) : x;
  const p = projections(cfg, vars);
  const qk = cfg.numHeads * cfg.headDim;
  const vo = cfg.numHeads * cfg.valueHeadDim;
  const q = linear(x, B * tq, e, p.wq, p.bq, qk);
  const k = withExtraKeys(
    linear(keySrc, B * tk, vars.key ? cfg.kdim : e, p.wk, p.bk, qk),
    B,
    tk,
    qk,
    cfg,
    vars.bias_k,
  );
  const v = withExtraKeys(
    linear(valueSrc, B * tk, vars.key ? cfg.vdim : e, p.wv, p.bv, vo),
    B,
    tk,
    vo,
    cfg,
    vars.bias_v,
  );
  const context = attend(q, k, v, dims, cfg, opts);
  const out = linear(context, B * tq, vo, vars['out_proj.weight'], vars['out_proj.bias'] ?? null, e);
  if (cfg.residual) for (let i = 0; i < out.length; i++) out[i] += x[i];
  if (cfg.layerNorm)
    layerNormRows(out, B * tq, e, vars['layer_norm.weight'], vars['layer_norm.bias'], cfg.layerNormEps);
  return out;
}
