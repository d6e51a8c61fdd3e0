// Float64 references for the attention API tests (softmax-layernorm, sdpa, mha-api and mha-trace-masks
// .test.mjs), written independently of the C++ core, and their named tolerances.

import { seededNormal } from '../../src/js/index.js';

// Named tolerances (absolute), float32 core vs float64 reference.
export const kRefTol = 1e-5; // one attention / layer-norm pass vs the float64 reference
export const kPeTol = 2e-6; // sinusoidal values are float32 casts of double sin/cos
export const kTiledTol = 1e-5; // tiled (needWeights: false) path vs the weights path
export const kAvgTol = 1e-6; // mean of per-head weights vs the averaged weights
export const kSamePathTol = 1e-6; // two ways to express the same computation (packed vs split weights, …)

export const rand = (shape, seed) => seededNormal(shape, seed);

// Float64 softmax(q·kᵀ·scale + bias)·v over (B, Tq, d) × (B, Tk, d); allowed(b, i, j) → bool,
// bias(b, i, j) → number. A fully masked row gives zero weights (our convention).
export function sdpaRef(q, k, v, { scale, allowed = () => true, bias = () => 0 } = {}) {
  const [B, Tq, dk] = q.shape;
  const Tk = k.shape[1];
  const dv = v.shape[2];
  const s = scale ?? 1 / Math.sqrt(dk);
  const out = new Float64Array(B * Tq * dv);
  const weights = new Float64Array(B * Tq * Tk);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < Tq; i++) {
      const row = new Float64Array(Tk).fill(-Infinity);
      for (let j = 0; j < Tk; j++) {
        if (!allowed(b, i, j)) continue;
        let dot = 0;
        for (let c = 0; c < dk; c++) dot += q.data[(b * Tq + i) * dk + c] * k.data[(b * Tk + j) * dk + c];
        row[j] = dot * s + bias(b, i, j);
      }
      const max = Math.max(...row);
      if (max === -Infinity) continue; // fully masked: zeros
      let sum = 0;
      for (let j = 0; j < Tk; j++) {
        row[j] = Math.exp(row[j] - max);
        sum += row[j];
      }
      for (let j = 0; j < Tk; j++) {
        const w = row[j] / sum;
        weights[(b * Tq + i) * Tk + j] = w;
        for (let c = 0; c < dv; c++) out[(b * Tq + i) * dv + c] += w * v.data[(b * Tk + j) * dv + c];
      }
    }
  }
  return { output: out, weights };
}

// Float64 y = x·Wᵀ + bias for x (N, in), W (out, in) given as flat arrays.
function linear(x, N, inDim, W, outDim, bias, wOffset = 0, bOffset = 0) {
  const y = new Float64Array(N * outDim);
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < outDim; o++) {
      let acc = bias ? bias[bOffset + o] : 0;
      for (let c = 0; c < inDim; c++) acc += x[n * inDim + c] * W[wOffset + o * inDim + c];
      y[n * outDim + o] = acc;
    }
  }
  return y;
}

// Float64 nn.MultiheadAttention (packed in_proj_weight, biases, batch_first, no extras) from a
// state dict; returns the output (B, Tq, E) and per-head weights (B, H, Tq, Tk).
export function mhaRef(sd, H, query, key) {
  const [B, Tq, E] = query.shape;
  const Tk = key.shape[1];
  const d = E / H;
  const W = sd.in_proj_weight.data;
  const bias = sd.in_proj_bias.data;
  const q = linear(query.data, B * Tq, E, W, E, bias, 0, 0);
  const k = linear(key.data, B * Tk, E, W, E, bias, E * E, E);
  const v = linear(key.data, B * Tk, E, W, E, bias, 2 * E * E, 2 * E);
  const concat = new Float64Array(B * Tq * E);
  const weights = new Float64Array(B * H * Tq * Tk);
  const head = (src, T, b, h) => {
    const t = { shape: [1, T, d], data: new Float64Array(T * d) };
    for (let i = 0; i < T; i++)
      for (let c = 0; c < d; c++) t.data[i * d + c] = src[(b * T + i) * E + h * d + c];
    return t;
  };
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const r = sdpaRef(head(q, Tq, b, h), head(k, Tk, b, h), head(v, Tk, b, h));
      weights.set(r.weights, (b * H + h) * Tq * Tk);
      for (let i = 0; i < Tq; i++)
        for (let c = 0; c < d; c++) concat[(b * Tq + i) * E + h * d + c] = r.output[i * d + c];
    }
  }
  const output = linear(concat, B * Tq, E, sd['out_proj.weight'].data, E, sd['out_proj.bias'].data);
  return { output, weights };
}
