// Every failure is an AttentionError with a stable `.code` and a message naming the problem, and
// the module keeps working afterwards (checked after every single error).
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

const kDefaultLimit = 2 ** 30; // 1 GiB, the documented default of setMemoryLimit

/** AttentionErrorCode in index.d.ts: every thrown code must be one of these. */
const DOCUMENTED_CODES = [
  'INVALID_ARGUMENT',
  'SHAPE_MISMATCH',
  'HEADS_DO_NOT_DIVIDE',
  'EMPTY_INPUT',
  'NON_FINITE',
  'TOO_LARGE',
  'INVALID_MASK',
  'UNKNOWN_PARAMETER',
  'NOT_INITIALIZED',
  'DISPOSED',
];

await init();

// A module that lives through every error; its output before and after each error must agree.
const witness = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
const witnessInput = seededNormal([2, 3, 8], 2);
const witnessOutput = Array.from(witness.forward(witnessInput).output.data);
const softmaxOutput = Array.from(softmax([1, 1, 1, 5]).data);

after(() => witness.dispose());

function assertStillWorks(context) {
  assert.deepEqual(Array.from(softmax([1, 1, 1, 5]).data), softmaxOutput, `softmax after ${context}`);
  assert.deepEqual(
    Array.from(witness.forward(witnessInput).output.data),
    witnessOutput,
    `forward after ${context}`,
  );
  assert.equal(memoryLimit(), kDefaultLimit, `memory limit after ${context}`);
}

/** Asserts fn throws AttentionError(code) whose message matches `message`, then that all still works. */
function expectError(fn, code, message) {
  let thrown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  assert.ok(thrown !== undefined, `expected ${code}, nothing was thrown`);
  assert.ok(
    thrown instanceof AttentionError,
    `expected an AttentionError, got ${typeof thrown}: ${String(thrown)}`,
  );
  assert.ok(thrown instanceof Error);
  assert.equal(thrown.name, 'AttentionError');
  assert.equal(thrown.code, code, `code (message: ${thrown.message})`);
  assert.ok(DOCUMENTED_CODES.includes(thrown.code));
  assert.match(thrown.message, message);
  assertStillWorks(`${code} ${message}`);
}

const x = seededNormal([2, 3, 8], 3);
const bool = (shape) => new Tensor(new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(1), shape);
const filled = (shape, value) =>
  new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(value), shape);

describe('wrong shapes → SHAPE_MISMATCH', () => {
  it('SDPA with disagreeing d_k, T_k or rank', () => {
    expectError(
      () => scaledDotProductAttention(x, seededNormal([2, 3, 5]), x),
      'SHAPE_MISMATCH',
      /d_k 5.*d_k 8|d_k/,
    );
    expectError(() => scaledDotProductAttention(x, x, seededNormal([2, 4, 8])), 'SHAPE_MISMATCH', /T_k|keys/);
    expectError(() => scaledDotProductAttention([1, 2], [1, 2], [1, 2]), 'SHAPE_MISMATCH', /rank/);
  });

  it('MHA forward with the wrong width, rank, batch or key/value lengths', () => {
    expectError(
      () => witness.forward(seededNormal([2, 3, 7])),
      'SHAPE_MISMATCH',
      /query must have shape .*8.*got \(2, 3, 7\)/,
    );
    expectError(() => witness.forward(seededNormal([8])), 'SHAPE_MISMATCH', /query/);
    expectError(() => witness.forward(x, seededNormal([3, 4, 8])), 'SHAPE_MISMATCH', /key must have shape/);
    expectError(
      () => witness.forward(x, seededNormal([2, 4, 8]), seededNormal([2, 5, 8])),
      'SHAPE_MISMATCH',
      /key has 4 positions but value has 5/,
    );
    expectError(
      () => witness.forward(x, null, null, { positional: seededNormal([2, 8]) }),
      'SHAPE_MISMATCH',
      /positional/,
    );
  });

  it('a state-dict tensor of the wrong shape, a Tensor whose data and shape disagree', () => {
    expectError(
      () => witness.loadStateDict({ in_proj_weight: seededNormal([8, 8]) }),
      'SHAPE_MISMATCH',
      /in_proj_weight must have shape \(24, 8\), got \(8, 8\)/,
    );
    expectError(() => new Tensor([1, 2, 3], [2, 2]), 'SHAPE_MISMATCH', /3 values but shape \[2,2\] needs 4/);
    expectError(() => layerNorm(x, { weight: [1, 2] }), 'SHAPE_MISMATCH', /weight has 2 values/);
  });
});

