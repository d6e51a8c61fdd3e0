/**
 * attention-wasm — transformer attention in WebAssembly SIMD128, with a step-by-step trace.
 *
 * Conventions:
 * - Tensors are row-major float32 (`Float32Array`) with a `shape`; boolean masks are `Uint8Array`
 *   (or `boolean[]`) tensors with `dtype === 'bool'`; integer tensors (token ids, indices) are
 *   `Int32Array` tensors with `dtype === 'int32'`. A function never casts between them: a tensor of
 *   another dtype than it expects is an `INVALID_ARGUMENT` (`INVALID_MASK` for masks) naming the argument.
 * - **Boolean masks: `true` (1) = may attend**, everywhere (as `F.scaled_dot_product_attention`).
 *   `torch.nn.MultiheadAttention` uses the OPPOSITE for its bool `attn_mask` and
 *   `key_padding_mask` (`True` = ignore): invert those when porting.
 * - Masked positions are −∞; a fully masked row gives zero weights and a zero attention output
 *   row (PyTorch gives NaN there).
 * - Inputs are copied into the wasm heap and results copied out: results stay valid forever.
 * - Failures throw {@link AttentionError}; the module stays usable afterwards.
 * - Option and config objects are checked: an unknown key (a typo, or a PyTorch spelling such as
 *   `attn_mask`) throws `INVALID_ARGUMENT` naming it and the key to use, instead of being ignored.
 *   `null` or `undefined` options mean none.
 * @packageDocumentation
 */

/** Stable error codes of {@link AttentionError}. */
export type AttentionErrorCode =
  | 'INVALID_ARGUMENT'
  | 'SHAPE_MISMATCH'
  | 'HEADS_DO_NOT_DIVIDE'
  | 'EMPTY_INPUT'
  | 'NON_FINITE'
  | 'TOO_LARGE'
  | 'INVALID_MASK'
  | 'UNKNOWN_PARAMETER'
  | 'NOT_INITIALIZED'
  | 'DISPOSED';

/** Every error thrown by the library; `message` names the problem. */
export class AttentionError extends Error {
  readonly name: 'AttentionError';
  readonly code: AttentionErrorCode;
  constructor(code: AttentionErrorCode, message: string);
}

/** Nested plain arrays of numbers (or booleans for masks). */
export type NestedArray<T> = T[] | NestedArray<T>[];

/** Anything the API accepts where a tensor is expected. */
export type TensorLike =
  Tensor | { data: ArrayLike<number>; shape: number[] } | NestedArray<number> | NestedArray<boolean>;

/** The element types of a {@link Tensor}. */
export type DType = 'float32' | 'int32' | 'bool';

/** Options of the {@link Tensor} constructor. */
export interface TensorOptions {
  /**
   * Converts the data to this dtype (default: the dtype the data implies). `'int32'` accepts only
   * integers in [−2^31, 2^31); anything else (2.5, NaN, 2^31, `true`) is an `INVALID_ARGUMENT`.
   */
  dtype?: DType;
}

/** A row-major tensor. */
export class Tensor {
  /**
   * @param data flat row-major values, or nested arrays (shape inferred). A `Float32Array`,
   *   `Int32Array` or `Uint8Array` of the tensor's dtype is wrapped without copying; other data is
   *   converted. Without `options.dtype`: `Int32Array` makes an int32 tensor, `Uint8Array` /
   *   `boolean[]` a boolean mask tensor (1/true = may attend), anything else float32.
   * @param shape defaults to the nested arrays' shape, or `[data.length]`.
   * @param options `{ dtype: 'int32' }` for integer tensors from nested arrays or other typed arrays.
   * @throws AttentionError `SHAPE_MISMATCH` when the sizes disagree; `INVALID_ARGUMENT` for values
   *   the dtype cannot hold exactly.
   */
  constructor(
    data:
      | Float32Array
      | Int32Array
      | Uint8Array
      | ArrayLike<number>
      | boolean[]
      | NestedArray<number>
      | NestedArray<boolean>,
    shape?: number[] | null,
    options?: TensorOptions,
  );
  readonly dtype: DType;
  readonly data: Float32Array | Int32Array | Uint8Array;
  readonly shape: number[];
  /** Number of elements. */
  readonly size: number;
  /** Number of axes. */
  readonly rank: number;
  /** The value at a multi-index (a boolean for masks, an integer for int32 tensors). */
  get(...index: number[]): number | boolean;
  /** The values as nested plain arrays. */
  toArray(): NestedArray<number> | NestedArray<boolean>;
}

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

/** Softmax over the last axis; a row of all −∞ gives zeros. NaN/+∞ → `NON_FINITE`. */
export function softmax(x: TensorLike): Tensor;

/** Options of {@link layerNorm} and {@link layerNormBackward}. */
export interface LayerNormOptions {
  /** Added to the variance (default 1e-5); must be > 0. */
  eps?: number;
  /** γ (N), default ones. */
  weight?: TensorLike | null;
  /** β (N), default zeros. */
  bias?: TensorLike | null;
}

/** LayerNorm over the last axis (biased variance, as `nn.LayerNorm`). */
export function layerNorm(x: TensorLike, options?: LayerNormOptions): Tensor;

/** Dropout on the attention weights; deterministic for a seed on every platform. */
export interface DropoutOptions {
  /** Probability of zeroing a weight, in [0, 1). Kept weights are scaled by 1/(1−p). */
  p: number;
  /** Integer seed (< 2^53). */
  seed?: number;
}

