// MultiHeadAttention (with its lean fast path) and its KV cache; mhaApi also gives the learned
// positional encoding (attention/learned-positional.js). The classes live at module level, over a wrapper copy
// `rt` (runtime.js); mhaApi(rt) gives each copy of index.js (`?instance=`) its own subclasses, so
// every copy counts its own handles.
import { AttentionError, check } from '../errors.js';
import { FAST_FLAG, FAST_IO } from '../constants.js';
import { checkInt, checkNumber, checkOptions, checkSeed, describe } from '../options.js';
import { rotaryOptions } from './positions.js';
import { gradRecord, mhaBackward } from './mha-backward.js';
import { Handle, SDPA_OPTIONS, commonOptions } from '../runtime/runtime.js';
import { Tensor, asBoolTensor, asFloatTensor, fromCore } from '../tensor.js';
import { LearnedPositionalEncodingBase } from './learned-positional.js';

const MHA_OPTIONS = [
  ...SDPA_OPTIONS.filter((k) => k !== 'enableGQA'),
  'keyPaddingMask',
  'averageWeights',
  'positional',
  'requiresGrad',
  'cache',
];
// MultiHeadAttention has numKVHeads in its config instead of SDPA's enableGQA.
const MHA_HINTS = {
  enableGQA: 'the numKVHeads config option (grouped-query attention is a property of the module)',
};

/** An SDPA or MHA result of the core as { output, weights?, trace? } (copies). */
export function results(r) {
  const out = { output: fromCore(r.output) };
  if (r.weights) out.weights = fromCore(r.weights);
  if (r.trace) out.trace = r.trace;
  return out;
}

const MHA_CONFIG = [
  'embedDim',
  'numHeads',
  'kdim',
  'vdim',
  'headDim',
  'valueHeadDim',
  'bias',
  'addBiasKV',
  'addZeroAttn',
  'residual',
  'layerNorm',
  'seed',
  'numKVHeads',
  'rope',
];
// PyTorch's constructor arguments with no constructor counterpart here.
const MHA_CONFIG_HINTS = {
  dropout: 'forward(query, key, value, { dropout: { p, seed } }): dropout is a forward option here',
  num_key_value_heads: 'numKVHeads',
  numKvHeads: 'numKVHeads',
  kvHeads: 'numKVHeads',
  rotary: 'rope',
};

/** The rope config ({ base, style, dims } or true) in the binding's form, or null. */
function ropeConfig(rope) {
  if (rope == null || rope === false) return null;
  if (rope === true) return { base: 10000, interleaved: false, dims: 0 };
  if (typeof rope !== 'object' || Array.isArray(rope))
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `rope must be true or { base, style, dims }, got ${describe(rope)}`,
    );
  if ('offset' in rope)
    throw new AttentionError(
      'INVALID_ARGUMENT',
      "rope has no offset: positions come from the forward's positionOffset (or the KV cache)",
    );
  const { base, interleaved, dims } = rotaryOptions(rope, 'rope config key');
  return { base, interleaved, dims };
}