describe('configuration errors', () => {
  it('numHeads that does not divide embedDim → HEADS_DO_NOT_DIVIDE', () => {
    expectError(
      () => new MultiHeadAttention({ embedDim: 64, numHeads: 3 }),
      'HEADS_DO_NOT_DIVIDE',
      /numHeads 3 does not divide embedDim 64/,
    );
    assert.equal(memoryStats().liveHandles, 1, 'the failed constructor freed its handle');
  });

  it('non-integer, missing, zero or negative sizes and options → INVALID_ARGUMENT', () => {
    expectError(
      () => new MultiHeadAttention({ embedDim: 8.5 }),
      'INVALID_ARGUMENT',
      /embedDim must be an integer, got 8.5/,
    );
    expectError(() => new MultiHeadAttention({}), 'INVALID_ARGUMENT', /embedDim/);
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, numHeads: 0 }),
      'INVALID_ARGUMENT',
      /numHeads must be > 0/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, layerNorm: { eps: -1 } }),
      'INVALID_ARGUMENT',
      /eps/,
    );
    expectError(
      () => witness.forward(x, null, null, { dropout: { p: 1 } }),
      'INVALID_ARGUMENT',
      /dropout p must be in \[0, 1\)/,
    );
    expectError(() => witness.forward(x, null, null, { scale: NaN }), 'INVALID_ARGUMENT', /scale/);
    expectError(
      () => scaledDotProductAttention(x, x, x, { scale: Infinity }),
      'INVALID_ARGUMENT',
      /scale must be a finite number/,
    );
    expectError(() => sinusoidalEncoding(4, 4, { base: 1 }), 'INVALID_ARGUMENT', /base/);
    expectError(() => layerNorm(x, { eps: 0 }), 'INVALID_ARGUMENT', /eps must be > 0/);
    expectError(() => softmax(5), 'INVALID_ARGUMENT', /x must be a Tensor/);
    assert.equal(memoryStats().liveHandles, 1);
  });
});