/** Options shared by {@link scaledDotProductAttention} and {@link MultiHeadAttention.forward}. */
export interface AttentionOptions {
  /** Boolean mask (1/true = may attend), broadcastable to (…, Tq, Tk). A float tensor here is an error. */
  mask?: TensorLike | null;
  /** Float mask added to the scaled scores (may hold −∞), broadcastable to (…, Tq, Tk). */
  additiveMask?: TensorLike | null;
  /**
   * `true` / `'top-left'`: query i may attend key j iff j ≤ i, with query row r at i = positionOffset + r
   * (default 0) and key c at j = c. `'bottom-right'`: the last query aligns with the last key
   * (positionOffset = Tk − Tq). Any other value is INVALID_ARGUMENT.
   */
  causal?: boolean | 'top-left' | 'bottom-right';
  /** Absolute position of query row 0 (an integer ≥ 0); masks, windows and ALiBi use absolute positions. */
  positionOffset?: number;
  /** Sliding window w ≥ 1: key j allowed iff 0 ≤ i − j < w when causal, |i − j| < w otherwise. */
  window?: number;
  /**
   * ALiBi: `true` (the paper's slopes, {@link alibiSlopes}) or one slope m_h per head; the bias
   * −m_h·(i − j) (causal) or −m_h·|i − j| is added to the scaled scores. For SDPA the heads are q's axis −3.
   */
  alibi?: boolean | ArrayLike<number>;
  /** Multiplier of Q·Kᵀ; default 1/√d_k. A temperature t is `scale: 1 / t`. */
  scale?: number;
  /** Dropout on the weights (off by default). */
  dropout?: DropoutOptions;
  /** Return the weights (default true). `false` allows the O(T·d)-memory tiled path. */
  needWeights?: boolean;
  /** Return the trace of every intermediate step (default false). */
  trace?: boolean;
}

/** One recorded intermediate of a forward pass. */
export interface TraceStep {
  /** `input`, `positional`, `x`, `q`, `k`, `v`, `scores`, `scaled`, `alibi`, `masked`, `weights`, `dropped`,
   * `context`, `concat`, `output`, `residual`, `normalized` (those that apply, in this order). */
  name: string;
  shape: number[];
  /** Axis names beside `shape`, e.g. `['B', 'H', 'T_q', 'd_k']`. */
  axes: string[];
  data: Float32Array;
}

export interface AttentionResult {
  /** (…, Tq, dv) for SDPA; (B, Tq, E) or (Tq, E) for multi-head attention. */
  output: Tensor;
  /** Softmax weights before dropout; absent when `needWeights` is false. */
  weights?: Tensor;
  /** Present when `trace: true`. */
  trace?: TraceStep[];
}

/** {@link scaledDotProductAttention}'s options: {@link AttentionOptions} plus grouped-query attention. */
export interface SdpaOptions extends AttentionOptions {
  /**
   * Grouped-query attention (PyTorch 2.5's name): k and v (…, H_kv, Tk, d) with H_kv dividing q's H
   * (axis −3); query head h uses key/value head ⌊h / (H / H_kv)⌋. Weights stay (…, H, Tq, Tk); the
   * gradients of k and v keep their shapes (summed over the query heads that share them). Without it,
   * differing head counts are SHAPE_MISMATCH (naming `enableGQA`); a count that does not divide is
   * HEADS_DO_NOT_DIVIDE.
   */
  enableGQA?: boolean;
}

/** softmax(q·kᵀ·scale + masks)·v for q (…, Tq, dk), k (…, Tk, dk), v (…, Tk, dv). */
export function scaledDotProductAttention(
  q: TensorLike,
  k: TensorLike,
  v: TensorLike,
  options?: SdpaOptions,
): AttentionResult;

/** {@link applyRotary}'s options. */
export interface RotaryOptions {
  /** θ_i = base^(−2i/dims); default 10000. */
  base?: number;
  /** `'half'` (default): pairs (i, i + dims/2), GPT-NeoX and Llama's rotate_half; `'interleaved'`: pairs (2i, 2i+1), GPT-J and RoFormer. */
  style?: 'half' | 'interleaved';
  /** Features rotated (even, ≤ d); the rest pass through (partial rotary). Default: all of d. */
  dims?: number;
  /** Position of row 0 (default 0): row t is at offset + t. */
  offset?: number;
}

/** Rotary position embedding of x (…, T, d), row t rotated by (offset + t)·θ_i. */
export function applyRotary(x: TensorLike, options?: RotaryOptions): Tensor;
/** The gradient of x for {@link applyRotary} given the output's gradient (the inverse rotation). */
export function applyRotaryBackward(gradOutput: TensorLike, options?: RotaryOptions): Tensor;
/** The ALiBi paper's slopes (get_slopes) for numHeads heads: 2^(−8(h+1)/H) for H a power of two. */
export function alibiSlopes(numHeads: number): Float32Array;

/**
 * Backward of {@link scaledDotProductAttention}: the gradients of `sum(output ⊙ gradOutput)` with
 * respect to q, k and v, for the forward with the same inputs and options.
 * @param gradOutput the upstream gradient, of the output's shape (…, Tq, dv); another shape is a
 *   `SHAPE_MISMATCH` naming `gradOutput`, NaN/±∞ in it `NON_FINITE`.
 * @param options exactly the forward's (masks, `causal`, `scale`, `dropout`); the same dropout seed
 *   replays the forward's dropout mask. `needWeights` and `trace` are accepted and ignored. Fully
 *   masked query rows get zero gradients.
 * @returns gradients of q, k and v, each of its input's shape.
 */
export function scaledDotProductAttentionBackward(
  q: TensorLike,
  k: TensorLike,
  v: TensorLike,
  gradOutput: TensorLike,
  options?: SdpaOptions,
): { q: Tensor; k: Tensor; v: Tensor };

/**
 * Backward of {@link softmax} over the last axis, from its output: `y ⊙ (gradOutput − Σ y·gradOutput)`
 * per row, the gradient with respect to softmax's input.
 * @param y the forward's output `softmax(x)` (not x).
 * @param gradOutput the upstream gradient, of y's shape.
 */
export function softmaxBackward(y: TensorLike, gradOutput: TensorLike): Tensor;

/**
 * Backward of {@link layerNorm}: the gradients of `sum(layerNorm(x, options) ⊙ gradOutput)`.
 * @param x the forward's input.
 * @param gradOutput the upstream gradient, of x's shape.
 * @param options exactly the forward's.
 * @returns the gradient of x; of `weight` and `bias` (N) only when the options give them.
 */
export function layerNormBackward(
  x: TensorLike,
  gradOutput: TensorLike,
  options?: LayerNormOptions,
): { x: Tensor; weight?: Tensor; bias?: Tensor };

