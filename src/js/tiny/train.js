// Training: Trainer (AdamW with optional gradient clipping, one wasm call per step), the seeded toy
// tasks (copy, reverse, sort, induction: src/train/tasks.h) and evaluate, over one wrapper's runtime.
import { AttentionError, check } from '../errors.js';
import { checkInt, checkNumber, checkOptions, checkSeed, describe } from '../options.js';
import { byName, idBatch, targetBatch, tensorsByName } from './tiny-transformer.js';
import { Handle } from '../runtime/runtime.js';
import { Tensor } from '../tensor.js';

const TRAINER_OPTIONS = ['lr', 'betas', 'eps', 'weightDecay', 'clipGradNorm'];
const TRAINER_HINTS = {
  weight_decay: 'weightDecay',
  max_norm: 'clipGradNorm',
  clip_grad_norm: 'clipGradNorm',
  beta1: 'betas: [beta1, beta2]',
  beta2: 'betas: [beta1, beta2]',
};

// An AdamW option as the float32 the core uses, checked with the JS name (the core's messages use
// its C++ names); `ok` is the requirement on the float32 value.
function adamOption(value, what, ok, requirement) {
  const v = Math.fround(checkNumber(value, `Trainer option ${what}`));
  if (!ok(v))
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `Trainer option ${what} = ${value} is invalid: it must be ${requirement}`,
    );
  return v;
}

const finiteAtLeastZero = (v) => Number.isFinite(v) && v >= 0;
const unitInterval = (v) => v >= 0 && v < 1;

function trainerOptions(options) {
  const {
    lr = 1e-3,
    betas = [0.9, 0.999],
    eps = 1e-8,
    weightDecay = 0.01,
    clipGradNorm = null,
  } = checkOptions(options, TRAINER_OPTIONS, 'Trainer option', TRAINER_HINTS);
  if (!Array.isArray(betas) || betas.length !== 2) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `Trainer option betas must be [beta1, beta2], got ${describe(betas)}`,
    );
  }
  return {
    lr: adamOption(lr, 'lr', finiteAtLeastZero, 'finite and >= 0'),
    beta1: adamOption(betas[0], 'betas[0]', unitInterval, 'in [0, 1)'),
    beta2: adamOption(betas[1], 'betas[1]', unitInterval, 'in [0, 1)'),
    eps: adamOption(eps, 'eps', (v) => Number.isFinite(v) && v > 0, 'finite and > 0'),
    weightDecay: adamOption(weightDecay, 'weightDecay', finiteAtLeastZero, 'finite and >= 0'),
    clipGradNorm:
      clipGradNorm == null
        ? 0
        : adamOption(
            clipGradNorm,
            'clipGradNorm',
            (v) => Number.isFinite(v) && v > 0,
            'finite and > 0 (null turns clipping off)',
          ),
  };
}

