#!/usr/bin/env node
// `npm run bench` → node bench/run.mjs: multi-head attention forward (fp32, one thread, Node) of
// this project against naive JS, tfjs-backend-wasm and onnxruntime-web, all in this one process
// (the native build runs as a child process), so every ratio comes from the same run.
//
//   node bench/run.mjs                 full run: prints the tables, writes bench/results.md
//   node bench/run.mjs --smoke         tiny shapes, every contender, asserts that outputs agree
//                                      (exit 1 otherwise); part of `npm test`, < 20 s
//   --shapes demo,tutorial,t2048,t16k  a subset (results.md is only written for full runs)
//   --budget-ms 1500                   timed milliseconds per contender and shape (default 1500)
//   --contenders ours,native,tfjs      a subset by group (naive, ours, ours-weights, ours-relaxed,
//                                      ours-scalar, native, tfjs, ort-plain, ort-fused; the training
//                                      section knows ours-relaxed, ours, tfjs, torch)
//   --sections mha,train               the MHA forward shapes and/or the training step (train.mjs)
//
// Node 20 runs WebAssembly relaxed SIMD only behind --experimental-wasm-relaxed-simd (Chrome ≥ 114
// and Node ≥ 22 have it on): without it this script re-runs itself with the flag, so the
// relaxed-SIMD row runs too. The flag is on for the whole process, peers included.
//
// See bench/README.md for what each column means.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { installMemoryProbe } from './wasm_memory.mjs';
import { measure, formatMs, formatErr } from './harness.mjs';
import { makeProblem, maxAbsErrorOnRows, mhaFlops, naiveMha, referenceRows, sampleRows } from './naive.mjs';
import { fullReport, shapeSection } from './report.mjs';

const { relaxedSimdSupported } = await import('../src/js/index.js?instance=probe');
if (!relaxedSimdSupported() && !process.env.ATTN_BENCH_RELAXED_RERUN) {
  const argv = ['--experimental-wasm-relaxed-simd', ...process.execArgv, ...process.argv.slice(1)];
  const env = { ...process.env, ATTN_BENCH_RELAXED_RERUN: '1' };
  process.exit(spawnSync(process.execPath, argv, { stdio: 'inherit', env }).status ?? 1);
}

installMemoryProbe(); // before any wasm runtime is instantiated: see wasm_memory.mjs
const peers = await import('./peers.mjs');
const ours = await import('./ours.mjs');
const { runTrainSection } = await import('./train.mjs');

const here = path.dirname(fileURLToPath(import.meta.url));

// max |y − y_ref| accepted as "the same MHA". float32 on these inputs (|x| ≤ 1, E ≤ 512, T ≤ 16 384)
// lands around 1e-7 … 1e-6; a wrong head split, transpose or scale is ≳ 1e-2.
const kAgreeTol = 1e-4;
const MiB = 1 << 20;

// ---- shapes ---------------------------------------------------------------------------------------

const SHAPES = [
  {
    id: 'demo',
    short: 'demo',
    B: 1,
    T: 16,
    E: 64,
    H: 4,
    label: 'B=1, T=16, D=64, H=4 (demo; per call incl. JS↔wasm copies)',
    targets: [{ kind: 'ratio', vs: 'ort', min: 3, label: '≥ 3× onnxruntime-web per call' }],
  },
  {
    id: 'tutorial',
    short: 'tutorial',
    B: 128,
    T: 64,
    E: 512,
    H: 8,
    label: 'B=128, T=64, D=512, H=8 (tutorial)',
    naive: { batches: 8 }, // 8 of 128 batch items, scaled ×16: the full run would take ~20 s
    targets: [
      { kind: 'ratio', vs: 'ort', min: 1.6, label: '≥ 1.6× onnxruntime-web' },
      { kind: 'ratio', vs: 'tfjs', min: 2.5, label: '≥ 2.5× tfjs-backend-wasm' },
      { kind: 'ratio', vs: 'ours-scalar', min: 3, label: 'SIMD ≥ 3× scalar wasm build' },
    ],
  },
  {
    id: 't2048',
    short: 'T=2048',
    B: 1,
    T: 2048,
    E: 256,
    H: 4,
    label: 'B=1, T=2048, D=256, H=4',
    naive: { once: true }, // ~6 s per call: one call, no warm-up
    targets: [{ kind: 'ratio', vs: 'ort', min: 1.7, label: '≥ 1.7× onnxruntime-web' }],
  },
  {
    id: 't16k',
    short: 'T=16384',
    B: 1,
    T: 16384,
    E: 256,
    H: 4,
    label: 'B=1, T=16384, D=256, H=4 (fast path, needWeights false)',
    fastPathOnly: true,
    fixedRuns: 1, // ~10 s per call; the code is warmed on a T = 512 problem first
    freshInstance: 't16k',
    naive: { skip: 'skipped: ~280 GFLOP at ~1 GFLOP/s would take ~5 minutes' },
    refRows: 96, // the float64 reference projects all 16 384 keys/values: ~4 s
    maxCallMs: 30_000, // skip a contender whose rate on the previous shapes predicts longer calls
    targets: [{ kind: 'heap', maxBytes: 200 * 1e6, label: 'completes in the wasm build with heap < 200 MB' }],
  },
];

