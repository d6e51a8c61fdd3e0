// Gradients of one prediction's metric: metricGradients, saliency and attribution patching, on
// TinyTransformer and PretrainedModel (src/js/interp/gradients.js, interp/attribution-patch.js).
import type { Tensor } from './tensor.js';
import type { IdsLike } from './model.js';
import type { PatchOptions } from './interp.js';

/**
 * The metric M of the logits at `position`: `'logit-diff'` (default) logits[token] − logits[against]
 * (the logit alone without `against`), before any final soft-cap; `'probability'`
 * softmax(logits)[token] and `'log-probability'` its log, of the model's output distribution (after
 * any final soft-cap; `against` is refused with them).
 */
export type GradientMetric = 'logit-diff' | 'probability' | 'log-probability';

/** The prediction a gradient tool explains (a batch of one). */
export interface MetricOptions {
  /** The query position, in [0, T) (default T − 1). */
  position?: number;
  /** The token measured, in [0, vocab). */
  token: number;
  /** The alternative of `'logit-diff'`, in [0, vocab), ≠ token. */
  against?: number;
  metric?: GradientMetric;
}

/** Options of {@link TinyTransformer.metricGradients} and {@link PretrainedModel.metricGradients}. */
export interface MetricGradientsOptions extends MetricOptions {
  /** Also ∂M/∂A, A each layer's attention weights (default false). */
  attention?: boolean;
  /**
   * Hook names (`blocks.*.…`: every layer) whose gradients {@link MetricGradients.gradHooks} holds:
   * `blocks.{l}.hook_resid_pre`, `blocks.{l}.hook_resid_post` (the last block's only where its
   * gradient is returned exactly: no final norm, or an MLP branch added straight to the stream),
   * `blocks.{l}.hook_mlp_out`, `blocks.{l}.attn.hook_z`, `blocks.{l}.attn.hook_pattern`, and
   * `blocks.{l}.hook_attn_out` in a block without an MLP where it equals the stream leaving the block
   * (docs/interpretability.md). Any other hook is an `AttentionError`
   * (`INVALID_ARGUMENT`) naming it and listing these; a name the model lacks, "unknown hook".
   */
  hooks?: string[];
}

/** M's value and its gradients; the weights are frozen (no weight gradients). */
export interface MetricGradients {
  value: number;
  /**
   * ∂M/∂ each hidden state, L + 1 Tensors (T, E) in Hugging Face's order: [0] block 0's input (the
   * embedding, with GPT-2's learned positions and Gemma's √hidden scale), [L] after the final norm (so
   * its gradient is the unembedding difference at `position`, 0 elsewhere).
   */
  gradHiddenStates: Tensor[];
  /**
   * ∂M/∂z, z each query head's attention-weighted values before the output projection (after an
   * output gate; a DeltaNet layer's: each value head's gated-norm output): (L, H, T, d), H and d the
   * widest layer's; NaN past a layer's heads (LFM2's conv layers have none) and past its z size
   * (a DeltaNet layer's d_v).
   */
  gradZ: Tensor;
  /**
   * With `attention: true`: ∂M/∂A per layer, Tensor (1, H, T, T) each (null for a layer without
   * softmax attention weights: a short convolution, a DeltaNet layer); otherwise null.
   */
  gradAttention: (Tensor | null)[] | null;
  /**
   * ∂M/∂ each hook asked for in `hooks`, by name, in the hook's own shape with B = 1: (1, T, E) for
   * the stream and the branches, (1, T, H, d_head) for `hook_z`, (1, H, T, T) for `hook_pattern`
   * (copies; `{}` without `hooks`).
   */
  gradHooks: Record<string, Tensor>;
}

export type SaliencyMethod = 'gradient' | 'gradient-x-input' | 'integrated-gradients';
export type SaliencyBaseline = 'zero' | 'keep-positions';

/** Options of {@link TinyTransformer.saliency} and {@link PretrainedModel.saliency}. */
export interface SaliencyOptions extends MetricOptions {
  /**
   * With e_t hidden state 0 at t and g = ∂M/∂e: `'gradient'` ‖g_t‖₂; `'gradient-x-input'` (default)
   * Σ_d e_t[d]·g_t[d]; `'integrated-gradients'` Σ_d (e_t[d] − b_t[d])·(1/m) Σ_{k=1..m} g_t[d] at
   * b + (k/m)(e − b) (right Riemann sum, every position moved together).
   */
  method?: SaliencyMethod;
  /** m, the integration steps, in [1, 4096] (default 32); batched. */
  steps?: number;
  /**
   * b: `'zero'` (default) or `'keep-positions'`: the position part of hidden state 0 alone (only where
   * positions are added to the stream: GPT-2, a learned or sinusoidal TinyTransformer; elsewhere
   * `INVALID_ARGUMENT`).
   */
  baseline?: SaliencyBaseline;
  /** Called after each batch of steps with (steps done, steps in all). */
  onProgress?: (done: number, total: number) => void;
  /** Aborting rejects the promise with `signal.reason` (an `AbortError` by default) between batches. */
  signal?: AbortSignal;
}

export interface Saliency {
  /** (T) float32: one score per input position. */
  scores: Tensor;
  /** M(e). */
  value: number;
  /** Integrated gradients: |Σ_t scores − (M(e) − M(b))| (the completeness gap); NaN otherwise. */
  delta: number;
}

/**
 * Options of attribution patching: {@link PatchOptions} (the same components, `'mlp'` included, and
 * metrics); each entry is (a_clean − a_corrupted)·∂M/∂a evaluated on the corrupted run, over
 * (M_clean − M_corrupted): two forwards and one backward per pair.
 */
export type AttributionPatchOptions = PatchOptions;
