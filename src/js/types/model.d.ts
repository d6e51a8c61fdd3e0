// TinyTransformer, the small trainable language model, and reading safetensors metadata.
import type { NestedArray, Tensor, TensorLike } from './tensor.js';
import type { HookInfo, LayerInfo, RunOptions, RunResult, SteeringVectorOptions, HookEdit } from './hooks.js';
import type { TraceStep } from './ops.js';
import type { MultiHeadAttention, StateDict } from './mha.js';
import type {
  HeadScoreKind,
  HeadScores,
  HeadScoresOptions,
  LogitAttribution,
  LogitAttributionOptions,
  QkAttribution,
  QkAttributionOptions,
  PatchOptions,
  PatchResult,
} from './interp.js';
import type {
  AttributionPatchOptions,
  MetricGradients,
  MetricGradientsOptions,
  Saliency,
  SaliencyOptions,
} from './gradients.js';
import type { PretrainedModel } from './pretrained.js';

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
  /** Every hook point with its shape (docs/interpretability.md). */
  hookNames(): HookInfo[];
  /** One forward with hook captures and edits. */
  run(ids: IdsLike, options?: RunOptions): RunResult;
  /** Mean of a hook at a position over positive prompts minus over negative ones. */
  steeringVector(options: SteeringVectorOptions): Tensor;
  /** Each layer as computed. */
  readonly layers: LayerInfo[];
  /**
   * Direct logit attribution (a batch of one): logits[position, token] − logits[position, against]
   * split into the embedding, each head's output, each MLP's output and constants, through every
   * LayerNorm frozen at its actual input (pre-, post- or no norm). See {@link LogitAttribution}.
   */
  logitAttribution(ids: IdsLike, options: LogitAttributionOptions): LogitAttribution;
  /**
   * QK attribution (a batch of one): why head `head` of layer `layer` gives key `key` its score from
   * query `query`: the score split over the residual stream's components at both positions, every
   * norm frozen at its actual input, RoPE a fixed rotation. See {@link QkAttribution}; bad options,
   * a hidden key or a batch are `INVALID_ARGUMENT` naming them.
   */
  qkAttribution(ids: IdsLike, options: QkAttributionOptions): QkAttribution;
  /**
   * Activation patching: the corrupted run with one activation (a head's z, or the residual stream
   * entering a block at one position) taken from the clean run, for every such activation. See
   * {@link PatchOptions} and {@link PatchResult}. Rejects with `signal.reason` when aborted (the model
   * stays usable); bad options are `INVALID_ARGUMENT` before anything runs.
   */
  patch(options: PatchOptions): Promise<PatchResult>;
  /**
   * M's value and ∂M/∂ each hidden state, each head's z and (with `attention`) each layer's attention
   * weights (a batch of one). See {@link MetricGradients}; bad options are `INVALID_ARGUMENT` naming them.
   */
  metricGradients(ids: IdsLike, options: MetricGradientsOptions): MetricGradients;
  /** Input saliency: one score per position. See {@link SaliencyOptions} and {@link Saliency}. */
  saliency(ids: IdsLike, options: SaliencyOptions): Promise<Saliency>;
  /**
   * Attribution patching: patch's result approximated from one backward per pair. See
   * {@link AttributionPatchOptions}; the result as {@link PatchResult}.
   */
  attributionPatch(options: AttributionPatchOptions): Promise<PatchResult>;
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

/**
 * The `__metadata__` of a safetensors file (its string values), read from the header alone: a
 * preset's `preset` entry (JSON) or a model's `config`, before any model is built.
 * `INVALID_ARGUMENT` for a malformed header.
 */
export function readSafetensorsMetadata(bytes: ArrayBufferLike | ArrayBufferView): Record<string, string>;
