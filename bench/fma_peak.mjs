// The f32x4 arithmetic peak of this machine as V8 runs WebAssembly: a hand-assembled module whose
// loop is nothing but independent multiply-adds on 12 accumulators (enough to cover the FMA latency
// on two pipes: 4 cycles × 2 pipes = 8 in flight), unrolled 4×, so the loop branch is ~2% of the
// instructions. Two kernels:
//   relaxed: acc = f32x4.relaxed_madd(acc, a, b)      (one fused multiply-add per lane, 2 flops)
//   simd128: acc = f32x4.add(f32x4.mul(acc, a), b)    (what the SIMD128 build has, 2 flops)
// acc·a + b with a = 0.999 and b = a² converges to b/(1 − a) ≈ 998: no overflow, no denormals.

const kAccumulators = 12;
const kUnroll = 4;
const kFlopsPerIteration = kAccumulators * kUnroll * 4 * 2; // lanes × (multiply + add)

const OP = {
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Const: 0x41,
  i32Sub: 0x6b,
  brIf: 0x0d,
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  void: 0x40,
};
const SIMD = {
  splat: [0xfd, 0x13], // f32x4.splat
  extractLane0: [0xfd, 0x1f, 0x00], // f32x4.extract_lane 0
  add: [0xfd, 0xe4, 0x01], // f32x4.add
  mul: [0xfd, 0xe6, 0x01], // f32x4.mul
  relaxedMadd: [0xfd, 0x85, 0x02], // f32x4.relaxed_madd (a · b + c)
};

function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const vector = (items) => [...leb(items.length), ...items.flat()];

/**
 * (func (export "run") (param $n i32) (param $x f32) (result f32)): $n ≥ 1 loop iterations of
 * kAccumulators × kUnroll multiply-adds; returns lane 0 of the sum of the accumulators.
 */
export function peakModuleBytes(kind) {
  const a = 2 + kAccumulators; // locals: 0 $n, 1 $x, 2.. accumulators, then a and b (v128)
  const b = a + 1;
  const body = [];
  body.push(OP.localGet, 1, ...SIMD.splat, OP.localSet, a); // a = splat(x)
  body.push(OP.localGet, 1, ...SIMD.splat, OP.localGet, a, ...SIMD.mul, OP.localSet, b); // b = x²
  body.push(OP.block, OP.void, OP.loop, OP.void);
  for (let u = 0; u < kUnroll; u++) {
    for (let i = 0; i < kAccumulators; i++) {
      const acc = 2 + i;
      if (kind === 'relaxed')
        body.push(OP.localGet, acc, OP.localGet, a, OP.localGet, b, ...SIMD.relaxedMadd);
      else body.push(OP.localGet, acc, OP.localGet, a, ...SIMD.mul, OP.localGet, b, ...SIMD.add);
      body.push(OP.localSet, acc);
    }
  }
  body.push(OP.localGet, 0, OP.i32Const, 1, OP.i32Sub, OP.localTee, 0, OP.brIf, 0, OP.end, OP.end);
  body.push(OP.localGet, 2);
  for (let i = 1; i < kAccumulators; i++) body.push(OP.localGet, 2 + i, ...SIMD.add);
  body.push(...SIMD.extractLane0, OP.end);
  const locals = [1, ...leb(kAccumulators + 2), 0x7b]; // one group of v128 locals
  const func = [...locals, ...body];
  const name = [...'run'].map((c) => c.charCodeAt(0));
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vector([[0x60, 2, 0x7f, 0x7d, 1, 0x7d]])), // type 0: (i32, f32) → f32
    ...section(3, vector([[0]])), // function 0 has type 0
    ...section(7, vector([[...leb(name.length), ...name, 0x00, 0]])), // export "run" = func 0
    ...section(10, vector([[...leb(func.length), ...func]])),
  ]);
}

/**
 * GFLOP/s of the kernel: warm-up calls until V8 has tiered the function up (wasm has no on-stack
 * replacement, so only calls that start after the tier-up run optimised code), then the best of
 * `trials` calls of ~`callMs` each. null when the engine cannot compile it (no relaxed SIMD).
 */
export async function measurePeak(kind, { warmupMs = 300, callMs = 40, trials = 7 } = {}) {
  const bytes = peakModuleBytes(kind);
  if (!WebAssembly.validate(bytes)) return null;
  const { instance } = await WebAssembly.instantiate(bytes);
  const run = instance.exports.run;
  let n = 1000;
  for (const t0 = performance.now(); performance.now() - t0 < warmupMs;) run(n, 0.999);
  // Size one call to ~callMs from a timed probe.
  const p0 = performance.now();
  run(n * 10, 0.999);
  const probe = (performance.now() - p0) / (n * 10);
  n = Math.max(1000, Math.round(callMs / Math.max(probe, 1e-9)));
  let best = Infinity;
  for (let i = 0; i < trials; i++) {
    const t0 = performance.now();
    const r = run(n, 0.999);
    const dt = performance.now() - t0;
    if (!Number.isFinite(r)) throw new Error(`fma_peak ${kind}: the kernel produced ${r}`);
    best = Math.min(best, dt);
  }
  return { gflops: (n * kFlopsPerIteration) / best / 1e6, iterations: n, bestMs: best };
}
