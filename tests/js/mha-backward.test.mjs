// MultiHeadAttention.backward: every input and parameter gradient against central finite differences of an
// independent float64 JS reference (reference_mha.js) on small odd shapes, for each option.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, seededNormal, memoryStats } from '../../src/js/index.js';
import { referenceMha } from './reference_mha.js';
import { assertClose, isClose } from './close.js';
import {
  kFdStep,
  kGradTol,
  kForwardTol,
  kDropoutRatioTol,
  randomModule,
  E6,
  bools,
} from './mha-backward-check.mjs';

await init();
after(() => assert.equal(memoryStats().liveHandles, 0, 'every module disposed'));

const f64 = (t) => Float64Array.from(t.data);
const dot = (a, b) => a.reduce((sum, v, i) => sum + v * b[i], 0);

// Central differences of loss() with respect to every element of x (perturbed in place).
function finiteDifferences(loss, x) {
  const grad = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i];
    x[i] = keep + kFdStep;
    const plus = loss();
    x[i] = keep - kFdStep;
    const minus = loss();
    x[i] = keep;
    grad[i] = (plus - minus) / (2 * kFdStep);
  }
  return grad;
}

// Dropout multipliers (B·H·Tq·Tk') read back from a forward's trace: `dropped` ÷ `weights`.
function keepFromTrace(trace, p) {
  const weights = trace.find((s) => s.name === 'weights').data;
  const dropped = trace.find((s) => s.name === 'dropped').data;
  const keep = new Float64Array(weights.length);
  for (let e = 0; e < weights.length; e++) {
    if (weights[e] === 0) continue; // masked: no gradient flows either way
    const ratio = dropped[e] / weights[e];
    assert.ok(
      isClose(ratio, 0, kDropoutRatioTol) || isClose(ratio, 1 / (1 - p), kDropoutRatioTol),
      `ratio ${ratio}`,
    );
    keep[e] = ratio > 0.5 ? 1 / (1 - p) : 0;
  }
  assert.ok(keep.some((k) => k === 0) && keep.some((k) => k > 0), 'the dropout mask both keeps and drops');
  return keep;
}

/**
 * Runs forward (requiresGrad) and backward on a random module and checks every gradient against
 * finite differences of referenceMha. shapes: { query, key?, value? } (key: cross-attention; value
 * omitted with a key: the key serves as value). options: forward options (dropout needs no extra).
 */
function checkCase({ config, shapes, options = {}, seed }) {
  const mha = randomModule(config, seed);
  try {
    const inputs = { query: seededNormal(shapes.query, seed + 1) };
    if (shapes.key) inputs.key = seededNormal(shapes.key, seed + 2);
    if (shapes.value) inputs.value = seededNormal(shapes.value, seed + 3);
    const dropout = options.dropout != null;
    const r = mha.forward(inputs.query, inputs.key ?? null, inputs.value ?? null, {
      ...options,
      trace: dropout,
      requiresGrad: true,
    });
    const g = seededNormal(r.output.shape, seed + 4);
    const grads = mha.backward(g);
    const refOptions = { ...options, keep: dropout ? keepFromTrace(r.trace, options.dropout.p) : undefined };
    const vars = Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, f64(t)]));
    if (options.positional) vars.positional = f64(options.positional);
    for (const [name, t] of Object.entries(mha.stateDict())) vars[name] = f64(t);
    const reference = () => referenceMha(mha.config, vars, shapes, refOptions);
    if (!dropout) assertClose(r.output.data, reference(), kForwardTol, 'forward vs reference');
    const loss = () => dot(reference(), g.data);

    assert.deepEqual(Object.keys(grads.inputs), Object.keys(inputs), 'input gradients: those passed');
    for (const [name, t] of Object.entries(inputs)) {
      assert.deepEqual(grads.inputs[name].shape, t.shape, `grad ${name} shape`);
      assertClose(grads.inputs[name].data, finiteDifferences(loss, vars[name]), kGradTol, `grad ${name}`);
    }
    const params = mha.stateDict();
    assert.deepEqual(
      Object.keys(grads.params),
      Object.keys(params),
      'parameter gradients: stateDict() names',
    );
    for (const [name, t] of Object.entries(params)) {
      assert.deepEqual(grads.params[name].shape, t.shape, `grad ${name} shape`);
      assertClose(grads.params[name].data, finiteDifferences(loss, vars[name]), kGradTol, `grad ${name}`);
    }
    return grads;
  } finally {
    mha.dispose();
  }
}

