// The backward functions' errors: the forward's, plus gradOutput's; the heap is unchanged after each.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  scaledDotProductAttentionBackward,
  softmaxBackward,
  layerNormBackward,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';

await init();

// ---- errors --------------------------------------------------------------------------------------

describe("backward errors: the forward's, plus gradOutput's; the heap is unchanged after each", () => {
  const q = seededNormal([2, 3, 4], 91);
  const k = seededNormal([2, 5, 4], 92);
  const v = seededNormal([2, 5, 3], 93);
  const g = seededNormal([2, 3, 3], 94);
  const ids = new Tensor(new Int32Array(24), [2, 3, 4]);
  const withNaN = (t) => {
    const data = Float32Array.from(t.data);
    data[data.length - 1] = NaN;
    return new Tensor(data, t.shape);
  };

  function expectError(fn, code, message) {
    scaledDotProductAttentionBackward(q, k, v, g); // warm: anything allocated once is allocated now
    const before = memoryStats().heapUsedBytes;
    assert.throws(fn, (error) => {
      assert.ok(error instanceof AttentionError, String(error));
      assert.equal(error.code, code, error.message);
      assert.match(error.message, message);
      return true;
    });
    assert.equal(memoryStats().heapUsedBytes, before, `heap in use after ${code} ${message}`);
  }

  it('SDPA: gradOutput of the wrong shape → SHAPE_MISMATCH naming gradOutput', () => {
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, seededNormal([2, 3, 4])),
      'SHAPE_MISMATCH',
      /gradOutput.*\(2, 3, 3\).*\(2, 3, 4\)/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, seededNormal([3, 3])),
      'SHAPE_MISMATCH',
      /gradOutput/,
    );
  });

  it("SDPA: the forward's shape, mask and option errors", () => {
    expectError(
      () => scaledDotProductAttentionBackward(q, seededNormal([2, 5, 3]), v, g),
      'SHAPE_MISMATCH',
      /d_k/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { mask: seededNormal([3, 5]) }),
      'INVALID_MASK',
      /mask must be a boolean tensor/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { attn_mask: null }),
      'INVALID_ARGUMENT',
      /unknown scaledDotProductAttentionBackward option 'attn_mask'/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { keyPaddingMask: null }),
      'INVALID_ARGUMENT',
      /keyPaddingMask/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { dropout: { p: 1.5 } }),
      'INVALID_ARGUMENT',
      /dropout/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { dropout: { p: 0.1, seed: -1 } }),
      'INVALID_ARGUMENT',
      /dropout.seed/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, g, { scale: 'big' }),
      'INVALID_ARGUMENT',
      /scale must be a number/,
    );
  });

  it('NaN → NON_FINITE (in gradOutput and in the inputs)', () => {
    expectError(() => scaledDotProductAttentionBackward(q, k, v, withNaN(g)), 'NON_FINITE', /gradOutput/);
    expectError(() => scaledDotProductAttentionBackward(withNaN(q), k, v, g), 'NON_FINITE', /q|query/);
    expectError(() => softmaxBackward(softmax(q), withNaN(q)), 'NON_FINITE', /gradOutput/);
    expectError(() => layerNormBackward(q, withNaN(q)), 'NON_FINITE', /gradOutput/);
    expectError(() => layerNormBackward(withNaN(q), q), 'NON_FINITE', /./);
  });

  it('an int32 tensor where floats are expected → INVALID_ARGUMENT naming the argument', () => {
    expectError(
      () => scaledDotProductAttentionBackward(ids, k, v, g),
      'INVALID_ARGUMENT',
      /q must be a float32 tensor, got an int32 tensor/,
    );
    expectError(
      () => scaledDotProductAttentionBackward(q, k, v, new Tensor(new Int32Array(18), [2, 3, 3])),
      'INVALID_ARGUMENT',
      /gradOutput must be a float32 tensor/,
    );
    expectError(() => softmaxBackward(ids, q), 'INVALID_ARGUMENT', /y must be a float32 tensor/);
    expectError(() => layerNormBackward(q, ids), 'INVALID_ARGUMENT', /gradOutput must be a float32 tensor/);
    expectError(
      () => layerNormBackward(q, q, { weight: new Tensor(new Int32Array(4)) }),
      'INVALID_ARGUMENT',
      /weight must be a float32 tensor/,
    );
  });

  it('softmaxBackward and layerNormBackward: shapes and options', () => {
    expectError(() => softmaxBackward(softmax(q), seededNormal([2, 3, 5])), 'SHAPE_MISMATCH', /gradOutput/);
    expectError(() => layerNormBackward(q, seededNormal([2, 4, 4])), 'SHAPE_MISMATCH', /gradOutput/);
    expectError(() => layerNormBackward(q, q, { weight: [1, 2] }), 'SHAPE_MISMATCH', /weight has 2 values/);
    expectError(() => layerNormBackward(q, q, { eps: 0 }), 'INVALID_ARGUMENT', /eps must be > 0/);
    expectError(
      () => layerNormBackward(q, q, { epsilon: 1e-5 }),
      'INVALID_ARGUMENT',
      /unknown layerNormBackward option 'epsilon'/,
    );
  });
});
