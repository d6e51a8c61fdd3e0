// The tutorial's widgets (web/tutorial.html): <query-explorer>, <variance-experiment>,
// <softmax-playground>, <mask-fill-compare>.
import type { AwElement, SVGOptions } from './base.js';

/**
 * <query-explorer query="1.5,0.5" keys="x,y; x,y; …" values="x,y; …" labels="cat,dog,car,bus" scaling="true">:
 * one query against a few keys through scaledDotProductAttention (trace: true). Drag the query (or
 * use its sliders). Events: query-change { query, scores, weights, output } after every user change.
 */
export declare class QueryExplorer extends AwElement {
  query: number[];
  keys: number[][];
  values: number[][];
  /** One label per key (`k0`, `k1`, … where the attribute gives none). */
  labels: string[];
  /** Divide the scores by √d_k (false: scale 1). */
  scaling: boolean;
  /** What is shown, as plain arrays; null before the first render or after an error. */
  readonly result: null | {
    query: number[];
    scores: number[];
    scaled: number[];
    weights: number[];
    output: number[];
  };
  /** The two planes as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/** One d_k of the variance experiment ({@link measureDotProductVariance}). */
export interface VarianceResult {
  dk: number;
  samples: number;
  /** Sample variance of q·k (≈ d_k). */
  unscaled: number;
  /** Sample variance of q·k/√d_k (≈ 1). */
  scaled: number;
  meanUnscaled: number;
  meanScaled: number;
  /** Standard error of a sample variance, relative to σ²: √((2 + 6/d_k)/N). */
  standardError: number;
  /** The mean largest softmax weight over rows of `keys` unscaled scores. */
  topUnscaled: number;
  /** The same for the scaled scores. */
  topScaled: number;
}

/**
 * The experiment for one d_k through the library: `samples` pairs q, k ~ N(0, 1)^{d_k} from
 * seededNormal, their scores and scaled scores read from scaledDotProductAttention's trace.
 */
export declare function measureDotProductVariance(
  dk: number,
  samples: number,
  seed: number,
  keys?: number,
): VarianceResult;

/**
 * <variance-experiment samples="2000" dims="4,8,16,32,64,128,256" seed="1" keys="8">: Var(q·k) against
 * d_k, with and without the 1/√d_k scaling. Events: experiment-change { results } after each run.
 */
export declare class VarianceExperiment extends AwElement {
  /** Pairs per d_k (100…20000). */
  samples: number;
  /** The d_k values (1…4096, at most 16). */
  dims: number[];
  seed: number;
  /** Scores per softmax row in the saturation column (2…64). */
  keys: number;
  /** The measured values (copies), one entry per d_k; null before the first run. */
  readonly results: VarianceResult[] | null;
  /** Draws a fresh set of samples (the next seed). */
  redraw(): void;
  /** The chart as an SVG document. */
  toSVG(options?: SVGOptions): string;
}

/**
 * <softmax-playground logits="1,1,1,5" scale="1" labels="a,b,c,d" decimals="4">: softmax of editable
 * logits times a scale, and how it saturates. Events: softmax-change { logits, scale, probabilities }.
 */
export declare class SoftmaxPlayground extends AwElement {
  /** 2…16 numbers. */
  logits: number[];
  /** 0…10: the logits are multiplied by it. */
  scale: number;
  labels: string[];
  /** Rounding shown (1…8). */
  decimals: number;
  /** The probabilities shown (a copy); null before the first render. */
  readonly probabilities: Float32Array | null;
  readonly shown: null | {
    logits: number[];
    scale: number;
    scaled: number[];
    probabilities: Float32Array;
    labels: string[];
  };
  /** The bars and the curves as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/**
 * <mask-fill-compare scores="2,0.5,-1,1.2" masked="3" labels="…" values="x,y; …">: a boolean mask
 * (a fully masked row: zero weights) beside an additive −1e9 fill (uniform weights).
 * Events: masked-change { masked, result } after every user change.
 */
export declare class MaskFillCompare extends AwElement {
  scores: number[];
  /** Indices of the masked keys. */
  masked: number[];
  labels: string[];
  /** One value vector per key. */
  values: number[][];
  /** What is shown, as plain arrays; null before the first render or after an error. */
  readonly result: null | {
    scores: number[];
    masked: number[];
    booleanWeights: number[];
    fillWeights: number[];
    booleanOutput: number[];
    fillOutput: number[];
  };
  /** Masks key j if it is allowed, else allows it. */
  toggle(j: number): void;
  maskAll(): void;
  unmaskAll(): void;
  /** The two weight charts as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}
