#!/usr/bin/env node
// The soak: many mixed calls, as a page left open all day makes them — forwards,
// traces, errors, state-dict loads, backward passes, trainer steps, safetensors round trips — with
// the wasm heap's size, malloc's bytes in use, the live JS handles and Embind's value handles
// printed every tenth of the run. After the first tenth (warm-up: buffers reach their sizes) every
// one of them must stay exactly flat; otherwise the exit code is 1.
//
//   npm run soak                         10^5 calls (a few minutes)
//   node scripts/soak.mjs --calls 10000  the version npm test runs
//   --threads N                          init({ threads: N }) (default 2: the threaded build)
import {
  init,
  Tensor,
  AttentionError,
  scaledDotProductAttention,
  scaledDotProductAttentionBackward,
  softmax,
  layerNorm,
  MultiHeadAttention,
  TinyTransformer,
  Trainer,
  createTask,
  seededNormal,
  memoryStats,
  threadCount,
} from '../src/js/index.js';

const args = process.argv.slice(2);
const calls = Number(args[args.indexOf('--calls') + 1] || 100_000);
if (!Number.isInteger(calls) || calls < 120) throw new Error('--calls needs an integer ≥ 120');
// A multiple of the 12 kinds of call, so every checkpoint follows the same kind: what a handle keeps
// between calls (a saved forward, the trainer's buffers) is then the same at each one.
const every = 12 * Math.max(1, Math.floor(calls / 120));

const threads = args.includes('--threads') ? Number(args[args.indexOf('--threads') + 1]) : 2;
const core = await init({ threads });
const x = seededNormal([2, 6, 16], 1);
const kv = seededNormal([2, 7, 16], 2);
const nan = new Tensor(
  Float32Array.from(x.data, (v, i) => (i === 5 ? NaN : v)),
  x.shape,
);
const mha = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 3 });
const mhaState = mha.stateDict();
const model = new TinyTransformer({
  vocabSize: 11,
  maxLength: 12,
  dModel: 16,
  numHeads: 2,
  numLayers: 2,
  seed: 4,
});
const trainer = new Trainer(model, { lr: 1e-3 });
const task = createTask('reverse', { length: 5, numSymbols: 10, seed: 5 });
const modelBytes = model.toSafetensors();

/** One call of kind `i mod 12`; errors are part of the mix (each must be an AttentionError). */
function call(i) {
  const expectError = (fn) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof AttentionError) return;
      throw e;
    }
    throw new Error('an error case did not throw');
  };
  switch (i % 12) {
    case 0:
      return scaledDotProductAttention(x, kv, kv, { causal: i % 24 === 0 });
    case 1:
      return mha.forward(x, null, null, { trace: i % 36 === 1 });
    case 2:
      return mha.forward(x, kv, kv, { needWeights: false });
    case 3:
      return expectError(() => scaledDotProductAttention(x, seededNormal([2, 7, 15], 1), kv));
    case 4:
      return expectError(() => mha.forward(nan));
    case 5:
      return mha.loadStateDict(mhaState);
    case 6:
      return scaledDotProductAttentionBackward(x, kv, kv, x, {});
    case 7: {
      const r = mha.forward(x, null, null, { requiresGrad: true });
      return mha.backward(r.output);
    }
    case 8: {
      const { ids, targets } = task.batch(4);
      return trainer.step(ids, targets);
    }
    case 9: {
      const m = TinyTransformer.fromSafetensors(modelBytes);
      m.forward([[1, 2, 3]]);
      return m.dispose();
    }
    case 10:
      return expectError(() => model.forward([[1, 99]]));
    default:
      return layerNorm(softmax(x));
  }
}

const snapshot = () => {
  const s = memoryStats();
  return {
    heapBytes: s.heapBytes,
    heapUsedBytes: s.heapUsedBytes,
    liveHandles: s.liveHandles,
    emval: core.count_emval_handles(),
  };
};
const t0 = performance.now();
let baseline = null;
let grew = [];
for (let i = 0; i < calls; i++) {
  call(i);
  if ((i + 1) % every !== 0) continue;
  const s = snapshot();
  const line = `${String(i + 1).padStart(7)} calls  heap ${s.heapBytes} B  in use ${s.heapUsedBytes} B  live handles ${s.liveHandles}  emval ${s.emval}  (${((performance.now() - t0) / 1000).toFixed(1)} s)`;
  console.log(line);
  if (!baseline) {
    baseline = s;
    continue;
  } // the first tenth is the warm-up
  for (const key of Object.keys(s))
    if (s[key] !== baseline[key]) grew.push(`${key} ${baseline[key]} → ${s[key]} by call ${i + 1}`);
}
for (const h of [mha, trainer, model]) h.dispose?.();
if (grew.length) {
  console.error(`soak: not flat after the warm-up:\n  ${[...new Set(grew)].join('\n  ')}`);
  process.exit(1);
}
console.log(
  `soak: ${calls} calls on ${threadCount()} thread(s), heap, bytes in use, handles and emval flat after the warm-up`,
);
