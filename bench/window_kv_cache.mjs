#!/usr/bin/env node
// `npm run bench:window-kv` → node bench/window_kv_cache.mjs: sliding-window attention and KV-cache
// decoding, attention as today's models run it (fp32, one thread, Node, the public wrapper src/js/index.js over dist/):
//
//   1. Sliding window: scaledDotProductAttention on one head, q, k, v (1, 1, T, 64), causal,
//      needWeights false (the tiled path), window 512 against full causal, T = 16 384 (target
//      ≥ 10× faster) and T = 4096 (for context). The windowed (and full) output is checked against a
//      float64 JS reference on a few rows.
//   2. KV-cache decoding: MultiHeadAttention (embedDim 512, 8 heads, 2 key/value heads, rope) with
//      a cache holding 2047+ tokens; time of decoding ONE token with the cache against one forward
//      of the whole (1, 2048, 512) sequence without a cache (target ≥ 50×). The decoded token's
//      output is checked against the last row of the full forward.
//
//   node bench/window_kv_cache.mjs [--budget-ms 3000] [--steps 30]
//
// Exits 1 if a correctness check fails; a missed speed target only prints MISSED.
// Node 20 runs WebAssembly relaxed SIMD only behind --experimental-wasm-relaxed-simd: without it
// this script re-runs itself with the flag (as bench/run.mjs does), so init() loads the
// relaxed-SIMD build; the kernel variant that ran is printed.
import { spawnSync } from 'node:child_process';
import os from 'node:os';

import { measure, median, formatMs, formatRatio, formatErr } from './harness.mjs';
import { mulberry32 } from './naive.mjs';

const { relaxedSimdSupported } = await import('../src/js/index.js?instance=probe');
if (!relaxedSimdSupported() && !process.env.ATTN_BENCH_RELAXED_RERUN) {
  const argv = ['--experimental-wasm-relaxed-simd', ...process.execArgv, ...process.argv.slice(1)];
  const env = { ...process.env, ATTN_BENCH_RELAXED_RERUN: '1' };
  process.exit(spawnSync(process.execPath, argv, { stdio: 'inherit', env }).status ?? 1);
}

const api = await import('../src/js/index.js');
await api.init({ threads: 1 }); // one thread, as the peers (threads: bench/threads.mjs)
const { Tensor, MultiHeadAttention, scaledDotProductAttention, kernelVariant } = api;

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const budgetMs = arg('--budget-ms', 3000);
const decodeSteps = arg('--steps', 30);

// max |y − y_ref| accepted; float32 against float64 on these inputs lands around 1e-7.
const kTol = 1e-4;
const failures = [];
const rows = []; // the summary table

function uniform(n, rand) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = 2 * rand() - 1;
  return a;
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
console.log(
  `bench/window_kv_cache.mjs: Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} (${os.cpus().length} cores, one used), ${os.platform()} ${os.arch()}`,
);
console.log(`kernel variant: ${kernelVariant()} (relaxed SIMD in this engine: ${relaxedSimdSupported()})`);
console.log(`load average (1/5/15 min) at start: ${load()}`);

// ---- 1. sliding window ------------------------------------------------------------------------------

/**
 * Row i of causal softmax(q·kᵀ/√d)·v over keys max(0, i − window + 1) … i (window = Infinity: all
 * keys ≤ i), in float64.
 */
function referenceRow(q, k, v, d, i, window) {
  const lo = Math.max(0, i - window + 1);
  const scale = 1 / Math.sqrt(d);
  const scores = new Float64Array(i - lo + 1);
  let max = -Infinity;
  for (let j = lo; j <= i; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
    s *= scale;
    scores[j - lo] = s;
    if (s > max) max = s;
  }
  let sum = 0;
  for (let j = 0; j < scores.length; j++) sum += scores[j] = Math.exp(scores[j] - max);
  const out = new Float64Array(d);
  for (let j = lo; j <= i; j++) {
    const w = scores[j - lo] / sum;
    for (let c = 0; c < d; c++) out[c] += w * v[j * d + c];
  }
  return out;
}

function maxDiffOnRows(output, q, k, v, d, checkRows, window) {
  let err = 0;
  for (const i of checkRows) {
    const ref = referenceRow(q, k, v, d, i, window);
    for (let c = 0; c < d; c++) err = Math.max(err, Math.abs(output[i * d + c] - ref[c]));
  }
  return err;
}

/**
 * Times two calls interleaved, so both see the same machine load (the cores are shared): each is
 * warmed up by the harness's policy (measure with a small budget), then rounds of one `b` call and
 * as many `a` calls as take about as long, until 2 × budgetMs is spent (at least 3 rounds).
 * Returns { a, b }: { medianMs, runs, output } each.
 */