/** Configuration of {@link MultiHeadAttention} (PyTorch `nn.MultiheadAttention` plus the tutorial variants). */
export interface MultiHeadAttentionConfig {
  embedDim: number;
  /** Default 1. Must divide embedDim unless headDim is given. */
  numHeads?: number;
  /** Width of key inputs (default embedDim). */
  kdim?: number;
  /** Width of value inputs (default embedDim). */
  vdim?: number;
  /** Per-head query/key width d_k (default embedDim / numHeads). */
  headDim?: number;
  /** Per-head value width d_v (default headDim). */
  valueHeadDim?: number;
  /** in_proj_bias and out_proj.bias (default true). */
  bias?: boolean;
  /** Learned extra key/value row (PyTorch add_bias_kv). */
  addBiasKV?: boolean;
  /** Extra all-zero key/value row (PyTorch add_zero_attn). */
  addZeroAttn?: boolean;
  /** Add the (position-encoded) query to the output projection (post-LN residual). */
  residual?: boolean;
  /** LayerNorm after the (residual) output; `{ eps }` sets eps (default 1e-5). */
  layerNorm?: boolean | { eps?: number };
  /** Initialisation seed; identical weights on every platform (default 0). */
  seed?: number;
  /**
   * Key/value heads (grouped-query attention; 1 = multi-query); divides numHeads (else
   * HEADS_DO_NOT_DIVIDE); default numHeads. Query head h uses key/value head ⌊h / (H / H_kv)⌋. When it
   * differs from numHeads the state dict holds `q_proj_weight` (H·dk, E), `k_proj_weight`
   * (H_kv·dk, kdim), `v_proj_weight` (H_kv·dv, vdim) and `in_proj_bias` (H·dk + H_kv·dk + H_kv·dv).
   */
  numKVHeads?: number;
  /**
   * Rotary embedding of each head's q and k, after the projection and its bias, before the scaling:
   * `true` (base 10000, 'half', every head dimension) or `{ base, style, dims }` ({@link RotaryOptions}
   * without offset). Query row r sits at positionOffset + r, key row c at c (+ the cache's length).
   */
  rope?: boolean | Omit<RotaryOptions, 'offset'> | null;
}

/** Options of {@link MultiHeadAttention.forward}. Masks cover the real keys (not bias_k / zero-attention keys). */
export interface MultiHeadAttentionOptions extends AttentionOptions {
  /** Boolean (B, Tk): true = real token, false = padding (the opposite of PyTorch). */
  keyPaddingMask?: TensorLike | null;
  /** Average the weights over heads: (B, Tq, Tk) instead of (B, H, Tq, Tk). Default true. */
  averageWeights?: boolean;
  /** Positional encoding (≥ Tq, embedDim) added to the query (and to K/V in self-attention). */
  positional?: TensorLike | null;
  /**
   * Keep what {@link MultiHeadAttention.backward} needs (default false): copies of the inputs, the
   * projections and the attention context, held by the module until its next forward or
   * `dispose()`. Such a forward takes the general path (not the lean one of a plain forward).
   */
  requiresGrad?: boolean;
  /**
   * A KV cache from this module's {@link MultiHeadAttention.createCache}: self-attention (key and
   * value null) of x's rows over every cached key plus their own; only x's rows are projected, their
   * (rotated) keys and values are appended, and queries sit at positions cache.length + r (so
   * `causal: true` is the bottom-right mask over the cache). The output equals the last rows of one
   * forward over the whole sequence. Past maxLength: TOO_LARGE, the cache unchanged. Not with masks,
   * `positional`, dropout, `requiresGrad`, addBiasKV or addZeroAttn.
   */
  cache?: KVCache;
}

/** A MultiHeadAttention's key/value cache ({@link MultiHeadAttention.createCache}). */
export class KVCache {
  private constructor();
  readonly maxLength: number;
  readonly batch: number;
  /** Tokens cached so far. */
  readonly length: number;
  /** Empties the cache: the next forward starts at position 0. */
  reset(): this;
  /** Frees its wasm memory; idempotent. */
  dispose(): void;
}

/** What {@link MultiHeadAttention.backward} returns: gradients of `sum(output ⊙ gradOutput)`. */
export interface MultiHeadAttentionGrads {
  /**
   * Of the inputs the forward was given, each of its input's shape (unbatched for unbatched input).
   * Self-attention (no key): the whole gradient is in `query`. `key` and `value` are present when
   * the caller passed them; with `value` omitted the value path's gradient is added into `key`.
   * A `value` passed without a key (which the forward ignores) gets a zero gradient.
   */
  inputs: { query: Tensor; key?: Tensor; value?: Tensor };
  /**
   * Of every parameter, under the names and shapes {@link MultiHeadAttention.stateDict} returns
   * (`in_proj_weight` or `q_proj_weight`/`k_proj_weight`/`v_proj_weight`, `in_proj_bias`,
   * `out_proj.weight`, `out_proj.bias`, `bias_k`, `bias_v`, `layer_norm.weight`, `layer_norm.bias`,
   * as this configuration has them). A `positional` encoding is an option, not a parameter: its
   * gradient is the sum over the batch of `inputs.query`'s (rows beyond Tq: zero).
   */
  params: Record<string, Tensor>;
}

/** Parameters under PyTorch's names and layouts (nn.Linear weights are (out, in)). */
export type StateDict = Record<string, TensorLike>;

