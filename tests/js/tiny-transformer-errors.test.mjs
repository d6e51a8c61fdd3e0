// TinyTransformer's errors: every bad config, ids, targets, forward option and state dict is an
// AttentionError naming the problem, with the heap and the handle count unchanged afterwards.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  TinyTransformer,
  seededNormal,
  memoryStats,
} from '../../src/js/index.js';
import { small } from './tiny-transformer-setup.mjs';

await init();

describe('errors: AttentionError naming the problem, heap and handles unchanged', () => {
  const model = new TinyTransformer(small);
  after(() => model.dispose());
  const reference = model.forward([1, 2, 3]).logits.data;

  function expectError(fn, code, message) {
    const before = memoryStats();
    assert.throws(
      fn,
      (e) => e instanceof AttentionError && e.code === code && message.test(e.message),
      `${code} ${message}`,
    );
    const afterStats = memoryStats();
    assert.equal(afterStats.heapUsedBytes, before.heapUsedBytes, `heap after ${message}`);
    assert.equal(afterStats.liveHandles, before.liveHandles, `handles after ${message}`);
    assert.deepEqual(model.forward([1, 2, 3]).logits.data, reference, 'the model still works');
  }

  it('config: unknown keys, wrong types and values', () => {
    expectError(
      () => new TinyTransformer({ ...small, n_head: 2 }),
      'INVALID_ARGUMENT',
      /unknown TinyTransformer config key 'n_head': use numHeads/,
    );
    expectError(
      () => new TinyTransformer({ ...small, vocab_size: 2 }),
      'INVALID_ARGUMENT',
      /'vocab_size': did you mean 'vocabSize'/,
    );
    expectError(
      () => new TinyTransformer({ ...small, positional: 'rotary' }),
      'INVALID_ARGUMENT',
      /positional must be one of 'none', 'learned', 'sinusoidal', 'rope', 'alibi'; got "rotary"/,
    );
    expectError(
      () => new TinyTransformer({ ...small, norm: 'rms' }),
      'INVALID_ARGUMENT',
      /norm must be one of/,
    );
    expectError(
      () => new TinyTransformer({ ...small, mlp: 1 }),
      'INVALID_ARGUMENT',
      /mlp must be true or false/,
    );
    expectError(
      () => new TinyTransformer({ ...small, dModel: 8.5 }),
      'INVALID_ARGUMENT',
      /dModel must be an integer/,
    );
    expectError(
      () => new TinyTransformer({ maxLength: 4, dModel: 8, numHeads: 2 }),
      'INVALID_ARGUMENT',
      /needs vocabSize/,
    );
    expectError(
      () => new TinyTransformer({ ...small, numHeads: 3 }),
      'HEADS_DO_NOT_DIVIDE',
      /numHeads 3 does not divide dModel 8/,
    );
    expectError(
      () => new TinyTransformer({ ...small, vocabSize: 1 }),
      'INVALID_ARGUMENT',
      /vocabSize must be an integer in \[2, 65536\], got 1/,
    );
    expectError(() => new TinyTransformer({ ...small, seed: -1 }), 'INVALID_ARGUMENT', /seed/);
    expectError(() => new TinyTransformer(), 'INVALID_ARGUMENT', /needs a config/);
  });

  it('ids: float tensors, out of range, too long, wrong rank, empty', () => {
    expectError(
      () => model.forward(new Tensor([1, 2, 3])),
      'INVALID_ARGUMENT',
      /ids must be an int32 tensor/,
    );
    expectError(
      () => model.forward({ data: new Float32Array([1, 2]), shape: [2] }),
      'INVALID_ARGUMENT',
      /ids must be an int32 tensor/,
    );
    expectError(() => model.forward([1, 2.5]), 'INVALID_ARGUMENT', /must be an integer/);
    expectError(
      () => model.forward([[1, 11]]),
      'INVALID_ARGUMENT',
      /ids\[0\]\[1\] = 11 is outside \[0, vocabSize = 11\)/,
    );
    expectError(() => model.forward([-1]), 'INVALID_ARGUMENT', /ids\[0\]\[0\] = -1 is outside/);
    expectError(
      () => model.forward([1, 2, 3, 4, 5, 6, 7]),
      'INVALID_ARGUMENT',
      /sequence length T = 7 exceeds maxLength 6/,
    );
    expectError(
      () => model.forward([[[1]]]),
      'SHAPE_MISMATCH',
      /ids must have shape \(B, T\) or \(T\), got \(1, 1, 1\)/,
    );
    expectError(() => model.forward({ data: new Int32Array(0), shape: [0, 3] }), 'EMPTY_INPUT', /non-empty/);
    expectError(() => model.forward([]), 'EMPTY_INPUT', /non-empty/);
  });

  it('targets: another shape, out of range, all -100', () => {
    expectError(
      () => model.loss([[1, 2]], [[1, 2, 3]]),
      'SHAPE_MISMATCH',
      /targets must have the shape of ids \(1, 2\), got \(1, 3\)/,
    );
    expectError(
      () => model.loss([1, 2], [[1, 2]]),
      'SHAPE_MISMATCH',
      /targets must have the shape of ids \(2\), got \(1, 2\)/,
    );
    expectError(
      () => model.gradients([1, 2], [1, 11]),
      'INVALID_ARGUMENT',
      /targets\[0\]\[1\] = 11 is outside .* not -100/,
    );
    expectError(() => model.gradients([1, 2], [-100, -100]), 'INVALID_ARGUMENT', /every target is -100/);
    expectError(
      () => model.loss([1, 2], new Tensor([1, 2])),
      'INVALID_ARGUMENT',
      /targets must be an int32 tensor/,
    );
  });

  it('forward options', () => {
    expectError(
      () => model.forward([1], { attention: [3] }),
      'INVALID_ARGUMENT',
      /attention: layer 3 is not in \[0, numLayers = 3\)/,
    );
    expectError(
      () => model.forward([1], { attention: 'all' }),
      'INVALID_ARGUMENT',
      /attention must be true, false or an array/,
    );
    expectError(
      () => model.forward([1], { trace: { layers: [-1] } }),
      'INVALID_ARGUMENT',
      /trace.layers: layer -1/,
    );
    expectError(
      () => model.forward([1], { trace: { layer: [0] } }),
      'INVALID_ARGUMENT',
      /unknown trace option 'layer'/,
    );
    expectError(
      () => model.forward([1], { trace: [0] }),
      'INVALID_ARGUMENT',
      /trace must be true, false or \{ layers/,
    );
    expectError(
      () => model.forward([1], { needWeights: false }),
      'INVALID_ARGUMENT',
      /unknown forward option 'needWeights'/,
    );
    expectError(
      () =>
        model.forward([1, 2], {
          mask: [
            [1.5, 1],
            [1, 1],
          ],
        }),
      'INVALID_MASK',
      /mask must be a boolean tensor/,
    );
    expectError(
      () =>
        model.forward([1, 2], {
          mask: [
            [true, true, true],
            [true, true, true],
          ],
        }),
      'INVALID_MASK',
      /does not broadcast/,
    );
  });

  it('loadStateDict is strict and all or nothing', () => {
    const sd = model.stateDict();
    const changed = { ...sd, 'head.bias': new Tensor(new Float32Array(11).fill(5)) };
    expectError(
      () => model.loadStateDict({ ...changed, 'head.weights': sd['head.weight'] }),
      'UNKNOWN_PARAMETER',
      /no parameter "head.weights"/,
    );
    const { 'ln_f.bias': _, ...missing } = changed;
    expectError(() => model.loadStateDict(missing), 'INVALID_ARGUMENT', /stateDict is missing "ln_f.bias"/);
    expectError(
      () => model.loadStateDict({ ...changed, 'blocks.2.mlp.fc1.bias': new Float32Array(3) }),
      'INVALID_ARGUMENT',
      /must be a Tensor/,
    );
    expectError(
      () => model.loadStateDict({ ...changed, 'blocks.2.mlp.fc1.bias': seededNormal([31]) }),
      'SHAPE_MISMATCH',
      /parameter "blocks.2.mlp.fc1.bias" must have shape \(32,\), got \(31,\)/,
    );
    const nan = new Float32Array(64);
    nan[5] = NaN;
    expectError(
      () => model.loadStateDict({ ...changed, 'pos_emb.weight': new Tensor(nan.subarray(0, 48), [6, 8]) }),
      'NON_FINITE',
      /pos_emb.weight/,
    );
    expectError(() => model.loadStateDict([sd]), 'INVALID_ARGUMENT', /stateDict must be an object/);
    assert.deepEqual(model.stateDict()['head.bias'].data, sd['head.bias'].data, 'nothing was written');
  });

  it('a disposed model throws DISPOSED; dispose twice is harmless', () => {
    const m = new TinyTransformer(small);
    const handles = memoryStats().liveHandles;
    m.dispose();
    m.dispose();
    assert.equal(memoryStats().liveHandles, handles - 1);
    for (const call of [
      () => m.forward([1]),
      () => m.stateDict(),
      () => m.loss([1], [1]),
      () => m.toSafetensors(),
    ]) {
      assert.throws(call, (e) => e.code === 'DISPOSED' && /TinyTransformer was disposed/.test(e.message));
    }
  });
});
