// Empty input, NaN and Infinity, sizes over the memory limit: each failure is an AttentionError with a
// stable `.code` and a message naming the problem, and the module keeps working afterwards
// (expect-error.mjs).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  MultiHeadAttention,
  sinusoidalEncoding,
  LearnedPositionalEncoding,
  seededNormal,
  memoryStats,
  memoryLimit,
  setMemoryLimit,
} from '../../src/js/index.js';
import { kDefaultLimit, witness, assertStillWorks, expectError, x, filled } from './expect-error.mjs';

await init();

after(() => witness.dispose());

describe('empty input → EMPTY_INPUT', () => {
  it('softmax, SDPA, MHA, positional encodings with a zero-length axis', () => {
    expectError(() => softmax(new Tensor([], [0])), 'EMPTY_INPUT', /softmax input is empty/);
    expectError(() => softmax(new Tensor([], [3, 0])), 'EMPTY_INPUT', /empty/);
    expectError(() => scaledDotProductAttention(seededNormal([2, 0, 8]), x, x), 'EMPTY_INPUT', /empty/);
    expectError(
      () => scaledDotProductAttention(x, seededNormal([2, 0, 8]), seededNormal([2, 0, 8])),
      'EMPTY_INPUT',
      /empty/,
    );
    expectError(
      () => witness.forward(seededNormal([2, 0, 8])),
      'EMPTY_INPUT',
      /query is empty: shape \(2, 0, 8\)/,
    );
    expectError(() => sinusoidalEncoding(0, 4), 'EMPTY_INPUT', /length > 0/);
    expectError(
      () => new LearnedPositionalEncoding({ maxLength: 0, dModel: 4 }),
      'EMPTY_INPUT',
      /length > 0/,
    );
  });
});

describe('NaN and Infinity → NON_FINITE', () => {
  it('in softmax, SDPA and MHA inputs, in weights, in additive masks (-Infinity there is allowed)', () => {
    expectError(() => softmax([1, NaN]), 'NON_FINITE', /NaN at flat index 1/);
    expectError(() => softmax([1, Infinity]), 'NON_FINITE', /\+Inf at flat index 1/);
    expectError(() => layerNorm([[0, NaN]]), 'NON_FINITE', /NaN/);
    expectError(() => scaledDotProductAttention(filled([2, 3, 8], NaN), x, x), 'NON_FINITE', /NaN/);
    expectError(() => scaledDotProductAttention(x, x, filled([2, 3, 8], -Infinity)), 'NON_FINITE', /Inf/);
    expectError(
      () => witness.forward(filled([2, 3, 8], Infinity)),
      'NON_FINITE',
      /query contains Inf at flat index 0/,
    );
    expectError(() => witness.forward(x, filled([2, 3, 8], NaN)), 'NON_FINITE', /key/);
    expectError(
      () => witness.forward(x, null, null, { additiveMask: filled([3, 3], NaN) }),
      'NON_FINITE',
      /additiveMask contains NaN/,
    );
    expectError(
      () => witness.forward(x, null, null, { additiveMask: filled([3, 3], Infinity) }),
      'NON_FINITE',
      /additiveMask/,
    );
    const sd = witness.stateDict();
    expectError(
      () => witness.loadStateDict({ 'out_proj.bias': filled([8], NaN) }),
      'NON_FINITE',
      /out_proj.bias contains NaN/,
    );
    assert.deepEqual(
      Array.from(witness.stateDict()['out_proj.bias'].data),
      Array.from(sd['out_proj.bias'].data),
      'rejected parameter not stored',
    );
    // -Infinity is how an additive mask says "never": not an error.
    const minusInf = filled([3, 3], -Infinity);
    const r = witness.forward(x, null, null, { additiveMask: minusInf });
    assert.ok(r.output.data.every(Number.isFinite));
  });
});

