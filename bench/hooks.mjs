#!/usr/bin/env node
// `npm run bench:hooks`: what the hook points cost, on a GPT-2-small-shaped checkpoint (12 layers,
// 768 wide, 12 heads, vocab 50257; seeded random BF16 weights written by shaped_checkpoint.mjs under
// bench/.cache/gpt2-small-bf16/ at run time, the same file as bench/interp.mjs's; never committed), B = 1,
// one thread (init({ threads: 1 })), rounds interleaved (each round runs every call once, so a busy
// moment of the machine falls on all of them alike), the median over the rounds:
//
//   forward vs run     forward(ids, { attention: false }) against run(ids, { capture: every hook of
//                      hookNames() }) at T = 128: the ratio (target <= 1.3x)
//   generate           16-token prompt, 32 new tokens (greedy, no early stop), plain against steered
//                      (an add of a seeded random vector at blocks.6.hook_resid_pre): tokens/s of each
//                      (prefill included) and the ratio (target >= 0.95x)
//   patch / attributionPatch   component 'head' (12 x 12), one clean/corrupted pair of T = 16: ms
//
//   node bench/hooks.mjs [--quick]     --quick: T = 32, 1 round, 8 new tokens (a smoke run)
// Every line says the threads, the kernel build and the machine's load average.
import { openAsBlob } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GPT2_SMALL_CONFIG, writeShapedCheckpoint } from './shaped_checkpoint.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const T = quick ? 32 : 128;
const ROUNDS = quick ? 1 : 5;
const NEW_TOKENS = quick ? 8 : 32;
const STEER_HOOK = 'blocks.6.hook_resid_pre';

const config = GPT2_SMALL_CONFIG;
const { n_embd: E, vocab_size: V } = config;

// Seeded values in [0, 1) (an LCG): the ids and the steering vector.
function uniform(n, seed) {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

// One call's wall-clock and CPU (this process: user + system) milliseconds, awaited, and its result.
// On the shared machine the wall time also counts other processes' turns on the core.
async function timed(fn) {
  const t0 = performance.now(),
    c0 = process.cpuUsage();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return [{ wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 }, r];
}

// Each call of `calls` once per round, in order, for ROUNDS rounds after one untimed warm-up round
// (not with --quick) → { name: { wall, cpu } medians } and the results of the last round.
async function rounds(calls) {
  const ms = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  const last = {};
  for (let r = quick ? 0 : -1; r < ROUNDS; r++)
    for (const [name, fn] of Object.entries(calls)) {
      const [t, out] = await timed(fn);
      if (r >= 0) ms[name].push(t);
      last[name] = out;
    }
  const med = {};
  for (const [name, list] of Object.entries(ms))
    med[name] = { wall: median(list.map((t) => t.wall)), cpu: median(list.map((t) => t.cpu)) };
  return { med, last };
}

async function loadModel(attn) {
  await attn.init({ threads: 1 });
  const t0 = performance.now();
  const dir = path.join(here, '.cache', 'gpt2-small-bf16');
  const { written } = writeShapedCheckpoint(dir, config);
  if (written)
    console.log(`hooks: wrote the checkpoint in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return attn.loadPretrained({
    config,
    weights: await openAsBlob(path.join(dir, 'model.safetensors')),
    memoryLimit: 2e9,
  });
}

// The calls measured, each a closure over the model and its inputs.
function calls(model) {
  const ids = uniform(T, 7).map((u) => Math.floor(u * V));
  const names = model.hookNames().map((h) => h.name);
  const prompt = ids.slice(0, 16);
  const vector = Float32Array.from(uniform(E, 11), (u) => u * 2 - 1);
  const gen = { maxNewTokens: NEW_TOKENS, stop: [] };
  const steered = { ...gen, edits: [{ hook: STEER_HOOK, op: 'add', value: vector }] };
  const clean = ids.slice(0, 16);
  const corrupted = clean.slice();
  corrupted[9] = (corrupted[9] + 1) % V;
  const pair = { clean, corrupted, token: ids[16], against: ids[17], component: 'head' };
  return {
    names,
    forward: {
      forward: () => model.forward(ids, { attention: false }),
      run: () => model.run(ids, { capture: names }),
    },
    generate: {
      plain: () => model.generate(prompt, gen),
      steered: () => model.generate(prompt, steered),
    },
    patching: {
      patch: () => model.patch(pair),
      attributionPatch: () => model.attributionPatch(pair),
    },
  };
}

// A row of the markdown table: the call, its medians (ms), a ratio of wall (CPU) medians, the target.
const row = (what, t, ratio = '', target = '') =>
  console.log(`| ${what} | ${t.wall.toFixed(1)} | ${t.cpu.toFixed(1)} | ${ratio} | ${target} |`);
const ratioOf = (x, y, k = 1) =>
  `${((k * x.wall) / y.wall).toFixed(3)}× (${((k * x.cpu) / y.cpu).toFixed(3)}×)`;

async function main() {
  const attn = await import('../src/js/index.js');
  const model = await loadModel(attn);
  const c = calls(model);
  const before = load();
  console.log(
    `GPT-2-small-shaped (12 x 12 heads, 768 wide, vocab ${V}, BF16), B = 1, T = ${T}, median of ${ROUNDS} ` +
      `interleaved round(s), ${attn.threadCount()} thread(s), ${attn.kernelVariant()}, Node ${process.version}, ` +
      `${os.cpus().length} cores\n`,
  );
  console.log('| call | wall ms | CPU ms | ratio, wall (CPU) | target |\n|---|---|---|---|---|');
  const f = await rounds(c.forward);
  const captured = Object.keys(f.last.run.activations).length;
  if (captured !== c.names.length) throw new Error(`run captured ${captured} of ${c.names.length} hooks`);
  row(`forward(ids, { attention: false }), T = ${T}`, f.med.forward);
  row(
    `run(ids, { capture: all ${c.names.length} hooks })`,
    f.med.run,
    ratioOf(f.med.run, f.med.forward) + ' forward',
    '≤ 1.3×',
  );
  const g = await rounds(c.generate);
  const made = (r) => r.data.filter((id) => id >= 0).length; // the new ids (no stop ids: all of them)
  const n = made(g.last.plain);
  if (made(g.last.steered) !== n) throw new Error('the steered generate made another number of tokens');
  const rate = (t) => `${((n / t.wall) * 1000).toFixed(2)} tokens/s`;
  row(`generate, 16 + ${n} tokens, plain: ${rate(g.med.plain)}`, g.med.plain);
  row(
    `generate, steered (add at ${STEER_HOOK}): ${rate(g.med.steered)}`,
    g.med.steered,
    ratioOf(g.med.plain, g.med.steered) + ' plain tokens/s',
    '≥ 0.95×',
  );
  const p = await rounds(c.patching);
  row("patch, component 'head' (144 heads), T = 16", p.med.patch, '', 'no slower than 0.11.3');
  row("attributionPatch, component 'head', T = 16", p.med.attributionPatch, '', 'no slower than 0.11.3');
  console.log(`\nload average (1 / 5 / 15 min): ${before} at the start, ${load()} at the end`);
  model.dispose();
}

await main();
