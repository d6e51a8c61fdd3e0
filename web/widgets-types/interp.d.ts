// Why a model predicts what it does: <head-scores>, <logit-attribution>, <patching-view>.
import type * as Attn from '../../src/js/index.js';
import type { AwElement, SVGOptions } from './base.js';

/** The model input of the interpretability widgets: `src` (attribute) or a model set from JS. */
export interface InterpModelInput {
  /** A TinyTransformer or PretrainedModel the page holds (never disposed by the widget); or use `src`. */
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  /** The names of the vocabulary's ids (a preset's own when loaded by `src`). */
  vocab: string[] | null;
}

export type HeadScoreKind = 'previous-token' | 'duplicate-token' | 'induction';

/** <head-scores>: model.headScores(ids) as one layer × head grid per kind. Events: head-select, cell-hover, model-load. */
export declare class HeadScores extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  ids: number[] | null;
  tokens: string[];
  kinds: HeadScoreKind[];
  readonly shown: {
    ids: number[];
    tokens: string[];
    L: number;
    H: number;
    kinds: HeadScoreKind[];
    scores: Partial<Record<HeadScoreKind, Float32Array>>;
  } | null;
  /** Emits head-select { layer, head, kind, score }. */
  select(layer: number, head: number, kind?: HeadScoreKind): void;
  toSVG(options?: SVGOptions): string;
}

export interface AttributionComponent {
  name: string;
  /** 'mixer': a layer without heads (LFM2's short convolution), its output as one part. */
  kind: 'embed' | 'head' | 'mixer' | 'mlp' | 'bias';
  layer?: number;
  head?: number;
  value: number;
}

/** <logit-attribution>: model.logitAttribution as sorted bars and a table. Events: head-select, model-load. */
export declare class LogitAttribution extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  ids: number[] | null;
  tokens: string[];
  /** undefined: the default (the last position; the top prediction; the runner-up). against null: none. */
  position: number | undefined;
  token: number | undefined;
  against: number | null | undefined;
  limit: number;
  readonly shown: {
    ids: number[];
    position: number;
    token: number;
    against: number | null;
    L: number;
    H: number;
    components: AttributionComponent[];
    total: number;
    logitDiff: number;
    heads: Float32Array;
    mlp: Float32Array;
    embed: number;
    bias: number;
  } | null;
  /** Emits head-select { layer, head, value }. */
  select(layer: number, head: number): void;
  toSVG(): string;
}

export interface PatchingPlan {
  clean: number[];
  corrupted: number[];
  position: number;
  token: number;
  against: number;
  component: 'head' | 'residual' | 'mlp';
}

/**
 * <patching-view>: activation patching with Run, a progress bar and Cancel. A `src` model is patched
 * in a Web Worker; a `model` set from JS in the page (yielding between layers). `method`: exact
 * (model.patch), attribution (model.attributionPatch: one backward) or both, compared (a second grid,
 * a scatter and the Pearson correlation).
 * Events: head-select, cell-select, patch-progress, patch-done, patch-cancel, model-load.
 */
export declare class PatchingView extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  clean: number[] | null;
  corrupted: number[] | null;
  position: number | undefined;
  token: number | undefined;
  against: number | undefined;
  component: 'head' | 'residual' | 'mlp';
  method: 'exact' | 'attribution' | 'both';
  autorun: boolean;
  readonly running: boolean;
  readonly shown:
    | (PatchingPlan & {
        L: number;
        cols: number;
        method: 'exact' | 'attribution' | 'both';
        /** The grid drawn first: exact, else attribution. */
        result: Float32Array;
        exact: Float32Array | null;
        attribution: Float32Array | null;
        /** Pearson's r of exact and attribution (both run), else null. */
        correlation: number | null;
        cleanDiff: number;
        corruptedDiff: number;
        where: 'worker' | 'page';
      })
    | null;
  /** The inputs a run would use (defaults filled in); throws with a readable message when incomplete. */
  plan(): PatchingPlan;
  /** Resolves to the result (with attribution and correlation when both ran), or null when cancelled or refused. */
  run(): Promise<{
    result: Float32Array;
    cleanDiff: number;
    corruptedDiff: number;
    attribution?: Float32Array;
    correlation?: number;
  } | null>;
  cancel(): void;
  /** The client coordinates of the centre of the first grid's cell (layer, then head or position). */
  cellCenter(layer: number, column: number): { x: number; y: number };
  toSVG(options?: SVGOptions): string;
}
