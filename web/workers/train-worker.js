// The training worker of <attention-trainer>: its own wasm instance (so the page never waits on a
// training step), a TinyTransformer, its AdamW Trainer and a toy task. The page calls jobs (the
// protocol of web/workers/rpc.js); the worker sends snapshots as events of its own — step, loss,
// accuracy, steps/s and the attention of every layer and head on a fixed probe sequence — about every
// 100 ms while training, and after every job.
//
// Jobs: init { config } | train | pause | step { n } | reset | ablate { heads: [[layer, head], …] } |
//   export → { bytes (transferred), step } | logits { ids } → { data, shape } (the element's logits(ids)).
// Events: { type: 'snapshot', … } | { type: 'error', code, message } (a training step failed while training).
// A job that fails rejects its call with its error (an AttentionError keeps its code) and stops training.
import { init, createTask, evaluate, threadCount, TinyTransformer, Trainer } from '../../src/js/index.js';
import { emit, serve, transfer } from './rpc.js';

const CHUNK_MS = 60; // train this long between looks at the message queue
const SNAPSHOT_MS = 100; // at most this often while training
const EVAL = { batches: 4, batchSize: 32, seed: 7 };

let config = null;
let task = null,
  probeTask = null,
  model = null,
  trainer = null;
let step = 0,
  running = false,
  ablated = [];
let lastSnapshot = 0,
  rate = { steps: 0, since: 0, perSecond: 0 };
const history = []; // [{ step, loss, tokenAccuracy, sequenceAccuracy }]
let probe = null; // { ids: number[], tokens: string[] }

function dispose() {
  for (const h of [trainer, model, task, probeTask]) h?.dispose();
  trainer = model = task = probeTask = null;
}

function build() {
  dispose();
  const c = config;
  task = createTask(c.task, { length: c.length, numSymbols: c.numSymbols, seed: c.seed });
  model = new TinyTransformer({
    vocabSize: task.vocabSize,
    maxLength: task.sequenceLength,
    dModel: c.dModel,
    numHeads: c.heads,
    numLayers: c.layers,
    mlp: c.mlp,
    positional: c.positional,
    seed: c.seed,
  });
  trainer = new Trainer(model, { lr: c.lr, clipGradNorm: 1, weightDecay: 0 });
  probeTask = createTask(c.task, { length: c.length, numSymbols: c.numSymbols, seed: 4242 });
  const ids = Array.from(probeTask.batch(1).ids.data);
  probe = { ids, tokens: ids.map((id) => task.tokenNames[id]) };
  step = 0;
  ablated = [];
  history.length = 0;
  rate = { steps: 0, since: performance.now(), perSecond: 0 };
}

// Loss and accuracies of the model, or of a copy with the ablated heads' outputs zeroed.
function measure() {
  const r = evaluate(model, task, EVAL);
  let ablation = null;
  if (ablated.length) {
    const copy = model.ablateHeads(ablated);
    try {
      ablation = { heads: ablated, ...evaluate(copy, task, EVAL) };
    } finally {
      copy.dispose();
    }
  }
  return { r, ablation };
}

function snapshot(extra = {}) {
  const { r, ablation } = measure();
  history.push({ step, loss: r.loss, tokenAccuracy: r.tokenAccuracy, sequenceAccuracy: r.sequenceAccuracy });
  const { attention } = model.forward([probe.ids], { attention: true });
  const layers = attention.map((w) => w.data); // each (1, H, T, T)
  emit(
    {
      type: 'snapshot',
      step,
      running,
      loss: r.loss,
      tokenAccuracy: r.tokenAccuracy,
      sequenceAccuracy: r.sequenceAccuracy,
      stepsPerSecond: rate.perSecond,
      threads: threadCount(),
      ablation,
      history: history.slice(),
      probe: { tokens: probe.tokens, T: probe.ids.length },
      heads: config.heads,
      attention: layers,
      ...extra,
    },
    layers.map((l) => l.buffer),
  );
  lastSnapshot = performance.now();
}

function trainSteps(n) {
  for (let i = 0; i < n; i++) {
    const { ids, targets } = task.batch(config.batch);
    trainer.step(ids, targets);
    step++;
  }
}

// One chunk of training (about CHUNK_MS of steps), then a snapshot when one is due.
function chunk() {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < CHUNK_MS) {
    trainSteps(1);
    n++;
  }
  rate.steps += n;
  const now = performance.now();
  if (now - rate.since >= 500) {
    rate.perSecond = (rate.steps * 1000) / (now - rate.since);
    rate = { ...rate, steps: 0, since: now };
  }
  if (now - lastSnapshot >= SNAPSHOT_MS) snapshot();
}

// A chunk, then back to the event loop (so pause/step/ablate are seen promptly). A failing step
// stops training and is sent as an error event (no call is waiting for the loop).
function loop() {
  if (!running) return;
  try {
    chunk();
  } catch (error) {
    running = false;
    emit({ type: 'error', code: error.code ?? 'ERROR', message: error.message });
    return;
  }
  setTimeout(loop, 0);
}

const handlers = {
  init(msg) {
    config = msg.config;
    build();
    snapshot();
  },
  train() {
    if (!running) {
      running = true;
      rate = { steps: 0, since: performance.now(), perSecond: rate.perSecond };
      loop();
    }
  },
  pause() {
    running = false;
    snapshot();
  },
  step(msg) {
    running = false;
    trainSteps(msg.n ?? 1);
    snapshot();
  },
  reset() {
    running = false;
    build();
    snapshot();
  },
  ablate(msg) {
    ablated = msg.heads;
    snapshot();
  },
  export() {
    const bytes = model.toSafetensors();
    return transfer({ bytes, step }, [bytes.buffer]);
  },
  logits(msg) {
    // the element's logits(ids): this model's logits on `ids`, as it is now
    const { logits } = model.forward(msg.ids, { attention: false });
    return { type: 'logits', data: logits.data, shape: logits.shape };
  },
};

/** Every job stops training when it fails (its call rejects with the error). */
const guarded = Object.fromEntries(
  Object.entries(handlers).map(([type, handler]) => [
    type,
    (args) => {
      try {
        return handler(args);
      } catch (error) {
        running = false;
        throw error;
      }
    },
  ]),
);

serve(guarded, { ready: init() });
