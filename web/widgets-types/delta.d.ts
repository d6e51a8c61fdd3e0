// Attention without softmax: <delta-rule-steps> and the float64 delta-rule walk it draws
// (web/widgets/attention/delta-rule-data.js).
import type { AwElement, DivergingPalette, SVGOptions } from './base.js';

/** A captured tensor: a library Tensor, or a plain { shape, data } (e.g. from a worker). */
export interface CapturedTensor {
  shape: number[];
  data: Float32Array;
}

/** One value head's inputs, float64 rows; q and k L2-normalized per key head. */
export interface DeltaHead {
  T: number;
  dk: number;
  dv: number;
  head: number;
  keyHead: number;
  q: number[][];
  k: number[][];
  v: number[][];
  beta: number[];
  g: number[];
}

/** One token's four steps: every intermediate (states (d_k·d_v) row-major). */
export interface DeltaStep {
  t: number;
  before: Float64Array;
  /** e^{g_t} */
  decay: number;
  decayed: Float64Array;
  /** S′ᵀk_t */
  prediction: Float64Array;
  /** u = β_t(v_t − S′ᵀk_t) */
  correction: Float64Array;
  after: Float64Array;
  /** S_tᵀq_t / √d_k */
  o: Float64Array;
}

export type DeltaLayout = 'grouped' | 'tiled';

/** The hook names a step view captures for layer `layer` (q, k, v, beta, g of linear_attn). */
export declare function deltaHooks(layer: number): string[];
export declare function deltaHeadFromActivations(
  activations: Record<string, CapturedTensor>,
  layer: number,
  head: number,
  options?: { layout?: DeltaLayout; eps?: number },
): DeltaHead;
/** The walk up to token t: token t's four steps from the state the earlier tokens left. */
export declare function deltaWalk(head: DeltaHead, t: number): DeltaStep;
/** o_t of every token by the recurrence. */
export declare function deltaOutputs(head: DeltaHead): Float64Array[];
/** Σ_s A[t,s]·v_s over the head's (T, T) effective attention, row-major. */
export declare function mixValues(head: DeltaHead, map: ArrayLike<number>, t: number): Float64Array;

export type DeltaStepName = 'decay' | 'correct' | 'write' | 'read';

/** What <delta-rule-steps> draws: captured hooks of one DeltaNet layer (batch 1). */
export interface DeltaRuleData {
  activations: Record<string, CapturedTensor>;
  layer: number;
  tokens?: string[];
  /** The layer's (H_v, T, T) effective attention (forward(ids, { attention })), for the read's check. */
  map?: Float32Array;
  layout?: DeltaLayout;
  eps?: number;
}

export declare class DeltaRuleSteps extends AwElement {
  /** A Qwen3.5 folder URL loaded when `data` is not set ('' none). */
  src: string;
  text: string;
  /** −1: the first DeltaNet layer. */
  layer: number;
  head: number;
  /** −1: the last token. */
  token: number;
  step: DeltaStepName;
  diverging: DivergingPalette;
  data: DeltaRuleData | null;
  readonly shown: null | {
    layer: number;
    head: number;
    keyHead: number;
    T: number;
    dk: number;
    dv: number;
    t: number;
    step: DeltaStepName;
    walk: DeltaStep;
    tokens: string[];
    /** Σ_s A[t,s]·v_s when `map` was given, else null. */
    mixed: Float64Array | null;
    /** The layer's own o_t (hook_o) when the activations hold it, else null. */
    captured: number[] | null;
    beta: number;
    g: number;
    k: number[];
    v: number[];
    q: number[];
  };
  /** The step's two states as a standalone vector SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}
