// Trainer, tasks and evaluate from JS: a non-finite step changes nothing, the same seed gives the
// same loss curve bit for bit, the optimiser state round-trips, the trainer outlives its model's
// JS object safely, the toy tasks have their documented format, and reverse is learned.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  AttentionError,
  TinyTransformer,
  Trainer,
  createTask,
  evaluate,
  memoryStats,
} from '../../src/js/index.js';
import { isClose } from './close.js';

// Reverse, length 8 (T = 16), dModel 32, 4 heads, 2 layers, lr 1e-2, clip 1, no weight decay,
// batch 32: ~100 steps natively (tests/cpp/test_trainer.cpp); the budget here is 400.
const kReverseSteps = 400;
const kReverseTarget = 0.99;
const kEvalEvery = 50;
const kIgnore = -100;

await init();

function expectError(fn, code, message) {
  const before = memoryStats();
  assert.throws(
    fn,
    (e) => e instanceof AttentionError && e.code === code && message.test(e.message),
    `${code} ${message}`,
  );
  assert.equal(memoryStats().heapUsedBytes, before.heapUsedBytes, `heap after ${message}`);
  assert.equal(memoryStats().liveHandles, before.liveHandles, `handles after ${message}`);
}

const tinyConfig = (task, seed = 1) => ({
  vocabSize: task.vocabSize,
  maxLength: task.sequenceLength,
  dModel: 16,
  numHeads: 2,
  numLayers: 1,
  seed,
});

describe('tasks', () => {
  it('reverse: (n, T) int32 batches, -100 outside the answers, the answer is the input reversed', () => {
    const task = createTask('reverse', { length: 4, numSymbols: 6, seed: 3 });
    assert.equal(task.name, 'reverse');
    assert.equal(task.vocabSize, 7);
    assert.equal(task.sequenceLength, 8);
    assert.deepEqual(task.tokenNames, ['0', '1', '2', '3', '4', '5', '|']);
    const { ids, targets } = task.batch(5);
    assert.deepEqual(ids.shape, [5, 8]);
    assert.equal(ids.dtype, 'int32');
    assert.equal(targets.dtype, 'int32');
    for (let b = 0; b < 5; b++) {
      const x = Array.from(ids.data.subarray(8 * b, 8 * b + 4));
      const y = Array.from(targets.data.subarray(8 * b, 8 * b + 8));
      assert.ok(x.every((s) => s >= 0 && s < 6));
      assert.equal(ids.data[8 * b + 4], 6, 'the separator follows the input');
      assert.deepEqual(y.slice(0, 4), [kIgnore, kIgnore, kIgnore, kIgnore]);
      assert.deepEqual(y.slice(4), x.slice().reverse());
      // teacher forcing: ids = sequence[:-1], targets = sequence[1:]
      assert.deepEqual(Array.from(ids.data.subarray(8 * b + 5, 8 * b + 8)), y.slice(4, 7));
    }
    task.dispose();
  });

  it('copy, sort and induction: shapes and scored positions', () => {
    const copy = createTask('copy', { length: 3, seed: 1 });
    const c = copy.batch(2);
    assert.deepEqual(Array.from(c.targets.data.subarray(3, 6)), Array.from(c.ids.data.subarray(0, 3)));
    const sort = createTask('sort', { length: 5, seed: 1 });
    const s = sort.batch(3);
    for (let b = 0; b < 3; b++) {
      const x = Array.from(s.ids.data.subarray(10 * b, 10 * b + 5)).sort((p, q) => p - q);
      assert.deepEqual(Array.from(s.targets.data.subarray(10 * b + 5, 10 * b + 10)), x);
    }
    const induction = createTask('induction', { length: 3, numSymbols: 8, seed: 1 });
    assert.equal(induction.sequenceLength, 13);
    const ind = induction.batch(4);
    for (let b = 0; b < 4; b++) {
      assert.equal(
        ind.targets.data.subarray(13 * b, 13 * b + 13).filter((y) => y !== kIgnore).length,
        3,
        'the repeat is scored',
      );
    }
    for (const t of [copy, sort, induction]) t.dispose();
  });

  it('is deterministic for a seed; batch(3) then batch(5) equals batch(8)', () => {
    const a = createTask('sort', { length: 4, seed: 7 });
    const b = createTask('sort', { length: 4, seed: 7 });
    const c = createTask('sort', { length: 4, seed: 8 });
    const first = a.batch(3);
    const second = a.batch(5);
    const whole = b.batch(8);
    assert.deepEqual([...first.ids.data, ...second.ids.data], Array.from(whole.ids.data));
    assert.deepEqual([...first.targets.data, ...second.targets.data], Array.from(whole.targets.data));
    assert.notDeepEqual(c.batch(8).ids.data, whole.ids.data);
    for (const t of [a, b, c]) t.dispose();
  });

  it('errors', () => {
    expectError(
      () => createTask('palindrome', { length: 3 }),
      'INVALID_ARGUMENT',
      /unknown task name 'palindrome'; known tasks: .*reverse/,
    );
    expectError(() => createTask('copy', {}), 'INVALID_ARGUMENT', /createTask needs a length/);
    expectError(
      () => createTask('copy', { length: 3, symbols: 4 }),
      'INVALID_ARGUMENT',
      /unknown createTask option 'symbols'/,
    );
    expectError(
      () => createTask('induction', { length: 10, numSymbols: 10 }),
      'INVALID_ARGUMENT',
      /needs num_symbols > length/,
    );
    expectError(() => createTask('copy', { length: 300 }), 'INVALID_ARGUMENT', /over the maximum of 512/);
    expectError(() => createTask(3, { length: 3 }), 'INVALID_ARGUMENT', /task name must be a string/);
    const task = createTask('copy', { length: 3 });
    expectError(() => task.batch(0), 'INVALID_ARGUMENT', /task batch size n = 0 must be >= 1/);
    expectError(() => task.batch(1e7), 'TOO_LARGE', /over the maximum/);
    task.dispose();
    expectError(() => task.batch(1), 'DISPOSED', /Task was disposed/);
  });
});