/** Multi-head attention with PyTorch semantics, owning wasm memory: call {@link dispose}. */
export class MultiHeadAttention {
  constructor(config: MultiHeadAttentionConfig);
  readonly config: Readonly<
    Required<Omit<MultiHeadAttentionConfig, 'layerNorm' | 'rope'>> & {
      layerNorm: boolean;
      layerNormEps: number;
      rope: Readonly<Required<Omit<RotaryOptions, 'offset'>>> | null;
    }
  >;
  readonly embedDim: number;
  readonly numHeads: number;
  readonly numKVHeads: number;
  /** A KV cache for decoding with this module (dispose it): up to maxLength tokens of `batch` sequences. */
  createCache(options: { maxLength: number; batch?: number }): KVCache;
  readonly headDim: number;
  readonly valueHeadDim: number;
  /** Sets parameters by PyTorch name (`in_proj_weight` or the three `*_proj_weight`, `in_proj_bias`,
   * `out_proj.weight`, `out_proj.bias`, `bias_k`, `bias_v`, `layer_norm.weight`, `layer_norm.bias`). */
  loadStateDict(stateDict: StateDict): this;
  /** Copies of the parameters, PyTorch names and layouts. */
  stateDict(): Record<string, Tensor>;
  /**
   * @param query (B, Tq, embedDim) or (Tq, embedDim)
   * @param key (B, Tk, kdim); null = self-attention
   * @param value (B, Tk, vdim); null = key
   */
  forward(
    query: TensorLike,
    key?: TensorLike | null,
    value?: TensorLike | null,
    options?: MultiHeadAttentionOptions,
  ): AttentionResult;
  /**
   * Gradients of `sum(output ⊙ gradOutput)` for the latest {@link forward}, which must have had
   * `requiresGrad: true` (same masks, dropout mask, scale; no need to pass them again). May be called
   * again until the next forward or `dispose()`.
   * @param gradOutput the upstream gradient, of the output's shape; another shape is a
   *   `SHAPE_MISMATCH` naming `gradOutput`, NaN/±∞ in it `NON_FINITE`.
   * @throws AttentionError `INVALID_ARGUMENT` when no forward with `requiresGrad: true` came first,
   *   or a later forward had none (or failed: every forward replaces the saved state), or a parameter
   *   was set with {@link loadStateDict} after it; `DISPOSED` after `dispose()`.
   */
  backward(gradOutput: TensorLike): MultiHeadAttentionGrads;
  /** Frees the wasm memory; further calls throw `DISPOSED`. Idempotent. */
  dispose(): void;
}

/** Sinusoidal positional encoding (length, dModel); odd dModel drops the last cosine column. */
export function sinusoidalEncoding(length: number, dModel: number, options?: { base?: number }): Tensor;

/** A learned positional table (maxLength, dModel), seeded ~N(0, 1) like nn.Embedding. Call {@link dispose}. */
export class LearnedPositionalEncoding {
  constructor(options: { maxLength: number; dModel: number; seed?: number });
  readonly maxLength: number;
  readonly dModel: number;
  /** The first `length` rows: (length, dModel). */
  encode(length: number): Tensor;
  /** A copy of the table. */
  readonly table: Tensor;
  setTable(table: TensorLike): void;
  dispose(): void;
}

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
/** Wasm heap size, bytes malloc'ed and not freed inside it, and count of undisposed handles (leak checks). */
export function memoryStats(): { heapBytes: number; heapUsedBytes: number; liveHandles: number };

// ---- TinyTransformer, training, tasks ------------------------------------------------------------

/**
 * Token ids or targets: an int32 {@link Tensor}, an Int32Array (T), nested arrays of integers, or
 * `{ data: Int32Array, shape }`, of shape (B, T) or (T) (a batch of one; outputs keep B = 1).
 * A float32 tensor is an `INVALID_ARGUMENT`, not a cast.
 */
export type IdsLike =
  Tensor | Int32Array | { data: Int32Array | ArrayLike<number>; shape: number[] } | NestedArray<number>;

/** Configuration of {@link TinyTransformer}; unknown keys are `INVALID_ARGUMENT` naming them. */
export interface TinyTransformerConfig {
  /** Tokens 0 … vocabSize − 1 (2 … 65536). */
  vocabSize: number;
  /** Longest sequence T (the learned position table's rows). */
  maxLength: number;
  dModel: number;
  /** Must divide dModel (else `HEADS_DO_NOT_DIVIDE`). */
  numHeads: number;
  /** Default 1 (at most 64). */
  numLayers?: number;
  /** An MLP (fc1, exact-erf GELU, fc2) after each attention (default true). */
  mlp?: boolean;
  /** Hidden width of the MLP (default 4·dModel). */
  mlpHidden?: number;
  /**
   * `'learned'` (default, `pos_emb.weight`), `'sinusoidal'` (a fixed table, no parameter), `'rope'`
   * (RoPE on every head's q and k: base 10000, 'half', every head dimension, which must be even),
   * `'alibi'` (the ALiBi paper's slopes on the scores) or `'none'`.
   */
  positional?: 'learned' | 'sinusoidal' | 'rope' | 'alibi' | 'none';
  /**
   * Key/value heads of every layer (grouped-query attention; default numHeads). When it differs, each
   * layer's state dict holds `attn.q_proj_weight`, `attn.k_proj_weight` (H_kv·dk, dModel),
   * `attn.v_proj_weight` and `attn.in_proj_bias` instead of `attn.in_proj_weight`.
   */
  numKVHeads?: number;
  /** A sliding window of this many keys in every layer (an integer ≥ 1); null (default) = none. */
  window?: number | null;
  /** `'pre'` (default; with a final `ln_f`), `'post'` or `'none'` LayerNorm placement. */
  norm?: 'pre' | 'post' | 'none';
  /** Position t attends to positions ≤ t only (default true). */
  causal?: boolean;
  /** Initialisation seed (GPT-2's scheme, identical on every platform; default 0). */
  seed?: number;
}

/** Options of {@link TinyTransformer.forward}. */
export interface TinyForwardOptions {
  /** Attention weights to return: true (default: every layer), false (none), or layer indices. */
  attention?: boolean | number[];
  /** Trace the attention of: true (every layer), false (default), or `{ layers }`. */
  trace?: boolean | { layers: number[] };
  /**
   * Boolean mask, true (1) = may attend, (T, T) or per head (B·H, T, T), applied in every layer on top
   * of the model's causal mask (it can only take keys away). A row left with no key gives that head a
   * zero output there. For exploring a trained model; training never masks.
   */
  mask?: TensorLike | null;
}

export interface TinyForwardResult {
  /** (B, T, vocabSize). */
  logits: Tensor;
  /** One (B, H, T, T) Tensor per layer, `null` for layers not requested; `[]` for `attention: false`. */
  attention: (Tensor | null)[];
  /** With `trace`: per layer, the steps {@link MultiHeadAttention.forward} traces (its input is the
   * attention's input, after ln1 in pre-norm), `null` for layers not traced. */
  trace?: (TraceStep[] | null)[];
}

