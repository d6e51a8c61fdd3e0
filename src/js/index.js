// attention-wasm: the public JS API over the wasm core. Hand-written; types in index.d.ts.
// Every function copies its inputs into the wasm heap and its results out of it, so results stay
// valid after later calls and memory growth. Errors are AttentionError with a `.code`.
import { AttentionError, check } from './errors.js';
import { Tensor, asFloatTensor, asBoolTensor, fromCore } from './tensor.js';

export { AttentionError, Tensor };

let modulePromise = null;
let core = null;
let liveHandles = 0;

/**
 * Loads and instantiates the wasm module once; later calls return the same promise.
 * @param {{ wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, moduleUrl?: string|URL }} [options]
 */
export function init(options = {}) {
  modulePromise ??= (async () => {
    const factoryUrl = options.moduleUrl ?? new URL('../../dist/attention_core.mjs', import.meta.url);
    const { default: createAttentionModule } = await import(factoryUrl.toString());
    const settings = {};
    if (options.wasmBinary) settings.wasmBinary = options.wasmBinary;
    if (options.wasmUrl) settings.locateFile = () => options.wasmUrl.toString();
    core = await createAttentionModule(settings);
    return core;
  })().catch((error) => {
    modulePromise = null; // a failed load may be retried
    throw error;
  });
  return modulePromise;
}

function requireCore() {
  if (!core) throw new AttentionError('NOT_INITIALIZED', 'call `await init()` before using attention-wasm');
  return core;
}

/** Softmax over the last axis. A row of all -Infinity gives zeros. */
export function softmax(x) {
  const m = requireCore();
  return fromCore(check(m._softmax(asFloatTensor(x, 'x'))).result);
}

/** LayerNorm over the last axis (biased variance, as nn.LayerNorm). */
export function layerNorm(x, { eps = 1e-5, weight = null, bias = null } = {}) {
  const m = requireCore();
  const w = weight == null ? null : asFloatTensor(weight, 'weight').data;
  const b = bias == null ? null : asFloatTensor(bias, 'bias').data;
  return fromCore(check(m._layerNorm(asFloatTensor(x, 'x'), eps, w, b)).result);
}

function checkNumber(value, what) {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be a number, got ${String(value)}`);
  }
  return value;
}

// Seeds are integers in [0, 2^53): the C++ side reads them as uint64.
function checkSeed(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be an integer in [0, 2^53), got ${String(value)}`);
  }
  return value;
}

// Options shared by SDPA and MHA, in the flat form the binding reads.
function commonOptions({ mask, additiveMask, causal = false, scale, dropout, needWeights = true, trace = false }) {
  const o = { causal: Boolean(causal), needWeights: Boolean(needWeights), trace: Boolean(trace) };
  if (mask != null) o.mask = asBoolTensor(mask, 'mask');
  if (additiveMask != null) o.additiveMask = asFloatTensor(additiveMask, 'additiveMask');
  if (scale != null) o.scale = checkNumber(scale, 'scale');
  if (dropout != null) {
    o.dropoutP = checkNumber(dropout.p ?? 0, 'dropout.p');
    o.dropoutSeed = checkSeed(dropout.seed ?? 0, 'dropout.seed');
  }
  return o;
}

function results(r) {
  const out = { output: fromCore(r.output) };
  if (r.weights) out.weights = fromCore(r.weights);
  if (r.trace) out.trace = r.trace;
  return out;
}

/** softmax(q·kᵀ·scale + masks)·v over (..., T, d) tensors. */
export function scaledDotProductAttention(q, k, v, options = {}) {
  const m = requireCore();
  const r = m._sdpa(asFloatTensor(q, 'q'), asFloatTensor(k, 'k'), asFloatTensor(v, 'v'), commonOptions(options));
  return results(check(r));
}

/** Sinusoidal positional encoding, a Tensor (length, dModel). */
export function sinusoidalEncoding(length, dModel, { base = 10000 } = {}) {
  const m = requireCore();
  return fromCore(check(m._sinusoidal(length | 0, dModel | 0, checkNumber(base, 'base'))).result);
}

/** Portable ~N(0, 1) values (Irwin–Hall), identical on every platform for a seed. */
export function seededNormal(shape, seed = 0) {
  const m = requireCore();
  const size = shape.reduce((a, b) => a * b, 1);
  return new Tensor(m._seededNormal(size, checkSeed(seed, 'seed')), shape);
}

/** Bytes a single call may allocate for its buffers (default 1 GiB); larger work is TOO_LARGE. */
export function setMemoryLimit(bytes) {
  requireCore()._setMemoryLimit(checkNumber(bytes, 'bytes'));
}

