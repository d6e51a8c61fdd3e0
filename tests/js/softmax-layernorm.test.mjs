// softmax and layerNorm, checked against float64 references written here (independent of the C++ core).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, Tensor, softmax, layerNorm } from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kRefTol, rand } from './attention-reference.mjs';

// Top-level await: describe() bodies below build inputs with seededNormal at collection time.
await init();

// ---- softmax, layerNorm -------------------------------------------------------------------------

describe('softmax', () => {
  it('softmax([1, 1, 1, 5]) = [0.0174, 0.0174, 0.0174, 0.9479] (the tutorial example)', () => {
    const y = softmax(new Tensor([1, 1, 1, 5], [1, 1, 1, 4]));
    assert.deepEqual(y.shape, [1, 1, 1, 4]);
    const e = Math.exp(4);
    assertClose(
      y.data,
      [1, 1, 1, e].map((v) => v / (3 + e)),
      kRefTol,
      'softmax',
    );
    assert.equal(y.data[0].toFixed(4), '0.0174');
    assert.equal(y.data[3].toFixed(4), '0.9479');
  });

  it('works over the last axis, stays finite near 1000, and gives zeros for an all -Infinity row', () => {
    const x = new Tensor([1000, 1001, 1002, -Infinity, -Infinity, -Infinity, 0, -Infinity, 2], [3, 3]);
    const y = softmax(x);
    const row = (a, b, c) => {
      const m = Math.max(a, b, c);
      const s = Math.exp(a - m) + Math.exp(b - m) + Math.exp(c - m);
      return [a, b, c].map((v) => Math.exp(v - m) / s);
    };
    assertClose(y.data.subarray(0, 3), row(1000, 1001, 1002), kRefTol, 'row near 1000');
    assert.deepEqual(Array.from(y.data.subarray(3, 6)), [0, 0, 0], 'all -inf row → zeros');
    assertClose(
      y.data.subarray(6, 9),
      [1 / (1 + Math.exp(2)), 0, Math.exp(2) / (1 + Math.exp(2))],
      kRefTol,
      '-inf entry',
    );
  });

  it('accepts nested arrays and { data, shape }', () => {
    assertClose(softmax([[0, 0]]).data, [0.5, 0.5], kRefTol, 'nested');
    assertClose(softmax({ data: [0, Math.log(3)], shape: [2] }).data, [0.25, 0.75], kRefTol, 'object');
  });
});

describe('layerNorm', () => {
  const x = rand([3, 7], 11);
  function ref(eps, w, b) {
    const out = [];
    for (let r = 0; r < 3; r++) {
      const row = Array.from(x.data.subarray(r * 7, r * 7 + 7));
      const mean = row.reduce((a, c) => a + c, 0) / 7;
      const variance = row.reduce((a, c) => a + (c - mean) ** 2, 0) / 7; // biased, as nn.LayerNorm
      row.forEach((c, i) =>
        out.push(((c - mean) / Math.sqrt(variance + eps)) * (w ? w[i] : 1) + (b ? b[i] : 0)),
      );
    }
    return out;
  }

  it('without weight and bias normalises each row (eps 1e-5 by default)', () => {
    assertClose(layerNorm(x).data, ref(1e-5), kRefTol, 'plain');
  });

  it('applies weight and bias, and eps matters for a near-constant row', () => {
    const w = [1, 2, 3, -1, 0.5, 0, 1];
    const b = [0, 0.1, -0.2, 0.3, 0, 5, -5];
    assertClose(layerNorm(x, { weight: w, bias: b }).data, ref(1e-5, w, b), kRefTol, 'weight+bias');
    assertClose(layerNorm(x, { weight: new Tensor(w) }).data, ref(1e-5, w), kRefTol, 'weight only');
    assertClose(layerNorm(x, { bias: b }).data, ref(1e-5, null, b), kRefTol, 'bias only');
    const flat = new Tensor([1, 1.001, 0.999, 1], [1, 4]);
    const big = layerNorm(flat, { eps: 1 }).data;
    const small = layerNorm(flat, { eps: 1e-9 }).data;
    assert.ok(Math.abs(small[1]) > 100 * Math.abs(big[1]), 'eps changes a near-constant row');
  });
});
