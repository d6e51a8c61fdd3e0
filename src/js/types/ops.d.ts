// The plain functions: softmax, layerNorm, scaled dot-product attention, positions and their
// backward passes.
import type { Tensor, TensorLike } from './tensor.js';
import type { MultiHeadAttention } from './mha.js';

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
  /**
   * `input`, `positional`, `x`, `q`, `k`, `v`, `q_normed`, `k_normed` (q/k norm of checkpoints),
   * `q_rotated`, `k_rotated` (RoPE), `scores`, `scaled` (soft-capped where the model caps scores),
   * `alibi`, `masked`, `weights`, `dropped`, `context`, `concat`, `output`, `residual`, `normalized`
   * (those that apply, in this order; SDPA records `scores` … `context`).
   */
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

/** Sinusoidal positional encoding (length, dModel); odd dModel drops the last cosine column. */
export function sinusoidalEncoding(length: number, dModel: number, options?: { base?: number }): Tensor;