async function interleaved(runA, runB) {
  const warmA = await measure(runA, { budgetMs: budgetMs / 4, minRuns: 1 });
  const warmB = await measure(runB, { budgetMs: budgetMs / 4, minRuns: 1 });
  const perRound = Math.max(1, Math.round(warmB.medianMs / warmA.medianMs));
  const times = { a: [], b: [] };
  const outputs = { a: warmA.output, b: warmB.output };
  const timed = async (key, fn) => {
    const t0 = performance.now();
    outputs[key] = await fn();
    const dt = performance.now() - t0;
    times[key].push(dt);
    return dt;
  };
  for (let spent = 0, rounds = 0; rounds < 3 || spent < 2 * budgetMs; rounds++) {
    spent += await timed('b', runB);
    for (let i = 0; i < perRound; i++) spent += await timed('a', runA);
  }
  const pack = (key) => ({ medianMs: median(times[key]), runs: times[key].length, output: outputs[key] });
  return { a: pack('a'), b: pack('b') };
}

async function slidingWindow(T, { target }) {
  const d = 64;
  const W = 512;
  const rand = mulberry32(1500 + T);
  const shape = [1, 1, T, d];
  const q = uniform(T * d, rand);
  const k = uniform(T * d, rand);
  const v = uniform(T * d, rand);
  const tq = new Tensor(q, shape);
  const tk = new Tensor(k, shape);
  const tv = new Tensor(v, shape);
  const run = (options) => async () =>
    scaledDotProductAttention(tq, tk, tv, { causal: true, needWeights: false, ...options }).output.data;

  const { a: win, b: full } = await interleaved(run({ window: W }), run({}));
  const ratio = full.medianMs / win.medianMs;

  const checkRows = [...new Set([0, 1, Math.min(1000, T - 1), W - 1, W, T >> 1, T - 2, T - 1])];
  const errWin = maxDiffOnRows(win.output, q, k, v, d, checkRows, W);
  const errFull = maxDiffOnRows(full.output, q, k, v, d, checkRows, Infinity);
  const okWin = errWin < kTol;
  const okFull = errFull < kTol;
  if (!okWin)
    failures.push(`T=${T}: window ${W} output differs from the float64 reference by ${formatErr(errWin)}`);
  if (!okFull)
    failures.push(`T=${T}: full causal output differs from the float64 reference by ${formatErr(errFull)}`);
  const met = target == null ? null : ratio >= target;

  console.log(`\nsliding window, T=${T}, d=${d}, 1 head, causal, needWeights false:`);
  console.log(
    `  window ${W}: ${formatMs(win.medianMs)} (median of N=${win.runs}, interleaved with the full causal calls)`,
  );
  console.log(`  full causal: ${formatMs(full.medianMs)} (median of N=${full.runs})`);
  console.log(
    `  full / window: ${formatRatio(ratio)}${target == null ? ' (no target: context)' : `, target ≥ ${target}×: ${met ? 'met' : 'MISSED'}`}`,
  );
  console.log(
    `  rows ${checkRows.join(', ')} vs float64 JS reference: window max |Δ| = ${formatErr(errWin)} ${okWin ? 'ok' : 'FAIL'}, full causal max |Δ| = ${formatErr(errFull)} ${okFull ? 'ok' : 'FAIL'}`,
  );
  rows.push({
    what: `sliding window, T=${T} (SDPA, d=64, 1 head)`,
    fast: `window 512: ${formatMs(win.medianMs)}`,
    slow: `full causal: ${formatMs(full.medianMs)}`,
    ratio,
    target,
    met,
    check: `${formatErr(Math.max(errWin, errFull))} ${okWin && okFull ? 'ok' : 'FAIL'}`,
  });
}

// ---- 2. KV-cache decoding ---------------------------------------------------------------------------

const maxDiff = (a, b) => a.reduce((m, ai, i) => Math.max(m, Math.abs(ai - b[i])), 0);

// Warm-up on a separate cache: compiles/tiers up the cached path (a short prefill, a few steps).
function warmUpCache(mha, rowsOf, opts) {
  const warm = mha.createCache({ maxLength: 80 });
  mha.forward(rowsOf(0, 64), null, null, { ...opts, cache: warm });
  for (let s = 64; s < 80; s++) mha.forward(rowsOf(s, s + 1), null, null, { ...opts, cache: warm });
  warm.dispose();
}

// The cache: filled once with `prefill` tokens, then one token per timed step (length prefill + 1 …
// prefill + steps). Returns the prefill time, each step's time and each decoded token's output (E).
function decodeWithCache(mha, rowsOf, opts, prefill, steps) {
  const total = prefill + steps;
  const cache = mha.createCache({ maxLength: total });
  const t0 = performance.now();
  mha.forward(rowsOf(0, prefill), null, null, { ...opts, cache });
  const prefillMs = performance.now() - t0;
  const stepTimes = [];
  const decoded = []; // (step) Float32Array (E)
  for (let s = 0; s < steps; s++) {
    const pos = prefill + s;
    const xs = rowsOf(pos, pos + 1);
    const a = performance.now();
    const r = mha.forward(xs, null, null, { ...opts, cache });
    stepTimes.push(performance.now() - a);
    decoded.push(r.output.data);
  }
  const finalLength = cache.length;
  cache.dispose();
  if (finalLength !== total)
    failures.push(`KV cache: length ${finalLength} after decoding, expected ${total}`);
  return { prefillMs, stepTimes, decoded };
}

