// This project's contenders: the SIMD128 wasm build (dist/), the relaxed-SIMD build
// (dist/attention_core_relaxed.wasm: the same with fused multiply-add in the GEMM), the scalar wasm
// build (dist-scalar/), all through the public wrapper src/js/index.js, and the native build (a
// child process running bench/native_bench.cpp). Same contender shape as peers.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wrapperUrl = pathToFileURL(path.join(root, 'src/js/index.js'));
const { relaxedSimdSupported } = await import(wrapperUrl.href);

export const simdModule = path.join(root, 'dist/attention_core.mjs');
export const relaxedWasm = path.join(root, 'dist/attention_core_relaxed.wasm');
// ATTN_BENCH_SCALAR_MODULE: another scalar build's .mjs (e.g. one built outside the tree).
export const scalarModule =
  process.env.ATTN_BENCH_SCALAR_MODULE ?? path.join(root, 'dist-scalar/attention_core.mjs');

/**
 * A separate instance of the wrapper (and so of the wasm module). Node caches ES modules by URL,
 * query included, so `index.js?instance=x` is a fresh copy of the wrapper with its own init():
 * the scalar build gets its own instance, and the T = 16 384 run gets a fresh heap whose size then
 * is exactly that run's peak.
 */
export async function loadWrapper(instance, initOptions) {
  const url = new URL(wrapperUrl);
  url.searchParams.set('instance', instance);
  const api = await import(url.href);
  await api.init(initOptions);
  return api;
}

/** The MHA problem p's weights as MultiHeadAttention's state dict (shared with bench/threads.mjs). */
export function stateDict(p) {
  const { E, weights: w } = p;
  return {
    in_proj_weight: { shape: [3 * E, E], data: w.inProjWeight },
    in_proj_bias: { shape: [3 * E], data: w.inProjBias },
    'out_proj.weight': { shape: [E, E], data: w.outProjWeight },
    'out_proj.bias': { shape: [E], data: w.outProjBias },
  };
}

/**
 * Contender over a wrapper instance. Each timed call: wrap x (B, T, E) in a Tensor, forward
 * (copies x into the heap, computes, copies y (and the weights) out), return y's Float32Array.
 */
function wrapperContender({
  name,
  group,
  note,
  instance,
  initOptions,
  kernels,
  needWeights,
  available,
  missingNote,
}) {
  let api = null;
  return {
    name,
    group,
    note,
    needWeights,
    available,
    missingNote,
    async load() {
      api ??= await loadWrapper(instance, initOptions);
      const variant = api.kernelVariant();
      if (variant !== kernels)
        throw new Error(`${name}: the module reports kernels '${variant}', expected '${kernels}'`);
    },
    /**
     * freshInstance: a new wasm instance for this shape, so its heap size is this shape's peak
     * (the T = 16 384 memory target); warmWith: a small problem run once first on that instance
     * (compiles and tiers up the wasm code without growing the heap much).
     */
    async prepare(p, { freshInstance, warmWith } = {}) {
      const a = freshInstance ? await loadWrapper(`${instance}-${freshInstance}`, initOptions) : api;
      if (warmWith) {
        const warm = new a.MultiHeadAttention({ embedDim: warmWith.E, numHeads: warmWith.H });
        warm.forward(new a.Tensor(warmWith.x, [warmWith.B, warmWith.T, warmWith.E]), null, null, {
          needWeights,
        });
        warm.dispose();
      }
      const mha = new a.MultiHeadAttention({ embedDim: p.E, numHeads: p.H });
      mha.loadStateDict(stateDict(p));
      const shape = [p.B, p.T, p.E];
      return {
        async run() {
          const r = mha.forward(new a.Tensor(p.x, shape), null, null, { needWeights });
          return r.output.data;
        },
        heapBytes: () => a.memoryStats().heapBytes,
        dispose: () => mha.dispose(),
      };
    },
  };
}

const simdBuild = {
  instance: 'simd',
  initOptions: { variant: 'simd128', threads: 1 }, // the one-thread table (threads: bench/threads.mjs)
  kernels: 'simd128',
  available: () => existsSync(simdModule),
  missingNote: 'dist/attention_core.mjs is missing: run `npm run build`',
};

export const oursSimd = wrapperContender({
  ...simdBuild,
  name: 'ours: wasm SIMD128',
  group: 'ours',
  note: 'src/js/index.js + dist/attention_core.wasm, MultiHeadAttention.forward(needWeights: false)',
  needWeights: false,
});

export const oursSimdWeights = wrapperContender({
  ...simdBuild,
  name: 'ours: wasm SIMD128, needWeights',
  group: 'ours-weights',
  note: 'as above with needWeights: true (full scores; averaged (B, T, T) weights copied out too)',
  needWeights: true,
});