describe('option objects are checked, not skimmed → INVALID_ARGUMENT naming the key', () => {
  // An ignored key silently changes the result (an ignored mask is an unmasked attention), so the
  // PyTorch spellings users bring along are errors that say what the option is called here.
  const allFalse = new Tensor(new Uint8Array(9), [3, 3]);
  it('PyTorch names in forward and SDPA options, with the name to use instead', () => {
    expectError(
      () => witness.forward(x, null, null, { attn_mask: allFalse }),
      'INVALID_ARGUMENT',
      /unknown forward option 'attn_mask': use mask \(boolean, true = may attend: the opposite/,
    );
    expectError(
      () => witness.forward(x, null, null, { key_padding_mask: bool([2, 3]) }),
      'INVALID_ARGUMENT',
      /'key_padding_mask': use keyPaddingMask \(true = real token/,
    );
    expectError(
      () => witness.forward(x, null, null, { need_weights: false }),
      'INVALID_ARGUMENT',
      /'need_weights': use needWeights/,
    );
    expectError(
      () => witness.forward(x, null, null, { average_attn_weights: false }),
      'INVALID_ARGUMENT',
      /use averageWeights/,
    );
    expectError(
      () => scaledDotProductAttention(x, x, x, { is_causal: true }),
      'INVALID_ARGUMENT',
      /unknown scaledDotProductAttention option 'is_causal': use causal/,
    );
    expectError(
      () => scaledDotProductAttention(x, x, x, { dropout_p: 0.1 }),
      'INVALID_ARGUMENT',
      /use dropout: \{ p, seed \}/,
    );
    expectError(
      () => scaledDotProductAttention(x, x, x, { keyPaddingMask: bool([2, 3]) }),
      'INVALID_ARGUMENT',
      /unknown scaledDotProductAttention option 'keyPaddingMask'; the known ones are mask, additiveMask, causal/,
    );
  });

  it('typos get a suggestion; a non-object is refused; null and undefined mean no options', () => {
    expectError(
      () => witness.forward(x, null, null, { Causal: true }),
      'INVALID_ARGUMENT',
      /'Causal': did you mean 'causal'\?/,
    );
    expectError(
      () => witness.forward(x, null, null, { need_Weights: true }),
      'INVALID_ARGUMENT',
      /did you mean 'needWeights'/,
    );
    expectError(
      () => witness.forward(x, null, null, 'causal'),
      'INVALID_ARGUMENT',
      /forward options must be an object, got "causal"/,
    );
    expectError(
      () => witness.forward(x, null, null, [true]),
      'INVALID_ARGUMENT',
      /must be an object, got an array of 1/,
    );
    expectError(
      () => witness.forward(x, null, null, { dropout: { p: 0.1, sed: 3 } }),
      'INVALID_ARGUMENT',
      /unknown dropout option 'sed'/,
    );
    for (const none of [null, undefined]) {
      assert.deepEqual(
        Array.from(witness.forward(witnessInput, null, null, none).output.data),
        witnessOutput,
      );
    }
  });

  it('constructor and function options: MultiHeadAttention, layerNorm, sinusoidalEncoding, LearnedPositionalEncoding, init', async () => {
    expectError(
      () => new MultiHeadAttention({ embed_dim: 8, num_heads: 2 }),
      'INVALID_ARGUMENT',
      /unknown MultiHeadAttention config key 'embed_dim': use embedDim/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, numHeads: 2, dropout: 0.1 }),
      'INVALID_ARGUMENT',
      /'dropout': use forward\(query, key, value, \{ dropout: \{ p, seed \} \}\)/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, numHeads: 2, batch_first: true }),
      'INVALID_ARGUMENT',
      /always batch first/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, addBiasKv: true }),
      'INVALID_ARGUMENT',
      /did you mean 'addBiasKV'/,
    );
    expectError(
      () => new MultiHeadAttention({ embedDim: 8, layerNorm: { epsilon: 1e-6 } }),
      'INVALID_ARGUMENT',
      /unknown layerNorm config key 'epsilon'/,
    );
    expectError(
      () => layerNorm(x, { epsilon: 1e-6 }),
      'INVALID_ARGUMENT',
      /unknown layerNorm option 'epsilon'; the known ones are eps, weight, bias/,
    );
    expectError(
      () => sinusoidalEncoding(4, 4, { theta: 500 }),
      'INVALID_ARGUMENT',
      /unknown sinusoidalEncoding option 'theta'/,
    );
    expectError(
      () => new LearnedPositionalEncoding({ maxLen: 4, dModel: 4 }),
      'INVALID_ARGUMENT',
      /unknown LearnedPositionalEncoding option 'maxLen'/,
    );
    await assert.rejects(
      init({ varient: 'simd128' }),
      (e) => e instanceof AttentionError && /unknown init option 'varient'/.test(e.message),
    );
    assert.equal(memoryStats().liveHandles, 1, 'no handle left behind by a refused constructor');
  });

  it('a state dict that is not an object of tensors; a query of rank 4', () => {
    expectError(
      () => witness.loadStateDict([1, 2]),
      'INVALID_ARGUMENT',
      /stateDict must be an object of tensors, got an array of 2/,
    );
    expectError(
      () => witness.loadStateDict(null),
      'INVALID_ARGUMENT',
      /stateDict must be an object of tensors, got null/,
    );
    expectError(
      () => witness.forward(seededNormal([1, 2, 3, 8])),
      'SHAPE_MISMATCH',
      /query must have shape \(B, T, 8\) or \(T, 8\), got \(1, 2, 3, 8\)/,
    );
  });

  it('sizes that are not integers (2.5, "8", 2^31) are refused instead of truncated', () => {
    expectError(
      () => new MultiHeadAttention({ embedDim: '8' }),
      'INVALID_ARGUMENT',
      /embedDim must be an integer, got "8"/,
    );
    expectError(() => sinusoidalEncoding(2.5, 4), 'INVALID_ARGUMENT', /length must be an integer, got 2.5/);
    expectError(() => sinusoidalEncoding(4, 2 ** 31), 'INVALID_ARGUMENT', /dModel must be an integer/);
    expectError(
      () => new LearnedPositionalEncoding({ maxLength: 4, dModel: '4' }),
      'INVALID_ARGUMENT',
      /dModel must be an integer, got "4"/,
    );
    const pe = new LearnedPositionalEncoding({ maxLength: 4, dModel: 4 });
    try {
      expectError(() => pe.encode(1.5), 'INVALID_ARGUMENT', /length must be an integer, got 1.5/);
    } finally {
      pe.dispose();
    }
  });
});

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
