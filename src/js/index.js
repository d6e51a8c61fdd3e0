// attention-wasm: the public JS API over the wasm core. Hand-written; types in index.d.ts.
// Every function copies its inputs into the wasm heap and its results out of it, so results stay
// valid after later calls and memory growth. Errors are AttentionError with a `.code`.
// MultiHeadAttention.forward without masks, positional encoding, dropout, trace or requiresGrad
// takes a lean path: inputs go into buffers the handle keeps in the wasm heap (grown when needed,
// freed by dispose()), and one number-only call runs it; the results are still copies.
import { AttentionError, check } from './errors.js';
import { FAST_FLAG, FAST_IO } from './constants.js';
import { checkInt, checkNumber, checkOptions, checkSeed, describe } from './options.js';
import { relaxedSimdSupported } from './relaxed-simd.js';
import { backwardApi } from './backward.js';
import { positionsApi, rotaryOptions } from './positions.js';
import { pretrainedApi } from './pretrained.js';
import { tinyTransformerClass } from './model.js';
import { trainApi } from './train.js';
import { startThreaded, threadsApi, resolveThreads, whyNoThreads } from './threads.js';
import { gradRecord, mhaBackward } from './mha-backward.js';
import { SDPA_OPTIONS, commonOptions, createRuntime, layerNormOptions } from './runtime.js';
import { Tensor, asFloatTensor, asBoolTensor, fromCore, shapeSize } from './tensor.js';

export { AttentionError, Tensor, relaxedSimdSupported };
export { readSafetensorsMetadata } from './safetensors.js';
export { GENERATE_PAD } from './generation.js';
export { CONFIG_KEYS as PRETRAINED_CONFIG_KEYS } from './pretrained-config.js';
export { attentionRollout } from './interp.js';

// This copy's module and memory limit (runtime.js), shared with the functions of backward.js.
const runtime = createRuntime();
const { requireCore, checkInputBytes, Handle, newHandle } = runtime;
export const { scaledDotProductAttentionBackward, softmaxBackward, layerNormBackward } = backwardApi(runtime);
export const { applyRotary, applyRotaryBackward, alibiSlopes } = positionsApi(runtime);
export const { loadPretrained, PretrainedModel } = pretrainedApi(runtime);
// The model and training API (model.js, train.js) over the same runtime.
export const TinyTransformer = tinyTransformerClass(runtime);
export const { Trainer, createTask, evaluate } = trainApi(runtime, TinyTransformer);
export const { threadCount, setThreadCount } = threadsApi(runtime);

const VARIANTS = ['auto', 'relaxed-simd', 'simd128'];

// The builds' .wasm files: single-thread and threaded (dist/threads/), each SIMD128 and relaxed SIMD.
// The single-thread pair shares one Emscripten glue (scripts/build.sh checks that the glues are
// identical but for the file name); each threaded binary has its own glue and worker script. Each
// URL is its own literal `new URL('…', import.meta.url)` and each glue its own literal import():
// bundlers (Vite, webpack, Rollup) follow only literals, and emit exactly the files named so.
const WASM_FILES = {
  'relaxed-simd': 'attention_core_relaxed.wasm', simd128: 'attention_core.wasm',
  'threads-relaxed-simd': 'threads/attention_core_threads_relaxed.wasm', 'threads-simd128': 'threads/attention_core_threads.wasm',
};
function packagedWasmUrl(build) {
  switch (build) {
    case 'relaxed-simd': return new URL('../../dist/attention_core_relaxed.wasm', import.meta.url);
    case 'threads-relaxed-simd': return new URL('../../dist/threads/attention_core_threads_relaxed.wasm', import.meta.url);
    case 'threads-simd128': return new URL('../../dist/threads/attention_core_threads.wasm', import.meta.url);
    default: return new URL('../../dist/attention_core.wasm', import.meta.url);
  }
}
function packagedGlue(build) {
  switch (build) {
    case 'threads-relaxed-simd': return import('../../dist/threads/attention_core_threads_relaxed.mjs');
    case 'threads-simd128': return import('../../dist/threads/attention_core_threads.mjs');
    default: return import('../../dist/attention_core.mjs');
  }
}