/**
 * A small decoder-style transformer language model (PyTorch-compatible state-dict names, see
 * src/model/tiny_transformer.h) with its full backward pass; owns wasm memory: call {@link dispose}.
 * Errors in ids and targets (out of range, T > maxLength, targets of another shape, an empty
 * batch, every target −100) are {@link AttentionError}s naming the problem.
 */
export class TinyTransformer {
  /** @throws AttentionError `INVALID_ARGUMENT` (unknown keys, bad values), `HEADS_DO_NOT_DIVIDE`, `TOO_LARGE`. */
  constructor(config: TinyTransformerConfig);
  /** The full config, defaults filled. */
  readonly config: Readonly<Required<TinyTransformerConfig>>;
  /** Σ numel of the parameters. */
  readonly parameterCount: number;
  /** The same names as {@link PretrainedModel}'s (config.numLayers …, read from the config). */
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKVHeads: number;
  /** dModel / numHeads. */
  readonly headDim: number;
  /** = dModel. */
  readonly hiddenSize: number;
  readonly vocabSize: number;
  /** = maxLength: the longest input. */
  readonly maxPositions: number;
  /** Alias of hiddenSize (config.dModel). */
  readonly dModel: number;
  /** Alias of maxPositions (config.maxLength). */
  readonly maxLength: number;
  forward(ids: IdsLike, options?: TinyForwardOptions): TinyForwardResult;
  /** Mean cross-entropy over positions whose target is not −100 (PyTorch's ignore_index). */
  loss(ids: IdsLike, targets: IdsLike): number;
  /** The loss and d loss / d parameter of every parameter, by state-dict name (zeros included). */
  gradients(ids: IdsLike, targets: IdsLike): { loss: number; grads: Record<string, Tensor> };
  /** Copies of the parameters by state-dict name (`tok_emb.weight`, `blocks.0.attn.in_proj_weight`, …). */
  stateDict(): Record<string, Tensor>;
  /**
   * Sets every parameter. Strict: an unknown name is `UNKNOWN_PARAMETER`, a missing one
   * `INVALID_ARGUMENT`, a wrong shape `SHAPE_MISMATCH`, NaN/±∞ `NON_FINITE`, each naming the
   * parameter; nothing changes on an error.
   */
  loadStateDict(stateDict: StateDict): this;
  /**
   * A new model (dispose it) equal to this one with each listed head's output zeroed: its columns
   * [h·dk, (h+1)·dk) of `blocks.{l}.attn.out_proj.weight` are set to 0, which removes exactly that
   * head's term (out_proj's bias stays). The head's attention weights are unchanged. A pair outside
   * [0, numLayers) × [0, numHeads) is `INVALID_ARGUMENT`. This model is not changed.
   */
  ablateHeads(heads: ReadonlyArray<readonly [number, number]>): TinyTransformer;
  /**
   * Head-type scores from this model's own attention on `ids` (a batch of one: (T) or (1, T)), one
   * forward: { [kind]: Tensor (numLayers, numHeads) }. See {@link HeadScoreKind} for the definitions.
   * An unknown kind is `INVALID_ARGUMENT` naming it (nothing runs).
   */
  headScores(ids: IdsLike, options?: HeadScoresOptions): HeadScores;
  /**
   * Direct logit attribution (a batch of one): logits[position, token] − logits[position, against]
   * split into the embedding, each head's output, each MLP's output and constants, through every
   * LayerNorm frozen at its actual input (pre-, post- or no norm). See {@link LogitAttribution}.
   */
  logitAttribution(ids: IdsLike, options: LogitAttributionOptions): LogitAttribution;
  /**
   * Activation patching: the corrupted run with one activation (a head's z, or the residual stream
   * entering a block at one position) taken from the clean run, for every such activation. See
   * {@link PatchOptions} and {@link PatchResult}. Rejects with `signal.reason` when aborted (the model
   * stays usable); bad options are `INVALID_ARGUMENT` before anything runs.
   */
  patch(options: PatchOptions): Promise<PatchResult>;
  /**
   * The weights as a safetensors file: F32 little-endian tensors by state-dict name, and
   * `__metadata__` `{ format: 'attention-wasm/tiny-transformer', config: JSON.stringify(config) }`.
   */
  toSafetensors(): Uint8Array;
  /**
   * A model from a safetensors file written by {@link toSafetensors} (or by anyone, in that layout).
   * The file is checked before anything is allocated: header length (within the file, ≤ 100 MB),
   * JSON, F32, F16 or BF16 tensors (widened to float32 exactly) with in-range, contiguous, non-overlapping offsets, a valid config, and names
   * and shapes matching the config's state dict; otherwise `INVALID_ARGUMENT` naming the problem
   * (also for NaN/±∞ weights, found while loading them).
   */
  static fromSafetensors(bytes: ArrayBufferLike | ArrayBufferView): TinyTransformer;
  /** Frees the wasm memory; further calls throw `DISPOSED`. Idempotent. */
  dispose(): void;
}

// ---- interpretability (issue #27; docs/interpretability.md) ---------------------------------------

/**
 * A head-type score of layer l, head h, from its attention A (T × T, rows = queries) on ids:
 * - `'previous-token'`: mean over i = 1 … T−1 of A[i, i−1];
 * - `'duplicate-token'`: mean, over the rows i with some j < i where ids[j] = ids[i], of Σ over those j of A[i, j];
 * - `'induction'`: mean, over the rows i with some j, 1 ≤ j < i, where ids[j−1] = ids[i], of Σ over those j of A[i, j].
 * A kind with no qualifying row is NaN for every head (T = 1: every kind).
 */
export type HeadScoreKind = 'previous-token' | 'duplicate-token' | 'induction';

export interface HeadScoresOptions {
  /** The kinds to compute (default all three, in the order above). */
  kinds?: HeadScoreKind[];
}

/** One Tensor (numLayers, numHeads) per requested kind. */
export type HeadScores = Partial<Record<HeadScoreKind, Tensor>>;

export interface AttentionRolloutOptions {
  /** w in [0, 1] (default 0.5): the identity's share, for the residual stream. */
  residualWeight?: number;
}

