// What the API modules (index.js and the modules of attention/, tiny/, pretrained/) share: the per-wrapper state (the
// loaded wasm module, the Handle base class and its count of live handles, the input-size check run
// before anything is copied into its heap) and the parsing of the option objects that forward and
// backward functions have in common. Internal: not exported from index.js.
import { AttentionError, check } from '../errors.js';
import { checkInt, checkNumber, checkOptions, checkSeed, describe } from '../options.js';
import { asBoolTensor, asFloatTensor } from '../tensor.js';

const mib = (bytes) => Math.round((bytes / (1024 * 1024)) * 100) / 100;
const kMaxInputBytes = 2 ** 31;

// TOO_LARGE when `tensors` (some may be null) hold more bytes than `limit` or than one call's
// inputs may take in 32-bit WebAssembly.
function checkInputSize(limit, what, tensors) {
  let bytes = 0;
  for (const t of tensors) if (t) bytes += t.data.byteLength;
  let over = null;
  if (bytes > limit) over = `the memory limit of ${mib(limit)} MiB (setMemoryLimit raises it)`;
  else if (bytes > kMaxInputBytes)
    over = `the ${mib(kMaxInputBytes)} MiB one call's inputs may take in 32-bit WebAssembly`;
  if (over)
    throw new AttentionError('TOO_LARGE', `${what} inputs would need ${mib(bytes)} MiB, over ${over}`);
}

/**
 * Base of the objects that own a C++ handle. `rt` is the wrapper copy (createRuntime) the object
 * belongs to: it counts its live handles (memoryStats) and gives the object its module
 * (`this._rt.requireCore()`), so the classes can live at module level while each copy of index.js
 * (`?instance=`) exports its own subclasses.
 */
export class Handle {
  constructor(rt, handle) {
    this._rt = rt;
    this._handle = handle;
    rt.handleOpened();
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
    this._rt.handleClosed();
  }
}

/**
 * The state of one copy of the wrapper: its wasm module, loaded once, and the memory limit it
 * enforces. Each copy of index.js makes its own (Node caches modules by URL, query included, so
 * `index.js?instance=x` is a second, independent wrapper: the benchmarks and tests rely on that)
 * and hands it to the API modules it re-exports (attention/, tiny/, pretrained/). The methods are closures:
 * destructuring them is fine.
 */
export function createRuntime() {
  let modulePromise = null;
  let core = null;
  let memoryLimitBytes = null; // the core's limit, read once and kept in step by setMemoryLimit
  let liveHandles = 0; // JS objects owning a C++ handle, not yet disposed (memoryStats)

  function requireCore() {
    if (!core) throw new AttentionError('NOT_INITIALIZED', 'call `await init()` before using attention-wasm');
    return core;
  }

  // A new C++ handle of `className`, initialised by `initialise(handle)` (a status object); on an
  // error it is deleted before the AttentionError is thrown, so a failed constructor leaks nothing.
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

  const rt = {
    /** The module `load()` instantiates, loaded once; a failed load may be retried. */
    load(load) {
      modulePromise ??= load().then(
        (m) => (core = m),
        (error) => {
          modulePromise = null;
          throw error;
        },
      );
      return modulePromise;
    },

    requireCore,
    newHandle,
    /** Handles created and not yet disposed. */
    liveHandles: () => liveHandles,
    handleOpened() {
      liveHandles++;
    },
    handleClosed() {
      liveHandles--;
    },

    /** Re-reads the core's memory limit (after setMemoryLimit). */
    refreshMemoryLimit() {
      memoryLimitBytes = requireCore()._memoryLimit();
    },

    // A call's inputs against the memory limit before any of them is copied into the wasm heap: the
    // core checks its own buffers, but a rejected call must not first grow the heap by its inputs'
    // size (wasm memory never shrinks). A raised limit does not lift the 32-bit heap's own bound
    // (Embind's copy miscounts past it).
    checkInputBytes(what, tensors) {
      memoryLimitBytes ??= requireCore()._memoryLimit();
      checkInputSize(memoryLimitBytes, what, tensors);
    },
  };
  // The Handle of this copy, for the classes that take the runtime from their closure.
  rt.Handle = class extends Handle {
    constructor(handle) {
      super(rt, handle);
    }
  };
  return rt;
}

/** The option keys of scaledDotProductAttention (and of its backward). */
export const SDPA_OPTIONS = [
  'mask',
  'additiveMask',
  'causal',
  'scale',
  'dropout',
  'needWeights',
  'trace',
  'positionOffset',
  'window',
  'alibi',
  'enableGQA',
];

/**
 * `causal` as the core reads it: false / true / 'top-left' / 'bottom-right'. Anything else (a typo
 * such as 'bottom_right', a number) is INVALID_ARGUMENT: it used to mean top-left silently.
 */
function causalMode(causal) {
  if (causal === false || causal == null) return { causal: false, bottomRight: false };
  if (causal === true || causal === 'top-left') return { causal: true, bottomRight: false };
  if (causal === 'bottom-right') return { causal: true, bottomRight: true };
  throw new AttentionError(
    'INVALID_ARGUMENT',
    `causal must be true, false, 'top-left' or 'bottom-right', got ${describe(causal)}`,
  );
}

/** Positions, window and ALiBi (see README "Attention in today's models") in the bindings' flat form. */
function positionOptions({ causal, positionOffset, window, alibi }, o) {
  Object.assign(o, causalMode(causal));
  if (positionOffset != null) o.positionOffset = checkInt(positionOffset, 'positionOffset');
  if (window != null) o.window = checkInt(window, 'window');
  if (alibi === true) o.alibiPaper = true;
  else if (Array.isArray(alibi) || ArrayBuffer.isView(alibi))
    o.alibi = Float32Array.from(alibi, (m) => checkNumber(m, 'alibi slope'));
  else if (alibi != null && alibi !== false) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `alibi must be true, false or one slope per head (number[]), got ${describe(alibi)}`,
    );
  }
}

/** Options shared by SDPA and MHA (forward and backward), in the flat form the bindings read. */
export function commonOptions({
  mask,
  additiveMask,
  causal = false,
  scale,
  dropout,
  needWeights = true,
  trace = false,
  positionOffset,
  window,
  alibi,
  enableGQA = false,
}) {
  const o = { needWeights: Boolean(needWeights), trace: Boolean(trace), enableGQA: Boolean(enableGQA) };
  positionOptions({ causal, positionOffset, window, alibi }, o);
  if (mask != null) o.mask = asBoolTensor(mask, 'mask');
  if (additiveMask != null) o.additiveMask = asFloatTensor(additiveMask, 'additiveMask');
  if (scale != null) o.scale = checkNumber(scale, 'scale');
  if (dropout != null) {
    checkOptions(dropout, ['p', 'seed'], 'dropout option');
    o.dropoutP = checkNumber(dropout.p ?? 0, 'dropout.p');
    o.dropoutSeed = checkSeed(dropout.seed ?? 0, 'dropout.seed');
  }
  return o;
}

/** layerNorm's options (and its backward's): { eps, weight, bias } checked, tensors as float32. */
export function layerNormOptions(options, what) {
  const { eps = 1e-5, weight = null, bias = null } = checkOptions(options, ['eps', 'weight', 'bias'], what);
  return {
    eps: checkNumber(eps, 'eps'),
    weight: weight == null ? null : asFloatTensor(weight, 'weight'),
    bias: bias == null ? null : asFloatTensor(bias, 'bias'),
  };
}
