// Loading the wasm module, its memory limit and threads, and what the loaded build runs.
import type { Tensor } from './tensor.js';

/** Options of {@link init}. */
export interface InitOptions {
  /**
   * Which build to load: `'auto'` (default) picks the relaxed-SIMD build where the engine supports
   * relaxed SIMD (its GEMM uses fused multiply-add; results may differ from `'simd128'` in the last
   * bits, and between CPUs), else the SIMD128 build. `'relaxed-simd'` on an engine without it is an
   * `INVALID_ARGUMENT` error. Only `'auto'` may be combined with `wasmUrl`, `wasmBinary` or `moduleUrl`,
   * which then load exactly what they name.
   */
  variant?: 'auto' | 'relaxed-simd' | 'simd128';
  /**
   * Threads the kernels may use (docs/threads.md): `'auto'` (default) = min(hardware threads, 8)
   * (`os.availableParallelism()` in Node, `navigator.hardwareConcurrency` in browsers), or a whole
   * number in [1, 64]. More than one loads the threaded build (`dist/threads/`) where threads can
   * run: Node ≥ 20.16, and pages or workers that are `crossOriginIsolated`. Elsewhere, and when
   * the pool does not start within 15 s, the single-thread build loads and everything runs the
   * same on one thread (one console warning when a count was asked for or the pool failed).
   * Results are bit-identical at every thread count. Only `'auto'` or 1 with `wasmUrl`,
   * `wasmBinary` or `moduleUrl`.
   */
  threads?: 'auto' | number;
  /**
   * The folder (URL) holding `attention_core.wasm`, `attention_core_relaxed.wasm` and the
   * `threads/` folder of the threaded builds, for
   * bundlers that do not copy `new URL(…, import.meta.url)` assets (esbuild); the build is still
   * chosen by `variant`. Not combinable with `wasmUrl`, `wasmBinary` or `moduleUrl`.
   */
  wasmBaseUrl?: string | URL;
  /** Where to fetch the `.wasm` from (default: the package's own, via `import.meta.url`). */
  wasmUrl?: string | URL;
  /** The `.wasm` bytes, to skip fetching. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Another build of the Emscripten module (e.g. the scalar benchmark build). */
  moduleUrl?: string | URL;
}

/** Loads the wasm module once (idempotent; every caller shares one instance). */
export function init(options?: InitOptions): Promise<unknown>;

/** Portable ~N(0, 1) values, identical on every platform for a seed (e.g. token embeddings). */
export function seededNormal(shape: number[], seed?: number): Tensor;

/**
 * Sets the byte limit of one call's buffers (default 1 GiB); bigger work throws `TOO_LARGE`. The
 * limit also covers a call's inputs, checked before they are copied into the wasm heap.
 * @param bytes a whole number in [1, 2^53); anything else throws `INVALID_ARGUMENT`.
 */
export function setMemoryLimit(bytes: number): void;
export function memoryLimit(): number;
/** The kernels the loaded build runs: `'relaxed-simd'`, `'simd128'` or `'scalar'`. */
export function kernelVariant(): 'relaxed-simd' | 'simd128' | 'scalar';

/** Threads the kernels use now: 1 … the pool {@link init} started (1 with the single-thread build). */
export function threadCount(): number;
/**
 * Uses `n` threads from now on (results do not change, only the speed).
 * @param n a whole number in [1, pool size] (the pool {@link init} started; 1 with the single-thread
 *   build); anything else throws `INVALID_ARGUMENT`.
 */
export function setThreadCount(n: number): void;

/** Whether this engine runs WebAssembly relaxed SIMD (then `init()` loads the relaxed-SIMD build). */
export function relaxedSimdSupported(): boolean;
/**
 * Wasm heap size, bytes malloc'ed and not freed inside it, and count of undisposed handles (leak
 * checks); the heap peak counter: `bytesInUse`, the bytes the library's C++ holds now (every
 * operator new, at the allocator's usable size), and `peakBytesInUse`, the most it held since
 * {@link resetMemoryPeak} (or since init).
 */
export function memoryStats(): {
  heapBytes: number;
  heapUsedBytes: number;
  liveHandles: number;
  bytesInUse: number;
  peakBytesInUse: number;
};
/** Starts `memoryStats().peakBytesInUse` again from the bytes in use now. */
export function resetMemoryPeak(): void;
