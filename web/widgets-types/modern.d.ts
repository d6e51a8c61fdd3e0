// Attention in today's models: <rope-explorer>, <alibi-bias>, <gqa-heads>, <kv-cache-stepper>.
import type {
  AlibiState,
  AwElement,
  DivergingPalette,
  KvCacheState,
  Palette,
  RopeState,
  SVGOptions,
} from './base.js';

/**
 * <rope-explorer d="8" base="10000" rotary-style="half" offset="0" seed="1">: rotary embeddings through applyRotary.
 * q, k = rows 0 and 1 of seededNormal([2, d], seed). For a relative offset δ the query sits at
 * offset + max(δ, 0) and the key at offset + max(−δ, 0). Events: ready.
 */
export declare class RopeExplorer extends AwElement {
  state: RopeState;
  /** Head size (even). */
  d: number;
  base: number;
  /** Attribute rotary-style (style="half|interleaved" is read too). */
  rotaryStyle: 'half' | 'interleaved';
  offset: number;
  seed: number;
  /** The frequency pair drawn in the plane. */
  pair: number;
  /** q's position in the plane (0…256). */
  position: number;
  readonly q: Float32Array | null;
  readonly k: Float32Array | null;
  /** −32 … 32. */
  readonly deltas: number[];
  readonly shown: null | {
    d: number;
    base: number;
    style: 'half' | 'interleaved';
    seed: number;
    offset: number;
    q: Float32Array;
    k: Float32Array;
    scores: { total: Float32Array; pairs: Float64Array[] };
    compare: Float32Array[];
    maxDiff: number;
  };
  /** Total q·k over `deltas` with the earlier position at `offset` (default: the attribute). */
  scores(offset?: number): Float32Array | null;
  /** Angle (radians, atan2) of q's pair `pair` after rotation to `position`. */
  pairAngle(pair: number, position: number): number | null;
  /** The plane and both charts as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/** <alibi-bias heads="8" length="12" causal seed="1">: ALiBi through SDPA's alibi: true. Events: cell-hover { head, row, col, bias, weight }. */
export declare class AlibiBias extends AwElement {
  state: AlibiState;
  heads: number;
  length: number;
  causal: boolean;
  seed: number;
  /** The head shown. */
  head: number;
  /** alibiSlopes(heads). */
  readonly slopes: Float32Array | null;
  readonly shown: null | {
    H: number;
    T: number;
    causal: boolean;
    seed: number;
    slopes: Float32Array;
    bias: Float32Array;
    weights: Float32Array;
  };
  /** −m_h·(i − j) (causal) or −m_h·|i − j|, (T, T) row-major; the causal mask is separate. */
  bias(head: number): Float32Array | null;
  /** Softmax weights of a head, (T, T) row-major. */
  weights(head: number): Float32Array | null;
  /** The shown head's bias and weights as a standalone vector SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/** <gqa-heads heads="8" kv-heads="2" length="10" seed="1">: grouped-query attention (SDPA enableGQA, causal). Events: cell-hover { head, kvHead, row, col, value }. */
export declare class GqaHeads extends AwElement {
  heads: number;
  kvHeads: number;
  length: number;
  seed: number;
  /** Query heads per key/value head ([[0, 1, 2, 3], [4, 5, 6, 7]] for 8 / 2); null while an error is shown. */
  readonly groups: number[][] | null;
  readonly shown: null | {
    H: number;
    Hkv: number;
    T: number;
    seed: number;
    groups: number[][];
    weights: Float32Array;
  };
  /** A query head's weights, (T, T) row-major. */
  weights(head: number): Float32Array | null;
  /** Every query head's weights as a standalone vector SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/**
 * <kv-cache-stepper embed-dim="16" heads="4" kv-heads="2" rope length="10" seed="1">: decoding with a real KV cache
 * (MultiHeadAttention numKVHeads + rope, createCache, forward with { cache, causal: true }). x = seededNormal([1, length, E], seed + 1).
 * Events: kv-step { length, position, maxDifference } (position −1 after reset()).
 */
export declare class KvCacheStepper extends AwElement {
  /** Setting it empties the cache and feeds `stepped` tokens again. */
  state: KvCacheState;
  /** The new query's weights' colour map (attribute `palette`). */
  palette: Palette;
  /** The colour map of x and the cached keys (attribute `diverging`). */
  diverging: DivergingPalette;
  embedDim: number;
  heads: number;
  kvHeads: number;
  rope: boolean;
  /** The attribute `length`: tokens in x (1…64). */
  sequenceLength: number;
  seed: number;
  /** Tokens in the cache now (not the attribute `length`: see sequenceLength). */
  readonly length: number;
  /** Every stepped output row so far, (length, E) row-major. */
  readonly outputs: Float32Array;
  /** The input sequence x, (sequenceLength, E) row-major. */
  readonly x: Float32Array | null;
  /** The last step's weights, (H, length) row-major. */
  readonly weights: Float32Array | null;
  /** The cached keys of the key/value head shown, (length, d_k) row-major (after RoPE when on). */
  readonly keys: Float32Array | null;
  /** The key/value head whose keys are shown. */
  kvHead: number;
  /** Max |stepped − full forward| over every row so far. */
  readonly maxDifference: number;
  readonly shown: null | {
    embedDim: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    rope: boolean;
    sequenceLength: number;
    seed: number;
    length: number;
    kvHead: number;
    maxDifference: number;
  };
  /** Feeds the next token; null when x is used up (or the config is invalid). */
  step(): { position: number; output: Float32Array; weights: Float32Array } | null;
  /** Steps until x is used up (one step every ~140 ms; at once with prefers-reduced-motion). */
  runAll(): Promise<void>;
  /** Empties the cache (cache.reset()). */
  reset(): void;
  /** One full causal forward over the first `length` tokens: its output, (length, E) row-major. */
  fullOutput(): Float32Array;
  /** x, the cached keys and the weights as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}