/**
 * Attention rollout (Abnar & Zuidema 2020) of one forward's `attention` (batch of one: Tensor
 * (1, H, T, T) per layer, every layer present): per layer Â = (1 − w)·(mean over heads of A) + w·I,
 * rows renormalised to sum 1; R_0 = Â_0, R_l = Â_l · R_{l−1}. Returns Tensor (L, T, T), R_l at [l].
 * A missing layer, another batch size, mismatched T or w outside [0, 1] is `INVALID_ARGUMENT`.
 */
export interface LogitAttributionOptions {
  /** The query position, in [0, T) (default T − 1; no negative indexing). */
  position?: number;
  /** The token whose logit is explained, in [0, vocab). */
  token: number;
  /** The alternative: explains logits[position, token] − logits[position, against]; must differ from token. */
  against?: number;
}

/**
 * Direct logit attribution. u = W_U[token] − W_U[against] (W_U[token] alone without `against`). With
 * every norm's scale frozen at its actual input (LayerNorm: c ↦ s·(c − mean c) ⊙ γ, s = 1/√(biased var
 * + eps), β to `bias`), the logit difference is an affine function of the residual components; each
 * part is that component carried through every later norm, dotted with u. Computed in double.
 */
export interface LogitAttribution {
  /** (numLayers, numHeads): each query head's output (its z times its columns of the output projection, no bias). */
  heads: Tensor;
  /** (numLayers): each MLP's output, its bias included (0 for a model without MLPs). */
  mlp: Tensor;
  /** The embedding entering block 0 (token plus learned or sinusoidal positions). */
  embed: number;
  /** Constants: attention output biases, norm β's, the output head's bias difference. */
  bias: number;
  /** The sum of every part: equals logitDiff within float error. */
  total: number;
  /**
   * logits[position, token] − logits[position, against] (or the logit alone) of the real forward,
   * before any final soft-capping (Gemma 2's forward returns c·tanh(logits / c); this is the logits').
   */
  logitDiff: number;
}

/** What {@link PatchOptions.component} patches; the unit is the query head. */
export type PatchComponent = 'head' | 'head-position' | 'residual';

export interface PatchOptions {
  /**
   * The clean ids: (T), (1, T), a (B, T) batch or an array of ids (B pairs); every run of one length.
   * With several pairs each entry of `result` is the mean over the pairs.
   */
  clean: IdsLike | IdsLike[];
  /** The corrupted ids, as many runs as `clean`, of the same length. */
  corrupted: IdsLike | IdsLike[];
  /** The query position, in [0, T) (default T − 1). */
  position?: number;
  /** The token whose logit (or probability) is measured, in [0, vocab). */
  token: number;
  /** The alternative: LD = logits[position, token] − logits[position, against]; without it, the logit alone. */
  against?: number;
  /**
   * `'head'` (default): result (numLayers, numHeads), head h's z (before the output projection) at every position;
   * `'head-position'`: (numLayers, numHeads, T), at position t only;
   * `'residual'`: (numLayers, T), the residual stream entering block l (hidden state l) at position t.
   */
  component?: PatchComponent;
  /** `'logit-diff'` (default) or `'probability'`: softmax(logits[position])[token] instead of LD. */
  metric?: 'logit-diff' | 'probability';
  /** Called after each batch of patched runs with (runs done, runs in all). */
  onProgress?: (done: number, total: number) => void;
  /** Aborting rejects the promise with `signal.reason` (an `AbortError` by default) between batches. */
  signal?: AbortSignal;
}

/**
 * Each entry of `result` is (M_patched − M_corrupted) / (M_clean − M_corrupted), M the metric at
 * `position` (1: the activation carries the whole difference; 0: nothing). A pair whose clean and
 * corrupted M differ by less than 1e-6·max(1, |M_clean|) is `INVALID_ARGUMENT` (nothing to explain).
 * In causal models positions after `position` are not run: their entries are 0.
 */
export interface PatchResult {
  result: Tensor;
  /** M of the clean run (one number; an array of one per pair when a list of pairs was given). */
  cleanDiff: number | number[];
  /** M of the corrupted run (likewise). */
  corruptedDiff: number | number[];
}

export function attentionRollout(
  attentions: ReadonlyArray<TensorLike | null>,
  options?: AttentionRolloutOptions,
): Tensor;

/**
 * The `__metadata__` of a safetensors file (its string values), read from the header alone: a
 * preset's `preset` entry (JSON) or a model's `config`, before any model is built.
 * `INVALID_ARGUMENT` for a malformed header.
 */
export function readSafetensorsMetadata(bytes: ArrayBufferLike | ArrayBufferView): Record<string, string>;

/** Options of {@link Trainer}: torch.optim.AdamW's, after torch.nn.utils.clip_grad_norm_. */
export interface TrainerOptions {
  /** Learning rate, finite ≥ 0 (default 1e-3). */
  lr?: number;
  /** [beta1, beta2], each in [0, 1) (default [0.9, 0.999]). */
  betas?: [number, number];
  /** > 0 (default 1e-8). */
  eps?: number;
  /** Decoupled weight decay on every parameter (default 0.01). */
  weightDecay?: number;
  /** Clip the total gradient norm to this (> 0); null (default) = no clipping. */
  clipGradNorm?: number | null;
}

/** Optimiser state, PyTorch's names: moments by parameter name. */
export interface TrainerState {
  step: number;
  exp_avg: Record<string, TensorLike>;
  exp_avg_sq: Record<string, TensorLike>;
}

/**
 * AdamW over every parameter of a {@link TinyTransformer}; a step is one wasm call. The trainer
 * keeps the model's C++ object alive, but after `model.dispose()` {@link step} throws `DISPOSED`.
 * Owns wasm memory: call {@link dispose}.
 */
export class Trainer {
  constructor(model: TinyTransformer, options?: TrainerOptions);
  readonly model: TinyTransformer;
  /** Steps taken (failed steps do not count). */
  readonly steps: number;
  /**
   * Forward, backward, clipping and update. `loss` is at the weights before the update, `gradNorm`
   * the total gradient norm before clipping. A step whose loss, gradients or update are not finite
   * throws `NON_FINITE` naming the step, with weights, moments and `steps` unchanged.
   */
  step(ids: IdsLike, targets: IdsLike): { loss: number; gradNorm: number };
  setLearningRate(lr: number): void;
  /** Copies of the step count and both moments. */
  stateDict(): { step: number; exp_avg: Record<string, Tensor>; exp_avg_sq: Record<string, Tensor> };
  /** Restores a state (strict, as {@link TinyTransformer.loadStateDict}); nothing changes on an error. */
  loadStateDict(state: TrainerState): this;
  dispose(): void;
}

