// Wrong shapes, configuration errors and option objects: each failure is an AttentionError with a stable
// `.code` and a message naming the problem, and the module keeps working afterwards (expect-error.mjs).

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
} from '../../src/js/index.js';
import { witness, witnessInput, witnessOutput, expectError, x, bool } from './expect-error.mjs';

await init();

after(() => witness.dispose());

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