// A directory URL (ending in '/') from wasmBaseUrl.
function baseUrl(value) {
  let url;
  try {
    url = new URL(value, globalThis.location?.href);
  } catch {
    throw new AttentionError('INVALID_ARGUMENT', `wasmBaseUrl must be a URL (string or URL), got ${describe(value)}`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

// The kernels init() loads ('relaxed-simd' or 'simd128'), or null for the caller's own build.
function chooseKernels(options) {
  const variant = options.variant ?? 'auto';
  if (!VARIANTS.includes(variant)) {
    throw new AttentionError('INVALID_ARGUMENT', `variant must be one of ${VARIANTS.join(', ')}; got ${describe(variant)}`);
  }
  if (options.wasmUrl || options.wasmBinary || options.moduleUrl) {
    if (variant !== 'auto' || options.wasmBaseUrl != null) {
      throw new AttentionError('INVALID_ARGUMENT', 'variant and wasmBaseUrl cannot be combined with wasmUrl, wasmBinary or moduleUrl');
    }
    if (options.threads != null && options.threads !== 'auto' && options.threads !== 1) {
      throw new AttentionError('INVALID_ARGUMENT', 'threads cannot be combined with wasmUrl, wasmBinary or moduleUrl (your own build runs on one thread)');
    }
    return null;
  }
  const supported = relaxedSimdSupported();
  if (variant === 'relaxed-simd' && !supported) {
    throw new AttentionError('INVALID_ARGUMENT', 'variant "relaxed-simd": this engine has no WebAssembly relaxed SIMD');
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
export function init(options = {}) {
  let kernels, threads;
  try {
    options = checkOptions(options, ['variant', 'threads', 'wasmBaseUrl', 'wasmUrl', 'wasmBinary', 'moduleUrl'], 'init option');
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
        const workerBase = options.wasmBaseUrl != null ? new URL('threads/', baseUrl(options.wasmBaseUrl)) : null;
        return await startThreaded(createModule, wasmUrlOf(build, options), threads, { workerBase });
      } catch (error) {
        console.warn(`attention-wasm: the threaded build did not start (${error?.message ?? error}); running on one thread`);
      }
    } else if (kernels && threads > 1 && options.threads != null && options.threads !== 'auto') {
      console.warn(`attention-wasm: threads: ${threads} asked for, but ${why}; running on one thread`);
    }
    return loadSingleThread(kernels, options);
  });
}

/** Softmax over the last axis. A row of all -Infinity gives zeros. */
export function softmax(x) {
  const m = requireCore();
  const t = asFloatTensor(x, 'x');
  checkInputBytes('softmax', [t]);
  return fromCore(check(m._softmax(t)).result);
}

/** LayerNorm over the last axis (biased variance, as nn.LayerNorm). */
export function layerNorm(x, options = {}) {
  const m = requireCore();
  const { eps, weight, bias } = layerNormOptions(options, 'layerNorm option');
  const t = asFloatTensor(x, 'x');
  checkInputBytes('layerNorm', [t, weight, bias]);
  return fromCore(check(m._layerNorm(t, eps, weight?.data ?? null, bias?.data ?? null)).result);
}

const MHA_OPTIONS = [...SDPA_OPTIONS.filter((k) => k !== 'enableGQA'), 'keyPaddingMask', 'averageWeights', 'positional', 'requiresGrad',
  'cache'];
// MultiHeadAttention has numKVHeads in its config instead of SDPA's enableGQA.
const MHA_HINTS = { enableGQA: 'the numKVHeads config option (grouped-query attention is a property of the module)' };

function results(r) {
  const out = { output: fromCore(r.output) };
  if (r.weights) out.weights = fromCore(r.weights);
  if (r.trace) out.trace = r.trace;
  return out;
}

/** softmax(q·kᵀ·scale + masks)·v over (..., T, d) tensors. */
export function scaledDotProductAttention(q, k, v, options = {}) {
  const m = requireCore();
  const o = commonOptions(checkOptions(options, SDPA_OPTIONS, 'scaledDotProductAttention option'));
  const qkv = [asFloatTensor(q, 'q'), asFloatTensor(k, 'k'), asFloatTensor(v, 'v')];
  checkInputBytes('scaled dot-product attention', [...qkv, o.mask, o.additiveMask]);
  const r = m._sdpa(...qkv, o);
  return results(check(r));
}

/** Sinusoidal positional encoding, a Tensor (length, dModel). */
export function sinusoidalEncoding(length, dModel, options = {}) {
  const m = requireCore();
  const { base = 10000 } = checkOptions(options, ['base'], 'sinusoidalEncoding option');
  const r = m._sinusoidal(checkInt(length, 'length'), checkInt(dModel, 'dModel'), checkNumber(base, 'base'));
  return fromCore(check(r).result);
}

/** Portable ~N(0, 1) values (Irwin–Hall), identical on every platform for a seed. */
export function seededNormal(shape, seed = 0) {
  const m = requireCore();
  const size = shapeSize(shape);
  return new Tensor(check(m._seededNormal(size, checkSeed(seed, 'seed'))).result, shape);
}

/** Bytes a single call may allocate for its buffers (default 1 GiB); larger work is TOO_LARGE. */
export function setMemoryLimit(bytes) {
  const m = requireCore();
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new AttentionError('INVALID_ARGUMENT', `bytes must be a whole number of bytes in [1, 2^53), got ${describe(bytes)}`);
  }
  m._setMemoryLimit(bytes);
  runtime.refreshMemoryLimit();
}

export function memoryLimit() {
  return requireCore()._memoryLimit();
}

/** 'relaxed-simd', 'simd128' or 'scalar': the kernels the loaded build runs. */
export function kernelVariant() {
  return requireCore()._kernelVariant();
}

/** Wasm heap size, bytes allocated in it, and the number of handles not yet disposed (leak checks). */
export function memoryStats() {
  const m = requireCore();
  return { heapBytes: m.HEAPU8.length, heapUsedBytes: m._heapUsedBytes(), liveHandles: runtime.liveHandles() };
}

const MHA_CONFIG = ['embedDim', 'numHeads', 'kdim', 'vdim', 'headDim', 'valueHeadDim', 'bias', 'addBiasKV',
  'addZeroAttn', 'residual', 'layerNorm', 'seed', 'numKVHeads', 'rope'];
// PyTorch's constructor arguments with no constructor counterpart here.
const MHA_CONFIG_HINTS = {
  dropout: 'forward(query, key, value, { dropout: { p, seed } }): dropout is a forward option here',
  num_key_value_heads: 'numKVHeads', numKvHeads: 'numKVHeads', kvHeads: 'numKVHeads', rotary: 'rope',
};

/** The rope config ({ base, style, dims } or true) in the binding's form, or null. */
function ropeConfig(rope) {
  if (rope == null || rope === false) return null;
  if (rope === true) return { base: 10000, interleaved: false, dims: 0 };
  if (typeof rope !== 'object' || Array.isArray(rope)) throw new AttentionError('INVALID_ARGUMENT', `rope must be true or { base, style, dims }, got ${describe(rope)}`);
  if ('offset' in rope) throw new AttentionError('INVALID_ARGUMENT', 'rope has no offset: positions come from the forward\'s positionOffset (or the KV cache)');
  const { base, interleaved, dims } = rotaryOptions(rope, 'rope config key');
  return { base, interleaved, dims };
}

export class MultiHeadAttention extends Handle {
  /**
   * @param {object} config see index.d.ts (MultiHeadAttentionConfig)
   */
  constructor(config = {}) {
    const {
      embedDim, numHeads = 1, kdim = 0, vdim = 0, headDim = 0, valueHeadDim = 0, bias = true,
      addBiasKV = false, addZeroAttn = false, residual = false, layerNorm = false, seed = 0, numKVHeads = 0, rope = null,
    } = checkOptions(config, MHA_CONFIG, 'MultiHeadAttention config key', MHA_CONFIG_HINTS);
    const lnOptions = typeof layerNorm === 'object' ? checkOptions(layerNorm, ['eps'], 'layerNorm config key') : {};
    const eps = lnOptions.eps ?? 1e-5;
    const ints = { embedDim, numHeads, kdim, vdim, headDim, valueHeadDim, numKVHeads };
    for (const [name, value] of Object.entries(ints)) checkInt(value, name);
    const ropeCore = ropeConfig(rope);
    const full = {
      ...ints, bias: Boolean(bias), addBiasKV: Boolean(addBiasKV), addZeroAttn: Boolean(addZeroAttn),
      residual: Boolean(residual), layerNorm: Boolean(layerNorm), layerNormEps: checkNumber(eps, 'layerNorm.eps'),
      seed: checkSeed(seed, 'seed'),
    };
    super(newHandle('MhaHandle', (h) => h.init(ropeCore ? { ...full, rope: ropeCore } : full)));
    const headDimResolved = this._handle.headDim();
    this.config = Object.freeze({
      ...full, kdim: kdim || embedDim, vdim: vdim || embedDim,
      headDim: headDimResolved, valueHeadDim: this._handle.valueHeadDim(), numKVHeads: this._handle.numKVHeads(),
      rope: ropeCore ? Object.freeze({ base: ropeCore.base, style: ropeCore.interleaved ? 'interleaved' : 'half',
        dims: ropeCore.dims || headDimResolved }) : null,
    });
  }

  get numKVHeads() { return this.config.numKVHeads; }

  /**
   * A KV cache for decoding with this module: up to maxLength tokens of `batch` sequences. Pass it as
   * forward(x, null, null, { cache, causal: true }). Dispose it when done.
   */
  createCache(options = {}) {
    const handle = this._live();
    const { maxLength, batch = 1 } = checkOptions(options, ['maxLength', 'batch'], 'createCache option');
    const cacheHandle = newHandle('KvCacheHandle', (c) => handle.createCache(c, checkInt(maxLength, 'maxLength'), checkInt(batch, 'batch')));
    return new KVCache(cacheHandle, this);
  }

  get embedDim() { return this.config.embedDim; }
  get numHeads() { return this.config.numHeads; }
  get headDim() { return this.config.headDim; }
  get valueHeadDim() { return this.config.valueHeadDim; }

  /** Sets parameters by PyTorch name; values are Tensors, { data, shape } or nested arrays. */
  loadStateDict(stateDict) {
    const handle = this._live();
    if (stateDict == null || typeof stateDict !== 'object' || Array.isArray(stateDict) || stateDict instanceof Tensor) {
      throw new AttentionError('INVALID_ARGUMENT', `stateDict must be an object of tensors, got ${describe(stateDict)}`);
    }
    for (const [name, value] of Object.entries(stateDict)) {
      const t = asFloatTensor(value, name);
      checkInputBytes(`parameter '${name}'`, [t]);
      check(handle.setParameter(name, t));
    }
    return this;
  }

  /** The parameters under PyTorch's names and layouts, as copies. */
  stateDict() {
    const handle = this._live();
    const out = {};
    for (const name of handle.parameterNames()) out[name] = fromCore(check(handle.getParameter(name)).result);
    return out;
  }

  /**
   * @param query (B, Tq, E) or (Tq, E)
   * @param [key] (B, Tk, kdim); omitted = self-attention
   * @param [value] (B, Tk, vdim); omitted = key
   */
  forward(query, key = null, value = null, options = {}) {
    const handle = this._live();
    if (this._grad) this._dropSaved(handle); // every forward replaces the saved state, even one that fails
    options = checkOptions(options, MHA_OPTIONS, 'forward option', MHA_HINTS);
    const q = asFloatTensor(query, 'query');
    const k = key == null ? null : asFloatTensor(key, 'key');
    const v = value == null ? null : asFloatTensor(value, 'value');
    if (options.cache != null) return this._forwardCached(handle, q, k, options);
    if (isLeanCall(options, q, k, v)) {
      checkInputBytes('multi-head attention', [q, k, v]);
      return this._forwardLean(handle, q, k, v, options);
    }
    const o = commonOptions(options);
    o.averageWeights = options.averageWeights ?? true;
    if (options.keyPaddingMask != null) o.keyPaddingMask = asBoolTensor(options.keyPaddingMask, 'keyPaddingMask', 'true = real token');
    if (options.positional != null) o.positional = asFloatTensor(options.positional, 'positional');
    o.requiresGrad = Boolean(options.requiresGrad);
    checkInputBytes('multi-head attention', [q, k, v, o.mask, o.additiveMask, o.keyPaddingMask, o.positional]);
    const r = results(check(handle.forward(q, k, v, o)));
    if (o.requiresGrad) this._grad = gradRecord(k, v);
    return r;
  }

  /**
   * Gradients of sum(output ⊙ gradOutput) for the latest forward, which must have had
   * `requiresGrad: true`: { inputs: { query, key?, value? }, params: { <stateDict name>: Tensor } }.
   * May be called again until the next forward or dispose().
   */
  backward(gradOutput) {
    return mhaBackward(runtime, this._live(), this._grad, gradOutput);
  }

  // forward with { cache }: self-attention of the new rows over every cached key (the core appends them).
  _forwardCached(handle, q, k, options) {
    const { cache } = options;
    if (!(cache instanceof KVCache) || cache._owner !== this) {
      throw new AttentionError('INVALID_ARGUMENT', `cache must come from this module's createCache(), got ${describe(cache)}`);
    }
    if (k != null) throw new AttentionError('INVALID_ARGUMENT', 'a KV cache is for self-attention: pass key and value as null');
    if (options.requiresGrad) throw new AttentionError('INVALID_ARGUMENT', 'requiresGrad is not supported with a KV cache (decoding is inference)');
    if (options.mask != null || options.additiveMask != null || options.keyPaddingMask != null) {
      throw new AttentionError('INVALID_ARGUMENT', 'masks and keyPaddingMask are not supported with a KV cache (causal, window and alibi are)');
    }
    if (options.positional != null) throw new AttentionError('INVALID_ARGUMENT', 'a positional table is not supported with a KV cache: use the rope config');
    const o = commonOptions(options);
    o.averageWeights = options.averageWeights ?? true;
    checkInputBytes('multi-head attention with a KV cache', [q]);
    return results(check(handle.forwardCached(q, cache._live(), o)));
  }

  // Forgets (and frees) what a requiresGrad forward kept.
  _dropSaved(handle) {
    this._grad = null;
    handle.clearSaved();
  }

  // The common call through numbers only: inputs written into this handle's wasm buffers, shapes
  // into its io block, results copied out with one slice each (copies, never views).
  _forwardLean(handle, q, k, v, options) {
    const m = requireCore();
    const tensors = [q, k, v];
    const { causal = false, scale, needWeights = true, averageWeights = true } = options;
    const F = FAST_FLAG;  // wasm/fast_path.h, through constants.js
    let flags = (k ? F.KEY : 0) | (v ? F.VALUE : 0) | (causal ? F.CAUSAL : 0) | (needWeights ? F.NEED_WEIGHTS : 0) |
      (averageWeights ? F.AVERAGE_WEIGHTS : 0);
    if (scale != null) flags |= F.SCALE;
    const scaleValue = scale == null ? 0 : checkNumber(scale, 'scale');  // checked before any buffer grows
    // 1. Size the input buffers first: that may grow the heap and detach older views.
    const sizesBefore = this._inputs ? this._inputs.map(([n]) => n) : [-1, -1, -1];
    const ptrs = tensors.map((t, slot) => (t ? this._input(handle, slot, t.data.length) : 0));
    // 2. Shapes into the io block (FAST_IO: rank, d0, d1, d2 per input), data into the buffers.
    const io = this._io(handle, m);
    for (let slot = 0; slot < 3; slot++) {
      const t = tensors[slot];
      if (!t) continue;
      const at = FAST_IO.INPUT_STRIDE * slot;
      io[at] = t.shape.length;
      for (let a = 0; a < t.shape.length; a++) io[at + 1 + a] = t.shape[a];
      m.HEAPF32.set(t.data, ptrs[slot] / 4);
    }
    // 3. Run; 4. copy the results out (the heap may have grown again: fresh views).
    const code = handle.forwardFast(flags, scaleValue);
    if (code !== 0) {
      // Refused: the input slots go back to their sizes before this call, so a throw leaves malloc's
      // bytes in use where they were (the C++ side does the same for its result buffers).
      sizesBefore.forEach((n, slot) => this._input(handle, slot, Math.max(n, 0)));
      check({ code, message: handle.lastMessage() });
    }
    const ioOut = this._io(handle, m), I = FAST_IO;
    const read = (ptr, length) => m.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + length);
    const result = { output: new Tensor(read(ioOut[I.OUT_OUTPUT_PTR], ioOut[I.OUT_OUTPUT_LENGTH]), [...q.shape]) };
    if (needWeights) {
      const dims = ioOut.subarray(I.OUT_WEIGHTS_DIMS, I.OUT_WEIGHTS_DIMS + ioOut[I.OUT_WEIGHTS_RANK]);
      result.weights = new Tensor(read(ioOut[I.OUT_WEIGHTS_PTR], ioOut[I.OUT_WEIGHTS_LENGTH]), Array.from(dims));
    }
    return result;
  }

  // The handle's int32 io block, as a view re-made after the heap grows (old views detach).
  _io(handle, m) {
    if (!this._ioView || this._ioView.buffer !== m.HEAPU8.buffer) {
      this._ioPtr ??= handle.ioPtr();
      this._ioView = new Int32Array(m.HEAPU8.buffer, this._ioPtr, FAST_IO.SIZE);
    }
    return this._ioView;
  }

  // Address of input slot (0 query, 1 key, 2 value) sized to n floats; resized only when n changes.
  _input(handle, slot, n) {
    this._inputs ??= [[-1, 0], [-1, 0], [-1, 0]];
    const cached = this._inputs[slot];
    if (cached[0] !== n) {
      cached[0] = n;
      cached[1] = handle.inputPtr(slot, n);
    }
    return cached[1];
  }
}