describe('Trainer', () => {
  const task = createTask('reverse', { length: 3, seed: 2 });
  after(() => task.dispose());
  const batches = Array.from({ length: 6 }, () => task.batch(4));

  function curve(seed, steps) {
    const model = new TinyTransformer(tinyConfig(task, seed));
    const trainer = new Trainer(model, { lr: 3e-3, clipGradNorm: 1 });
    const losses = batches.slice(0, steps).map(({ ids, targets }) => trainer.step(ids, targets).loss);
    const weights = model.stateDict();
    trainer.dispose();
    model.dispose();
    return { losses, weights };
  }

  it('the same seed gives the same loss curve and weights bit for bit; another seed does not', () => {
    const a = curve(4, 6);
    const b = curve(4, 6);
    assert.deepEqual(a.losses, b.losses);
    assert.deepEqual(a.weights, b.weights);
    assert.ok(a.losses[5] < a.losses[0], 'the loss goes down');
    assert.notDeepEqual(curve(5, 6).losses, a.losses);
  });

  it('step: loss at the weights before the update, gradNorm the unclipped norm', () => {
    const model = new TinyTransformer(tinyConfig(task));
    const { ids, targets } = batches[0];
    const { loss, grads } = model.gradients(ids, targets);
    let sq = 0;
    for (const g of Object.values(grads)) for (const v of g.data) sq += v * v;
    const trainer = new Trainer(model, { clipGradNorm: 1e-3 });
    const r = trainer.step(ids, targets);
    assert.equal(r.loss, loss);
    assert.ok(isClose(r.gradNorm, Math.sqrt(sq), { rel: 1e-5 }), `${r.gradNorm} vs ${Math.sqrt(sq)}`);
    assert.notEqual(model.loss(ids, targets), loss, 'the weights moved');
    trainer.dispose();
    model.dispose();
  });

  it('a non-finite step (lr 1e9) is NON_FINITE naming the step; weights, moments and steps unchanged', () => {
    const model = new TinyTransformer(tinyConfig(task));
    const trainer = new Trainer(model, { lr: 1e9 });
    // Weights of ~1e9 overflow the logits within a few steps (tests/cpp/test_trainer.cpp).
    let error = null;
    let weights;
    let state;
    for (let s = 0; s < 6 && !error; s++) {
      weights = model.stateDict();
      state = trainer.stateDict();
      try {
        trainer.step(batches[s].ids, batches[s].targets);
      } catch (e) {
        error = e;
      }
    }
    assert.ok(
      error instanceof AttentionError && error.code === 'NON_FINITE',
      `no NON_FINITE within 6 steps: ${error}`,
    );
    const failed = state.step + 1;
    assert.match(
      error.message,
      new RegExp(`^training step ${failed}: .*(NaN|Inf|not finite|non-finite|overflowed float32)`),
    );
    assert.ok(failed > 1, 'the first step is finite');
    assert.deepEqual(model.stateDict(), weights);
    assert.deepEqual(trainer.stateDict(), state);
    assert.equal(trainer.steps, failed - 1);
    // The model keeps its pass buffers between steps, and a step that fails at another point may
    // leave them sized differently; once the same failing step has run, repeating it must not grow
    // the heap by a byte.
    const fail = () =>
      assert.throws(
        () => trainer.step(batches[0].ids, batches[0].targets),
        (e) => e.code === 'NON_FINITE',
      );
    fail();
    const heap = memoryStats().heapUsedBytes;
    for (let i = 0; i < 20; i++) fail();
    assert.equal(memoryStats().heapUsedBytes, heap, 'a failed step leaks nothing');
    trainer.dispose();
    model.dispose();
  });

  it('stateDict / loadStateDict: a restored trainer continues exactly as the original', () => {
    const model = new TinyTransformer(tinyConfig(task));
    const trainer = new Trainer(model, { lr: 1e-2 });
    for (const { ids, targets } of batches.slice(0, 3)) trainer.step(ids, targets);
    const state = trainer.stateDict();
    assert.equal(state.step, 3);
    assert.deepEqual(Object.keys(state.exp_avg), Object.keys(model.stateDict()));
    assert.ok(state.exp_avg_sq['head.weight'].data.some((v) => v > 0));
    const copy = new TinyTransformer(tinyConfig(task));
    copy.loadStateDict(model.stateDict());
    const resumed = new Trainer(copy, { lr: 1e-2 }).loadStateDict(state);
    assert.equal(resumed.steps, 3);
    const { ids, targets } = batches[3];
    assert.deepEqual(resumed.step(ids, targets), trainer.step(ids, targets));
    assert.deepEqual(copy.stateDict(), model.stateDict());
    expectError(
      () =>
        resumed.loadStateDict({ ...state, exp_avg: { ...state.exp_avg, extra: state.exp_avg['head.bias'] } }),
      'UNKNOWN_PARAMETER',
      /exp_avg: TinyTransformer has no parameter "extra"/,
    );
    const { 'head.bias': _, ...missing } = state.exp_avg_sq;
    expectError(
      () => resumed.loadStateDict({ ...state, exp_avg_sq: missing }),
      'INVALID_ARGUMENT',
      /exp_avg_sq is missing "head.bias"/,
    );
    expectError(
      () => resumed.loadStateDict({ exp_avg: state.exp_avg, exp_avg_sq: state.exp_avg_sq }),
      'INVALID_ARGUMENT',
      /needs step/,
    );
    expectError(() => resumed.loadStateDict({ ...state, step: -1 }), 'INVALID_ARGUMENT', /step/);
    const negative = new Tensor(new Float32Array(state.exp_avg_sq['head.bias'].size).fill(-1));
    expectError(
      () => resumed.loadStateDict({ ...state, exp_avg_sq: { ...state.exp_avg_sq, 'head.bias': negative } }),
      'INVALID_ARGUMENT',
      /negative/,
    );
    assert.equal(resumed.steps, 4, 'failed loads changed nothing');
    for (const h of [trainer, resumed, model, copy]) h.dispose();
  });

  it('options are checked with their JS names', () => {
    const model = new TinyTransformer(tinyConfig(task));
    expectError(
      () => new Trainer(model, { weight_decay: 0 }),
      'INVALID_ARGUMENT',
      /unknown Trainer option 'weight_decay': use weightDecay/,
    );
    expectError(
      () => new Trainer(model, { lr: -1 }),
      'INVALID_ARGUMENT',
      /Trainer option lr = -1 is invalid: it must be finite and >= 0/,
    );
    expectError(
      () => new Trainer(model, { betas: [0.9, 1] }),
      'INVALID_ARGUMENT',
      /betas\[1\] = 1 is invalid/,
    );
    expectError(
      () => new Trainer(model, { betas: 0.9 }),
      'INVALID_ARGUMENT',
      /betas must be \[beta1, beta2\]/,
    );
    expectError(() => new Trainer(model, { eps: 0 }), 'INVALID_ARGUMENT', /eps = 0 is invalid/);
    expectError(
      () => new Trainer(model, { clipGradNorm: 0 }),
      'INVALID_ARGUMENT',
      /clipGradNorm = 0 is invalid/,
    );
    expectError(() => new Trainer(model, { lr: 1e39 }), 'INVALID_ARGUMENT', /lr = 1e\+39 is invalid/);
    expectError(() => new Trainer({}, {}), 'INVALID_ARGUMENT', /Trainer model must be a TinyTransformer/);
    const trainer = new Trainer(model);
    expectError(() => trainer.setLearningRate(NaN), 'INVALID_ARGUMENT', /lr must be a number/);
    expectError(
      () => trainer.step([1, 2], [1, 2, 3]),
      'SHAPE_MISMATCH',
      /targets must have the shape of ids/,
    );
    expectError(() => trainer.step([1, 2], [-100, -100]), 'INVALID_ARGUMENT', /every target is -100/);
    assert.equal(trainer.steps, 0);
    trainer.dispose();
    model.dispose();
  });

  it("keeps the model's C++ object alive; after model.dispose() step throws DISPOSED", () => {
    const before = memoryStats();
    const model = new TinyTransformer(tinyConfig(task));
    const trainer = new Trainer(model);
    assert.equal(memoryStats().liveHandles, before.liveHandles + 2);
    model.dispose();
    expectError(
      () => trainer.step(batches[0].ids, batches[0].targets),
      'DISPOSED',
      /TinyTransformer of this Trainer was disposed/,
    );
    expectError(() => new Trainer(model), 'DISPOSED', /TinyTransformer was disposed/);
    trainer.dispose();
    assert.equal(memoryStats().heapUsedBytes, before.heapUsedBytes, 'both freed once both are disposed');
    assert.equal(memoryStats().liveHandles, before.liveHandles);
  });
});