/** The toy tasks of {@link createTask}. */
export type TaskName = 'copy' | 'reverse' | 'sort' | 'induction';

/** Options of {@link createTask}. */
export interface TaskOptions {
  /** Input symbols (copy, reverse, sort: T = 2·length), or the segment (induction: T = 4·length + 1). */
  length: number;
  /** Symbols 0 … numSymbols − 1 (default 10); the separator is token numSymbols. Induction needs numSymbols > length. */
  numSymbols?: number;
  /** Seed of the task's batch stream (default 0). */
  seed?: number;
}

/**
 * A seeded toy sequence task (format: src/train/tasks.h). ids = sequence[:-1], targets =
 * sequence[1:] with −100 everywhere but the answer. Owns wasm memory: call {@link dispose}.
 */
export interface Task {
  readonly name: TaskName;
  /** numSymbols + 1 (the separator). */
  readonly vocabSize: number;
  /** T of ids and targets. */
  readonly sequenceLength: number;
  /** '0', '1', …, then '|' for the separator. */
  readonly tokenNames: readonly string[];
  /** The next n sequences of the task's stream: (n, T) int32 Tensors. */
  batch(n: number): { ids: Tensor; targets: Tensor };
  dispose(): void;
}

export function createTask(name: TaskName, options: TaskOptions): Task;

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** Batches to score (default 8). */
  batches?: number;
  /** Seed of the evaluation stream, independent of the task's training stream (default 0). */
  seed?: number;
  /** Sequences per batch (default 32). */
  batchSize?: number;
}

/**
 * Teacher-forced scores of `model` on `task`: the mean cross-entropy over every scored position,
 * the fraction of scored positions whose argmax logit is the target, and the fraction of sequences
 * with every scored position right.
 */
export function evaluate(
  model: TinyTransformer,
  task: Task,
  options?: EvaluateOptions,
): { loss: number; tokenAccuracy: number; sequenceAccuracy: number };

/**
 * {@link loadPretrained}'s options. Weights are kept in the file's format in the wasm heap (F16 and
 * BF16 stay 16-bit and are widened inside the GEMM; norms and biases become float32), so a model
 * takes about its file's size plus the activations of a call.
 */
export interface LoadPretrainedOptions {
  /**
   * The parsed config.json: `architectures` one of GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM,
   * in the transformers 4 layout (`rope_theta`, `rope_scaling`) or the transformers 5 one
   * (`rope_parameters`; both present must agree). Every key must be one docs/checkpoints.md lists as
   * implemented, inert, or inert at its default (and hold that default); anything else, an
   * unimplemented `rope_type`, `quantization_config` and `auto_map` are INVALID_ARGUMENT naming it.
   */
  config: Record<string, unknown>;
  /** model.safetensors (any view, at any byteOffset; Blob and File are read tensor by tensor), or with `weightsIndex` the shards: `{ fileName: bytes }` or File objects matched by `.name`. */
  weights:
    ArrayBuffer | ArrayBufferView | Blob | Record<string, ArrayBuffer | ArrayBufferView | Blob> | File[];
  /** The parsed model.safetensors.index.json of a sharded checkpoint. */
  weightsIndex?: { weight_map: Record<string, string> } | null;
  /**
   * The parsed tokenizer.json (optional: without it the model takes token ids only), read by the
   * vendored @huggingface/tokenizers 0.2.0 (loaded only then). GPT-2 byte-level BPE, Llama and Qwen2
   * tokenizers.
   */
  tokenizer?: Record<string, unknown> | null;
  /** The parsed tokenizer_config.json, when the checkpoint has one (special tokens, clean-up). */
  tokenizerConfig?: Record<string, unknown> | null;
  /** The parsed generation_config.json, when the checkpoint has one: its `eos_token_id` is generate's default `stop`. */
  generationConfig?: Record<string, unknown> | null;
  /**
   * The text of chat_template.jinja, when the checkpoint has one (transformers 5 saves the template
   * there): it is the "default" template, over tokenizer_config.json's `chat_template`.
   */
  chatTemplate?: string | null;
  /** Called as the weights are copied (each tensor, in chunks of at most 16 MiB) with the bytes read so far and the total. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /**
   * Bytes this model may use: its weights in the heap (checked from the file headers before the first
   * tensor is allocated) and each of its calls' buffers (forward, generate). Default: the library's
   * {@link memoryLimit} at load time (1 GiB unless {@link setMemoryLimit} changed it), which holds
   * SmolLM2-360M in BF16 (724 MB). A model over it is TOO_LARGE naming this option. The library's
   * own limit is not changed. The 32-bit heap holds at most 4 GiB.
   */
  memoryLimit?: number;
}

