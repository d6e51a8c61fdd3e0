// The peer runtimes: @tensorflow/tfjs-backend-wasm and onnxruntime-web (wasm EP), both forced to
// one thread and their SIMD binaries, each computing the benchmark's MHA with the same weights.
//
// A contender is { name, group (its key in the tables), short, note, available(), load(),
// prepare(problem) → Promise<runner> } where runner = { run(): Promise<Float32Array> (x in JS →
// y in JS, transfers included), heapBytes(), dispose() }. Peers run in this process; their wasm
// heaps are found by wasm_memory.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { fusedMhaModel, plainMhaModel, transpose2d } from './onnx_graph.mjs';
import { captureMemory, heapBytes } from './wasm_memory.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---- tfjs-backend-wasm --------------------------------------------------------------------------

let tf = null;

async function loadTfjs() {
  if (tf) return;
  tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // In Node the binaries must be given as file paths. Only the single-thread SIMD binary is
  // mapped to a real file: if tfjs ever picked another one, loading fails loudly instead of
  // silently benchmarking the non-SIMD build.
  const dir = path.join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist');
  const missing = path.join(dir, 'NOT-USED-by-this-benchmark.wasm');
  wasm.setWasmPaths({
    'tfjs-backend-wasm-simd.wasm': path.join(dir, 'tfjs-backend-wasm-simd.wasm'),
    'tfjs-backend-wasm.wasm': missing,
    'tfjs-backend-wasm-threaded-simd.wasm': missing,
  });
  wasm.setThreadsCount(1);
  await captureMemory('tfjs', async () => {
    if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend failed to initialise');
    await tf.ready();
  });
  if (!tf.env().getBool('WASM_HAS_SIMD_SUPPORT')) throw new Error('tfjs: SIMD not detected');
  if (tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')) {
    throw new Error('tfjs: the threaded binary would be used; this benchmark is single-thread');
  }
}

/**
 * tfjs MHA, written the way a tfjs user gets the most out of the wasm backend:
 *   1. q/k/v = fused.matMul(x, Wᵀ, bias)  (B·T, E) each (XNNPACK GEMM with fused bias)
 *   2. heads: reshape (B, T, H, dk) → transpose (B, H, T, dk) → (B·H, T, dk); q pre-scaled by 1/√dk
 *   3. weights = softmax(q·kᵀ) (B·H, T, T); context = weights·v (B·H, T, dk)
 *   4. merge heads (B·T, E); y = fused.matMul(context, Woᵀ, bo)
 */
async function prepareTfjs(p) {
  const { B, T, E, H, weights: w } = p;
  const dk = E / H;
  const part = (i) => transpose2d(w.inProjWeight.subarray(i * E * E, (i + 1) * E * E), E, E);
  const W = [0, 1, 2].map((i) => tf.tensor2d(part(i), [E, E])); // Wᵀ (E, E)
  const bias = [0, 1, 2].map((i) => tf.tensor1d(w.inProjBias.slice(i * E, (i + 1) * E)));
  const WoT = tf.tensor2d(transpose2d(w.outProjWeight, E, E), [E, E]);
  const bo = tf.tensor1d(w.outProjBias);
  const scale = tf.scalar(1 / Math.sqrt(dk));
  // tfjs-core alone has no chained tensor methods: use the functional ops.
  const split = (t) => tf.reshape(tf.transpose(tf.reshape(t, [B, T, H, dk]), [0, 2, 1, 3]), [B * H, T, dk]);
  const forward = (x2d) => {
    const [q, k, v] = [0, 1, 2].map((i) => tf.fused.matMul({ a: x2d, b: W[i], bias: bias[i] }));
    const probs = tf.softmax(tf.matMul(tf.mul(split(q), scale), split(k), false, true));
    const context = tf.matMul(probs, split(v)); // (B·H, T, dk)
    const merged = tf.reshape(tf.transpose(tf.reshape(context, [B, H, T, dk]), [0, 2, 1, 3]), [B * T, E]);
    return tf.fused.matMul({ a: merged, b: WoT, bias: bo });
  };
  return {
    async run() {
      const y = tf.tidy(() => forward(tf.tensor2d(p.x, [B * T, E])));
      const out = y.dataSync(); // Float32Array copied out of the wasm heap
      y.dispose();
      return out;
    },
    heapBytes: () => heapBytes('tfjs'),
    dispose() {
      tf.dispose([...W, ...bias, WoT, bo, scale]);
    },
  };
}

export const tfjsContender = {
  name: 'tfjs-backend-wasm',
  group: 'tfjs',
  short: 'tfjs',
  note: '@tensorflow/tfjs-backend-wasm, SIMD binary, 1 thread',
  available: () => true,
  load: loadTfjs,
  prepare: prepareTfjs,
};

// ---- onnxruntime-web ----------------------------------------------------------------------------

let ort = null;

async function loadOrt() {
  if (ort) return;
  // The package's "node" export (dist/ort.node.min.mjs): the wasm EP with Node file loading.
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1; // no worker threads: single-thread like every other contender
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  // 1.30 ships only ort-wasm-simd-threaded.wasm (SIMD is not optional); numThreads = 1 runs it on
  // the calling thread.
  ort.env.wasm.wasmPaths = path.join(root, 'node_modules/onnxruntime-web/dist') + path.sep;
}

/**
 * An onnxruntime-web session of the MHA graph `makeModel` builds for problem p, on `threads` intra-op
 * threads (env.wasm.numThreads must allow them): { run() → y (a JS-owned Float32Array), dispose() }.
 * Shared with bench/threads.mjs.
 */
export async function ortMhaSession(ortModule, p, makeModel, threads = 1) {
  const { B, T, E, H } = p;
  const session = await ortModule.InferenceSession.create(makeModel(E, H, p.weights), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  });
  return {
    async run() {
      const result = await session.run({ x: new ortModule.Tensor('float32', p.x, [B, T, E]) });
      const out = result.y.data; // already a JS-owned Float32Array
      for (const t of Object.values(result)) t.dispose?.();
      return out;
    },
    dispose: () => session.release(),
  };
}

function ortPrepare(makeModel) {
  return async (p) => {
    const s = await captureMemory('ort', () => ortMhaSession(ort, p, makeModel, 1));
    return { ...s, heapBytes: () => heapBytes('ort') };
  };
}

export const ortPlainContender = {
  name: 'onnxruntime-web (plain ops)',
  group: 'ort-plain',
  short: 'plain ops',
  note: 'onnxruntime-web wasm EP, 1 thread: MatMul/Add/Reshape/Transpose/MatMul/Mul/Softmax/MatMul/Transpose/Reshape/MatMul/Add',
  available: () => true,
  load: loadOrt,
  prepare: ortPrepare(plainMhaModel),
};

export const ortFusedContender = {
  name: 'onnxruntime-web (com.microsoft.Attention)',
  group: 'ort-fused',
  short: 'com.microsoft.Attention',
  note: 'onnxruntime-web wasm EP, 1 thread: fused com.microsoft.Attention + MatMul/Add out-projection',
  available: () => true,
  load: loadOrt,
  prepare: ortPrepare(fusedMhaModel),
};

export const ortVersion = () => ort?.env.versions?.web ?? '?';
export const tfjsVersion = () => tf?.version_core ?? '?';