const self = { query: [2, 3, 6] };
const cross = { query: [2, 3, 6], key: [2, 5, 6], value: [2, 5, 6] };

describe('MultiHeadAttention.backward vs float64 finite differences', () => {
  it('self-attention: the whole gradient lands in query', () =>
    checkCase({ config: E6, shapes: self, seed: 1 }));
  it('cross-attention with key and value', () => checkCase({ config: E6, shapes: cross, seed: 11 }));
  it('cross-attention without value: the value path is added into key', () => {
    checkCase({ config: E6, shapes: { query: [2, 3, 6], key: [2, 5, 6] }, seed: 21 });
  });
  it('kdim 4, vdim 7, headDim 3, valueHeadDim 2 (separate q/k/v_proj_weight; E 5 not divisible by H)', () => {
    const config = { embedDim: 5, numHeads: 2, kdim: 4, vdim: 7, headDim: 3, valueHeadDim: 2 };
    checkCase({ config, shapes: { query: [2, 3, 5], key: [2, 5, 4], value: [2, 5, 7] }, seed: 31 });
  });
  it('bias off', () => checkCase({ config: { ...E6, bias: false }, shapes: cross, seed: 41 }));
  it('addBiasKV (with key padding: the bias key is never masked)', () => {
    const keyPaddingMask = new Tensor(
      bools(10, (i) => i === 1 || i === 9),
      [2, 5],
    );
    checkCase({ config: { ...E6, addBiasKV: true }, shapes: cross, options: { keyPaddingMask }, seed: 51 });
  });
  it('addZeroAttn (with a 2-D mask), and both extra keys with a per-head 3-D mask', () => {
    const mask = new Tensor(
      bools(15, (i) => i % 4 === 1),
      [3, 5],
    );
    checkCase({ config: { ...E6, addZeroAttn: true }, shapes: cross, options: { mask }, seed: 61 });
    const mask3 = new Tensor(
      bools(4 * 15, (i) => i % 7 === 3),
      [4, 3, 5],
    );
    checkCase({
      config: { ...E6, addBiasKV: true, addZeroAttn: true },
      shapes: cross,
      options: { mask: mask3 },
      seed: 62,
    });
  });
  it('key padding', () => {
    const keyPaddingMask = new Tensor(
      bools(10, (i) => i === 3 || i === 7 || i === 8),
      [2, 5],
    );
    checkCase({ config: E6, shapes: cross, options: { keyPaddingMask }, seed: 71 });
  });
  it('causal: self-attention and cross-attention with Tq < Tk', () => {
    checkCase({
      config: { embedDim: 6, numHeads: 3 },
      shapes: { query: [2, 5, 6] },
      options: { causal: true },
      seed: 81,
    });
    checkCase({ config: E6, shapes: cross, options: { causal: true }, seed: 82 });
  });
  it('residual + layerNorm (eps 1e-3)', () => {
    checkCase({ config: { ...E6, residual: true, layerNorm: { eps: 1e-3 } }, shapes: self, seed: 91 });
  });
  it('positional: self-attention (K/V read the encoded query) and cross-attention', () => {
    const positional = seededNormal([4, 6], 101);
    checkCase({ config: E6, shapes: self, options: { positional }, seed: 102 });
    checkCase({
      config: { ...E6, residual: true, layerNorm: true },
      shapes: cross,
      options: { positional },
      seed: 103,
    });
  });
  it('an additive mask with −∞, a custom scale, and seeded dropout (mask read back from the trace)', () => {
    const bias = seededNormal([3, 5], 111).data;
    bias[2] = -Infinity;
    const additiveMask = new Tensor(bias, [3, 5]);
    checkCase({ config: E6, shapes: cross, options: { additiveMask, scale: 0.7 }, seed: 112 });
    checkCase({
      config: E6,
      shapes: cross,
      options: { dropout: { p: 0.3, seed: 9 }, causal: true },
      seed: 113,
    });
  });
  it('unbatched (T, E) input gives unbatched gradients', () => {
    const grads = checkCase({ config: E6, shapes: { query: [3, 6], key: [5, 6], value: [5, 6] }, seed: 121 });
    assert.deepEqual(grads.inputs.query.shape, [3, 6]);
    checkCase({ config: E6, shapes: { query: [4, 6] }, options: { causal: true }, seed: 122 });
  });
});
