#!/usr/bin/env node
// `npm run bench:threads`: ours and onnxruntime-web at the same thread counts, a table
// per count. Rows: multi-head attention forward at the demo shape (B1 T16 D64 h4), the tutorial shape
// (B128 T64 D512 h8) and T = 2048 (B1 D256 h4), and the D128 training step (TinyTransformer + Trainer;
// onnxruntime-web has no training, so that row is ours against our one thread). The GPT-2-small
// forward and decode at n threads: `node bench/gpt2_small.mjs --threads n`.
//
// Each thread count runs in its own child process, because onnxruntime-web reads numThreads once per
// process. There ours at n threads, ours at 1 thread (setThreadCount(1): the same module and pool)
// and onnxruntime-web at n threads (plain ops and com.microsoft.Attention; the faster is the peer)
// are timed in interleaved rounds, so the machine's slow and fast moments fall on all of them alike;
// each figure is the median of the rounds. Every result line names its thread count.
//
//   node bench/threads.mjs [--threads 1,2,4,8] [--rounds 7] [--quick] [--out file.md]
//   default counts: 1, 2 and 4, 8 where os.availableParallelism() has them.
// Ours runs its relaxed-SIMD build (the script re-runs itself with --experimental-wasm-relaxed-simd
// on Node 20), as bench/run.mjs does.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './harness.mjs';
import { makeProblem } from './naive.mjs';
import { stateDict } from './ours.mjs';
import { ortMhaSession } from './peers.mjs';
import { fusedMhaModel, plainMhaModel } from './onnx_graph.mjs';
import { OPTIMIZER, initialWeights, kBatch, kSeqLen, makeBatches, modelConfig } from './train_setup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const args = process.argv.slice(2);
const arg = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const quick = args.includes('--quick');
const rounds = Number(arg('--rounds', quick ? 3 : 7));
const kSampleMs = quick ? 20 : 150; // one sample: calls repeated until this long (tiny shapes)

const SHAPES = [
  { id: 'demo', label: 'MHA demo B1 T16 D64 h4', B: 1, T: 16, E: 64, H: 4 },
  { id: 'tutorial', label: 'MHA tutorial B128 T64 D512 h8', B: 128, T: 64, E: 512, H: 8 },
  { id: 't2048', label: 'MHA T=2048 B1 D256 h4', B: 1, T: 2048, E: 256, H: 4 },
];
const QUICK_SHAPES = [
  SHAPES[0],
  { id: 'tutorial', label: 'MHA B8 T64 D512 h8 (quick)', B: 8, T: 64, E: 512, H: 8 },
];

// ---- child: one thread count ----------------------------------------------------------------------

async function oursMha(api, p) {
  const mha = new api.MultiHeadAttention({ embedDim: p.E, numHeads: p.H });
  mha.loadStateDict(stateDict(p));
  const x = new api.Tensor(p.x, [p.B, p.T, p.E]);
  return {
    run: async () => mha.forward(x, null, null, { needWeights: false }).output.data,
    dispose: () => mha.dispose(),
  };
}

function oursTrain(api) {
  const config = modelConfig(128);
  const model = new api.TinyTransformer({
    ...config,
    mlp: true,
    positional: 'learned',
    norm: 'pre',
    causal: true,
    seed: 1,
  });
  model.loadStateDict(initialWeights(config, 7));
  const trainer = new api.Trainer(model, OPTIMIZER);
  const batches = makeBatches(11).map(({ ids, targets }) => ({
    ids: new api.Tensor(ids, [kBatch, kSeqLen]),
    targets: new api.Tensor(targets, [kBatch, kSeqLen]),
  }));
  let s = 0;
  return {
    run: async () => {
      const { ids, targets } = batches[s++ % batches.length];
      return trainer.step(ids, targets).loss;
    },
    dispose: () => {
      trainer.dispose();
      model.dispose();
    },
  };
}

// Calls per sample so that a sample lasts about kSampleMs (1 for anything slower).
async function callsPerSample(c) {
  const t0 = performance.now();
  await c.run();
  const ms = performance.now() - t0;
  return Math.max(1, Math.ceil(kSampleMs / Math.max(ms, 1e-3)));
}

async function sample(c, calls, beforeRun) {
  beforeRun?.();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await c.run();
  return (performance.now() - t0) / calls;
}

/** Interleaved rounds over `contenders` ({ name, threads, c, before }): median ms per call of each. */
async function timeInterleaved(contenders) {
  for (const k of contenders) {
    k.before?.();
    await k.c.run(); // warm-up (compile, tier-up, buffers)
    k.calls = await callsPerSample(k.c);
    k.ms = [];
  }
  // The order rotates each round: a contender's sample is not always the one right after the same
  // other one (onnxruntime-web's workers keep spinning for a while after its calls).
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < contenders.length; i++) {
      const k = contenders[(r + i) % contenders.length];
      k.ms.push(await sample(k.c, k.calls, k.before));
    }
  }
  return contenders.map((k) => ({ name: k.name, threads: k.threads, ms: median(k.ms), calls: k.calls }));
}

