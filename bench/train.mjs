// Training-step section of the benchmark (run by bench/run.mjs): one step of TinyTransformer
// (forward, backward, clip_grad_norm_, AdamW) on the reverse task, batch 32, T = 16, 4 heads,
// 2 pre-LN layers with an MLP of 4·d, learned positions, at d = 64 and 128, one thread, fp32:
//   ours (relaxed-SIMD and SIMD128 builds through src/js/index.js: TinyTransformer + Trainer),
//   tfjs-backend-wasm (train_tfjs.mjs), PyTorch CPU (train_torch.py, a child process),
// all from the same initial weights (train_setup.mjs) on the same batches, so their first two
// losses and gradient norms must agree; plus this machine's f32x4 FMA peak (fma_peak.mjs) and the
// seconds ours needs to train the reverse task to 99% sequence accuracy. See bench/README.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { measure, formatMs } from './harness.mjs';
import { measurePeak } from './fma_peak.mjs';
import { loadWrapper } from './ours.mjs';
import { tfjsContender } from './peers.mjs';
import { registerTfjsGradients } from './tfjs_gradients.mjs';
import { createTfjsTrainer } from './train_tfjs.mjs';
import { trainReport } from './train_report.mjs';
import {
  OPTIMIZER,
  initialWeights,
  kBatch,
  kSeqLen,
  makeBatches,
  modelConfig,
  parameterCount,
  stepFlops,
  writeTorchInput,
} from './train_setup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const kPython = '/usr/bin/python3'; // Debian's python3-torch is only importable by the system Python

// Step 1 and 2 from the same weights and batches: float32 orderings differ between the libraries,
// so the first loss and norm agree to ~1e-7 relative, the second loss (after one AdamW step that
// moves every weight by ~lr) to ~1e-6; a wrong op, bias, mask or update is ≳ 1e-3.
export const kAgreeRel = 1e-4;

export const SIZES = [64, 128];

// The reverse-to-99% run (the issue's convergence target).
const REVERSE = {
  dModel: 32,
  numHeads: 4,
  numLayers: 2,
  batch: 32,
  evalEvery: 25,
  target: 0.99,
  optimizer: { lr: 1e-2, clipGradNorm: 1, weightDecay: 0 },
  evaluate: { batches: 8, seed: 4242 },
  seeds: [1, 2, 3],
  maxSteps: 3000,
  maxMs: 30_000,
};

const BUILDS = [
  {
    group: 'ours-relaxed',
    name: 'ours: wasm relaxed SIMD (FMA)',
    instance: 'relaxed',
    variant: 'relaxed-simd',
  },
  { group: 'ours', name: 'ours: wasm SIMD128', instance: 'simd', variant: 'simd128' },
];

// ---- ours -----------------------------------------------------------------------------------------

// The wrapper instance of a build, or { missing } when the training API is not in it yet.
async function oursApi(build) {
  const api = await loadWrapper(build.instance, { variant: build.variant, threads: 1 }); // one thread (threads: bench/threads.mjs)
  if (api.kernelVariant() !== build.variant)
    throw new Error(`${build.name}: the module runs '${api.kernelVariant()}' kernels`);
  const absent = ['TinyTransformer', 'Trainer', 'createTask', 'evaluate'].filter(
    (n) => typeof api[n] !== 'function',
  );
  return absent.length
    ? { missing: `src/js/index.js exports no ${absent.join(', ')} yet (the JS training API)` }
    : { api };
}

function oursTrainer(api, config, weights) {
  const { vocabSize, maxLength, dModel, numHeads, numLayers } = config;
  const model = new api.TinyTransformer({
    vocabSize,
    maxLength,
    dModel,
    numHeads,
    numLayers,
    mlp: true,
    positional: 'learned',
    norm: 'pre',
    seed: 1,
  });
  let trainer = null;
  try {
    model.loadStateDict(weights);
    trainer = new api.Trainer(model, OPTIMIZER);
  } catch (error) {
    model.dispose();
    throw error;
  }
  return {
    step(batch) {
      return trainer.step(
        new api.Tensor(batch.ids, [kBatch, kSeqLen]),
        new api.Tensor(batch.targets, [kBatch, kSeqLen]),
      );
    },
    dispose() {
      trainer.dispose();
      model.dispose();
    },
  };
}

// ---- the contenders, one size ---------------------------------------------------------------------

// Times trainer.step over the batches in turn; records every step's loss and norm.
async function timeSteps(trainer, batches, { smoke, budgetMs }) {
  const losses = [];
  const norms = [];
  const run = async () => {
    const r = trainer.step(batches[losses.length % batches.length]);
    losses.push(r.loss);
    norms.push(r.gradNorm);
  };
  try {
    const m = await measure(run, smoke ? { budgetMs, fixedRuns: 2 } : { budgetMs });
    return { status: 'ok', medianMs: m.medianMs, runs: m.runs, losses, norms };
  } finally {
    trainer.dispose();
  }
}

