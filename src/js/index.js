// attention-wasm: the public JS API over the wasm core. Hand-written; types in index.d.ts. This file
// only wires the API together: each area lives in its folder (runtime/loader.js: init;
// attention/ops.js: the plain functions; attention/mha.js: MultiHeadAttention, its KV cache and fast
// path; attention/backward.js, attention/positions.js, tiny/tiny-transformer.js, tiny/train.js,
// pretrained/pretrained.js, runtime/threads.js), each over this copy's runtime (runtime/runtime.js).
// Every function copies its inputs into the wasm heap and its results out of it, so results stay
// valid after later calls and memory growth. Errors are AttentionError with a `.code`.
import { AttentionError } from './errors.js';
import { relaxedSimdSupported } from './runtime/relaxed-simd.js';
import { backwardApi } from './attention/backward.js';
import { positionsApi } from './attention/positions.js';
import { pretrainedApi } from './pretrained/pretrained.js';
import { tinyTransformerClass } from './tiny/tiny-transformer.js';
import { trainApi } from './tiny/train.js';
import { threadsApi } from './runtime/threads.js';
import { mhaApi } from './attention/mha.js';
import { opsApi } from './attention/ops.js';
import { loaderApi } from './runtime/loader.js';
import { createRuntime } from './runtime/runtime.js';
import { Tensor } from './tensor.js';

export { AttentionError, Tensor, relaxedSimdSupported };
export { captureToSafetensors, readSafetensorsMetadata } from './formats/safetensors.js';
export { GENERATE_PAD } from './pretrained/generation.js';
export { CONFIG_KEYS as PRETRAINED_CONFIG_KEYS } from './pretrained/config.js';
export { ARCHITECTURES as PRETRAINED_ARCHITECTURES } from './architectures/index.js';
export { attentionRollout } from './interp/head-scores.js';
export { hubCache, hubFiles } from './hub/hub.js';

// This copy's module and memory limit (runtime.js), shared with the functions of backward.js.
const runtime = createRuntime();
export const { scaledDotProductAttentionBackward, softmaxBackward, layerNormBackward } = backwardApi(runtime);
export const { applyRotary, applyRotaryBackward, alibiSlopes } = positionsApi(runtime);
export const { loadPretrained, PretrainedModel, checkpointTensors } = pretrainedApi(runtime);
// The model and training API (tiny/tiny-transformer.js, tiny/train.js) over the same runtime.
export const TinyTransformer = tinyTransformerClass(runtime);
export const { Trainer, createTask, evaluate } = trainApi(runtime, TinyTransformer);
export const { threadCount, setThreadCount } = threadsApi(runtime);
export const { MultiHeadAttention, KVCache, LearnedPositionalEncoding } = mhaApi(runtime);
export const { init } = loaderApi(runtime);
export const {
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
} = opsApi(runtime);