class MultiHeadAttentionBase extends Handle {
  /**
   * @param {object} rt the wrapper copy (runtime.js)
   * @param {object} config see index.d.ts (MultiHeadAttentionConfig)
   */
  constructor(rt, config = {}) {
    const {
      embedDim,
      numHeads = 1,
      kdim = 0,
      vdim = 0,
      headDim = 0,
      valueHeadDim = 0,
      bias = true,
      addBiasKV = false,
      addZeroAttn = false,
      residual = false,
      layerNorm = false,
      seed = 0,
      numKVHeads = 0,
      rope = null,
    } = checkOptions(config, MHA_CONFIG, 'MultiHeadAttention config key', MHA_CONFIG_HINTS);
    const lnOptions =
      typeof layerNorm === 'object' ? checkOptions(layerNorm, ['eps'], 'layerNorm config key') : {};
    const eps = lnOptions.eps ?? 1e-5;
    const ints = { embedDim, numHeads, kdim, vdim, headDim, valueHeadDim, numKVHeads };
    for (const [name, value] of Object.entries(ints)) checkInt(value, name);
    const ropeCore = ropeConfig(rope);
    const full = {
      ...ints,
      bias: Boolean(bias),
      addBiasKV: Boolean(addBiasKV),
      addZeroAttn: Boolean(addZeroAttn),
      residual: Boolean(residual),
      layerNorm: Boolean(layerNorm),
      layerNormEps: checkNumber(eps, 'layerNorm.eps'),
      seed: checkSeed(seed, 'seed'),
    };
    super(
      rt,
      rt.newHandle('MhaHandle', (h) => h.init(ropeCore ? { ...full, rope: ropeCore } : full)),
    );
    const headDimResolved = this._handle.headDim();
    this.config = Object.freeze({
      ...full,
      kdim: kdim || embedDim,
      vdim: vdim || embedDim,
      headDim: headDimResolved,
      valueHeadDim: this._handle.valueHeadDim(),
      numKVHeads: this._handle.numKVHeads(),
      rope: ropeCore
        ? Object.freeze({
            base: ropeCore.base,
            style: ropeCore.interleaved ? 'interleaved' : 'half',
            dims: ropeCore.dims || headDimResolved,
          })
        : null,
    });
  }

  get numKVHeads() {
    return this.config.numKVHeads;
  }

  /**
   * A KV cache for decoding with this module: up to maxLength tokens of `batch` sequences. Pass it as
   * forward(x, null, null, { cache, causal: true }). Dispose it when done.
   */
  createCache(options = {}) {
    const handle = this._live();
    const { maxLength, batch = 1 } = checkOptions(options, ['maxLength', 'batch'], 'createCache option');
    const cacheHandle = this._rt.newHandle('KvCacheHandle', (c) =>
      handle.createCache(c, checkInt(maxLength, 'maxLength'), checkInt(batch, 'batch')),
    );
    return new this._rt.KVCache(cacheHandle, this);
  }

  get embedDim() {
    return this.config.embedDim;
  }
  get numHeads() {
    return this.config.numHeads;
  }
  get headDim() {
    return this.config.headDim;
  }
  get valueHeadDim() {
    return this.config.valueHeadDim;
  }

