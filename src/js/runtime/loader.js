// init(): which build to load (single-thread or threaded, SIMD128 or relaxed SIMD, packaged or the
// caller's own) and loading it into a wrapper copy (runtime.js). index.js exports loaderApi(rt).init.
import { AttentionError } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { relaxedSimdSupported } from './relaxed-simd.js';
import { startThreaded, resolveThreads, whyNoThreads } from './threads.js';

const VARIANTS = ['auto', 'relaxed-simd', 'simd128'];

// The builds' .wasm files: single-thread and threaded (dist/threads/), each SIMD128 and relaxed SIMD.
// The single-thread pair shares one Emscripten glue (scripts/build.sh checks that the glues are
// identical but for the file name); each threaded binary has its own glue and worker script. Each
// URL is its own literal `new URL('…', import.meta.url)` and each glue its own literal import():
// bundlers (Vite, webpack, Rollup) follow only literals, and emit exactly the files named so.
const WASM_FILES = {
  'relaxed-simd': 'attention_core_relaxed.wasm',
  simd128: 'attention_core.wasm',
  'threads-relaxed-simd': 'threads/attention_core_threads_relaxed.wasm',
  'threads-simd128': 'threads/attention_core_threads.wasm',
};
function packagedWasmUrl(build) {
  switch (build) {
    case 'relaxed-simd':
      return new URL('../../../dist/attention_core_relaxed.wasm', import.meta.url);
    case 'threads-relaxed-simd':
      return new URL('../../../dist/threads/attention_core_threads_relaxed.wasm', import.meta.url);
    case 'threads-simd128':
      return new URL('../../../dist/threads/attention_core_threads.wasm', import.meta.url);
    default:
      return new URL('../../../dist/attention_core.wasm', import.meta.url);
  }
}
function packagedGlue(build) {
  switch (build) {
    case 'threads-relaxed-simd':
      return import('../../../dist/threads/attention_core_threads_relaxed.mjs');
    case 'threads-simd128':
      return import('../../../dist/threads/attention_core_threads.mjs');
    default:
      return import('../../../dist/attention_core.mjs');
  }
}

// A directory URL (ending in '/') from wasmBaseUrl.
function baseUrl(value) {
  let url;
  try {
    url = new URL(value, globalThis.location?.href);
  } catch {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `wasmBaseUrl must be a URL (string or URL), got ${describe(value)}`,
    );
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

// The kernels init() loads ('relaxed-simd' or 'simd128'), or null for the caller's own build.
function chooseKernels(options) {
  const variant = options.variant ?? 'auto';
  if (!VARIANTS.includes(variant)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `variant must be one of ${VARIANTS.join(', ')}; got ${describe(variant)}`,
    );
  }
  if (options.wasmUrl || options.wasmBinary || options.moduleUrl) {
    if (variant !== 'auto' || options.wasmBaseUrl != null) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'variant and wasmBaseUrl cannot be combined with wasmUrl, wasmBinary or moduleUrl',
      );
    }
    if (options.threads != null && options.threads !== 'auto' && options.threads !== 1) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'threads cannot be combined with wasmUrl, wasmBinary or moduleUrl (your own build runs on one thread)',
      );
    }
    return null;
  }
  const supported = relaxedSimdSupported();
  if (variant === 'relaxed-simd' && !supported) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      'variant "relaxed-simd": this engine has no WebAssembly relaxed SIMD',
    );
  }
  return variant === 'relaxed-simd' || (variant === 'auto' && supported) ? 'relaxed-simd' : 'simd128';
}

function wasmUrlOf(build, options) {
  if (options.wasmBaseUrl != null) return new URL(WASM_FILES[build], baseUrl(options.wasmBaseUrl));
  return packagedWasmUrl(build);
}

// The single-thread module: the packaged build of `kernels`, or the caller's own build.
async function loadSingleThread(kernels, options) {
  // moduleUrl (the caller's own glue) is a runtime URL: no literal for bundlers to follow.
  const { default: createAttentionModule } = kernels
    ? await packagedGlue(kernels)
    : await import(/* @vite-ignore */ /* webpackIgnore: true */ options.moduleUrl.toString());
  const wasmUrl = kernels ? wasmUrlOf(kernels, options) : options.wasmUrl;
  const settings = {};
  if (options.wasmBinary) settings.wasmBinary = options.wasmBinary;
  if (wasmUrl) settings.locateFile = () => wasmUrl.toString();
  return createAttentionModule(settings);
}

/**
 * Loads and instantiates the wasm module once; later calls return the same promise.
 * `variant`: 'auto' (default: the relaxed-SIMD build where the engine supports it, else SIMD128),
 * 'relaxed-simd' or 'simd128'. `threads`: 'auto' (default: min(hardware threads, 8)) or a count ≥ 1;
 * more than one loads the threaded build where threads can run (Node; browsers when
 * crossOriginIsolated), else the single-thread build (with one console warning when a count was
 * asked for, or when the pool does not start). `wasmBaseUrl`: the directory holding the .wasm files
 * (and threads/), for bundlers that do not copy `new URL(…, import.meta.url)` assets (esbuild).
 * @param {{ variant?: 'auto'|'relaxed-simd'|'simd128', threads?: 'auto'|number, wasmBaseUrl?: string|URL,
 *           wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, moduleUrl?: string|URL }} [options]
 */
function init(runtime, options = {}) {
  let kernels, threads;
  try {
    options = checkOptions(
      options,
      ['variant', 'threads', 'wasmBaseUrl', 'wasmUrl', 'wasmBinary', 'moduleUrl'],
      'init option',
    );
    threads = resolveThreads(options.threads ?? 'auto');
    kernels = chooseKernels(options);
  } catch (error) {
    return Promise.reject(error); // init reports every failure through its promise
  }
  return runtime.load(async () => {
    const why = kernels && threads > 1 ? whyNoThreads() : 'one thread';
    if (why === null) {
      const build = `threads-${kernels}`;
      try {
        const { default: createModule } = await packagedGlue(build);
        const workerBase =
          options.wasmBaseUrl != null ? new URL('threads/', baseUrl(options.wasmBaseUrl)) : null;
        return await startThreaded(createModule, wasmUrlOf(build, options), threads, { workerBase });
      } catch (error) {
        console.warn(
          `attention-wasm: the threaded build did not start (${error?.message ?? error}); running on one thread`,
        );
      }
    } else if (kernels && threads > 1 && options.threads != null && options.threads !== 'auto') {
      console.warn(`attention-wasm: threads: ${threads} asked for, but ${why}; running on one thread`);
    }
    return loadSingleThread(kernels, options);
  });
}

/** init() of one wrapper copy. */
export function loaderApi(runtime) {
  return { init: (...args) => init(runtime, ...args) };
}
