// Types for 'attention-wasm/widgets' (web/widgets.js): the custom elements and the helpers the
// demo and tutorial pages are built from. Importing the module defines the elements. The
// declarations live in ./widgets-types/, one file per area; this file re-exports them.
import type * as Attn from '../src/js/index.js';
import type {
  AttentionHeatmap,
  AttentionSteps,
  MaskEditor,
  PositionalEncodingHeatmap,
} from './widgets-types/model-widgets.js';
import type { AttentionModelView, AttentionTrainer } from './widgets-types/trainer.js';
import type { AlibiBias, GqaHeads, KvCacheStepper, RopeExplorer } from './widgets-types/modern.js';
import type { HeadScores, LogitAttribution, PatchingView } from './widgets-types/interp.js';
import type { TokenSaliency } from './widgets-types/saliency.js';
import type { DeltaRuleSteps } from './widgets-types/delta.js';
import type {
  MaskFillCompare,
  QueryExplorer,
  SoftmaxPlayground,
  VarianceExperiment,
} from './widgets-types/tutorial.js';

export declare const attn: typeof Attn;
/** Resolves once the shared wasm instance is ready (init() runs once per page). */
export declare const ready: Promise<unknown>;

// The shared types; the element base classes AwElement and ModelElement as types only (web/widgets.js
// does not export them).
export type {
  PositionalKind,
  MaskMode,
  WidgetConfig,
  TraceStep,
  ModelResult,
  CellDetail,
  WidgetState,
  StateNumber,
  ModelWidgetState,
  HeatmapState,
  StepsState,
  MaskEditorState,
  ModelViewState,
  AlibiState,
  RopeState,
  KvCacheState,
  Palette,
  DivergingPalette,
  SVGOptions,
  ModelViewSVGOptions,
  AwElement,
  ModelElement,
} from './widgets-types/base.js';
export * from './widgets-types/model-widgets.js';
export * from './widgets-types/trainer.js';
export * from './widgets-types/modern.js';
export * from './widgets-types/helpers.js';
export * from './widgets-types/interp.js';
export * from './widgets-types/saliency.js';
export * from './widgets-types/tutorial.js';
export * from './widgets-types/delta.js';

/** Every element by its tag name, as web/widgets.js registers them. */
export declare const ELEMENTS: {
  'attention-steps': typeof AttentionSteps;
  'attention-heatmap': typeof AttentionHeatmap;
  'positional-encoding-heatmap': typeof PositionalEncodingHeatmap;
  'mask-editor': typeof MaskEditor;
  'attention-trainer': typeof AttentionTrainer;
  'attention-model-view': typeof AttentionModelView;
  'query-explorer': typeof QueryExplorer;
  'variance-experiment': typeof VarianceExperiment;
  'softmax-playground': typeof SoftmaxPlayground;
  'mask-fill-compare': typeof MaskFillCompare;
  'rope-explorer': typeof RopeExplorer;
  'alibi-bias': typeof AlibiBias;
  'gqa-heads': typeof GqaHeads;
  'kv-cache-stepper': typeof KvCacheStepper;
  'head-scores': typeof HeadScores;
  'logit-attribution': typeof LogitAttribution;
  'patching-view': typeof PatchingView;
  'token-saliency': typeof TokenSaliency;
  'delta-rule-steps': typeof DeltaRuleSteps;
};

declare global {
  interface HTMLElementTagNameMap {
    'attention-steps': AttentionSteps;
    'attention-heatmap': AttentionHeatmap;
    'positional-encoding-heatmap': PositionalEncodingHeatmap;
    'mask-editor': MaskEditor;
    'attention-trainer': AttentionTrainer;
    'attention-model-view': AttentionModelView;
    'query-explorer': QueryExplorer;
    'variance-experiment': VarianceExperiment;
    'softmax-playground': SoftmaxPlayground;
    'mask-fill-compare': MaskFillCompare;
    'rope-explorer': RopeExplorer;
    'alibi-bias': AlibiBias;
    'gqa-heads': GqaHeads;
    'kv-cache-stepper': KvCacheStepper;
    'head-scores': HeadScores;
    'logit-attribution': LogitAttribution;
    'patching-view': PatchingView;
    'token-saliency': TokenSaliency;
  }
}
