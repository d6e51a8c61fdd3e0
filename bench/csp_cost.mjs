// Per-call cost of MultiHeadAttention.forward on the demo shape (B = 1, T = 16, D = 64, 4 heads),
// plain and with the trace the demo asks for: the number behind docs/security.md's
// "Content-Security-Policy" section (Embind linked with -sDYNAMIC_EXECUTION=0 calls through a
// generic invoker instead of a `new Function`-generated one). Build, then:
//   node bench/csp_cost.mjs [rounds=5]
// Each round: 400 samples of 25 calls each after a warm-up; prints the median µs per call of each
// round, so the spread across rounds (the machine may be shared) is visible.
import { performance } from 'node:perf_hooks';
import { init, MultiHeadAttention, seededNormal } from '../src/js/index.js';

await init({ threads: 1 }); // one thread: the cost of the CSP-safe glue alone
const rounds = Number(process.argv[2] ?? 5);
const mha = new MultiHeadAttention({ embedDim: 64, numHeads: 4, seed: 7 });
const x = seededNormal([1, 16, 64], 1);
const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s[s.length >> 1];
};

function measure(opts) {
  for (let i = 0; i < 500; i++) mha.forward(x, null, null, opts);
  const samples = [];
  for (let s = 0; s < 400; s++) {
    const t0 = performance.now();
    for (let i = 0; i < 25; i++) mha.forward(x, null, null, opts);
    samples.push(((performance.now() - t0) * 1000) / 25);
  }
  return median(samples);
}

const out = { plain: [], trace: [] };
for (let r = 0; r < rounds; r++) {
  out.plain.push(measure(undefined));
  out.trace.push(measure({ trace: true }));
}
for (const [k, v] of Object.entries(out)) {
  const s = [...v].sort((p, q) => p - q);
  console.log(
    `${k.padEnd(6)} µs/call: median ${median(v).toFixed(2)}  (rounds: ${v.map((t) => t.toFixed(2)).join(', ')}; min ${s[0].toFixed(2)}, max ${s.at(-1).toFixed(2)})`,
  );
}
mha.dispose();