const SMOKE_SHAPES = [
  { id: 'smoke-a', short: 'smoke a', B: 2, T: 5, E: 12, H: 3, label: 'smoke: B=2, T=5, D=12, H=3' },
  { id: 'smoke-b', short: 'smoke b', B: 1, T: 33, E: 20, H: 5, label: 'smoke: B=1, T=33, D=20, H=5 (odd T)' },
  {
    id: 'smoke-c',
    short: 'smoke c',
    B: 3,
    T: 1,
    E: 8,
    H: 8,
    label: 'smoke: B=3, T=1, D=8, H=8 (head width 1)',
  },
];

// ---- command line ---------------------------------------------------------------------------------

function parseArgs(argv) {
  const args = { smoke: false, shapes: null, budgetMs: 1500, contenders: null, sections: ['mha', 'train'] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--smoke') args.smoke = true;
    else if (a === '--shapes') args.shapes = argv[++i].split(',');
    else if (a === '--budget-ms') args.budgetMs = Number(argv[++i]);
    else if (a === '--contenders') args.contenders = argv[++i].split(',');
    else if (a === '--sections') args.sections = argv[++i].split(',');
    else throw new Error(`unknown argument ${a} (see the header of bench/run.mjs)`);
  }
  return args;
}

// ---- contenders -----------------------------------------------------------------------------------

const naiveContender = { name: 'naive JS (f32 loops)', group: 'naive', short: 'naive' };

function contenders({ smoke }) {
  return [
    naiveContender,
    ours.oursSimd,
    ours.oursSimdWeights,
    ours.oursRelaxed,
    ours.oursScalar,
    ours.nativeContender({ allowCompile: !smoke }),
    peers.tfjsContender,
    peers.ortPlainContender,
    peers.ortFusedContender,
  ];
}

// Why a contender does not run the T = 16 384 shape.
function fastPathReason(key, shape) {
  const scoresBytes = shape.H * shape.T * shape.T * 4;
  if (key === 'ours-weights')
    return `n/a: returning the weights needs (T, T) floats (${((shape.T * shape.T * 4) / 2 ** 30).toFixed(0)} GiB averaged)`;
  return `n/a: materialises H·T² scores = ${(scoresBytes / 2 ** 30).toFixed(0)} GiB, beyond the 4 GiB wasm32 heap`;
}

async function runNaive(shape, p, budgetMs) {
  const cfg = shape.naive ?? {};
  if (cfg.skip) return { status: 'skipped', note: cfg.skip };
  const batches = cfg.batches ?? shape.B;
  let allocatedBytes = 0;
  const run = async () => {
    const r = naiveMha(p, batches);
    allocatedBytes = r.allocatedBytes;
    return r.output;
  };
  const m = cfg.once ? await measure(run, { budgetMs, fixedRuns: 1 }) : await measure(run, { budgetMs });
  const factor = shape.B / batches;
  const r = { status: 'ok', ...m, batches, memory: { kind: 'arrays', bytes: allocatedBytes * factor } };
  if (cfg.once) r.note = 'one call, no warm-up (several seconds per call)';
  if (factor > 1) {
    r.medianMs *= factor;
    r.extrapolatedFrom = { factor };
    r.note = `timed on ${batches} of ${shape.B} batch items (N=${m.runs}) and scaled ×${factor}; error on those items`;
  }
  return r;
}

const FAST_PATH_GROUPS = new Set(['ours', 'ours-relaxed', 'ours-scalar', 'native']);

