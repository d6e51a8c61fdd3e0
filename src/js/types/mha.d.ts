// MultiHeadAttention, its KV cache and the learned positional encoding.
import type { Tensor, TensorLike } from './tensor.js';
import type { AttentionOptions, AttentionResult, RotaryOptions } from './ops.js';

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