let torchChecked = null;
function torchAvailable() {
  torchChecked ??= spawnSync(kPython, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
  return torchChecked;
}

function runTorch(config, weights, batches, budgetMs) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attn-train-bench-'));
  try {
    const input = path.join(dir, 'input.bin');
    writeTorchInput(input, { config, weights, batches, budgetMs, fixedRuns: 0 });
    const out = execFileSync(kPython, [path.join(here, 'train_torch.py'), input], {
      encoding: 'utf8',
      timeout: 20 * budgetMs + 120_000,
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    const r = JSON.parse(out.trim().split('\n').pop());
    return {
      status: 'ok',
      medianMs: r.median_ms,
      runs: r.runs,
      losses: r.losses,
      norms: r.grad_norms,
      note: `torch ${r.torch}, ${r.threads} thread, BLAS ${r.blas}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runContender(key, ctx) {
  const { config, weights, batches, smoke, budgetMs } = ctx;
  if (key === 'tfjs') {
    await tfjsContender.load();
    await registerTfjsGradients();
    const tf = await import('@tensorflow/tfjs-core');
    return timeSteps(createTfjsTrainer(tf, config, weights, OPTIMIZER), batches, { smoke, budgetMs });
  }
  if (key === 'torch') {
    if (smoke) return { status: 'skipped', note: 'skipped in --smoke mode' };
    if (!torchAvailable())
      return {
        status: 'skipped',
        missing: true,
        note: `${kPython} cannot import torch (apt-get install python3-torch)`,
      };
    return runTorch(config, weights, batches, budgetMs);
  }
  const build = BUILDS.find((b) => b.group === key);
  const { api, missing } = await oursApi(build);
  if (missing) return { status: 'skipped', missing: true, note: missing };
  return timeSteps(oursTrainer(api, config, weights), batches, { smoke, budgetMs });
}

const CONTENDERS = [
  ...BUILDS.map((b) => ({ key: b.group, name: b.name })),
  { key: 'tfjs', name: 'tfjs-backend-wasm (tfjs ops, tf.variableGrads)' },
  { key: 'torch', name: 'PyTorch CPU (1 thread)' },
];

// Steps 1 and 2 of every contender against the reference (PyTorch when it ran, else tfjs).
function agreement(results) {
  const ref =
    results.find((r) => r.key === 'torch' && r.status === 'ok') ??
    results.find((r) => r.key === 'tfjs' && r.status === 'ok');
  const notes = [];
  if (!ref) return { notes: ['no reference ran: losses not compared'], problems: [] };
  const problems = [];
  const rel = (a, b) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-30);
  for (const r of results) {
    if (r.status !== 'ok' || r === ref) continue;
    const pairs = [
      ['loss 1', r.losses[0], ref.losses[0]],
      ['norm 1', r.norms[0], ref.norms[0]],
      ['loss 2', r.losses[1], ref.losses[1]],
    ];
    const worst = Math.max(...pairs.map(([, a, b]) => rel(a, b)));
    r.agree = { worst, ok: worst <= kAgreeRel, ref: ref.name };
    if (!(worst <= kAgreeRel)) {
      problems.push(
        `${r.name}: steps 1–2 differ from ${ref.name} by ${worst.toExponential(1)} relative (> ${kAgreeRel}): ` +
          pairs.map(([n, a, b]) => `${n} ${a} vs ${b}`).join(', '),
      );
    }
  }
  notes.push(`steps 1–2 (loss, gradient norm) compared with ${ref.name}; tolerance ${kAgreeRel} relative`);
  return { notes, problems };
}

async function benchSize(dModel, { smoke, budgetMs, log, contenders }) {
  const config = modelConfig(dModel);
  const weights = initialWeights(config, 1000 + dModel);
  const batches = makeBatches(7);
  log(
    `\ntraining step, d = ${dModel}: ${parameterCount(config)} parameters, ${(stepFlops(config) / 1e9).toFixed(3)} GFLOP per step (6·P·B·T)`,
  );
  const results = [];
  for (const c of CONTENDERS.filter((x) => !contenders || contenders.includes(x.key))) {
    let r;
    try {
      r = await runContender(c.key, { config, weights, batches, smoke, budgetMs });
    } catch (error) {
      r = { status: 'error', note: `ERROR: ${error?.message ?? error}` };
    }
    Object.assign(r, { key: c.key, name: c.name });
    if (r.status === 'ok') {
      r.gflops = stepFlops(config) / r.medianMs / 1e6;
      if (![...r.losses, ...r.norms].every(Number.isFinite))
        Object.assign(r, { status: 'error', note: 'ERROR: a non-finite loss or norm' });
    }
    results.push(r);
    log(
      `  ${c.name.padEnd(48)} ${r.status === 'ok' ? `${formatMs(r.medianMs).padStart(9)}  N=${String(r.runs).padEnd(4)} loss ${r.losses[0].toFixed(5)} → ${r.losses[1].toFixed(5)}` : r.note}`,
    );
  }
  const { notes, problems } = agreement(results);
  for (const r of results) if (r.status === 'error') problems.push(`${r.name}: ${r.note}`);
  return {
    dModel,
    config,
    params: parameterCount(config),
    flops: stepFlops(config),
    results,
    notes,
    problems,
  };
}

// ---- reverse to 99% -------------------------------------------------------------------------------

// Wall time from the first step to the evaluation that first shows ≥ 99% sequence accuracy
// (steps, batch generation and the evaluations every 25 steps all count), and the steps' own time.
function reverseRun(api, seed) {
  const R = REVERSE;
  const task = api.createTask('reverse', { length: 8, seed });
  const model = new api.TinyTransformer({
    vocabSize: task.vocabSize,
    maxLength: task.sequenceLength,
    dModel: R.dModel,
    numHeads: R.numHeads,
    numLayers: R.numLayers,
    mlp: true,
    positional: 'learned',
    norm: 'pre',
    seed,
  });
  const trainer = new api.Trainer(model, R.optimizer);
  try {
    let steps = 0;
    let stepMs = 0;
    let accuracy = 0;
    const t0 = performance.now();
    while (steps < R.maxSteps && performance.now() - t0 < R.maxMs) {
      const s0 = performance.now();
      const { ids, targets } = task.batch(R.batch);
      trainer.step(ids, targets);
      stepMs += performance.now() - s0;
      steps++;
      if (steps % R.evalEvery) continue;
      accuracy = api.evaluate(model, task, R.evaluate).sequenceAccuracy;
      if (accuracy >= R.target)
        return {
          seed,
          reached: true,
          steps,
          seconds: (performance.now() - t0) / 1e3,
          stepSeconds: stepMs / 1e3,
          accuracy,
        };
    }
    return {
      seed,
      reached: false,
      steps,
      seconds: (performance.now() - t0) / 1e3,
      stepSeconds: stepMs / 1e3,
      accuracy,
    };
  } finally {
    trainer.dispose();
    model.dispose();
    task.dispose?.();
  }
}

async function reverseToTarget({ log }) {
  const { api, missing } = await oursApi(BUILDS[0]);
  if (missing) return { status: 'skipped', note: missing };
  const runs = REVERSE.seeds.map((seed) => reverseRun(api, seed));
  for (const r of runs) {
    log(
      `  reverse (seed ${r.seed}): ${r.reached ? `99% after ${r.steps} steps, ${r.seconds.toFixed(2)} s` : `not reached in ${r.steps} steps (${(100 * r.accuracy).toFixed(1)}%)`}`,
    );
  }
  const sorted = [...runs].sort((a, b) =>
    a.reached === b.reached ? a.seconds - b.seconds : a.reached ? -1 : 1,
  );
  return { status: 'ok', runs, median: sorted[Math.floor(sorted.length / 2)], config: REVERSE };
}

// ---- the section ----------------------------------------------------------------------------------

// The f32x4 peaks (fma_peak.mjs); with `before`, the better of these and `before`.
async function measurePeaks(smoke, before, log) {
  const options = smoke ? { warmupMs: 60, callMs: 5, trials: 3 } : {};
  const peak = {};
  for (const kind of ['relaxed', 'simd128']) {
    const m = await measurePeak(kind, options);
    peak[kind] = before?.[kind] && (!m || before[kind].gflops > m.gflops) ? before[kind] : m;
  }
  const show = (m) => (m ? `${m.gflops.toFixed(1)} GFLOP/s` : 'n/a (no relaxed SIMD)');
  log(
    `  f32x4 peak${before ? ' (best of two)' : ''}: relaxed_madd ${show(peak.relaxed)}, mul+add ${show(peak.simd128)}`,
  );
  return peak;
}

/**
 * Runs the section; returns { markdown, problems, notes }. smoke: d = 64 only, 2 steps per
 * contender, no torch, no reverse run, a short peak measurement.
 */
export async function runTrainSection({
  smoke = false,
  budgetMs = 1500,
  log = console.log,
  contenders = null,
} = {}) {
  log('\n=== training step ===');
  const peak = await measurePeaks(smoke, null, log);
  const sizes = [];
  for (const d of smoke ? [64] : SIZES) sizes.push(await benchSize(d, { smoke, budgetMs, log, contenders }));
  if (!smoke) Object.assign(peak, await measurePeaks(smoke, peak, log)); // again: the better of two, as load varies
  const reverse = smoke
    ? { status: 'skipped', note: 'skipped in --smoke mode' }
    : await reverseToTarget({ log });
  const problems = sizes.flatMap((s) => s.problems);
  const notes = [
    ...new Set(
      sizes.flatMap((s) => s.results.filter((r) => r.missing).map((r) => `${r.name} skipped: ${r.note}`)),
    ),
  ];
  return { markdown: trainReport({ peak, sizes, reverse, smoke }), problems, notes };
}