// The decoded tokens against full forwards without a cache: the first (position T − 1) against the
// last row of the timed (1, T, E) forward, the last against a forward over all `total` tokens, and
// the first against the row before (it must differ, or the comparison is vacuous).
function checkDecoded({ mha, rowsOf, opts, decoded, fullOutput, T, total, E }) {
  const err = maxDiff(decoded[0], fullOutput.subarray((T - 1) * E, T * E));
  const fullLast = mha.forward(rowsOf(0, total), null, null, opts).output.data;
  const errLast = maxDiff(decoded[decoded.length - 1], fullLast.subarray((total - 1) * E, total * E));
  const errPrev = maxDiff(decoded[0], fullOutput.subarray((T - 2) * E, (T - 1) * E));
  const ok = err < kTol && errLast < kTol && errPrev > kTol;
  if (!(errPrev > kTol))
    failures.push(
      `KV cache: the decoded token equals the full forward's row ${T - 2} too (max |Δ| ${formatErr(errPrev)}): the check compares nothing`,
    );
  if (!ok)
    failures.push(
      `KV cache: decoded output differs from the full forward (first step ${formatErr(err)}, last ${formatErr(errLast)})`,
    );
  return { err, errLast, errPrev, ok };
}

function reportKvDecoding({ E, T, prefill, steps, total, prefillMs, stepTimes, stepMs, full, ratio, check }) {
  const { err, errLast, errPrev, ok } = check;
  const target = 50;
  const met = ratio >= target;
  console.log(
    `\nKV-cache decoding, MultiHeadAttention embedDim ${E}, 8 heads, 2 KV heads, rope, causal, needWeights false:`,
  );
  console.log(`  prefill of ${prefill} tokens in one cached forward: ${formatMs(prefillMs)}`);
  console.log(
    `  decode one token: ${formatMs(stepMs)} (median of ${steps} steps at cache lengths ${prefill + 1}…${total}; min ${formatMs(Math.min(...stepTimes))}, max ${formatMs(Math.max(...stepTimes))})`,
  );
  console.log(
    `  full forward of (1, ${T}, ${E}) without a cache: ${formatMs(full.medianMs)} (median of N=${full.runs}, ${full.warmup} warm-up)`,
  );
  console.log(`  full / decode step: ${formatRatio(ratio)}, target ≥ ${target}×: ${met ? 'met' : 'MISSED'}`);
  console.log(
    `  decoded token at position ${T - 1} vs the full forward's last row: max |Δ| = ${formatErr(err)}; at position ${total - 1} vs a full forward of ${total} tokens: ${formatErr(errLast)} ${ok ? 'ok' : 'FAIL'} (vs the row before: ${formatErr(errPrev)}, as it should differ)`,
  );
  rows.push({
    what: `KV-cache decoding, T=${T} (MHA E=512, 8/2 heads, rope)`,
    fast: `1 token with cache: ${formatMs(stepMs)}`,
    slow: `full forward (1, ${T}, ${E}): ${formatMs(full.medianMs)}`,
    ratio,
    target,
    met,
    check: `${formatErr(Math.max(err, errLast))} ${ok ? 'ok' : 'FAIL'}`,
  });
}

async function kvDecoding() {
  const E = 512;
  const config = { embedDim: E, numHeads: 8, numKVHeads: 2, rope: true, seed: 15 };
  const T = 2048; // the sequence the full forward recomputes
  const prefill = T - 1;
  const steps = decodeSteps;
  const total = prefill + steps;
  const x = uniform(total * E, mulberry32(2048));
  const rowsOf = (from, to) => new Tensor(x.subarray(from * E, to * E), [1, to - from, E]);

  const mha = new MultiHeadAttention(config);
  const opts = { causal: true, needWeights: false };
  warmUpCache(mha, rowsOf, opts);
  const { prefillMs, stepTimes, decoded } = decodeWithCache(mha, rowsOf, opts, prefill, steps);
  const stepMs = median(stepTimes);

  // Recomputing: one forward of the whole (1, 2048, 512) sequence without a cache.
  const whole = rowsOf(0, T);
  const full = await measure(async () => mha.forward(whole, null, null, opts).output.data, { budgetMs });
  const ratio = full.medianMs / stepMs;
  const check = checkDecoded({ mha, rowsOf, opts, decoded, fullOutput: full.output, T, total, E });
  mha.dispose();
  reportKvDecoding({ E, T, prefill, steps, total, prefillMs, stepTimes, stepMs, full, ratio, check });
}

await slidingWindow(16384, { target: 10 });
await slidingWindow(4096, { target: null });
await kvDecoding();

console.log(`\n## Summary (kernels: ${kernelVariant()}; load average at end: ${load()})\n`);
console.log('| benchmark | fast | slow | speed-up | target | vs reference (max abs diff) |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const r of rows) {
  const target = r.target == null ? '– (context)' : `≥ ${r.target}× ${r.met ? '✓ met' : '✗ MISSED'}`;
  console.log(`| ${r.what} | ${r.fast} | ${r.slow} | ${formatRatio(r.ratio)} | ${target} | ${r.check} |`);
}
if (failures.length) {
  console.error(`\nCORRECTNESS CHECK FAILED:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\nall correctness checks passed');
