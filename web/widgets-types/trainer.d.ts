// <attention-trainer> (training in a Web Worker) and <attention-model-view> (every layer × head).
import type * as Attn from '../../src/js/index.js';
import type {
  AwElement,
  DivergingPalette,
  ModelViewState,
  ModelViewSVGOptions,
  Palette,
  SVGOptions,
  WidgetState,
} from './base.js';

/** What <attention-trainer> trains with (attributes, then its form). */
export interface TrainerSettings {
  task: 'copy' | 'reverse' | 'sort' | 'induction';
  length: number;
  layers: number;
  dModel: number;
  heads: number;
  mlp: boolean;
  positional: 'learned' | 'sinusoidal' | 'none';
  lr: number;
  batch: number;
  seed: number;
  numSymbols: number;
}

/** One snapshot of the training worker. */
export interface TrainerSnapshot {
  step: number;
  running: boolean;
  loss: number;
  tokenAccuracy: number;
  sequenceAccuracy: number;
  stepsPerSecond: number;
  /** Threads the worker's module trains on (more than one where the page is cross-origin isolated). */
  threads: number;
  ablation: null | {
    heads: [number, number][];
    loss: number;
    tokenAccuracy: number;
    sequenceAccuracy: number;
  };
  history: { step: number; loss: number; tokenAccuracy: number; sequenceAccuracy: number }[];
  probe: { tokens: string[]; T: number };
  heads: number;
  attention: Float32Array[];
}

/** The state of <attention-trainer>: its settings, the ablated heads and the step reached. */
export interface TrainerState extends WidgetState {
  settings: TrainerSettings;
  ablated: [number, number][];
  step: number;
}

/** <attention-trainer>: trains in a Web Worker. Events: snapshot { step, loss, tokenAccuracy, sequenceAccuracy, running, ablation }. */
export declare class AttentionTrainer extends AwElement {
  /** Setting it re-initialises the worker with the settings and trains `step` steps (seeded: the same heads). */
  state: TrainerState;
  readonly settings: TrainerSettings;
  readonly snapshot: TrainerSnapshot | null;
  train(): void;
  pause(): void;
  stepOnce(n?: number): void;
  reset(): void;
  ablate(heads: [number, number][]): void;
  exportWeights(): Promise<Uint8Array>;
  logits(ids: number[][]): Promise<{ data: Float32Array; shape: number[] }>;
  /** The loss and accuracy curves and every head's attention at the last snapshot, as a standalone vector SVG document. */
  toSVG(options?: SVGOptions): string;
}

/** <attention-model-view src ids tokens steps>: every layer × head. Events: head-select { layer, head }, model-load { src }. */
export declare class AttentionModelView extends AwElement {
  state: ModelViewState;
  model: Attn.TinyTransformer | null;
  ids: number[] | null;
  tokens: string[];
  readonly shown?: {
    ids: number[];
    tokens: string[];
    layers: Float32Array[];
    T: number;
    L: number;
    /** The widest layer's heads. */
    H: number;
    /** Each layer's own tiles: its heads (the forward's attention[l].shape[1]). */
    heads: number[];
    /** Each layer's kind (the forward's attentionKinds; 'attention' where it has none). */
    kinds: string[];
    /** Whether each layer's tiles are signed maps (a layer that is not softmax attention). */
    signed: boolean[];
    mode: 'heads' | 'rollout';
  };
  open(layer: number, head: number): void;
  /** The colour map of the tiles (attribute `palette`). */
  palette: Palette;
  /** The map of a signed layer's tiles (a conv or DeltaNet layer; attribute `diverging`). */
  diverging: DivergingPalette;
  /** 'heads' (default) or 'rollout': one tile per layer, the attention rollout through it (attribute `mode`). */
  mode: 'heads' | 'rollout';
  /** Every layer × head (or one layer) as a standalone SVG document; throws (code 'SVG_TOO_LARGE') over maxBytes. */
  toSVG(options?: ModelViewSVGOptions): string;
}