export const oursRelaxed = wrapperContender({
  name: 'ours: wasm relaxed SIMD (FMA)',
  group: 'ours-relaxed',
  note:
    'dist/attention_core_relaxed.wasm: the SIMD128 build with f32x4.relaxed_madd in the GEMM ' +
    '(what init() loads where relaxed SIMD is on), needWeights: false',
  instance: 'relaxed',
  initOptions: { variant: 'relaxed-simd', threads: 1 },
  kernels: 'relaxed-simd',
  needWeights: false,
  available: () => existsSync(relaxedWasm) && relaxedSimdSupported(),
  missingNote: existsSync(relaxedWasm)
    ? 'this Node has no relaxed SIMD (Node 20: bench/run.mjs re-runs itself with --experimental-wasm-relaxed-simd)'
    : 'dist/attention_core_relaxed.wasm is missing: run `npm run build`',
});

export const oursScalar = wrapperContender({
  name: 'ours: wasm scalar',
  group: 'ours-scalar',
  note: 'the same wrapper over dist-scalar/ (ATTN_SIMD=OFF: scalar kernel twins), needWeights: false',
  instance: 'scalar',
  initOptions: { moduleUrl: pathToFileURL(scalarModule) },
  kernels: 'scalar',
  needWeights: false,
  available: () => existsSync(scalarModule),
  missingNote:
    'dist-scalar/attention_core.mjs is missing: `npm run bench` builds it (scripts/build.sh --bench)',
});

// ---- native ---------------------------------------------------------------------------------------

const nativeCandidates = [
  path.join(root, 'build/native/native_bench'),
  path.join(root, 'build/native/bench/native_bench'),
];
const nativeLib = path.join(root, 'build/native/libattn_core.a');
const nativeFallback = path.join(root, 'build/bench-native/native_bench');

/**
 * The native_bench binary: the CMake target if built, else (full runs only) compiled here with
 * g++ against build/native/libattn_core.a with the project's flags. null when neither is possible.
 */
function findNativeBinary({ allowCompile }) {
  const built = nativeCandidates.find((f) => existsSync(f));
  if (built) return built;
  if (!existsSync(nativeLib)) return null;
  const source = path.join(root, 'bench/native_bench.cpp');
  const fresh =
    existsSync(nativeFallback) &&
    statSync(nativeFallback).mtimeMs > Math.max(statSync(source).mtimeMs, statSync(nativeLib).mtimeMs);
  if (fresh) return nativeFallback;
  if (!allowCompile) return null;
  mkdirSync(path.dirname(nativeFallback), { recursive: true });
  console.log('  (compiling bench/native_bench.cpp against build/native/libattn_core.a)');
  execFileSync(
    'g++',
    [
      '-std=c++17',
      '-O3',
      '-DNDEBUG',
      '-ffp-contract=off',
      `-I${path.join(root, 'src')}`,
      '-isystem',
      '/usr/include/eigen3',
      source,
      nativeLib,
      '-o',
      nativeFallback,
    ],
    { stdio: 'inherit' },
  );
  return nativeFallback;
}

/** Problem file for native_bench: int32 B, T, E, H then the float32 arrays (see native_bench.cpp). */
function writeProblem(file, p) {
  const parts = [
    Int32Array.of(p.B, p.T, p.E, p.H),
    p.x,
    p.weights.inProjWeight,
    p.weights.inProjBias,
    p.weights.outProjWeight,
    p.weights.outProjBias,
  ];
  writeFileSync(file, Buffer.concat(parts.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))));
}

export function nativeContender({ allowCompile }) {
  let binary = null;
  return {
    name: 'ours: native (g++ -O3, scalar-twin kernels)',
    group: 'native',
    note: 'bench/native_bench.cpp: attn::MultiHeadAttention::forward(need_weights = false), own process',
    needWeights: false,
    external: true, // times itself; run.mjs takes its numbers instead of timing run()
    available: () => (binary ??= findNativeBinary({ allowCompile })) !== null,
    missingNote:
      'no native_bench binary (build/native/native_bench) and no build/native/libattn_core.a: ' +
      '`npm run bench` builds it (scripts/build.sh --bench)',
    async load() {},
    /** Runs the binary (its own warm-up/N policy, or fixedRuns); returns the timing and output. */
    measure(p, { budgetMs, fixedRuns = 0 }) {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'attn-bench-'));
      try {
        writeProblem(path.join(dir, 'problem.bin'), p);
        const line = execFileSync(
          binary,
          [
            path.join(dir, 'problem.bin'),
            path.join(dir, 'y.bin'),
            String(budgetMs),
            '0',
            ...(fixedRuns ? [String(fixedRuns)] : []),
          ],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        ).trim();
        const r = JSON.parse(line);
        const bytes = readFileSync(path.join(dir, 'y.bin'));
        const output = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
        return {
          medianMs: r.median_ms,
          runs: r.runs,
          output: output.slice(),
          variant: r.variant,
          memory:
            r.peak_heap_delta_bytes >= 0
              ? { kind: 'malloc', bytes: r.peak_heap_delta_bytes }
              : { kind: 'rss', bytes: r.peak_rss_delta_bytes },
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