describe('huge sizes → TOO_LARGE (a clear error, not an abort)', () => {
  it('forward whose (T, T) weights exceed the default 1 GiB limit', () => {
    assert.equal(memoryLimit(), kDefaultLimit);
    const heapBefore = memoryStats().heapBytes;
    const T = 20000; // (1, 20000, 20000) float weights alone are 1.6 GB
    const big = new MultiHeadAttention({ embedDim: 4, numHeads: 1 });
    try {
      expectError(
        () => big.forward(seededNormal([1, T, 4])),
        'TOO_LARGE',
        /multi-head attention would need [\d.]+ MiB, over the memory limit of 1024 MiB/,
      );
      expectError(
        () =>
          scaledDotProductAttention(
            seededNormal([1, T, 4]),
            seededNormal([1, T, 4]),
            seededNormal([1, T, 4]),
          ),
        'TOO_LARGE',
        /over the memory limit/,
      );
    } finally {
      big.dispose();
    }
    assert.equal(memoryStats().heapBytes, heapBefore, 'nothing was allocated for the refused call');
  });

  it('tables bigger than the limit', () => {
    expectError(() => sinusoidalEncoding(1e6, 1e4), 'TOO_LARGE', /sinusoidal encoding would need [\d.]+ MiB/);
    expectError(
      () => new LearnedPositionalEncoding({ maxLength: 1e6, dModel: 1e4 }),
      'TOO_LARGE',
      /learned positional encoding/,
    );
    assert.equal(memoryStats().liveHandles, 1);
  });

  it('a lowered limit applies to every call, and restoring it restores service', () => {
    setMemoryLimit(64 * 1024);
    try {
      let thrown;
      try {
        softmax(seededNormal([200, 200]));
      } catch (e) {
        thrown = e;
      } // 160 KB of input
      assert.ok(thrown instanceof AttentionError && thrown.code === 'TOO_LARGE', String(thrown));
    } finally {
      setMemoryLimit(kDefaultLimit);
    }
    assertStillWorks('a lowered limit');
  });

  it('inputs bigger than the limit are refused before they are copied in (the heap does not grow)', () => {
    const heapBefore = memoryStats().heapBytes;
    const n = 300e6; // 1.2 GB of float32 input against the 1 GiB limit
    const huge = new Tensor(new Float32Array(n), [n]);
    expectError(
      () => softmax(huge),
      'TOO_LARGE',
      /softmax inputs would need 1144.41 MiB, over the memory limit of 1024 MiB/,
    );
    expectError(() => layerNorm(huge), 'TOO_LARGE', /layerNorm inputs/);
    const rows = new Tensor(huge.data, [1, n / 8, 8]);
    expectError(() => witness.forward(rows), 'TOO_LARGE', /multi-head attention inputs would need/);
    expectError(
      () => witness.forward(rows, null, null, { causal: true, trace: true }),
      'TOO_LARGE',
      /multi-head attention inputs/,
    );
    expectError(
      () => scaledDotProductAttention(rows, x, x),
      'TOO_LARGE',
      /scaled dot-product attention inputs/,
    );
    expectError(
      () => witness.loadStateDict({ 'out_proj.bias': huge }),
      'TOO_LARGE',
      /parameter 'out_proj.bias' inputs/,
    );
    expectError(() => seededNormal([50000, 60000]), 'TOO_LARGE', /seededNormal would need 11444.09 MiB/);
    assert.equal(memoryStats().heapBytes, heapBefore, 'no refused input reached the wasm heap');
  });

  it("a raised limit does not lift the 2 GiB bound on one call's inputs", () => {
    const n = 600e6; // 2.4 GB
    const huge = new Tensor(new Float32Array(n), [n]);
    setMemoryLimit(2 ** 33);
    let thrown;
    try {
      softmax(huge);
    } catch (e) {
      thrown = e;
    } finally {
      setMemoryLimit(kDefaultLimit);
    }
    assert.ok(thrown instanceof AttentionError, String(thrown));
    assert.equal(thrown.code, 'TOO_LARGE');
    assert.match(
      thrown.message,
      /softmax inputs would need 2288.82 MiB, over the 2048 MiB one call's inputs may take/,
    );
    assertStillWorks('an input over 2 GiB');
  });

  it('setMemoryLimit takes a whole number of bytes ≥ 1 (not 0, -5, 1.5, Infinity or 1e20)', () => {
    for (const bad of [0, -5, 1.5, Infinity, NaN, 1e20, '1024', null]) {
      expectError(
        () => setMemoryLimit(bad),
        'INVALID_ARGUMENT',
        /bytes must be a whole number of bytes in \[1, 2\^53\)/,
      );
    }
  });

  it('MultiHeadAttention parameters bigger than the limit', () => {
    // 1024² parameters (16 MiB) under a 1 MiB limit: checked before anything is allocated.
    setMemoryLimit(2 ** 20);
    let thrown;
    let created;
    try {
      created = new MultiHeadAttention({ embedDim: 1024, numHeads: 8 });
    } catch (e) {
      thrown = e;
    } finally {
      setMemoryLimit(kDefaultLimit);
      created?.dispose();
    }
    assert.ok(
      thrown instanceof AttentionError,
      `expected TOO_LARGE, got ${thrown === undefined ? 'no error' : String(thrown)}`,
    );
    assert.equal(thrown.code, 'TOO_LARGE');
  });
});
