// The functions of index.js over a wrapper copy `rt` (runtime.js): softmax, LayerNorm, scaled
// dot-product attention, the sinusoidal encoding, seeded normals, the memory limit and statistics,
// the kernels in use. opsApi(rt) binds them to one copy (`?instance=`).
import { AttentionError, check } from '../errors.js';
import { checkInt, checkNumber, checkOptions, checkSeed, describe } from '../options.js';
import { results } from './mha.js';
import { SDPA_OPTIONS, commonOptions, layerNormOptions } from '../runtime/runtime.js';
import { Tensor, asFloatTensor, fromCore, shapeSize } from '../tensor.js';

/** Softmax over the last axis. A row of all -Infinity gives zeros. */
function softmax(rt, x) {
  const m = rt.requireCore();
  const t = asFloatTensor(x, 'x');
  rt.checkInputBytes('softmax', [t]);
  return fromCore(check(m._softmax(t)).result);
}

/** LayerNorm over the last axis (biased variance, as nn.LayerNorm). */
function layerNorm(rt, x, options = {}) {
  const m = rt.requireCore();
  const { eps, weight, bias } = layerNormOptions(options, 'layerNorm option');
  const t = asFloatTensor(x, 'x');
  rt.checkInputBytes('layerNorm', [t, weight, bias]);
  return fromCore(check(m._layerNorm(t, eps, weight?.data ?? null, bias?.data ?? null)).result);
}

/** softmax(q·kᵀ·scale + masks)·v over (..., T, d) tensors. */
function scaledDotProductAttention(rt, q, k, v, options = {}) {
  const m = rt.requireCore();
  const o = commonOptions(checkOptions(options, SDPA_OPTIONS, 'scaledDotProductAttention option'));
  const qkv = [asFloatTensor(q, 'q'), asFloatTensor(k, 'k'), asFloatTensor(v, 'v')];
  rt.checkInputBytes('scaled dot-product attention', [...qkv, o.mask, o.additiveMask]);
  const r = m._sdpa(...qkv, o);
  return results(check(r));
}

/** Sinusoidal positional encoding, a Tensor (length, dModel). */
function sinusoidalEncoding(rt, length, dModel, options = {}) {
  const m = rt.requireCore();
  const { base = 10000 } = checkOptions(options, ['base'], 'sinusoidalEncoding option');
  const r = m._sinusoidal(checkInt(length, 'length'), checkInt(dModel, 'dModel'), checkNumber(base, 'base'));
  return fromCore(check(r).result);
}

/** Portable ~N(0, 1) values (Irwin–Hall), identical on every platform for a seed. */
function seededNormal(rt, shape, seed = 0) {
  const m = rt.requireCore();
  const size = shapeSize(shape);
  return new Tensor(check(m._seededNormal(size, checkSeed(seed, 'seed'))).result, shape);
}

/** Bytes a single call may allocate for its buffers (default 1 GiB); larger work is TOO_LARGE. */
function setMemoryLimit(rt, bytes) {
  const m = rt.requireCore();
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `bytes must be a whole number of bytes in [1, 2^53), got ${describe(bytes)}`,
    );
  }
  m._setMemoryLimit(bytes);
  rt.refreshMemoryLimit();
}

function memoryLimit(rt) {
  return rt.requireCore()._memoryLimit();
}

/** 'relaxed-simd', 'simd128' or 'scalar': the kernels the loaded build runs. */
function kernelVariant(rt) {
  return rt.requireCore()._kernelVariant();
}

/**
 * Wasm heap size, bytes allocated in it, the number of handles not yet disposed (leak checks), and the
 * peak counter: bytesInUse, what the C++ holds through operator new now (src/wasm/memory_counter.cpp),
 * and peakBytesInUse, the most it held since resetMemoryPeak() (or since init).
 */
function memoryStats(rt) {
  const m = rt.requireCore();
  return {
    heapBytes: m.HEAPU8.length,
    heapUsedBytes: m._heapUsedBytes(),
    liveHandles: rt.liveHandles(),
    bytesInUse: m._bytesInUse(),
    peakBytesInUse: m._peakBytesInUse(),
  };
}

/** Starts memoryStats().peakBytesInUse again from the bytes in use now. */
function resetMemoryPeak(rt) {
  rt.requireCore()._resetMemoryPeak();
}

const OPS = {
  softmax,
  layerNorm,
  scaledDotProductAttention,
  sinusoidalEncoding,
  seededNormal,
  setMemoryLimit,
  memoryLimit,
  kernelVariant,
  memoryStats,
  resetMemoryPeak,
};

/** The functions above, bound to one wrapper copy (each default stays in its function). */
export function opsApi(rt) {
  return Object.fromEntries(Object.entries(OPS).map(([name, f]) => [name, (...args) => f(rt, ...args)]));
}
