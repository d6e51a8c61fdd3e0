// scaledDotProductAttentionBackward against an independent float64 reference written here: the forward in
// float64 JS, and its gradient by central finite differences (step 1e-4, in double) of
// sum(forward(inputs) ⊙ gradOutput). Small odd shapes; masks, causal, custom scale, fully masked rows,
// dropout (its mask read back from the forward's trace: `dropped` ÷ `weights`).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  seededNormal,
} from '../../src/js/index.js';
import { assertClose, isClose } from './close.js';
import { kSdpaGradTol, kDropoutRatioTol, finiteDifferences } from './finite-differences.mjs';

await init();

const size = (shape) => shape.reduce((a, b) => a * b, 1);

// Flat index into a tensor of `shape` broadcast (numpy rules, trailing-aligned) to `full`, from a
// multi-index over `full`.
function broadcastIndex(shape, full, index) {
  let flat = 0;
  const offset = full.length - shape.length;
  for (let a = 0; a < shape.length; a++) flat = flat * shape[a] + (shape[a] === 1 ? 0 : index[offset + a]);
  return flat;
}

// Float64 SDPA over q (..., Tq, dk), k (..., Tk, dk), v (..., Tk, dv) with the library's semantics:
// scores·scale + additive mask, boolean mask and causal as −∞, softmax (a fully masked row gives
// zeros), dropout as a multiplier keep[s, i, j] (0 or 1/(1 − p)), times v. Returns
// sum(output ⊙ gradOutput) for the finite differences.
function sdpaLoss(shapes, { scale, mask, additiveMask, causal = false, keep }, gradOutput) {
  const lead = shapes.q.slice(0, -2);
  const [Tq, dk] = shapes.q.slice(-2);
  const Tk = shapes.k.at(-2);
  const dv = shapes.v.at(-1);
  const slices = size(lead);
  const s = scale ?? 1 / Math.sqrt(dk);
  const full = [...lead, Tq, Tk];
  return ([q, k, v]) => {
    let loss = 0;
    const row = new Float64Array(Tk);
    for (let sl = 0; sl < slices; sl++) {
      const leadIndex = [];
      for (let a = lead.length - 1, rest = sl; a >= 0; a--) {
        leadIndex[a] = rest % lead[a];
        rest = Math.floor(rest / lead[a]);
      }
      for (let i = 0; i < Tq; i++) {
        let max = -Infinity;
        for (let j = 0; j < Tk; j++) {
          const index = [...leadIndex, i, j];
          let allowed = !(causal && j > i);
          if (mask) allowed &&= mask.data[broadcastIndex(mask.shape, full, index)] !== 0;
          if (!allowed) {
            row[j] = -Infinity;
            continue;
          }
          let dot = 0;
          for (let c = 0; c < dk; c++) dot += q[(sl * Tq + i) * dk + c] * k[(sl * Tk + j) * dk + c];
          row[j] =
            dot * s + (additiveMask ? additiveMask.data[broadcastIndex(additiveMask.shape, full, index)] : 0);
          max = Math.max(max, row[j]);
        }
        if (max === -Infinity) continue; // fully masked row: zero weights, zero output
        let sum = 0;
        for (let j = 0; j < Tk; j++) {
          row[j] = Math.exp(row[j] - max);
          sum += row[j];
        }
        for (let j = 0; j < Tk; j++) {
          const w = (row[j] / sum) * (keep ? keep[(sl * Tq + i) * Tk + j] : 1);
          for (let c = 0; c < dv; c++)
            loss += w * v[(sl * Tk + j) * dv + c] * gradOutput[(sl * Tq + i) * dv + c];
        }
      }
    }
    return loss;
  };
}

// Checks scaledDotProductAttentionBackward(q, k, v, g, options) against finite differences of the
// reference; refOptions adds what the reference needs beyond the options (the dropout multiplier).
function checkSdpaBackward(shapes, options = {}, refOptions = {}, seed = 1) {
  const q = seededNormal(shapes.q, seed);
  const k = seededNormal(shapes.k, seed + 1);
  const v = seededNormal(shapes.v, seed + 2);
  const out = scaledDotProductAttention(q, k, v, options).output;
  const g = seededNormal(out.shape, seed + 3);
  const grads = scaledDotProductAttentionBackward(q, k, v, g, options);
  const loss = sdpaLoss(shapes, { ...options, ...refOptions }, g.data);
  const arrays = [q, k, v].map((t) => Float64Array.from(t.data));
  ['q', 'k', 'v'].forEach((name, which) => {
    assert.deepEqual(grads[name].shape, shapes[name], `grad ${name} shape`);
    assert.equal(grads[name].dtype, 'float32');
    assertClose(grads[name].data, finiteDifferences(loss, arrays, which), kSdpaGradTol, `grad ${name}`);
  });
  return grads;
}

// ---- scaledDotProductAttentionBackward -----------------------------------------------------------

