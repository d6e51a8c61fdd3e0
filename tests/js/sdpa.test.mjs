// scaledDotProductAttention, checked against the float64 reference in attention-reference.mjs (independent of
// the C++ core) and against the properties the contract states (index.d.ts).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, scaledDotProductAttention } from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kRefTol, kTiledTol, rand, sdpaRef } from './attention-reference.mjs';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- scaledDotProductAttention -------------------------------------------------------------------

describe('scaledDotProductAttention', () => {
  const q = rand([2, 4, 8], 1);
  const k = rand([2, 6, 8], 2);
  const v = rand([2, 6, 5], 3);

  it('matches the float64 reference with the default scale 1/√d_k', () => {
    const r = scaledDotProductAttention(q, k, v);
    const ref = sdpaRef(q, k, v);
    assert.deepEqual(r.output.shape, [2, 4, 5]);
    assert.deepEqual(r.weights.shape, [2, 4, 6]);
    assertClose(r.output.data, ref.output, kRefTol, 'output');
    assertClose(r.weights.data, ref.weights, kRefTol, 'weights');
  });

  it('uses the scale option (a temperature t is scale 1/t)', () => {
    const r = scaledDotProductAttention(q, k, v, { scale: 1 / 1.7 });
    assertClose(r.output.data, sdpaRef(q, k, v, { scale: 1 / 1.7 }).output, kRefTol, 'scaled output');
  });

  it('bool mask (1 = may attend) broadcast over the batch; masked weights are exactly 0', () => {
    const allowed = [
      [1, 1, 0, 1, 0, 1],
      [0, 1, 1, 1, 1, 1],
      [1, 0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1, 0],
    ];
    const mask = new Tensor(Uint8Array.from(allowed.flat()), [4, 6]);
    const r = scaledDotProductAttention(q, k, v, { mask });
    const ref = sdpaRef(q, k, v, { allowed: (b, i, j) => allowed[i][j] === 1 });
    assertClose(r.output.data, ref.output, kRefTol, 'masked output');
    for (let i = 0; i < r.weights.size; i++) {
      if (allowed[Math.floor(i / 6) % 4][i % 6] === 0) assert.equal(r.weights.data[i], 0, `weight ${i}`);
    }
    const boolArray = scaledDotProductAttention(q, k, v, { mask: allowed.map((row) => row.map(Boolean)) });
    assert.deepEqual(Array.from(boolArray.output.data), Array.from(r.output.data), 'boolean[][] mask');
  });

  it('a fully masked row gives zero weights and a zero output row (never NaN)', () => {
    const mask = new Tensor(
      Uint8Array.from({ length: 24 }, (_, i) => (i < 6 ? 0 : 1)),
      [4, 6],
    );
    const r = scaledDotProductAttention(q, k, v, { mask });
    for (let b = 0; b < 2; b++) {
      assert.deepEqual(Array.from(r.weights.data.subarray(b * 24, b * 24 + 6)), [0, 0, 0, 0, 0, 0]);
      assert.deepEqual(Array.from(r.output.data.subarray(b * 20, b * 20 + 5)), [0, 0, 0, 0, 0]);
    }
    assert.ok(r.output.data.every(Number.isFinite));
  });

  it('additiveMask is added to the scaled scores and may hold -Infinity', () => {
    const add = Float32Array.from({ length: 24 }, (_, i) => (i % 5 === 0 ? -Infinity : (i % 3) - 1));
    const r = scaledDotProductAttention(q, k, v, { additiveMask: new Tensor(add, [4, 6]) });
    const ref = sdpaRef(q, k, v, { bias: (b, i, j) => add[i * 6 + j] });
    assertClose(r.output.data, ref.output, kRefTol, 'additive');
  });

  it('causal is top-left aligned for square, wide and tall shapes', () => {
    for (const [Tq, Tk] of [
      [5, 5],
      [3, 6],
      [6, 4],
    ]) {
      const qq = rand([2, Tq, 4], 10 + Tq);
      const kk = rand([2, Tk, 4], 20 + Tk);
      const vv = rand([2, Tk, 3], 30 + Tk);
      const r = scaledDotProductAttention(qq, kk, vv, { causal: true });
      const ref = sdpaRef(qq, kk, vv, { allowed: (b, i, j) => j <= i });
      assertClose(r.output.data, ref.output, kRefTol, `causal ${Tq}x${Tk}`);
      assertClose(r.weights.data, ref.weights, kRefTol, `causal weights ${Tq}x${Tk}`);
    }
  });

  it('handles leading axes (B, H, T, d) with a mask broadcast over heads and queries', () => {
    const q4 = rand([2, 3, 4, 5], 41);
    const k4 = rand([2, 3, 6, 5], 42);
    const v4 = rand([2, 3, 6, 7], 43);
    const pad = [
      [1, 1, 1, 1, 0, 0],
      [1, 1, 1, 1, 1, 1],
    ];
    const r = scaledDotProductAttention(q4, k4, v4, {
      mask: new Tensor(Uint8Array.from(pad.flat()), [2, 1, 1, 6]),
    });
    assert.deepEqual(r.output.shape, [2, 3, 4, 7]);
    const flat = (t, T, d) => ({ shape: [6, T, d], data: t.data });
    const ref = sdpaRef(flat(q4, 4, 5), flat(k4, 6, 5), flat(v4, 6, 7), {
      allowed: (bh, i, j) => pad[Math.floor(bh / 3)][j] === 1,
    });
    assertClose(r.output.data, ref.output, kRefTol, 'leading axes');
  });

  it('dropout is deterministic for a seed; weights are before dropout; the trace shows both', () => {
    const opts = { dropout: { p: 0.4, seed: 1234 }, trace: true };
    const a = scaledDotProductAttention(q, k, v, opts);
    const b = scaledDotProductAttention(q, k, v, opts);
    const c = scaledDotProductAttention(q, k, v, { ...opts, dropout: { p: 0.4, seed: 99 } });
    const plain = scaledDotProductAttention(q, k, v);
    assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data), 'same seed, same output');
    assert.notDeepEqual(Array.from(a.output.data), Array.from(c.output.data), 'other seed');
    assert.deepEqual(Array.from(a.weights.data), Array.from(plain.weights.data), 'weights are pre-dropout');

    const dropped = a.trace.find((s) => s.name === 'dropped');
    let zeros = 0;
    for (let i = 0; i < dropped.data.length; i++) {
      if (dropped.data[i] === 0) {
        zeros++;
        continue;
      }
      assertClose([dropped.data[i]], [a.weights.data[i] / (1 - 0.4)], kRefTol, `kept weight ${i}`);
    }
    assert.ok(
      zeros > 0 && zeros < dropped.data.length,
      `some weights dropped (${zeros}/${dropped.data.length})`,
    );
    // output = dropped · v
    const ref = new Float64Array(2 * 4 * 5);
    for (let bb = 0; bb < 2; bb++)
      for (let i = 0; i < 4; i++)
        for (let j = 0; j < 6; j++)
          for (let c2 = 0; c2 < 5; c2++) {
            ref[(bb * 4 + i) * 5 + c2] += dropped.data[(bb * 4 + i) * 6 + j] * v.data[(bb * 6 + j) * 5 + c2];
          }
    assertClose(a.output.data, ref, kRefTol, 'output = dropped·v');
  });

  it('needWeights: false returns no weights and the same output (tiled path) within kTiledTol', () => {
    // Long enough for several key tiles and a partial last one, with a mask and causal.
    const qq = rand([2, 70, 16], 51);
    const kk = rand([2, 300, 16], 52);
    const vv = rand([2, 300, 12], 53);
    const mask = new Tensor(
      Uint8Array.from({ length: 70 * 300 }, (_, i) => ((i * 7) % 11 === 0 ? 0 : 1)),
      [70, 300],
    );
    for (const options of [{}, { mask }, { causal: true }, { mask, causal: true, scale: 0.3 }]) {
      const full = scaledDotProductAttention(qq, kk, vv, options);
      const fast = scaledDotProductAttention(qq, kk, vv, { ...options, needWeights: false });
      assert.equal(fast.weights, undefined);
      assert.equal('weights' in fast, false);
      assertClose(
        fast.output.data,
        full.output.data,
        kTiledTol,
        `tiled vs full ${JSON.stringify(Object.keys(options))}`,
      );
    }
  });

  it('trace: scores, scaled, masked, weights, context with shapes; data agrees with the results', () => {
    const r = scaledDotProductAttention(q, k, v, { trace: true, causal: true });
    assert.deepEqual(
      r.trace.map((s) => s.name),
      ['scores', 'scaled', 'masked', 'weights', 'context'],
    );
    const shapes = Object.fromEntries(r.trace.map((s) => [s.name, s.shape]));
    assert.deepEqual(shapes, {
      scores: [2, 4, 6],
      scaled: [2, 4, 6],
      masked: [2, 4, 6],
      weights: [2, 4, 6],
      context: [2, 4, 5],
    });
    for (const step of r.trace) {
      assert.ok(step.data instanceof Float32Array);
      assert.equal(
        step.data.length,
        step.shape.reduce((a, b) => a * b, 1),
      );
      assert.equal(step.axes.length, step.shape.length, `${step.name} axes`);
    }
    const get = (name) => r.trace.find((s) => s.name === name).data;
    assertClose(
      get('scaled'),
      Array.from(get('scores'), (s) => s / Math.sqrt(8)),
      kRefTol,
      'scaled = scores/√d_k',
    );
    assert.equal(get('masked')[1], -Infinity, 'causal masks j > i with -inf');
    assert.deepEqual(Array.from(get('weights')), Array.from(r.weights.data));
    assert.deepEqual(Array.from(get('context')), Array.from(r.output.data));
  });
});