/** A Hugging Face checkpoint on this library's kernels. Call {@link dispose}. */
export class PretrainedModel {
  private constructor();
  readonly config: Record<string, unknown>;
  /** `config.architectures[0]`. */
  readonly architecture: string;
  readonly numLayers: number;
  /** Query heads. */
  readonly numHeads: number;
  readonly numKVHeads: number;
  /** Width of one attention head. */
  readonly headDim: number;
  /** Width of the residual stream. */
  readonly hiddenSize: number;
  readonly vocabSize: number;
  /** The longest input, prompt plus generated tokens (for rope_type "dynamic": its original_max_position_embeddings). */
  readonly maxPositions: number;
  /**
   * What differs between layers, one entry per layer: `window` (the keys a query sees, itself
   * included; 0 = all earlier ones), `rope` (whether q and k are rotated: SmolLM3 has layers without),
   * `ropeTheta` (its base: Gemma 3's sliding layers have their own; null without RoPE), `ropeScaled`
   * (scaled frequencies: llama3, linear), `qkNorm` (q and k RMS-normalised), `softcap` (scores
   * soft-capped at c·tanh(s/c); 0 = none).
   */
  readonly layers: ReadonlyArray<{
    window: number;
    rope: boolean;
    ropeTheta: number | null;
    ropeScaled: boolean;
    qkNorm: boolean;
    softcap: number;
  }>;
  /** generate's default `stop`: the checkpoint's EOS ids (generation_config.json's, else config.json's); may be empty. */
  readonly stopIds: number[];
  /** Bytes the weights take in the wasm heap (matrices in the file's format, norms and biases as float32). */
  readonly weightBytes: number;
  /** The byte limit of this model's weights and calls (loadPretrained's `memoryLimit`). */
  readonly memoryLimit: number;
  /**
   * Logits (B, T, V) and, as {@link TinyTransformer.forward}, `attention` (per layer, (B, H, T, T) or
   * null) and `trace`; `hiddenStates`: numLayers + 1 tensors (B, T, hidden) in Hugging Face's
   * output_hidden_states order. ids: (T) or (B, T), in [0, vocab), T ≤ the model's positions.
   */
  forward(
    ids: IdsLike,
    options?: {
      attention?: boolean | number[];
      trace?: boolean | { layers: number[] };
      hiddenStates?: boolean;
      logitLens?: boolean;
    },
  ): {
    logits: Tensor;
    attention: (Tensor | null)[];
    trace?: (TraceStep[] | null)[];
    hiddenStates?: Tensor[];
    /**
     * With `logitLens`: each residual stream (the embeddings, then every block's output) through the
     * final norm and the head: `ids` (int32) and `probs`, (numLayers + 1, B, T), the top token and its
     * probability; the last row is the model's own prediction.
     */
    logitLens?: { ids: Tensor; probs: Tensor };
  };
  /**
   * Head-type scores from this model's own attention on `ids` (a batch of one), as
   * {@link TinyTransformer.headScores}: Tensor (numLayers, numHeads) per kind, query heads (grouped-query models too).
   */
  headScores(ids: IdsLike, options?: HeadScoresOptions): HeadScores;
  /**
   * Direct logit attribution (a batch of one), as {@link TinyTransformer.logitAttribution}, for every
   * supported architecture: LayerNorm (GPT-2) or RMSNorm frozen at its actual input, OLMo 2's
   * post-norms frozen at their branch's output. See {@link LogitAttribution}.
   */
  logitAttribution(ids: IdsLike, options: LogitAttributionOptions): LogitAttribution;
  /** Activation patching, as {@link TinyTransformer.patch}. */
  patch(options: PatchOptions): Promise<PatchResult>;
  /**
   * Only the `maxNewTokens` new ids (B, maxNewTokens), int32, greedy at temperature 0 (default), else
   * sampled: temperature, then the topK likeliest (0 = all), then the smallest set whose probability
   * reaches topP, from a generator seeded by `seed` (same seed, same ids); ties go to the lower id. A
   * row that produces one of the `stop` ids keeps it and is padded with {@link GENERATE_PAD} (-1)
   * after it; generation ends when every row has stopped. Decoded with a KV cache per layer.
   */
  generate(ids: IdsLike, options: GenerateOptions): Tensor;
  /**
   * The same tokens one at a time, for a batch of one: `{ id, text }` (text: the token decoded, or
   * null without a tokenizer), yielding to the page between tokens; ends after a stop id, after
   * maxNewTokens, or when `signal` aborts. The model's other generation calls wait for it to end.
   */
  generateStream(
    ids: IdsLike,
    options: GenerateOptions & { signal?: AbortSignal },
  ): AsyncGenerator<{ id: number; text: string | null }, void, undefined>;
  /** Token ids of text, with what the tokenizer's post-processor adds (e.g. a BOS token) unless `addSpecialTokens` is false. Needs a tokenizer. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): Int32Array;
  /**
   * A chat as the model's chat template writes it, as transformers' apply_chat_template does
   * (rendered by the vendored @huggingface/jinja): the ids of the text, tokenized without adding
   * special tokens again (the template writes BOS itself), or the text with `tokenize: false`.
   * `template` picks one of a list of named templates (default "default"); `date` is what
   * `strftime_now` formats (default now). A template that loops, recurses or writes more than
   * 2^20 characters is TOO_LARGE; one that fails or calls raise_exception is INVALID_ARGUMENT.
   */
  applyChatTemplate(
    messages: ReadonlyArray<{ role: string; content: string }>,
    options?: { addGenerationPrompt?: boolean; tokenize?: true; template?: string; date?: Date },
  ): Int32Array;
  applyChatTemplate(
    messages: ReadonlyArray<{ role: string; content: string }>,
    options: { addGenerationPrompt?: boolean; tokenize: false; template?: string; date?: Date },
  ): string;
  /** The names of this model's chat templates (empty when it has none). */
  readonly chatTemplateNames: string[];
  /** The text of ids. Needs a tokenizer. */
  decode(ids: IdsLike): string;
  /** Each token's own decoded text (GPT-2's "Ġ" as a space). Needs a tokenizer. */
  tokenStrings(ids: IdsLike): string[];
  dispose(): void;
}

/** generate's options; INVALID_ARGUMENT for anything outside the ranges given. */
export interface GenerateOptions {
  /** New tokens per row, >= 1. */
  maxNewTokens: number;
  /** 0 (default) = greedy; > 0 divides the logits before the softmax. */
  temperature?: number;
  /** Keep only the k likeliest ids (0, the default, = all); an integer >= 0. */
  topK?: number;
  /** Keep the smallest set of likeliest ids whose probability reaches topP; in (0, 1], default 1. */
  topP?: number;
  /** The sampler's seed, an integer in [0, 2^32); default 0. */
  seed?: number;
  /** Ids that end a row (kept, then padded with GENERATE_PAD); default the model's `stopIds`; [] = never stop early. */
  stop?: number | number[];
}

/** The id generate() writes after a row's stop token: -1, never a token id. */
export const GENERATE_PAD: -1;

/** Loads a Hugging Face checkpoint (GPT-2, Llama, Qwen2) from its files, offline. */
export function loadPretrained(options: LoadPretrainedOptions): Promise<PretrainedModel>;