async function runOne(c, key, shape, p, { budgetMs, rates }) {
  if (key === 'naive') return runNaive(shape, p, budgetMs);
  if (shape.fastPathOnly && !FAST_PATH_GROUPS.has(key))
    return { status: 'n/a', note: fastPathReason(key, shape) };
  if (!c.available()) return { status: 'skipped', missing: true, note: c.missingNote };
  const predictedMs = rates[key] ? mhaFlops(shape) / (rates[key] * 1e6) : 0;
  if (shape.maxCallMs && predictedMs > shape.maxCallMs) {
    return {
      status: 'skipped',
      note:
        `skipped: ~${formatMs(predictedMs)} per call predicted from its ` +
        `${rates[key].toFixed(1)} GFLOP/s on the previous shape (limit ${formatMs(shape.maxCallMs)})`,
    };
  }
  await c.load();
  if (c.external) {
    const m = c.measure(p, { budgetMs, fixedRuns: shape.fixedRuns ?? 0 });
    return { status: 'ok', ...m, note: m.variant ? `kernels: ${m.variant}` : undefined };
  }
  const warmWith = shape.freshInstance ? makeProblem({ B: 1, T: 512, E: shape.E, H: shape.H }, 7) : null;
  const runner = await c.prepare(p, { freshInstance: shape.freshInstance, warmWith });
  try {
    const m = await measure(() => runner.run(), { budgetMs, fixedRuns: shape.fixedRuns ?? 0 });
    return { status: 'ok', ...m, memory: { kind: 'heap', bytes: runner.heapBytes() } };
  } finally {
    await runner.dispose();
  }
}

// ---- one shape ------------------------------------------------------------------------------------

async function benchShape(shape, list, { budgetMs, log, rates }) {
  const p = makeProblem(shape);
  const flops = mhaFlops(shape);
  const rows = sampleRows(shape, shape.refRows ?? 192);
  const t0 = performance.now();
  const ref = referenceRows(p, rows);
  const all = rows.length === shape.B * shape.T;
  const refNote = `float64 JS (naive.mjs referenceRows) on ${all ? 'all' : 'a sample of'} ${rows.length} output rows`;
  log(
    `\n${shape.label}: ${(flops / 1e9).toFixed(3)} GFLOP; reference ${rows.length} rows in ${formatMs(performance.now() - t0)}`,
  );

  const results = [];
  const byGroup = {};
  for (const c of list) {
    const key = c.group;
    let r;
    try {
      r = await runOne(c, key, shape, p, { budgetMs, rates });
    } catch (error) {
      r = { status: 'error', note: `ERROR: ${error?.message ?? error}` };
    }
    r.name = c.name;
    r.short = c.short ?? c.name;
    if (r.status === 'ok') {
      r.gflops = flops / r.medianMs / 1e6;
      rates[key] = r.gflops;
      const usable = r.batches ? rows.filter(([b]) => b < r.batches) : rows;
      const usableRef = r.batches ? ref.filter((_, i) => rows[Math.floor(i / shape.E)][0] < r.batches) : ref;
      r.err = maxAbsErrorOnRows(p, r.output, usable, usableRef);
      r.errOk = r.err <= kAgreeTol;
    }
    results.push(r);
    byGroup[key] = r;
    log(
      `  ${c.name.padEnd(44)} ${r.status === 'ok' ? `${formatMs(r.medianMs).padStart(9)}  N=${String(r.runs).padEnd(4)} err ${formatErr(r.err)}${r.errOk ? '' : '  ✗ DISAGREES'}` : r.note}`,
    );
  }
  const extraNotes = crossCheck(byGroup, shape);
  for (const r of results) delete r.output; // free the big outputs before the next shape
  return { shape, flops, refNote, results, byGroup, extraNotes };
}

// Ours (wasm SIMD) against ours (native) on every output element, for the shapes where the float64
// reference only samples rows.
function crossCheck(byGroup, shape) {
  const b = byGroup.native;
  if (b?.status !== 'ok' || shape.B * shape.T <= 192) return [];
  const notes = [];
  for (const [group, label] of [
    ['ours', 'wasm SIMD128'],
    ['ours-relaxed', 'wasm relaxed SIMD'],
  ]) {
    const a = byGroup[group];
    if (a?.status !== 'ok') continue;
    let d = a.output.length === b.output.length ? 0 : NaN;
    for (let i = 0; i < a.output.length && !Number.isNaN(d); i++)
      d = Math.max(d, Math.abs(a.output[i] - b.output[i]));
    const agree = d <= kAgreeTol;
    notes.push(
      `${label} vs native over all ${shape.B * shape.T} rows: max |Δ| = ${formatErr(d)}${agree ? '' : ' ✗ DISAGREES'}`,
    );
  }
  return notes;
}

