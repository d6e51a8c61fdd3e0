// softmaxBackward and layerNormBackward against an independent float64 reference written here: each
// forward in float64 JS, and its gradient by central finite differences (step 1e-4, in double) of
// sum(forward(inputs) ⊙ gradOutput).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  softmax,
  softmaxBackward,
  layerNormBackward,
  seededNormal,
} from '../../src/js/index.js';
import { assertClose } from './close.js';
import { kSoftmaxGradTol, kLnGradTol, finiteDifferences } from './finite-differences.mjs';

await init();

// ---- softmaxBackward -----------------------------------------------------------------------------

// Float64 sum(softmax(x) ⊙ g) over rows of n (a row of all −∞ gives zeros).
function softmaxLoss(n, g) {
  return ([x]) => {
    let loss = 0;
    for (let r = 0; r < x.length / n; r++) {
      const row = x.subarray(r * n, (r + 1) * n);
      const max = Math.max(...row);
      if (max === -Infinity) continue;
      let sum = 0;
      for (const value of row) sum += Math.exp(value - max);
      for (let j = 0; j < n; j++) loss += (Math.exp(row[j] - max) / sum) * g[r * n + j];
    }
    return loss;
  };
}

describe('softmaxBackward vs float64 finite differences', () => {
  it('(3, 5, 7) from the output y = softmax(x)', () => {
    const x = seededNormal([3, 5, 7], 71);
    const g = seededNormal([3, 5, 7], 72);
    const dx = softmaxBackward(softmax(x), g);
    assert.deepEqual(dx.shape, [3, 5, 7]);
    assertClose(
      dx.data,
      finiteDifferences(softmaxLoss(7, g.data), [Float64Array.from(x.data)], 0),
      kSoftmaxGradTol,
      'dx',
    );
  });

  it('masked logits (−∞) get zero gradient; a fully masked row is all zeros', () => {
    const values = Float32Array.from(seededNormal([3, 5], 73).data);
    values[1] = -Infinity;
    values[4] = -Infinity;
    values.fill(-Infinity, 5, 10);
    const x = new Tensor(values, [3, 5]);
    const g = seededNormal([3, 5], 74);
    const dx = softmaxBackward(softmax(x), g);
    for (const e of [1, 4, 5, 6, 7, 8, 9]) assert.ok(dx.data[e] === 0, `dx[${e}] = ${dx.data[e]}, want ±0`);
    assertClose(
      dx.data,
      finiteDifferences(softmaxLoss(5, g.data), [Float64Array.from(values)], 0),
      kSoftmaxGradTol,
      'dx',
    );
  });
});

// ---- layerNormBackward ---------------------------------------------------------------------------

// Float64 sum(layerNorm(x; w, b) ⊙ g) over rows of n (biased variance); w or b null = ones / zeros.
function layerNormLoss(n, eps, g) {
  return ([x, w, b]) => {
    let loss = 0;
    for (let r = 0; r < x.length / n; r++) {
      const row = x.subarray(r * n, (r + 1) * n);
      const mean = row.reduce((a, c) => a + c, 0) / n;
      const variance = row.reduce((a, c) => a + (c - mean) ** 2, 0) / n;
      const rstd = 1 / Math.sqrt(variance + eps);
      for (let j = 0; j < n; j++) {
        const y = (row[j] - mean) * rstd * (w ? w[j] : 1) + (b ? b[j] : 0);
        loss += y * g[r * n + j];
      }
    }
    return loss;
  };
}

describe('layerNormBackward vs float64 finite differences', () => {
  it('(3, 5, 7) with weight and bias: gradients of x, weight and bias', () => {
    const x = seededNormal([3, 5, 7], 81);
    const g = seededNormal([3, 5, 7], 82);
    const weight = seededNormal([7], 83);
    const bias = seededNormal([7], 84);
    const grads = layerNormBackward(x, g, { weight, bias, eps: 1e-3 });
    assert.deepEqual(Object.keys(grads).sort(), ['bias', 'weight', 'x']);
    assert.deepEqual(grads.x.shape, [3, 5, 7]);
    assert.deepEqual(grads.weight.shape, [7]);
    assert.deepEqual(grads.bias.shape, [7]);
    const loss = layerNormLoss(7, 1e-3, g.data);
    const arrays = [x, weight, bias].map((t) => Float64Array.from(t.data));
    assertClose(grads.x.data, finiteDifferences(loss, arrays, 0), kLnGradTol, 'dx');
    assertClose(grads.weight.data, finiteDifferences(loss, arrays, 1), kLnGradTol, 'dweight');
    assertClose(grads.bias.data, finiteDifferences(loss, arrays, 2), kLnGradTol, 'dbias');
  });

  it('without weight and bias: only x (default eps); with weight only: x and weight', () => {
    const x = seededNormal([5, 3], 85);
    const g = seededNormal([5, 3], 86);
    const plain = layerNormBackward(x, g);
    assert.deepEqual(Object.keys(plain), ['x']);
    assertClose(
      plain.x.data,
      finiteDifferences(layerNormLoss(3, 1e-5, g.data), [Float64Array.from(x.data), null, null], 0),
      kLnGradTol,
      'dx',
    );
    const weight = [0.5, -1, 2];
    const withWeight = layerNormBackward(x, g, { weight });
    assert.deepEqual(Object.keys(withWeight).sort(), ['weight', 'x']);
    const arrays = [Float64Array.from(x.data), Float64Array.from(weight), null];
    const loss = layerNormLoss(3, 1e-5, g.data);
    assertClose(withWeight.x.data, finiteDifferences(loss, arrays, 0), kLnGradTol, 'dx');
    assertClose(withWeight.weight.data, finiteDifferences(loss, arrays, 1), kLnGradTol, 'dweight');
  });
});
