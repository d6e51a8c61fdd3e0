// No leak: many calls leave the wasm heap size, the JS handle count, Embind's count of live JS value
// handles (emval) and (when the build reports it) the bytes malloc has in use exactly where they
// were after a warm-up.
import { describe, it } from 'node:test';
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
  TinyTransformer,
  Trainer,
  createTask,
  evaluate,
} from '../../src/js/index.js';

const kForwardCalls = 10_000;
const kHandleCycles = 1_000;
const kWarmupCalls = 200;
const kTrainerSteps = 10_000;

const core = await init(); // the Emscripten module: Embind's emval counter lives on it

/** Everything a leak would move, including `heapUsedBytes` (malloc's bytes in use inside the heap). */
function snapshot() {
  const stats = memoryStats();
  return {
    heapBytes: stats.heapBytes,
    liveHandles: stats.liveHandles,
    emvalHandles: core.count_emval_handles(),
    heapUsedBytes: stats.heapUsedBytes,
  };
}

const x = seededNormal([2, 5, 8], 1);
const kv = seededNormal([2, 6, 8], 2);
const mask = new Tensor(
  Uint8Array.from({ length: 30 }, (_, i) => (i % 4 === 3 ? 0 : 1)),
  [5, 6],
);
const padding = new Tensor(
  Uint8Array.from({ length: 12 }, (_, i) => (i === 5 ? 0 : 1)),
  [2, 6],
);
const pe = seededNormal([5, 8], 3);

/** One forward of a varied kind: i picks the options, so every path runs thousands of times. */
function forwardOnce(mha, i) {
  switch (i % 5) {
    case 0:
      return mha.forward(x, null, null, { trace: true, positional: pe });
    case 1:
      return mha.forward(x, kv, null, { mask, keyPaddingMask: padding, averageWeights: false });
    case 2:
      return mha.forward(x, kv, kv, { needWeights: false });
    case 3:
      return mha.forward(x, null, null, { causal: true, dropout: { p: 0.1, seed: i } });
    default:
      return mha.forward(x);
  }
}