// ---- main -----------------------------------------------------------------------------------------

function environment(loadBefore) {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = (l) => l.map((x) => x.toFixed(1)).join(' / ');
  return [
    `Measured by \`npm run bench\` (bench/run.mjs) on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ` +
      `${cpu} (${os.cpus().length} cores, one used), ${os.platform()} ${os.arch()}.`,
    relaxedSimdSupported()
      ? `Relaxed SIMD is on in this process${process.execArgv.includes('--experimental-wasm-relaxed-simd') ? ' (--experimental-wasm-relaxed-simd)' : ''}: ` +
        "it only changes our relaxed-SIMD row; the peers' binaries validate without it, so they do not use it."
      : 'Relaxed SIMD is off in this process: no relaxed-SIMD row.',
    `Peers: onnxruntime-web ${peers.ortVersion()} (wasm EP, numThreads 1, SIMD binary), ` +
      `@tensorflow/tfjs-backend-wasm ${peers.tfjsVersion()} (SIMD binary, setThreadsCount(1)).`,
    'Times are medians of N calls after warm-up; GFLOP/s counts 2·M·N·K per matmul ' +
      '(3 input projections, QKᵀ, weights·V, output projection).',
    `Machine load average (1/5/15 min) at start ${load(loadBefore)}, at end ${load(os.loadavg())}: ` +
      'other processes share the cores, so compare ratios within this run rather than absolute times across runs.',
  ];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const log = (line) => console.log(line);
  const mhaShapes = args.smoke
    ? SMOKE_SHAPES
    : SHAPES.filter((s) => !args.shapes || args.shapes.includes(s.id));
  const shapes = args.sections.includes('mha') ? mhaShapes : [];
  const budgetMs = args.smoke ? 20 : args.budgetMs;
  const list = contenders({ smoke: args.smoke }).filter(
    (c) => !args.contenders || args.contenders.includes(c.group),
  );
  const partial = Boolean(args.shapes || args.contenders || args.sections.length < 2);
  const started = performance.now();
  const loadBefore = os.loadavg();

  const sections = [];
  const rates = {}; // group → GFLOP/s on the latest shape (predicts the cost of the next)
  for (const shape of shapes) sections.push(await benchShape(shape, list, { budgetMs, log, rates }));

  const problems = [];
  for (const s of sections) {
    for (const r of s.results) {
      if (r.status === 'error') problems.push(`${s.shape.short} / ${r.name}: ${r.note}`);
      if (r.status === 'ok' && !r.errOk)
        problems.push(`${s.shape.short} / ${r.name}: max abs err ${formatErr(r.err)} > ${kAgreeTol}`);
    }
    for (const n of s.extraNotes) if (n.includes('DISAGREES')) problems.push(`${s.shape.short}: ${n}`);
    if (list.includes(ours.oursSimd) && s.byGroup.ours?.status !== 'ok')
      problems.push(`${s.shape.short}: this project's SIMD build did not run (${s.byGroup.ours?.note})`);
  }
  // The training step (train.mjs): its own contenders, checks and tables.
  const train = args.sections.includes('train')
    ? await runTrainSection({ smoke: args.smoke, budgetMs, log, contenders: args.contenders })
    : null;
  if (train) problems.push(...train.problems.map((p) => `training step / ${p}`));
  const skipped = sections.flatMap((s) =>
    s.results.filter((r) => r.missing).map((r) => `${r.name} skipped: ${r.note}`),
  );
  if (train) skipped.push(...train.notes);
  for (const note of new Set(skipped)) log(`NOTE: ${note}`);

  if (args.smoke) {
    log(
      `\nsmoke: ${sections.length} shapes${train ? ' and the training step (d = 64, 2 steps each)' : ''} in ${formatMs(performance.now() - started)}`,
    );
  } else {
    const report = fullReport({
      header: environment(loadBefore),
      sections,
      extra: train ? [train.markdown] : [],
      notes: [...new Set(skipped)],
    });
    log(`\n${report}`);
    if (!partial) {
      writeFileSync(path.join(here, 'results.md'), report);
      log(`wrote bench/results.md (${formatMs(performance.now() - started)} in all)`);
    }
  }
  if (problems.length) {
    for (const p of problems) console.error(`FAIL: ${p}`);
    process.exitCode = 1;
  }
}

await main();
