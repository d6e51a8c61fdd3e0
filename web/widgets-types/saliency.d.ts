// Which input tokens a prediction depends on: <token-saliency>.
import type * as Attn from '../../src/js/index.js';
import type { AwElement, SVGOptions } from './base.js';
import type { InterpModelInput } from './interp.js';

export type SaliencyMethod = 'gradient' | 'gradient-x-input' | 'integrated-gradients';
export type SaliencyMetric = 'logit-diff' | 'probability' | 'log-probability';

/** What a run used: the ids and model.saliency's options (defaults filled from the top predictions). */
export interface SaliencyPlan {
  ids: number[];
  tokens: string[];
  options: {
    position: number;
    token: number;
    against?: number;
    metric: SaliencyMetric;
    method: SaliencyMethod;
    steps?: number;
  };
}

/**
 * <token-saliency>: model.saliency as the text with each token shaded by its score. Integrated
 * gradients on a `src` model run in a Web Worker (progress, Cancel); the other methods in the page.
 * Events: saliency-progress, saliency-done, saliency-cancel, token-focus, model-load.
 */
export declare class TokenSaliency extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  ids: number[] | null;
  tokens: string[];
  /** undefined: the default (the last position; the top prediction; the runner-up). against null: none. */
  position: number | undefined;
  token: number | undefined;
  against: number | null | undefined;
  metric: SaliencyMetric;
  method: SaliencyMethod;
  /** Integrated gradients' steps (default 32). */
  steps: number;
  readonly running: boolean;
  readonly shown: {
    ids: number[];
    tokens: string[];
    position: number;
    token: number;
    against: number | null;
    metric: SaliencyMetric;
    method: SaliencyMethod;
    steps: number | null;
    scores: Float32Array;
    value: number;
    delta: number;
    domain: { lo: number; hi: number; map: 'diverging' | 'viridis' };
    where: 'worker' | 'page';
  } | null;
  plan(): SaliencyPlan;
  /** Resolves to the scores, or null when cancelled or refused. */
  run(): Promise<{ scores: Float32Array; value: number; delta: number } | null>;
  cancel(): void;
  toSVG(options?: SVGOptions): string;
}