describe('no leak', () => {
  it(`${kForwardCalls} forward calls (trace on some) leave every counter unchanged`, () => {
    const mha = new MultiHeadAttention({
      embedDim: 8,
      numHeads: 2,
      addBiasKV: true,
      residual: true,
      layerNorm: true,
      seed: 4,
    });
    for (let i = 0; i < kWarmupCalls; i++) forwardOnce(mha, i);
    const before = snapshot();
    let checksum = 0;
    for (let i = 0; i < kForwardCalls; i++) checksum += forwardOnce(mha, i).output.data[0];
    assert.ok(Number.isFinite(checksum));
    assert.deepEqual(snapshot(), before);
    mha.dispose();
  });

  it('SDPA, softmax and failing calls leave every counter unchanged', () => {
    const run = (i) => {
      scaledDotProductAttention(x, kv, kv, { mask, trace: i % 3 === 0, needWeights: i % 2 === 0 });
      softmax(x);
      // Errors after the inputs were copied in must free them too.
      try {
        scaledDotProductAttention(x, seededNormal([2, 6, 4], 5), kv);
      } catch (e) {
        assert.ok(e instanceof AttentionError);
      }
      try {
        softmax([1, NaN]);
      } catch (e) {
        assert.ok(e instanceof AttentionError);
      }
    };
    for (let i = 0; i < kWarmupCalls; i++) run(i);
    const before = snapshot();
    for (let i = 0; i < 2_000; i++) run(i);
    assert.deepEqual(snapshot(), before);
  });

  it(`creating and disposing ${kHandleCycles} MultiHeadAttention objects returns liveHandles to its start`, () => {
    const cycle = (i) => {
      const mha = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: i });
      mha.loadStateDict(mha.stateDict());
      mha.forward(seededNormal([1, 3, 16], i));
      mha.dispose();
      const lpe = new LearnedPositionalEncoding({ maxLength: 8, dModel: 4, seed: i });
      lpe.encode(3);
      lpe.dispose();
    };
    for (let i = 0; i < 20; i++) cycle(i);
    const before = snapshot();
    const held = [];
    for (let i = 0; i < kHandleCycles; i++)
      held.push(new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: i }));
    assert.equal(memoryStats().liveHandles, before.liveHandles + kHandleCycles, 'each object counts');
    for (const mha of held) mha.dispose();
    assert.equal(memoryStats().liveHandles, before.liveHandles);
    for (let i = 0; i < kHandleCycles; i++) cycle(i);
    const after = snapshot();
    // heapBytes may have grown while 1000 modules were alive at once; everything else must be back.
    assert.deepEqual({ ...after, heapBytes: before.heapBytes }, before);
  });

  it(`${kTrainerSteps} trainer steps (tiny model, batch 4) leave every counter unchanged`, () => {
    const task = createTask('copy', { length: 2, numSymbols: 3, seed: 1 });
    const model = new TinyTransformer({
      vocabSize: task.vocabSize,
      maxLength: task.sequenceLength,
      dModel: 4,
      numHeads: 1,
      mlpHidden: 4,
      seed: 2,
    });
    const trainer = new Trainer(model, { lr: 1e-3, clipGradNorm: 1 });
    const batches = Array.from({ length: 8 }, () => task.batch(4));
    const step = (i) => trainer.step(batches[i % 8].ids, batches[i % 8].targets).loss;
    for (let i = 0; i < kWarmupCalls; i++) step(i);
    const before = snapshot();
    let sum = 0;
    for (let i = 0; i < kTrainerSteps; i++) sum += step(i);
    assert.ok(Number.isFinite(sum));
    assert.deepEqual(snapshot(), before);
    assert.equal(trainer.steps, kWarmupCalls + kTrainerSteps);
    for (const h of [trainer, model, task]) h.dispose();
  });

  it('model, trainer and task objects, their calls and failures return every counter to its start', () => {
    const cycle = (i) => {
      const task = createTask('reverse', { length: 2, seed: i });
      const model = new TinyTransformer({
        vocabSize: task.vocabSize,
        maxLength: 4,
        dModel: 8,
        numHeads: 2,
        seed: i,
      });
      const trainer = new Trainer(model);
      const { ids, targets } = task.batch(2);
      trainer.step(ids, targets);
      model.forward(ids, { trace: true });
      model.gradients(ids, targets);
      evaluate(model, task, { batches: 1, batchSize: 2 });
      trainer.loadStateDict(trainer.stateDict());
      TinyTransformer.fromSafetensors(model.toSafetensors()).dispose();
      try {
        model.forward([[99]]);
      } catch (e) {
        assert.ok(e instanceof AttentionError);
      }
      try {
        new TinyTransformer({ vocabSize: 4, maxLength: 4, dModel: 6, numHeads: 4 });
      } catch (e) {
        assert.ok(e instanceof AttentionError);
      }
      model.dispose(); // the trainer still holds the C++ model until it is disposed too
      trainer.dispose();
      task.dispose();
    };
    for (let i = 0; i < 20; i++) cycle(i);
    const before = snapshot();
    for (let i = 0; i < 200; i++) cycle(i);
    assert.deepEqual(snapshot(), before);
  });

  it('malloc bytes in use are reported (needed to see leaks inside the heap)', () => {
    const before = memoryStats().heapUsedBytes;
    assert.ok(Number.isInteger(before) && before > 0);
    const mha = new MultiHeadAttention({ embedDim: 64, numHeads: 4 });
    // in_proj_weight alone is 3·64·64 floats: a live module must show up in the count.
    assert.ok(memoryStats().heapUsedBytes - before >= 3 * 64 * 64 * 4);
    mha.dispose();
    assert.equal(memoryStats().heapUsedBytes, before);
  });
});