export function memoryLimit() {
  return requireCore()._memoryLimit();
}

/** 'simd128' or 'scalar': the kernels this build runs. */
export function kernelVariant() {
  return requireCore()._kernelVariant();
}

/** Wasm heap size, bytes allocated in it, and the number of handles not yet disposed (leak checks). */
export function memoryStats() {
  const m = requireCore();
  return { heapBytes: m.HEAPU8.length, heapUsedBytes: m._heapUsedBytes(), liveHandles };
}

// Base of the objects that own a C++ handle.
class Handle {
  constructor(handle) {
    this._handle = handle;
    liveHandles++;
  }

  _live() {
    if (!this._handle) throw new AttentionError('DISPOSED', `this ${this.constructor.name} was disposed`);
    return this._handle;
  }

  /** Frees the wasm memory of this object; calling it twice is harmless. */
  dispose() {
    if (!this._handle) return;
    this._handle.delete();
    this._handle = null;
    liveHandles--;
  }
}

function newHandle(className, initialise) {
  const handle = new (requireCore()[className])();
  try {
    check(initialise(handle));
  } catch (error) {
    handle.delete();
    throw error;
  }
  return handle;
}

export class MultiHeadAttention extends Handle {
  /**
   * @param {object} config see index.d.ts (MultiHeadAttentionConfig)
   */
  constructor(config = {}) {
    const {
      embedDim, numHeads = 1, kdim = 0, vdim = 0, headDim = 0, valueHeadDim = 0, bias = true,
      addBiasKV = false, addZeroAttn = false, residual = false, layerNorm = false, seed = 0,
    } = config;
    const eps = typeof layerNorm === 'object' && layerNorm ? layerNorm.eps ?? 1e-5 : 1e-5;
    const ints = { embedDim, numHeads, kdim, vdim, headDim, valueHeadDim };
    for (const [name, value] of Object.entries(ints)) {
      if (!Number.isInteger(value)) throw new AttentionError('INVALID_ARGUMENT', `${name} must be an integer, got ${String(value)}`);
    }
    const full = {
      ...ints, bias: Boolean(bias), addBiasKV: Boolean(addBiasKV), addZeroAttn: Boolean(addZeroAttn),
      residual: Boolean(residual), layerNorm: Boolean(layerNorm), layerNormEps: checkNumber(eps, 'layerNorm.eps'),
      seed: checkSeed(seed, 'seed'),
    };
    super(newHandle('MhaHandle', (h) => h.init(full)));
    this.config = Object.freeze({
      ...full, kdim: kdim || embedDim, vdim: vdim || embedDim,
      headDim: this._handle.headDim(), valueHeadDim: this._handle.valueHeadDim(),
    });
  }

  get embedDim() { return this.config.embedDim; }
  get numHeads() { return this.config.numHeads; }
  get headDim() { return this.config.headDim; }
  get valueHeadDim() { return this.config.valueHeadDim; }

  /** Sets parameters by PyTorch name; values are Tensors, { data, shape } or nested arrays. */
  loadStateDict(stateDict) {
    const handle = this._live();
    for (const [name, value] of Object.entries(stateDict)) {
      check(handle.setParameter(name, asFloatTensor(value, name)));
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
    const o = commonOptions(options);
    o.averageWeights = options.averageWeights ?? true;
    if (options.keyPaddingMask != null) o.keyPaddingMask = asBoolTensor(options.keyPaddingMask, 'keyPaddingMask', 'true = real token');
    if (options.positional != null) o.positional = asFloatTensor(options.positional, 'positional');
    const k = key == null ? null : asFloatTensor(key, 'key');
    const v = value == null ? null : asFloatTensor(value, 'value');
    return results(check(handle.forward(asFloatTensor(query, 'query'), k, v, o)));
  }
}

export class LearnedPositionalEncoding extends Handle {
  /** @param {{ maxLength: number, dModel: number, seed?: number }} options */
  constructor({ maxLength, dModel, seed = 0 } = {}) {
    super(newHandle('LearnedPEHandle', (h) => h.init(maxLength | 0, dModel | 0, checkSeed(seed, 'seed'))));
    this.maxLength = maxLength;
    this.dModel = dModel;
  }

  /** The first `length` rows of the table: (length, dModel). */
  encode(length) {
    return fromCore(check(this._live().encode(length | 0)).result);
  }

  /** A copy of the whole table (maxLength, dModel). */
  get table() {
    return fromCore(this._live().table());
  }

  setTable(table) {
    check(this._live().setTable(asFloatTensor(table, 'table')));
  }
}