// The classes and functions below take the wrapper copy `rt` (runtime.js); trainApi(rt) binds them.
function liveModel(rt, model, what) {
  if (!(model instanceof rt.TinyTransformer)) {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be a TinyTransformer, got ${describe(model)}`);
  }
  return model._live();
}

class TrainerBase extends Handle {
  /** @param {TinyTransformer} model @param {object} [options] see index.d.ts (TrainerOptions) */
  constructor(rt, model, options = {}) {
    const modelHandle = liveModel(rt, model, 'Trainer model');
    const o = trainerOptions(options);
    // The C++ trainer shares the model's C++ object (a shared_ptr in the binding).
    super(
      rt,
      rt.newHandle('TrainerHandle', (h) => h.init(modelHandle, o)),
    );
    this.model = model;
  }

  // This trainer's handle, after checking that its model was not disposed.
  _liveWithModel() {
    const handle = this._live();
    if (!this.model._handle)
      throw new AttentionError('DISPOSED', 'the TinyTransformer of this Trainer was disposed');
    return handle;
  }

  /** One step (forward, backward, clipping, AdamW update) in one wasm call: { loss, gradNorm }. */
  step(ids, targets) {
    const handle = this._liveWithModel();
    const i = idBatch(ids, 'ids');
    const t = targetBatch(i, targets);
    this._rt.checkInputBytes('Trainer step', [i.tensor, t.tensor]);
    const r = check(handle.step(i.data, t.data, i.b, i.t));
    return { loss: r.loss, gradNorm: r.gradNorm };
  }

  /** Steps taken (failed steps do not count). */
  get steps() {
    return this._live().steps();
  }

  setLearningRate(lr) {
    const handle = this._live();
    check(handle.setLearningRate(adamOption(lr, 'lr', finiteAtLeastZero, 'finite and >= 0')));
  }

  /** { step, exp_avg, exp_avg_sq } with the moments by parameter name (PyTorch's names), copies. */
  stateDict() {
    const handle = this._liveWithModel();
    const names = this.model._names;
    return {
      step: handle.steps(),
      exp_avg: byName(names, handle.expAvg()),
      exp_avg_sq: byName(names, handle.expAvgSq()),
    };
  }

  /** Restores stateDict()'s output (strict: every parameter's moments); nothing changes on an error. */
  loadStateDict(state) {
    const handle = this._liveWithModel();
    const {
      step,
      exp_avg: avg,
      exp_avg_sq: avgSq,
    } = checkOptions(state, ['step', 'exp_avg', 'exp_avg_sq'], 'trainer state key');
    for (const [key, value] of [
      ['step', step],
      ['exp_avg', avg],
      ['exp_avg_sq', avgSq],
    ]) {
      if (value === undefined) throw new AttentionError('INVALID_ARGUMENT', `trainer state needs ${key}`);
    }
    checkSeed(step, 'trainer state step');
    const names = this.model._names;
    const m = tensorsByName(avg, names, 'exp_avg');
    const v = tensorsByName(avgSq, names, 'exp_avg_sq');
    this._rt.checkInputBytes('Trainer loadStateDict', [...m, ...v]);
    check(handle.setState(step, m, v));
    return this;
  }
}

class TaskBase extends Handle {
  constructor(rt, name, options) {
    if (typeof name !== 'string')
      throw new AttentionError('INVALID_ARGUMENT', `task name must be a string, got ${describe(name)}`);
    const {
      length,
      numSymbols = 10,
      seed = 0,
    } = checkOptions(options, ['length', 'numSymbols', 'seed'], 'createTask option');
    if (length === undefined) throw new AttentionError('INVALID_ARGUMENT', 'createTask needs a length');
    const args = [checkInt(length, 'length'), checkInt(numSymbols, 'numSymbols'), checkSeed(seed, 'seed')];
    super(
      rt,
      rt.newHandle('TaskHandle', (h) => h.init(name, ...args)),
    );
    this.name = name;
    this.vocabSize = this._handle.vocabSize();
    this.sequenceLength = this._handle.sequenceLength();
    this.tokenNames = Object.freeze(this._handle.tokenNames());
  }

  /** The next n sequences of the task's seeded stream: { ids, targets }, (n, T) int32 Tensors. */
  batch(n) {
    const handle = this._live();
    const r = check(handle.batch(checkInt(n, 'n')));
    const shape = [n, this.sequenceLength];
    return { ids: new Tensor(r.ids, shape), targets: new Tensor(r.targets, shape) };
  }
}

/** A seeded toy task: 'copy', 'reverse', 'sort' or 'induction' (src/train/tasks.h has the formats). */
function createTask(rt, name, options = {}) {
  rt.requireCore();
  return new rt.Task(name, options);
}

/** Teacher-forced loss and greedy accuracy on batches 0 … batches−1 of the task's evaluation stream `seed`. */
function evaluate(rt, model, task, options = {}) {
  const modelHandle = liveModel(rt, model, 'evaluate model');
  if (!(task instanceof rt.Task))
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `evaluate task must come from createTask, got ${describe(task)}`,
    );
  const {
    batches = 8,
    seed = 0,
    batchSize = 32,
  } = checkOptions(options, ['batches', 'seed', 'batchSize'], 'evaluate option');
  const r = check(
    rt
      .requireCore()
      ._evaluate(
        modelHandle,
        task._live(),
        checkInt(batches, 'batches'),
        checkInt(batchSize, 'batchSize'),
        checkSeed(seed, 'seed'),
      ),
  );
  return { loss: r.loss, tokenAccuracy: r.tokenAccuracy, sequenceAccuracy: r.sequenceAccuracy };
}

/** Trainer, createTask and evaluate of one wrapper copy, for its TinyTransformer class. */
export function trainApi(rt, TinyTransformer) {
  rt.TinyTransformer = TinyTransformer; // what liveModel accepts
  class Trainer extends TrainerBase {
    constructor(model, options = {}) {
      super(rt, model, options);
    }
  }
  class Task extends TaskBase {
    constructor(name, options) {
      super(rt, name, options);
    }
  }
  rt.Task = Task; // what createTask makes and evaluate accepts
  return {
    Trainer,
    createTask: (...args) => createTask(rt, ...args),
    evaluate: (...args) => evaluate(rt, ...args),
  };
}
