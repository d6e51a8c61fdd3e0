// Interpretability (docs/interpretability.md): head scores, attention rollout, logit attribution,
// QK attribution, activation patching.
import type { Tensor, TensorLike } from './tensor.js';
import type { IdsLike, TinyTransformer } from './model.js';
import type { PretrainedModel } from './pretrained.js';

/**
 * A head-type score of layer l, head h, from its attention A (T × T, rows = queries) on ids:
 * - `'previous-token'`: mean over i = 1 … T−1 of A[i, i−1];
 * - `'duplicate-token'`: mean, over the rows i with some j < i where ids[j] = ids[i], of Σ over those j of A[i, j];
 * - `'induction'`: mean, over the rows i with some j, 1 ≤ j < i, where ids[j−1] = ids[i], of Σ over those j of A[i, j].
 * A kind with no qualifying row is NaN for every head (T = 1: every kind).
 */
export type HeadScoreKind = 'previous-token' | 'duplicate-token' | 'induction';

/** Options of {@link TinyTransformer.headScores} and {@link PretrainedModel.headScores}. */
export interface HeadScoresOptions {
  /** The kinds to compute (default all three, in the order above). */
  kinds?: HeadScoreKind[];
}

/**
 * One Tensor (numLayers, numHeads) per requested kind; NaN past a layer's heads (a layer without
 * heads, LFM2's short convolution, is all NaN).
 */
export type HeadScores = Partial<Record<HeadScoreKind, Tensor>>;

/** Options of {@link attentionRollout}. */
export interface AttentionRolloutOptions {
  /** w in [0, 1] (default 0.5): the identity's share, for the residual stream. */
  residualWeight?: number;
}

/** Options of {@link TinyTransformer.logitAttribution} and {@link PretrainedModel.logitAttribution}. */
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
  /**
   * (numLayers, numHeads): each query head's output (its z times its columns of the output
   * projection, no bias); NaN past a layer's heads (a conv layer's row).
   */
  heads: Tensor;
  /**
   * (numLayers): the output of a layer whose token mixer has no heads (LFM2's short convolution:
   * conv.hook_result) as one part; NaN for an attention layer (its parts are in `heads`).
   */
  mixers: Tensor;
  /** (numLayers): each MLP's output, its bias included (0 for a model without MLPs). */
  mlp: Tensor;
  /** The embedding entering block 0 (token plus learned or sinusoidal positions). */
  embed: number;
  /** Constants: attention output biases, norm β's, the output head's bias difference. */
  bias: number;
  /** The sum of every part that is not NaN: equals logitDiff within float error. */
  total: number;
  /**
   * logits[position, token] − logits[position, against] (or the logit alone) of the real forward,
   * before any final soft-capping (Gemma 2's forward returns c·tanh(logits / c); this is the logits').
   */
  logitDiff: number;
}

/** Options of {@link TinyTransformer.qkAttribution} and {@link PretrainedModel.qkAttribution}; every one required. */
export interface QkAttributionOptions {
  /** The layer whose score is explained, in [0, numLayers); a layer without heads (LFM2's conv) is refused. */
  layer: number;
  /** The query head, in [0, numHeads) (a grouped-query head uses its key head). */
  head: number;
  /** The query position, in [0, T). */
  query: number;
  /** The key position, in [0, T); a key the layer's mask hides (after the query in a causal model, outside a sliding window) is refused. */
  key: number;
}

/**
 * QK attribution: the scaled score of (query, key) in one head, before the mask, soft-cap and softmax,
 * split bilinearly over the residual stream's components at the query position (rows) and at the key
 * position (columns). Every norm on the way (the block's input norm, q/k norms, post-norms as
 * {@link LogitAttribution} freezes them) is frozen at its actual input and RoPE is a fixed rotation at
 * each position, so q and k are affine in the components: entry (i, j) = scale · q_i · k_j, the q/k
 * projection biases and norm β's in the `'bias'` row and column. Computed in double.
 */
export interface QkAttribution {
  /** scale · q · k of the real forward (the core's own q · k) plus positionBias. */
  score: number;
  /**
   * The components, rows and columns alike: `'embed'` (the token embedding part), `'pos'` (only where
   * positions are added to the stream: GPT-2, a learned or sinusoidal TinyTransformer), then for each
   * layer l < `layer` its heads `'L{l}H{h}'` (a layer without heads: its output `'L{l}CONV'`) and its
   * MLP `'L{l}MLP'` (where the blocks have one), then
   * `'bias'` (the stream's constants and the q/k projection biases).
   */
  components: readonly string[];
  /** (C, C), C = components.length, float32: Σ matrix + positionBias = score within float error. */
  matrix: Tensor;
  /** The additive score bias of the position: ALiBi's −slope · distance, 0 elsewhere. */
  positionBias: number;
}

/** What {@link PatchOptions.component} patches; the unit is the query head. */
export type PatchComponent = 'head' | 'head-position' | 'residual' | 'mlp';

/** Options of {@link TinyTransformer.patch} and {@link PretrainedModel.patch}. */
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
   * `'residual'`: (numLayers, T), the residual stream entering block l (hidden state l) at position t;
   * `'mlp'`: (numLayers, T), layer l's MLP branch as it is added to the stream (after the post-norm where
   * the family has one) at position t.
   */
  component?: PatchComponent;
  /**
   * `'logit-diff'` (default), `'probability'`: softmax(logits[position])[token] instead of LD, or
   * `'log-probability'`: its log.
   */
  metric?: 'logit-diff' | 'probability' | 'log-probability';
  /** Called after each batch of patched runs with (runs done, runs in all). */
  onProgress?: (done: number, total: number) => void;
  /** Aborting rejects the promise with `signal.reason` (an `AbortError` by default) between batches. */
  signal?: AbortSignal;
}

/**
 * Each entry of `result` is (M_patched − M_corrupted) / (M_clean − M_corrupted), M the metric at
 * `position` (1: the activation carries the whole difference; 0: nothing). A pair whose clean and
 * corrupted M differ by less than 1e-6·max(1, |M_clean|) is `INVALID_ARGUMENT` (nothing to explain).
 * In causal models positions after `position` are not run: their entries are 0. The `'head'` and
 * `'head-position'` entries past a layer's heads (a layer without heads: LFM2's conv) are NaN.
 */
export interface PatchResult {
  result: Tensor;
  /** M of the clean run (one number; an array of one per pair when a list of pairs was given). */
  cleanDiff: number | number[];
  /** M of the corrupted run (likewise). */
  corruptedDiff: number | number[];
}

/**
 * Attention rollout (Abnar & Zuidema 2020) of one forward's `attention` (batch of one: Tensor
 * (1, H, T, T) per layer, every layer present): per layer Â = (1 − w)·(mean over heads of A) + w·I,
 * rows renormalised to sum 1; R_0 = Â_0, R_l = Â_l · R_{l−1}. Returns Tensor (L, T, T), R_l at [l].
 * A missing layer, another batch size, mismatched T or w outside [0, 1] is `INVALID_ARGUMENT`.
 */
export function attentionRollout(
  attentions: ReadonlyArray<TensorLike | null>,
  options?: AttentionRolloutOptions,
): Tensor;
