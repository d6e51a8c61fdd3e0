#!/usr/bin/env node
// What exact LayerNorm statistics (double mean/variance/centring) and the overflow checks cost:
// the demo shape (B = 1, T = 16, D = 64, 4 heads) MultiHeadAttention.forward with and
// without its LayerNorm, and layerNorm alone on (16, 64) and (512, 512), here against another
// checkout (built: dist/ present), each measured in the same process, interleaved.
//
//   node bench/layernorm_cost.mjs --before /path/to/older/checkout
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const beforeDir = args.includes('--before') ? resolve(args[args.indexOf('--before') + 1]) : null;
const variant = 'simd128';

async function load(dir) {
  const lib = await import(pathToFileURL(resolve(dir, 'src/js/index.js')).href + '?bench');
  await lib.init({ variant, threads: 1 }); // one thread: the cost of the exact LayerNorm alone
  const x = lib.seededNormal([1, 16, 64], 1);
  const mhaLn = new lib.MultiHeadAttention({
    embedDim: 64,
    numHeads: 4,
    seed: 2,
    layerNorm: true,
    residual: true,
  });
  const mha = new lib.MultiHeadAttention({ embedDim: 64, numHeads: 4, seed: 2 });
  const small = lib.seededNormal([16, 64], 3);
  const big = new lib.Tensor(
    lib.seededNormal([512, 512], 4).data.map((v) => v + 1e4),
    [512, 512],
  );
  return {
    'MHA forward, demo shape, + residual + LayerNorm': () => mhaLn.forward(x),
    'MHA forward, demo shape': () => mha.forward(x),
    'layerNorm (16, 64)': () => lib.layerNorm(small),
    'layerNorm (512, 512), rows 1e4 + N(0,1)': () => lib.layerNorm(big),
  };
}

/** Median µs per call over `samples` batches of `reps` calls. */
function time(fn, samples = 200, reps = 20) {
  const out = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) fn();
    out.push(((performance.now() - t0) * 1000) / reps);
  }
  out.sort((a, b) => a - b);
  return out[out.length >> 1];
}

const here = await load(resolve(new URL('..', import.meta.url).pathname));
const before = beforeDir ? await load(beforeDir) : null;
console.log(`build ${variant}; median µs per call${before ? ' (before → now, ratio)' : ''}`);
for (const name of Object.keys(here)) {
  for (let w = 0; w < 50; w++) {
    here[name]();
    before?.[name]();
  } // warm-up
  const rounds = [];
  for (let r = 0; r < 5; r++) rounds.push([time(here[name]), before ? time(before[name]) : null]); // interleaved
  const med = (k) => rounds.map((x) => x[k]).sort((a, b) => a - b)[2];
  const now = med(0);
  console.log(
    before
      ? `${name}: ${med(1).toFixed(2)} → ${now.toFixed(2)} µs (${(now / med(1)).toFixed(3)}×)`
      : `${name}: ${now.toFixed(2)} µs`,
  );
}
