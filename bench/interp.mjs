#!/usr/bin/env node
// Interpretability timings on a GPT-2-small-shaped checkpoint (12 layers, 768 wide,
// 12 heads, vocab 50257, n_positions 1024; seeded random BF16 weights written by shaped_checkpoint.mjs
// under bench/.cache/gpt2-small-bf16/ at run time, never committed), in Node, on one thread
// (init({ threads: 1 }): the targets are for one thread; every line says how many ran).
//
//   forward            one forward of T = 16 ids (every layer's attention), the unit of the rest
//   headScores         the three kinds (one forward with attention)
//   logitAttribution   at the last position, token against another
//   patch 'head'       all 144 heads (target <= 10 s), T = 16, position 15
//   patch 'residual'   12 blocks x 16 positions (target <= 10 s)
//   patch 'head-position'  144 heads x 16 positions (target <= 90 s; only with --all)
//   attributionPatch 'head-position'  the same entries from two forwards and one backward, its time
//                      against patch's (target >= 30x faster on one thread) and their correlation
//                      (patch's run only with --all; without it the ratio uses patch 'head' x 16)
//   saliency (integrated gradients, 32 steps)  T = 16 (target <= 8 s on one thread) and T = 128
//
//   node bench/interp.mjs [--all] [--threads N]
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GPT2_SMALL_CONFIG, writeShapedCheckpoint } from './shaped_checkpoint.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const all = process.argv.includes('--all');
const threadsAt = process.argv.indexOf('--threads');
const THREADS = threadsAt > 0 ? Number(process.argv[threadsAt + 1]) : 1; // each line prints threadCount()

const config = GPT2_SMALL_CONFIG;
const { vocab_size: V } = config;
// GPT-2's tensors come from the family registry (bench/shaped_checkpoint.mjs; the writer sets only
// '*norm.weight' to 1: GPT-2's ln weights stay random, which changes no timing).

const dir = path.join(here, '.cache', 'gpt2-small-bf16');
writeShapedCheckpoint(dir, config);
const { init, loadPretrained, kernelVariant, threadCount } = await import('../src/js/index.js');
await init({ threads: THREADS });
const model = await loadPretrained({
  config,
  weights: await openAsBlob(path.join(dir, 'model.safetensors')),
  memoryLimit: 2e9,
});

const clean = [464, 3290, 318, 257, 1402, 286, 262, 1578, 764, 383, 3290, 318, 257, 1402, 286, 262];
const corrupted = clean.slice();
corrupted[9] = 1110;
const T = clean.length;
const { logits } = model.forward(clean, { attention: false });
const row = logits.data.subarray((T - 1) * V, T * V);
const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a]);
const token = order[0],
  against = order[1];

// Wall-clock and this process's CPU time (user + system): on a shared machine the wall time also
// counts the time other processes held the core; the CPU time is what the work itself took.
const time = async (fn) => {
  const t0 = performance.now(),
    c0 = process.cpuUsage();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return [{ wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 }, r];
};
const median = async (fn, runs = 3) => {
  const ms = [];
  for (let i = 0; i < runs; i++) ms.push((await time(fn))[0]);
  return ms.sort((a, b) => a.wall - b.wall)[Math.floor(runs / 2)];
};
const line = (what, t, extra = '') =>
  console.log(
    `${what.padEnd(34)} ${(t.wall / 1000).toFixed(3).padStart(8)} s wall, ${(t.cpu / 1000).toFixed(3).padStart(8)} s CPU  (${threadCount()} thread(s), ${kernelVariant()}${extra})`,
  );

console.log(
  `GPT-2-small-shaped (12 x 12 heads, 768 wide, vocab ${V}, BF16), T = ${T}, Node ${process.version}`,
);
line('forward (attention, T = 16)', await median(() => model.forward(clean)));
line('headScores (3 kinds)', await median(() => model.headScores(clean)));
line('logitAttribution', await median(() => model.logitAttribution(clean, { token, against })));
const [head, h] = await time(() => model.patch({ clean, corrupted, token, against, component: 'head' }));
line(
  "patch 'head' (144 heads)",
  head,
  `, target 10 s; LD clean ${h.cleanDiff.toFixed(4)}, corrupted ${h.corruptedDiff.toFixed(4)}`,
);
const [res] = await time(() => model.patch({ clean, corrupted, token, against, component: 'residual' }));
line("patch 'residual' (12 x 16)", res, ', target 10 s');
let exact = null,
  exactTime = { wall: head.wall * T, cpu: head.cpu * T }; // 'head' x T: an estimate
if (all) {
  const [hp, r] = await time(() =>
    model.patch({ clean, corrupted, token, against, component: 'head-position' }),
  );
  line("patch 'head-position' (144 x 16)", hp, ', target 90 s');
  exact = r.result.data;
  exactTime = hp;
}
const [ap, a] = await time(() =>
  model.attributionPatch({ clean, corrupted, token, against, component: 'head-position' }),
);
const correlation = exact ? pearson(exact, a.result.data).toFixed(3) : "(run --all for patch's values)";
line(
  "attributionPatch 'head-position'",
  ap,
  `; ${(exactTime.wall / ap.wall).toFixed(1)}x faster than patch${all ? '' : " (estimated: 'head' x 16)"}, target 30x; correlation ${correlation}`,
);
const ig = (ids) => () => model.saliency(ids, { token, against, method: 'integrated-gradients', steps: 32 });
const [s16, r16] = await time(ig(clean));
line('saliency IG 32 steps, T = 16', s16, `, target 8 s; delta ${r16.delta.toExponential(2)}`);
const long = Array.from({ length: 128 }, (_, i) => clean[i % T]);
const [s128, r128] = await time(ig(long));
line('saliency IG 32 steps, T = 128', s128, `; delta ${r128.delta.toExponential(2)}`);
model.dispose();

function pearson(x, y) {
  const n = x.length;
  let mx = 0,
    my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}