  /** Sets parameters by PyTorch name; values are Tensors, { data, shape } or nested arrays. */
  loadStateDict(stateDict) {
    const handle = this._live();
    if (
      stateDict == null ||
      typeof stateDict !== 'object' ||
      Array.isArray(stateDict) ||
      stateDict instanceof Tensor
    ) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `stateDict must be an object of tensors, got ${describe(stateDict)}`,
      );
    }
    for (const [name, value] of Object.entries(stateDict)) {
      const t = asFloatTensor(value, name);
      this._rt.checkInputBytes(`parameter '${name}'`, [t]);
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
      this._rt.checkInputBytes('multi-head attention', [q, k, v]);
      return this._forwardLean(handle, q, k, v, options);
    }
    const o = commonOptions(options);
    o.averageWeights = options.averageWeights ?? true;
    if (options.keyPaddingMask != null)
      o.keyPaddingMask = asBoolTensor(options.keyPaddingMask, 'keyPaddingMask', 'true = real token');
    if (options.positional != null) o.positional = asFloatTensor(options.positional, 'positional');
    o.requiresGrad = Boolean(options.requiresGrad);
    this._rt.checkInputBytes('multi-head attention', [
      q,
      k,
      v,
      o.mask,
      o.additiveMask,
      o.keyPaddingMask,
      o.positional,
    ]);
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
    return mhaBackward(this._rt, this._live(), this._grad, gradOutput);
  }

  // forward with { cache }: self-attention of the new rows over every cached key (the core appends them).
  _forwardCached(handle, q, k, options) {
    const { cache } = options;
    if (!(cache instanceof this._rt.KVCache) || cache._owner !== this) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `cache must come from this module's createCache(), got ${describe(cache)}`,
      );
    }
    if (k != null)
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'a KV cache is for self-attention: pass key and value as null',
      );
    if (options.requiresGrad)
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'requiresGrad is not supported with a KV cache (decoding is inference)',
      );
    if (options.mask != null || options.additiveMask != null || options.keyPaddingMask != null) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'masks and keyPaddingMask are not supported with a KV cache (causal, window and alibi are)',
      );
    }
    if (options.positional != null)
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'a positional table is not supported with a KV cache: use the rope config',
      );
    const o = commonOptions(options);
    o.averageWeights = options.averageWeights ?? true;
    this._rt.checkInputBytes('multi-head attention with a KV cache', [q]);
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
    const m = this._rt.requireCore();
    const tensors = [q, k, v];
    const { causal = false, scale, needWeights = true, averageWeights = true } = options;
    const F = FAST_FLAG; // wasm/fast_path.h, through constants.js
    let flags =
      (k ? F.KEY : 0) |
      (v ? F.VALUE : 0) |
      (causal ? F.CAUSAL : 0) |
      (needWeights ? F.NEED_WEIGHTS : 0) |
      (averageWeights ? F.AVERAGE_WEIGHTS : 0);
    if (scale != null) flags |= F.SCALE;
    const scaleValue = scale == null ? 0 : checkNumber(scale, 'scale'); // checked before any buffer grows
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
    const ioOut = this._io(handle, m),
      I = FAST_IO;
    const read = (ptr, length) => m.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + length);
    const result = {
      output: new Tensor(read(ioOut[I.OUT_OUTPUT_PTR], ioOut[I.OUT_OUTPUT_LENGTH]), [...q.shape]),
    };
    if (needWeights) {
      const dims = ioOut.subarray(I.OUT_WEIGHTS_DIMS, I.OUT_WEIGHTS_DIMS + ioOut[I.OUT_WEIGHTS_RANK]);
      result.weights = new Tensor(
        read(ioOut[I.OUT_WEIGHTS_PTR], ioOut[I.OUT_WEIGHTS_LENGTH]),
        Array.from(dims),
      );
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
    this._inputs ??= [
      [-1, 0],
      [-1, 0],
      [-1, 0],
    ];
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
  if (causal != null && typeof causal !== 'boolean') return false; // 'top-left', 'bottom-right' or an error
  if (dropout != null || trace || requiresGrad) return false;
  return [q, k, v].every((t) => t == null || t.shape.length <= 3);
}

/**
 * A MultiHeadAttention's key/value cache (mha.createCache): the rotated keys and values of every token
 * fed so far. `length` grows with each forward; reset() empties it; dispose() frees it.
 */
class KVCacheBase extends Handle {
  constructor(rt, handle, owner) {
    super(rt, handle);
    this._owner = owner;
    this.maxLength = handle.maxLength();
    this.batch = handle.batch();
  }

  /** Tokens cached so far. */
  get length() {
    return this._live().length();
  }

  /** Empties the cache (the next forward starts at position 0). */
  reset() {
    this._live().reset();
    return this;
  }
}

/** MultiHeadAttention, KVCache and LearnedPositionalEncoding of one wrapper copy. */
export function mhaApi(rt) {
  class MultiHeadAttention extends MultiHeadAttentionBase {
    constructor(config = {}) {
      super(rt, config);
    }
  }
  /**
   * A MultiHeadAttention's key/value cache (mha.createCache): the rotated keys and values of every
   * token fed so far. `length` grows with each forward; reset() empties it; dispose() frees it.
   */
  class KVCache extends KVCacheBase {
    constructor(handle, owner) {
      super(rt, handle, owner);
    }
  }
  class LearnedPositionalEncoding extends LearnedPositionalEncodingBase {
    constructor(options = {}) {
      super(rt, options);
    }
  }
  rt.KVCache = KVCache; // what createCache makes and forward({ cache }) accepts
  return { MultiHeadAttention, KVCache, LearnedPositionalEncoding };
}
