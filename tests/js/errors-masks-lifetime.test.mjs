// Masks, state-dict names, use after dispose and before init: each failure is an AttentionError with a
// stable `.code` and a message naming the problem, and the module keeps working afterwards
// (expect-error.mjs).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  scaledDotProductAttention,
  MultiHeadAttention,
  LearnedPositionalEncoding,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { witness, softmaxOutput, assertStillWorks, expectError, x, bool, filled } from './expect-error.mjs';

await init();

after(() => witness.dispose());

describe('masks', () => {
  it('a float tensor passed as a boolean mask → INVALID_MASK (not a guess)', () => {
    expectError(
      () => scaledDotProductAttention(x, x, x, { mask: filled([3, 3], 1) }),
      'INVALID_MASK',
      /mask must be a boolean tensor/,
    );
    expectError(
      () => witness.forward(x, null, null, { mask: new Tensor([1, 0, 1, 1, 1, 1, 1, 1, 1], [3, 3]) }),
      'INVALID_MASK',
      /mask must be a boolean tensor.*got float32/,
    );
    expectError(
      () => witness.forward(x, null, null, { keyPaddingMask: filled([2, 3], 1) }),
      'INVALID_MASK',
      /keyPaddingMask must be a boolean tensor/,
    );
  });

  it('a mask that does not broadcast → INVALID_MASK naming both shapes', () => {
    expectError(
      () => scaledDotProductAttention(x, x, x, { mask: bool([2, 2]) }),
      'INVALID_MASK',
      /mask of shape \(2, 2\) does not broadcast to the scores \(2, 3, 3\)/,
    );
    expectError(
      () => witness.forward(x, null, null, { mask: bool([2, 3]) }),
      'INVALID_MASK',
      /does not broadcast/,
    );
    expectError(
      () => witness.forward(x, null, null, { keyPaddingMask: bool([3, 2]) }),
      'INVALID_MASK',
      /keyPaddingMask must have shape \(B=2, Tk=3\), got \(3, 2\)/,
    );
  });

  it('a boolean tensor as additiveMask → INVALID_ARGUMENT', () => {
    expectError(
      () => witness.forward(x, null, null, { additiveMask: bool([3, 3]) }),
      'INVALID_ARGUMENT',
      /additiveMask must be a float32 tensor/,
    );
  });
});

describe('state dict, dispose, init', () => {
  it('an unknown state-dict name → UNKNOWN_PARAMETER naming it', () => {
    expectError(
      () => witness.loadStateDict({ 'in_proj.weight': seededNormal([24, 8]) }),
      'UNKNOWN_PARAMETER',
      /no parameter 'in_proj.weight'/,
    );
    // bias_k exists only with addBiasKV: true.
    expectError(
      () => witness.loadStateDict({ bias_k: seededNormal([1, 1, 8]) }),
      'UNKNOWN_PARAMETER',
      /'bias_k'/,
    );
  });

  it('use after dispose → DISPOSED', () => {
    const m = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    m.dispose();
    expectError(() => m.forward(x), 'DISPOSED', /MultiHeadAttention was disposed/);
    expectError(() => m.stateDict(), 'DISPOSED', /disposed/);
    expectError(() => m.loadStateDict({}), 'DISPOSED', /disposed/);
    const pe = new LearnedPositionalEncoding({ maxLength: 4, dModel: 2 });
    pe.dispose();
    expectError(() => pe.encode(2), 'DISPOSED', /LearnedPositionalEncoding was disposed/);
    expectError(() => pe.table, 'DISPOSED', /disposed/);
    expectError(() => pe.setTable(seededNormal([4, 2])), 'DISPOSED', /disposed/);
    assert.equal(memoryStats().liveHandles, 1);
  });

  it('before init → NOT_INITIALIZED (a fresh instance of the wrapper module)', async () => {
    // The query string makes Node load a second, never-initialised copy of index.js.
    const fresh = await import('../../src/js/index.js?fresh');
    assert.notEqual(fresh.softmax, softmax);
    const code = (e) =>
      e instanceof AttentionError && e.code === 'NOT_INITIALIZED' && /await init\(\)/.test(e.message);
    assert.throws(() => fresh.softmax([1, 2]), code);
    assert.throws(() => fresh.scaledDotProductAttention(x, x, x), code);
    assert.throws(() => new fresh.MultiHeadAttention({ embedDim: 8 }), code);
    assert.throws(() => fresh.sinusoidalEncoding(2, 2), code);
    assert.throws(() => fresh.seededNormal([2], 1), code);
    assert.throws(() => fresh.memoryStats(), code);
    assert.throws(() => fresh.scaledDotProductAttentionBackward(x, x, x, x), code);
    assert.throws(() => fresh.softmaxBackward(x, x), code);
    assert.throws(() => fresh.layerNormBackward(x, x), code);
    assertStillWorks('NOT_INITIALIZED');
    await fresh.init();
    assert.deepEqual(Array.from(fresh.softmax([1, 1, 1, 5]).data), softmaxOutput, 'works once initialised');
  });
});