async function child(n) {
  const api = await import('../src/js/index.js');
  await api.init({ threads: n });
  if (api.threadCount() !== n) throw new Error(`init({ threads: ${n} }) runs ${api.threadCount()} thread(s)`);
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = n;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  ort.env.wasm.wasmPaths = path.join(root, 'node_modules/onnxruntime-web/dist') + path.sep;
  const atN = () => api.setThreadCount(n);
  const at1 = () => api.setThreadCount(1);
  const rows = [];
  for (const shape of quick ? QUICK_SHAPES : SHAPES) {
    const p = makeProblem(shape);
    const ours = await oursMha(api, p);
    const plain = await ortMhaSession(ort, p, plainMhaModel, n);
    const fused = await ortMhaSession(ort, p, fusedMhaModel, n);
    const contenders = [{ name: 'ours', threads: n, c: ours, before: atN }];
    if (n > 1) contenders.push({ name: 'ours', threads: 1, c: ours, before: at1 });
    contenders.push({ name: 'ort plain', threads: n, c: plain }, { name: 'ort fused', threads: n, c: fused });
    rows.push({ row: shape.id, label: shape.label, results: await timeInterleaved(contenders) });
    for (const c of [ours, plain, fused]) await c.dispose();
  }
  const train = oursTrain(api);
  const trainContenders = [{ name: 'ours', threads: n, c: train, before: atN }];
  if (n > 1) trainContenders.push({ name: 'ours', threads: 1, c: train, before: at1 });
  rows.push({
    row: 'train128',
    label: 'training step D128 (B32 T16, 2 layers)',
    results: await timeInterleaved(trainContenders),
  });
  train.dispose();
  return { threads: n, kernels: api.kernelVariant(), ort: ort.env.versions?.web ?? '?', rows };
}

// ---- parent: every count, the tables -------------------------------------------------------------

function defaultCounts() {
  const cores = os.availableParallelism();
  return [1, 2, 4, 8].filter((n) => n <= 2 || n <= cores);
}

function table(run) {
  const lines = [
    `### ${run.threads} thread(s) — ours (${run.kernels}) vs onnxruntime-web ${run.ort} (numThreads ${run.threads})`,
    '',
    '| row | ours, n threads | ours, 1 thread | onnxruntime-web (best of plain / fused) | ours n vs ours 1 | ours vs ort |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of run.rows) {
    const get = (name, threads) => r.results.find((x) => x.name === name && x.threads === threads)?.ms;
    const oursN = get('ours', run.threads),
      ours1 = run.threads === 1 ? oursN : get('ours', 1);
    const ortBest = Math.min(
      get('ort plain', run.threads) ?? Infinity,
      get('ort fused', run.threads) ?? Infinity,
    );
    const fmt = (ms) => (Number.isFinite(ms) ? `${ms.toFixed(ms < 1 ? 3 : 1)} ms` : '—');
    lines.push(
      `| ${r.label} | ${fmt(oursN)} | ${fmt(ours1)} | ${fmt(ortBest)} | ${(ours1 / oursN).toFixed(2)}× | ` +
        `${Number.isFinite(ortBest) ? `${(ortBest / oursN).toFixed(2)}×` : 'no peer'} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  if (args.includes('--child')) {
    console.log(JSON.stringify(await child(Number(arg('--child')))));
    return;
  }
  const counts = arg('--threads', null)?.split(',').map(Number) ?? defaultCounts();
  const runs = [];
  for (const n of counts) {
    const flags = ['--experimental-wasm-relaxed-simd'];
    const r = spawnSync(
      process.execPath,
      [
        ...flags,
        fileURLToPath(import.meta.url),
        '--child',
        String(n),
        '--rounds',
        String(rounds),
        ...(quick ? ['--quick'] : []),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    if (r.status !== 0) {
      console.error(`threads: the ${n}-thread run failed:\n${r.stderr}`);
      process.exit(1);
    }
    const run = JSON.parse(r.stdout.trim().split('\n').pop());
    runs.push(run);
    for (const row of run.rows)
      for (const x of row.results)
        console.log(
          `threads=${x.threads} ${row.row} ${x.name}: ${x.ms.toFixed(3)} ms (median of ${rounds}, ${x.calls} call(s) per sample)`,
        );
  }
  const machine = `${os.cpus()[0]?.model ?? '?'}, ${os.availableParallelism()} hardware threads, Node ${process.versions.node}`;
  const text = [
    `Machine: ${machine}; medians of ${rounds} interleaved rounds per count.`,
    '',
    ...runs.map(table).flatMap((t) => [t, '']),
  ].join('\n');
  console.log(`\n${text}`);
  const out = arg('--out', null);
  if (out) writeFileSync(out, `${text}\n`);
}

await main();