// Whether forward can take the lean path: no masks, positional encoding, dropout, trace or
// requiresGrad (the lean path keeps nothing for backward), and tensors of rank ≤ 3 (the rest,
// including every shape error, goes through the general path).
function isLeanCall(options, q, k, v) {
  const { mask, additiveMask, keyPaddingMask, positional, dropout, trace, requiresGrad, causal } = options;
  if (mask != null || additiveMask != null || keyPaddingMask != null || positional != null) return false;
  if (options.positionOffset != null || options.window != null || options.alibi != null) return false;
  if (causal != null && typeof causal !== 'boolean') return false;  // 'top-left', 'bottom-right' or an error
  if (dropout != null || trace || requiresGrad) return false;
  return [q, k, v].every((t) => t == null || t.shape.length <= 3);
}

/**
 * A MultiHeadAttention's key/value cache (mha.createCache): the rotated keys and values of every token
 * fed so far. `length` grows with each forward; reset() empties it; dispose() frees it.
 */
export class KVCache extends Handle {
  constructor(handle, owner) {
    super(handle);
    this._owner = owner;
    this.maxLength = handle.maxLength();
    this.batch = handle.batch();
  }

  /** Tokens cached so far. */
  get length() { return this._live().length(); }

  /** Empties the cache (the next forward starts at position 0). */
  reset() { this._live().reset(); return this; }
}

export class LearnedPositionalEncoding extends Handle {
  /** @param {{ maxLength: number, dModel: number, seed?: number }} options */
  constructor(options = {}) {
    const { maxLength, dModel, seed = 0 } = checkOptions(options, ['maxLength', 'dModel', 'seed'], 'LearnedPositionalEncoding option');
    checkInt(maxLength, 'maxLength');
    checkInt(dModel, 'dModel');
    super(newHandle('LearnedPEHandle', (h) => h.init(maxLength, dModel, checkSeed(seed, 'seed'))));
    this.maxLength = maxLength;
    this.dModel = dModel;
  }

  /** The first `length` rows of the table: (length, dModel). */
  encode(length) {
    return fromCore(check(this._live().encode(checkInt(length, 'length'))).result);
  }

  /** A copy of the whole table (maxLength, dModel). */
  get table() {
    return fromCore(this._live().table());
  }

  setTable(table) {
    const handle = this._live();
    const t = asFloatTensor(table, 'table');
    checkInputBytes('setTable', [t]);
    check(handle.setTable(t));
  }
}