describe('scaledDotProductAttentionBackward vs float64 finite differences', () => {
  const shapes = { q: [3, 5, 3], k: [3, 7, 3], v: [3, 7, 5] };

  it('plain, (3, 5, 3) × (3, 7, 3) × (3, 7, 5)', () => checkSdpaBackward(shapes));

  it('custom scale', () => checkSdpaBackward(shapes, { scale: 0.8 }, {}, 11));

  it('causal, Tq < Tk and Tq > Tk', () => {
    checkSdpaBackward(shapes, { causal: true }, {}, 21);
    checkSdpaBackward({ q: [2, 7, 3], k: [2, 5, 3], v: [2, 5, 3] }, { causal: true }, {}, 22);
  });

  it('a broadcast boolean mask and a broadcast additive mask (with −∞), rank 4', () => {
    const qs = { q: [2, 3, 5, 3], k: [2, 3, 7, 3], v: [2, 3, 7, 1] };
    const mask = new Tensor(
      Uint8Array.from({ length: 5 * 7 }, (_, i) => (i % 3 === 2 ? 0 : 1)),
      [5, 7],
    );
    const bias = Float32Array.from(seededNormal([2, 1, 1, 7], 5).data);
    bias[3] = -Infinity;
    const additiveMask = new Tensor(bias, [2, 1, 1, 7]);
    checkSdpaBackward(qs, { mask, additiveMask, scale: 0.5 }, {}, 31);
    checkSdpaBackward(qs, { mask, causal: true }, {}, 32);
  });

  it('a fully masked query row gets zero gradients and adds nothing to k and v', () => {
    const allowed = Uint8Array.from({ length: 5 * 7 }, () => 1);
    allowed.fill(0, 2 * 7, 3 * 7); // query row 2 may attend nothing
    const mask = new Tensor(allowed, [5, 7]);
    const grads = checkSdpaBackward(shapes, { mask }, {}, 41);
    for (let b = 0; b < 3; b++) {
      const row = grads.q.data.subarray((b * 5 + 2) * 3, (b * 5 + 3) * 3);
      assert.ok(
        row.every((x) => x === 0),
        `batch ${b}: dq of the masked row is ${row}`,
      );
    }
    // Every row masked: all three gradients are zero.
    const none = new Tensor(new Uint8Array(5 * 7), [5, 7]);
    const zero = checkSdpaBackward(shapes, { mask: none }, {}, 42);
    for (const name of ['q', 'k', 'v'])
      assert.ok(
        zero[name].data.every((x) => x === 0),
        `${name} all zero`,
      );
  });

  it('dropout: the same seed replays the forward mask (read back from the trace: dropped ÷ weights)', () => {
    const p = 0.3;
    const options = { dropout: { p, seed: 1234 }, causal: true };
    const q = seededNormal(shapes.q, 51);
    const k = seededNormal(shapes.k, 52);
    const v = seededNormal(shapes.v, 53);
    const { trace } = scaledDotProductAttention(q, k, v, { ...options, trace: true });
    const weights = trace.find((s) => s.name === 'weights').data;
    const dropped = trace.find((s) => s.name === 'dropped').data;
    const keep = new Float64Array(weights.length);
    let kept = 0;
    let zeroed = 0;
    for (let e = 0; e < weights.length; e++) {
      if (weights[e] === 0) continue; // masked (causal): no gradient flows either way
      const ratio = dropped[e] / weights[e];
      assert.ok(
        isClose(ratio, 0, kDropoutRatioTol) || isClose(ratio, 1 / (1 - p), kDropoutRatioTol),
        `ratio ${ratio} at ${e}`,
      );
      keep[e] = ratio > 0.5 ? 1 / (1 - p) : 0;
      if (keep[e]) kept++;
      else zeroed++;
    }
    assert.ok(kept > 0 && zeroed > 0, `the mask both keeps (${kept}) and drops (${zeroed})`);
    checkSdpaBackward(shapes, options, { keep }, 51);
    // needWeights and trace are accepted and change nothing.
    const g = seededNormal([3, 5, 5], 54);
    const a = scaledDotProductAttentionBackward(q, k, v, g, options);
    const b = scaledDotProductAttentionBackward(q, k, v, g, { ...options, needWeights: false, trace: true });
    for (const name of ['q', 'k', 'v']) assert.deepEqual(b[name].data, a[name].data, name);
  });

  it('accepts { data, shape } objects and nested arrays, and a single (T, d) slice', () => {
    const q = seededNormal([3, 2], 61);
    const k = seededNormal([4, 2], 62);
    const v = seededNormal([4, 3], 63);
    const g = seededNormal([3, 3], 64);
    const a = scaledDotProductAttentionBackward(q, k, v, g);
    const b = scaledDotProductAttentionBackward(
      { data: q.data, shape: q.shape },
      k.toArray(),
      v,
      g.toArray(),
    );
    for (const name of ['q', 'k', 'v']) assert.deepEqual(b[name].data, a[name].data, name);
    checkSdpaBackward({ q: [3, 2], k: [4, 2], v: [4, 3] }, {}, {}, 61);
  });
});