describe('evaluate', () => {
  it('an untrained model: loss ≈ ln V, accuracies in [0, 1], deterministic; options checked', () => {
    const task = createTask('copy', { length: 4, seed: 1 });
    const model = new TinyTransformer(tinyConfig(task));
    const r = evaluate(model, task);
    // GPT-2 initialisation (std 0.02) gives near-uniform logits.
    assert.ok(Math.abs(r.loss - Math.log(task.vocabSize)) < 0.05, `loss ${r.loss}`);
    assert.ok(r.sequenceAccuracy <= r.tokenAccuracy && r.tokenAccuracy <= 1 && r.sequenceAccuracy >= 0);
    assert.deepEqual(evaluate(model, task), r);
    assert.notDeepEqual(evaluate(model, task, { seed: 1, batches: 2, batchSize: 8 }), r);
    expectError(
      () => evaluate(model, task, { batchsize: 8 }),
      'INVALID_ARGUMENT',
      /did you mean 'batchSize'/,
    );
    expectError(
      () => evaluate(model, task, { batches: 0 }),
      'INVALID_ARGUMENT',
      /batches and batch size must be >= 1/,
    );
    expectError(() => evaluate(model, {}), 'INVALID_ARGUMENT', /must come from createTask/);
    const long = createTask('copy', { length: 5 });
    expectError(() => evaluate(model, long), 'INVALID_ARGUMENT', /T = 10 exceeds maxLength 8/);
    for (const h of [long, model, task]) h.dispose();
  });

  it(`reverse (length 8) reaches ${kReverseTarget * 100}% sequence accuracy within ${kReverseSteps} steps`, () => {
    const task = createTask('reverse', { length: 8, seed: 5 });
    const model = new TinyTransformer({
      vocabSize: task.vocabSize,
      maxLength: task.sequenceLength,
      dModel: 32,
      numHeads: 4,
      numLayers: 2,
      seed: 1,
    });
    const trainer = new Trainer(model, { lr: 1e-2, clipGradNorm: 1, weightDecay: 0 });
    let result = null;
    let steps = 0;
    while (steps < kReverseSteps) {
      const { ids, targets } = task.batch(32);
      trainer.step(ids, targets);
      steps++;
      if (steps % kEvalEvery !== 0) continue;
      result = evaluate(model, task, { batches: 8, batchSize: 32, seed: 1 });
      if (result.sequenceAccuracy >= kReverseTarget) break;
    }
    assert.ok(result.sequenceAccuracy >= kReverseTarget, `after ${steps} steps: ${JSON.stringify(result)}`);
    assert.ok(result.tokenAccuracy >= result.sequenceAccuracy);
    for (const h of [trainer, model, task]) h.dispose();
  });
});
